"""Logic and comparison functions, dtype utilities, complex parts, flags,
text, bit packing, errstate agreement, and the Array API namespace, against NumPy.

Every test runs on every rank (1-4 ranks); NumPy computes each expected value.
"""

from __future__ import annotations

import numpy
import pytest
from helpers import assert_eq, block, host, ref, world

import spmdarray as sp
from spmdarray import array_api as xp

SHAPES = [(7,), (5, 6), (3, 4, 5), (1, 7, 1), (4, 0, 3)]
DTYPES = [bool, numpy.int32, numpy.int64, numpy.float32, numpy.float64, numpy.complex128]


def _special(shape, dtype=float):
    """A reference array with NaN, +inf and -inf sprinkled in (float/complex)."""
    a = ref(shape, dtype)
    flat = a.reshape(-1)
    if flat.size and numpy.dtype(dtype).kind in "fc":
        flat[::3] = numpy.nan
        flat[1::5] = numpy.inf
        flat[2::7] = -numpy.inf
    return a


# ---------------------------------------------------------------- comparison
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: numpy.dtype(d).name)
def test_isclose_allclose_array_equal(shape, dtype):
    a = _special(shape, dtype)
    b = a.copy()
    if b.size and b.dtype.kind != "b":
        b.reshape(-1)[-1] += 1
    x, y = sp.array(a), sp.array(b)
    for eq in (False, True):
        assert_eq(numpy.isclose(x, y, equal_nan=eq), numpy.isclose(a, b, equal_nan=eq))
        assert numpy.allclose(x, y, equal_nan=eq) == numpy.allclose(a, b, equal_nan=eq)
        assert numpy.allclose(x, x, equal_nan=eq) == numpy.allclose(a, a, equal_nan=eq)
        assert numpy.array_equal(x, x, equal_nan=eq) == numpy.array_equal(a, a, equal_nan=eq)
        assert numpy.array_equal(x, y, equal_nan=eq) == numpy.array_equal(a, b, equal_nan=eq)
    assert numpy.array_equiv(x, x) == numpy.array_equiv(a, a)
    assert numpy.array_equal(x, x[..., None]) is False
    assert numpy.array_equiv(x, y) == numpy.array_equiv(a, b)
    if a.ndim > 1:
        assert numpy.array_equiv(x[:1], x) == numpy.array_equiv(a[:1], a)
        assert numpy.array_equiv(x, x[:, :1]) == numpy.array_equiv(a, a[:, :1])
    assert_eq(numpy.isclose(x[::-2], y[::-2], rtol=0.1), numpy.isclose(a[::-2], b[::-2], rtol=0.1))


# -------------------------------------------------------------- elementwise
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [numpy.int32, numpy.float32, numpy.float64, numpy.complex128], ids=str)
def test_nan_to_num_copy_and_in_place(shape, dtype):
    a = _special(shape, dtype)
    x = sp.array(a)
    assert_eq(numpy.nan_to_num(x), numpy.nan_to_num(a), exact=True)
    kw = {"nan": -1.5, "posinf": 7.0, "neginf": -7.0}
    assert_eq(numpy.nan_to_num(x[::-2], **kw), numpy.nan_to_num(a[::-2], **kw), exact=True)
    r = numpy.nan_to_num(x, copy=False, **kw)
    numpy.nan_to_num(a, copy=False, **kw)
    assert r is x
    assert_eq(x, a, exact=True)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_rounding_and_infinities(shape):
    a = _special(shape) * 3.7
    x = sp.array(a)
    assert_eq(numpy.fix(x), numpy.fix(a), exact=True)
    assert_eq(numpy.around(x, 1), numpy.around(a, 1), exact=True)
    assert_eq(numpy.round(x[::-2], -1), numpy.round(a[::-2], -1), exact=True)
    assert_eq(numpy.clip(x, -1, 2), numpy.clip(a, -1, 2), exact=True)
    assert_eq(x.clip(max=0.5), a.clip(max=0.5), exact=True)
    assert_eq(numpy.isposinf(x), numpy.isposinf(a))
    assert_eq(numpy.isneginf(x), numpy.isneginf(a))
    assert_eq(numpy.isfinite(x), numpy.isfinite(a))
    i = ref(shape, numpy.int64)
    assert_eq(numpy.fix(sp.array(i)), numpy.fix(i))
    assert_eq(numpy.isposinf(sp.array(i)), numpy.isposinf(i))
    out = sp.zeros(shape, bool)
    numpy.isneginf(x, out=out)
    assert_eq(out, numpy.isneginf(a))
    c = sp.array(ref(shape, complex))
    with pytest.raises(TypeError):
        numpy.isposinf(c)
    with pytest.raises(TypeError):
        numpy.isneginf(c)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [numpy.int32, numpy.float64, numpy.complex128], ids=str)
