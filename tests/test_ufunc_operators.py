"""Python operators and in-place operators against NumPy at any rank count.

Run serially and under ``mpiexec -n 2/3/4``; every test body is SPMD and compares
the gathered result with NumPy's, dtype included.
"""

import numpy
import pytest
from helpers import assert_eq, ref

import spmdarray as sp

# -------------------------------------------------------------------- operators

BINARY_OPS = [
    ("+", lambda p, q: p + q),
    ("-", lambda p, q: p - q),
    ("*", lambda p, q: p * q),
    ("/", lambda p, q: p / q),
    ("//", lambda p, q: p // q),
    ("%", lambda p, q: p % q),
    ("**", lambda p, q: p**q),
    ("==", lambda p, q: p == q),
    ("!=", lambda p, q: p != q),
    ("<", lambda p, q: p < q),
    ("<=", lambda p, q: p <= q),
    (">", lambda p, q: p > q),
    (">=", lambda p, q: p >= q),
]
INT_OPS = [
    ("&", lambda p, q: p & q),
    ("|", lambda p, q: p | q),
    ("^", lambda p, q: p ^ q),
    ("<<", lambda p, q: p << q),
    (">>", lambda p, q: p >> q),
]


@pytest.mark.parametrize("sym,op", BINARY_OPS, ids=[s for s, _ in BINARY_OPS])
@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32, numpy.int32])
def test_binary_operators(sym, op, dtype):
    if numpy.dtype(dtype).kind == "i":
        a = numpy.arange(-17, 18).reshape(7, 5).astype(dtype)
        b = (numpy.arange(35).reshape(7, 5) % 4 + 1).astype(dtype)
    else:
        a = ref((7, 5), dtype)
        b = (numpy.abs(ref((7, 5), dtype, seed=1)) + 0.5).astype(dtype)
    x, y = sp.array(a), sp.array(b)
    with numpy.errstate(all="ignore"):
        assert_eq(op(x, y), op(a, b), exact=True)
        assert_eq(op(x, b), op(a, b), exact=True)  # NumPy array on the right
        assert_eq(op(x, 2), op(a, 2), exact=True)  # Python scalar on the right
        assert_eq(op(3, y), op(3, b), exact=True)  # reflected operator


@pytest.mark.parametrize("sym,op", INT_OPS, ids=[s for s, _ in INT_OPS])
@pytest.mark.parametrize("dtype", [numpy.int64, numpy.uint8, numpy.int8])
def test_integer_operators(sym, op, dtype):
    rng = numpy.random.default_rng(4)
    a = rng.integers(0, 100, (7, 5)).astype(dtype)
    b = rng.integers(0, 7, (7, 5)).astype(dtype)
    x, y = sp.array(a), sp.array(b)
    assert_eq(op(x, y), op(a, b))
    assert_eq(op(x, 3), op(a, 3))
    assert_eq(op(5, y), op(5, b))


def test_boolean_operators():
    a, b = ref((7, 5), bool), ref((7, 5), bool, seed=1)
    x, y = sp.array(a), sp.array(b)
    assert_eq(x & y, a & b)
    assert_eq(x | y, a | b)
    assert_eq(x ^ y, a ^ b)
    assert_eq(~x, ~a)
    assert_eq(x & True, a & True)


def test_unary_operators():
    for dt in (numpy.float64, numpy.int16, numpy.complex128):
        a = ref((7, 5), dt)
        x = sp.array(a)
        assert_eq(-x, -a, exact=True)
        assert_eq(+x, +a, exact=True)
        assert_eq(abs(x), abs(a), exact=True)
    ai = ref((7, 5), numpy.int32)
    assert_eq(~sp.array(ai), ~ai)
    ai8 = numpy.array([[-128, 127, 0]], numpy.int8)
    assert_eq(abs(sp.array(ai8)), abs(ai8))  # wraps like NumPy


def test_integer_division_by_zero_matches_numpy():
    a = numpy.arange(-6, 6).reshape(3, 4)
    b = numpy.array([[0, 1, 2, 0]] * 3)
    x, y = sp.array(a), sp.array(b)
    with numpy.errstate(all="ignore"):
        assert_eq(x // y, a // b)
        assert_eq(x % y, a % b)
        assert_eq(x / y, a / b, exact=True)


def test_float_special_values():
    a = numpy.array([[0.0, -0.0, numpy.inf], [-numpy.inf, numpy.nan, 1.0]])
    x = sp.array(a)
    with numpy.errstate(all="ignore"):
        assert_eq(x / 0.0, a / 0.0, exact=True)
        assert_eq(numpy.log(x), numpy.log(a), exact=True)
        assert_eq(numpy.signbit(x), numpy.signbit(a))
        assert_eq(numpy.isnan(x), numpy.isnan(a))
        assert_eq(numpy.maximum(x, 0.5), numpy.maximum(a, 0.5), exact=True)
        assert_eq(numpy.fmax(x, 0.5), numpy.fmax(a, 0.5), exact=True)


def test_matmul_operator():
    a, b = ref((6, 4)), ref((4, 5), seed=1)
    x, y = sp.array(a), sp.array(b)
    assert_eq(x @ y, a @ b)
    assert_eq(x @ b, a @ b)
    assert_eq(a @ y, a @ b)


# ----------------------------------------------------------------- in-place ops


def test_inplace_operators_keep_the_object_and_dtype():
    a = ref((7, 5))
    x = sp.array(a)
    xid = id(x)
    x += 1
    a += 1
    x *= 2.5
    a *= 2.5
    x -= sp.array(a[::-1])
    a -= a[::-1].copy()
    x /= 3
    a /= 3
    x **= 2
    a **= 2
    assert id(x) == xid
    assert_eq(x, a, exact=True)
    i = ref((7, 5), numpy.int32)
    y = sp.array(i)
    y //= 3
    i //= 3
    y %= 5
    i %= 5
    y <<= 2
    i <<= 2
    y |= 1
    i |= 1
    y ^= 6
    i ^= 6
    y &= 0x3F
    i &= 0x3F
    y >>= 1
    i >>= 1
    assert_eq(y, i)
    assert y.dtype == numpy.int32


def test_inplace_true_divide_on_int_raises_like_numpy():
    i = ref((7, 5), numpy.int64)
    y = sp.array(i)
    with pytest.raises(TypeError) as np_err:
        i /= 2
    with pytest.raises(TypeError) as sp_err:
        y /= 2
    assert type(sp_err.value) is type(np_err.value)
    assert str(sp_err.value) == str(np_err.value)
    with pytest.raises(TypeError) as np_err:
        i += 1.5
    with pytest.raises(TypeError) as sp_err:
        y += 1.5
    assert str(sp_err.value) == str(np_err.value)
    # the failed operations left the array untouched
    assert_eq(y, i)


def test_inplace_with_a_view_operand():
    a = ref((6, 6))
    x = sp.array(a)
    x += x.T
    a += a.T.copy()
    assert_eq(x, a, exact=True)
    x[1:, :] += x[:-1, :].copy()
    a[1:, :] += a[:-1, :].copy()
    assert_eq(x, a, exact=True)


def test_inplace_matmul():
    a, b = ref((5, 5)), ref((5, 5), seed=1)
    x, y = sp.array(a), sp.array(b)
    xid = id(x)
    x @= y
    a @= b
    assert id(x) == xid
    assert_eq(x, a)
    z = sp.array(ref((5, 3)))
    with pytest.raises(ValueError):
        x @= z
