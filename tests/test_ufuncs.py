"""Ufuncs and operators against NumPy, at any rank count.

Run serially and under ``mpiexec -n 2/3/4 python -m pytest tests/test_ufuncs.py``.
Every test body is SPMD: all ranks build the same global NumPy reference, make the
distributed array from it, call the same collectives, and compare the gathered result
with NumPy's, dtype included.  Local blocks are computed by NumPy's own kernels, so
elementwise results are compared bit for bit (NaNs equal).
"""

import re

import numpy
import pytest
from helpers import assert_eq, ref, world

import spmdarray as sp

# --------------------------------------------------------------------------- sweep

UFUNC_NAMES = sorted(n for n in dir(numpy) if isinstance(getattr(numpy, n), numpy.ufunc))
GUFUNCS = sorted(n for n in UFUNC_NAMES if getattr(numpy, n).signature is not None)
ELEMENTWISE = [n for n in UFUNC_NAMES if n not in GUFUNCS]
NUMERIC = "bBhHiIlLqQefdgFDG?"
SHAPES = [(7, 5), (3, 10), (2, 9)]

_UNIT = {"arcsin", "arccos", "arctanh", "asin", "acos", "atanh"}
_GE_ONE = {"arccosh", "acosh"}
_POSITIVE = {"log", "log2", "log10", "log1p", "sqrt", "float_power", "power", "pow"}
_DIVIDES = {"divide", "true_divide", "floor_divide", "remainder", "mod", "fmod", "divmod"}
_SHIFTS = {"left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift"}


def _input_loops(ufunc):
    """Input type strings of the numeric loops of ``ufunc`` (no object/datetime)."""
    out = []
    for t in ufunc.types:
        ins = t.split("->")[0]
        if all(c in NUMERIC for c in ins) and ins not in out:
            out.append(ins)
    return out


def _chosen_loops(ufunc):
    """The first numeric loop, plus the first float64, int64 and complex128 ones."""
    loops = _input_loops(ufunc)
    picked = []
    for want in (None, "d", "l", "D"):
        for ins in loops:
            if want is None or numpy.dtype(ins[0]) == numpy.dtype(want):
                if ins not in picked:
                    picked.append(ins)
                break
    return picked


def _operand(name, i, tc, shape, seed):
    """Input ``i`` (type char ``tc``) of ufunc ``name`` in a domain where it is defined."""
    rng = numpy.random.default_rng(seed)
    dt = numpy.dtype(tc)
    if dt.kind == "b":
        return rng.random(shape) > 0.5
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else -20
        if name in _SHIFTS:
            lo, hi = (0, 16) if i == 0 else (0, 5)
        elif name in ("power", "pow"):
            lo, hi = (0, 5) if i == 0 else (0, 4)
        elif name == "ldexp":
            lo, hi = -4, 5
        else:
            hi = 21 if dt.kind == "i" else 40
        v = rng.integers(lo, hi, size=shape)
        if (i == 1 and name in _DIVIDES) or name == "reciprocal":
            v = rng.integers(1, 10, size=shape) * (1 if dt.kind == "u" else rng.choice([-1, 1], size=shape))
        return v.astype(dt)
    if name in _UNIT:
        v = rng.uniform(-0.9, 0.9, shape)
    elif name in _GE_ONE:
        v = rng.uniform(1.0, 4.0, shape)
    elif name in _POSITIVE and i == 0:
        v = rng.uniform(0.25, 4.0, shape)
    elif name in _DIVIDES and i == 1:
        v = rng.uniform(0.5, 3.0, shape) * rng.choice([-1.0, 1.0], size=shape)
    else:
        v = rng.uniform(-3.0, 3.0, shape)
    if dt.kind == "c":
        v = v + 1j * rng.uniform(-0.9, 0.9, shape)
    return v.astype(dt)


SWEEP = [
    pytest.param(name, ins, id=f"{name}-{ins}") for name in ELEMENTWISE for ins in _chosen_loops(getattr(numpy, name))
]


def _check_result(got, exp):
    if isinstance(exp, tuple):
        assert isinstance(got, tuple) and len(got) == len(exp)
        for g, e in zip(got, exp):
            assert_eq(g, e, exact=True)
    else:
        assert_eq(got, exp, exact=True)


@pytest.mark.parametrize("name,ins", SWEEP)
def test_ufunc_sweep(name, ins):
    ufunc = getattr(numpy, name)
    for k, shape in enumerate(SHAPES):
        args = [_operand(name, i, tc, shape, seed=10 * k + i) for i, tc in enumerate(ins)]
        with numpy.errstate(all="ignore"):
            exp = ufunc(*args)
        dargs = [sp.array(a) for a in args]
        # once through NumPy's ufunc object (``__array_ufunc__``), once through the namespace
        fn = ufunc if k % 2 == 0 else getattr(sp, name)
        with numpy.errstate(all="ignore"):
            got = fn(*dargs)
        _check_result(got, exp)


def test_sweep_covers_every_ufunc():
    covered = {p.values[0] for p in SWEEP}
    missing = set(ELEMENTWISE) - covered
    # isnat has only datetime loops: it is checked for NumPy's TypeError below.
    assert missing == {"isnat"}
    assert set(GUFUNCS) == {"matmul", "matvec", "vecdot", "vecmat"}
    for name in UFUNC_NAMES:
        assert getattr(sp, name) is getattr(numpy, name)


