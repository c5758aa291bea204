"""The whole-array lane (``spmdarray.core.whole``) against NumPy, bit for bit.

Arrays below ``config.replicate_below`` are held whole by every rank, and
indexing, assignment, operators, ``@``, ufunc calls, reductions and creation
on them are NumPy's own calls on each rank's copy.  Each case runs with
small arrays replicated (the lane) and with every array split (the general
path: ``replicate_below=0``), and both must equal NumPy, with NumPy's
exception types.  Run at 1, 2, 3 and 4 ranks::

    mpiexec -n 3 python -m pytest -q tests/test_whole_lane.py
"""

from __future__ import annotations

import numpy
import pytest
from helpers import assert_eq, ref, world

import spmdarray as sp
from spmdarray.core import whole
from spmdarray.fusion.record import is_deferred
from spmdarray.settings import FIELDS, config

DEFAULT = FIELDS["replicate_below"].default
BELOW = [DEFAULT, 0]


@pytest.fixture(params=BELOW, ids=["replicated", "split"])
def below(request):
    with config.set(replicate_below=request.param):
        yield request.param


def test_the_lane_is_taken_only_on_arrays_every_rank_holds_whole(below):
    x = sp.array(ref((5, 4)))
    if x._st.be.is_device:
        assert whole.local(x) is None  # device blocks: the engine (CuPy's calls)
        return
    one = sp.empty(1).comm.Get_size() == 1
    assert (whole.local(x) is not None) == (bool(below) or one)
    with config.set(whole_lane=False):
        assert whole.local(x) is None
    assert whole.local(sp.asarray(2.0)) is None  # 0-d: the general path
    with config.set(fuse=True, fuse_min_size=10):
        y = sp.array(ref((5, 4)))
        # the fuser would defer a split array this large; a replicated one stays on the lane
        assert (whole.local(y) is not None) == bool(below)


KEYS = [
    3,
    -1,
    numpy.int64(2),
    (1, 2),
    (-1, -3),
    slice(None),
    slice(1, -1),
    slice(None, None, -1),
    slice(4, 0, -2),
    (slice(1, 4), 2),
    (2, slice(None, None, -1)),
    (None, 1),
    (Ellipsis, 1),
    (1, Ellipsis),
    (slice(1, 3), None, slice(0, 4, 3)),
    (numpy.int32(-2), slice(None)),
    (),
    slice(numpy.int64(1), numpy.int64(5)),  # NumPy integers in slices: the view map composed directly
    (slice(numpy.int32(4), None, -2), None, numpy.int64(-1)),
    (None, slice(numpy.int64(0), 3), slice(None, numpy.int16(2))),
    (slice(numpy.int64(5), numpy.int64(1)), 0),  # empty
]


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_getitem_matches_numpy(below, key):
    a = ref((6, 5))
    x = sp.array(a)
    assert_eq(x[key], a[key], exact=True)
    # A view of a view, then a write through it seen by the base.
    v, e = x[key], a[key]
    if isinstance(e, numpy.ndarray) and e.size:
        v[...] = 7.5
        e[...] = 7.5
        assert_eq(x, a, exact=True)


def test_array_indices_match_numpy(below):
    a = ref((6, 5))
    x = sp.array(a)
    # (device backend: NumPy index arrays into replicated device arrays raise TypeError, a gap
    # of the device path, which the lane does not take; spmdarray index arrays work)
    host = not x._st.be.is_device
    idx = numpy.array([4, 0, -1, 2])
    if host:
        assert_eq(x[idx], a[idx], exact=True)
    assert_eq(x[sp.array(idx)], a[idx], exact=True)
    mask = a[:, 0] > 0
    if host:
        assert_eq(x[mask], a[mask], exact=True)
    assert_eq(x[sp.array(mask)], a[mask], exact=True)
    got = x[sp.array(idx)]
    got[0] = 99.0  # a copy: the base is unchanged
    assert_eq(x, a, exact=True)
    with pytest.raises(IndexError):
        x[sp.array(numpy.array([6]))]


@pytest.mark.parametrize("key", [6, -7, (0, 5), (1, 2, 3), (Ellipsis, Ellipsis), slice(numpy.int64(0), 2, 0)], ids=repr)
def test_getitem_errors_are_numpys(below, key):
    a = ref((6, 5))
    x = sp.array(a)
    with pytest.raises((IndexError, ValueError)) as expected:
        a[key]
    with pytest.raises(expected.type):
        x[key]


