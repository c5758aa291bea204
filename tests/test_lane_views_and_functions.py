"""The compiled lane's views, index arrays, functions and metadata against the Python lane and NumPy.

``x.T``, ``x ** 2``, ``x[k]`` for an index array, keys with NumPy's
integers, the pure functions of sequences of arrays (``np.hstack((a, b))``),
``triu`` and ``tril``, the reduction methods and the metadata getters, and
the kinds ``wrap`` remembers: each compared with the Python lane (the
reference) object by object and with NumPy bit for bit, including the cases
it hands to Python.  Run at 1, 2, 3 and 4 ranks::

    mpiexec -n 3 python -m pytest -q --with-mpi tests/test_lane_views_and_functions.py
"""

from __future__ import annotations

import numpy
import pytest
from helpers import assert_eq, backend, ref, world
from lane_helpers import both as _both
from lane_helpers import needs_lane
from lane_helpers import python_calls as _python_calls
from lane_helpers import python_only as _python_only
from lane_helpers import same_objects as _same_objects

import spmdarray as sp
from spmdarray.core import whole
from spmdarray.settings import config

pytestmark = pytest.mark.skipif(backend().is_device, reason="host arrays: the lane is NumPy's")


@pytest.fixture
def replicated():
    """Arrays below the default ``replicate_below`` replicated, every view on the lane (the test
    suite splits every array otherwise: ``SPMDARRAY_REPLICATE_BELOW=0``)."""
    with config.set(replicate_below=1 << 18, fuse_replicated_min=0, whole_lane=True):
        yield


@pytest.mark.parametrize(
    "expr",
    [
        "a.T",
        "a.T.T",
        "a[1:, ::-1].T",
        "a[::-2].T[1:]",
        "a[2].T",
        "a.T[1:3, ::-1].T",
        "c.T",
        "c[1:, :, ::-1].T",
        "a[:, 0:1].T - a[:, 0:1]",
    ],
)
def test_transposes_match_numpy_and_the_python_lane(replicated, expr):
    """``x.T`` of arrays and views (unmade maps of views of views, negative steps, 1-D and 3-D):
    NumPy's values bit for bit, the same view map and layout as the Python lane composes, and
    writes through the view reach the base."""
    a0, c0 = ref((5, 4), seed=30), ref((3, 4, 2), seed=31)
    a, c = sp.array(a0), sp.array(c0)
    ns = {"a": a, "c": c}
    got, py = _both(lambda: eval(expr, ns))
    want = eval(expr, {"a": a0, "c": c0})
    assert_eq(got, want, exact=True)
    assert_eq(py, want, exact=True)
    if got._s is a._s or got._s is c._s:  # a view: the same map and layout, composed when first read
        assert got._map == py._map and got._layout == py._layout
        got[...] = -1.0
        want[...] = -1.0
        assert_eq(a, a0, exact=True)
        assert_eq(c, c0, exact=True)


@needs_lane
def test_transpose_and_powers_are_compiled(replicated):
    """``x.T``, ``x ** 2``, ``x[idx]``, ``x.sum()`` and ``x.shape`` on the lane call no Python
    function; off the lane (a split array) they take the Python methods, whose results match
    NumPy's, and a reduction with arguments takes the Python method."""
    a = sp.array(numpy.abs(ref((6, 5), seed=32)) + 1)
    idx = sp.array(numpy.array([0, 2, 5]))
    fs = [lambda: a.T, lambda: a[1:].T, lambda: a**2, lambda: a**0.5, lambda: a ** (-1), lambda: a[idx]]
    fs += [lambda: a.sum(), lambda: a[1:, 2].max(), lambda: (a > 1).all(), lambda: a.shape, lambda: a.dtype]
    for f in fs:
        f()  # (the first call of a shape may take the Python wrap)
        assert _python_calls(f) == 0
    assert type(a.T).__name__ == "ndarray"
    with config.set(replicate_below=0):  # split: held whole on one rank, compiled there too
        s0 = ref((6, 5), seed=33)
        s = sp.array(s0)
        s.T  # noqa: B018 - (the first read makes the array's copy on this rank)
        assert (_python_calls(lambda: s.T) > 0) == (world()[1] > 1)
        assert_eq(s.T, s0.T, exact=True)
        assert_eq(s**2, s0**2, exact=True)
        assert numpy.isclose(s.sum(), s0.sum(), rtol=1e-14) and s.max() == s0.max()  # (a split sum's order is its own)
    assert _python_calls(lambda: a.sum(axis=0)) > 0
    assert_eq(a.sum(axis=0), numpy.asarray(a).sum(axis=0), exact=True)
    assert a.max(None) == numpy.asarray(a).max()