def test_isnat_raises_numpys_type_error():
    a = ref((4, 3))
    x = sp.array(a)
    with pytest.raises(TypeError) as np_err:
        numpy.isnat(a)
    with pytest.raises(TypeError) as sp_err:
        numpy.isnat(x)
    assert str(sp_err.value) == str(np_err.value)


def test_longdouble_and_complex_operands():
    for dt in (numpy.longdouble, numpy.clongdouble, numpy.float16, numpy.complex64):
        a = ref((7, 5), numpy.complex128 if numpy.dtype(dt).kind == "c" else float, seed=3).astype(dt)
        x = sp.array(a)
        assert_eq(x * x + 1, a * a + 1, exact=True)
        assert_eq(numpy.exp(x), numpy.exp(a), exact=True)


def test_matmul_ufunc_in_sweep_shapes():
    a, b = ref((7, 5)), ref((5, 3), seed=1)
    assert_eq(numpy.matmul(sp.array(a), sp.array(b)), a @ b)
    assert_eq(sp.matmul(sp.array(a), sp.array(b)), a @ b)


@pytest.mark.parametrize("name", ["matvec", "vecdot", "vecmat"])
def test_other_gufuncs_raise_not_implemented(name):
    a = ref((5, 5))
    x = sp.array(a)
    with pytest.raises(NotImplementedError, match=name):
        getattr(numpy, name)(x, x)


# ------------------------------------------------------------------ broadcasting


def test_broadcast_column_plus_row():
    a, b = ref((5, 1)), ref((1, 7), seed=1)
    x, y = sp.array(a), sp.array(b)
    assert_eq(x + y, a + b, exact=True)
    assert_eq(numpy.multiply(y, x), b * a, exact=True)


def test_broadcast_vector_against_matrix():
    a, b = ref((7,)), ref((5, 7), seed=1)
    x, y = sp.array(a), sp.array(b)
    assert_eq(x + y, a + b, exact=True)
    assert_eq(y - x, b - a, exact=True)
    assert_eq(numpy.maximum(x, y), numpy.maximum(a, b), exact=True)


def test_broadcast_zero_d_array_and_matrix():
    a, b = numpy.array(2.5), ref((5, 7))
    x, y = sp.array(a), sp.array(b)
    assert x.shape == ()
    assert_eq(x * y, a * b, exact=True)
    assert_eq(y / x, b / a, exact=True)


def test_broadcast_3d_against_2d_and_1d():
    a, b, c = ref((2, 3, 4)), ref((3, 4), seed=1), ref((4,), seed=2)
    x, y, z = sp.array(a), sp.array(b), sp.array(c)
    assert_eq(x + y * z, a + b * c, exact=True)


@pytest.mark.parametrize(
    "dtype,scalar",
    [
        (numpy.float32, 1.0),
        (numpy.float32, 3),
        (numpy.int8, 100),
        (numpy.int8, -128),
        (numpy.uint8, 255),
        (numpy.int16, 2.5),
        (numpy.float16, 1e3),
        (numpy.int32, 1j),
        (numpy.bool_, 1),
        (numpy.bool_, True),
        (numpy.float32, True),
    ],
)
def test_python_scalars_promote_weakly(dtype, scalar):
    a = ref((7, 5), dtype)
    x = sp.array(a)
    with numpy.errstate(all="ignore"):
        for op in (numpy.add, numpy.multiply, numpy.maximum, numpy.less):
            assert_eq(op(x, scalar), op(a, scalar), exact=True)
            assert_eq(op(scalar, x), op(scalar, a), exact=True)
        assert_eq(x + scalar, a + scalar, exact=True)
        if a.dtype != bool:  # NumPy has no boolean subtract
            assert_eq(scalar - x, scalar - a, exact=True)


def test_float32_plus_python_float_stays_float32():
    x = sp.ones((7, 5), numpy.float32)
    assert (x + 1.0).dtype == numpy.float32
    assert (2.0 * x).dtype == numpy.float32
    assert (x + numpy.float64(1.0)).dtype == numpy.float64


@pytest.mark.parametrize("value", [300, -129, 2**70])
def test_int8_plus_out_of_range_python_int_raises_overflow(value):
    a = ref((7, 5), numpy.int8)
    x = sp.array(a)
    with pytest.raises(OverflowError) as np_err:
        a + value
    with pytest.raises(OverflowError) as sp_err:
        x + value
    assert str(sp_err.value) == str(np_err.value)
    with pytest.raises(OverflowError):
        numpy.add(x, value)


def _int_bounds(dtype):
    info = numpy.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    # valid values first (they fill any cache), then the first invalid ones
    return [hi, lo, 0, -1, 1, hi + 1, lo - 1, -(hi + 1), -(hi + 2), 2 * hi + 1, 2 * hi + 2, -2 * hi]


