"""Property tests of basic-index views (``decomposition.view``), with NumPy as reference.  No MPI."""

import importlib
import pathlib
import sys

D = importlib.import_module("spmdarray.decomposition")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
H = importlib.import_module("_decomp_helpers")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FAST = settings(max_examples=120, deadline=None)
SLOW = settings(max_examples=80, deadline=None)


def _base(shape):
    return np.arange(H.size(shape)).reshape(shape)


# ---------------------------------------------------------- strided_range


@FAST
@given(
    start=st.integers(-10, 40),
    step=st.integers(-6, 6).filter(bool),
    count=st.integers(-1, 20),
    lo=st.integers(-5, 40),
    hi=st.integers(-5, 40),
)
def test_strided_range_matches_brute_force(start, step, count, lo, hi):
    i0, i1 = D.strided_range(start, step, count, lo, hi)
    hits = [i for i in range(max(count, 0)) if lo <= start + i * step < hi]
    if hits:
        assert (i0, i1) == (hits[0], hits[-1] + 1)
        assert hits == list(range(i0, i1))  # contiguous
    else:
        assert i0 == i1
        assert 0 <= i0 <= max(count, 0)


def test_strided_range_doc_example():
    assert D.strided_range(7, -2, 4, 0, 4) == (2, 4)


# ---------------------------------------------- normalize_key and getitem


@FAST
@given(shape=H.shapes(min_dims=0, max_dims=4, max_side=6), data=st.data())
def test_normalize_key_shape_matches_numpy(shape, data):
    key = data.draw(H.basic_keys(shape))
    norm = D.normalize_key(key, shape)
    assert all(k is None or isinstance(k, (int, slice)) for k in norm)
    assert all(0 <= k < n for k, n in zip([k for k in norm if k is not None], shape) if isinstance(k, int))
    assert sum(1 for k in norm if k is not None) == len(shape)
    base = _base(shape)
    assert base[norm].tolist() == base[key].tolist()
    assert D.ViewMap.identity(shape).getitem(norm).shape == base[key].shape


@SLOW
@given(shape=H.shapes(min_dims=0, max_dims=4, max_side=6), data=st.data())
def test_two_getitems_map_to_numpy_base_indices(shape, data):
    key1 = data.draw(H.basic_keys(shape))
    base = _base(shape)
    v1 = base[key1]
    key2 = data.draw(H.basic_keys(v1.shape))
    expected = v1[key2]
    m1 = D.ViewMap.identity(shape).getitem(D.normalize_key(key1, shape))
    assert m1.shape == v1.shape
    assert H.base_flat(m1).tolist() == v1.tolist()
    m2 = m1.getitem(D.normalize_key(key2, m1.shape))
    assert m2.shape == expected.shape
    assert m2.base_shape == shape
    assert H.base_flat(m2).tolist() == expected.tolist()


@SLOW
@given(shape=H.shapes(min_dims=1, max_dims=4, max_side=6), data=st.data())
def test_chains_with_transpose_match_numpy(shape, data):
    ops = data.draw(H.view_ops(shape, max_ops=4))
    vmap = H.apply_vmap(D.ViewMap.identity(shape), ops)
    expected = H.apply_np(_base(shape), ops)
    assert vmap.shape == expected.shape
    assert H.base_flat(vmap).tolist() == expected.tolist()
    # dropped() are exactly the base axes no view axis walks.
    walked = [b for b, _ in vmap.axes if b >= 0]
    assert len(walked) == len(set(walked))
    assert set(vmap.dropped()) == set(range(len(shape))) - set(walked)


@SLOW
@given(shape=H.shapes(min_dims=1, max_dims=3, max_side=6), data=st.data())
def test_transpose_matches_numpy(shape, data):
    key = data.draw(H.basic_keys(shape))
    vmap = D.ViewMap.identity(shape).getitem(D.normalize_key(key, shape))
    perm = tuple(data.draw(st.permutations(range(len(vmap.shape)))))
    t = vmap.transpose(perm)
    expected = _base(shape)[key].transpose(perm)
    assert t.shape == expected.shape
    assert H.base_flat(t).tolist() == expected.tolist()


@SLOW
@given(shape=H.shapes(min_dims=1, max_dims=3, max_side=6), data=st.data())
def test_base_index_of_a_view_box(shape, data):
    ops = data.draw(H.view_ops(shape))
    vmap = H.apply_vmap(D.ViewMap.identity(shape), ops)
    box = data.draw(H.boxes_in(vmap.shape))
    bi = D.ViewMap.base_index(vmap, box)
    assert len(bi) == len(shape)
    empty = D.box_size(box) == 0
    idx = []
    for b, entry in enumerate(bi):
        if b in vmap.dropped():
            assert entry == vmap.start[b]
            idx.append(np.array([entry]))
        else:
            first, step, count = entry
            if empty:
                assert count == 0
            idx.append(first + step * np.arange(count))
    got = np.ravel_multi_index(np.ix_(*idx), shape) if len(shape) and not empty else np.zeros(0, int)
    expected = H.apply_np(_base(shape), ops)[H.sl(box)]
    assert sorted(np.ravel(got).tolist()) == sorted(expected.ravel().tolist())


def test_identity_and_doc_example():
    m = D.ViewMap.identity((6, 8))
    assert m.is_identity
    m = m.getitem((slice(1, -1), slice(None, None, -2)))
    assert (m.shape, m.start, m.axes) == ((4, 4), (1, 7), ((0, 1), (1, -2)))
    assert not m.is_identity
    assert H.base_flat(m).tolist() == _base((6, 8))[1:-1, ::-2].tolist()


