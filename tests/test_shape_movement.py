"""Shape, data movement and array creation against NumPy.

broadcast_to/broadcast_arrays/tile/meshgrid, repeat/delete/insert/append/
resize/block/unstack, pad (every mode), diagonal/trace/diag/diagflat, tri and
the triangle indices, indices/mgrid/ogrid/fromfunction, logspace/geomspace,
layout-only conversions, and the ndarray methods resize, view, byteswap,
getfield/setfield, ravel/flatten orders and the gathering ones.  Uneven
shapes, empty and length-1 axes, negative steps and several dtypes; every
test runs at 1-4 ranks.
"""

from __future__ import annotations

import pickle
import warnings

import numpy
import pytest
from helpers import assert_eq, ref

import spmdarray as sp

DTYPES = [numpy.bool_, numpy.int32, numpy.int64, numpy.float32, numpy.float64, numpy.complex128]
SHAPES = [(7,), (5, 6), (3, 4, 5), (1, 7, 1), (4, 0, 3)]


def _inputs(shape, dtype=float):
    a = ref(shape, dtype)
    x = sp.array(a)
    yield x, a
    if len(shape) and shape[0] > 1:
        yield x[::-2], a[::-2]
    if len(shape) >= 2:
        yield x.T, a.T


def _same_error(call, x, a):
    with pytest.raises(Exception) as want:
        call(a)
    with pytest.raises(type(want.value)):
        call(x)


# ------------------------------------------------------------ broadcasting
@pytest.mark.parametrize("shape", [(1,), (3, 1), (2, 1, 4), (1, 0)], ids=str)
def test_broadcast_to_is_a_read_only_view(shape):
    a = ref(shape)
    x = sp.array(a)
    for target in [(5,) + shape, tuple(4 if n == 1 else n for n in shape), (2, 3) + shape]:
        b = numpy.broadcast_to(x, target)
        assert_eq(b, numpy.broadcast_to(a, target), exact=True)
        assert_eq(b + 1, numpy.broadcast_to(a, target) + 1, exact=True)
        # Moved onto other layouts: only the source elements travel, then repeat locally.
        assert_eq(b.copy(), numpy.broadcast_to(a, target), exact=True)
        other = sp.array(ref(target, seed=1))
        assert_eq(other + b, ref(target, seed=1) + numpy.broadcast_to(a, target), exact=True)
        assert_eq(other[::-1] - b, ref(target, seed=1)[::-1] - numpy.broadcast_to(a, target), exact=True)
        dst = sp.zeros(target)
        dst[...] = b
        assert_eq(dst, numpy.broadcast_to(a, target), exact=True)
        if b.size > x.size:
            with pytest.raises(ValueError, match="read-only"):
                b[...] = 1
            with pytest.raises(ValueError, match="read-only"):
                numpy.add(x.ravel()[0], 1, out=b)
    _same_error(lambda m: numpy.broadcast_to(m, shape[1:]), x, a)
    _same_error(lambda m: numpy.broadcast_to(m, (-1,) + shape), x, a)
    if any(n != 1 for n in shape):
        _same_error(lambda m: numpy.broadcast_to(m, tuple(n if n == 1 else n + 1 for n in shape)), x, a)


def test_broadcast_arrays_match_numpy():
    a, b = ref((4, 1)), ref((3,), numpy.int32)
    got = numpy.broadcast_arrays(sp.array(a), sp.array(b))
    for g, e in zip(got, numpy.broadcast_arrays(a, b)):
        assert_eq(g, e, exact=True)
    got = numpy.broadcast_arrays(sp.array(a), b)
    assert_eq(got[0], numpy.broadcast_arrays(a, b)[0], exact=True)
    _same_error(lambda t: numpy.broadcast_arrays(t, ref((2, 3))), sp.array(ref((4, 2))), ref((4, 2)))


@pytest.mark.parametrize("shape", SHAPES + [()], ids=str)
@pytest.mark.parametrize("reps", [2, (1, 3), (2, 1, 2), (0, 2), 1])
def test_tile_matches_numpy(shape, reps):
    for x, a in _inputs(shape, numpy.int32):
        assert_eq(numpy.tile(x, reps), numpy.tile(a, reps), exact=True)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("copy", [False, True])
