"""Random sampling with results that do not depend on the rank count.

``spmdarray.random`` mirrors the parts of :mod:`numpy.random` that SPMD codes
use most: the legacy module-level functions (:func:`seed`, :func:`rand`,
:func:`random`, :func:`uniform`, :func:`normal`, :func:`randint`, ...) and
:func:`default_rng` with its :class:`Generator`.

Counter-based design
--------------------
NumPy's generators are sequential: element ``i`` depends on every element
drawn before it, so a distributed array filled block by block would change
with the number of ranks.  This module instead uses a *counter-based*
generator.  The value of the element with global C-order flat index ``i`` in
the ``k``-th draw (call) of a generator with seed ``s`` is a pure function of
``(s, k, i)``:

1. a 64-bit key is derived by chaining the SplitMix64 finaliser over
   ``(s, k, lane)``; the *lane* separates independent streams needed by one
   element (Box--Muller uses lanes 0 and 1);
2. the element's 64 random bits are output ``i`` of SplitMix64 started at
   that key: ``mix64(key + (i + 1) * 0x9E3779B97F4A7C15)`` (mod ``2**64``).

Each rank evaluates the formula on the global flat indices of its own block,
vectorised over ``uint64`` NumPy arrays, and never communicates.  For a given
seed an array is therefore identical bit for bit for every rank count and
every layout, and ``size=None`` scalars (element ``i = 0``) are identical on
every rank.  Generators are not cryptographically secure.

The draw counter ``k`` advances by one per call, on every rank.  SPMD programs
make the same calls in the same order on every rank, so the counters agree.
NumPy's own streams are *not* reproduced: the same seed gives different
numbers here than in :mod:`numpy.random`.

Collectives
-----------
Array-valued calls are collective over ``comm`` (they create a distributed
array) but move no data.  ``size=None`` calls are not collective.  Drawing
fresh entropy (:func:`default_rng` or :func:`seed` without a seed, or the
first use of a never-seeded global state) is collective: rank 0 reads
``os.urandom`` and broadcasts it, so every rank holds the same seed.

Examples
--------
>>> import spmdarray as np
>>> rng = np.random.default_rng(42)
>>> x = rng.random((1000, 3))  # same values with 1, 2, 3, ... ranks
>>> v = rng.standard_normal()  # a NumPy scalar, the same on every rank
"""

from __future__ import annotations

import operator
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ._creation import _shape

__all__ = [
    "Generator",
    "default_rng",
    "normal",
    "rand",
    "randint",
    "random",
    "random_sample",
    "seed",
    "standard_normal",
    "uniform",
]

Size = int | tuple[int, ...] | None
Box = tuple[tuple[int, int], ...]
Kernel = Callable[[int, np.ndarray], np.ndarray]

_MASK = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15  # SplitMix64 increment (golden ratio * 2**64)
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB


# ---------------------------------------------------------------------------
# Pure NumPy core: no MPI, no state.
# ---------------------------------------------------------------------------


def _mix64(z: Any) -> np.ndarray:
    """SplitMix64 finaliser, a bijection on 64-bit words, applied elementwise.

    Not collective.

    Parameters
    ----------
    z : array_like of uint64
        Words to mix (copied, not modified).

    Returns
    -------
    numpy.ndarray of uint64
        Same shape as ``z``.

    Examples
    --------
    >>> int(_mix64(0x9E3779B97F4A7C15))  # first output of SplitMix64(0)
    16294208416658607535
    """
    return _mix64_inplace(np.array(z, dtype=np.uint64))


def _mix64_inplace(z: np.ndarray) -> np.ndarray:
    """:func:`_mix64` overwriting the uint64 array ``z``; returns ``z``.  Not collective."""
    tmp = np.empty_like(z)
    with np.errstate(over="ignore"):
        for shift, mult in ((30, _M1), (27, _M2), (31, None)):
            np.right_shift(z, np.uint64(shift), out=tmp)
            np.bitwise_xor(z, tmp, out=z)
            if mult is not None:
                np.multiply(z, np.uint64(mult), out=z)
    return z