def test_complex_parts_and_angle(shape, dtype):
    a = ref(shape, dtype)
    if a.dtype.kind == "c" and a.size:
        a.reshape(-1)[::2] = a.reshape(-1)[::2].real  # some exactly real
    x = sp.array(a)
    for f in (numpy.real, numpy.imag, numpy.iscomplex, numpy.isreal):
        assert_eq(f(x), f(a), exact=True)
    assert_eq(x.real, a.real, exact=True)
    assert_eq(x.imag, a.imag, exact=True)
    assert_eq(x[::-2].imag, a[::-2].imag, exact=True)
    assert_eq(numpy.angle(x), numpy.angle(a))
    assert_eq(numpy.angle(x, deg=True), numpy.angle(a, deg=True))
    assert numpy.iscomplexobj(x) == numpy.iscomplexobj(a)
    assert numpy.isrealobj(x) == numpy.isrealobj(a)
    rc = numpy.real_if_close(x)
    assert_eq(rc, numpy.real_if_close(a))
    if a.dtype.kind == "c" and numpy.real_if_close(a).dtype.kind != "c" and a.size:
        assert numpy.shares_memory(rc, x)  # a view, as in NumPy
    small = a + 1e-16j if a.dtype.kind == "c" else a
    assert_eq(numpy.real_if_close(sp.array(small)), numpy.real_if_close(small))


@pytest.mark.parametrize("shape", [(7,), (5, 6), (3, 4, 5)], ids=str)
def test_real_and_imag_are_writable_views(shape):
    a = ref(shape, complex)
    x = sp.array(a)
    x.real[...] = 2.0
    a.real[...] = 2.0
    assert_eq(x, a, exact=True)
    x.imag = sp.array(ref(shape, float, seed=3))
    a.imag = ref(shape, float, seed=3)
    assert_eq(x, a, exact=True)
    v, w = x[::-2], a[::-2]
    v.imag[...] *= -1
    w.imag[...] *= -1
    assert_eq(x, a, exact=True)
    # A shifted view of a part sees later writes to the parent (halo caches agree).
    assert_eq(x.real[1:] - x.real[:-1], a.real[1:] - a.real[:-1], exact=True)
    x += 1.0
    a += 1.0
    assert_eq(x.real[1:] - x.real[:-1], a.real[1:] - a.real[:-1], exact=True)
    x.real[1:] = x.imag[:-1]
    a.real[1:] = a.imag[:-1]
    assert_eq(x, a, exact=True)
    assert_eq(x[1:] + x[:-1], a[1:] + a[:-1], exact=True)
    with pytest.raises(TypeError):
        sp.arange(3.0).imag = 1.0
    r = sp.arange(5.0)
    assert numpy.shares_memory(r.real, r)


# ---------------------------------------------------------------- dtypes
def test_dtype_utilities_read_dtypes_only():
    x = sp.array(ref((5, 6), numpy.int32))
    c = sp.array(ref((4,), numpy.complex64))
    a, ac = ref((5, 6), numpy.int32), ref((4,), numpy.complex64)
    with sp.comm_stats() as s:
        assert numpy.result_type(x, 1.0) == numpy.result_type(a, 1.0)
        assert numpy.result_type(x, c, numpy.float32) == numpy.result_type(a, ac, numpy.float32)
        assert numpy.can_cast(x, numpy.int64) == numpy.can_cast(a, numpy.int64)
        assert numpy.can_cast(x, numpy.int8) == numpy.can_cast(a, numpy.int8)
        assert numpy.min_scalar_type(x) == numpy.min_scalar_type(a)
        assert numpy.common_type(x) == numpy.common_type(a)
        assert numpy.common_type(x, c) == numpy.common_type(a, ac)
        assert numpy.iscomplexobj(c) and not numpy.isrealobj(c)
        assert numpy.isrealobj(x) and not numpy.iscomplexobj(x)
        assert numpy.isdtype(x.dtype, "integral")
        assert numpy.ndim(x) == 2 and numpy.shape(x) == (5, 6) and numpy.size(x) == 30 and numpy.size(x, 1) == 6
        assert sp.mintypecode("idD") == numpy.mintypecode("idD")
    assert s.collectives == 0 and s.messages_sent == 0
    z = sp.asarray(numpy.array(300))
    assert numpy.min_scalar_type(z) == numpy.min_scalar_type(numpy.array(300))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: numpy.dtype(d).name)