@pytest.mark.parametrize("dtype", ["i8", "i4", "u2", "?"])
def test_index_arrays_match_numpy_and_the_python_lane(replicated, dtype):
    """``x[k]`` for an integer or boolean spmdarray array ``k`` every rank holds: NumPy's advanced
    indexing (a new array), its IndexError, bit for bit on both lanes."""
    x0 = ref((7,), seed=34)
    m0 = ref((4, 3), seed=35)
    x, m = sp.array(x0), sp.array(m0)
    if dtype == "?":
        keys = [x0 > 0, numpy.zeros(7, bool)]
        mkeys = [m0 > 0, (m0 > 0)[:, 0]]
    else:
        keys = [numpy.array([0, 3, 6, 3], dtype), numpy.array([], dtype), numpy.arange(7, dtype=dtype)[::-2]]
        mkeys = [numpy.array([1, 0], dtype)]
        if dtype[0] == "i":
            keys.append(numpy.array([-1, -7], dtype))
    for arr, arr0, ks in ((x, x0, keys), (m, m0, mkeys)):
        for k0 in ks:
            k = sp.array(k0)
            got, py = _both(lambda arr=arr, k=k: arr[k])
            assert_eq(got, arr0[k0], exact=True)
            assert_eq(py, arr0[k0], exact=True)
            got[...] = 0  # a new array: the base is unchanged
            assert_eq(arr, arr0, exact=True)
    bad = numpy.array([0, 7], "i8") if dtype != "?" else numpy.ones(6, bool)
    with pytest.raises(IndexError):
        x0[bad]
    for f in (lambda: x[sp.array(bad)], lambda: _python_only(lambda: x[sp.array(bad)])):
        with pytest.raises(IndexError):
            f()


@needs_lane
def test_index_arrays_hand_other_keys_to_python(replicated):
    x = sp.array(ref((5,), seed=36))
    getitem = whole.LANE.getitem
    assert getitem(x, sp.array(numpy.array([0, 1]))) is not whole.SLOW
    assert getitem(x, sp.array(numpy.array([0.0, 1.0]))) is whole.SLOW  # (NumPy's IndexError, in Python)
    with pytest.raises(IndexError):
        x[sp.array(numpy.array([0.0, 1.0]))]
    with config.set(replicate_below=0):
        k = sp.array(numpy.array([0, 1]))
        assert getitem(x, k) is whole.SLOW  # a split key
        assert_eq(x[k], numpy.asarray(x)[[0, 1]], exact=True)


@pytest.mark.parametrize(
    "expr",
    [
        "np.hstack((a, b))",
        "np.hstack([a[:, 1:], b, a[:, ::-1]])",
        "np.vstack((a, b[1:]))",
        "np.concatenate((a, b), axis=1)",
        "np.concatenate([a, b], axis=None)",
        "np.concatenate((a, b), dtype='f4')",
        "np.stack((a, b, a), axis=-1)",
        "np.column_stack((a[:, 0], b[:, 1]))",
        "np.triu(a, 1)",
        "np.tril(a[::-1], -1)",
        "np.hstack((a,))",
        "np.hstack((a, b[:2]))",
        "np.stack((a, b[:2]))",
    ],
)
def test_sequences_of_arrays_match_numpy(replicated, expr):
    """The pure functions of sequences of arrays (``np.hstack((a, b))``) and ``triu``/``tril``:
    NumPy's values, dtypes and exceptions on both lanes, a new array (the inputs unchanged)."""
    a0, b0 = ref((4, 3), seed=37), ref((4, 3), seed=38)
    a, b = sp.array(a0), sp.array(b0)
    try:
        want = eval(expr, {"np": numpy, "a": a0, "b": b0})
    except Exception as err:  # noqa: BLE001 - NumPy's exception type is the reference
        for f in (lambda: eval(expr, {"np": sp, "a": a, "b": b}),):
            with pytest.raises(type(err)):
                f()
            with pytest.raises(type(err)):
                _python_only(f)
        return
    got, py = _both(lambda: eval(expr, {"np": sp, "a": a, "b": b}))
    assert_eq(got, want, exact=True)
    assert_eq(py, want, exact=True)
    got[...] = 0
    assert_eq(a, a0, exact=True)
    assert_eq(b, b0, exact=True)