def _stream_key(seed: int, draw: int, lane: int) -> int:
    """64-bit key of draw ``draw``, lane ``lane`` of the generator seeded ``seed``.

    Not collective.  Chains the SplitMix64 finaliser over the three words:
    ``h = mix(s + G)``, ``h = mix((h ^ k) + G)``, ``h = mix((h ^ lane) + G)``.
    """
    h = int(_mix64((seed + _GAMMA) & _MASK))
    for word in (draw, lane):
        h = int(_mix64(((h ^ (word & _MASK)) + _GAMMA) & _MASK))
    return h


def _flat_indices(box: Box, shape: tuple[int, ...], xp: Any = np) -> np.ndarray:
    """Global C-order flat indices of the elements of ``box``.

    Not collective.  Built by broadcasting one ``arange`` per axis times the
    C stride of that axis, so no index array larger than the block exists.

    Parameters
    ----------
    box : tuple of (int, int)
        Global half-open range per axis.
    shape : tuple of int
        Global shape.
    xp : module
        Array namespace of the result (NumPy, or CuPy for device blocks).

    Returns
    -------
    numpy.ndarray of uint64
        Array of the box's shape.

    Examples
    --------
    >>> _flat_indices(((1, 3), (2, 4)), (4, 5)).tolist()
    [[7, 8], [12, 13]]
    """
    nd = len(shape)
    out = xp.zeros((), dtype=np.uint64)
    stride = 1
    for axis in range(nd - 1, -1, -1):
        lo, hi = box[axis]
        idx = xp.arange(lo, hi, dtype=np.uint64) * np.uint64(stride)
        out = out + idx.reshape((hi - lo,) + (1,) * (nd - 1 - axis))
        stride *= shape[axis]
    return out


def _bits(key: int, flat: np.ndarray) -> np.ndarray:
    """Output ``i`` of SplitMix64 started at ``key``, for each ``i`` in ``flat``.  Not collective."""
    with np.errstate(over="ignore"):
        z = np.multiply(flat, np.uint64(_GAMMA), dtype=np.uint64)
        z += np.uint64((key + _GAMMA) & _MASK)
    return _mix64_inplace(z)


def _unit(bits: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Floats in [0, 1): the top 53 (float64) or 24 (float32) bits times 2**-53 (2**-24).  Not collective."""
    if dtype == np.float32:
        return (bits >> np.uint64(40)).astype(np.float32) * np.float32(2.0**-24)
    np.right_shift(bits, np.uint64(11), out=bits)
    out = bits.astype(np.float64)
    out *= 2.0**-53
    return out


def _random_kernel(seed: int, draw: int, flat: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Uniform [0, 1) values of draw ``draw`` at flat indices ``flat``.  Not collective."""
    return _unit(_bits(_stream_key(seed, draw, 0), flat), dtype)


def _uniform_box(key: int, box: Box, shape: tuple[int, ...]) -> np.ndarray:
    """float64 uniform values of stream ``key`` over the global ``box`` of ``shape``.  Not collective."""
    flat = _flat_indices(box, shape)
    return _unit(_bits(key, flat.reshape(-1)), np.dtype(np.float64)).reshape(flat.shape)


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


# ---------------------------------------------------------------------------
# Argument checking.
# ---------------------------------------------------------------------------


def _check_scalar(func: str, name: str, value: Any) -> None:
    nd = value.ndim if hasattr(value, "ndim") else np.ndim(value)
    if nd != 0:
        raise NotImplementedError(
            f"spmdarray.random.{func}: array-valued {name} is not supported; pass a Python or NumPy scalar"
        )


def _float_arg(func: str, name: str, value: Any) -> float:
    _check_scalar(func, name, value)
    return float(value)


def _int_arg(func: str, name: str, value: Any) -> int:
    _check_scalar(func, name, value)
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"spmdarray.random.{func}: {name} must be an integer, got {value!r}") from None


