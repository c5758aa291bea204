"""numpy.fft on distributed arrays against NumPy.

Pencil decomposition: a split axis is moved local, transformed by the same
pocketfft NumPy uses, and moved back, so on the NumPy backend the results
are NumPy's bit for bit (checked exactly); the emulated GPU backend runs the
same code.  Uneven shapes, every axis split, n/s padding and truncation,
every norm, float32/complex64 results, integer inputs, views with negative
steps, and NumPy's errors on every rank.
"""

from __future__ import annotations

import warnings

import numpy
import pytest
from helpers import assert_eq, real_gpu, ref

import spmdarray as sp

NORMS = [None, "backward", "ortho", "forward"]
SHAPES = [(7,), (6, 5), (3, 4, 5), (1, 6), (5, 1)]
ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fftn", "ifftn", "rfftn", "irfftn"]
TWO_D = ["fft2", "ifft2", "rfft2", "irfft2"]


def same(got, want, exact=True):
    """Bit for bit on the host; a few ulp on a real GPU (cuFFT is not pocketfft).

    ``exact=False``: multi-axis transforms may run their axes in another order
    than NumPy's (to save a redistribution), which changes the last bits.
    """
    if not exact and not real_gpu():
        tol = 1e-5 if want.dtype in (numpy.float32, numpy.complex64) else 1e-13
        assert_eq(got, want, rtol=tol, atol=tol * max(1.0, float(numpy.abs(want).max(initial=0))))
    elif real_gpu():
        tol = 1e-5 if want.dtype in (numpy.float32, numpy.complex64) else 1e-12
        assert_eq(got, want, rtol=tol, atol=tol * max(1.0, float(numpy.abs(want).max(initial=0))))
    else:
        assert_eq(got, want, exact=True)


def _input(name, shape, dtype=numpy.float64):
    kind = "real" if name in ("rfft", "ihfft", "rfftn", "rfft2") else "complex"
    dt = numpy.dtype(dtype)
    if kind == "complex" and dt.kind == "f":
        dt = numpy.result_type(dt, numpy.complex64)
    return ref(shape, dt)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", ONE_D)
def test_one_axis_transforms_match_numpy(name, shape):
    a = _input(name, shape)
    x = sp.array(a)
    f = getattr(numpy.fft, name)
    for axis in range(-len(shape), len(shape)):
        if name in ("irfft", "hfft") and shape[axis] == 1:
            continue  # NumPy's default n would be 0
        same(f(x, axis=axis), f(a, axis=axis))
        for norm, n in zip(NORMS, (1, 3, 8, 3)):  # truncation and padding
            same(f(x, n=n, axis=axis, norm=norm), f(a, n=n, axis=axis, norm=norm))


@pytest.mark.parametrize("shape", [(6, 5), (3, 4, 5), (4, 1, 3)], ids=str)
@pytest.mark.parametrize("name", N_D)
def test_multi_axis_transforms_match_numpy(name, shape):
    a = _input(name, shape)
    x = sp.array(a)
    f = getattr(numpy.fft, name)
    nd = len(shape)
    for norm in NORMS:
        same(f(x, norm=norm), f(a, norm=norm), exact=False)
    for axes in [(0,), (-1, 0), tuple(range(nd))[::-1], (nd - 1, 0, nd - 1) if nd > 1 else (0,)]:
        same(f(x, axes=axes), f(a, axes=axes), exact=False)
        s = [4 + i for i in range(len(axes))]
        same(f(x, s=s, axes=axes), f(a, s=s, axes=axes), exact=False)
        s = [2] * len(axes)
        same(f(x, s=s, axes=axes, norm="ortho"), f(a, s=s, axes=axes, norm="ortho"), exact=False)


@pytest.mark.parametrize("name", TWO_D)
def test_two_d_transforms_match_numpy(name):
    for shape in [(6, 5), (3, 4, 5)]:
        a = _input(name, shape)
        x = sp.array(a)
        f = getattr(numpy.fft, name)
        for norm in NORMS:
            same(f(x, norm=norm), f(a, norm=norm), exact=False)
        same(f(x, s=(3, 7)), f(a, s=(3, 7)), exact=False)
        same(f(x, axes=(0, -1)), f(a, axes=(0, -1)), exact=False)


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.complex64, numpy.int32, numpy.int64, numpy.complex128])
def test_dtypes_follow_numpy(dtype):
    a = ref((6, 5), dtype)
    x = sp.array(a)
    for name in ("fft", "ifft", "fftn", "ifft2"):
        f = getattr(numpy.fft, name)
        same(f(x), f(a), exact=False)
    if numpy.dtype(dtype).kind != "c":
        for name in ("rfft", "rfftn", "ihfft"):
            f = getattr(numpy.fft, name)
            same(f(x), f(a), exact=False)
    for name in ("irfft", "hfft", "irfftn"):
        f = getattr(numpy.fft, name)
        same(f(x), f(a), exact=False)