@pytest.mark.parametrize("shape", [(1, 1), (7, 5)], ids=str)
@pytest.mark.parametrize(
    "dtype", [numpy.int8, numpy.uint8, numpy.int16, numpy.uint16, numpy.int32, numpy.uint32, numpy.int64, numpy.uint64]
)
def test_python_int_bounds_match_numpy_on_every_rank(dtype, shape):
    # (1, 1): most ranks hold nothing, so an error must come from the
    # rank-independent checks, never from the local computation alone
    a = numpy.ones(shape, dtype)
    x = sp.array(a)
    for value in _int_bounds(dtype):
        for op in (numpy.add, numpy.multiply, numpy.maximum):
            try:
                with numpy.errstate(all="ignore"):
                    exp = op(a, value)
            except OverflowError as e:
                with pytest.raises(OverflowError) as sp_err:
                    op(x, value)
                assert str(sp_err.value) == str(e), value
            else:
                with numpy.errstate(all="ignore"):
                    assert_eq(op(x, value), exp)


def test_python_ints_with_float_arrays():
    for dtype in (numpy.float16, numpy.float32):
        a = ref((3, 4), dtype)
        x = sp.array(a)
        with numpy.errstate(all="ignore"):
            for value in (10**6, 2**200):
                assert_eq(x + value, a + value, exact=True)
        with pytest.raises(OverflowError):
            x + 2**1100


@pytest.mark.parametrize(
    "scalar",
    [numpy.float64(1.5), numpy.float32(1.5), numpy.int64(7), numpy.int8(3), numpy.uint16(9), numpy.complex64(1 + 2j)],
)
@pytest.mark.parametrize("dtype", [numpy.float32, numpy.int8, numpy.int64])
def test_numpy_scalars_promote_strongly(dtype, scalar):
    a = ref((7, 5), dtype)
    x = sp.array(a)
    with numpy.errstate(all="ignore"):
        assert_eq(x + scalar, a + scalar, exact=True)
        assert_eq(scalar * x, scalar * a, exact=True)
        assert_eq(numpy.subtract(scalar, x), numpy.subtract(scalar, a), exact=True)


def test_numpy_array_operands_each_rank_passes_the_same_global_array():
    a, b, c = ref((7, 5)), ref((7, 5), seed=1), ref((5,), numpy.int32, seed=2)
    x = sp.array(a)
    assert_eq(x + b, a + b, exact=True)
    assert_eq(b - x, b - a, exact=True)
    assert_eq(numpy.multiply(b, x), b * a, exact=True)
    assert_eq(x * c, a * c, exact=True)
    assert_eq(c[:, None, None] + x, c[:, None, None] + a, exact=True)
    assert_eq(numpy.arctan2(b, x), numpy.arctan2(b, a), exact=True)


def test_lists_as_operands():
    a = ref((3, 4), numpy.int64)
    x = sp.array(a)
    row = [1, 2, 3, 4]
    col = [[1.5], [2.5], [-1.0]]
    assert_eq(x + row, a + row, exact=True)
    assert_eq(x * col, a * col, exact=True)
    assert_eq(numpy.add(row, x), numpy.add(row, a), exact=True)
    assert_eq(row == x, row == a)


def _np_broadcast_message(*shapes):
    with pytest.raises(ValueError) as e:
        numpy.add(*[numpy.ones(s) for s in shapes])
    return str(e.value)


@pytest.mark.parametrize("sa,sb", [((7, 5), (4, 5)), ((7,), (5,)), ((3, 4), (4, 3)), ((2, 3, 4), (2, 4))])
def test_shape_mismatch_raises_numpys_value_error(sa, sb):
    x, y = sp.ones(sa), sp.ones(sb)
    msg = _np_broadcast_message(sa, sb)
    assert msg.startswith("operands could not be broadcast together with shapes")
    with pytest.raises(ValueError) as e:
        x + y
    assert str(e.value) == msg
    with pytest.raises(ValueError) as e:
        numpy.multiply(x, numpy.ones(sb))
    assert str(e.value) == msg


# ---------------------------------------------------------------- out= / casting


def test_out_distributed_same_dtype():
    a, b = ref((7, 5)), ref((7, 5), seed=1)
    x, y = sp.array(a), sp.array(b)
    o = sp.zeros((7, 5))
    r = numpy.add(x, y, out=o)
    assert r is o
    assert_eq(o, a + b, exact=True)
    r = numpy.multiply(x, 2.0, out=(o,))
    assert r is o
    assert_eq(o, a * 2.0, exact=True)


def test_out_with_a_wider_dtype():
    a, b = ref((7, 5), numpy.int16), ref((7, 5), numpy.int16, seed=1)
    x, y = sp.array(a), sp.array(b)
    o = sp.zeros((7, 5), numpy.float64)
    no = numpy.zeros((7, 5), numpy.float64)
    numpy.add(x, y, out=o)
    numpy.add(a, b, out=no)
    assert_eq(o, no, exact=True)
    o32 = sp.zeros((7, 5), numpy.int32)
    numpy.multiply(x, y, out=o32)
    assert_eq(o32, numpy.multiply(a, b, dtype=numpy.int32), exact=True)