def _float_dtype(func: str, dtype: Any) -> np.dtype:
    dt = np.dtype(dtype)
    if dt not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise TypeError(f"Unsupported dtype {dt!r} for {func}; use numpy.float64 or numpy.float32")
    return dt


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
    h = 0
    while s:
        h = int(_mix64(((h ^ (s & _MASK)) + _GAMMA) & _MASK))
        s >>= 64
    return h


def _entropy(comm: Any) -> int:
    """64 bits from ``os.urandom`` on rank 0 of ``comm``, broadcast to all.  Collective."""
    from .comm import bcast_array, get_context

    ctx = get_context(comm)
    word = np.frombuffer(os.urandom(8), dtype=np.uint64) if ctx.rank == 0 else None
    return int(bcast_array(ctx, word, 0, (1,), np.uint64)[0])


# ---------------------------------------------------------------------------
# Generator.
# ---------------------------------------------------------------------------


class Generator:
    """Counter-based random generator whose arrays do not depend on the rank count.

    Not collective to construct from an integer seed (use :func:`default_rng`
    for fresh entropy).  Element ``i`` (global C-order flat index) of the
    ``k``-th draw is a pure function of ``(seed, k, i)``; see the module
    docstring.  Every method call is one draw and advances the counter by
    one, on every rank.

    Parameters
    ----------
    seed : int
        Non-negative integer; seeds of ``2**64`` or more are folded to 64 bits.
    draw : int, optional
        Draw counter to start from (default 0).  ``Generator(s, draw=k)``
        resumes a stream after ``k`` calls, e.g. on restart from a checkpoint.

    Examples
    --------
    >>> g = Generator(7)
    >>> g.draw
    0
    >>> x = g.random()
    >>> g.draw
    1
    >>> bool(Generator(7).random() == x)
    True
    """

    __slots__ = ("_seed", "_draw")

    def __init__(self, seed: int, *, draw: int = 0) -> None:
        if seed is None:
            raise TypeError("Generator needs an integer seed; use spmdarray.random.default_rng() for fresh entropy")
        self._seed = _seed64(seed)
        self._draw = operator.index(draw)
        if not 0 <= self._draw <= _MASK:
            raise ValueError(f"draw must be in [0, 2**64), got {self._draw}")

    @property
    def seed(self) -> int:
        """The 64-bit seed that keys every draw."""
        return self._seed

    @property
    def draw(self) -> int:
        """How many draws (calls) this generator has made."""
        return self._draw

    def __repr__(self) -> str:
        return f"Generator(seed={self._seed}, draw={self._draw})"

    # -- plumbing ----------------------------------------------------------

    def _sample(self, size: Size, dtype: np.dtype, kernel: Kernel, comm: Any):
        """Run ``kernel(draw, flat)`` for one draw, as a scalar or an array."""
        shape = None if size is None else _shape(size, "size")
        draw = self._draw
        self._draw += 1
        if shape is None:
            return kernel(draw, np.zeros(1, dtype=np.uint64)).astype(dtype, copy=False)[0]

        def fill(box: Box, xp: Any) -> np.ndarray:
            flat = _flat_indices(box, shape, xp)
            return kernel(draw, flat.reshape(-1)).astype(dtype, copy=False).reshape(flat.shape)

        return self._materialise(shape, dtype, fill, comm)

    def _materialise(self, shape: tuple[int, ...], dtype: np.dtype, fill: Callable[[Box], np.ndarray], comm: Any):
        from ._creation import generate

        return generate(shape, dtype, fill, comm=comm)

    # -- distributions -----------------------------------------------------

    def random(self, size: Size = None, dtype: Any = np.float64, *, comm: Any = None):
        """Uniform floats in the half-open interval [0.0, 1.0).

        Collective when ``size`` is not None (no communication); not
        collective for ``size=None``.  float64 values are the top 53 bits of
        the element's counter-based word times ``2**-53``; float32 values use
        the top 24 bits times ``2**-24``.

        Parameters
        ----------
        size : int or tuple of int, optional
            Output shape; None returns one NumPy scalar.
        dtype : {numpy.float64, numpy.float32}, optional
        comm : mpi4py communicator, optional
            Communicator of the result (default: the default context).

        Returns
        -------
        spmdarray.ndarray or numpy scalar
        """
        dt = _float_dtype("random", dtype)
        if size is not None and dt == np.float64 and type(self)._materialise is Generator._materialise:
            from ._fusion import random_leaf

            # Deferred: the draws are computed inside the kernel that uses them.
            x = random_leaf(_stream_key(self._seed, self._draw, 0), _shape(size, "size"), comm)
            if x is not None:
                self._draw += 1
                return x
        return self._sample(size, dt, lambda k, flat: _random_kernel(self._seed, k, flat, dt), comm)

    def uniform(self, low: float = 0.0, high: float = 1.0, size: Size = None, *, comm: Any = None):
        """Uniform floats in [low, high): ``low + (high - low) * random()``.

        Collective when ``size`` is not None (no communication).

        Parameters
        ----------
        low, high : float
            Python or NumPy scalars; array-valued bounds raise
            NotImplementedError.
        size : int or tuple of int, optional
            Output shape; None returns one NumPy scalar.
        comm : mpi4py communicator, optional

        Returns
        -------
        spmdarray.ndarray or numpy.float64
        """
        lo = _float_arg("uniform", "low", low)
        hi = _float_arg("uniform", "high", high)
        width = hi - lo
        if not np.isfinite(width):
            raise OverflowError(f"high - low range exceeds valid bounds (low={lo!r}, high={hi!r})")
        dt = np.dtype(np.float64)

        def kernel(k: int, flat: np.ndarray) -> np.ndarray:
            return lo + width * _random_kernel(self._seed, k, flat, dt)

        return self._sample(size, dt, kernel, comm)

    def standard_normal(self, size: Size = None, dtype: Any = np.float64, *, comm: Any = None):
        """Samples from the standard normal distribution N(0, 1).

        Collective when ``size`` is not None (no communication).  Box--Muller
        on two independent counter-based lanes: ``sqrt(-2 log(1 - u1)) *
        cos(2 pi u2)``, computed in float64 (then cast for float32).

        Parameters
        ----------
        size : int or tuple of int, optional
            Output shape; None returns one NumPy scalar.
        dtype : {numpy.float64, numpy.float32}, optional
        comm : mpi4py communicator, optional

        Returns
        -------
        spmdarray.ndarray or numpy scalar
        """
        dt = _float_dtype("standard_normal", dtype)
        return self._sample(size, dt, lambda k, flat: _normal_kernel(self._seed, k, flat, dt), comm)

    def normal(self, loc: float = 0.0, scale: float = 1.0, size: Size = None, *, comm: Any = None):
        """Samples from N(loc, scale**2): ``loc + scale * standard_normal()``.

        Collective when ``size`` is not None (no communication).

        Parameters
        ----------
        loc, scale : float
            Python or NumPy scalars; ``scale`` must be non-negative.
            Array-valued parameters raise NotImplementedError.
        size : int or tuple of int, optional
            Output shape; None returns one NumPy scalar.
        comm : mpi4py communicator, optional

        Returns
        -------
        spmdarray.ndarray or numpy.float64
        """
        mu = _float_arg("normal", "loc", loc)
        sigma = _float_arg("normal", "scale", scale)
        if sigma < 0:
            raise ValueError(f"scale < 0 (got scale={sigma!r})")
        dt = np.dtype(np.float64)

        def kernel(k: int, flat: np.ndarray) -> np.ndarray:
            return mu + sigma * _normal_kernel(self._seed, k, flat, dt)

        return self._sample(size, dt, kernel, comm)

    def integers(
        self,
        low: int,
        high: int | None = None,
        size: Size = None,
        dtype: Any = np.int64,
        endpoint: bool = False,
        *,
        comm: Any = None,
    ):
        """Random integers in [low, high), or [low, high] with ``endpoint=True``.

        Collective when ``size`` is not None (no communication).  With
        ``high=None`` the range is [0, low).

        For ``r`` possible values and the element's 64-bit word ``x``:
        ``r <= 2**32`` uses the multiply-shift ``((x >> 32) * r) >> 32``;
        ``2**32 < r < 2**64`` uses ``x % r``; ``r == 2**64`` uses ``x``.
        Neither rejects samples, so the result is slightly biased: each value
        has probability ``floor(2**b / r) / 2**b`` or ``ceil(2**b / r) / 2**b``
        with ``b = 32`` (multiply-shift) or ``b = 64`` (modulo), i.e. a relative
        bias of at most ``r / 2**b``.  That is below ``2.4e-7`` for ``r <= 1000``
        and below ``1e-9`` for the modulo path with ``r <= 2**34``, but it
        grows for ``r`` approaching ``2**32`` or ``2**64``.

        Parameters
        ----------
        low, high : int
            Python or NumPy integer scalars; array-valued bounds raise
            NotImplementedError.
        size : int or tuple of int, optional
            Output shape; None returns one NumPy scalar.
        dtype : integer or bool dtype, optional
            Default numpy.int64.  The bounds must fit the dtype.
        endpoint : bool, optional
            Include ``high``.
        comm : mpi4py communicator, optional

        Returns
        -------
        spmdarray.ndarray or numpy scalar of ``dtype``

        Raises
        ------
        ValueError
            ``low >= high`` (``low > high`` with ``endpoint``), bounds outside
            the dtype, or negative ``size`` entries.
        """
        return self._integers("integers", low, high, size, dtype, endpoint, comm)

    def _integers(self, func: str, low: Any, high: Any, size: Size, dtype: Any, endpoint: bool, comm: Any):
        dt = np.dtype(dtype)
        if dt.kind not in "iub":
            raise TypeError(f"Unsupported dtype {dt!r} for {func}; use an integer or bool dtype")
        if high is None:
            lo, hi = 0, _int_arg(func, "low", low)
            if hi <= 0 and not endpoint:
                raise ValueError(f"high <= 0 (got {hi}); with high=None the range is [0, low)")
        else:
            lo, hi = _int_arg(func, "low", low), _int_arg(func, "high", high)
        if endpoint:
            if lo > hi:
                raise ValueError(f"low > high (low={lo}, high={hi})")
            top = hi
        else:
            if lo >= hi:
                raise ValueError(f"low >= high (low={lo}, high={hi})")
            top = hi - 1
        info_min, info_max = (0, 1) if dt.kind == "b" else (int(np.iinfo(dt).min), int(np.iinfo(dt).max))
        if lo < info_min:
            raise ValueError(f"low is out of bounds for {dt} (low={lo}, smallest {dt} is {info_min})")
        if top > info_max:
            raise ValueError(f"high is out of bounds for {dt} (largest {dt} is {info_max})")
        span = top - lo

        def kernel(k: int, flat: np.ndarray) -> np.ndarray:
            return _integers_kernel(self._seed, k, flat, lo, span, dt)

        return self._sample(size, dt, kernel, comm)