@pytest.mark.parametrize(
    "key, value",
    [
        ((2, 3), 4.25),
        ((2, 3), numpy.float32(1.5)),
        (1, 3.0),
        (slice(None, None, -2), -1.0),
        ((slice(1, 4), 2), numpy.array([1.0, 2.0, 3.0])),
        ((slice(None), slice(1, 3)), numpy.array([[9.0, 8.0]])),  # broadcasts
        (Ellipsis, 0.0),
    ],
    ids=repr,
)
def test_setitem_matches_numpy(below, key, value):
    a = ref((6, 5))
    x = sp.array(a)
    x[key] = value
    a[key] = value
    assert_eq(x, a, exact=True)


def test_setitem_from_spmdarray_views_and_onto_itself(below):
    a = ref((6, 5))
    x = sp.array(a)
    x[1:4, 0] = x[2:5, 1]
    a[1:4, 0] = a[2:5, 1]
    x[:, 1:] = x[:, :-1]  # overlapping: NumPy copies first
    a[:, 1:] = a[:, :-1]
    x[2] += x[3]
    a[2] += a[3]
    x[1:-1, 2] *= 0.5
    a[1:-1, 2] *= 0.5
    assert_eq(x, a, exact=True)


def test_setitem_errors_are_numpys(below):
    a = ref((6, 5))
    x = sp.array(a)
    with pytest.raises(ValueError):
        a[1:3, 0] = numpy.ones(4)
    with pytest.raises(ValueError):
        x[1:3, 0] = numpy.ones(4)
    with pytest.raises(IndexError):
        x[6, 0] = 1.0
    i = sp.array(ref((4,), dtype=numpy.int64))
    with pytest.raises((ValueError, OverflowError)):
        numpy.zeros(4, numpy.int8)[0] = 300
    with pytest.raises((ValueError, OverflowError)):
        i.astype(numpy.int8)[0] = 300


OPS = ["+", "-", "*", "/", "//", "%", "**", "<", ">=", "==", "!="]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize(
    "left, right",
    [("f8", "f8"), ("f8", 2.5), (3, "f8"), ("i4", "i4"), ("i4", 2), ("f4", "i8"), ("c16", "f8"), ("f8[::-1]", "f8")],
    ids=repr,
)
def test_operators_match_numpy(below, op, left, right):
    def operand(spec, seed):
        if not isinstance(spec, str):
            return spec, spec
        dtype, _, key = spec.partition("[")
        a = ref((7,), dtype=numpy.dtype(dtype), seed=seed)
        if dtype[0] == "i":
            a = numpy.abs(a) % 5 + 1  # positive: integer powers and divisions defined
        x = sp.array(a)
        if key:
            return x[::-1], a[::-1]
        return x, a

    x, a = operand(left, 1)
    y, b = operand(right, 2)
    if op in ("//", "%") and (numpy.asarray(a).dtype.kind == "c" or numpy.asarray(b).dtype.kind == "c"):
        pytest.skip("NumPy has no complex floor division")
    with numpy.errstate(all="ignore"):
        expected = eval(f"a {op} b")
        got = eval(f"x {op} y")
    assert_eq(got, expected, exact=True)


def test_in_place_operators_and_casting(below):
    a = ref((5, 3))
    x = sp.array(a)
    x += 1.0
    a += 1.0
    x[1] -= x[2]
    a[1] -= a[2]
    x *= sp.array(ref((3,), seed=3))  # broadcasts
    a *= ref((3,), seed=3)
    assert_eq(x, a, exact=True)
    i = sp.arange(5)
    with pytest.raises(numpy._core._exceptions._UFuncOutputCastingError):
        i += 1.5
    assert_eq(i, numpy.arange(5), exact=True)
    i8 = sp.zeros(3, numpy.int8)
    with pytest.raises(OverflowError):
        i8 + 300
    with pytest.raises(ValueError):
        sp.ones(3) + sp.ones(4)


