"""Matrix products (``@``, ``matmul``, ``dot``) against NumPy, at any rank count.

Run serially and under ``mpiexec -n 2/3/4 python -m pytest tests/test_matmul.py``.
Every test body is SPMD.  SUMMA accumulates panel by panel, so inexact results are
compared with a relative tolerance (1e-12 for float64); integer and boolean products
are exact (modular integer arithmetic does not depend on the order).
"""

import numpy
import pytest
from helpers import assert_eq, ref, world

import spmdarray as sp

SHAPE_PAIRS = [
    ((6, 6), (6, 6)),  # square
    ((7, 5), (5, 3)),  # uneven
    ((50, 3), (3, 40)),  # tall-skinny times short-wide
    ((3, 50), (50, 4)),  # long inner dimension
    ((1, 9), (9, 1)),  # (1,k) @ (k,1)
    ((9, 1), (1, 9)),  # outer product
    ((2, 3), (3, 2)),  # fewer rows than ranks
    ((1, 1), (1, 1)),
    ((3, 2), (2, 1)),
]

FORMS = {
    "operator": lambda p, q: p @ q,
    "numpy.matmul": lambda p, q: numpy.matmul(p, q),
    "spmdarray.matmul": lambda p, q: sp.matmul(p, q),
    "numpy.dot": lambda p, q: numpy.dot(p, q),
    "spmdarray.dot": lambda p, q: sp.dot(p, q),
    "method": lambda p, q: p.dot(q),
}


def _tol(dtype):
    kind = numpy.dtype(dtype).kind
    if kind in "iub":
        return {"exact": True}
    if numpy.dtype(dtype) in (numpy.float32, numpy.complex64):
        return {"rtol": 1e-5, "atol": 1e-5}
    return {"rtol": 1e-12, "atol": 1e-13}


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("sa,sb", SHAPE_PAIRS, ids=str)
def test_2d_times_2d(sa, sb, form):
    a, b = ref(sa), ref(sb, seed=1)
    x, y = sp.array(a), sp.array(b)
    got = FORMS[form](x, y)
    assert isinstance(got, sp.ndarray)
    assert_eq(got, a @ b, **_tol(float))


@pytest.mark.parametrize(
    "dtype,dtype2",
    [
        (numpy.int64, numpy.int64),
        (numpy.int32, numpy.int32),
        (numpy.int8, numpy.int8),
        (numpy.int16, numpy.uint8),
        (numpy.float32, numpy.float32),
        (numpy.float32, numpy.int32),
        (numpy.int64, numpy.float64),
        (numpy.complex128, numpy.float64),
        (numpy.bool_, numpy.bool_),
    ],
    ids=lambda d: numpy.dtype(d).name,
)
def test_dtypes_follow_numpy(dtype, dtype2):
    a, b = ref((7, 5), dtype), ref((5, 6), dtype2, seed=1)
    x, y = sp.array(a), sp.array(b)
    exp = a @ b
    got = x @ y
    assert got.dtype == exp.dtype
    assert_eq(got, exp, **_tol(exp.dtype))
    assert_eq(numpy.dot(x, y), numpy.dot(a, b), **_tol(exp.dtype))
    # matrix-vector with the same dtypes
    v = ref((5,), dtype2, seed=2)
    assert_eq(x @ sp.array(v), a @ v, **_tol(exp.dtype))


def test_int8_products_wrap_like_numpy():
    a = numpy.full((6, 9), 100, numpy.int8)
    b = numpy.full((9, 4), 3, numpy.int8)
    assert_eq(sp.array(a) @ sp.array(b), a @ b)