@needs_lane
def test_direct_sequences_hand_other_arguments_to_python(replicated):
    a, b = sp.array(numpy.arange(4.0)), sp.array(numpy.ones(4))
    direct = whole.LANE.direct
    assert direct(numpy.hstack, ((a, b),), {}) is not whole.SLOW
    assert direct(numpy.hstack, ([a, b],), {}) is not whole.SLOW
    for seq in ((a, numpy.ones(4)), (a, 1.0), (), [numpy.ones(4), a]):
        assert direct(numpy.hstack, (seq,), {}) is whole.SLOW
    assert_eq(sp.hstack((a, numpy.ones(4))), numpy.hstack((numpy.arange(4.0), numpy.ones(4))), exact=True)
    with config.set(replicate_below=0):
        s = sp.array(numpy.arange(4.0))
        assert direct(numpy.hstack, ((a, s),), {}) is whole.SLOW
        assert_eq(sp.hstack((a, s)), numpy.hstack((numpy.arange(4.0), numpy.arange(4.0))), exact=True)
    with config.set(replicate_below=6):  # a result past the threshold: split, NumPy's values
        r = sp.hstack((a, b))
        assert_eq(r, numpy.hstack((numpy.arange(4.0), numpy.ones(4))), exact=True)


@pytest.mark.parametrize("expr", ["a", "a[1:, ::-1]", "a.T[0]", "a[2, 1]", "c", "c[:, 1]", "z"])
def test_metadata_matches_numpy_and_the_python_lane(replicated, expr):
    """``shape``, ``ndim``, ``size`` and ``dtype`` (compiled getters where the array holds its
    whole copy): NumPy's, on both lanes, for arrays, lazy views, split arrays and 0-d arrays."""
    a0, c0 = ref((5, 4), seed=40), ref((3, 4, 2), seed=41).astype("f4")
    a, c, z = sp.array(a0), sp.array(c0), sp.array(numpy.float64(2.5))
    want = eval(expr, {"a": a0, "c": c0, "z": numpy.array(2.5)})
    for ns in ({"a": a, "c": c, "z": z}, None):
        if ns is None:
            with config.set(replicate_below=0):
                ns = {"a": sp.array(a0), "c": sp.array(c0), "z": z}
        x = eval(expr, ns)
        for attr in ("shape", "ndim", "size", "dtype"):
            got, py = _both(lambda x=x, attr=attr: getattr(x, attr))
            assert got == py == getattr(numpy.asarray(want), attr), attr
    x = sp.array(a0)
    x.shape = (4, 5)  # (the setter stays Python's)
    assert x.shape == (4, 5) and x.ndim == 2


