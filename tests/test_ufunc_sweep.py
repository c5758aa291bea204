"""Every NumPy ufunc, elementwise, against NumPy at any rank count.

Run serially and under ``mpiexec -n 2/3/4``; every test body is SPMD and compares
the gathered result with NumPy's, dtype included.
"""

import numpy
import pytest
from helpers import assert_eq, real_gpu, ref

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


# CuPy kernels that differ from NumPy beyond rounding (documented in docs/gpu.md).
_GPU_DIFFERENT = {"lcm-bb": "CuPy's int8 lcm wraps on overflow differently from NumPy's"}


@pytest.mark.parametrize("name,ins", SWEEP)
def test_ufunc_sweep(name, ins):
    if real_gpu() and f"{name}-{ins}" in _GPU_DIFFERENT:
        pytest.skip(_GPU_DIFFERENT[f"{name}-{ins}"])
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


@pytest.mark.skipif(real_gpu(), reason="GPUs have no long double (float128): CuPy rejects the dtype")
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
def test_other_gufuncs(name):
    a = ref((5, 5))
    x = sp.array(a)
    assert_eq(getattr(numpy, name)(x, x), getattr(numpy, name)(a, a), rtol=1e-12, atol=1e-13)