# ----------------------------------------------------------------- 1-D operands


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("sa,sb", [((7, 5), (5,)), ((1, 4), (4,)), ((2, 9), (9,)), ((40, 3), (3,))], ids=str)
def test_2d_times_1d(sa, sb, form):
    a, v = ref(sa), ref(sb, seed=1)
    got = FORMS[form](sp.array(a), sp.array(v))
    assert_eq(got, a @ v, **_tol(float))


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("sa,sb", [((5,), (5, 7)), ((4,), (4, 1)), ((9,), (9, 2)), ((3,), (3, 40))], ids=str)
def test_1d_times_2d(sa, sb, form):
    v, b = ref(sa), ref(sb, seed=1)
    got = FORMS[form](sp.array(v), sp.array(b))
    assert_eq(got, v @ b, **_tol(float))


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("n", [1, 2, 3, 17])
def test_1d_dot_1d_is_a_numpy_scalar_identical_on_every_rank(n, form):
    from mpi4py import MPI

    v, w = ref((n,)), ref((n,), seed=1)
    got = FORMS[form](sp.array(v), sp.array(w))
    exp = v @ w
    assert isinstance(got, numpy.generic) and type(got) is type(exp)
    vals = MPI.COMM_WORLD.allgather(got.tobytes())
    assert all(b == vals[0] for b in vals)
    assert_eq(got, exp, rtol=1e-12)
    vi, wi = ref((n,), numpy.int32), ref((n,), numpy.int32, seed=1)
    gi = FORMS[form](sp.array(vi), sp.array(wi))
    assert type(gi) is type(vi @ wi) and gi == vi @ wi


# ----------------------------------------------------------- views and operands


def test_transposed_operands():
    a = ref((9, 5))
    x = sp.array(a)
    assert_eq(x.T @ x, a.T @ a, **_tol(float))
    assert_eq(x @ x.T, a @ a.T, **_tol(float))
    assert_eq(numpy.dot(x.T, x), a.T @ a, **_tol(float))
    assert_eq(x.T.dot(x[:, ::-1]), a.T @ a[:, ::-1], **_tol(float))


def test_sliced_and_reversed_operands():
    a, b = ref((8, 7)), ref((6, 5), seed=1)
    x, y = sp.array(a), sp.array(b)
    assert_eq(x[1:, ::-1][:, :6] @ y, a[1:, ::-1][:, :6] @ b, **_tol(float))
    assert_eq(x[1:, ::-1] @ x.T[::-1, 2:], a[1:, ::-1] @ a.T[::-1, 2:], **_tol(float))
    assert_eq(x[::2, 1:] @ y, a[::2, 1:] @ b, **_tol(float))
    assert_eq(x[3] @ x.T, a[3] @ a.T, **_tol(float))  # 1-D view with idle ranks
    assert_eq(x[:, 2] @ x, a[:, 2] @ a, **_tol(float))
    assert_eq(x[2, :6] @ y[:, 1], a[2, :6] @ b[:, 1], rtol=1e-12)


def test_operands_are_not_modified():
    a, b = ref((7, 5)), ref((5, 4), seed=1)
    x, y = sp.array(a), sp.array(b)
    _ = x @ y
    _ = x.T @ x
    assert_eq(x, a, exact=True)
    assert_eq(y, b, exact=True)


def test_numpy_array_operands():
    a, b = ref((7, 5)), ref((5, 4), seed=1)
    x, y = sp.array(a), sp.array(b)
    for got in (x @ b, numpy.matmul(x, b), numpy.dot(x, b), x.dot(b)):
        assert isinstance(got, sp.ndarray)
        assert_eq(got, a @ b, **_tol(float))
    for got in (a @ y, numpy.matmul(a, y), numpy.dot(a, y)):
        assert isinstance(got, sp.ndarray)
        assert_eq(got, a @ b, **_tol(float))
    assert_eq(x @ b[:, 0], a @ b[:, 0], **_tol(float))
    assert_eq(x @ b.tolist(), a @ b, **_tol(float))


def test_result_feeds_elementwise_ops():
    a, b = ref((7, 5)), ref((5, 7), seed=1)
    x, y = sp.array(a), sp.array(b)
    c = x @ y
    assert_eq(c + c.T - 2 * numpy.eye(7), (a @ b) + (a @ b).T - 2 * numpy.eye(7), rtol=1e-11, atol=1e-12)
    assert_eq(c.sum(axis=0), (a @ b).sum(axis=0), rtol=1e-11, atol=1e-12)


# ------------------------------------------------------------------------ out=


