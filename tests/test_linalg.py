"""Linear algebra against NumPy at any rank count: products, norms, decompositions, solvers.

Each case runs with the default layouts and with every array split.

Run serially and under ``mpiexec -n 2/3/4 python -m pytest tests/test_linalg.py``.
Products and reductions combine partial sums in another order than NumPy, so
inexact results compare to rounding.  TSQR (``qr``, ``svd`` of one matrix)
gives factors that differ from LAPACK's by signs, so those tests compare
``Q @ R``, ``|R|``, orthogonality and singular values.
"""

import re
import warnings

import numpy
import pytest
from helpers import assert_eq, ref

import spmdarray as sp
from spmdarray.settings import config

LinAlgError = numpy.linalg.LinAlgError


@pytest.fixture(autouse=True, params=[None, 0], ids=["default", "split"])
def _layouts(request):
    """Every case twice: small arrays replicated (the default: NumPy's routine on each rank's
    copy, the whole-array lane) and every array split (``replicate_below=0``: the
    distributed algorithms, batch-parallel stacks, TSQR)."""
    if request.param is None:
        yield
    else:
        with config.set(replicate_below=request.param):
            yield


def _tol(dtype):
    dt = numpy.dtype(dtype)
    if dt.kind in "iub":
        return {"exact": True}
    if dt in (numpy.float32, numpy.complex64):
        return {"rtol": 2e-4, "atol": 2e-4}
    return {"rtol": 1e-9, "atol": 1e-10}


def _close(got, expected, dtype=None, check_dtype=True):
    """``got`` equals NumPy's ``expected`` to the tolerance of the result's dtype (integers: exactly)."""
    assert_eq(got, expected, check_dtype=check_dtype, **_tol(numpy.asarray(expected).dtype))


# ================================================================ products
DOT_SHAPES = [
    ((3, 4, 5), (5, 2)),
    ((3, 4, 5), (2, 5, 3)),
    ((2, 3), (4, 3, 2)),
    ((2, 3, 4), (4,)),
    ((4,), (3, 4, 2)),
    ((7,), (7,)),
    ((5, 6), (6,)),
]


@pytest.mark.parametrize("sa,sb", DOT_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [numpy.int32, numpy.float64, numpy.complex128])
def test_dot_nd(sa, sb, dtype):
    a, b = ref(sa, dtype), ref(sb, dtype, seed=1)
    _close(numpy.dot(sp.array(a), sp.array(b)), numpy.dot(a, b), dtype)
    _close(sp.array(a).dot(sp.array(b)), numpy.dot(a, b), dtype)


def test_dot_errors_and_out():
    a, b = ref((2, 3, 4)), ref((5, 6))
    with pytest.raises(ValueError, match="not aligned"):
        numpy.dot(sp.array(a), sp.array(b))
    b = ref((3, 4, 2))
    out = sp.empty((2, 3, 3, 2))
    res = numpy.dot(sp.array(a), sp.array(b), out=out)
    assert res is out
    _close(out, numpy.dot(a, b))


MATMUL_SHAPES = [
    ((3, 4, 5), (5, 2)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((3, 2, 4), (3, 4, 2)),
    ((4,), (3, 4, 2)),
    ((3, 2, 4), (4,)),
    ((1, 4, 3), (6, 3, 2)),
    ((0, 3, 4), (4, 2)),
    ((2, 3, 0), (2, 0, 4)),
]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64, numpy.complex128, numpy.int64])
def test_matmul_batched(sa, sb, dtype):
    a, b = ref(sa, dtype), ref(sb, dtype, seed=1)
    x, y = sp.array(a), sp.array(b)
    _close(x @ y, a @ b, dtype)
    _close(numpy.matmul(x, y), numpy.matmul(a, b), dtype)
    _close(numpy.linalg.matmul(x, y), numpy.linalg.matmul(a, b), dtype)


def test_matmul_batched_summa_path():
    # few large products: each is a SUMMA over all ranks in turn
    old = sp.config.linalg_max_elements
    sp.config.linalg_max_elements = 10
    try:
        a, b = ref((2, 9, 7)), ref((7, 5), seed=1)
        _close(sp.array(a) @ sp.array(b), a @ b)
    finally:
        sp.config.linalg_max_elements = old
    a, b = ref((1, 300, 260)), ref((260, 3), seed=1)  # one product above 2**16 elements
    _close(sp.array(a) @ sp.array(b), a @ b)


def test_matmul_batched_errors_and_dtype():
    with pytest.raises(ValueError):
        sp.ones((2, 3, 4)) @ sp.ones((2, 5, 3))
    with pytest.raises(ValueError):
        sp.ones((2, 3, 4)) @ sp.ones((3, 4, 3))
    a, b = ref((2, 3, 4), numpy.int32), ref((2, 4, 3), numpy.int32, seed=1)
    _close(numpy.matmul(sp.array(a), sp.array(b), dtype=numpy.float64), numpy.matmul(a, b, dtype=numpy.float64))