def test_unary_and_ufunc_calls(below):
    a = numpy.abs(ref((4, 6))) + 0.5
    x = sp.array(a)
    assert_eq(-x, -a, exact=True)
    assert_eq(abs(-x), abs(-a), exact=True)
    assert_eq(numpy.sqrt(x), numpy.sqrt(a), exact=True)
    assert_eq(sp.exp(x), numpy.exp(a), exact=True)
    assert_eq(numpy.add(x, x[0]), numpy.add(a, a[0]), exact=True)
    q, r = numpy.divmod(x, 0.3)
    eq, er = numpy.divmod(a, 0.3)
    assert_eq(q, eq, exact=True)
    assert_eq(r, er, exact=True)
    assert_eq(numpy.maximum(x, 1.0), numpy.maximum(a, 1.0), exact=True)


@pytest.mark.parametrize(
    "sa, sb", [((5,), (5,)), ((4, 5), (5,)), ((5,), (5, 3)), ((4, 5), (5, 3)), ((2, 4, 5), (5, 2))], ids=repr
)
def test_matmul_matches_numpy(below, sa, sb):
    a, b = ref(sa, seed=1), ref(sb, seed=2)
    x, y = sp.array(a), sp.array(b)
    exact = bool(below)  # split products sum in another order (to rounding)
    assert_eq(x @ y, a @ b, exact=exact)
    assert_eq(x @ b, a @ b, exact=exact)  # a NumPy operand: the general path
    if len(sa) < 3:
        assert_eq(sp.dot(x, y), numpy.dot(a, b), exact=exact)


def test_matmul_errors_are_numpys(below):
    x, y = sp.ones((3, 4)), sp.ones((3, 4))
    with pytest.raises(ValueError):
        numpy.ones((3, 4)) @ numpy.ones((3, 4))
    with pytest.raises(ValueError):
        x @ y


@pytest.mark.parametrize("name", ["sum", "prod", "min", "max", "mean", "std", "var", "any", "all"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)], ids=repr)
def test_reductions_match_numpy(below, name, axis):
    a = ref((6, 7))
    x = sp.array(a)
    exact = bool(below)  # split sums combine partial sums (to rounding)
    assert_eq(getattr(x, name)(axis=axis), getattr(a, name)(axis=axis), exact=exact)
    assert_eq(getattr(x[::-1, 1:], name)(axis=axis), getattr(a[::-1, 1:], name)(axis=axis), exact=exact)
    assert_eq(getattr(x, name)(axis=axis, keepdims=True), getattr(a, name)(axis=axis, keepdims=True), exact=exact)
    if name in ("std", "var"):
        assert_eq(getattr(x, name)(axis=axis, ddof=1), getattr(a, name)(axis=axis, ddof=1), exact=exact)
    if name in ("sum", "prod", "mean"):
        got = getattr(x, name)(axis=axis, dtype=numpy.float32)
        assert_eq(got, getattr(a, name)(axis=axis, dtype=numpy.float32), exact=exact, rtol=1e-5)


def test_reduction_errors_are_numpys(below):
    x = sp.ones((3, 4))
    with pytest.raises(numpy.exceptions.AxisError):
        x.sum(axis=2)
    with pytest.raises(ValueError):
        sp.ones((0,)).max()


@pytest.mark.parametrize("fn", ["empty", "zeros", "ones"])
@pytest.mark.parametrize("dtype", [float, numpy.int16, numpy.complex64, bool])
def test_creation_matches_numpy(below, fn, dtype):
    x = getattr(sp, fn)((3, 4), dtype)
    e = getattr(numpy, fn)((3, 4), dtype)
    assert x.shape == e.shape and x.dtype == e.dtype
    if fn != "empty":
        assert_eq(x, e, exact=True)
    assert_eq(sp.full(5, 7, dtype), numpy.full(5, 7, dtype), exact=True)
    with pytest.raises(TypeError, match="object"):
        getattr(sp, fn)(3, object)


def test_results_grow_past_the_threshold_into_split_arrays():
    with config.set(replicate_below=100):
        a, b = ref((20, 1)), ref((30,), seed=1)
        x, y = sp.array(a), sp.array(b)
        z = x + y  # 600 elements: split (whole on one rank; device blocks: never on the lane)
        assert (whole.local(z) is None) == (z.comm.Get_size() > 1 or z._st.be.is_device)
        assert z.layout == sp.empty((20, 30)).layout
        assert_eq(z, a + b, exact=True)
        assert_eq(x * 2.0, a * 2.0, exact=True)