def test_out():
    a, b = ref((7, 5)), ref((5, 4), seed=1)
    x, y = sp.array(a), sp.array(b)
    o = sp.zeros((7, 4))
    r = numpy.matmul(x, y, out=o)
    assert r is o
    assert_eq(o, a @ b, **_tol(float))
    o.fill(0)
    r = numpy.dot(x, y, out=o)
    assert r is o
    assert_eq(o, a @ b, **_tol(float))
    o32 = sp.zeros((7, 4), numpy.float32)  # same_kind cast allowed for matmul
    numpy.matmul(x, y, out=o32)
    assert_eq(o32, numpy.matmul(a, b, out=numpy.zeros((7, 4), numpy.float32)), rtol=1e-6)
    ov = sp.zeros((7,))
    numpy.matmul(x, y[:, 1], out=ov)
    assert_eq(ov, a @ b[:, 1], **_tol(float))


def test_out_is_a_view():
    a, b = ref((7, 5)), ref((5, 4), seed=1)
    x, y = sp.array(a), sp.array(b)
    base = sp.zeros((9, 6))
    nbase = numpy.zeros((9, 6))
    numpy.matmul(x, y, out=base[1:8, 2:])
    numpy.matmul(a, b, out=nbase[1:8, 2:])
    assert_eq(base, nbase, **_tol(float))
    t = sp.zeros((4, 7))
    numpy.matmul(x, y, out=t.T)
    assert_eq(t, (a @ b).T, **_tol(float))


def test_out_aliasing_an_input():
    a, b = ref((6, 6)), ref((6, 6), seed=1)
    x, y = sp.array(a), sp.array(b)
    numpy.matmul(x, y, out=x)
    assert_eq(x, a @ b, **_tol(float))
    x = sp.array(a)
    x @= y
    assert_eq(x, a @ b, **_tol(float))


def test_out_errors_are_numpys():
    a, b = ref((7, 5)), ref((5, 3), seed=1)
    x, y = sp.array(a), sp.array(b)
    cases = [
        (numpy.zeros((7, 4)), sp.zeros((7, 4))),  # wrong core dimension
        (numpy.zeros((6, 3)), sp.zeros((6, 3))),
    ]
    for nout, dout in cases:
        with pytest.raises(ValueError) as np_err:
            numpy.matmul(a, b, out=nout)
        with pytest.raises(ValueError) as sp_err:
            numpy.matmul(x, y, out=dout)
        assert str(sp_err.value) == str(np_err.value)
    with pytest.raises(TypeError) as np_err:
        numpy.matmul(a, b, out=numpy.zeros((7, 3), numpy.int64))
    o = sp.full((7, 3), 5, numpy.int64)
    with pytest.raises(TypeError) as sp_err:
        numpy.matmul(x, y, out=o)
    assert type(sp_err.value) is type(np_err.value)
    assert str(sp_err.value) == str(np_err.value)
    assert_eq(o, numpy.full((7, 3), 5))  # untouched
    # numpy.dot wants exactly the result's dtype and shape
    for nout, dout in ((numpy.zeros((7, 3), numpy.float32), sp.zeros((7, 3), numpy.float32)),):
        with pytest.raises(ValueError) as np_err:
            numpy.dot(a, b, out=nout)
        with pytest.raises(ValueError) as sp_err:
            numpy.dot(x, y, out=dout)
        assert str(sp_err.value) == str(np_err.value)
    with pytest.raises(ValueError):
        numpy.dot(x, y, out=sp.zeros((3, 7)))


# ---------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "sa,sb", [((7, 5), (4, 5)), ((7,), (4,)), ((7, 5), (4,)), ((7,), (4, 5)), ((2, 3), (2, 3))], ids=str
)
def test_shape_mismatch_raises_numpys_value_error(sa, sb):
    a, b = numpy.ones(sa), numpy.ones(sb)
    x, y = sp.array(a), sp.array(b)
    with pytest.raises(ValueError) as np_err:
        a @ b
    assert str(np_err.value).startswith("matmul: Input operand 1 has a mismatch in its core dimension 0")
    for call in (lambda: x @ y, lambda: numpy.matmul(x, y), lambda: x @ b, lambda: a @ y):
        with pytest.raises(ValueError) as sp_err:
            call()
        assert str(sp_err.value) == str(np_err.value)
    with pytest.raises(ValueError) as np_err:
        numpy.dot(a, b)
    with pytest.raises(ValueError) as sp_err:
        numpy.dot(x, y)
    assert str(sp_err.value) == str(np_err.value)