def test_meshgrid_matches_numpy(indexing, sparse, copy):
    u, v, w = ref((7,)), ref((5,), numpy.int32), ref((3,))
    for args in [(u,), (u, v), (u, v, w)]:
        got = numpy.meshgrid(*(sp.array(t) for t in args), indexing=indexing, sparse=sparse, copy=copy)
        want = numpy.meshgrid(*args, indexing=indexing, sparse=sparse, copy=copy)
        assert len(got) == len(want)
        for g, e in zip(got, want):
            assert_eq(g, e, exact=True)
    with pytest.raises(ValueError):
        numpy.meshgrid(sp.array(u), indexing="yx")


# -------------------------------------------------- repeat, delete, insert
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [numpy.bool_, numpy.int32, numpy.complex128])
def test_repeat_matches_numpy(shape, dtype):
    for x, a in _inputs(shape, dtype):
        for axis in sorted({None, 0, a.ndim - 1}, key=str):
            n = a.size if axis is None else a.shape[axis]
            for r in [3, numpy.arange(n) % 3, [2] * min(n, 1)]:
                assert_eq(numpy.repeat(x, r, axis=axis), numpy.repeat(a, r, axis=axis), exact=True)
            assert_eq(x.repeat(2, axis), a.repeat(2, axis), exact=True)


def test_repeat_with_distributed_counts_and_errors():
    a = ref((11,), numpy.int64)
    x = sp.array(a)
    r = numpy.arange(11) % 4
    assert_eq(numpy.repeat(x, sp.array(r)), numpy.repeat(a, r), exact=True)
    assert_eq(numpy.repeat(x[::-3], sp.array(r[:4])), numpy.repeat(a[::-3], r[:4]), exact=True)
    m = ref((3, 4))
    assert_eq(numpy.repeat(sp.array(m), sp.array([1, 0, 2]), axis=0), numpy.repeat(m, [1, 0, 2], axis=0), exact=True)
    for call in (
        lambda t: numpy.repeat(t, -1),
        lambda t: numpy.repeat(t, [1, 2]),
        lambda t: numpy.repeat(t, 2, axis=1),
    ):
        _same_error(call, x, a)
    with pytest.raises(ValueError):
        numpy.repeat(x, sp.array(-r))


@pytest.mark.parametrize("shape", [(7,), (5, 6), (3, 4, 5)], ids=str)
def test_delete_matches_numpy(shape):
    for x, a in _inputs(shape):
        for axis in [None, 0, -1]:
            n = a.size if axis is None else a.shape[axis]
            mask = numpy.arange(n) % 3 == 0
            for obj in [0, -1, [0, n - 1], slice(None, None, 2), slice(1, -1), mask, []]:
                assert_eq(numpy.delete(x, obj, axis), numpy.delete(a, obj, axis), exact=True)
    x, a = sp.array(ref((5, 6))), ref((5, 6))
    _same_error(lambda t: numpy.delete(t, 9, 0), x, a)
    _same_error(lambda t: numpy.delete(t, [True, False], 0), x, a)
    _same_error(lambda t: numpy.delete(t, 0, 2), x, a)


@pytest.mark.parametrize("dtype", [numpy.int32, numpy.float64, numpy.complex128])
def test_insert_append_match_numpy(dtype):
    a = ref((5, 7), dtype)
    x = sp.array(a)
    cases = [
        (1, 99, 0),
        (2, [1, 2, 3, 4, 5], 1),
        (-1, 3, 1),
        ([1], [[7], [8], [9], [1], [2]], 1),
        ([0, 2, 2, 7], 5, 1),
        ([3, 1], [[1] * 7, [2] * 7], 0),
        (3, 100, None),
        ([0, 35], [1, 2], None),
        (slice(1, 3), 0, 1),
        (5, [[4] * 7], 0),
    ]
    for obj, vals, axis in cases:
        assert_eq(numpy.insert(x, obj, vals, axis=axis), numpy.insert(a, obj, vals, axis=axis), exact=True)
    v = ref((5,), dtype)
    assert_eq(numpy.insert(x, 2, sp.array(v), axis=1), numpy.insert(a, 2, v, axis=1), exact=True)
    assert_eq(
        numpy.insert(x[::-1], [0, 4], sp.array(v)[:, None], axis=1), numpy.insert(a[::-1], [0, 4], v[:, None], axis=1)
    )
    _same_error(lambda t: numpy.insert(t, 9, 1, axis=0), x, a)
    _same_error(lambda t: numpy.insert(t, 1, [1, 2], axis=1), x, a)
    _same_error(lambda t: numpy.insert(t, 0, 1, axis=3), x, a)
    assert_eq(numpy.append(x, [1, 2]), numpy.append(a, [1, 2]), exact=True)
    assert_eq(numpy.append(x, x[::-1], axis=0), numpy.append(a, a[::-1], axis=0), exact=True)
    assert_eq(numpy.append(x[:, 0], 7), numpy.append(a[:, 0], 7), exact=True)
    _same_error(lambda t: numpy.append(t, [1, 2], axis=0), x, a)


