"""The counter-based core: element ``i`` of draw ``k`` of seed ``s`` as a pure function of ``(s, k, i)``.

Pure NumPy/CuPy code: no MPI and no state.  See :mod:`spmdarray.random` for the
design.  :class:`Stream` bundles the seed, draw and sub-stream path of one call
with the flat indices of the elements being computed, and hands out
independent *lanes* of uniform, normal and exponential variates for them.
"""

from __future__ import annotations

import operator
import os
from typing import Any

import numpy as np

from spmdarray.comm import bcast_array, get_context
from spmdarray.fusion.splitmix import MASK, bits, flat_indices, fold, mix64, uniform_box, unit, unit_open

Box = tuple[tuple[int, int], ...]

_MASK = MASK

# The SplitMix64 core (spmdarray.fusion.splitmix), under the names this package uses.
_mix64 = mix64
_bits = bits
_unit = unit
_fold = fold
_flat_indices = flat_indices
_uniform_box = uniform_box


# ---------------------------------------------------------------------------
# Pure NumPy core: no MPI, no state.
# ---------------------------------------------------------------------------

#: Every array a distribution kernel computes on has a length that is a multiple
#: of ``PAD`` (see :func:`padded`): 64 float64 values are whole vectors of every
#: SIMD width NumPy dispatches (2, 4 or 8 lanes), so its loops never take a
#: remainder (tail) path and each element goes through the same code whatever
#: the block around it.  (docs/random.md, "Determinism".)
PAD = 64