def test_out_casting_errors_are_numpys():
    a = ref((7, 5))
    x = sp.array(a)
    o = sp.zeros((7, 5), numpy.int64)
    no = numpy.zeros((7, 5), numpy.int64)
    with pytest.raises(TypeError) as np_err:
        numpy.add(a, 1, out=no)
    with pytest.raises(TypeError) as sp_err:
        numpy.add(x, 1, out=o)
    assert type(sp_err.value) is type(np_err.value)  # NumPy's UFuncTypeError subclass
    assert str(sp_err.value) == str(np_err.value)
    # casting="unsafe" allows it, and truncates like NumPy
    numpy.add(x, 0.5, out=o, casting="unsafe")
    numpy.add(a, 0.5, out=no, casting="unsafe")
    assert_eq(o, no)
    # input casting errors with an explicit dtype
    i = sp.array(ref((7, 5), numpy.int64))
    with pytest.raises(TypeError) as np_err:
        numpy.add(ref((7, 5), numpy.int64), a, dtype=numpy.int64)
    with pytest.raises(TypeError) as sp_err:
        numpy.add(i, x, dtype=numpy.int64)
    assert type(sp_err.value) is type(np_err.value)
    assert str(sp_err.value) == str(np_err.value)
    # no loop for the requested dtype
    with pytest.raises(TypeError) as np_err:
        numpy.sqrt(a, dtype=numpy.int64)
    with pytest.raises(TypeError) as sp_err:
        numpy.sqrt(x, dtype=numpy.int64)
    assert str(sp_err.value) == str(np_err.value)


def test_out_non_broadcastable_shape_raises():
    x = sp.ones((7, 5))
    with pytest.raises(ValueError) as np_err:
        numpy.add(numpy.ones((7, 5)), 1, out=numpy.ones((1, 5)))
    with pytest.raises(ValueError) as sp_err:
        numpy.add(x, 1, out=sp.ones((1, 5)))
    assert str(sp_err.value) == str(np_err.value)


def test_out_larger_broadcasts_the_inputs():
    a = ref((5,))
    x = sp.array(a)
    o = sp.zeros((3, 5))
    no = numpy.zeros((3, 5))
    numpy.negative(x, out=o)
    numpy.negative(a, out=no)
    assert_eq(o, no, exact=True)


def test_out_is_a_view_of_another_array():
    a = ref((7, 5))
    x = sp.array(a)
    base = sp.zeros((9, 8))
    nbase = numpy.zeros((9, 8))
    numpy.sin(x, out=base[1:8, 2:7])
    numpy.sin(a, out=nbase[1:8, 2:7])
    assert_eq(base, nbase, exact=True)


def test_multi_output_out_tuple():
    a = ref((7, 5)) * 3
    x = sp.array(a)
    o1, o2 = sp.empty((7, 5)), sp.empty((7, 5))
    r = numpy.divmod(x, 1.25, out=(o1, o2))
    assert r[0] is o1 and r[1] is o2
    e1, e2 = numpy.divmod(a, 1.25)
    assert_eq(o1, e1, exact=True)
    assert_eq(o2, e2, exact=True)
    m, e = sp.empty((7, 5)), sp.empty((7, 5), numpy.int32)
    numpy.frexp(x, out=(m, e))
    em, ee = numpy.frexp(a)
    assert_eq(m, em, exact=True)
    assert_eq(e, ee)


@pytest.mark.parametrize("name", ["divmod", "modf", "frexp"])
def test_multi_output_ufuncs(name):
    ufunc = getattr(numpy, name)
    a = ref((7, 5)) * 4
    x = sp.array(a)
    args_np = (a, 1.5) if ufunc.nin == 2 else (a,)
    args_sp = (x, 1.5) if ufunc.nin == 2 else (x,)
    exp = ufunc(*args_np)
    got = ufunc(*args_sp)
    assert isinstance(got, tuple) and len(got) == 2
    for g, e in zip(got, exp):
        assert isinstance(g, sp.ndarray)
        assert_eq(g, e, exact=True)
    ai = ref((7, 5), numpy.int16)
    if name == "divmod":
        assert_eq(divmod(sp.array(ai), 7)[0], divmod(ai, 7)[0])
        assert_eq(divmod(sp.array(ai), 7)[1], divmod(ai, 7)[1])


def test_wrong_out_tuple_length_raises():
    x = sp.ones((4, 3))
    with pytest.raises(ValueError):
        numpy.divmod(x, 2.0, out=(sp.empty((4, 3)),))


def test_numpy_out_with_distributed_inputs_raises_type_error():
    x = sp.ones((4, 3))
    with pytest.raises(TypeError, match="out="):
        numpy.add(x, 1.0, out=numpy.empty((4, 3)))


# --------------------------------------------------------------------- where=


def test_where_with_a_distributed_mask():
    a, b = ref((7, 5)), ref((7, 5), seed=1)
    m = ref((7, 5), bool, seed=2)
    x, y, mask = sp.array(a), sp.array(b), sp.array(m)
    o = sp.full((7, 5), -1.0)
    no = numpy.full((7, 5), -1.0)
    numpy.add(x, y, out=o, where=mask)
    numpy.add(a, b, out=no, where=m)
    assert_eq(o, no, exact=True)