def test_astype_function_and_copy(dtype):
    a = ref((5, 6), dtype)
    x = sp.array(a)
    for to in (numpy.float32, numpy.int64, numpy.complex128, bool):
        assert_eq(numpy.astype(x, to), numpy.astype(a, to), exact=True)
        assert_eq(numpy.astype(x[::-2], to), numpy.astype(a[::-2], to), exact=True)
    assert numpy.astype(x, dtype, copy=False) is x
    y = numpy.copy(x)
    y[...] = 0
    assert_eq(x, a, exact=True)


# ------------------------------------------------------------ memory, flags
def test_shares_memory_matches_numpy():
    a = numpy.zeros((6, 8))
    x = sp.zeros((6, 8))
    views = [
        lambda m: m,
        lambda m: m[1],
        lambda m: m[2:4],
        lambda m: m[::2],
        lambda m: m[1::2],
        lambda m: m[:, ::3],
        lambda m: m[:, 1::3],
        lambda m: m.T,
        lambda m: m[::-1, 5:0:-2],
        lambda m: m[3:3],
        lambda m: m[None, 4],
    ]
    for f in views:
        for g in views:
            assert numpy.shares_memory(f(x), g(x)) == numpy.shares_memory(f(a), g(a))
            if numpy.may_share_memory(f(a), g(a)):
                pass
            else:
                assert not numpy.may_share_memory(f(x), g(x))
            if numpy.shares_memory(f(a), g(a)):
                assert numpy.may_share_memory(f(x), g(x))
    assert not numpy.shares_memory(x, sp.zeros((6, 8)))
    c = sp.zeros(4, complex)
    assert not numpy.shares_memory(c.real, c.imag)
    assert numpy.shares_memory(c.real, c)


def test_flags_and_isfortran_match_numpy():
    a = numpy.zeros((4, 5, 3))
    x = sp.zeros((4, 5, 3))
    for f in (
        lambda m: m,
        lambda m: m.T,
        lambda m: m[1],
        lambda m: m[:, 1:3],
        lambda m: m[::2],
        lambda m: m[..., 0],
        lambda m: m[0].T,
        lambda m: m[None],
        lambda m: m[::-1],
    ):
        fx, fa = f(x).flags, f(a).flags
        for k in ("C_CONTIGUOUS", "F_CONTIGUOUS", "FNC", "FORC", "C", "F"):
            assert fx[k] == fa[k], (k, f(a).shape)
        assert fx.c_contiguous == fa.c_contiguous and fx.f_contiguous == fa.f_contiguous
        assert numpy.isfortran(f(x)) == numpy.isfortran(f(a))
        assert sp.isfortran(f(x)) == numpy.isfortran(f(a))
    assert x.flags.owndata and not x[1].flags.owndata and x.flags.writeable
    with pytest.raises(AttributeError):
        x.strides  # noqa: B018
    with pytest.raises(NotImplementedError):
        x.strides  # noqa: B018
    assert not hasattr(x, "strides")


# -------------------------------------------------------------- errstate
def test_errstate_raise_reaches_every_rank():
    rank, size = world()
    # Only the last element divides by zero: one rank holds it.
    a = numpy.ones(11)
    a[-1] = 0.0
    x = sp.array(a)
    with numpy.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            1.0 / x
        with pytest.raises(FloatingPointError):
            numpy.log(x)
    with sp.errstate(all="raise"):
        y = x + 1.0  # no error anywhere: no exception
    assert_eq(y, a + 1.0)
    big = numpy.full(9, 1e308)
    big[:-1] = 1.0
    with numpy.errstate(over="raise"):
        with pytest.raises(FloatingPointError):
            sp.array(big) * 10.0
        with pytest.raises(FloatingPointError):
            numpy.sum(sp.array(numpy.full(9, 1e308)))
        with pytest.raises(FloatingPointError):
            sp.array(numpy.full((4, 5), 1e308)).sum(axis=0)
        # Only the rank holding the last block overflows in its partial sum.
        one = numpy.ones(12)
        one[-2:] = 1e308
        with pytest.raises(FloatingPointError):
            numpy.sum(sp.array(one))
        with pytest.raises(FloatingPointError):
            sp.array(one.reshape(2, 6)).sum(axis=1)
        with pytest.raises(FloatingPointError):
            numpy.mean(sp.array(one))
    with numpy.errstate(invalid="raise"):
        with pytest.raises(FloatingPointError):
            numpy.sqrt(sp.array(numpy.r_[numpy.ones(8), -1.0]))
    # Outside errstate the default warns and gives NumPy's result.
    with numpy.errstate(divide="ignore"):
        assert_eq(1.0 / x, 1.0 / a)