@pytest.mark.parametrize("new_shape", [3, (10, 9), (0,), (2, 3, 4), (5, 7), ()], ids=str)
def test_resize_function_matches_numpy(new_shape):
    for x, a in _inputs((5, 7), numpy.int64):
        assert_eq(numpy.resize(x, new_shape), numpy.resize(a, new_shape), exact=True)
    e = numpy.zeros((0, 3))
    assert_eq(numpy.resize(sp.array(e), new_shape), numpy.resize(e, new_shape), exact=True)
    with pytest.raises(ValueError):
        numpy.resize(sp.array(e), (-1, 2))


def test_unstack_block_permute_dims_row_stack():
    a = ref((3, 4, 5))
    x = sp.array(a)
    for axis in (0, 1, -1):
        got, want = numpy.unstack(x, axis=axis), numpy.unstack(a, axis=axis)
        assert len(got) == len(want)
        for g, e in zip(got, want):
            assert_eq(g, e, exact=True)
    with pytest.raises(ValueError):
        numpy.unstack(sp.array(numpy.float64(1.0)))
    m, n = ref((3, 4)), ref((2, 4), numpy.int32)
    xm, xn = sp.array(m), sp.array(n)
    assert_eq(numpy.block([[xm, xm], [xm, xm]]), numpy.block([[m, m], [m, m]]), exact=True)
    assert_eq(
        numpy.block([[xm], [xn], [numpy.ones((1, 4))]]), numpy.block([[m], [n], [numpy.ones((1, 4))]]), exact=True
    )
    v = ref((7,))
    assert_eq(numpy.block([sp.array(v), 1.0, sp.array(v)[::-1]]), numpy.block([v, 1.0, v[::-1]]), exact=True)
    assert_eq(numpy.block(xm), numpy.block(m), exact=True)
    _same_error(lambda t: numpy.block([[t], t]), xm, m)
    _same_error(lambda t: numpy.block([t, t[:2]]), xm, m)
    _same_error(lambda t: numpy.block(([t],)), xm, m)
    assert_eq(numpy.permute_dims(x, (2, 0, 1)), numpy.permute_dims(a, (2, 0, 1)), exact=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        if hasattr(numpy, "row_stack"):  # (removed in NumPy 2.5; spmdarray keeps the alias)
            assert_eq(numpy.row_stack([xm, xn]), numpy.vstack([m, n]), exact=True)
        assert_eq(sp.row_stack([xm, xn]), numpy.vstack([m, n]), exact=True)


# ---------------------------------------------------------------------- pad
PAD_MODES = [
    ("constant", {}),
    ("constant", {"constant_values": (4, -5)}),
    ("constant", {"constant_values": ((1, 2), (3, 4), (5, 6))}),
    ("edge", {}),
    ("wrap", {}),
    ("reflect", {}),
    ("symmetric", {}),
    ("reflect", {"reflect_type": "odd"}),
    ("symmetric", {"reflect_type": "odd"}),
    ("linear_ramp", {}),
    ("linear_ramp", {"end_values": (3, -2)}),
    ("maximum", {}),
    ("minimum", {"stat_length": 2}),
    ("mean", {}),
    ("mean", {"stat_length": (1, 3)}),
    ("median", {}),
    ("median", {"stat_length": ((2, 1), (3, 3), (1, 1))}),
]


@pytest.mark.parametrize("mode,kw", PAD_MODES, ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", [numpy.int32, numpy.float64])
def test_pad_every_mode_matches_numpy(mode, kw, dtype):
    for shape, pws in [
        ((7,), [(1, 3), 9]),
        ((5, 6), [2, {-1: (0, 3)}]),
        ((3, 4, 5), [((1, 2), (0, 1), (2, 0))]),
        ((1, 5), [2]),
    ]:
        for x, a in _inputs(shape, dtype):
            kwa = {k: (v[: a.ndim] if isinstance(v, tuple) and isinstance(v[0], tuple) else v) for k, v in kw.items()}
            for pw in pws:
                exact = mode not in ("mean", "linear_ramp", "median") and "odd" not in str(kw)
                assert_eq(numpy.pad(x, pw, mode, **kwa), numpy.pad(a, pw, mode, **kwa), exact=exact)
    x = sp.array(ref((5, 6), dtype))
    assert numpy.pad(x, (1, 2), "empty").shape == (8, 9)


def test_pad_complex_bool_and_empty_inputs():
    c = ref((4, 5), numpy.complex128)
    for mode in ("constant", "edge", "wrap", "reflect", "symmetric", "mean"):
        assert_eq(numpy.pad(sp.array(c), (2, 3), mode), numpy.pad(c, (2, 3), mode))
    b = ref((6,), numpy.bool_)
    for mode in ("constant", "edge", "wrap", "reflect", "maximum"):
        assert_eq(numpy.pad(sp.array(b), 4, mode), numpy.pad(b, 4, mode), exact=True)
    e = numpy.zeros((0, 3))
    assert_eq(numpy.pad(sp.array(e), 1), numpy.pad(e, 1), exact=True)
    assert_eq(numpy.pad(sp.array(e), ((0, 0), (2, 2)), "edge"), numpy.pad(e, ((0, 0), (2, 2)), "edge"), exact=True)
    with pytest.raises(ValueError):
        numpy.pad(sp.array(e), 1, "edge")


def test_pad_errors_are_numpys():
    a = ref((5, 6))
    x = sp.array(a)
    for call in (
        lambda t: numpy.pad(t, ((1, 2, 3),)),
        lambda t: numpy.pad(t, -1),
        lambda t: numpy.pad(t, 1.5),
        lambda t: numpy.pad(t, ((1, 2), (3, 4), (5, 6))),
        lambda t: numpy.pad(t, 1, "nonsense"),
        lambda t: numpy.pad(t, 1, "edge", constant_values=3),
        lambda t: numpy.pad(t, 1, "maximum", stat_length=0),
        lambda t: numpy.pad(t, 1, "mean", stat_length=-1),
    ):
        _same_error(call, x, a)
    with pytest.raises(NotImplementedError, match="callable"):
        numpy.pad(x, 1, lambda v, w, i, k: None)


# ------------------------------------------------------------- diagonals
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 7), (3, 4, 5), (0, 3), (1, 1)], ids=str)
def test_diagonal_and_trace_match_numpy(dtype, shape):
    for x, a in _inputs(shape, dtype):
        for off in (-6, -1, 0, 3):
            for a1, a2 in ((0, 1), (-1, 0)):
                assert_eq(numpy.diagonal(x, off, a1, a2), numpy.diagonal(a, off, a1, a2), exact=True)
                assert_eq(x.diagonal(off, a1, a2), a.diagonal(off, a1, a2), exact=True)
                assert_eq(numpy.trace(x, off, a1, a2), numpy.trace(a, off, a1, a2), rtol=1e-5)
            if dtype is not numpy.complex128:
                assert_eq(x.trace(off, dtype=numpy.float64), a.trace(off, dtype=numpy.float64), rtol=1e-12)