def test_where_with_a_numpy_mask_and_broadcast_mask():
    a = ref((7, 5))
    x = sp.array(a)
    m = ref((7, 5), bool, seed=2)
    o, no = sp.zeros((7, 5)), numpy.zeros((7, 5))
    numpy.exp(x, out=o, where=m)
    numpy.exp(a, out=no, where=m)
    assert_eq(o, no, exact=True)
    row = numpy.array([True, False, True, False, True])
    numpy.negative(x, out=o, where=row)
    numpy.negative(a, out=no, where=row)
    assert_eq(o, no, exact=True)
    dm = sp.array(row)
    numpy.multiply(x, 3.0, out=o, where=dm)
    numpy.multiply(a, 3.0, out=no, where=row)
    assert_eq(o, no, exact=True)


def test_where_with_a_mask_of_a_different_layout():
    a = ref((6, 6))
    m = ref((6, 6), bool, seed=5)
    x = sp.array(a)
    mask = sp.array(m).T  # transposed view: lives elsewhere
    o, no = sp.zeros((6, 6)), numpy.zeros((6, 6))
    numpy.sqrt(x * x, out=o, where=mask)
    numpy.sqrt(a * a, out=no, where=m.T)
    assert_eq(o, no, exact=True)


def test_where_mask_shape_mismatch_raises():
    x = sp.ones((7, 5))
    o = sp.zeros((7, 5))
    with pytest.raises(ValueError) as np_err:
        numpy.add(numpy.ones((7, 5)), 1, out=numpy.zeros((7, 5)), where=numpy.ones((4, 5), bool))
    with pytest.raises(ValueError) as sp_err:
        numpy.add(x, 1, out=o, where=sp.ones((4, 5), bool))
    assert str(sp_err.value) == str(np_err.value)


# --------------------------------------------------------------------- dtype=


def test_dtype_keyword():
    a, b = ref((7, 5), numpy.int16), ref((7, 5), numpy.int16, seed=1)
    x, y = sp.array(a), sp.array(b)
    for dt in (numpy.float64, numpy.float32, numpy.int64, numpy.complex128):
        assert_eq(numpy.add(x, y, dtype=dt), numpy.add(a, b, dtype=dt), exact=True)
    f = ref((7, 5))
    assert_eq(numpy.sqrt(sp.array(f) ** 2, dtype=numpy.float32), numpy.sqrt(f**2, dtype=numpy.float32), exact=True)
    assert_eq(numpy.true_divide(x, y, dtype=numpy.float32), numpy.true_divide(a, b, dtype=numpy.float32), exact=True)


def test_signature_and_casting_keywords():
    a = ref((7, 5))
    x = sp.array(a)
    got = numpy.add(x, 1, signature=(None, None, numpy.float32), casting="unsafe")
    assert_eq(got, numpy.add(a, 1, signature=(None, None, numpy.float32), casting="unsafe"), exact=True)


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


# ----------------------------------------------------------------------- views


def test_shifted_views():
    a = ref((9, 7))
    x = sp.array(a)
    assert_eq(x[1:, :-1] + x[:-1, 1:], a[1:, :-1] + a[:-1, 1:], exact=True)
    assert_eq(x[2:, 1:-1] - x[:-2, :-2] * x[1:-1, 2:], a[2:, 1:-1] - a[:-2, :-2] * a[1:-1, 2:], exact=True)


def test_transposed_and_reversed_views():
    a = ref((7, 7))
    x = sp.array(a)
    assert_eq(x + x.T, a + a.T, exact=True)
    assert_eq(x[::-1] * x, a[::-1] * a, exact=True)
    assert_eq(x[:, ::-2] - x[:, ::2], a[:, ::-2] - a[:, ::2], exact=True)
    assert_eq(numpy.arctan2(x.T[1:], x[:-1, ::-1]), numpy.arctan2(a.T[1:], a[:-1, ::-1]), exact=True)
    r = ref((7, 4), seed=1)
    y = sp.array(r)
    assert_eq(y.T[::-1] + x[1:5, :], r.T[::-1] + a[1:5, :], exact=True)


def test_strided_views_and_integer_index():
    a = ref((8, 9))
    x = sp.array(a)
    assert_eq(x[::3, 1::2] + x[1::3, 2::2], a[::3, 1::2] + a[1::3, 2::2], exact=True)
    assert_eq(x[3, :8] * x[:, 4], a[3, :8] * a[:, 4], exact=True)
    assert_eq(x[2:3] + x[:, 5:6], a[2:3] + a[:, 5:6], exact=True)


def test_result_written_into_overlapping_view():
    a = ref((7, 5))
    x = sp.array(a)
    numpy.add(x[1:], x[:-1], out=x[1:])
    numpy.add(a[1:], a[:-1], out=a[1:])
    assert_eq(x, a, exact=True)


def test_ops_on_views_do_not_change_the_base():
    a = ref((7, 5))
    x = sp.array(a)
    _ = x[1:5, ::-1] * 2 + x.T[:, :4].T
    assert_eq(x, a, exact=True)


# ------------------------------------------------------------- 0-d and scalars