def test_a_write_on_the_lane_computes_deferred_readers_first():
    """A deferred value reading a whole array is computed before the lane writes it.

    On one rank the split array is whole: too large for the lane (the fuser
    defers its operations), its small views on it.  On more ranks the engine
    takes every step, with the same results."""
    with config.set(fuse=True, fuse_min_size=1000, replicate_below=0):
        a = ref((2000,))
        big = sp.array(a)
        d = big * 2.0  # deferred (2000 >= fuse_min_size)
        assert is_deferred(d)
        head = big[:10]  # small view: on the lane on one rank
        assert is_deferred(d)
        assert (whole.local(head) is not None) == (world()[1] == 1 and not big._s.be.is_device)
        head += 1.0
        a2 = a * 2.0
        a[:10] += 1.0
        assert_eq(d, a2, exact=True)
        assert_eq(big, a, exact=True)
        head[3] = -5.0
        a[3] = -5.0
        assert_eq(big, a, exact=True)
        # An assignment into part of the large array itself (eager, whatever its size).
        e = big + 1.0  # deferred again
        a_e = a + 1.0
        big[5] = 3.0
        big[10:14] = sp.array(numpy.arange(4.0))
        a[5] = 3.0
        a[10:14] = numpy.arange(4.0)
        assert_eq(e, a_e, exact=True)
        assert_eq(big, a, exact=True)


def test_shape_assignment_resets_the_cached_copy(below):
    a = ref((4, 6))
    x = sp.array(a)
    x[0, 0] = 1.0  # the copy is cached now
    x.shape = (6, 4)
    a[0, 0] = 1.0
    a.shape = (6, 4)
    assert_eq(x[5], a[5], exact=True)
    x[5, 3] = 2.0
    a[5, 3] = 2.0
    assert_eq(x, a, exact=True)


def test_no_messages_on_the_lane():
    with config.set(replicate_below=DEFAULT):
        a = ref((20, 20))
        x = sp.array(a)
        with sp.comm_stats() as s:
            for i in range(1, 19):
                x[i, :i] -= x[i, :i] @ x[:i, :i] * 0.01
                x[i, i] = x[i, i] / 2.0 + x[:, i].sum() * 1e-3
            for i in range(1, 19):
                a[i, :i] -= a[i, :i] @ a[:i, :i] * 0.01
                a[i, i] = a[i, i] / 2.0 + a[:, i].sum() * 1e-3
        assert (s.messages_sent, s.collectives) == (0, 0)
        assert_eq(x, a, exact=True)


PURE_CALLS = {
    "dot": lambda m, a, b: m.dot(a, b[0]),
    "vdot": lambda m, a, b: m.vdot(a, b),
    "inner": lambda m, a, b: m.inner(a, b),
    "outer": lambda m, a, b: m.outer(a[0], b[1]),
    "tensordot": lambda m, a, b: m.tensordot(a, b.T, 1),
    "cross": lambda m, a, b: m.cross(a[:, :3], b[:, :3]),
    "trace": lambda m, a, b: m.trace(a),
    "sum": lambda m, a, b: m.sum(a),
    "prod": lambda m, a, b: m.prod(a, 1),
    "mean": lambda m, a, b: m.mean(a, 0),
    "std": lambda m, a, b: m.std(a),
    "var": lambda m, a, b: m.var(b, None),
    "min": lambda m, a, b: m.min(a),
    "amax": lambda m, a, b: m.amax(a, 1),
    "any": lambda m, a, b: m.any(a > 1),
    "all": lambda m, a, b: m.all(a > -5, 0),
    "argmin": lambda m, a, b: m.argmin(a),
    "argmax": lambda m, a, b: m.argmax(b, 1),
    "cumsum": lambda m, a, b: m.cumsum(a),
    "cumprod": lambda m, a, b: m.cumprod(a, 0),
    "where": lambda m, a, b: m.where(a > 0, a, b),
    "clip": lambda m, a, b: m.clip(a, -0.5, 0.5),
    "copy": lambda m, a, b: m.copy(a),
    "zeros_like": lambda m, a, b: m.zeros_like(a),
    "ones_like": lambda m, a, b: m.ones_like(b),
    "full_like": lambda m, a, b: m.full_like(a, 3.5),
}