def padded(a: Any, xp: Any = np) -> Any:
    """The 1-D array ``a`` extended to a multiple of :data:`PAD` by repeating its last entry.  Not collective.

    ``a`` itself when its length already is one (or is 0).  Fresh and
    contiguous otherwise, so that the values computed from it do not depend on
    how many elements a block has: callers keep the first ``len(a)`` results.

    >>> padded(np.arange(3)).shape
    (64,)
    >>> int(padded(np.arange(3))[-1])
    2
    """
    n = int(a.shape[0])
    m = -(-n // PAD) * PAD
    if m == n:
        return a
    return xp.concatenate([a, xp.broadcast_to(a[-1:], (m - n,) + tuple(a.shape[1:]))])


def run_padded(kernel: Any, st: Stream, params: list[Any]) -> Any:
    """``kernel(st, *params)`` evaluated on :func:`padded` elements; the first ``st.n`` values.  Not collective.

    ``params`` are Python scalars or arrays of length ``st.n``.
    """
    n = st.n
    if n == 0 or n % PAD == 0:
        return kernel(st, *params)
    ps = [padded(p, st.xp) if getattr(p, "ndim", 0) else p for p in params]
    return kernel(Stream(st.seed, st.draw, padded(st.flat, st.xp), st.path, st.xp), *ps)[:n]


def _stream_key(seed: int, draw: int, lane: int) -> int:
    """64-bit key of draw ``draw``, lane ``lane`` of the generator seeded ``seed``.

    Not collective.  Chains the SplitMix64 finaliser over the three words:
    ``h = mix(s + G)``, ``h = mix((h ^ k) + G)``, ``h = mix((h ^ lane) + G)``
    (:func:`spmdarray.fusion.splitmix.fold`).
    """
    return fold(seed, (draw, lane))


def _random_kernel(seed: int, draw: int, flat: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Uniform [0, 1) values of draw ``draw`` at flat indices ``flat``.  Not collective."""
    return _unit(_bits(_stream_key(seed, draw, 0), flat), dtype)


def _normal_kernel(seed: int, draw: int, flat: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Standard normal values by Box--Muller on lanes 0 and 1.  Not collective.

    ``z = sqrt(-2 log(1 - u1)) cos(2 pi u2)``; ``1 - u1`` lies in (0, 1], so the
    logarithm is finite.  Computed in float64, then cast to ``dtype``.
    """
    u1 = _unit(_bits(_stream_key(seed, draw, 0), flat), np.dtype(np.float64))
    u2 = _unit(_bits(_stream_key(seed, draw, 1), flat), np.dtype(np.float64))
    r = np.log1p(np.negative(u1, out=u1), out=u1)  # log(1 - u1), finite
    r *= -2.0
    np.sqrt(r, out=r)
    u2 *= 2.0 * np.pi
    r *= np.cos(u2, out=u2)
    return r.astype(dtype, copy=False)


def _integers_kernel(seed: int, draw: int, flat: np.ndarray, low: int, span: int, dtype: np.dtype) -> np.ndarray:
    """Integers ``low + offset`` with ``offset`` in ``[0, span]``.  Not collective.

    ``r = span + 1`` values.  ``r <= 2**32``: ``((x >> 32) * r) >> 32``;
    ``r == 2**64``: ``x``; otherwise ``x % r``.  The sum wraps modulo
    ``2**64`` and is reinterpreted as signed for signed dtypes.
    """
    x = _bits(_stream_key(seed, draw, 0), flat)
    r = span + 1
    if r == 1 << 64:
        off = x
    elif r <= 1 << 32:
        off = ((x >> np.uint64(32)) * np.uint64(r)) >> np.uint64(32)
    else:
        off = x % np.uint64(r)
    with np.errstate(over="ignore"):
        v = off + np.uint64(low & _MASK)
    if dtype.kind == "i":
        return v.view(np.int64).astype(dtype, copy=False)
    return v.astype(dtype, copy=False)


class Stream:
    """The variates of one draw for a set of elements.  Not collective.

    Parameters
    ----------
    seed, draw : int
        The generator's seed and the call's draw number.
    flat : array of uint64
        Global C-order flat indices of the elements (1-D; NumPy or CuPy).
    path : tuple of int
        Sub-stream path: composite distributions give each component its own
        sub-stream (:meth:`sub`), rejection samplers one per round.
    xp : module
        Array namespace of ``flat``.

    Notes
    -----
    Lane ``l`` of the element with flat index ``i`` is output ``i`` of
    SplitMix64 keyed by ``_fold(seed, (draw, *path, l))``, so every variate
    is a pure function of ``(seed, draw, path, lane, i)`` and never of which
    other elements are computed with it (:meth:`restrict`).
    """

    __slots__ = ("seed", "draw", "flat", "path", "xp")

    def __init__(self, seed: int, draw: int, flat: Any, path: tuple[int, ...] = (), xp: Any = np) -> None:
        self.seed, self.draw, self.flat, self.path, self.xp = seed, draw, flat, path, xp

    @property
    def n(self) -> int:
        """Number of elements."""
        return int(self.flat.shape[0])

    def sub(self, tag: int) -> Stream:
        """An independent sub-stream for the same elements."""
        return Stream(self.seed, self.draw, self.flat, self.path + (tag,), self.xp)

    def restrict(self, idx: Any) -> Stream:
        """The same stream for the elements ``flat[idx]`` only."""
        return Stream(self.seed, self.draw, self.flat[idx], self.path, self.xp)

    def bits(self, lane: int) -> Any:
        """64 random bits per element (uint64)."""
        return _bits(_fold(self.seed, (self.draw, *self.path, lane)), self.flat)

    def uniform(self, lane: int) -> Any:
        """float64 in [0, 1): top 53 bits times ``2**-53``."""
        return _unit(self.bits(lane), np.dtype(np.float64))

    def uniform_open(self, lane: int) -> Any:
        """float64 in the open interval (0, 1): ``(top 53 bits + 0.5) * 2**-53``."""
        return unit_open(self.bits(lane))

    def normal(self, lane: int) -> Any:
        """Standard normal float64 by Box--Muller on lanes ``lane`` and ``lane + 1``."""
        u1 = self.uniform(lane)
        u2 = self.uniform(lane + 1)
        r = np.log1p(np.negative(u1, out=u1), out=u1)
        r *= -2.0
        np.sqrt(r, out=r)
        u2 *= 2.0 * np.pi
        r *= np.cos(u2, out=u2)
        return r

    def exponential(self, lane: int) -> Any:
        """Standard exponential float64 by inversion: ``-log(1 - u)``."""
        u = self.uniform(lane)
        return np.negative(np.log1p(np.negative(u, out=u), out=u), out=u)


MAX_ROUNDS = 100_000


def until_accepted(st: Stream, params: list[Any], attempt: Any, dtype: Any = np.float64) -> Any:
    """Masked rejection sampling that stays a pure function of ``(seed, draw, i)``.  Not collective.

    Round ``r`` gives every still-pending element a candidate from the
    sub-stream ``st.sub(r)`` (fresh lanes), accepted where ``attempt`` says
    so; the others go to round ``r + 1``.  Each element's value therefore
    depends only on its own variates, never on the block it is computed in.
    The loop ends when every element is accepted: each attempt accepts with a
    probability bounded away from zero (documented per distribution), so the
    chance that an element needs ``R`` rounds falls geometrically; after
    ``MAX_ROUNDS`` rounds (never reached in practice) RuntimeError is raised.

    Parameters
    ----------
    st : Stream
    params : list of arrays
        Per-element parameters (length ``st.n``), restricted with the elements.
    attempt : callable
        ``attempt(stream, *params) -> (values, accepted)``.
    dtype : dtype
        Result dtype.
    """
    xp = st.xp
    out = xp.zeros(st.n, dtype=dtype)
    pending = xp.arange(st.n)
    rnd = 0
    while pending.shape[0]:
        if rnd >= MAX_ROUNDS:
            raise RuntimeError("spmdarray.random: rejection sampler did not accept after MAX_ROUNDS rounds")
        full = rnd == 0 and st.n % PAD == 0
        # The pending elements padded to whole SIMD vectors: the repeated last
        # one computes the same value again (written twice, harmlessly).
        idx = pending if full else padded(pending, xp)
        sub = (st if full else st.restrict(idx)).sub(rnd)
        vals, ok = attempt(sub, *(p if full else p[idx] for p in params))
        out[idx[ok]] = vals[ok]
        pending = pending[~ok[: pending.shape[0]]]
        rnd += 1
    return out


def branch(st: Stream, n: int, cases: list[tuple[Any, Any]], params: list[Any], dtype: Any = np.float64) -> Any:
    """Evaluate ``fn(st.restrict(idx).sub(tag), *params[idx])`` on the elements where each mask holds.

    Not collective.  ``cases`` is a list of ``(mask, fn)``; case ``j`` uses
    sub-stream ``j``.  Elements no mask covers are 0.
    """
    xp = st.xp
    out = xp.zeros(n, dtype=dtype)
    for tag, (mask, fn) in enumerate(cases):
        idx = xp.nonzero(mask)[0]
        if idx.shape[0] == 0:
            continue
        idx = padded(idx, xp)  # whole SIMD vectors, as in until_accepted
        out[idx] = fn(st.restrict(idx).sub(tag), *(p[idx] for p in params))
    return out


_LOGFACT_TABLE = np.array([float(np.sum(np.log(np.arange(1, k + 1, dtype=np.float64)))) for k in range(16)])


def logfactorial(k: Any, xp: Any = np) -> Any:
    """``log(k!)`` for float64 arrays of non-negative integers.  Not collective.

    A table below 16, Stirling's series with terms to ``k**-7`` above
    (relative error below ``1e-16``).
    """
    kk = np.maximum(k, 16.0)
    series = (kk + 0.5) * np.log(kk) - kk + 0.5 * np.log(2.0 * np.pi)
    inv = 1.0 / kk
    inv2 = inv * inv
    series += inv * (1.0 / 12 - inv2 * (1.0 / 360 - inv2 * (1.0 / 1260 - inv2 / 1680)))
    small = xp.asarray(_LOGFACT_TABLE)[np.minimum(k, 15.0).astype(np.int64)]
    return np.where(k < 16, small, series)


def integers_array(bits: Any, low: Any, span: Any) -> Any:
    """Per-element :func:`_integers_kernel` offsets (uint64 arrays ``low``, ``span``).  Not collective.

    ``r = span + 1`` (wrapping to 0 for ``2**64``): multiply-shift for
    ``r <= 2**32``, ``x % r`` above, ``x`` for ``2**64``.
    """
    with np.errstate(over="ignore"):
        r = span + np.uint64(1)
    small = (r <= np.uint64(1 << 32)) & (r != np.uint64(0))
    shifted = ((bits >> np.uint64(32)) * r) >> np.uint64(32)
    safe = np.where(r == np.uint64(0), np.uint64(1), r)
    mod = np.where(r == np.uint64(0), bits, bits % safe)
    off = np.where(small, shifted, mod)
    with np.errstate(over="ignore"):
        return off + low


def _seed64(seed: Any) -> int:
    """Reduce a non-negative integer seed to 64 bits (identity below ``2**64``).  Not collective."""
    if isinstance(seed, (bool, np.bool_)):
        raise TypeError("seed must be a non-negative integer, got a bool")
    try:
        s = operator.index(seed)
    except TypeError:
        raise TypeError(f"seed must be None or a non-negative integer, got {seed!r}") from None
    if s < 0:
        raise ValueError(f"seed must be a non-negative integer, got {s}")
    if s <= _MASK:
        return s
    words = []
    while s:
        words.append(s & _MASK)
        s >>= 64
    return fold(words[0], tuple(words[1:]))


def _entropy(comm: Any) -> int:
    """64 bits from ``os.urandom`` on rank 0 of ``comm``, broadcast to all.  Collective."""

    ctx = get_context(comm)
    word = np.frombuffer(os.urandom(8), dtype=np.uint64) if ctx.rank == 0 else None
    return int(bcast_array(ctx, word, 0, (1,), np.uint64)[0])