def test_zero_d_results_are_numpy_scalars():
    for v in (numpy.float64(2.5), numpy.int16(-3), numpy.complex64(1 - 1j), numpy.bool_(True)):
        a = numpy.array(v)
        x = sp.array(a)
        got = numpy.negative(x) if a.dtype != bool else numpy.logical_not(x)
        exp = numpy.negative(a) if a.dtype != bool else numpy.logical_not(a)
        assert isinstance(got, numpy.generic) and not isinstance(got, sp.ndarray)
        assert type(got) is type(exp)
        assert got == exp
    x = sp.array(numpy.array(4.0))
    got = numpy.sqrt(x) + x
    assert type(got) is numpy.float64 and got == 6.0
    q, r = numpy.divmod(sp.array(numpy.array(7)), 3)
    assert type(q) is numpy.int64 and (q, r) == (2, 1)


def test_zero_d_result_is_identical_on_every_rank():
    from mpi4py import MPI

    got = numpy.exp(sp.array(numpy.array(0.3)))
    vals = MPI.COMM_WORLD.allgather(got.tobytes())
    assert all(v == vals[0] for v in vals)
    assert got == numpy.exp(0.3)


def test_empty_and_size_one_shapes():
    for shape in ((0, 5), (5, 0), (1, 1), (1, 9), (2, 1)):
        a = ref(shape)
        x = sp.array(a)
        assert_eq(x * 2 + 1, a * 2 + 1, exact=True)
        assert_eq(numpy.sin(x), numpy.sin(a), exact=True)


# ------------------------------------------------------------- reduce / accumulate

REDUCE_UFUNCS = ["add", "multiply", "minimum", "maximum", "logical_and", "logical_or"]


@pytest.mark.parametrize("name", REDUCE_UFUNCS)
@pytest.mark.parametrize("axis", [0, 1, None, (0, 1), -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_ufunc_reduce(name, axis, keepdims):
    ufunc = getattr(numpy, name)
    a = ref((7, 5)) if name not in ("logical_and", "logical_or") else ref((7, 5), bool)
    if name == "multiply":
        a = 1 + a / 10
    x = sp.array(a)
    exp = ufunc.reduce(a, axis=axis, keepdims=keepdims)
    got = ufunc.reduce(x, axis=axis, keepdims=keepdims)
    if numpy.ndim(exp) == 0 and not keepdims:
        assert isinstance(got, numpy.generic)
    assert_eq(got, exp)


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "logical_or"])
def test_ufunc_reduce_int_and_3d(name):
    ufunc = getattr(numpy, name)
    a = ref((2, 9, 4), numpy.int32) % 5
    x = sp.array(a)
    for axis in (0, 1, 2, (0, 2), None):
        assert_eq(ufunc.reduce(x, axis=axis), ufunc.reduce(a, axis=axis))


def test_ufunc_reduce_default_axis_is_zero_and_dtype():
    a = ref((7, 5), numpy.int8)
    x = sp.array(a)
    assert_eq(numpy.add.reduce(x), numpy.add.reduce(a))
    assert_eq(numpy.add.reduce(x, axis=1, dtype=numpy.int64), numpy.add.reduce(a, axis=1, dtype=numpy.int64))
    o = sp.zeros((5,), numpy.int8)
    r = numpy.add.reduce(x, axis=0, out=o)
    assert r is o
    assert_eq(o, numpy.add.reduce(a, axis=0, out=numpy.zeros((5,), numpy.int8)))


def test_non_associative_reduce_raises_not_implemented():
    x = sp.array(ref((7, 5)))
    for ufunc in (numpy.subtract, numpy.divide, numpy.power, numpy.arctan2):
        with pytest.raises(NotImplementedError, match=ufunc.__name__):
            ufunc.reduce(x, axis=0)


@pytest.mark.parametrize("name", ["add", "multiply", "maximum"])
@pytest.mark.parametrize("shape", [(7, 5), (2, 9), (13,), (3, 4, 5)])
def test_ufunc_accumulate(name, shape):
    ufunc = getattr(numpy, name)
    a = 1 + ref(shape) / 10
    x = sp.array(a)
    for axis in range(len(shape)):
        assert_eq(ufunc.accumulate(x, axis=axis), ufunc.accumulate(a, axis=axis))
    ai = ref(shape, numpy.int16) % 4
    assert_eq(ufunc.accumulate(sp.array(ai), axis=0), ufunc.accumulate(ai, axis=0))


def test_accumulate_on_a_view_and_with_dtype():
    a = ref((8, 6), numpy.int8)
    x = sp.array(a)
    assert_eq(numpy.add.accumulate(x.T, axis=1), numpy.add.accumulate(a.T, axis=1))
    assert_eq(numpy.add.accumulate(x[::-1, 1:], axis=0), numpy.add.accumulate(a[::-1, 1:], axis=0))
    assert_eq(
        numpy.add.accumulate(x, axis=0, dtype=numpy.int64), numpy.add.accumulate(a, axis=0, dtype=numpy.int64)
    )


def test_non_associative_accumulate_raises_not_implemented():
    x = sp.array(ref((7, 5)))
    with pytest.raises(NotImplementedError, match="subtract"):
        numpy.subtract.accumulate(x, axis=0)