class _SerialGenerator(Generator):
    """A :class:`Generator` that returns whole NumPy arrays computed on this rank.

    Not collective.  It evaluates the same pure function of ``(seed, draw,
    index)`` on the full shape's single box, so its arrays equal the gathered
    distributed ones of a :class:`Generator` with the same seed and draw;
    the tests use it as the reference.
    """

    __slots__ = ()

    def _materialise(self, shape, dtype, fill, comm):
        return np.asarray(fill(tuple((0, n) for n in shape), np), dtype=dtype)


def default_rng(seed: int | Generator | None = None, *, comm: Any = None) -> Generator:
    """A new :class:`Generator`.

    Collective over ``comm`` when ``seed`` is None: rank 0 reads 64 bits of
    ``os.urandom`` and broadcasts them, so every rank gets the same seed.
    Not collective otherwise.

    Parameters
    ----------
    seed : int, Generator or None
        Non-negative integer seed, an existing Generator (returned as is) or
        None for fresh entropy.
    comm : mpi4py communicator, optional
        Communicator the entropy is broadcast over (default: the default context).

    Returns
    -------
    Generator
        Counter-based: element ``i`` of the ``k``-th draw is a function of
        ``(seed, k, i)`` only, so results do not depend on the rank count.
    """
    if isinstance(seed, Generator):
        return seed
    if seed is None:
        return Generator(_entropy(comm))
    return Generator(seed)