# ------------------------------------------------------------------ text
@pytest.mark.parametrize("shape", [(7,), (5, 6), (0,), (30, 40)], ids=str)
def test_text_functions_match_numpy(shape):
    a = ref(shape)
    x = sp.array(a)
    assert numpy.array2string(x) == numpy.array2string(a)
    assert numpy.array2string(x, precision=2, separator=", ") == numpy.array2string(a, precision=2, separator=", ")
    assert numpy.array2string(x, threshold=5, edgeitems=2) == numpy.array2string(a, threshold=5, edgeitems=2)
    assert numpy.array_repr(x) == numpy.array_repr(a)
    assert numpy.array_str(x, precision=3) == numpy.array_str(a, precision=3)


# ------------------------------------------------------------- bit packing
@pytest.mark.parametrize("shape", [(7,), (17,), (5, 6), (3, 12, 5), (4, 0, 3), (1, 9)], ids=str)
def test_packbits_unpackbits(shape):
    a = ref(shape, bool)
    x = sp.array(a)
    for order in ("big", "little"):
        assert_eq(numpy.packbits(x, bitorder=order), numpy.packbits(a, bitorder=order), exact=True)
        for ax in range(-len(shape), len(shape)):
            p = numpy.packbits(a, axis=ax, bitorder=order)
            px = numpy.packbits(x, axis=ax, bitorder=order)
            assert_eq(px, p, exact=True)
            assert_eq(numpy.unpackbits(px, axis=ax, bitorder=order), numpy.unpackbits(p, axis=ax, bitorder=order))
            n = p.shape[ax] * 8
            with pytest.raises(ValueError):
                numpy.unpackbits(px, axis=ax, count=-n - 1)
            for count in (0, 3, n, n + 5, -n) + ((-2,) if n else ()):
                want = numpy.unpackbits(p, axis=ax, count=count, bitorder=order)
                if n == 0:
                    want = numpy.zeros_like(want)  # NumPy leaves the padding uninitialised here
                assert_eq(numpy.unpackbits(px, axis=ax, count=count, bitorder=order), want)
        p = numpy.packbits(a, bitorder=order)
        px = sp.array(p)
        for count in (None, 5, 8 * p.size + 4) + ((-3,) if p.size else ()):
            want = numpy.unpackbits(p, count=count, bitorder=order)
            if p.size == 0:
                want = numpy.zeros_like(want)  # NumPy leaves the padding uninitialised here
            assert_eq(numpy.unpackbits(px, count=count, bitorder=order), want)
    i = ref(shape, numpy.int32) % 2
    assert_eq(numpy.packbits(sp.array(i)), numpy.packbits(i), exact=True)
    assert_eq(numpy.packbits(sp.array(a)[::-2]), numpy.packbits(a[::-2]), exact=True)


def test_bit_and_misc_errors_are_numpys():
    x = sp.array(ref((5, 6), bool))
    for f, exc in (
        (lambda m: numpy.packbits(m, axis=2), numpy.exceptions.AxisError),
        (lambda m: numpy.packbits(m, bitorder="middle"), ValueError),
        (lambda m: numpy.packbits(m.astype(float)), TypeError),
        (lambda m: numpy.unpackbits(m), TypeError),
        (lambda m: numpy.unpackbits(m.astype(numpy.uint8), axis=-3), numpy.exceptions.AxisError),
        (lambda m: numpy.astype(m, "no-such-dtype"), TypeError),
    ):
        with pytest.raises(exc):
            f(numpy.asarray(x) if False else ref((5, 6), bool))
        with pytest.raises(exc):
            f(x)
    d = sp.zeros(3, dtype="datetime64[D]") if False else None
    assert d is None
    with pytest.raises(NotImplementedError, match="busday_count"):
        numpy.busday_count(sp.zeros(3, int), sp.zeros(3, int))