def test_diagonal_keeps_nan_inf_and_signed_zero():
    f = numpy.array([-0.0, 1, numpy.nan, -numpy.inf] * 4).reshape(4, 4)
    got = numpy.asarray(numpy.diagonal(sp.array(f)))
    assert_eq(sp.array(got), numpy.diagonal(f), exact=True)
    assert numpy.signbit(got[0])


@pytest.mark.parametrize("dtype", [numpy.bool_, numpy.int32, numpy.float64, numpy.complex128])
def test_diag_diagflat_match_numpy(dtype):
    for k in (-2, 0, 1, 4):
        for x, a in _inputs((6,), dtype):
            assert_eq(numpy.diag(x, k), numpy.diag(a, k), exact=True)
            assert_eq(numpy.diagflat(x, k), numpy.diagflat(a, k), exact=True)
        for x, a in _inputs((4, 5), dtype):
            assert_eq(numpy.diag(x, k), numpy.diag(a, k), exact=True)
            assert_eq(numpy.diagflat(x, k), numpy.diagflat(a, k), exact=True)
    e = numpy.zeros(0, dtype)
    assert_eq(numpy.diag(sp.array(e)), numpy.diag(e), exact=True)


def test_diagonal_errors_are_numpys():
    a = ref((3, 4, 5))
    x = sp.array(a)
    for call in (
        lambda t: numpy.diagonal(t, 0, 0, 0),
        lambda t: numpy.diagonal(t, 0, 0, 3),
        lambda t: numpy.trace(t, 0, -4, 1),
        lambda t: numpy.diagonal(t[0, 0]),
        lambda t: numpy.diag(t),
    ):
        _same_error(call, x, a)