# ---------------------------------------------------------------------------
# Legacy module-level API on a global Generator.
# ---------------------------------------------------------------------------

_state: Generator | None = None


def _global(comm: Any) -> Generator:
    """The global generator, seeded on first use from entropy broadcast over ``comm`` (collective then)."""
    global _state
    if _state is None:
        _state = Generator(_entropy(comm))
    return _state


def seed(seed: int | None = None, *, comm: Any = None) -> None:
    """Reseed the global generator of the legacy functions and reset its draw counter.

    Not collective for an integer seed.  Collective over ``comm`` for
    ``seed=None``: rank 0 draws entropy and broadcasts it.  Call it on every
    rank with the same arguments.

    Parameters
    ----------
    seed : int, optional
        Non-negative integer; None draws fresh entropy.
    comm : mpi4py communicator, optional
        Communicator the entropy is broadcast over.
    """
    global _state
    _state = Generator(_entropy(comm) if seed is None else seed)


def rand(*shape: int, comm: Any = None):
    """Uniform floats in [0, 1) of the given shape: ``rand(d0, d1, ...)``.

    Collective when a shape is given (no communication); ``rand()`` returns
    one NumPy scalar.  Uses the global generator (see :func:`seed`) and the
    counter-based stream described in the module docstring.
    """
    return _global(comm).random(shape if shape else None, comm=comm)