# ------------------------------------------------------------- Array API
# Names the Array API standard 2024.12 requires in the main namespace (from the spec).
SPEC_FUNCTIONS = """
abs acos acosh add asin asinh atan atan2 atanh bitwise_and bitwise_left_shift bitwise_invert bitwise_or
bitwise_right_shift bitwise_xor ceil clip conj copysign cos cosh divide equal exp expm1 floor floor_divide
greater greater_equal hypot imag isfinite isinf isnan less less_equal log log1p log2 log10 logaddexp
logical_and logical_not logical_or logical_xor maximum minimum multiply negative nextafter not_equal
positive pow real reciprocal remainder round sign signbit sin sinh square sqrt subtract tan tanh trunc
arange asarray empty empty_like eye from_dlpack full full_like linspace meshgrid ones ones_like tril triu
zeros zeros_like
astype can_cast finfo iinfo isdtype result_type
take take_along_axis
matmul matrix_transpose tensordot vecdot
broadcast_arrays broadcast_to concat expand_dims flip moveaxis permute_dims repeat reshape roll squeeze
stack tile unstack
argmax argmin count_nonzero nonzero searchsorted where
unique_all unique_counts unique_inverse unique_values
argsort sort
cumulative_prod cumulative_sum max mean min prod std sum var
all any diff
__array_namespace_info__
""".split()
SPEC_CONSTANTS = "e inf nan newaxis pi".split()
SPEC_DTYPES = "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64 complex64 complex128".split()
SPEC_LINALG = """cholesky cross det diagonal eigh eigvalsh inv matmul matrix_norm matrix_power matrix_rank
matrix_transpose outer pinv qr slogdet solve svd svdvals tensordot trace vecdot vector_norm""".split()
SPEC_ARRAY_ATTRIBUTES = """
__abs__ __add__ __and__ __array_namespace__ __bool__ __complex__ __dlpack__ __dlpack_device__ __eq__ __float__
__floordiv__ __ge__ __getitem__ __gt__ __index__ __int__ __invert__ __le__ __lshift__ __lt__ __matmul__ __mod__
__mul__ __ne__ __neg__ __or__ __pos__ __pow__ __rshift__ __setitem__ __sub__ __truediv__ __xor__ __iadd__ __radd__
__iand__ __rand__ __ifloordiv__ __rfloordiv__ __ilshift__ __rlshift__ __imatmul__ __rmatmul__ __imod__ __rmod__
__imul__ __rmul__ __ior__ __ror__ __ipow__ __rpow__ __irshift__ __rrshift__ __isub__ __rsub__ __itruediv__
__rtruediv__ __ixor__ __rxor__ dtype device mT ndim shape size T to_device
""".split()
SPEC_FFT = "fft ifft fftn ifftn rfft irfft rfftn irfftn hfft ihfft fftfreq rfftfreq fftshift ifftshift".split()


def test_namespace_has_every_standard_name():
    ns = sp.zeros(3).__array_namespace__()
    assert ns is xp and ns.__array_api_version__ == "2024.12"
    assert set(SPEC_FUNCTIONS + SPEC_CONSTANTS + SPEC_DTYPES) <= set(ns.__all__) | {"__array_namespace_info__"}
    assert {"linalg", "fft"} <= set(ns.__all__)
    missing = [n for n in SPEC_FUNCTIONS + SPEC_CONSTANTS + SPEC_DTYPES if not hasattr(ns, n)]
    assert not missing, missing
    assert [n for n in SPEC_FUNCTIONS if not callable(getattr(ns, n))] == []
    assert [n for n in SPEC_LINALG if not callable(getattr(ns.linalg, n, None))] == []
    assert [n for n in SPEC_FFT if not callable(getattr(ns.fft, n, None))] == []
    assert ns.newaxis is None and ns.pi == numpy.pi and numpy.isnan(ns.nan)
    x = sp.zeros((2, 3))
    assert [n for n in SPEC_ARRAY_ATTRIBUTES if not hasattr(x, n)] == []
    for v in ("2023.12", "2024.12", None):
        assert sp.ones(2).__array_namespace__(api_version=v) is xp
    with pytest.raises(ValueError):
        sp.ones(2).__array_namespace__(api_version="1999.01")


def test_namespace_info():
    info = xp.__array_namespace_info__()
    assert info.default_device() in info.devices()
    assert info.default_device() == sp.zeros(2).device
    caps = info.capabilities()
    assert set(caps) == {"boolean indexing", "data-dependent shapes", "max dimensions"}
    d = info.default_dtypes()
    assert d["real floating"] == xp.float64 and d["complex floating"] == xp.complex128
    assert d["integral"] == d["indexing"] == numpy.dtype(numpy.intp)
    assert set(info.dtypes()) == set(SPEC_DTYPES)
    assert set(info.dtypes(kind="real floating")) == {"float32", "float64"}
    assert set(info.dtypes(kind=("integral", "bool"))) == set(
        numpy.__array_namespace_info__().dtypes(kind=("integral", "bool"))
    )
    with pytest.raises(ValueError):
        info.dtypes(device="tpu")