@pytest.mark.parametrize("name", list(PURE_CALLS))
def test_functions_without_the_dispatch_protocol_match_numpy(below, name):
    a, b = ref((4, 5), seed=1), ref((4, 5), seed=2)
    x, y = sp.array(a), sp.array(b)
    expected = PURE_CALLS[name](numpy, a, b)
    got = PURE_CALLS[name](sp, x, y)
    sums = ("dot", "vdot", "inner", "tensordot", "sum", "prod", "mean", "std", "var", "cumsum", "cumprod", "trace")
    exact = bool(below) or name not in sums  # split sums combine partial sums (to rounding)
    assert_eq(got, expected, exact=exact)
    assert_eq(x, a, exact=True)  # nothing written
    if isinstance(got, sp.ndarray) and isinstance(expected, numpy.ndarray) and got.size:
        got[...] = 0  # a new array: the arguments are unchanged
        assert_eq(x, a, exact=True)
        assert_eq(y, b, exact=True)


def test_the_lane_never_computes_an_unimplemented_function():
    """The direct call is for registered functions only: an unregistered one raises on replicas too."""
    from spmdarray.core.registry import HANDLED
    from spmdarray.engine.replicas import PURE

    assert PURE <= set(HANDLED)
    with config.set(replicate_below=DEFAULT):
        x = sp.ones(3)
        with pytest.raises(NotImplementedError, match="spmdarray does not implement numpy.frobnicate"):
            numpy.frobnicate = _unregistered  # a NumPy-protocol function spmdarray never registered
            try:
                _unregistered(x)
            finally:
                del numpy.frobnicate


@numpy._core.overrides.array_function_dispatch(lambda a: (a,), module="numpy")
def _unregistered(a):
    return a


_unregistered.__name__ = "frobnicate"


def test_ufunc_methods_and_out_match_numpy(below):
    a, b = ref((5, 4), seed=1), ref((4,), seed=2)
    x, y = sp.array(a), sp.array(b)
    assert_eq(numpy.add.outer(x[:, 0], y), numpy.add.outer(a[:, 0], b), exact=True)
    assert_eq(numpy.minimum.outer(y, y), numpy.minimum.outer(b, b), exact=True)
    assert_eq(numpy.maximum.reduce(x, axis=1), numpy.maximum.reduce(a, axis=1), exact=True)
    # (a split scan combines per-rank products: equal to rounding)
    assert_eq(numpy.multiply.accumulate(x, axis=0), numpy.multiply.accumulate(a, axis=0), exact=bool(below))
    o = sp.empty((5, 4))
    e = numpy.empty((5, 4))
    r = numpy.multiply(x, y, out=o)
    assert r is o
    numpy.multiply(a, b, out=e)
    assert_eq(o, e, exact=True)
    q, m = numpy.divmod(x, 0.5, out=(sp.empty((5, 4)), None))
    eq, em = numpy.divmod(a, 0.5)
    assert_eq(q, eq, exact=True)
    assert_eq(m, em, exact=True)
    with pytest.raises(NotImplementedError):
        numpy.subtract.reduce(x, axis=0)  # not associative: not computed at any size
    with pytest.raises(NotImplementedError):
        numpy.add.reduceat(y, [0, 2])


VIEW_CALLS = {
    "flip": lambda m, x: m.flip(x),
    "flip0": lambda m, x: m.flip(x, 0),
    "flip_axes": lambda m, x: m.flip(x, axis=(0, 1)),
    "fliplr": lambda m, x: m.fliplr(x),
    "flipud": lambda m, x: m.flipud(x),
    "transpose": lambda m, x: m.transpose(x),
    "transpose_axes": lambda m, x: m.transpose(x, (1, 0)),
    "swapaxes": lambda m, x: m.swapaxes(x, 0, 1),
    "moveaxis": lambda m, x: m.moveaxis(x, 0, -1),
    "expand_dims": lambda m, x: m.expand_dims(x, 1),
}


@pytest.mark.parametrize("name", list(VIEW_CALLS))
def test_functions_giving_views_give_views(below, name):
    a = ref((4, 5))
    x = sp.array(a)
    got, expected = VIEW_CALLS[name](sp, x), VIEW_CALLS[name](numpy, a)
    assert_eq(got, expected, exact=True)
    got[...] = 2.5  # a view: written through to x, as NumPy's
    expected[...] = 2.5
    assert_eq(x, a, exact=True)