def random(size: Size = None, *, comm: Any = None):
    """Uniform floats in [0, 1), from the global generator.

    Collective when ``size`` is not None (no communication).  See
    :meth:`Generator.random`; the counter-based stream does not depend on the
    rank count.
    """
    return _global(comm).random(size, comm=comm)


def random_sample(size: Size = None, *, comm: Any = None):
    """Uniform floats in [0, 1) (alias of :func:`random`).

    Collective when ``size`` is not None (no communication).
    """
    return _global(comm).random(size, comm=comm)


def uniform(low: float = 0.0, high: float = 1.0, size: Size = None, *, comm: Any = None):
    """Uniform floats in [low, high), from the global generator.

    Collective when ``size`` is not None (no communication).  See
    :meth:`Generator.uniform`.
    """
    return _global(comm).uniform(low, high, size, comm=comm)


def normal(loc: float = 0.0, scale: float = 1.0, size: Size = None, *, comm: Any = None):
    """Normal samples N(loc, scale**2), from the global generator.

    Collective when ``size`` is not None (no communication).  See
    :meth:`Generator.normal` (Box--Muller on two counter-based lanes).
    """
    return _global(comm).normal(loc, scale, size, comm=comm)


def standard_normal(size: Size = None, *, comm: Any = None):
    """Standard normal samples N(0, 1), from the global generator.

    Collective when ``size`` is not None (no communication).  See
    :meth:`Generator.standard_normal`.
    """
    return _global(comm).standard_normal(size, comm=comm)


def randint(low: int, high: int | None = None, size: Size = None, dtype: Any = int, *, comm: Any = None):
    """Random integers in [low, high) (or [0, low) when ``high`` is None), from the global generator.

    Collective when ``size`` is not None (no communication).  Same sampling
    (and the same small, documented bias) as :meth:`Generator.integers`.

    Raises
    ------
    ValueError
        ``low >= high``, bounds outside ``dtype`` or negative ``size`` entries.
    """
    return _global(comm)._integers("randint", low, high, size, dtype, False, comm)


def __getattr__(name: str):
    """NumPy random functions spmdarray does not distribute yet raise NotImplementedError."""
    import numpy.random as _npr

    if not name.startswith("_") and hasattr(_npr, name):

        def stub(*args, **kwargs):
            raise NotImplementedError(f"spmdarray.random.{name} is not implemented yet")

        stub.__name__ = name
        return stub
    raise AttributeError(f"module 'spmdarray.random' has no attribute {name!r}")