@pytest.mark.parametrize("shape", [(7,), (5, 6), (3, 4, 5), (0, 3)], ids=str)
def test_namespace_elementwise_and_reductions(shape):
    a = numpy.abs(ref(shape)) + 0.5
    b = ref(shape, seed=2)
    x, y = xp.asarray(a), xp.asarray(b)
    for name in ("acos", "asin", "atan", "acosh", "asinh", "atanh"):
        arg = a / (a.max() + 1) if (a.size and name in ("acos", "asin", "atanh")) else (a + 1 if name == "acosh" else a)
        assert_eq(getattr(xp, name)(xp.asarray(arg)), getattr(numpy, name)(arg))
    assert_eq(xp.atan2(x, y), numpy.atan2(a, b))
    assert_eq(xp.pow(x, y), numpy.pow(a, b))
    assert_eq(xp.hypot(x, y), numpy.hypot(a, b))
    assert_eq(xp.copysign(x, y), numpy.copysign(a, b), exact=True)
    assert_eq(xp.signbit(y), numpy.signbit(b))
    assert_eq(xp.nextafter(x, y), numpy.nextafter(a, b), exact=True)
    assert_eq(xp.reciprocal(x), numpy.reciprocal(a))
    assert_eq(xp.maximum(x, y), numpy.maximum(a, b), exact=True)
    assert_eq(xp.round(y), numpy.round(b), exact=True)
    assert_eq(xp.clip(y, min=-0.5), numpy.clip(b, -0.5, None), exact=True)
    assert_eq(xp.clip(y, max=0.5), numpy.clip(b, None, 0.5), exact=True)
    assert_eq(xp.clip(y), b, exact=True)
    ia, ib = ref(shape, numpy.int64), ref(shape, numpy.int64, seed=1)
    assert_eq(xp.bitwise_invert(xp.asarray(ia)), numpy.invert(ia))
    assert_eq(xp.bitwise_left_shift(xp.asarray(ia), 2), numpy.left_shift(ia, 2))
    assert_eq(xp.bitwise_xor(xp.asarray(ia), xp.asarray(ib)), ia ^ ib)
    assert_eq(xp.std(y, correction=1), numpy.std(b, ddof=1)) if b.size > 1 else None
    assert_eq(xp.var(y, axis=0, correction=0), numpy.var(b, axis=0))
    assert_eq(xp.sum(x, axis=-1, keepdims=True), numpy.sum(a, axis=-1, keepdims=True))
    assert_eq(xp.cumulative_sum(x, axis=0), numpy.cumulative_sum(a, axis=0))
    assert_eq(xp.max(y, axis=0), numpy.max(b, axis=0)) if b.shape[0] else None
    assert_eq(xp.all(x > 0), numpy.all(a > 0))
    assert_eq(xp.diff(y, axis=0), numpy.diff(b, axis=0))
    assert_eq(xp.where(x > 1, x, y), numpy.where(a > 1, a, b))
    assert_eq(xp.count_nonzero(x > 1), numpy.count_nonzero(a > 1))