@pytest.mark.parametrize("n,k,m", [(4, 0, None), (5, -1, 3), (3, 2, 7), (0, 0, None), (6, 10, 2), (7, -9, 4)])
def test_tri_and_triangle_indices_match_numpy(n, k, m):
    for g, e in zip(sp.tril_indices(n, k, m), numpy.tril_indices(n, k, m)):
        assert_eq(g, e, exact=True)
    for g, e in zip(sp.triu_indices(n, k, m), numpy.triu_indices(n, k, m)):
        assert_eq(g, e, exact=True)
    assert_eq(sp.tri(n, m, k), numpy.tri(n, m, k), exact=True)
    assert_eq(sp.tri(n, m, k, dtype=numpy.int32), numpy.tri(n, m, k, dtype=numpy.int32), exact=True)
    z = numpy.zeros((n, n if m is None else m))
    for g, e in zip(numpy.tril_indices_from(sp.array(z), k), numpy.tril_indices_from(z, k)):
        assert_eq(g, e, exact=True)
    for g, e in zip(numpy.triu_indices_from(sp.array(z), k), numpy.triu_indices_from(z, k)):
        assert_eq(g, e, exact=True)
    for g, e in zip(sp.mask_indices(n, numpy.triu, k), numpy.mask_indices(n, numpy.triu, k)):
        assert_eq(g, e, exact=True)
    with pytest.raises(ValueError):
        numpy.tril_indices_from(sp.array(numpy.zeros(3)))


def test_tril_triu_match_numpy():
    for x, a in _inputs((5, 7)):
        for k in (-2, 0, 3):
            assert_eq(numpy.tril(x, k), numpy.tril(a, k), exact=True)
            assert_eq(numpy.triu(x, k), numpy.triu(a, k), exact=True)


# --------------------------------------------------------- grids, creation
@pytest.mark.parametrize("dims", [(3,), (2, 3), (4, 1, 5), (0, 3), ()], ids=str)
def test_indices_match_numpy(dims):
    assert_eq(sp.indices(dims), numpy.indices(dims), exact=True)
    assert_eq(sp.indices(dims, dtype=numpy.float32), numpy.indices(dims, dtype=numpy.float32), exact=True)
    got, want = sp.indices(dims, sparse=True), numpy.indices(dims, sparse=True)
    assert len(got) == len(want)
    for g, e in zip(got, want):
        assert_eq(g, e, exact=True)


@pytest.mark.parametrize(
    "key",
    [
        numpy.s_[0:5],
        numpy.s_[1:9:2, -3:3],
        numpy.s_[0:1:5j, 2:4:3j],
        numpy.s_[-1:1:0.5],
        numpy.s_[3:0:-1, 0:2],
        numpy.s_[0:1:1j],
        numpy.s_[0:4:4j],
        numpy.s_[5:5],
    ],
    ids=str,
)
def test_mgrid_ogrid_match_numpy(key):
    assert_eq(sp.mgrid[key], numpy.mgrid[key])
    got, want = sp.ogrid[key], numpy.ogrid[key]
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, e in zip(got, want):
            assert_eq(g, e)
    else:
        assert_eq(got, want)