def test_scalar_operand():
    a = ref((4, 3))
    x = sp.array(a)
    for left in (True, False):
        with pytest.raises(ValueError) as np_err:
            numpy.matmul(a, 2.0) if left else numpy.matmul(2.0, a)
        with pytest.raises(ValueError) as sp_err:
            numpy.matmul(x, 2.0) if left else numpy.matmul(2.0, x)
        assert str(sp_err.value) == str(np_err.value)
    # numpy.dot with a scalar is multiplication
    assert_eq(numpy.dot(x, 2.5), numpy.dot(a, 2.5), exact=True)
    assert_eq(sp.dot(3, x), numpy.dot(3, a), exact=True)


@pytest.mark.parametrize("sa,sb", [((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 3, 4), (2, 4, 3))], ids=str)
def test_more_than_two_dimensions(sa, sb):
    a, b = ref(sa), ref(sb, seed=1)
    x, y = sp.array(a), sp.array(b)
    assert_eq(x @ y, a @ b, **_tol(float))
    assert_eq(numpy.matmul(x, y), numpy.matmul(a, b), **_tol(float))
    assert_eq(numpy.dot(x, y), numpy.dot(a, b), **_tol(float))


# --------------------------------------------------------------- empty and tiny


@pytest.mark.parametrize(
    "sa,sb", [((0, 3), (3, 4)), ((3, 0), (0, 4)), ((4, 3), (3, 0)), ((0,), (0,)), ((0,), (0, 2))], ids=str
)
def test_empty_operands(sa, sb):
    a, b = ref(sa), ref(sb, seed=1)
    got = sp.array(a) @ sp.array(b)
    assert_eq(got, a @ b, exact=True)


# -------------------------------------------------------------- distribution


def test_no_rank_holds_the_whole_matrix():
    _, size = world()
    a, b = ref((40, 40)), ref((40, 40), seed=1)
    x, y = sp.array(a), sp.array(b)
    with sp.comm_stats() as s:
        c = x @ y
    if size > 1:
        assert c.local.size < 40 * 40
        # nor does it send a whole matrix's worth of data
        assert s.bytes_sent + s.collective_bytes < a.nbytes
    assert_eq(c, a @ b, **_tol(float))


def test_tall_skinny_result_is_spread_out():
    _, size = world()
    a, b = ref((50, 3)), ref((3, 40), seed=1)
    c = sp.array(a) @ sp.array(b)
    if size > 1:
        assert c.local.size < 50 * 40
    from mpi4py import MPI

    assert MPI.COMM_WORLD.allreduce(c.local.size) == 50 * 40  # every element owned once
    assert_eq(c, a @ b, **_tol(float))


@pytest.mark.parametrize(
    "sa, sb", [((37, 23), (23, 11)), ((23,), (23, 9)), ((5, 37), (37,)), ((4, 6, 7), (7, 3)), ((9,), (9,))]
)
def test_operands_every_rank_holds_whole_give_numpys_own_product(sa, sb):
    # Replicated operands, or any operands on one rank: NumPy's matmul of the copies, its bits.
    rng = numpy.random.default_rng(4)
    a, b = rng.random(sa), rng.random(sb)
    with sp.config.set(replicate_below=0 if world()[1] == 1 else 1 << 20):
        x, y = sp.asarray(a), sp.asarray(b)
        got = x @ y
    assert_eq(got, a @ b, exact=True)
    with pytest.raises(ValueError, match="matmul: Input operand 1 has a mismatch"):
        x @ sp.asarray(rng.random((sb[0] + 1,) + sb[1:]))
