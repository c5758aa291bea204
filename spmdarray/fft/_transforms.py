"""Distributed ``numpy.fft``: transpose-based pencil decomposition.

A transform along an axis that is split over ranks first redistributes the
array into a *pencil* layout in which that axis is whole on every rank (only
the other axes are split), transforms every block with the backend's own FFT
(NumPy's pocketfft, or cuFFT through CuPy) and finally redistributes the
result to the balanced layout of its shape.

Multi-axis transforms run the 1-D transforms one axis at a time, and group
consecutive axes that can be local together into one pencil: the axes
already whole in the input's blocks are transformed in place, then one
redistribution makes all the remaining axes local while splitting another
one.  The order is NumPy's own (the last axis first) unless running the
already-local axes first saves a redistribution; the transforms commute, so
that order changes only the last bits.  ``fftn`` over every axis of an array whose
axes are all split therefore costs three redistributions (two pencils and the
way back); a 2-D ``fft2`` of the default row-split layout costs two (axis 1
is already local; one pencil for axis 0 and the way back).  Each
redistribution moves at most the whole array once (an all-to-all).

In NumPy's order every block transforms the same 1-D lines as NumPy would,
so the results equal NumPy's bit for bit on the NumPy backend (always so for
a single axis).

A 1-D array has no other axis to split.  Up to ``ONE_RANK_MAX`` (65536)
points its transform runs on rank 0 (bit for bit NumPy's; the array is moved
there and back); longer transforms use the four-step algorithm on an
``(n1, n2)`` matrix with ``n = n1 * n2``, fully distributed, with results
equal to NumPy's up to rounding.  A prime length goes through Bluestein's
algorithm: a circular convolution of power-of-two length, three four-step
transforms.
"""

from __future__ import annotations

import math
import operator
from functools import lru_cache

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from spmdarray.comm import agreement, errors_may_raise
from spmdarray.core.array import ndarray
from spmdarray.core.registry import implements
from spmdarray.core.storage import Storage
from spmdarray.decomposition import Layout
from spmdarray.engine import elementwise as _engine
from spmdarray.routines.creation import generate, zeros
from spmdarray.routines.logic import real
from spmdarray.routines.manipulation.joining import concatenate
from spmdarray.routines.manipulation.pencil import is_local, pencil_layout, with_extents
from spmdarray.routines.manipulation.shape import redistribute
from spmdarray.routines.manipulation.splitting import roll

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "rfftn", "irfftn"]

_NORMS = (None, "backward", "ortho", "forward")
_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _numpy_norm_message(transform) -> str:
    """NumPy's message for a bad ``norm`` of ``transform``, with ``{norm}`` in place of the value
    (its wording changed between NumPy versions).  Not collective."""
    try:
        transform(np.zeros(4), norm="\x00")
    except ValueError as e:
        return str(e).replace("\x00", "{norm}")
    return 'Invalid norm value {norm}; should be "backward", "ortho" or "forward".'


#: NumPy's messages for ``fft`` and ``rfft`` (``forward``), and for ``hfft`` and ``ihfft``.
_NORM_MESSAGES = {True: _numpy_norm_message(np.fft.fft), False: _numpy_norm_message(np.fft.hfft)}


def _check_norm(norm, forward=False):
    if norm not in _NORMS:
        raise ValueError(_NORM_MESSAGES[forward].replace("{norm}", str(norm)))


@lru_cache(maxsize=256)
def _result_dtype(kind: str, dtype: np.dtype, odd: bool = False) -> np.dtype:
    """NumPy's result dtype (or its TypeError, e.g. ``rfft`` of complex input) from a tiny probe."""
    n = 5 if odd else 4
    return getattr(np.fft, kind)(np.zeros(n, dtype), n=n).dtype


def _out_len(kind: str, n: int) -> int:
    return n // 2 + 1 if kind == "rfft" else n


def _step(x_shape, kind, n, axis, norm):
    """One 1-D step ``(kind, axis, n, norm)`` checked as NumPy checks it (before any communication)."""
    if n is None:
        n = x_shape[axis]  # NumPy's IndexError for a bad axis
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    _check_norm(norm, forward=kind in ("fft", "rfft"))
    return (kind, normalize_axis_index(axis, len(x_shape)), operator.index(n), norm)


def _steps(a, specs):
    """Checked steps for ``specs`` of ``(kind, n, axis, norm)``, with NumPy's errors in NumPy's order.

    Every check reads only what all ranks share (shape, dtype, arguments),
    so a bad call raises on every rank before any communication.
    """
    out = []
    dt = a.dtype
    for kind, n, axis, norm in specs:
        step = _step(a.shape, kind, n, axis, norm)
        dt = _result_dtype(kind, np.dtype(dt), bool(step[2] % 2))
        out.append(step)
    return out