def test_views_and_round_trips():
    a = ref((9, 7), complex)
    x = sp.array(a)
    same(numpy.fft.fft(x[::-2], axis=0), numpy.fft.fft(a[::-2], axis=0))
    same(numpy.fft.fftn(x[::-2, 1::2]), numpy.fft.fftn(a[::-2, 1::2]), exact=False)
    same(numpy.fft.fft(x.T), numpy.fft.fft(a.T))
    same(numpy.fft.fft(x[3]), numpy.fft.fft(a[3]))
    same(numpy.fft.ifft(x[:, 2]), numpy.fft.ifft(a[:, 2]))
    r = ref((8, 6))
    y = sp.array(r)
    back = numpy.fft.irfftn(numpy.fft.rfftn(y), s=r.shape, axes=(0, 1))
    assert_eq(back, r, rtol=1e-12, atol=1e-14)
    assert isinstance(numpy.fft.fft(x), sp.ndarray)
    # sp.fft is the same namespace of functions
    same(sp.fft.fft2(x), numpy.fft.fft2(a), exact=False)


def test_out_argument():
    a = ref((6, 5), complex)
    x = sp.array(a)
    o = sp.empty((6, 5), complex)
    r = numpy.fft.fft(x, axis=0, out=o)
    assert r is o
    same(o, numpy.fft.fft(a, axis=0))
    with pytest.raises(ValueError, match="wrong shape"):
        numpy.fft.fft(x, n=3, axis=0, out=o)


def test_errors_are_numpys():
    a = ref((4, 3), complex)
    x = sp.array(a)
    e = sp.array(numpy.zeros((0, 3), complex))
    ae = numpy.zeros((0, 3), complex)
    calls = [
        lambda m: numpy.fft.fft(m, n=0),
        lambda m: numpy.fft.fft(m, norm="bad"),
        lambda m: numpy.fft.ifft(m, norm="bad"),
        lambda m: numpy.fft.fft(m, axis=2),
        lambda m: numpy.fft.fftn(m, s=(2, 2, 2), axes=(0, 1)),
        lambda m: numpy.fft.fftn(m, axes=(0, 5)),
        lambda m: numpy.fft.rfftn(m, s=(0, 2), axes=(0, 1)),
        lambda m: numpy.fft.irfft(m[:, :1]),
    ]
    for call in calls:
        with pytest.raises(Exception) as want:
            call(a)
        with pytest.raises(type(want.value)) as got:
            call(x)
        assert str(got.value) == str(want.value)
    for call in (lambda m: numpy.fft.fft(m, axis=0), lambda m: numpy.fft.fftn(m)):
        with pytest.raises(ValueError) as want:
            call(ae)
        with pytest.raises(ValueError) as got:
            call(e)
        assert str(got.value) == str(want.value)
    # An empty axis is fine when n is given, as in NumPy.
    same(numpy.fft.fft(e, n=4, axis=0), numpy.fft.fft(ae, n=4, axis=0))