def test_fromfunction_logspace_geomspace():
    assert_eq(sp.fromfunction(lambda i, j: i * 10 + j, (3, 4)), numpy.fromfunction(lambda i, j: i * 10 + j, (3, 4)))
    f = lambda i, j: i == j  # noqa: E731
    assert_eq(sp.fromfunction(f, (3, 4), dtype=int), numpy.fromfunction(f, (3, 4), dtype=int), exact=True)
    for args in [(0, 2), (1, 3, 7), (2, 0, 5, False), (1, 2, 4, True, 2.0), (0, 1, 0), (0, 3, 4, True, 10.0, int)]:
        assert_eq(sp.logspace(*args), numpy.logspace(*args))
    for args in [(1, 1000), (1, 256, 9), (-1, -1000, 4), (1j, 1000j, 4), (2, 50, 5, False), (1, 100, 5, True, int)]:
        assert_eq(sp.geomspace(*args), numpy.geomspace(*args))
    with pytest.raises(ValueError):
        sp.geomspace(0, 10)
    with pytest.raises(NotImplementedError):
        sp.logspace([0, 1], 2)


def test_layout_only_conversions():
    a = ref((4, 5))
    for f in (sp.asfortranarray, sp.ascontiguousarray, sp.asarray_chkfinite, lambda v: sp.require(v, None, "FO")):
        assert_eq(f(a), a, exact=True)
        x = sp.array(a)
        assert_eq(f(x), a, exact=True)
    x = sp.array(a)
    assert sp.asfortranarray(x) is x
    assert sp.require(x[::2], requirements=["O"])._map.is_identity
    assert_eq(sp.require(x, numpy.float32), a.astype(numpy.float32), exact=True)
    with pytest.raises(ValueError):
        sp.require(x, requirements="CF")
    with pytest.raises(KeyError):
        sp.require(x, requirements="Z")
    bad = a.copy()
    bad[2, 3] = numpy.inf
    with pytest.raises(ValueError, match="infs or NaNs"):
        sp.asarray_chkfinite(sp.array(bad))
    with pytest.raises(ValueError, match="infs or NaNs"):
        sp.asarray_chkfinite(bad)


def test_copyto_casting_and_where():
    a = ref((5, 6))
    dst, d = sp.zeros((5, 6)), numpy.zeros((5, 6))
    m = ref((5, 6), numpy.bool_)
    numpy.copyto(dst, sp.array(a), where=sp.array(m))
    numpy.copyto(d, a, where=m)
    assert_eq(dst, d, exact=True)
    bd, b = sp.zeros(6, bool), numpy.zeros(6, bool)
    numpy.copyto(bd, True, where=sp.array(m[0]))
    numpy.copyto(b, True, where=m[0])
    assert_eq(bd, b, exact=True)
    with pytest.raises(TypeError):
        numpy.copyto(sp.zeros(3, numpy.int32), sp.array(ref((3,))), casting="safe")
    for dt, src, casting in [
        (numpy.int32, 1.5, "same_kind"),
        (numpy.int32, 3, "safe"),
        (numpy.int8, 300, "unsafe"),
        (numpy.int32, numpy.float64(1.5), "same_kind"),
        (numpy.float32, numpy.arange(3.0), "safe"),
        (numpy.int32, [1.5, 2, 3], "same_kind"),
        (numpy.int8, 3, "no"),
        (numpy.uint8, True, "safe"),
    ]:
        want = numpy.zeros(3, dt)
        try:
            numpy.copyto(want, src, casting=casting)
        except Exception as e:
            with pytest.raises(type(e)):
                numpy.copyto(sp.zeros(3, dt), src, casting=casting)
            continue
        got = sp.zeros(3, dt)
        numpy.copyto(got, src, casting=casting)
        assert_eq(got, want, exact=True)


# ---------------------------------------------------------- ndarray methods
VIEWS = [
    lambda t: t,
    lambda t: t.T,
    lambda t: t[::-1, :, ::2],
    lambda t: t.transpose(1, 0, 2),
    lambda t: t[:, 1],
    lambda t: t[:, :1],
]


@pytest.mark.parametrize("view", range(len(VIEWS)))
def test_ravel_flatten_orders_match_numpy(view):
    a = ref((3, 4, 5))
    x, w = VIEWS[view](sp.array(a)), VIEWS[view](a)
    for order in "CFAK":
        assert_eq(x.ravel(order), w.ravel(order), exact=True)
        assert_eq(numpy.ravel(x, order), numpy.ravel(w, order), exact=True)
        f = x.flatten(order)
        assert_eq(f, w.flatten(order), exact=True)
        f[...] = 0
    assert_eq(x, w, exact=True)  # flatten copies
    assert_eq(numpy.reshape(x, (-1, 3), order="A"), numpy.reshape(w, (-1, 3), order="A"), exact=True)
    with pytest.raises(ValueError):
        x.ravel("Q")


