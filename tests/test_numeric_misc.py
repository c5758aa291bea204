"""Window functions, special functions, polynomials, unwrap, interp, trim_zeros,
piecewise and per-line application against NumPy, at every rank count."""

from __future__ import annotations

import numpy
import pytest
from helpers import assert_eq, real_gpu, ref

import spmdarray as sp

SHAPES = [(7,), (6, 5), (3, 4, 5)]


def close(got, want, rtol=1e-12):
    assert_eq(got, want, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("M", [-1, 0, 1, 2, 7, 10, 5.5])
def test_windows(M):
    for name in ("bartlett", "blackman", "hamming", "hanning"):
        got = getattr(sp, name)(M)
        assert isinstance(got, sp.ndarray)
        assert_eq(got, getattr(numpy, name)(M), exact=not real_gpu())
    for beta in (0.0, 5, 14.0):
        if M > 0:
            assert_eq(sp.kaiser(M, beta), numpy.kaiser(M, beta), exact=not real_gpu())


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64, numpy.int32])
def test_i0_sinc(dtype):
    a = ref((6, 5), dtype)
    a[0, 0] = 0
    x = sp.array(a)
    close(numpy.i0(x), numpy.i0(a), 1e-6 if dtype == numpy.float32 else 1e-12)
    close(numpy.sinc(x), numpy.sinc(a), 1e-6 if dtype == numpy.float32 else 1e-12)
    close(numpy.sinc(x[::-2]), numpy.sinc(a[::-2]), 1e-6 if dtype == numpy.float32 else 1e-12)
    with pytest.raises(TypeError):
        numpy.i0(sp.array(ref((4,), complex)))


@pytest.mark.parametrize("dtype", [numpy.complex128, numpy.float64, numpy.int64, numpy.bool_])
def test_angle_real_imag(dtype):
    a = ref((7, 3), dtype)
    x = sp.array(a)
    if numpy.dtype(dtype).kind != "b":
        close(numpy.angle(x), numpy.angle(a))
        close(numpy.angle(x, deg=True), numpy.angle(a, deg=True))
    assert_eq(numpy.real(x), numpy.real(a), exact=True)
    assert_eq(numpy.imag(x), numpy.imag(a), exact=True)
    assert_eq(numpy.real(x[::-2]), numpy.real(a[::-2]), exact=True)


def test_real_if_close():
    a = ref((5, 4), complex)
    x = sp.array(a)
    assert_eq(numpy.real_if_close(x), numpy.real_if_close(a), exact=True)
    b = a.real + 1e-15j
    assert_eq(numpy.real_if_close(sp.array(b)), numpy.real_if_close(b), exact=True)
    r = ref((5,))
    assert_eq(numpy.real_if_close(sp.array(r)), numpy.real_if_close(r), exact=True)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_unwrap(shape):
    rng = numpy.random.default_rng(1)
    a = numpy.cumsum(rng.standard_normal(shape) * 2.5, axis=-1)
    a = numpy.mod(a, 2 * numpy.pi)
    x = sp.array(a)
    for axis in range(len(shape)):
        close(numpy.unwrap(x, axis=axis), numpy.unwrap(a, axis=axis))
        close(numpy.unwrap(x, discont=4.0, axis=axis), numpy.unwrap(a, discont=4.0, axis=axis))
    close(numpy.unwrap(x, period=3.0), numpy.unwrap(a, period=3.0))
    i = numpy.array([0, 1, 2, 8, 9, 3, 1, 7, 5, 4, 0])
    assert_eq(numpy.unwrap(sp.array(i), period=6), numpy.unwrap(i, period=6), exact=True)
    close(numpy.unwrap(x[..., ::-2]), numpy.unwrap(a[..., ::-2]))
    with pytest.raises(numpy.exceptions.AxisError):
        numpy.unwrap(x, axis=5)


def test_interp():
    a = ref((7, 5)) * 3
    x = sp.array(a)
    xp = numpy.linspace(-4, 4, 11)
    fp = numpy.sin(xp)
    close(numpy.interp(x, xp, fp), numpy.interp(a, xp, fp))
    close(numpy.interp(x, xp, fp, left=-9, right=9), numpy.interp(a, xp, fp, left=-9, right=9))
    close(numpy.interp(x, sp.array(xp), sp.array(fp)), numpy.interp(a, xp, fp))
    close(numpy.interp(x, xp, fp + 1j * fp), numpy.interp(a, xp, fp + 1j * fp))
    close(numpy.interp(x[::-2], xp, fp, period=3.0), numpy.interp(a[::-2], xp, fp, period=3.0))
    with pytest.raises(ValueError):
        numpy.interp(x, xp, fp[:-1])