@pytest.mark.parametrize("shape", [(7,), (5, 6), (3, 4, 5)], ids=str)
def test_namespace_creation_and_manipulation(shape):
    a = ref(shape)
    x = xp.asarray(a)
    dev = x.device
    assert_eq(xp.zeros(shape, device=dev), numpy.zeros(shape))
    assert_eq(xp.ones(shape, dtype=xp.int32), numpy.ones(shape, numpy.int32))
    assert_eq(xp.full(shape, 2.5), numpy.full(shape, 2.5))
    assert xp.empty(shape).shape == shape and xp.empty(shape).dtype == xp.float64
    assert_eq(xp.arange(3, 17, 2, dtype=xp.int64), numpy.arange(3, 17, 2))
    assert_eq(xp.linspace(0, 1, 9, endpoint=False), numpy.linspace(0, 1, 9, endpoint=False))
    assert_eq(xp.eye(4, 6, k=1), numpy.eye(4, 6, k=1))
    assert_eq(xp.zeros_like(x, dtype=xp.int8), numpy.zeros_like(a, numpy.int8))
    assert_eq(xp.ones_like(x), numpy.ones_like(a))
    assert_eq(xp.full_like(x, 7), numpy.full_like(a, 7))
    assert xp.empty_like(x).shape == shape
    assert_eq(xp.astype(x, xp.float32), a.astype(numpy.float32))
    assert xp.astype(x, xp.float64, copy=False) is x
    assert_eq(xp.astype(x, xp.int32, device=dev), a.astype(numpy.int32))
    assert xp.asarray(x) is x
    c = xp.asarray(x, copy=True)
    c[...] = 0
    assert_eq(x, a)
    perm = tuple(reversed(range(len(shape))))
    assert_eq(xp.permute_dims(x, perm), numpy.permute_dims(a, perm), exact=True)
    assert_eq(xp.concat([x, x], axis=0), numpy.concat([a, a], axis=0), exact=True)
    assert_eq(xp.concat([x, x], axis=None), numpy.concat([a, a], axis=None), exact=True)
    assert_eq(xp.stack([x, x], axis=-1), numpy.stack([a, a], axis=-1), exact=True)
    assert_eq(xp.expand_dims(x), numpy.expand_dims(a, 0), exact=True)
    assert_eq(xp.flip(x, axis=0), numpy.flip(a, axis=0), exact=True)
    assert_eq(xp.moveaxis(x, 0, -1), numpy.moveaxis(a, 0, -1), exact=True)
    assert_eq(xp.reshape(x, (-1,)), numpy.reshape(a, (-1,)), exact=True)
    assert_eq(xp.roll(x, 2, axis=0), numpy.roll(a, 2, axis=0), exact=True)
    assert_eq(xp.squeeze(xp.expand_dims(x, axis=0), 0), a, exact=True)
    for ax in range(-len(shape), len(shape)):
        got, want = xp.unstack(x, axis=ax), numpy.unstack(a, axis=ax)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_eq(g, numpy.asarray(w), exact=True)  # the standard's 0-d arrays where NumPy gives scalars
    if len(shape) >= 2:
        assert_eq(xp.matrix_transpose(x), numpy.matrix_transpose(a), exact=True)
        assert_eq(x.mT, a.mT, exact=True)
        assert_eq(xp.tril(x, k=1), numpy.tril(a, k=1), exact=True)
        assert_eq(xp.triu(x), numpy.triu(a), exact=True)
    else:
        with pytest.raises(ValueError):
            x.mT  # noqa: B018


def test_namespace_dtype_functions():
    x = xp.asarray(ref((5,), numpy.int16))
    assert xp.result_type(x, xp.float32) == numpy.result_type(numpy.int16, numpy.float32)
    assert xp.can_cast(x, xp.int64) and not xp.can_cast(x, xp.int8)
    assert xp.finfo(xp.float32).eps == numpy.finfo(numpy.float32).eps
    assert xp.finfo(xp.asarray(ref((2,)))).bits == 64
    assert xp.iinfo(x).max == numpy.iinfo(numpy.int16).max
    assert xp.isdtype(x.dtype, ("integral", "real floating")) and not xp.isdtype(x.dtype, "bool")


def test_namespace_forwards_to_the_distributed_functions():
    # Every forwarded name now has a distributed implementation: compare with NumPy.
    a = numpy.array([3.0, 1.0, 2.0, 1.0, 5.0, 0.0])
    x = xp.asarray(a)
    assert_eq(xp.sort(x), numpy.sort(a), exact=True)
    assert_eq(xp.sort(x, descending=True), numpy.sort(a)[::-1], exact=True)
    assert_eq(xp.argsort(x), numpy.argsort(a, kind="stable"), exact=True)
    assert_eq(xp.argsort(x, descending=True), numpy.flip(numpy.argsort(a[::-1], kind="stable")).__rsub__(5))
    assert_eq(xp.unique_values(x), numpy.unique(a), exact=True)
    assert_eq(xp.tile(x, (2,)), numpy.tile(a, (2,)), exact=True)
    assert_eq(xp.take(x, xp.asarray(numpy.array([0, 2]))), numpy.take(a, [0, 2]), exact=True)
    assert_eq(xp.fft.fftfreq(8), numpy.fft.fftfreq(8), exact=True)