@pytest.mark.parametrize(
    "key",
    [
        (numpy.int64(2), slice(1, None)),
        (numpy.int32(1), numpy.int8(-1)),
        (slice(None, None, -1), numpy.uint8(3)),
        (None, numpy.intp(4), slice(0, 3)),
        (numpy.int16(0),),
    ],
)
def test_numpy_integer_keys_match_numpy_and_the_python_lane(replicated, key):
    """Keys with NumPy's integers (``G[k, E - w, neigh_idx[a, b]]``): NumPy's scalar or view, the
    same view map as the Python lane composes, writes through the view reaching the base; the
    compiled lane calls no Python function for them."""
    a0 = ref((5, 4), seed=42)
    a = sp.array(a0)
    got, py = _both(lambda: a[key])
    assert_eq(got, a0[key], exact=True)
    assert_eq(py, a0[key], exact=True)
    if type(got) is sp.ndarray:
        assert got._map == py._map and got._layout == py._layout
        got[...] = -3.0
        a0[key] = -3.0
        assert_eq(a, a0, exact=True)
        if whole.LANE is not None:
            assert _python_calls(lambda: a[key]) == 0
    a[key] = 7.0  # (an assignment with NumPy's integers: the Python method's)
    a0[key] = 7.0
    assert_eq(a, a0, exact=True)
    with pytest.raises(IndexError):
        a[numpy.int64(5), 0]


@needs_lane
def test_wrap_kinds_remembered_follow_dtypes_and_settings(replicated):
    """The kinds wrap remembers by shape: a result of a shape seen with another dtype, or after
    ``replicate_below`` changed, takes the kind NumPy's result needs (the Python wrap's)."""
    x = sp.zeros(3)
    ctx, be = x._s.ctx, x._s.be
    w = whole.LANE.wrap
    for dt in ("f8", "f4", "i8", "f8", "c16", "f4"):
        r = w(ctx, be, numpy.arange(5).astype(dt))
        py = whole._py_wrap(ctx, be, numpy.arange(5).astype(dt))
        assert r.dtype == py.dtype == numpy.dtype(dt)
        _same_objects(r, py)
    with config.set(replicate_below=4):  # a (5,) result is now split, whatever was remembered
        r = w(ctx, be, numpy.arange(5.0))
        assert r._s.layout == whole._py_wrap(ctx, be, numpy.arange(5.0))._s.layout
        assert_eq(r, numpy.arange(5.0), exact=True)
    r = w(ctx, be, numpy.arange(5.0))
    _same_objects(r, whole._py_wrap(ctx, be, numpy.arange(5.0)))


def _views_of(base):
    """Views of ``base`` that overlap it and each other in every way the bounds check sees."""
    yield from (
        base,
        base[1:],
        base[:-1],
        base[::-1],
        base[::2],
        base[1::2],
        base[3:3],
        base[5:],
        base[:5],
        base.reshape(4, 5)[:, 1],
        base.reshape(4, 5)[1:3, ::-2],
        base.reshape(4, 5).T,
        base[7:8].reshape(()),
        numpy.arange(3.0),
    )


@needs_lane
@pytest.mark.parametrize("dtype", [numpy.float64, numpy.int8, numpy.complex128, "U3", [("a", "i4"), ("b", "f8")]])
def test_may_share_is_numpys_bounds_check(dtype):
    # The assignments' overlap test, read from the arrays' fields: NumPy's answer for every pair.
    if whole.LANE.may_share(numpy.zeros(1), numpy.zeros(1)) is None:
        pytest.skip("NumPy's fields are not laid out as the lane reads them here")
    base = numpy.zeros(20, dtype)
    views = list(_views_of(base))
    for a in views:
        for b in views:
            assert whole.LANE.may_share(a, b) is numpy.may_share_memory(a, b), (a.shape, a.strides, b.shape, b.strides)


@pytest.mark.parametrize(
    "stmt",
    [
        "A[i, 1:] = A[i, :-1]",
        "A[i, :-1] = A[i, 1:]",
        "A[i, ::-1] = A[i, :]",
        "A[i, 2:9] = A[i, 0:7][::-1]",
        "A[i, ::2] = A[i, 1::2]",
        "A[i, :] = A[i - 1, :]",
        "A[:, i] = A[:, i + 1]",
        "A[1:, i] = A[:-1, i]",
    ],
)
def test_overlapping_region_assignments_match_numpy(replicated, stmt):
    a = ref((12, 12), float, 11)
    A = sp.array(a)
    code = compile(f"for i in range(1, 11):\n    {stmt}", "s", "exec")
    exec(code, {"A": a})
    exec(code, {"A": A})
    assert_eq(A, a, exact=True)
    B = sp.array(ref((12, 12), float, 11))
    _python_only(exec, code, {"A": B})
    assert_eq(B, a, exact=True)