@pytest.mark.parametrize(
    "a",
    [
        numpy.array([0, 0, 3, 0, 5, 0, 0]),
        numpy.zeros(6),
        numpy.array([1.0, 2.0]),
        numpy.pad(numpy.arange(1, 7).reshape(2, 3), ((1, 2), (0, 1))),
        numpy.pad(numpy.ones((2, 2, 1)), 1),
    ],
    ids=["1d", "zeros", "none", "2d", "3d"],
)
def test_trim_zeros(a):
    x = sp.array(a)
    for trim in ("fb", "f", "b", "BF"):
        assert_eq(numpy.trim_zeros(x, trim), numpy.trim_zeros(a, trim), exact=True)
    assert_eq(numpy.trim_zeros(x, axis=0), numpy.trim_zeros(a, axis=0), exact=True)
    assert_eq(numpy.trim_zeros(x, axis=()), numpy.trim_zeros(a, axis=()), exact=True)
    assert_eq(numpy.trim_zeros(x[::-1]), numpy.trim_zeros(a[::-1]), exact=True)
    with pytest.raises(ValueError):
        numpy.trim_zeros(x, "x")


def test_polyval():
    a = ref((7, 3))
    x = sp.array(a)
    for p in ([1.0, -2.0, 3.5], [2], numpy.array([1, 2, 3])):
        close(numpy.polyval(p, x), numpy.polyval(p, a))
    close(numpy.polyval(sp.array([1.0, 2.0]), x), numpy.polyval([1.0, 2.0], a))
    i = ref((6,), numpy.int64)
    assert_eq(numpy.polyval([2, 3], sp.array(i)), numpy.polyval([2, 3], i), exact=True)
    close(numpy.polyval(sp.array([1.0, 2.0]), a), numpy.polyval([1.0, 2.0], a))


def test_replicated_polynomials():
    p, q = numpy.array([1.0, -3.0, 2.0]), numpy.array([2.0, 1.0])
    P, Q = sp.array(p), sp.array(q)
    # numpy.poly/numpy.roots do not dispatch a spmdarray argument: spmdarray has its own.
    close(sp.poly(P), numpy.poly(p))
    close(sp.roots(P), numpy.roots(p))
    close(sp.roots(p), numpy.roots(p))
    assert isinstance(sp.roots(P), sp.ndarray)
    for f in (numpy.polyadd, numpy.polysub, numpy.polymul):
        close(f(P, Q), f(p, q))
        close(f(P, q), f(p, q))
    close(numpy.polyder(P), numpy.polyder(p))
    close(numpy.polyder(P, 2), numpy.polyder(p, 2))
    close(numpy.polyint(P), numpy.polyint(p))
    close(numpy.polyint(P, 2, k=[1, 2]), numpy.polyint(p, 2, k=[1, 2]))
    qq, rr = numpy.polydiv(P, Q)
    eq, er = numpy.polydiv(p, q)
    close(qq, eq)
    close(rr, er)
    assert isinstance(qq, sp.ndarray)


@pytest.mark.parametrize("n", [3, 7, 40])
def test_polyfit(n):
    rng = numpy.random.default_rng(2)
    a = numpy.linspace(-2, 3, n)
    b = 1.5 * a**2 - a + 0.3 + 0.1 * rng.standard_normal(n)
    x, y = sp.array(a), sp.array(b)
    deg = 2
    close(numpy.polyfit(x, y, deg), numpy.polyfit(a, b, deg), 1e-9)
    close(numpy.polyfit(x, b, 1), numpy.polyfit(a, b, 1), 1e-9)
    w = rng.random(n) + 0.5
    close(numpy.polyfit(x, y, deg, w=sp.array(w)), numpy.polyfit(a, b, deg, w=w), 1e-9)
    got, want = numpy.polyfit(x, y, deg, full=True), numpy.polyfit(a, b, deg, full=True)
    for g, e in zip(got, want):
        if isinstance(e, numpy.ndarray):
            close(g, e, 1e-8)
        else:
            assert g == pytest.approx(e)
    Y = numpy.stack([b, 2 * b + 1], axis=1)
    close(numpy.polyfit(x, sp.array(Y), deg), numpy.polyfit(a, Y, deg), 1e-9)
    if n > deg + 1:
        for cov in (True, "unscaled"):
            gc, gv = numpy.polyfit(x, y, deg, cov=cov)
            ec, ev = numpy.polyfit(a, b, deg, cov=cov)
            close(gc, ec, 1e-9)
            close(gv, ev, 1e-7)
        gc, gv = numpy.polyfit(x, sp.array(Y), deg, cov=True)
        close(gv, numpy.polyfit(a, Y, deg, cov=True)[1], 1e-7)
    with pytest.raises(ValueError):
        numpy.polyfit(x, y, -1)
    with pytest.raises(TypeError):
        numpy.polyfit(x, y[:-1], 1)
    with pytest.raises(TypeError):
        numpy.polyfit(sp.array(numpy.ones((2, 2))), y, 1)