@pytest.mark.parametrize(
    "key",
    [
        (numpy.int64(2), slice(None)),
        (slice(None), numpy.int64(2)),
        (slice(None, 4), 1),
        (1, slice(None, 4)),
        (None, slice(numpy.int64(1), 4), 0),
        (slice(4, None, -1), None, slice(1, 3)),
    ],
    ids=repr,
)
def test_views_have_the_layout_the_engine_gives(below, key):
    """A view the lane composes has the view map and layout the general path computes
    (on one rank a split array's view keeps the axes it keeps, whatever its shape)."""
    a = ref((5, 5))
    x = sp.array(a)
    for _ in range(2):  # composed, then from the cache
        got = x[key]
        with config.set(whole_lane=False):
            want = x[key]
        assert (got._map, got.layout) == (want._map, want.layout)
        assert_eq(got, a[key], exact=True)


def test_views_of_one_shape_on_different_axes_keep_their_own_layouts(below):
    a = ref((5, 5))
    x = sp.array(a)
    lo = numpy.int64(0)
    keys = [(slice(lo, 5), 2), (2, slice(lo, 5)), (slice(None), 2), (2, slice(None))]
    for key in keys + keys[::-1]:
        got = x[key]
        with config.set(whole_lane=False):
            want = x[key]
        assert (got._map, got.layout) == (want._map, want.layout), key
        assert_eq(got, a[key], exact=True)


def test_the_lane_reduces_exactly_the_ufuncs_the_engine_reduces():
    """``ufunc.reduce``/``accumulate`` take the lane for the ufuncs the general path computes,
    so that every other one raises NotImplementedError at every size."""
    from spmdarray.engine.dispatch import REDUCE_NAMES

    assert set(REDUCE_NAMES) == set(whole._ASSOCIATIVE)


def test_views_of_views_compose_their_maps_when_first_read(below):
    """The lane's views of Python-integer and slice keys compose their view map and layout
    only when first read: chains of them equal NumPy and the engine's maps."""
    a = ref((7, 6))
    x = sp.array(a)
    chains = [
        ((slice(1, -1), slice(None, None, -1)), (2,), (slice(None, None, 2),)),
        ((3,), (slice(1, 5),), (slice(None, None, -1),)),
        ((slice(None), None, 2), (slice(2, 6), 0)),
        ((slice(5, 0, -2),), (slice(None), 1)),
    ]
    for chain in chains:
        got, want, ref_ = x, x, a
        for key in chain:
            got, ref_ = got[key], ref_[key]
            with config.set(whole_lane=False):
                want = want[key]
        assert_eq(got, ref_, exact=True)
        assert got.shape == ref_.shape and got.ndim == ref_.ndim
        assert (got._map, got.layout) == (want._map, want.layout), chain
    v = x[2:5, 1:-1]  # a view written through is seen by the base, and read back by it
    v[1, :] = -1.0
    a[2:5, 1:-1][1, :] = -1.0
    assert_eq(x, a, exact=True)
    assert_eq(v.sum(axis=0), a[2:5, 1:-1].sum(axis=0))


def test_updates_through_the_same_key_store_back_as_numpy(below):
    """``x[k] op= y`` updates the view ``x[k]`` in place and stores it back onto itself."""
    a = ref((6, 5))
    x = sp.array(a)
    for k in [(2, slice(1, -1)), slice(1, 3), (slice(None), 0), (slice(4, 0, -1), slice(None, None, 2))]:
        x[k] += x[k] * 2.0
        a[k] += a[k] * 2.0
        x[k] /= 3.0
        a[k] /= 3.0
    k = (1, slice(None))
    t = x[k]
    x[k] = 5.0  # t is a view: it sees the write, and storing it back changes nothing
    a[k] = 5.0
    x[k] = t
    assert_eq(x, a, exact=True)
    t = x[k]
    t -= 1.0  # in place, then stored back with the same key object
    x[k] = t
    a[k] -= 1.0
    u = x[1:]  # a view of another view of the same storage, stored through the base
    w = u[k]
    x[k] = w
    a[k] = a[1:][k]
    assert_eq(x, a, exact=True)


@pytest.mark.parametrize(
    "dtype, value",
    [("i8", numpy.float64(2.75)), ("f8", numpy.int32(-3)), ("u1", numpy.int64(300)), ("f4", numpy.float64(1e300))],
    ids=repr,
)
def test_element_writes_of_numpy_scalars_cast_as_numpy(below, dtype, value):
    a = ref((4, 3)).astype(dtype)
    x = sp.array(a)
    with numpy.errstate(all="ignore"):
        try:
            a[1, 2] = value
        except OverflowError:
            with pytest.raises(OverflowError):
                x[1, 2] = value
            return
        x[1, 2] = value
    assert_eq(x, a, exact=True)