# ------------------------------------------------------------------ errors


def _numpy_error(shape, key):
    try:
        _base(shape)[key]
    except IndexError as e:
        return e
    return None


@FAST
@given(shape=H.shapes(min_dims=0, max_dims=3, max_side=5), data=st.data())
def test_index_errors_match_numpy(shape, data):
    key = data.draw(H.basic_keys(shape, invalid=True))
    expected = _numpy_error(shape, key)
    if expected is None:
        D.normalize_key(key, shape)
        return
    with pytest.raises(IndexError) as info:
        D.normalize_key(key, shape)
    if "out of bounds" in str(expected) or "too many indices" in str(expected):
        assert str(info.value) == str(expected)


@pytest.mark.parametrize(
    "shape, key",
    [
        ((3, 4), 3),
        ((3, 4), -4),
        ((3, 4), (0, 4)),
        ((3, 4), (None, 0, -5)),
        ((3, 4), (Ellipsis, 7)),
        ((3, 0), (0, 0)),
        ((5,), (np.int64(-6),)),
        ((3, 4), (0, 0, 0)),
        ((), 0),
        ((2,), (Ellipsis, 0, Ellipsis)),
    ],
)
def test_explicit_index_errors(shape, key):
    expected = _numpy_error(shape, key)
    assert expected is not None
    with pytest.raises(IndexError) as info:
        D.normalize_key(key, shape)
    if "out of bounds" in str(expected) or "too many" in str(expected):
        assert str(info.value) == str(expected)


@pytest.mark.parametrize("key", [[0, 1], np.array([0, 1]), np.array([True, False, True]), True, (slice(None), [0])])
def test_advanced_indices_not_implemented(key):
    with pytest.raises(NotImplementedError):
        D.normalize_key(key, (3, 4))


@pytest.mark.parametrize("key", ["a", 1.5, (0, 1.0)])
def test_non_index_types_raise_index_error(key):
    with pytest.raises(IndexError):
        _base((3, 4))[key]
    with pytest.raises(IndexError):
        D.normalize_key(key, (3, 4))


# -------------------------------------------------------------- view_layout


def _view_case(draw, max_procs=6):
    shape = draw(H.shapes(min_dims=1, max_dims=3, max_side=7))
    nprocs = draw(st.integers(1, max_procs))
    ops = draw(H.view_ops(shape))
    return shape, nprocs, ops


view_cases = st.composite(_view_case)


@SLOW
@given(case=view_cases())
def test_view_layout_owner_is_base_owner(case):
    shape, nprocs, ops = case
    base = D.Layout.balanced(shape, nprocs)
    vmap = H.apply_vmap(D.ViewMap.identity(shape), ops)
    vl = D.view_layout(base, vmap)
    assert vl.shape == vmap.shape
    assert vl.dims == base.dims
    expected = H.apply_np(H.owner_map(base), ops)
    got = np.full(vl.shape, -1)
    count = np.zeros(vl.shape, dtype=int)
    for r in range(nprocs):
        box = vl.block(r)
        if not vl.holds(r):
            # All-empty; for a 0-d view that is ``()``, so holds() is the authority.
            assert box == ((0, 0),) * vl.ndim
            continue
        got[H.sl(box)] = r
        count[H.sl(box)] += 1
    assert (count == 1).all()
    assert got.tolist() == expected.tolist()
    # The primary owners are exactly the holders (no replicas for a balanced base).
    assert vl.owners() == [r for r in range(nprocs) if vl.holds(r)]


@SLOW
@given(case=view_cases(), data=st.data())
def test_view_layout_sources(case, data):
    shape, nprocs, ops = case
    base = D.Layout.balanced(shape, nprocs)
    vmap = H.apply_vmap(D.ViewMap.identity(shape), ops)
    vl = D.view_layout(base, vmap)
    expected = H.apply_np(H.owner_map(base), ops)
    rank = data.draw(st.integers(0, nprocs - 1))
    box = data.draw(H.boxes_in(vl.shape))
    parts = list(vl.sources(rank, box))
    for src, sub in parts:
        assert D.box_size(sub) > 0
        assert (expected[H.sl(sub)] == src).all()
    assert H.paint(vl.shape, [s for _, s in parts]).tolist() == H.paint(vl.shape, [box]).tolist()


@SLOW
@given(case=view_cases())
def test_view_layout_commutes_with_transpose(case):
    shape, nprocs, ops = case
    base = D.Layout.balanced(shape, nprocs)
    vmap = H.apply_vmap(D.ViewMap.identity(shape), ops)
    perm = tuple(reversed(range(len(vmap.shape))))
    assert D.view_layout(base, vmap.transpose(perm)) == D.view_layout(base, vmap).transpose(perm)


@pytest.mark.parametrize("nprocs", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize(
    "key",
    [
        (slice(1, -1), slice(None)),
        (slice(None, None, -1), slice(None, None, -2)),
        (3, slice(None)),
        (slice(None), -1),
        (None, slice(2, None, 3), None, 0),
        (Ellipsis, None),
        (slice(None, None, -3), 4),
    ],
)
def test_view_layout_explicit(nprocs, key):
    shape = (10, 7)
    base = D.Layout.balanced(shape, nprocs)
    vmap = D.ViewMap.identity(shape).getitem(D.normalize_key(key, shape))
    vl = D.view_layout(base, vmap)
    expected = H.owner_map(base)[key]
    got = np.full(vl.shape, -1)
    for r in range(nprocs):
        if vl.holds(r):
            assert (got[H.sl(vl.block(r))] == -1).all()
            got[H.sl(vl.block(r))] = r
    assert got.tolist() == expected.tolist()