def test_negative_step_views():
    a, b = ref((6, 4, 5)), ref((5, 7), seed=1)
    x, y = sp.array(a)[::-2, ::-1], sp.array(b)[:, ::-2]
    _close(x @ y, a[::-2, ::-1] @ b[:, ::-2])
    _close(numpy.tensordot(x, y, 1), numpy.tensordot(a[::-2, ::-1], b[:, ::-2], 1))
    _close(numpy.einsum("ijk,kl->li", x, y), numpy.einsum("ijk,kl->li", a[::-2, ::-1], b[:, ::-2]))
    _close(numpy.linalg.norm(x, axis=(0, 2), ord=2), numpy.linalg.norm(a[::-2, ::-1], axis=(0, 2), ord=2))
    s = ref((6, 6))
    _close(numpy.linalg.inv(sp.array(s)[::-1, ::-1]), numpy.linalg.inv(s[::-1, ::-1]))
    t = ref((37, 5))
    _close(numpy.linalg.svdvals(sp.array(t)[::-1]), numpy.linalg.svdvals(t[::-1]))


@pytest.mark.parametrize("dtype", [bool, numpy.int32, numpy.float32, numpy.complex128])
def test_vdot_inner_outer(dtype):
    a, b = ref((3, 4), dtype), ref((3, 4), dtype, seed=1)
    x, y = sp.array(a), sp.array(b)
    _close(numpy.vdot(x, y), numpy.vdot(a, b), dtype)
    _close(numpy.inner(x, y), numpy.inner(a, b), dtype)
    _close(numpy.inner(x, y[0]), numpy.inner(a, b[0]), dtype)
    _close(numpy.outer(x, y[:, ::-1]), numpy.outer(a, b[:, ::-1]), dtype)
    _close(numpy.linalg.outer(x[0], y[1]), numpy.linalg.outer(a[0], b[1]), dtype)
    _close(numpy.inner(x, 2), numpy.inner(a, 2), dtype, check_dtype=False)


def test_vdot_inner_outer_errors():
    with pytest.raises(ValueError):
        numpy.vdot(sp.ones(3), sp.ones(4))
    with pytest.raises(ValueError):
        numpy.inner(sp.ones((2, 3)), sp.ones((2, 4)))
    with pytest.raises(ValueError):
        numpy.linalg.outer(sp.ones((2, 3)), sp.ones(3))
    out = sp.empty((3, 4))
    assert numpy.outer(sp.array(ref(3)), sp.array(ref(4)), out=out) is out
    _close(out, numpy.outer(ref(3), ref(4)))


TENSORDOT = [
    ((3, 4, 5), (4, 5, 2), 2),
    ((3, 4, 5), (5, 2), 1),
    ((3, 4), (2, 5), 0),
    ((3, 4, 5), (4, 3, 2), ([0, 1], [1, 0])),
    ((3, 4, 5), (5, 3), ([-1, 0], [0, -1])),
    ((7,), (7,), 1),
    ((0, 4), (4, 3), 1),
]


@pytest.mark.parametrize("sa,sb,axes", TENSORDOT, ids=str)
def test_tensordot(sa, sb, axes):
    a, b = ref(sa), ref(sb, seed=1)
    _close(numpy.tensordot(sp.array(a), sp.array(b), axes), numpy.tensordot(a, b, axes))
    _close(numpy.linalg.tensordot(sp.array(a), sp.array(b), axes=axes), numpy.linalg.tensordot(a, b, axes=axes))


def test_tensordot_mismatch():
    with pytest.raises(ValueError, match="shape-mismatch"):
        numpy.tensordot(sp.ones((3, 4)), sp.ones((5, 4)), 1)


@pytest.mark.parametrize(
    "sa,sb", [((3,), (4,)), ((2, 3), (4, 5)), ((2, 3), (4,)), ((3,), (2, 2)), ((2, 1, 3), (3, 2)), ((0, 2), (2, 3))]
)
@pytest.mark.parametrize("dtype", [numpy.int64, numpy.float64, numpy.complex128])
def test_kron(sa, sb, dtype):
    a, b = ref(sa, dtype), ref(sb, dtype, seed=1)
    _close(numpy.kron(sp.array(a), sp.array(b)), numpy.kron(a, b), dtype)


@pytest.mark.parametrize(
    "sa,sb,kw",
    [
        ((4, 3), (4, 3), {}),
        ((5, 3), (3,), {}),
        ((3, 4), (4, 3), {"axisa": 0}),
        ((3, 4), (3, 4), {"axisa": 0, "axisb": 0, "axisc": 0}),
        ((2, 3, 5), (2, 3, 5), {"axis": 1}),
        ((4, 2), (4, 3), {}),
        ((4, 3), (4, 2), {"axisc": 0}),
        ((4, 2), (4, 2), {}),
        ((3,), (3,), {}),  # single vectors: their components are scalars
        ((2,), (3,), {}),
        ((3,), (2,), {}),
        ((2,), (2,), {}),
        ((1, 3), (3,), {}),
    ],
    ids=str,
)
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_cross(sa, sb, kw):
    a, b = ref(sa), ref(sb, seed=1)
    try:
        expected = numpy.cross(a, b, **kw)
    except ValueError as e:  # 2-vectors from NumPy 2.5 on: NumPy's error and message
        with pytest.raises(ValueError, match=re.escape(str(e))):
            numpy.cross(sp.array(a), sp.array(b), **kw)
        return
    _close(numpy.cross(sp.array(a), sp.array(b), **kw), expected)