@needs_lane
@pytest.mark.parametrize("dtype", ["f8", "i4", "c8", "?", "U3", "M8[s]"])
@pytest.mark.parametrize("shape", [(13,), (3, 29), (2, 0, 7), (1, 1, 1, 5)])
def test_kinds_of_new_shapes_are_pythons(replicated, dtype, shape):
    # A result of a shape not seen yet: its kind made in C, equal to whole._kind's, and the
    # array made from it equal to the Python wrap's object by object.
    x = sp.zeros(3)
    ctx, be = x._s.ctx, x._s.be
    for k in (shape, tuple(n + 1 for n in shape)):
        whole._KINDS.pop(k, None)
        whole._BY_DTYPE.pop((k, numpy.dtype(dtype)), None)
    res = numpy.zeros(shape, dtype)
    c = whole.LANE.wrap(ctx, be, res.copy())
    kind = whole._KINDS[shape]
    want = whole._kind(ctx, be, shape, res.dtype, True)
    assert kind == want
    assert [type(k) for k in kind] == [type(w) for w in want]
    assert kind[3] is kind[5] and hash(kind[3]) == hash(want[3]) and hash(kind[4]) == hash(want[4])
    py = whole._py_wrap(ctx, be, res.copy())
    _same_objects(c, py)
    grown = tuple(n + 1 for n in shape)
    with config.set(replicate_below=1):  # (not small: the Python wrap, which splits it)
        big = whole.LANE.wrap(ctx, be, numpy.zeros(grown, dtype))
        assert grown not in whole._KINDS or whole._KINDS[grown][9] == 1
        assert_eq(big, numpy.zeros(grown, dtype), exact=True)


@needs_lane
def test_kinds_table_is_cleared_when_full(replicated):
    # The table of kinds keeps at most MAX_KINDS entries (a loop over y[:k] makes one per k).
    x = sp.zeros(3)
    ctx, be = x._s.ctx, x._s.be
    whole._KINDS.clear()
    try:
        for n in range(1, whole.MAX_KINDS + 5):
            whole._KINDS[(n, 0, 0)] = None  # (shapes no result has: placeholders)
        whole.LANE.wrap(ctx, be, numpy.zeros((7, 3, 2)))  # (a shape the lane's last kinds do not hold)
        assert list(whole._KINDS) == [(7, 3, 2)]
    finally:
        whole._KINDS.clear()  # (no placeholder left for later tests)


@needs_lane
def test_view_map_and_layout_hashes_are_the_python_ones():
    # ``ViewMap.__hash__`` and ``Layout.__hash__`` are compiled methods reading the cached hash;
    # the first call (nothing cached) is the Python method's, which caches it.
    from spmdarray.decomposition import Layout, ViewMap

    for cls in (ViewMap, Layout):
        assert type(vars(cls)["__hash__"]).__name__ == "LaneMethod"
        assert cls.__hash__.__name__ == "__hash__" and cls.__hash__.__qualname__ == f"{cls.__name__}.__hash__"
    maps = [
        ViewMap.identity((3, 4)),
        ViewMap((5, 6), (1, 2), ((1, -1), (-1, 0)), (3, 1)),
        ViewMap((7,), (0,), ((0, 2),), (4,)),
    ]
    lays = [Layout.balanced((10, 3), 2), Layout.replicated((4,), 3), Layout.balanced((0,), 4)]
    for obj in maps + lays:
        fields = (
            (obj.base_shape, obj.start, obj.axes, obj.shape)
            if type(obj) is ViewMap
            else (obj.shape, obj.dims, obj.gaxis, obj.gfixed, obj.intervals)
        )
        fresh = type(obj)(*fields)  # (nothing cached: the Python method computes it)
        assert fresh._hash is None
        assert hash(fresh) == hash(fields) == hash(obj) == hash(fresh)  # (the second call: the cached one)
        assert fresh._hash == hash(fields)
        assert {obj: 1}[fresh] == 1