@pytest.mark.parametrize("method", ["outer", "at", "reduceat"])
def test_outer_at_reduceat_raise_not_implemented(method):
    x = sp.array(ref((4, 3)))
    with pytest.raises(NotImplementedError, match=method):
        if method == "outer":
            numpy.add.outer(x, x)
        elif method == "at":
            numpy.add.at(x, [0, 1], 1.0)
        else:
            numpy.add.reduceat(x, [0, 2])
    # the failed call did not change x
    assert_eq(x, ref((4, 3)), exact=True)


# --------------------------------------------------------------- communication


def test_aligned_elementwise_sends_nothing():
    a, b = ref((13, 11)), ref((13, 11), seed=1)
    x, y = sp.array(a), sp.array(b)
    o = sp.empty((13, 11))
    with sp.comm_stats() as s:
        z = x * y + 2.0
        numpy.sin(z, out=o)
        w = numpy.hypot(x, o)
        x += w
    assert s.bytes_sent == 0
    assert s.messages_sent == 0
    assert s.collectives == 0
    assert_eq(x, a + numpy.hypot(a, numpy.sin(a * b + 2.0)), exact=True)


def test_numpy_operands_and_scalars_send_nothing():
    a, b = ref((13, 11)), ref((11,), seed=1)
    x = sp.array(a)
    with sp.comm_stats() as s:
        z = x + b
        z = z * numpy.float32(2) - 1
    assert s.bytes_sent == 0 and s.messages_sent == 0
    assert_eq(z, (a + b) * numpy.float32(2) - 1, exact=True)


def test_shifted_view_sends_only_edges():
    _, size = world()
    a = ref((16, 16))
    x = sp.array(a)
    with sp.comm_stats() as s:
        z = x[1:, :] + x[:-1, :]
    assert_eq(z, a[1:, :] + a[:-1, :], exact=True)
    if size == 1:
        assert s.bytes_sent == 0
    from mpi4py import MPI

    total = MPI.COMM_WORLD.allreduce(s.bytes_sent)
    # never more than one row of the array per rank
    assert total <= size * 16 * 8


def test_error_message_text_is_numpys():
    # documented text of the broadcasting error; no spaces inside the shapes
    x, y = sp.ones((7, 5)), sp.ones((4, 5))
    with pytest.raises(ValueError, match=re.escape("shapes (7,5) (4,5)")):
        x * y


# ------------------------------------------------------------------ temporaries


def test_named_operands_are_never_overwritten():
    a, b = ref((7, 5)), ref((7, 5), seed=1)
    x, y = sp.array(a), sp.array(b)
    z = x + y
    w = z * 2.0
    v = 1.0 - z
    assert_eq(z, a + b, exact=True)
    assert_eq(w, (a + b) * 2.0, exact=True)
    assert_eq(v, 1.0 - (a + b), exact=True)
    assert_eq(x, a, exact=True)
    assert_eq(y, b, exact=True)


