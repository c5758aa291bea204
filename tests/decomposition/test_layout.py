"""Property tests of layouts (``decomposition.layout``), with NumPy painting as reference.  No MPI."""

import importlib
import math
import pathlib
import sys

D = importlib.import_module("spmdarray.decomposition")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
H = importlib.import_module("_decomp_helpers")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FAST = settings(max_examples=80, deadline=None)

nprocs_ = st.integers(1, 8)


# ----------------------------------------------------------- box helpers


@FAST
@given(shape=H.shapes(), data=st.data())
def test_box_helpers_match_numpy(shape, data):
    a = data.draw(H.boxes_in(shape))
    b = data.draw(H.boxes_in(shape))
    ma, mb = H.paint(shape, [a]) > 0, H.paint(shape, [b]) > 0
    inter = D.box_intersect(a, b)
    assert (H.paint(shape, [inter]) > 0).tolist() == (ma & mb).tolist()
    assert all(lo <= hi for lo, hi in inter)
    assert D.box_size(a) == int(ma.sum())
    assert D.box_contains(a, b) == bool((mb <= ma).all())


@FAST
@given(dims=st.lists(st.integers(1, 5), min_size=1, max_size=4).map(tuple), data=st.data())
def test_ravel_unravel_match_numpy(dims, data):
    rank = data.draw(st.integers(0, math.prod(dims) - 1))
    coords = D.unravel(rank, dims)
    assert coords == tuple(int(c) for c in np.unravel_index(rank, dims))
    assert D.ravel(coords, dims) == rank


# -------------------------------------------------------------- balanced


@FAST
@given(shape=H.shapes(), nprocs=nprocs_)
def test_balanced_owns_every_index_once(shape, nprocs):
    lay = D.Layout.balanced(shape, nprocs)
    assert lay.shape == shape
    assert lay.nprocs == nprocs
    assert lay.dims == D.process_grid(shape, nprocs)
    assert all(lay.holds(r) for r in range(nprocs))
    assert lay.owners() == list(range(nprocs))
    count = H.paint(shape, [lay.block(r) for r in range(nprocs)])
    assert (count == 1).all()
    assert sum(D.box_size(lay.block(r)) for r in range(nprocs)) == math.prod(shape)


@FAST
@given(shape=H.shapes(), nprocs=nprocs_)
def test_balanced_block_shapes(shape, nprocs):
    lay = D.Layout.balanced(shape, nprocs)
    for r in range(nprocs):
        c = D.unravel(r, lay.dims)
        assert lay.block(r) == tuple(D.block_of(n, d, ck) for n, d, ck in zip(shape, lay.dims, c))
        # Same extents as NumPy's array_split of each axis.
        ext = tuple(hi - lo for lo, hi in lay.block(r))
        assert ext == tuple(len(np.array_split(np.arange(n), d)[ck]) for n, d, ck in zip(shape, lay.dims, c))


@FAST
@given(shape=H.shapes(), nprocs=nprocs_, data=st.data())
def test_sources_cover_box_exactly(shape, nprocs, data):
    lay = D.Layout.balanced(shape, nprocs)
    owner = H.owner_map(lay)
    rank = data.draw(st.integers(0, nprocs - 1))
    box = data.draw(H.boxes_in(shape))
    parts = list(lay.sources(rank, box))
    assert len({src for src, _ in parts}) == len(parts)
    for src, sub in parts:
        assert D.box_size(sub) > 0
        assert D.box_contains(box, sub)
        assert (owner[H.sl(sub)] == src).all()
    count = H.paint(shape, [sub for _, sub in parts])
    expected = H.paint(shape, [box])
    assert count.tolist() == expected.tolist()


@FAST
@given(shape=H.shapes(min_dims=0), nprocs=nprocs_, data=st.data())
def test_replicated_every_rank_holds_everything(shape, nprocs, data):
    lay = D.Layout.replicated(shape, nprocs)
    full = tuple((0, n) for n in shape)
    assert lay.nprocs == nprocs
    for r in range(nprocs):
        assert lay.holds(r)
        assert lay.block(r) == full
    assert lay.owners() == [0]
    # A replica is always read locally.
    rank = data.draw(st.integers(0, nprocs - 1))
    box = data.draw(H.boxes_in(shape))
    parts = list(lay.sources(rank, box))
    assert parts == ([(rank, box)] if D.box_size(box) else [])


@FAST
@given(nprocs=nprocs_)
def test_zero_d_balanced_is_replicated(nprocs):
    lay = D.Layout.balanced((), nprocs)
    assert lay == D.Layout.replicated((), nprocs)
    assert all(lay.block(r) == () for r in range(nprocs))


@FAST
@given(extents=st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple), min_size=1, max_size=3))
def test_from_extents_owns_every_index_once(extents):
    lay = D.Layout.from_extents(tuple(extents))
    assert lay.shape == tuple(sum(e) for e in extents)
    assert lay.dims == tuple(len(e) for e in extents)
    count = H.paint(lay.shape, [lay.block(r) for r in range(lay.nprocs)])
    assert (count == 1).all()
    for r in range(lay.nprocs):
        c = D.unravel(r, lay.dims)
        assert tuple(hi - lo for lo, hi in lay.block(r)) == tuple(e[ck] for e, ck in zip(extents, c))


def test_balanced_explicit_uneven_blocks():
    lay = D.Layout.balanced((10, 7), 4)
    assert lay.dims == (2, 2)
    assert [lay.block(r) for r in range(4)] == [
        ((0, 5), (0, 4)),
        ((0, 5), (4, 7)),
        ((5, 10), (0, 4)),
        ((5, 10), (4, 7)),
    ]
    lay = D.Layout.balanced((12,), 5)
    assert [lay.block(r) for r in range(5)] == [((0, 3),), ((3, 6),), ((6, 8),), ((8, 10),), ((10, 12),)]