@pytest.mark.parametrize("new_shape", [(2, 3), (7, 11), (0,), (60,), (4, 5, 3)], ids=str)
def test_ndarray_resize_in_place(new_shape):
    a = ref((3, 4, 5))
    x = sp.array(a)
    x.resize(new_shape)
    a.resize(new_shape, refcheck=False)
    assert_eq(x, a, exact=True)
    y = sp.array(ref((3, 4)))
    y.resize(*new_shape)
    b = ref((3, 4))
    b.resize(*new_shape, refcheck=False)
    assert_eq(y, b, exact=True)


def test_ndarray_resize_refuses_views():
    x = sp.array(ref((3, 4)))
    v = x[0]
    with pytest.raises(ValueError, match="referenced"):
        x.resize(5)
    with pytest.raises(ValueError, match="own its data"):
        v.resize(2)
    x.resize(5, refcheck=False)
    assert x.shape == (5,)
    with pytest.raises(ValueError):
        sp.zeros(3).resize(-1)


def test_ndarray_view_byteswap_fields():
    i = numpy.arange(24, dtype=numpy.int32).reshape(4, 6)
    x = sp.array(i)
    assert_eq(x.view(numpy.float32), i.view(numpy.float32), exact=True)
    assert_eq(x[::-1].view(numpy.uint32), i[::-1].view(numpy.uint32), exact=True)
    v = x.view()
    v[0, 0] = 5
    i[0, 0] = 5
    assert int(x[0, 0]) == 5
    col = sp.from_local(numpy.arange(8, dtype=numpy.int32).reshape(2, 4) + 8 * sp.array(0).comm.Get_rank())
    whole = numpy.asarray(col)
    assert_eq(col.view(numpy.int16), whole.view(numpy.int16), exact=True)
    assert_eq(col.view(numpy.int64), whole.view(numpy.int64), exact=True)
    rows = sp.array(numpy.arange(60, dtype=numpy.int16).reshape(60, 1) * [1, 2, 3, 4])
    if rows._layout.grid_axis_of(1) is None or rows._layout.dims[rows._layout.grid_axis_of(1)] == 1:
        assert_eq(rows.view(numpy.int64), numpy.asarray(rows).view(numpy.int64), exact=True)
        assert_eq(rows.view(numpy.int8), numpy.asarray(rows).view(numpy.int8), exact=True)
    with pytest.raises(NotImplementedError, match="itemsize"):
        sp.array(numpy.zeros((3, 40), numpy.int32)).T.view(numpy.int64)
    with pytest.raises(NotImplementedError):
        x.view(type=numpy.ndarray)
    assert_eq(x.byteswap(), i.byteswap(), exact=True)
    y = sp.array(i)
    y.byteswap(inplace=True)
    assert_eq(y, i.byteswap(), exact=True)
    c = numpy.arange(6, dtype=complex) * (1 + 2j)
    xc = sp.array(c)
    assert_eq(xc.getfield(numpy.float64, 8), c.getfield(numpy.float64, 8), exact=True)
    xc.setfield(sp.array(numpy.arange(6.0)), numpy.float64, 8)
    c.setfield(numpy.arange(6.0), numpy.float64, 8)
    assert_eq(xc, c, exact=True)


def test_ndarray_gathering_methods(tmp_path_factory):
    a = ref((5, 6), numpy.int64)
    x = sp.array(a)
    assert x.tobytes() == a.tobytes()
    assert x.T.tobytes("F") == a.T.tobytes("F")
    assert (pickle.loads(x.dumps()) == a).all()
    assert x.tolist() == a.tolist()
    assert x.to_device("cpu") is x or x._st.be.name != "numpy"
    with pytest.raises(ValueError):
        x.to_device("tpu")
    folder = x.comm.bcast(str(tmp_path_factory.mktemp("dump")) if x.comm.Get_rank() == 0 else None)
    x.dump(folder + "/a.pkl")
    x.T.tofile(folder + "/a.bin")
    x.tofile(folder + "/a.txt", sep=",")
    x.comm.Barrier()
    with open(folder + "/a.pkl", "rb") as f:
        assert (pickle.load(f) == a).all()
    assert (numpy.fromfile(folder + "/a.bin", numpy.int64) == a.T.ravel()).all()
    assert (numpy.fromfile(folder + "/a.txt", numpy.int64, sep=",") == a.ravel()).all()