def _shape_after(shape, steps):
    shape = list(shape)
    for kind, axis, n, _ in steps:
        shape[axis] = _out_len(kind, n)
    return tuple(shape)


def run_steps(x, steps, out=None, conj=False, balance=True):
    """Apply 1-D transforms ``steps`` in order, pencil by pencil.  Collective.

    Returns the result in the balanced layout of its shape (or written into
    ``out``; or, with ``balance=False``, in the last pencil layout).
    ``conj`` conjugates the result (``ihfft``).
    """

    final_shape = _shape_after(x.shape, steps)
    if out is not None and tuple(out.shape) != final_shape:
        raise ValueError("output array has wrong shape.")
    ctx, be = x._st.ctx, x._st.be
    if x.ndim == 1 and len(steps) == 1 and ctx.size > 1 and steps[0][2] > max(ONE_RANK_MAX, 1):
        res = _four_step(x, *steps[0])
        if conj:
            res = _engine.elementwise(np.conjugate, [res])
        if out is not None:
            _engine.assign(out, res)
            return out
        return res
    cur = x
    for action, arg in _plan(x._layout, steps, ctx.size):
        if action == "move":
            cur = redistribute(cur, arg)
            continue
        group, new_lay, last = arg
        dt = cur.dtype
        for k, _, _, _ in group:
            dt = _result_dtype(k, np.dtype(dt))
        res = ndarray._new(Storage(ctx, new_lay, dt), None)
        # A floating-point error under errstate(...="raise") strikes some ranks only.
        with agreement(ctx, errors_may_raise()):
            if new_lay.owned_size(ctx.rank):
                b = cur._block
                for k, a, n, nm in group:
                    b = getattr(be.xp.fft, k)(b, n=n, axis=a, norm=nm)
                if conj and last:
                    b = be.xp.conjugate(b)
                res._block[...] = b
        cur = res
    if not steps and conj:
        cur = _engine.elementwise(np.conjugate, [cur])
    if out is not None:
        _engine.assign(out, cur)
        return out
    if not balance:
        return cur
    return redistribute(cur, Layout.balanced(final_shape, ctx.size))


def _greedy(lay, steps, nprocs):
    """Actions for ``steps`` in the given order: ``("local", (group, layout, last))`` or ``("move", layout)``.

    Consecutive steps along axes already whole in the blocks run together;
    otherwise one redistribution makes the longest run of upcoming axes
    local, keeping one axis split.  Not collective (layout math only).
    """
    actions = []
    i = 0
    ndim = lay.ndim
    while i < len(steps):
        j = i
        while j < len(steps) and is_local(lay, steps[j][1]):
            j += 1
        if j == i:
            local: list[int] = []
            for _, a, _, _ in steps[i:]:
                if a in local:
                    continue
                if local and len(local) + 1 == ndim:
                    break
                local.append(a)
            lay = pencil_layout(lay.shape, set(local), nprocs)
            actions.append(("move", lay))
            continue
        group = steps[i:j]
        lay = with_extents(lay, {a: _out_len(k, n) for k, a, n, _ in group})
        actions.append(("local", (group, lay, j == len(steps))))
        i = j
    return actions


def _local_first(lay, steps):
    """``steps`` with the complex-to-complex steps along already-local axes moved first.

    The real-to-complex first step (``rfftn``) and complex-to-real last step
    (``irfftn``) stay in place; steps along one axis keep their order.
    """
    head = [s for s in steps[:1] if s[0] == "rfft"]
    tail = [s for s in steps[-1:] if s[0] == "irfft" and len(steps) > 1]
    mid = steps[len(head) : len(steps) - len(tail)]
    if head:
        lay = with_extents(lay, {head[0][1]: _out_len("rfft", head[0][2])})
    here = [s for s in mid if is_local(lay, s[1])]
    there = [s for s in mid if not is_local(lay, s[1])]
    return head + here + there + tail


def _plan(lay, steps, nprocs):
    """The cheaper of NumPy's order and the local-axes-first order (NumPy's on a tie).

    Transforms along different axes commute, so the reordered plan gives
    NumPy's result up to rounding; NumPy's own order gives it bit for bit.
    """
    steps = list(steps)
    best = _greedy(lay, steps, nprocs)
    other = _local_first(lay, steps)
    if other != steps:
        alt = _greedy(lay, other, nprocs)
        if sum(a == "move" for a, _ in alt) < sum(a == "move" for a, _ in best):
            return alt
    return best