def test_a_large_one_rank_array_keeps_its_copy_for_indexing_only():
    """On one rank an array the fuser would defer stays off the lane for operations, but
    its element and row reads index its copy, which later writes keep current."""
    if sp.empty(1).comm.Get_size() != 1:
        pytest.skip("one rank: split arrays are held whole only there")
    with config.set(fuse=True, fuse_min_size=16):
        a = ref((8, 8))
        x = sp.array(a)
        if x._st.be.is_device:
            pytest.skip("device blocks take the engine")
        assert whole.local(x) is None
        assert x[2, 3] == a[2, 3]
        assert whole.whole_copy(x) is not None
        x += 1.0  # the general path (deferred, then computed), into the same allocation
        a += 1.0
        assert x[2, 3] == a[2, 3]
        assert_eq(x[3, 1:5], a[3, 1:5], exact=True)
        x[4, :2] = x[3, :2] @ numpy.ones((2, 2))
        a[4, :2] = a[3, :2] @ numpy.ones((2, 2))
        assert_eq(x, a, exact=True)


def test_loops_of_short_slices_make_no_view_maps(below, monkeypatch):
    """Views that only feed the lane (``A[i, :j] @ A[:j, j]``, ``np.flip(y[:k])``,
    ``A[i, 1:-1] += ...``) never compose a view map; reading one's layout makes it."""
    x = sp.array(ref((6, 6)))
    if whole.local(x) is None:
        pytest.skip("off the lane here (split over several ranks, or device blocks)")
    a = numpy.asarray(x)
    composed = []
    real = whole._compose
    monkeypatch.setattr(whole, "_compose", lambda *args: composed.append(args[2]) or real(*args))
    for i in range(1, 5):
        x[i, i] -= x[i, :i] @ x[:i, i]
        a[i, i] -= a[i, :i] @ a[:i, i]
        x[i, 1:-1] += sp.flip(x[i - 1, :-2]) * 0.5
        a[i, 1:-1] += numpy.flip(a[i - 1, :-2]) * 0.5
    assert composed == []
    assert_eq(x, a, exact=True)
    v = x[2, 1:4]
    with config.set(whole_lane=False):
        want = x[2, 1:4]
    assert (v.layout, v._map) == (want.layout, want._map)
    assert composed == [(2, slice(1, 4))]


def test_results_of_unpickled_arrays_reuse_the_cached_result_kind(below, monkeypatch):
    """Arrays unpickled (or received from another process) have dtype objects of their own:
    results of every such dtype object share the cached kind of their shape."""
    import pickle

    a, b = pickle.loads(pickle.dumps(ref((7,)))), ref((7,))
    if a.dtype is b.dtype:
        pytest.skip("this NumPy unpickles the builtin dtype object itself")
    x, y = sp.asarray(a), sp.asarray(b)
    if whole.local(x) is None:
        pytest.skip("off the lane here (split over several ranks, or device blocks)")
    made = []
    real = whole._kind
    monkeypatch.setattr(whole, "_kind", lambda *args: made.append(args[2]) or real(*args))
    for _ in range(3):
        assert_eq(x * 3.0, a * 3.0, exact=True)
        assert_eq(y * 3.0, b * 3.0, exact=True)
    assert len(made) <= 1


@pytest.mark.parametrize("order", ["C", "F", "A"])
@pytest.mark.parametrize(
    "key, shape", [((), (4, 15)), ((slice(None, None, -1), slice(1, 4)), (-1,)), ((1,), (5, 2)), ((), (3, 5, 4))]
)
def test_reshape_of_whole_arrays_is_numpys_copied(below, order, key, shape):
    """A reshape that is not a view of length-1 axes copies (as the general path), with
    NumPy's values in NumPy's order; transposed and reversed views too."""
    a = ref((6, 10))
    x = sp.array(a)
    for got_src, want_src in ((x[key], a[key]), (x.T[key], a.T[key])):
        try:
            want = numpy.reshape(want_src, shape, order=order)
        except ValueError:
            with pytest.raises(ValueError):
                sp.reshape(got_src, shape, order=order)
            continue
        got = sp.reshape(got_src, shape, order=order)
        assert_eq(got, want, exact=True)
        got[...] = 0.0  # a copy: the source keeps its values
        assert_eq(got_src, want_src, exact=True)