# -------------------------------------- existing movers on awkward inputs
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_existing_movers_on_views_and_empty_arrays(shape):
    for x, a in _inputs(shape, numpy.int64):
        nd = a.ndim
        assert_eq(numpy.roll(x, 3), numpy.roll(a, 3), exact=True)
        assert_eq(numpy.roll(x, -2, axis=nd - 1), numpy.roll(a, -2, axis=nd - 1), exact=True)
        assert_eq(numpy.concatenate([x, x[::-1]], axis=0), numpy.concatenate([a, a[::-1]], axis=0), exact=True)
        assert_eq(numpy.stack([x, x], axis=-1), numpy.stack([a, a], axis=-1), exact=True)
        for g, e in zip(numpy.array_split(x, 3, axis=0), numpy.array_split(a, 3, axis=0)):
            assert_eq(g, e, exact=True)
        for o in "CF":
            assert_eq(x.reshape(-1, order=o), a.reshape(-1, order=o), exact=True)
        if nd >= 2:
            assert_eq(numpy.rot90(x, 3), numpy.rot90(a, 3), exact=True)
            assert_eq(numpy.tril(x, -1), numpy.tril(a, -1), exact=True)
        for like in (numpy.zeros_like, numpy.ones_like, numpy.empty_like):
            got, want = like(x), like(a)
            assert got.shape == want.shape and got.dtype == want.dtype
            got = like(x, dtype=numpy.float32, shape=(2, 3))
            assert got.shape == (2, 3) and got.dtype == numpy.float32
        assert_eq(numpy.full_like(x, 7), numpy.full_like(a, 7), exact=True)


@pytest.mark.parametrize("shape", [(5, 5), (7, 3), (3, 7), (4, 4, 4), (0, 0)], ids=str)
@pytest.mark.parametrize("val", [9, [1, 2], numpy.arange(5.0)], ids=str)
@pytest.mark.parametrize("wrap", [False, True])
def test_fill_diagonal_and_diag_indices(shape, val, wrap):
    for view in (lambda t: t, lambda t: t[::-1], lambda t: t.T):
        x, a = view(sp.array(ref(shape))), view(ref(shape))
        numpy.fill_diagonal(x, val, wrap=wrap)
        numpy.fill_diagonal(a, val, wrap=wrap)
        assert_eq(x, a, exact=True)
    if len(set(shape)) == 1:
        for g, e in zip(numpy.diag_indices_from(sp.array(ref(shape))), numpy.diag_indices_from(ref(shape))):
            assert_eq(g, e, exact=True)
        for g, e in zip(sp.diag_indices(shape[0], len(shape)), numpy.diag_indices(shape[0], len(shape))):
            assert_eq(g, e, exact=True)
    else:
        _same_error(numpy.diag_indices_from, sp.array(ref(shape)), ref(shape))
    _same_error(lambda t: numpy.fill_diagonal(t, 1), sp.array(ref((3,))), ref((3,)))


@pytest.mark.parametrize(
    "call",
    [
        lambda t: numpy.repeat(t, 3),
        lambda t: numpy.repeat(t, 2, axis=0),
        lambda t: numpy.pad(t, 2),
        lambda t: numpy.pad(t, 2, "edge"),
        lambda t: numpy.tile(t, (2, 3)),
        lambda t: numpy.append(t, 1.0),
        lambda t: numpy.broadcast_to(t, (3, 2)),
        lambda t: numpy.resize(t, (2, 2)),
        lambda t: numpy.block([[t]]),
        lambda t: t.ravel("K"),
        lambda t: t.flatten("F"),
        lambda t: numpy.diag(t),
        lambda t: numpy.unstack(t),
    ],
)
def test_zero_d_inputs(call):
    a = numpy.array(2.5)
    try:
        want = call(a)
    except Exception as e:
        with pytest.raises(type(e)):
            call(sp.array(a))
        return
    assert_eq(call(sp.array(a)), want, exact=True)