#: 1-D transforms of at most this many points run on one rank (bit for bit
#: NumPy's); longer ones use the four-step algorithm (Bluestein's for a prime length).
ONE_RANK_MAX = 1 << 16


def _split(n: int):
    """``(n1, n2)`` with ``n1 * n2 == n``, ``n1`` the largest factor up to sqrt(n); None for a prime."""
    for d in range(math.isqrt(n), 1, -1):
        if n % d == 0:
            return d, n // d
    return None


def _resized(x, n: int):
    """``x`` (1-D) truncated or zero-padded to ``n`` points.  Collective."""

    m = x.shape[0]
    if n <= m:
        return x[:n]
    return concatenate([x, zeros(n - m, x.dtype, comm=x._st.ctx, backend=x._st.be.name)])


def _four_step(x, kind, axis, n, norm):
    """1-D transform of a distributed 1-D array by the four-step algorithm.  Collective.

    With ``n = n1 * n2`` the signal is viewed as an ``(n1, n2)`` matrix
    (C order), transformed along axis 0, multiplied by the twiddle factors
    ``exp(-+2 pi i k1 n2 / n)``, transformed along axis 1, and read out
    transposed.  Four redistributions of the whole array (reshape, two
    pencils, transposed reshape).  ``rfft`` is the first half of the complex
    transform; ``irfft`` rebuilds the Hermitian spectrum and keeps the real
    part.  Results agree with NumPy's up to rounding (not bit for bit).
    """

    inverse = kind in ("ifft", "irfft")
    if kind == "irfft":
        half = n // 2 + 1
        h = _resized(x, half)
        tail = _engine.elementwise(np.conjugate, [h[1 : n - half + 1][::-1]])
        z = concatenate([h, tail])
        cdt = np.result_type(x.dtype, np.complex64)
    else:
        z = _resized(x, n)
        cdt = _result_dtype("fft", np.dtype(x.dtype))
    if z.dtype != cdt:
        z = z.astype(cdt)
    res = _c2c(z, n, inverse, norm)
    if kind == "rfft":
        return res[: n // 2 + 1].copy()
    if kind == "irfft":
        return real(res).copy()  # a real array of its own, not a view of the complex temporary
    return res


def _chirp(n: int, inverse: bool, conj: bool, xp, idx):
    """``exp(+-i pi m**2 / n)`` at integer positions ``idx`` (``m**2`` reduced mod ``2n`` first)."""
    m2 = (idx.astype(np.int64) ** 2) % (2 * n)
    sign = 1.0 if inverse != conj else -1.0
    return xp.exp((sign * np.pi / n) * 1j * m2.astype(np.float64))


def _bluestein(z, n, inverse, norm):
    """Transform of length ``n`` as a circular convolution of power-of-two length.  Collective.

    ``X[k] = c[k] * sum_j (z[j] c[j]) conj(c[k - j])`` with the chirp
    ``c[m] = exp(-+i pi m**2 / n)``; the convolution runs through three
    four-step transforms of length ``2**ceil(log2(2n - 1))``.
    """

    cdt = z.dtype
    ctx, bname = z._st.ctx, z._st.be.name
    m = 1 << (2 * n - 2).bit_length()

    def chirp(box, xp):
        lo, hi = box[0]
        return _chirp(n, inverse, False, xp, xp.arange(lo, hi)).astype(cdt)

    def kernel(box, xp):
        lo, hi = box[0]
        i = xp.arange(lo, hi)
        j = xp.where(i < n, i, m - i)
        vals = _chirp(n, inverse, True, xp, j)
        return xp.where((i < n) | (i > m - n), vals, 0).astype(cdt)

    c = generate((n,), cdt, chirp, ctx, bname)
    a = concatenate([z * c, generate((m - n,), cdt, lambda box, xp: xp.zeros(box[0][1] - box[0][0], cdt), ctx, bname)])
    spectrum = _c2c(a, m, False, None, True) * _c2c(generate((m,), cdt, kernel, ctx, bname), m, False, None, True)
    conv = _c2c(spectrum, m, True, None, True)
    out = conv[:n] * c
    scale = {None: 1.0, "backward": 1.0, "ortho": 1 / math.sqrt(n), "forward": 1.0 / n}[norm]
    if inverse:
        scale = {None: 1.0 / n, "backward": 1.0 / n, "ortho": 1 / math.sqrt(n), "forward": 1.0}[norm]
    if scale != 1.0:
        out = out * np.asarray(scale, np.finfo(cdt).dtype)
    return out


def _c2c(z, n, inverse, norm, direct_only=False):
    """Four-step transform of 1-D ``z`` (length ``n``); Bluestein's when ``n`` is prime, or when its
    most balanced split ``n1 * n2`` has ``n1`` below the rank count (the second pencil would leave
    ranks idle and the others with ``n / n1`` points each).  Collective."""
    split = _split(n)
    if not direct_only and (split is None or split[0] < z._st.ctx.size):
        return _bluestein(z, n, inverse, norm)
    n1, n2 = split
    sub = "ifft" if inverse else "fft"
    a = run_steps(z.reshape(n1, n2), [(sub, 0, n1, norm)], balance=False)
    be, ctx = a._st.be, a._st.ctx
    with agreement(ctx, errors_may_raise()):  # inf * 0 under errstate(invalid="raise")
        if a._layout.owned_size(ctx.rank):
            (k0, k1), (m0, m1) = a._layout.block(ctx.rank)
            xp = be.xp
            prod = (xp.arange(k0, k1, dtype=np.int64)[:, None] * xp.arange(m0, m1, dtype=np.int64)[None, :]) % n
            sign = 2.0 if inverse else -2.0
            tw = xp.exp((sign * np.pi / n) * 1j * prod.astype(np.float64))
            loc = a._block
            loc *= tw.astype(loc.dtype)
    c = run_steps(a, [(sub, 1, n2, norm)], balance=False)
    return c.T.reshape(n)


def _one(kind, a, n, axis, norm, out):
    return run_steps(a, _steps(a, [(kind, n, axis, norm)]), out)


@implements(np.fft.fft)
def fft(a, n=None, axis=-1, norm=None, out=None):
    """Distributed 1-D discrete Fourier transform.

    Collective.  Two redistributions when ``axis`` is split over ranks (into
    a pencil and back), none otherwise (besides re-balancing a resized axis).
    A 1-D array of more than ``ONE_RANK_MAX`` points uses the distributed
    four-step (or Bluestein's) algorithm instead: see the module docstring.
    """
    return _one("fft", a, n, axis, norm, out)


@implements(np.fft.ifft)
def ifft(a, n=None, axis=-1, norm=None, out=None):
    """Distributed 1-D inverse discrete Fourier transform.  Collective (see :func:`fft`)."""
    return _one("ifft", a, n, axis, norm, out)


@implements(np.fft.rfft)
def rfft(a, n=None, axis=-1, norm=None, out=None):
    """Distributed 1-D FFT of real input.  Collective (see :func:`fft`)."""
    return _one("rfft", a, n, axis, norm, out)


@implements(np.fft.irfft)
def irfft(a, n=None, axis=-1, norm=None, out=None):
    """Distributed inverse of :func:`rfft`.  Collective (see :func:`fft`)."""
    if n is None:
        n = (a.shape[axis] - 1) * 2
    return _one("irfft", a, n, axis, norm, out)


@implements(np.fft.hfft)
def hfft(a, n=None, axis=-1, norm=None, out=None):
    """Distributed FFT of a Hermitian-symmetric signal.  Collective (see :func:`fft`)."""
    if n is None:
        n = (a.shape[axis] - 1) * 2
    _check_norm(norm)
    steps = _steps(a, [("irfft", n, axis, _SWAP[norm])])
    return run_steps(_engine.elementwise(np.conjugate, [a]), steps, out)


@implements(np.fft.ihfft)
def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """Distributed inverse of :func:`hfft`.  Collective (see :func:`fft`)."""
    _check_norm(norm)
    return run_steps(a, _steps(a, [("rfft", n, axis, _SWAP[norm])]), out, conj=True)


class _Shape:
    __slots__ = ("shape",)

    def __init__(self, shape):
        self.shape = shape


def _cook(a, s, axes, invreal=0):
    from numpy.fft._pocketfft import _cook_nd_args

    return _cook_nd_args(_Shape(a.shape), s, axes, invreal)


def _nd(kind, a, s, axes, norm, out):
    s, axes = _cook(a, s, axes)
    steps = _steps(a, [(kind, s[i], axes[i], norm) for i in reversed(range(len(axes)))])
    if not steps:
        return a
    return run_steps(a, steps, out)


@implements(np.fft.fftn)
def fftn(a, s=None, axes=None, norm=None, out=None):
    """Distributed N-D discrete Fourier transform.

    Collective.  One axis at a time: the axes already whole in the input's
    blocks are transformed without moving data, then one redistribution
    makes the remaining axes local (two when every axis of the array is
    transformed and split), and one more returns the balanced layout: at
    most three redistributions in all for distinct axes.  NumPy's order
    (the last axis first, bit for bit NumPy's result) is kept unless putting
    the local axes first needs fewer redistributions (then the result
    differs from NumPy's by rounding only).
    """
    return _nd("fft", a, s, axes, norm, out)


@implements(np.fft.ifftn)
def ifftn(a, s=None, axes=None, norm=None, out=None):
    """Distributed N-D inverse FFT.  Collective (see :func:`fftn`)."""
    return _nd("ifft", a, s, axes, norm, out)


@implements(np.fft.fft2)
def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """Distributed 2-D FFT.  Collective (see :func:`fftn`)."""
    return _nd("fft", a, s, axes, norm, out)


@implements(np.fft.ifft2)
def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """Distributed 2-D inverse FFT.  Collective (see :func:`fftn`); ``out`` as NumPy ignores it."""
    return _nd("ifft", a, s, axes, norm, None)


@implements(np.fft.rfftn)
def rfftn(a, s=None, axes=None, norm=None, out=None):
    """Distributed N-D FFT of real input.  Collective (see :func:`fftn`)."""
    s, axes = _cook(a, s, axes)
    if not len(axes):
        raise IndexError("list index out of range")
    specs = [("rfft", s[-1], axes[-1], norm)] + [("fft", s[i], axes[i], norm) for i in range(len(axes) - 2, -1, -1)]
    steps = _steps(a, specs)
    return run_steps(a, steps, out)


@implements(np.fft.rfft2)
def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """Distributed 2-D FFT of real input.  Collective (see :func:`fftn`)."""
    return rfftn(a, s, axes, norm, out)


@implements(np.fft.irfftn)
def irfftn(a, s=None, axes=None, norm=None, out=None):
    """Distributed inverse of :func:`rfftn`.  Collective (see :func:`fftn`)."""
    s, axes = _cook(a, s, axes, invreal=1)
    if not len(axes):
        raise IndexError("list index out of range")
    specs = [("ifft", s[i], axes[i], norm) for i in range(len(axes) - 1)] + [("irfft", s[-1], axes[-1], norm)]
    steps = _steps(a, specs)
    return run_steps(a, steps, out)


@implements(np.fft.irfft2)
def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """Distributed 2-D inverse of :func:`rfft2`.  Collective (see :func:`fftn`); ``out`` as NumPy ignores it."""
    return irfftn(a, s, axes, norm, None)


def _shifts(x, axes, sign):
    if axes is None:
        axes = tuple(range(x.ndim))
        shift = [sign * (n // 2) for n in x.shape]
    elif isinstance(axes, (int, np.integer)):
        shift = sign * (x.shape[axes] // 2)
    else:
        shift = [sign * (x.shape[ax] // 2) for ax in axes]
    return shift, axes


@implements(np.fft.fftshift)
def fftshift(x, axes=None):
    """Zero frequency to the centre, through the distributed ``roll``.

    Collective: only the wrapped half of each shifted axis moves.
    """

    shift, axes = _shifts(x, axes, 1)
    return roll(x, shift, axes)


@implements(np.fft.ifftshift)
def ifftshift(x, axes=None):
    """Inverse of :func:`fftshift`.  Collective (see :func:`fftshift`)."""

    shift, axes = _shifts(x, axes, -1)
    return roll(x, shift, axes)


def fftfreq(n, d=1.0, device=None, *, comm=None, backend=None):
    """Distributed ``numpy.fft.fftfreq``: sample frequencies, each rank filling its block.

    Collective (no communication).
    """

    if not isinstance(n, (int, np.integer)):
        raise ValueError("n should be an integer")
    val = 1.0 / (n * d)
    half = (n - 1) // 2 + 1

    def fill(box, xp):
        lo, hi = box[0]
        i = xp.arange(lo, hi, dtype=int)
        return xp.where(i < half, i, i - n) * val

    return generate((n,), np.result_type(np.empty(0, int) * val), fill, comm, backend)


def rfftfreq(n, d=1.0, device=None, *, comm=None, backend=None):
    """Distributed ``numpy.fft.rfftfreq``.  Collective (no communication)."""

    if not isinstance(n, (int, np.integer)):
        raise ValueError("n should be an integer")
    val = 1.0 / (n * d)

    def fill(box, xp):
        lo, hi = box[0]
        return xp.arange(lo, hi, dtype=int) * val

    return generate((n // 2 + 1,), np.result_type(np.empty(0, int) * val), fill, comm, backend)