@pytest.mark.parametrize("n", [0, 1, 4, 7])
def test_vander(n):
    a = ref((n,))
    x = sp.array(a)
    for N in (None, 0, 1, 3, 6):
        for inc in (False, True):
            assert_eq(numpy.vander(x, N, inc), numpy.vander(a, N, inc), exact=not real_gpu())
            assert_eq(sp.vander(a, N, increasing=inc), numpy.vander(a, N, inc), exact=not real_gpu())
    i = numpy.arange(n)
    assert_eq(numpy.vander(sp.array(i)), numpy.vander(i), exact=True)
    assert_eq(numpy.vander(x[::-2]), numpy.vander(a[::-2]), exact=not real_gpu())
    with pytest.raises(ValueError):
        numpy.vander(sp.array(numpy.ones((2, 2))))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_apply_along_axis(shape):
    a = ref(shape)
    x = sp.array(a)
    for axis in range(len(shape)):
        assert_eq(numpy.apply_along_axis(numpy.sort, axis, x), numpy.apply_along_axis(numpy.sort, axis, a), exact=True)
        assert_eq(numpy.apply_along_axis(numpy.sum, axis, x), numpy.apply_along_axis(numpy.sum, axis, a))

        def two(v):
            return numpy.array([[v.min(), v.max()], [v[0], v[-1]]])

        assert_eq(numpy.apply_along_axis(two, axis, x), numpy.apply_along_axis(two, axis, a), exact=True)
        assert_eq(numpy.apply_along_axis(numpy.diff, axis, x[::-1]), numpy.apply_along_axis(numpy.diff, axis, a[::-1]))
    with pytest.raises(numpy.exceptions.AxisError):
        numpy.apply_along_axis(numpy.sum, 5, x)
    e = numpy.zeros((0, 3))
    with pytest.raises(ValueError):
        numpy.apply_along_axis(numpy.sum, 1, sp.array(e))


def test_apply_over_axes():
    a = ref((3, 4, 5))
    x = sp.array(a)
    for axes in ([0, 2], 1, (-1,)):
        close(numpy.apply_over_axes(numpy.sum, x, axes), numpy.apply_over_axes(numpy.sum, a, axes))
    with pytest.raises(ValueError):
        numpy.apply_over_axes(lambda v, ax: v.sum(), x, [0])


def test_piecewise():
    a = numpy.linspace(-2.5, 2.5, 11)
    x = sp.array(a)
    assert_eq(
        numpy.piecewise(x, [x < 0, x >= 0], [-1, 1]),
        numpy.piecewise(a, [a < 0, a >= 0], [-1, 1]),
        exact=True,
    )
    assert_eq(
        numpy.piecewise(x, [x < 0], [lambda v: -v, lambda v: v * 2]),
        numpy.piecewise(a, [a < 0], [lambda v: -v, lambda v: v * 2]),
        exact=True,
    )
    assert_eq(numpy.piecewise(x, x > 1, [3.0]), numpy.piecewise(a, a > 1, [3.0]), exact=True)
    b = ref((4, 5))
    y = sp.array(b)
    assert_eq(
        numpy.piecewise(y, [y < -0.5, y > 0.5], [0, lambda v: v**2, 7]),
        numpy.piecewise(b, [b < -0.5, b > 0.5], [0, lambda v: v**2, 7]),
        exact=True,
    )
    with pytest.raises(ValueError):
        numpy.piecewise(x, [x < 0, x > 0], [1])


@pytest.mark.parametrize("shape", [(0,), (0, 3), (1, 7), (7, 1)], ids=str)
def test_empty_and_length_one(shape):
    a = ref(shape)
    x = sp.array(a)
    for f in (numpy.i0, numpy.sinc, numpy.angle, numpy.real, numpy.imag):
        close(f(x), f(a))
    for axis in range(len(shape)):
        close(numpy.unwrap(x, axis=axis), numpy.unwrap(a, axis=axis))
    close(numpy.interp(x, [0.0, 1.0], [2.0, 3.0]), numpy.interp(a, [0.0, 1.0], [2.0, 3.0]))
    close(numpy.polyval([1.0, 2.0], x), numpy.polyval([1.0, 2.0], a))
    assert_eq(numpy.trim_zeros(x), numpy.trim_zeros(a), exact=True)
    if 0 not in shape:
        for axis in range(len(shape)):
            assert_eq(numpy.apply_along_axis(numpy.cumsum, axis, x), numpy.apply_along_axis(numpy.cumsum, axis, a))
    b = ref(shape, numpy.bool_)
    assert_eq(numpy.real(sp.array(b)), numpy.real(b), exact=True)
    assert_eq(numpy.trim_zeros(sp.array(b)), numpy.trim_zeros(b), exact=True)