FANCY = [
    lambda a: (numpy.array([3, 0, 3, -1]),),
    lambda a: (numpy.array([1, 4]), numpy.array([2, -2])),
    lambda a: (slice(1, None), numpy.array([0, 0, 2])),
    lambda a: (numpy.array([[1], [4]]), Ellipsis),
    lambda a: (a[:, 0] > 0,),
    lambda a: (a > 0.3,),
    lambda a: (a[:, 0] > 0, 2),
    lambda a: (None, numpy.array([1, 2]), slice(None, None, -1)),
]


@pytest.mark.parametrize("make", FANCY, ids=range(len(FANCY)))
@pytest.mark.parametrize("as_spmd", [False, True], ids=["numpy_keys", "spmdarray_keys"])
def test_advanced_indexing_and_assignment_match_numpy(below, make, as_spmd):
    """Keys of integer and boolean arrays (NumPy's, or spmdarray arrays), alone or with
    integers, slices, None and ``...``: NumPy's values, copies and assignment (repeated
    indices: the last write wins, as NumPy)."""
    a = ref((6, 5))
    x = sp.array(a)
    if not as_spmd and x._st.be.is_device:
        pytest.skip("NumPy index arrays into device arrays raise TypeError: a gap of the device path")
    key = make(a)
    skey = tuple(sp.asarray(k) if as_spmd and isinstance(k, numpy.ndarray) else k for k in key)
    got, want = x[skey], a[key]
    assert_eq(got, want, exact=True)
    got[...] = 0  # a copy
    assert_eq(x, a, exact=True)
    x[skey] = -7.5
    a[key] = -7.5
    assert_eq(x, a, exact=True)
    value = ref(numpy.shape(a[key]), seed=3)
    x[skey] = sp.asarray(value)
    a[key] = value
    assert_eq(x, a, exact=True)
    x[skey] = x[skey] * 2.0  # the value reads what it overwrites
    a[key] = a[key] * 2.0
    assert_eq(x, a, exact=True)


def test_advanced_indexing_errors_are_numpys(below):
    a = ref((6, 5))
    x = sp.array(a)
    if x._st.be.is_device:
        pytest.skip("NumPy index arrays into device arrays raise TypeError: a gap of the device path")
    for key in [
        (numpy.array([0, 6]),),
        (numpy.array([1, 2]), numpy.array([1, 2, 3])),
        (numpy.ones(5, bool),),
        (numpy.array([0.5]),),
    ]:
        with pytest.raises(IndexError) as want:
            a[key]
        with pytest.raises(want.type):
            x[key]
        with pytest.raises(IndexError):
            a[key] = 1.0
        with pytest.raises(IndexError):
            x[key] = 1.0
        assert_eq(x, a, exact=True)


def test_a_deferred_mask_on_one_rank_indexes_on_the_lane():
    """mandelbrot2's ``Z[I]`` where ``I = abs(Z) > 2`` is deferred by the fuser: on one rank
    the mask is computed (locally) and NumPy indexes the copies."""
    if sp.empty(1).comm.Get_size() != 1:
        pytest.skip("one rank")
    with config.set(fuse=True, fuse_min_size=4):
        a = ref((40,))
        z = sp.asarray(a)
        if z._st.be.is_device:
            pytest.skip("device blocks take the engine")
        m = abs(z) > 0.5
        assert is_deferred(m)
        assert_eq(z[m], a[abs(a) > 0.5], exact=True)
        idx = sp.arange(40)[m]
        z[idx] = 0.0
        a[abs(a) > 0.5] = 0.0
        assert_eq(z, a, exact=True)


def test_copies_are_new_arrays(below):
    a = ref((6, 5), float, 21)
    x = sp.asarray(a)
    y = x[::2, 1:].copy()  # a view's copy: its own storage
    b = sp.broadcast_to(x[0], (3, 5)).copy()  # a broadcast view's copy: writable, whole
    y[0, 0] = -1.0
    b[1, 2] = -2.0
    z = x.T.copy()
    ya, ba = a[::2, 1:].copy(), numpy.broadcast_to(a[0], (3, 5)).copy()
    ya[0, 0] = -1.0
    ba[1, 2] = -2.0
    assert_eq(x, a, exact=True)
    assert_eq(y, ya, exact=True)
    assert_eq(b, ba, exact=True)
    assert_eq(z, a.T, exact=True)
    assert y.layout == sp.zeros(y.shape).layout or not below  # replicated like a new array