def test_chained_temporaries_give_numpys_values():
    a, b = ref((7, 5)), ref((7, 5), seed=1)
    x, y = sp.array(a), sp.array(b)
    assert_eq(((x + y) * 0.2 - x) / (y * y + 1.0), ((a + b) * 0.2 - a) / (b * b + 1.0), exact=True)
    assert_eq(2.0 ** (x * 0.5) % 0.3, 2.0 ** (a * 0.5) % 0.3, exact=True)
    assert_eq((x + y) * (x - y), (a + b) * (a - b), exact=True)
    i = ref((7, 5), numpy.int16)
    n = sp.array(i)
    assert_eq((n + 1) / 2, (i + 1) / 2, exact=True)  # dtype changes: no reuse
    assert_eq((n * 3) // 2 + (n > 0), (i * 3) // 2 + (i > 0))


def test_temporary_whose_storage_a_view_still_shares_is_not_reused():
    a = ref((6, 6))
    x = sp.array(a)
    kept = []

    def make():
        t = x + 1.0
        kept.append(t.T)
        return t

    r = make() * 3.0
    assert_eq(r, (a + 1.0) * 3.0, exact=True)
    assert_eq(kept[0], (a + 1.0).T, exact=True)


def test_temporary_whose_local_block_is_held_is_not_reused():
    a = ref((6, 6))
    x = sp.array(a)
    kept = []

    def make():
        t = x + 1.0
        kept.append(t.local.copy())
        kept.append(t.local)
        kept.append(t.local[::-1])
        return t

    r = make() * 3.0
    assert_eq(r, (a + 1.0) * 3.0, exact=True)
    numpy.testing.assert_array_equal(kept[1], kept[0])
    numpy.testing.assert_array_equal(kept[2], kept[0][::-1])


def test_from_local_block_is_not_overwritten_by_an_operator():
    rank, size = world()
    blk = numpy.arange(6.0).reshape(2, 3) + 10 * rank
    saved = blk.copy()
    r = sp.from_local(blk) * 2.0
    numpy.testing.assert_array_equal(blk, saved)
    numpy.testing.assert_array_equal(r.local, saved * 2.0)
    r2 = sp.from_local(blk[:, 1:]) + 1.0
    numpy.testing.assert_array_equal(blk, saved)
    numpy.testing.assert_array_equal(r2.local, saved[:, 1:] + 1.0)


def test_local_kept_on_some_ranks_only_gives_the_same_result_everywhere():
    rank, _ = world()
    a, b = ref((6, 6)), ref((6,), seed=1)
    x, y = sp.array(a), sp.array(b)
    kept = []

    def make(view):
        t = view + 1.0  # a temporary living where the view lives
        if rank == 0:
            kept.append(t.local)  # not collective: only rank 0 holds its block
        return t

    assert_eq(make(x[2]) * y, (a[2] + 1.0) * b, exact=True)
    assert_eq(make(x[:, 4]) - y, (a[:, 4] + 1.0) - b, exact=True)
    assert_eq(make(x.T) / x, (a.T + 1.0) / a, exact=True)
    assert_eq(make(x[::-1]) + x, (a[::-1] + 1.0) + a, exact=True)


# ------------------------------------------------------- cached halos after writes


def _writes():
    """Collective writes into the base ``x`` (and NumPy's ``a``), each through another path."""

    def setitem(x, a):
        x[2:5, 1:] = 7.0
        a[2:5, 1:] = 7.0

    def inplace_view(x, a):
        v = x[1:, :]
        v *= 2.0
        a[1:, :] *= 2.0

    def ufunc_out_view(x, a):
        numpy.negative(x[:, 2:], out=x[:, 2:])
        numpy.negative(a[:, 2:], out=a[:, 2:])

    def transposed_out(x, a):
        numpy.add(x.T, 1.0, out=x.T)
        a += 1.0

    def reduce_out(x, a):
        x.sum(axis=0, out=x[3])
        a[3] = a.sum(axis=0)

    def accumulate_out(x, a):
        numpy.add.accumulate(x, axis=1, out=x)
        numpy.add.accumulate(a, axis=1, out=a)

    def matmul_out(x, a):
        numpy.matmul(x[:, :7], numpy.eye(7) * 0.5, out=x[:, :7])
        a[:, :7] = a[:, :7] @ (numpy.eye(7) * 0.5)

    def fill(x, a):
        x[::2].fill(-3.0)
        a[::2] = -3.0

    def where_out(x, a):
        m = numpy.arange(8 * 9).reshape(8, 9) % 3 == 0
        numpy.multiply(x, 10.0, out=x, where=m)
        numpy.multiply(a, 10.0, out=a, where=m)

    return [
        setitem,
        inplace_view,
        ufunc_out_view,
        transposed_out,
        reduce_out,
        accumulate_out,
        matmul_out,
        fill,
        where_out,
    ]


@pytest.mark.parametrize("write", _writes(), ids=lambda f: f.__name__)
def test_cached_halos_see_every_write(write):
    a = ref((8, 9))
    x = sp.array(a)
    # fill halo caches of several shifted views
    assert_eq(x[1:, :] - x[:-1, :], a[1:, :] - a[:-1, :], exact=True)
    assert_eq(x[:, 1:] + x[:, :-1], a[:, 1:] + a[:, :-1], exact=True)
    assert_eq(x[1:, 1:] * x[:-1, :-1], a[1:, 1:] * a[:-1, :-1], exact=True)
    write(x, a)
    assert_eq(x, a, rtol=1e-12)
    assert_eq(x[1:, :] - x[:-1, :], a[1:, :] - a[:-1, :], rtol=1e-12, atol=1e-12)
    assert_eq(x[:, 1:] + x[:, :-1], a[:, 1:] + a[:, :-1], rtol=1e-12, atol=1e-12)
    assert_eq(x[1:, 1:] * x[:-1, :-1], a[1:, 1:] * a[:-1, :-1], rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------- layouts of operands


def test_operands_from_reductions_and_differently_laid_out_views():
    a, b = ref((9, 7)), ref((7, 9), seed=1)
    x, y = sp.array(a), sp.array(b)
    s0 = x.sum(axis=0)  # replicated along the reduced grid axis
    s1 = x.max(axis=1, keepdims=True)
    assert_eq(s0 + y.T, a.sum(axis=0) + b.T, rtol=1e-12, atol=1e-13)
    assert_eq(y[:, ::-1].T * s1, b[:, ::-1].T * a.max(axis=1, keepdims=True), exact=True)
    assert_eq(s0 * y[2, :7], a.sum(axis=0) * b[2, :7], rtol=1e-12)
    assert_eq(x[4] + y[:, 3], a[4] + b[:, 3], exact=True)  # two views living on different ranks
    o = sp.zeros((7, 9))
    numpy.add(x.T, y, out=o, where=sp.array(b > 0))
    no = numpy.zeros((7, 9))
    numpy.add(a.T, b, out=no, where=b > 0)
    assert_eq(o, no, exact=True)
    q = sp.zeros((9, 7))
    numpy.subtract(y.T, s0, out=q)  # out laid out like x, inputs transposed / replicated
    assert_eq(q, b.T - a.sum(axis=0), rtol=1e-12, atol=1e-13)


def test_arrays_on_different_communicators_raise():
    from mpi4py import MPI

    x = sp.ones((4, 3))
    y = sp.ones((4, 3), comm=MPI.COMM_SELF)  # a different communicator, even with one rank
    with pytest.raises(ValueError, match="communicator"):
        x + y
    assert_eq(y * 2, numpy.full((4, 3), 2.0))