# ------------------------------------------------------------ transforms


def _layouts(draw):
    """A balanced layout, or the layout of a view with a dropped axis (a fixed grid axis)."""
    shape = draw(H.shapes())
    nprocs = draw(nprocs_)
    lay = D.Layout.balanced(shape, nprocs)
    if draw(st.booleans()) and shape[0] > 0:
        # Fix one row of ranks by indexing an integer on a leading new axis.
        big = D.Layout.balanced((draw(st.integers(1, 5)), *shape), nprocs)
        i = draw(st.integers(0, big.shape[0] - 1))
        vmap = D.ViewMap.identity(big.shape).getitem(D.normalize_key(i, big.shape))
        return D.view_layout(big, vmap), (big, i)
    return lay, None


layouts = st.composite(_layouts)


def _holders_map(lay):
    """Per element, the number of ranks holding it."""
    return H.paint(lay.shape, H.held_boxes(lay))


@FAST
@given(data=st.data())
def test_transpose_ownership_matches_numpy(data):
    lay, _ = data.draw(layouts())
    perm = tuple(data.draw(st.permutations(range(lay.ndim))))
    t = lay.transpose(perm)
    assert t.shape == np.empty(lay.shape).transpose(perm).shape
    assert t.nprocs == lay.nprocs
    assert H.owner_map(t).tolist() == H.owner_map(lay).transpose(perm).tolist()
    assert _holders_map(t).tolist() == _holders_map(lay).transpose(perm).tolist()
    inv = tuple(np.argsort(perm).tolist())
    assert t.transpose(inv) == lay


@FAST
@given(data=st.data())
def test_reduce_ownership_matches_numpy(data):
    lay, fixed = data.draw(layouts())
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, lay.ndim - 1)))))
    keepdims = data.draw(st.booleans())
    red = lay.reduce(axes, keepdims)
    assert red.shape == np.sum(np.empty(lay.shape), axis=axes, keepdims=keepdims).shape
    assert red.nprocs == lay.nprocs
    # The combine step is an all-gather: every rank holds a block afterwards.
    assert all(red.holds(r) for r in range(red.nprocs))
    keep = [a for a in range(lay.ndim) if a not in axes]
    for r in range(red.nprocs):
        # The rank inherits the kept-axis ranges of the block at its grid
        # coordinates, with any fixed grid axis moved to the fixed row.
        c = list(D.unravel(r, lay.dims))
        for k, f in enumerate(lay.gfixed):
            if f is not None:
                c[k] = f
        src = lay.block(D.ravel(tuple(c), lay.dims))
        if keepdims:
            expected = tuple((0, 1) if a in axes else src[a] for a in range(lay.ndim))
        else:
            expected = tuple(src[a] for a in keep)
        assert red.block(r) == expected
    # Exactly one primary copy; every rank along the replicated grid axes holds a replica.
    owner = H.owner_map(red)
    assert set(np.unique(owner).tolist()) <= set(red.owners())
    reps = math.prod(d for k, d in enumerate(red.dims) if red.is_replicated_axis(k))
    assert (_holders_map(red) == reps).all()
    # NumPy reference: reducing the ownership mask of a rank's pre-image
    # along the reduced axes gives the elements that rank is responsible for.
    for r in red.owners():
        kept = red.block(r) if keepdims else dict(zip(keep, red.block(r)))
        src_box = tuple((0, lay.shape[a]) if a in axes else kept[a] for a in range(lay.ndim))
        mask = np.zeros(lay.shape, dtype=bool)
        mask[H.sl(src_box)] = True
        if math.prod(lay.shape[a] for a in axes) > 0:
            expect = mask.any(axis=axes, keepdims=keepdims)
            assert (H.paint(red.shape, [red.block(r)]) > 0).tolist() == expect.tolist()


@FAST
@given(shape=H.shapes(), nprocs=nprocs_, data=st.data())
def test_sources_on_reduced_layout_read_replicas_locally(shape, nprocs, data):
    lay = D.Layout.balanced(shape, nprocs)
    axis = data.draw(st.integers(0, len(shape) - 1))
    red = lay.reduce((axis,), keepdims=False)
    rank = data.draw(st.integers(0, nprocs - 1))
    box = data.draw(H.boxes_in(red.shape))
    parts = list(red.sources(rank, box))
    me = D.unravel(rank, red.dims)
    for src, sub in parts:
        c = D.unravel(src, red.dims)
        assert all(c[k] == me[k] for k in range(len(red.dims)) if red.is_replicated_axis(k))
        assert D.box_contains(red.block(src), sub)
    assert H.paint(red.shape, [s for _, s in parts]).tolist() == H.paint(red.shape, [box]).tolist()


def test_reduce_over_no_axes_is_identity():
    lay = D.Layout.balanced((6, 4), 4).reduce((), keepdims=False)
    assert lay == D.Layout.balanced((6, 4), 4)


@pytest.mark.parametrize("nprocs", [1, 3, 4, 7])
def test_fixed_layout_rows(nprocs):
    big = D.Layout.balanced((4, 9), nprocs)
    for i in range(4):
        vl = D.view_layout(big, D.ViewMap.identity((4, 9)).getitem((i, slice(None))))
        holders = [r for r in range(nprocs) if vl.holds(r)]
        owner_rows = {r for r in range(nprocs) if big.block(r)[0][0] <= i < big.block(r)[0][1]}
        assert set(holders) == owner_rows
        assert all(vl.block(r) == ((0, 0),) for r in range(nprocs) if r not in owner_rows)