def test_cross_errors_and_linalg_cross():
    with pytest.raises(ValueError) as expected:
        numpy.cross(numpy.ones((3, 4)), numpy.ones((3, 4)))
    with pytest.raises(ValueError, match=re.escape(str(expected.value))):  # NumPy's message, whatever its version
        numpy.cross(sp.ones((3, 4)), sp.ones((3, 4)))
    with pytest.raises(ValueError):
        numpy.linalg.cross(sp.ones((3, 2)), sp.ones((3, 2)))
    a, b = ref((5, 3)), ref((5, 3), seed=1)
    _close(numpy.linalg.cross(sp.array(a), sp.array(b)), numpy.linalg.cross(a, b))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            numpy.cross(numpy.ones((3, 2)), numpy.ones((3, 2)))
            raises = False
        except ValueError:  # NumPy 2.5 on: 2-vectors raise
            raises = True
    if raises:
        with pytest.raises(ValueError):
            numpy.cross(sp.ones((3, 2)), sp.ones((3, 2)))
    else:  # deprecated in NumPy 2.0
        with pytest.warns(DeprecationWarning):
            numpy.cross(sp.ones((3, 2)), sp.ones((3, 2)))


EINSUM = [
    ("ij,jk->ik", [(4, 5), (5, 3)]),
    ("ij,jk", [(4, 5), (5, 3)]),
    ("ii", [(5, 5)]),
    ("ii->i", [(5, 5)]),
    ("iji->j", [(3, 4, 3)]),
    ("ijk->kji", [(2, 3, 4)]),
    ("ij->", [(4, 5)]),
    ("i,i", [(6,), (6,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("bij,bjk->bik", [(3, 2, 4), (3, 4, 5)]),
    ("bij,bjk->kb", [(3, 2, 4), (3, 4, 5)]),
    ("...j,jk", [(2, 3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("i...->...", [(3, 4, 2)]),
    ("ijk,kl,li->j", [(2, 3, 4), (4, 5), (5, 2)]),
    ("ij,ij,ij->i", [(3, 4), (3, 4), (3, 4)]),
    ("ij,j->i", [(3, 1), (4,)]),
    ("Aa,aB->AB", [(2, 3), (3, 2)]),
    ("ij,jk->ik", [(0, 5), (5, 3)]),
    ("i->", [(0,)]),
    ("", [()]),
    (",i->i", [(), (4,)]),
    ("i,i,i->i", [(5,), (5,), (5,)]),
    ("iij->j", [(3, 3, 2)]),
    ("i...i", [(3, 2, 3)]),
    ("abc,cba,b->a", [(2, 3, 4), (4, 3, 2), (3,)]),
    ("ik,kj,ij->ij", [(3, 4), (4, 5), (3, 5)]),
]


@pytest.mark.parametrize("sub,shapes", EINSUM, ids=lambda v: str(v))
@pytest.mark.parametrize("optimize", [False, "greedy"])
def test_einsum(sub, shapes, optimize):
    arrs = [ref(s, seed=i) for i, s in enumerate(shapes)]
    got = numpy.einsum(sub, *[sp.array(a) for a in arrs], optimize=optimize)
    _close(got, numpy.einsum(sub, *arrs, optimize=optimize))


@pytest.mark.parametrize("dtype", [bool, numpy.int32, numpy.float32, numpy.complex128])
def test_einsum_dtypes(dtype):
    a, b = ref((4, 5), dtype), ref((5, 3), dtype, seed=1)
    _close(numpy.einsum("ij,jk->ik", sp.array(a), sp.array(b)), numpy.einsum("ij,jk->ik", a, b), dtype)
    _close(numpy.einsum("ij->j", sp.array(a)), numpy.einsum("ij->j", a), dtype)
    if dtype is numpy.int32:
        exp = numpy.einsum("ij->i", a, dtype=numpy.float64)
        _close(numpy.einsum("ij->i", sp.array(a), dtype=numpy.float64), exp)


def test_einsum_interleaved_out_and_path():
    a, b = ref((4, 5)), ref((5, 3), seed=1)
    x, y = sp.array(a), sp.array(b)
    _close(numpy.einsum(x, [0, 1], y, [1, 2], [2, 0]), numpy.einsum(a, [0, 1], b, [1, 2], [2, 0]))
    _close(numpy.einsum(x, [Ellipsis, 1], y, [1, 2]), numpy.einsum(a, [Ellipsis, 1], b, [1, 2]))
    out = sp.empty((4, 3))
    assert numpy.einsum("ij,jk->ik", x, y, out=out) is out
    _close(out, a @ b)
    c = ref((3, 6), seed=2)
    got = numpy.einsum_path("ij,jk,kl->il", x, y, sp.array(c), optimize="optimal")
    exp = numpy.einsum_path("ij,jk,kl->il", a, b, c, optimize="optimal")
    assert got[0] == exp[0]
    assert got[1] == exp[1]


@pytest.mark.parametrize(
    "sub,shapes",
    [("ij,jk->ik", [(4, 5), (6, 3)]), ("ij->k", [(2, 3)]), ("ij,j", [(2, 3)]), ("ijk", [(2, 3)]), ("i->ii", [(3,)])],
    ids=str,
)
def test_einsum_errors(sub, shapes):
    with pytest.raises(ValueError):
        numpy.einsum(sub, *[ref(s) for s in shapes])  # NumPy agrees it is an error
    with pytest.raises(ValueError):
        numpy.einsum(sub, *[sp.array(ref(s)) for s in shapes])


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.complex128, numpy.int32])
def test_vecdot_matvec_vecmat(dtype):
    a, v = ref((3, 4, 5), dtype), ref((5,), dtype, seed=1)
    w = ref((4,), dtype, seed=2)
    x, y, z = sp.array(a), sp.array(v), sp.array(w)
    _close(numpy.vecdot(x, x), numpy.vecdot(a, a), dtype)
    _close(numpy.vecdot(x, y), numpy.vecdot(a, v), dtype)
    _close(numpy.linalg.vecdot(x, x, axis=1), numpy.linalg.vecdot(a, a, axis=1), dtype)
    _close(numpy.vecdot(x, x, axis=0), numpy.vecdot(a, a, axis=0), dtype)
    _close(numpy.matvec(x, y), numpy.matvec(a, v), dtype)
    _close(numpy.vecmat(z, x), numpy.vecmat(w, a), dtype)
    with pytest.raises(ValueError):
        numpy.matvec(x, z)
    with pytest.raises(ValueError):
        numpy.vecdot(x, z)


def test_multi_dot():
    a, b, c, d = ref((4, 6)), ref((6, 2), seed=1), ref((2, 7), seed=2), ref((7, 3), seed=3)
    x = [sp.array(m) for m in (a, b, c, d)]
    _close(numpy.linalg.multi_dot(x), numpy.linalg.multi_dot([a, b, c, d]))
    _close(numpy.linalg.multi_dot(x[:2]), a @ b)
    v, w = ref(4, seed=4), ref(3, seed=5)
    _close(numpy.linalg.multi_dot([sp.array(v)] + x + [sp.array(w)]), numpy.linalg.multi_dot([v, a, b, c, d, w]))
    _close(numpy.linalg.multi_dot([sp.array(v)] + x[:3]), numpy.linalg.multi_dot([v, a, b, c]))


@pytest.mark.parametrize("shape", [(5, 5), (4, 6), (3, 4, 5), (6, 3)], ids=str)
@pytest.mark.parametrize("offset", [0, 1, -2])
@pytest.mark.parametrize("dtype", [bool, numpy.int32, numpy.float64])
def test_linalg_diagonal_trace_transpose(shape, offset, dtype):
    a = ref(shape, dtype)
    x = sp.array(a)
    _close(numpy.linalg.diagonal(x, offset=offset), numpy.linalg.diagonal(a, offset=offset), dtype)
    if dtype is not bool:
        _close(numpy.linalg.trace(x, offset=offset), numpy.linalg.trace(a, offset=offset), dtype)
    _close(numpy.linalg.matrix_transpose(x), numpy.linalg.matrix_transpose(a), dtype)


# =================================================================== norms
MATRIX_ORDS = [None, "fro", "nuc", numpy.inf, -numpy.inf, 1, -1, 2, -2]
VECTOR_ORDS = [None, numpy.inf, -numpy.inf, 0, 1, -1, 2, 3, 0.5]


MATRIX_NORM_CASES = [(o, d) for o in MATRIX_ORDS for d in (numpy.float64, numpy.complex128)] + [
    (o, numpy.float32) for o in (None, 1, 2, "nuc")
]


@pytest.mark.parametrize("ord,dtype", MATRIX_NORM_CASES, ids=str)
@pytest.mark.parametrize("shape", [(37, 5), (6, 6), (5, 9), (3, 4, 4)], ids=str)
def test_matrix_norms(ord, shape, dtype):
    a = ref(shape, dtype)
    x = sp.array(a)
    axis = None if len(shape) == 2 else (1, 2)
    _close(numpy.linalg.norm(x, ord, axis), numpy.linalg.norm(a, ord, axis), dtype)
    _close(
        numpy.linalg.norm(x, ord, (-1, -2), keepdims=True), numpy.linalg.norm(a, ord, (-1, -2), keepdims=True), dtype
    )
    mo = "fro" if ord is None else ord
    _close(numpy.linalg.matrix_norm(x, ord=mo), numpy.linalg.matrix_norm(a, ord=mo), dtype)


@pytest.mark.parametrize("ord", VECTOR_ORDS, ids=str)
@pytest.mark.parametrize("dtype", [numpy.int64, numpy.float32, numpy.float64, numpy.complex128])
def test_vector_norms(ord, dtype):
    a = ref((3, 4, 5), dtype)
    x = sp.array(a)
    for axis in (0, 1, -1):
        _close(numpy.linalg.norm(x, ord, axis), numpy.linalg.norm(a, ord, axis), dtype, check_dtype=True)
    _close(numpy.linalg.norm(x[0, 0], ord), numpy.linalg.norm(a[0, 0], ord), dtype)
    _close(numpy.linalg.norm(x, ord, 1, keepdims=True), numpy.linalg.norm(a, ord, 1, keepdims=True), dtype)
    vo = 2 if ord is None else ord
    for axis in (None, 1, (0, 2)):
        exp = numpy.linalg.vector_norm(a, ord=vo, axis=axis)
        _close(numpy.linalg.vector_norm(x, ord=vo, axis=axis), exp, dtype)
        exp = numpy.linalg.vector_norm(a, ord=vo, axis=axis, keepdims=True)
        _close(numpy.linalg.vector_norm(x, ord=vo, axis=axis, keepdims=True), exp, dtype)


def test_norm_defaults_and_errors():
    a = ref((3, 4, 5))
    x = sp.array(a)
    _close(numpy.linalg.norm(x), numpy.linalg.norm(a))
    _close(numpy.linalg.norm(x, keepdims=True), numpy.linalg.norm(a, keepdims=True))
    _close(numpy.linalg.norm(sp.array(ref((0, 3)))), numpy.linalg.norm(ref((0, 3))))
    with pytest.raises(ValueError):
        numpy.linalg.norm(x, 2)
    with pytest.raises(ValueError):
        numpy.linalg.norm(x, "fro", axis=1)
    with pytest.raises(ValueError):
        numpy.linalg.norm(x, 3, axis=(0, 1))
    with pytest.raises(ValueError):
        numpy.linalg.norm(x, axis=(1, 1))
    with pytest.raises(TypeError):
        numpy.linalg.norm(x, axis="a")


# ========================================================= decompositions
SHAPES = [(37, 5), (6, 6), (5, 9), (3, 4, 4)]
FLOATS = [numpy.float32, numpy.float64, numpy.complex128]


def _np(x):
    return numpy.asarray(x)


def _mm(a, b):
    return numpy.matmul(a, b)


def _eye_like(q):
    k = q.shape[-1]
    return numpy.broadcast_to(numpy.eye(k), q.shape[:-2] + (k, k))


def _h(a):
    return numpy.conj(numpy.swapaxes(a, -1, -2))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr(shape, dtype, mode):
    a = ref(shape, dtype)
    q, r = numpy.linalg.qr(sp.array(a), mode=mode)
    q, r = _np(q), _np(r)
    eq, er = numpy.linalg.qr(a, mode=mode)
    assert q.shape == eq.shape and r.shape == er.shape and q.dtype == eq.dtype and r.dtype == er.dtype
    tol = _tol(dtype)
    numpy.testing.assert_allclose(_mm(q, r), a, rtol=tol["rtol"], atol=10 * tol["atol"])
    numpy.testing.assert_allclose(_mm(_h(q), q), _eye_like(q), atol=10 * tol["atol"])
    numpy.testing.assert_allclose(numpy.abs(r), numpy.abs(er), rtol=tol["rtol"], atol=10 * tol["atol"])
    assert numpy.allclose(numpy.tril(r, -1), 0)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_qr_r_and_raw(shape):
    a = ref(shape)
    r = numpy.linalg.qr(sp.array(a), mode="r")
    numpy.testing.assert_allclose(numpy.abs(_np(r)), numpy.abs(numpy.linalg.qr(a, mode="r")), rtol=1e-9, atol=1e-10)
    h, tau = numpy.linalg.qr(sp.array(a), mode="raw")
    eh, etau = numpy.linalg.qr(a, mode="raw")
    _close(h, eh)
    _close(tau, etau)
    with pytest.raises(ValueError):
        numpy.linalg.qr(sp.array(a), mode="bad")


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("full", [True, False])
def test_svd(shape, dtype, full):
    a = ref(shape, dtype)
    u, s, vh = (_np(t) for t in numpy.linalg.svd(sp.array(a), full_matrices=full))
    eu, es, evh = numpy.linalg.svd(a, full_matrices=full)
    assert (u.shape, s.shape, vh.shape) == (eu.shape, es.shape, evh.shape)
    assert (u.dtype, s.dtype, vh.dtype) == (eu.dtype, es.dtype, evh.dtype)
    tol = _tol(dtype)
    numpy.testing.assert_allclose(s, es, rtol=tol["rtol"], atol=10 * tol["atol"])
    k = s.shape[-1]
    rec = _mm(u[..., :, :k] * s[..., None, :], vh[..., :k, :])
    numpy.testing.assert_allclose(rec, a, rtol=tol["rtol"], atol=10 * tol["atol"])
    numpy.testing.assert_allclose(_mm(_h(u), u), _eye_like(u), atol=10 * tol["atol"])
    _close(numpy.linalg.svd(sp.array(a), compute_uv=False), numpy.linalg.svd(a, compute_uv=False), dtype)
    _close(numpy.linalg.svdvals(sp.array(a)), numpy.linalg.svdvals(a), dtype)


def test_svd_hermitian():
    a = ref((5, 5))
    a = a + a.T
    _close(numpy.linalg.svd(sp.array(a), hermitian=True, compute_uv=False), numpy.linalg.svd(a, hermitian=True)[1])


def _spd(shape, dtype):
    a = ref(shape, dtype)
    n = shape[-1]
    return (_mm(a, _h(a)) + n * numpy.eye(n)).astype(dtype)


@pytest.mark.parametrize("shape", [(6, 6), (3, 4, 4), (1, 1)], ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
def test_cholesky_eigh(shape, dtype):
    a = _spd(shape, dtype)
    x = sp.array(a)
    _close(numpy.linalg.cholesky(x), numpy.linalg.cholesky(a), dtype)
    _close(numpy.linalg.cholesky(x, upper=True), numpy.linalg.cholesky(a, upper=True), dtype)
    w, v = numpy.linalg.eigh(x)
    ew, ev = numpy.linalg.eigh(a)
    _close(w, ew, dtype)
    v = _np(v)
    tol = _tol(dtype)
    numpy.testing.assert_allclose(_mm(a, v), v * _np(w)[..., None, :], rtol=tol["rtol"], atol=100 * tol["atol"])
    _close(numpy.linalg.eigvalsh(x, UPLO="U"), numpy.linalg.eigvalsh(a, UPLO="U"), dtype)


@pytest.mark.parametrize("shape", [(6, 6), (3, 4, 4)], ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
def test_eig(shape, dtype):
    a = ref(shape, dtype)
    w, v = numpy.linalg.eig(sp.array(a))
    ew, ev = numpy.linalg.eig(a)
    _close(w, ew, dtype)
    _close(v, ev, dtype)
    _close(numpy.linalg.eigvals(sp.array(a)), numpy.linalg.eigvals(a), dtype)


def test_eig_real_eigenvalues_stay_real():
    a = numpy.diag([1.0, 2.0, 3.0]) + numpy.triu(ref((3, 3)), 1)
    _close(numpy.linalg.eigvals(sp.array(a)), numpy.linalg.eigvals(a))
    b = numpy.stack([a, numpy.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])])  # one complex pair in the stack
    _close(numpy.linalg.eigvals(sp.array(b)), numpy.linalg.eigvals(b))


@pytest.mark.parametrize("shape", [(6, 6), (3, 4, 4), (0, 3, 3), (1, 1)], ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
def test_inv_det_slogdet(shape, dtype):
    a = ref(shape, dtype)
    x = sp.array(a)
    _close(numpy.linalg.inv(x), numpy.linalg.inv(a), dtype)
    _close(numpy.linalg.det(x), numpy.linalg.det(a), dtype)
    sign, logdet = numpy.linalg.slogdet(x)
    es, el = numpy.linalg.slogdet(a)
    _close(sign, es, dtype)
    _close(logdet, el, dtype)


def test_det_scalar_types():
    a = ref((5, 5))
    got = numpy.linalg.det(sp.array(a))
    assert isinstance(got, numpy.float64)
    assert got == pytest.approx(numpy.linalg.det(a))
    _close(numpy.linalg.det(sp.array(ref((0, 0)))), numpy.linalg.det(ref((0, 0))))


@pytest.mark.parametrize(
    "sa,sb", [((6, 6), (6,)), ((6, 6), (6, 3)), ((3, 4, 4), (3, 4, 2)), ((3, 4, 4), (4,)), ((2, 1, 4, 4), (3, 4, 1))]
)
@pytest.mark.parametrize("dtype", FLOATS)
def test_solve(sa, sb, dtype):
    a, b = ref(sa, dtype), ref(sb, dtype, seed=1)
    _close(numpy.linalg.solve(sp.array(a), sp.array(b)), numpy.linalg.solve(a, b), dtype)


def test_linalg_errors_on_every_rank():
    with pytest.raises(LinAlgError, match="Singular"):
        numpy.linalg.inv(sp.zeros((4, 4)))
    z = numpy.zeros((3, 4, 4))
    z[:] = numpy.eye(4)
    z[2] = 0  # only one matrix of the stack is singular: one rank fails, all raise
    with pytest.raises(LinAlgError):
        numpy.linalg.inv(sp.array(z))
    with pytest.raises(LinAlgError):
        numpy.linalg.solve(sp.zeros((4, 4)), sp.ones(4))
    with pytest.raises(LinAlgError):
        numpy.linalg.cholesky(sp.array(-numpy.eye(3)))
    with pytest.raises(LinAlgError, match="two-dimensional"):
        numpy.linalg.inv(sp.ones(3))
    with pytest.raises(LinAlgError, match="square"):
        numpy.linalg.det(sp.ones((3, 4)))
    with pytest.raises(LinAlgError):
        numpy.linalg.qr(sp.ones(4))
    with pytest.raises(ValueError):
        numpy.linalg.solve(sp.ones((3, 3)), sp.ones(4))
    with pytest.raises(ValueError):
        numpy.linalg.eigh(sp.ones((3, 3)), UPLO="X")
    with pytest.raises(TypeError):
        numpy.linalg.matrix_power(sp.ones((3, 3)), 1.5)


def test_size_limit_raises_not_implemented():
    old = sp.config.linalg_max_elements
    sp.config.linalg_max_elements = 20
    try:
        with pytest.raises(NotImplementedError, match="linalg_max_elements"):
            numpy.linalg.inv(sp.ones((5, 5)))
        a = ref((37, 4))  # TSQR holds only 4 x 4 matrices whole
        _close(numpy.linalg.svdvals(sp.array(a)), numpy.linalg.svdvals(a))
    finally:
        sp.config.linalg_max_elements = old


@pytest.mark.parametrize("sa,sb", [((37, 5), (37,)), ((37, 5), (37, 2)), ((6, 6), (6,)), ((5, 9), (5, 2))], ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
def test_lstsq(sa, sb, dtype):
    a, b = ref(sa, dtype), ref(sb, dtype, seed=1)
    x, res, rank, s = numpy.linalg.lstsq(sp.array(a), sp.array(b))
    ex, eres, erank, es = numpy.linalg.lstsq(a, b)
    tol = {"rtol": 1e-3, "atol": 1e-3} if dtype is numpy.float32 else {"rtol": 1e-8, "atol": 1e-9}
    assert_eq(x, ex, **tol)
    assert_eq(res, eres, **tol)
    assert rank == erank
    assert_eq(s, es, **tol)


def test_lstsq_rank_deficient_and_errors():
    a = ref((20, 4))
    a[:, 3] = a[:, 0] + a[:, 1]
    b = ref(20, seed=1)
    x, res, rank, s = numpy.linalg.lstsq(sp.array(a), sp.array(b))
    ex, eres, erank, es = numpy.linalg.lstsq(a, b)
    assert rank == erank == 3
    _close(x, ex)
    _close(res, eres)
    with pytest.raises(LinAlgError):
        numpy.linalg.lstsq(sp.ones((3, 3)), sp.ones(4))
    with pytest.raises(LinAlgError):
        numpy.linalg.lstsq(sp.ones(3), sp.ones(3))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_pinv_rank_cond(shape):
    a = ref(shape)
    x = sp.array(a)
    _close(numpy.linalg.pinv(x), numpy.linalg.pinv(a))
    assert_eq(numpy.linalg.matrix_rank(x), numpy.linalg.matrix_rank(a), exact=True)
    low = _mm(a[..., :, :2], a[..., :2, :])
    assert_eq(numpy.linalg.matrix_rank(sp.array(low)), numpy.linalg.matrix_rank(low), exact=True)
    for p in (None, 2, -2) if shape[-1] != shape[-2] else (None, 2, -2, 1, -1, numpy.inf, "fro", "nuc"):
        _close(numpy.linalg.cond(x, p), numpy.linalg.cond(a, p))
    assert numpy.linalg.matrix_rank(sp.array(ref(5))) == numpy.linalg.matrix_rank(ref(5))
    assert numpy.linalg.matrix_rank(sp.zeros(5)) == 0


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -3])
@pytest.mark.parametrize("shape", [(6, 6), (3, 4, 4)], ids=str)
def test_matrix_power(n, shape):
    a = ref(shape) / 2
    _close(numpy.linalg.matrix_power(sp.array(a), n), numpy.linalg.matrix_power(a, n))
    b = ref(shape, numpy.int64) % 3
    if n >= 0:
        _close(numpy.linalg.matrix_power(sp.array(b), n), numpy.linalg.matrix_power(b, n), numpy.int64)


def test_tensorinv_tensorsolve():
    a = numpy.eye(6).reshape(6, 2, 3) + 0.1 * ref((6, 2, 3))
    _close(numpy.linalg.tensorinv(sp.array(a), ind=1), numpy.linalg.tensorinv(a, ind=1))
    a = ref((2, 3, 2, 3)) + numpy.eye(6).reshape(2, 3, 2, 3)
    b = ref((2, 3), seed=1)
    _close(numpy.linalg.tensorsolve(sp.array(a), sp.array(b)), numpy.linalg.tensorsolve(a, b))
    a = ref((2, 3, 3, 2)) + numpy.eye(6).reshape(2, 3, 3, 2)
    b = ref((3, 2), seed=2)
    exp = numpy.linalg.tensorsolve(a, b, axes=(0, 1))
    _close(numpy.linalg.tensorsolve(sp.array(a), sp.array(b), axes=(0, 1)), exp)


@pytest.mark.parametrize(
    "name,shape",
    [
        ("qr", (0, 3)),
        ("qr", (3, 0)),
        ("svd", (3, 0)),
        ("svd", (0, 3)),
        ("svdvals", (2, 0, 3)),
        ("eigh", (0, 0)),
        ("cholesky", (0, 0)),
        ("inv", (0, 0)),
        ("pinv", (0, 3)),
        ("eigvalsh", (0, 2, 2)),
    ],
    ids=str,
)
def test_empty_matrices(name, shape):
    a = ref(shape)
    exp = getattr(numpy.linalg, name)(a)
    got = getattr(numpy.linalg, name)(sp.array(a))
    exp = exp if isinstance(exp, tuple) else (exp,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(exp)
    for g, e in zip(got, exp):
        _close(g, e)


def test_matmul_out_and_mT():
    a, b = ref((3, 2, 4)), ref((3, 4, 5), seed=1)
    out = sp.empty((3, 2, 5))
    assert numpy.matmul(sp.array(a), sp.array(b), out=out) is out
    _close(out, a @ b)
    _close(sp.array(a).mT, a.mT)
    with pytest.raises(ValueError):
        _ = sp.ones(3).mT


def test_svd_of_nan_raises_on_every_rank():
    a = numpy.full((9, 3), numpy.nan)
    with pytest.raises(LinAlgError):
        numpy.linalg.svd(a, full_matrices=False)  # NumPy agrees it is an error
    with pytest.raises(LinAlgError):
        numpy.linalg.svd(sp.array(a), full_matrices=False)
    with pytest.raises(LinAlgError):
        numpy.linalg.svdvals(sp.array(a))
    with pytest.raises(LinAlgError):
        numpy.linalg.eigvalsh(sp.array(numpy.full((2, 3, 3), numpy.nan)))


@pytest.mark.parametrize("shape", [(37, 5), (5, 9), (6, 6)], ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
def test_pinv_rank_cond_options(shape, dtype):
    a = ref(shape, dtype)
    a[..., -1] = a[..., 0]  # rank deficient
    x = sp.array(a)
    _close(numpy.linalg.pinv(x), numpy.linalg.pinv(a))
    _close(numpy.linalg.pinv(x, rcond=1e-3), numpy.linalg.pinv(a, rcond=1e-3))
    _close(numpy.linalg.pinv(x, rtol=None), numpy.linalg.pinv(a, rtol=None))
    assert_eq(numpy.linalg.matrix_rank(x), numpy.linalg.matrix_rank(a), exact=True)
    assert_eq(numpy.linalg.matrix_rank(x, tol=0.5), numpy.linalg.matrix_rank(a, tol=0.5), exact=True)
    assert_eq(numpy.linalg.matrix_rank(x, rtol=0.1), numpy.linalg.matrix_rank(a, rtol=0.1), exact=True)
    with pytest.raises(ValueError):
        numpy.linalg.pinv(x, rcond=1e-3, rtol=1e-3)


def test_cond_singular_and_nan():
    z = numpy.zeros((4, 4))
    with numpy.errstate(all="ignore"):
        assert_eq(numpy.linalg.cond(sp.array(z)), numpy.linalg.cond(z))
        n = numpy.full((4, 3), numpy.nan)
        n[0, 0] = 1
    with pytest.raises(LinAlgError):
        numpy.linalg.cond(sp.array(n))


def test_full_factor_size_limit():
    old = sp.config.linalg_max_elements
    sp.config.linalg_max_elements = 300
    try:
        a = ref((37, 5))
        with pytest.raises(NotImplementedError, match="linalg_max_elements"):
            numpy.linalg.svd(sp.array(a))  # U would be 37 x 37
        with pytest.raises(NotImplementedError, match="linalg_max_elements"):
            numpy.linalg.qr(sp.array(a), mode="complete")
        _close(numpy.linalg.svd(sp.array(a), compute_uv=False), numpy.linalg.svd(a, compute_uv=False))
    finally:
        sp.config.linalg_max_elements = old


@pytest.mark.parametrize("n", [2, 5, 37])
@pytest.mark.parametrize("dtype", FLOATS)
def test_cholesky_distributed(n, dtype):
    a = _spd((n, n), dtype)
    x = sp.array(a)
    _close(numpy.linalg.cholesky(x), numpy.linalg.cholesky(a))
    _close(numpy.linalg.cholesky(x, upper=True), numpy.linalg.cholesky(a, upper=True))
    r = a[::-1, ::-1].copy()
    _close(numpy.linalg.cholesky(sp.array(a)[::-1, ::-1]), numpy.linalg.cholesky(r))


def test_cholesky_not_positive_definite_late():
    a = numpy.eye(9)
    a[8, 8] = -1.0  # the failure shows only in the last block
    with pytest.raises(LinAlgError):
        numpy.linalg.cholesky(sp.array(a))