# ----------------------------------------------------------------- dlpack
def test_dlpack_exports_the_local_block():
    rank, size = world()
    x = sp.arange(10.0)
    assert x.__dlpack_device__() == x.local.__dlpack_device__()
    loc = numpy.from_dlpack(x) if x._st.be.name == "numpy" else None
    if loc is not None:
        assert_eq(loc, host(x.local), exact=True)
        assert numpy.shares_memory(loc, x.local) or loc.size == 0
    # from_dlpack wraps each rank's block (stacked along axis 0, like from_local).
    mine = numpy.arange(rank + 1, dtype=numpy.float64) + 10 * rank
    y = sp.from_dlpack(block(mine))
    whole = numpy.concatenate([numpy.arange(r + 1, dtype=numpy.float64) + 10 * r for r in range(size)])
    assert_eq(y, whole, exact=True)
    assert xp.from_dlpack(x) is x
    z = xp.from_dlpack(x, copy=True)
    z[...] = 0
    assert_eq(x, numpy.arange(10.0))
    assert x.to_device(x.device) is x
    c = x.to_device("cpu")
    assert c.device == "cpu" and isinstance(c.local, numpy.ndarray)
    assert_eq(c, numpy.arange(10.0), exact=True)
    if x.device == "gpu":
        assert c.to_device("gpu").device == "gpu"
        assert_eq(c.to_device("gpu"), numpy.arange(10.0), exact=True)
    with pytest.raises(ValueError):
        x.to_device("tpu")
    with pytest.raises(ValueError):
        xp.zeros(3, device="tpu")


@pytest.mark.parametrize("dtype", [numpy.int16, numpy.int64, numpy.float32, numpy.complex128], ids=str)
def test_conj_and_byteswap(dtype):
    a = ref((5, 6), dtype)
    x = sp.array(a)
    assert_eq(x.conj(), a.conj(), exact=True)
    assert_eq(x[::-2].conjugate(), a[::-2].conjugate(), exact=True)
    assert_eq(x.byteswap(), a.byteswap(), exact=True)
    assert_eq(x.T[::-1].byteswap(), a.T[::-1].byteswap(), exact=True)
    r = x.byteswap(inplace=True)
    a.byteswap(inplace=True)
    assert r is x
    assert_eq(x, a, exact=True)


@pytest.mark.parametrize(
    "s1,s2,axis", [((7,), (7,), -1), ((5, 6), (6,), -1), ((3, 4, 5), (4, 5), -2), ((1, 4, 3), (5, 1, 3), 2)], ids=str
)
@pytest.mark.parametrize("dtype", [numpy.int32, numpy.float64, numpy.complex128], ids=str)
def test_vecdot(s1, s2, axis, dtype):
    a, b = ref(s1, dtype), ref(s2, dtype, seed=1)
    want = numpy.vecdot(a, b, axis=axis)
    got = xp.vecdot(xp.asarray(a), xp.asarray(b), axis=axis)
    assert_eq(got, want if want.ndim else want[()])
    assert_eq(xp.linalg.vecdot(xp.asarray(a), b, axis=axis), want if want.ndim else want[()])
    with pytest.raises(ValueError):
        xp.vecdot(xp.asarray(a), xp.asarray(ref(s2[:-1] + (s2[-1] + 1,))))
    with pytest.raises(ValueError):
        xp.asarray(a, copy=False)


def test_namespace_errors_are_numpys():
    x = xp.asarray(ref((3, 1, 4)))
    a = ref((3, 1, 4))
    for f, exc in (
        (lambda m, ns: ns.squeeze(m, 0), ValueError),
        (lambda m, ns: ns.permute_dims(m, (0, 1)), ValueError),
        (lambda m, ns: ns.concat([m, m[:, :, :2]], axis=0), ValueError),
        (lambda m, ns: ns.astype(m, "no-such-dtype"), TypeError),
        (lambda m, ns: ns.sum(m, axis=3), numpy.exceptions.AxisError),
        (lambda m, ns: ns.argmax(m, axis=-4), numpy.exceptions.AxisError),
        (lambda m, ns: ns.add(m, ns.ones((2, 5))), ValueError),
    ):
        with pytest.raises(exc):
            f(a, numpy)
        with pytest.raises(exc):
            f(x, xp)
    with pytest.raises(ValueError):
        xp.unstack(sp.ones(())[...])
    with pytest.raises(numpy.exceptions.AxisError):
        xp.unstack(x, axis=3)


@pytest.mark.parametrize("shape", [(7,), (5, 6), (0, 3)], ids=str)
def test_asarray_chkfinite(shape):
    a = ref(shape)
    assert_eq(sp.asarray_chkfinite(a), numpy.asarray_chkfinite(a), exact=True)
    assert_eq(numpy.asarray_chkfinite(sp.array(a)), a, exact=True)
    assert_eq(sp.asarray_chkfinite(ref(shape, numpy.int32)), ref(shape, numpy.int32), exact=True)
    if a.size:
        a.reshape(-1)[-1] = numpy.inf  # held by one rank only
        with pytest.raises(ValueError):
            numpy.asarray_chkfinite(a)
        with pytest.raises(ValueError):
            sp.asarray_chkfinite(a)
        with pytest.raises(ValueError):
            numpy.asarray_chkfinite(sp.array(a))