def test_s_without_axes_warns_as_numpy():
    a = ref((6, 5), complex)
    x = sp.array(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        want = numpy.fft.fftn(a, s=(4, 4))
        got = numpy.fft.fftn(x, s=(4, 4))
    same(got, want)
    with pytest.warns(DeprecationWarning):
        numpy.fft.fftn(x, s=(4, 4))


@pytest.mark.parametrize("n", [1, 2, 7, 8])
def test_fftfreq_rfftfreq(n):
    for d in (1.0, 0.25, numpy.float32(0.5)):
        same(sp.fft.fftfreq(n, d), numpy.fft.fftfreq(n, d))
        same(sp.fft.rfftfreq(n, d), numpy.fft.rfftfreq(n, d))
    assert isinstance(sp.fft.fftfreq(n), sp.ndarray)
    with pytest.raises(ValueError, match="integer"):
        sp.fft.fftfreq(2.5)


@pytest.mark.parametrize("shape", [(7,), (6, 5), (3, 4, 5), (0, 3)], ids=str)
def test_fftshift_ifftshift(shape):
    a = ref(shape)
    x = sp.array(a)
    for f in (numpy.fft.fftshift, numpy.fft.ifftshift):
        assert_eq(f(x), f(a), exact=True)
        assert_eq(f(x, axes=0), f(a, axes=0), exact=True)
        assert_eq(f(x, axes=(-1,)), f(a, axes=(-1,)), exact=True)
    f = sp.array(numpy.fft.fftfreq(10))
    assert_eq(sp.fft.ifftshift(sp.fft.fftshift(f)), numpy.fft.fftfreq(10), exact=True)


@pytest.mark.parametrize("name", ONE_D)
def test_four_step_one_d(name, monkeypatch):
    """Long 1-D transforms stay distributed (four-step algorithm); forced here on short ones."""
    import spmdarray.fft._transforms as impl

    monkeypatch.setattr(impl, "ONE_RANK_MAX", 0)
    f = getattr(numpy.fft, name)
    cases = [
        (30, numpy.complex128, NORMS, (None, 26, 40, 31)),
        (12, numpy.float32, [None], (None, 7)),
        (16, numpy.int64, [None], (None,)),
    ]
    for n, dtype, norms, lengths in cases:
        a = ref((n,), dtype)
        if name in ("rfft", "ihfft") and a.dtype.kind == "c":
            a = a.real.copy()
        x = sp.array(a)
        tol = 2e-5 if a.dtype in (numpy.float32, numpy.complex64) else 1e-12
        for norm in norms:
            for m in lengths:  # 7 and 31 are prime: Bluestein
                want = f(a, n=m, norm=norm)
                assert_eq(f(x, n=m, norm=norm), want, rtol=tol, atol=tol * max(1.0, float(numpy.abs(want).max())))
    want = f(a[::-2])
    assert_eq(f(x[::-2]), want, rtol=1e-12, atol=1e-12 * max(1.0, float(numpy.abs(want).max())))


@pytest.mark.parametrize("shape", [(1,), (1, 1), (2, 1, 3)], ids=str)
def test_length_one_axes(shape):
    a = ref(shape, complex)
    x = sp.array(a)
    for name in ("fft", "ifft", "fftn", "ifftn"):
        f = getattr(numpy.fft, name)
        same(f(x), f(a), exact=False)
    same(numpy.fft.rfftn(sp.array(a.real)), numpy.fft.rfftn(a.real), exact=False)
    same(numpy.fft.irfft(x, n=4, axis=0), numpy.fft.irfft(a, n=4, axis=0))


def test_axis_order_saves_a_redistribution():
    """Axes whole in the blocks go first when that saves a pencil (layout math, no data)."""
    from spmdarray.decomposition import Layout

    from spmdarray.fft._transforms import _greedy, _plan

    lay = Layout.from_extents(((3,), (2, 2), (3, 2)))  # axis 0 local, axes 1 and 2 split
    steps = [("fft", a, n, None) for a, n in ((2, 5), (1, 4), (0, 3))]  # NumPy's order: last axis first
    moves = lambda plan: sum(a == "move" for a, _ in plan)  # noqa: E731
    assert moves(_greedy(lay, steps, 4)) == 2
    plan = _plan(lay, steps, 4)
    assert moves(plan) == 1
    assert plan[0][0] == "local" and [s[1] for s in plan[0][1][0]] == [0]
    # NumPy's order is kept when it costs no more (bit-for-bit results).
    lay = Layout.from_extents(((2, 1), (2, 2), (5,)))
    assert _plan(lay, steps, 4) == _greedy(lay, steps, 4)
    a = ref((3, 4, 5), complex)
    x = sp.array(a)
    same(numpy.fft.fftn(x.transpose(2, 1, 0)), numpy.fft.fftn(a.transpose(2, 1, 0)), exact=False)


def test_local_axis_moves_nothing():
    from spmdarray.routines.manipulation.pencil import is_local

    a = ref((16, 3), complex)
    x = sp.array(a)
    for axis in (0, 1):
        with sp.comm_stats() as st:
            y = numpy.fft.fft(x, axis=axis)
        if is_local(x.layout, axis):
            assert st.bytes_sent == 0 and st.bytes_received == 0
        same(y, numpy.fft.fft(a, axis=axis))
