"""The counter-based :class:`Generator`: its state, the broadcasting of
parameters, the per-block runner, and the uniform, normal and integer draws.

The univariate distribution methods come from the mixins of
:mod:`._distribution_methods`, the argument checks and the table of
elementwise distributions from :mod:`._parameters`; the multivariate ones
(:mod:`._multivariate`), ``choice`` and the permutations (:mod:`._choice`)
are methods here that call those modules.

Every method is one *draw*: it advances the draw counter by one on every rank,
and element ``i`` (global C-order flat index of the result) is a pure function
of ``(seed, draw, i)`` and of the parameters broadcast to ``i``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from spmdarray.comm import check_seed
from spmdarray.fusion.record import random_leaf
from spmdarray.random import _continuous as C
from spmdarray.random._choice import choice, permutation, permuted, shuffle
from spmdarray.random._counter import (
    _MASK,
    Box,
    Stream,
    _flat_indices,
    _fold,
    _integers_kernel,
    _seed64,
    _unit,
    integers_array,
    run_padded,
)
from spmdarray.random._distribution_methods import _ContinuousMethods, _DiscreteMethods
from spmdarray.random._multivariate import dirichlet, multinomial, multivariate_hypergeometric, multivariate_normal
from spmdarray.random._parameters import _SPECS, Size, _any, _check, _float_dtype, _int_arg, _is_dist, _param
from spmdarray.routines.creation import _new, _shape


def _numpy_spawn_error() -> type:
    """The exception NumPy's ``Generator.spawn(-1)`` raises (OverflowError before NumPy 2.5,
    ValueError from it on).  Not collective."""
    try:
        np.random.default_rng(0).spawn(-1)
    except Exception as e:  # noqa: BLE001 - whatever NumPy raises is the reference
        return type(e)
    return ValueError


_SPAWN_ERROR = _numpy_spawn_error()

# Kernels that are plain arithmetic on their parameters: scalar parameters go in as Python floats
# (the same IEEE operations as on arrays of that value, so the same bits) instead of filled arrays.
_SCALAR_KERNELS = frozenset(
    {C.uniform, C.normal, C.exponential, C.lognormal, C.laplace, C.logistic, C.gumbel, C.rayleigh, C.pareto, C.power}
)


class CounterState:
    """What ``Generator.bit_generator`` returns: a view of the ``(seed, draw)`` state.  Not collective.

    Not a NumPy BitGenerator (it cannot drive NumPy's samplers); its
    ``state`` reads and writes the generator's seed and draw counter.
    """

    __slots__ = ("_gen",)

    def __init__(self, gen: Generator) -> None:
        self._gen = gen

    @property
    def state(self) -> dict:
        """``{"bit_generator": "spmdarray.counter", "state": {"seed": s, "draw": k}}``."""
        return {"bit_generator": "spmdarray.counter", "state": {"seed": self._gen.seed, "draw": self._gen.draw}}

    @state.setter
    def state(self, value: dict) -> None:
        if not isinstance(value, dict) or value.get("bit_generator") != "spmdarray.counter":
            raise ValueError("state must be a dict as CounterState.state returns")
        g = Generator(value["state"]["seed"], draw=value["state"]["draw"])
        self._gen._seed, self._gen._draw = g._seed, g._draw


class Generator(_ContinuousMethods, _DiscreteMethods):
    """Counter-based random generator whose arrays do not depend on the rank count.

    Not collective to construct from an integer seed (use :func:`default_rng`
    for fresh entropy).  Element ``i`` (global C-order flat index) of the
    ``k``-th draw is a pure function of ``(seed, k, i)``; see
    :mod:`spmdarray.random`.  Every method call is one draw and advances the
    counter by one, on every rank.

    Distribution parameters may be scalars, NumPy arrays (replicated: the
    same on every rank) or distributed arrays; they broadcast against each
    other and against ``size`` as in NumPy.  A call with scalar parameters
    and ``size=None`` returns one NumPy scalar and is not collective; any
    other call is collective over ``comm`` (the communicator of a
    distributed parameter by default) but moves no data, except that
    distributed parameters are redistributed to the result's layout and
    checked with one reduction each.

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
        check_seed(None, seed, user_only=True)
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

    @property
    def bit_generator(self) -> CounterState:
        """The generator's state holder (not a NumPy BitGenerator): ``.state`` is ``{"seed", "draw"}``."""
        return CounterState(self)

    def __repr__(self) -> str:
        return f"Generator(seed={self._seed}, draw={self._draw})"

    def spawn(self, n_children: int) -> list[Generator]:
        """``n_children`` independent generators, the same on every rank.  Not collective.

        One draw: child ``j`` is seeded with ``fold(seed, (draw, 2**64 - 1, j))``,
        so repeated spawns give new children.
        """
        n = _int_arg("spawn", "n_children", n_children)
        if n < 0:
            raise _SPAWN_ERROR(f"spawn: n_children must be non-negative, got {n}")
        draw = self._next()
        return [Generator(_fold(self._seed, (draw, _MASK, j))) for j in range(n)]

    # -- plumbing ----------------------------------------------------------

    def _next(self) -> int:
        draw = self._draw
        self._draw += 1
        return draw

    def _shape_for(self, size: Size, params: list[Any], out: Any = None) -> tuple[tuple[int, ...] | None, Any]:
        """Result shape (None for a scalar) from ``size``, ``out`` and the parameters' broadcast shape."""
        shapes = [tuple(p.shape) for p in params]
        try:
            bshape = np.broadcast_shapes(*shapes)
        except ValueError:
            raise ValueError(f"shape mismatch: parameters of shapes {shapes} cannot be broadcast together") from None
        if out is not None:
            if size is not None and _shape(size, "size") != tuple(out.shape):
                raise ValueError("size must match out.shape when used together")
            size = tuple(out.shape)
        if size is None:
            return (None if bshape == () else bshape), None
        shape = _shape(size, "size")
        if np.broadcast_shapes(bshape, shape) != shape:
            raise ValueError(f"shape mismatch: parameters of shape {bshape} cannot be broadcast to size {shape}")
        return shape, None

    def _run(
        self,
        kernel: Callable[..., Any],
        params: list[Any],
        size: Size,
        dtype: Any,
        comm: Any = None,
        out: Any = None,
    ) -> Any:
        """One draw of an elementwise ``kernel(stream, *params)``: a NumPy scalar or an array."""
        dtype = np.dtype(dtype)
        if out is not None:
            if not _is_dist(out):
                raise TypeError(f"out must be a spmdarray.ndarray, got {type(out).__name__}")
            if out.dtype != dtype:
                raise TypeError(f"Supplied output array has the wrong type. Expected {dtype}, got {out.dtype}")
        shape, _ = self._shape_for(size, params, out)
        draw = self._next()
        if shape is None:
            flat = np.zeros(1, dtype=np.uint64)
            ps = [np.asarray(p).reshape(1) for p in params]
            with np.errstate(all="ignore"):
                v = run_padded(kernel, Stream(self._seed, draw, flat), ps)
            return np.asarray(v).astype(dtype, copy=False)[0]

        def fill(box: Box, xp: Any, blocks: list[Any]) -> Any:
            flat = _flat_indices(box, shape, xp)
            n = int(np.prod(flat.shape, dtype=np.int64))
            scalar_ok = kernel in _SCALAR_KERNELS
            ps = [
                b.reshape(-1) if b.ndim else (float(b) if scalar_ok else xp.full(n, b[()], dtype=b.dtype))
                for b in blocks
            ]
            with np.errstate(all="ignore"):
                v = run_padded(kernel, Stream(self._seed, draw, flat.reshape(-1), (), xp), ps)
            return v.astype(dtype, copy=False).reshape(flat.shape)

        if comm is None:
            comm = next((p._st.ctx for p in params if _is_dist(p)), None)
        res = self._materialise(shape, dtype, fill, params, comm)
        if out is not None:
            out[...] = res
            return out
        return res

    def _materialise(self, shape: tuple[int, ...], dtype: np.dtype, fill: Any, params: list[Any], comm: Any) -> Any:
        """A distributed array whose blocks ``fill(box, xp, param_blocks)`` computes, in slabs.  Collective."""
        res = _new(shape, dtype, comm)
        lay, be = res._layout, res._st.be
        rank = res._st.ctx.rank
        local_params = []
        for p in params:
            if _is_dist(p):
                tmp = _new(shape, p.dtype, comm, layout=lay)
                tmp[...] = p
                local_params.append(tmp)
            else:
                local_params.append(p)
        if not lay.owned_size(rank):
            return res
        rbox = lay.block(rank)
        local = res._block
        if not rbox:
            local[...] = be.asarray(
                fill(rbox, be.xp, [np.asarray(p) if not _is_dist(p) else p._block for p in local_params])
            )
            return res
        (lo, hi), rest = rbox[0], rbox[1:]
        step = max(1, be.fill_chunk // max(1, int(np.prod([b - a for a, b in rest], dtype=np.int64))))
        for s in range(lo, hi, step):
            e = min(hi, s + step)
            box = ((s, e), *rest)
            blocks = []
            for p in local_params:
                if _is_dist(p):
                    blocks.append(p._block[s - lo : e - lo])
                elif p.ndim == 0:
                    blocks.append(p)
                else:
                    sl = tuple(slice(a, b) for a, b in box)
                    blocks.append(be.asarray(np.ascontiguousarray(np.broadcast_to(p, shape)[sl])))
            local[s - lo : e - lo] = be.asarray(fill(box, be.xp, blocks))
        return res

    def _dist(self, func: str, values: tuple[Any, ...], size: Size, comm: Any) -> Any:
        """One draw of the elementwise distribution ``func`` of :data:`_SPECS`."""
        kernel, names, checks, dtype = _SPECS[func]
        params = [_param(func, n, v) for n, v in zip(names, values)]
        _check([(params[i], pred, msg) for i, pred, msg in checks])
        return self._run(kernel, params, size, dtype, comm)

    # -- uniform and normal -------------------------------------------------

    def random(self, size: Size = None, dtype: Any = np.float64, out: Any = None, *, comm: Any = None):
        """Uniform floats in the half-open interval [0.0, 1.0).

        Collective when an array is returned (no communication).  float64
        values are the top 53 bits of the element's counter-based word times
        ``2**-53``; float32 values use the top 24 bits times ``2**-24``.

        Parameters
        ----------
        size : int or tuple of int, optional
            Output shape; None returns one NumPy scalar.
        dtype : {numpy.float64, numpy.float32}, optional
        out : spmdarray.ndarray, optional
            Filled in place (its shape is the size) and returned.
        comm : mpi4py communicator, optional
            Communicator of the result (default: the default context).

        Returns
        -------
        spmdarray.ndarray or numpy scalar
        """
        dt = _float_dtype("random", dtype)
        if size is not None and out is None and dt == np.float64 and type(self)._materialise is Generator._materialise:
            # Deferred: the draws are computed inside the kernel that uses them
            # (None when fusion is off or the array is small: drawn now).
            x = random_leaf(_fold(self._seed, (self._draw, 0)), _shape(size, "size"), comm)
            if x is not None:
                self._next()
                return x
        return self._run(lambda st: _unit(st.bits(0), dt), [], size, dt, comm, out)

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Size = None, *, comm: Any = None):
        """Uniform floats in [low, high): ``low + (high - low) * random()``.

        Collective when an array is returned.  ``low`` and ``high`` broadcast.

        Raises
        ------
        OverflowError
            ``high - low`` is not finite.
        """
        lo, hi = _param("uniform", "low", low), _param("uniform", "high", high)
        with np.errstate(all="ignore"):
            if _any(hi - lo if not (_is_dist(lo) or _is_dist(hi)) else hi - lo, lambda w: np.isinf(w)):
                raise OverflowError(f"high - low range exceeds valid bounds (low={low!r}, high={high!r})")
        return self._run(C.uniform, [lo, hi], size, np.float64, comm)

    def standard_normal(self, size: Size = None, dtype: Any = np.float64, out: Any = None, *, comm: Any = None):
        """Samples from the standard normal distribution N(0, 1).

        Collective when an array is returned.  Box--Muller on two independent
        counter-based lanes: ``sqrt(-2 log(1 - u1)) * cos(2 pi u2)``, computed
        in float64 (then cast for float32).  ``out=`` as in :meth:`random`.
        """
        dt = _float_dtype("standard_normal", dtype)
        return self._run(lambda st: st.normal(0), [], size, dt, comm, out)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Size = None, *, comm: Any = None):
        """Samples from N(loc, scale**2): ``loc + scale * standard_normal()``.

        Collective when an array is returned.  ``scale`` must be non-negative.
        """
        return self._dist(
            "normal",
            (
                loc,
                scale,
            ),
            size,
            comm,
        )

    # -- integers -----------------------------------------------------------

    def integers(
        self,
        low: Any,
        high: Any = None,
        size: Size = None,
        dtype: Any = np.int64,
        endpoint: bool = False,
        *,
        comm: Any = None,
    ):
        """Random integers in [low, high), or [low, high] with ``endpoint=True``.

        Collective when an array is returned.  With ``high=None`` the range
        is [0, low).  ``low`` and ``high`` may be arrays (NumPy or
        distributed) that broadcast.

        For ``r`` possible values and the element's 64-bit word ``x``:
        ``r <= 2**32`` uses the multiply-shift ``((x >> 32) * r) >> 32``;
        ``2**32 < r < 2**64`` uses ``x % r``; ``r == 2**64`` uses ``x``.
        Neither rejects samples, so the result is slightly biased: each value
        has probability ``floor(2**b / r) / 2**b`` or ``ceil(2**b / r) / 2**b``
        with ``b = 32`` (multiply-shift) or ``b = 64`` (modulo), i.e. a relative
        bias of at most ``r / 2**b``.

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
        arrays = any(_is_dist(v) or np.ndim(v) > 0 for v in (low, high) if v is not None)
        if arrays:
            return self._integers_array(func, low, high, size, dt, endpoint, comm)
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

        def kernel(st: Stream) -> Any:
            return _integers_kernel(st.seed, st.draw, st.flat, lo, span, dt)

        return self._run(kernel, [], size, dt, comm)

    def _integers_array(self, func: str, low: Any, high: Any, size: Size, dt: np.dtype, endpoint: bool, comm: Any):
        """Array-valued bounds: exact integer checks on the host or by reductions; per-element spans."""
        if high is None:
            low, high = 0, low
        for name, v in (("low", low), ("high", high)):
            kind = v.dtype.kind if hasattr(v, "dtype") else np.asarray(v).dtype.kind
            if kind not in "iub":
                raise TypeError(f"spmdarray.random.{func}: {name} must be integers, got dtype kind {kind!r}")
        lo = (
            low
            if _is_dist(low)
            else np.asarray(low, dtype=np.int64 if np.asarray(low).dtype != np.uint64 else np.uint64)
        )
        hi = (
            high
            if _is_dist(high)
            else np.asarray(high, dtype=np.int64 if np.asarray(high).dtype != np.uint64 else np.uint64)
        )
        top = hi if endpoint else hi - 1
        if _any(lo > top, lambda m: m):
            raise ValueError("low > high" if endpoint else "low >= high")
        info_min, info_max = (0, 1) if dt.kind == "b" else (int(np.iinfo(dt).min), int(np.iinfo(dt).max))
        if _any(lo, lambda v: v < info_min):
            raise ValueError(f"low is out of bounds for {dt}")
        if _any(top, lambda v: v > info_max):
            raise ValueError(f"high is out of bounds for {dt}")
        # Bounds travel as uint64 bit patterns (wrapping), spans as uint64.
        lo_u = lo.astype(np.uint64)
        span = (top - lo).astype(np.uint64)

        def kernel(st: Stream, lo_u: Any, span: Any) -> Any:
            v = integers_array(st.bits(0), lo_u.astype(np.uint64), span.astype(np.uint64))
            return v.view(np.int64) if dt.kind == "i" else v

        return self._run(kernel, [lo_u, span], size, dt, comm)

    # -- multivariate, bytes, choice and permutations (other modules) --------

    def multinomial(self, n: Any, pvals: Any, size: Size = None, *, comm: Any = None):
        """See :func:`spmdarray.random._multivariate.multinomial`."""

        return multinomial(self, n, pvals, size, comm)

    def multivariate_normal(
        self,
        mean: Any,
        cov: Any,
        size: Size = None,
        check_valid: str = "warn",
        tol: float = 1e-8,
        *,
        method: str = "svd",
        comm: Any = None,
    ):
        """See :func:`spmdarray.random._multivariate.multivariate_normal`."""

        return multivariate_normal(self, mean, cov, size, check_valid, tol, method, comm)

    def multivariate_hypergeometric(
        self, colors: Any, nsample: int, size: Size = None, method: str = "marginals", *, comm: Any = None
    ):
        """See :func:`spmdarray.random._multivariate.multivariate_hypergeometric`."""

        return multivariate_hypergeometric(self, colors, nsample, size, method, comm)

    def dirichlet(self, alpha: Any, size: Size = None, *, comm: Any = None):
        """See :func:`spmdarray.random._multivariate.dirichlet`."""

        return dirichlet(self, alpha, size, comm)

    def bytes(self, length: int) -> bytes:
        """``length`` random bytes, the same on every rank.  Not collective (replicated; keep it small).

        Byte ``j`` is the low byte of the element word ``j`` of one draw.
        """
        n = _int_arg("bytes", "length", length)
        if n < 0:
            raise ValueError(f"bytes: length must be non-negative, got {n}")
        draw = self._next()
        bits = Stream(self._seed, draw, np.arange(n, dtype=np.uint64)).bits(0)
        return (bits & np.uint64(0xFF)).astype(np.uint8).tobytes()

    def choice(
        self,
        a: Any,
        size: Size = None,
        replace: bool = True,
        p: Any = None,
        axis: int = 0,
        shuffle: bool = True,
        *,
        comm: Any = None,
    ):
        """See :func:`spmdarray.random._choice.choice`."""

        return choice(self, a, size, replace, p, axis, shuffle, comm)

    def permutation(self, x: Any, axis: int = 0, *, comm: Any = None):
        """See :func:`spmdarray.random._choice.permutation`."""

        return permutation(self, x, axis, comm)

    def shuffle(self, x: Any, axis: int = 0) -> None:
        """See :func:`spmdarray.random._choice.shuffle`."""

        shuffle(self, x, axis)

    def permuted(self, x: Any, *, axis: int | None = None, out: Any = None):
        """See :func:`spmdarray.random._choice.permuted`."""

        return permuted(self, x, axis, out)


class _SerialGenerator(Generator):
    """A :class:`Generator` that returns whole NumPy arrays computed on this rank.

    Not collective (except that distributed parameters are gathered).  It
    evaluates the same pure function of ``(seed, draw, index)`` on the full
    shape's single box, so its arrays equal the gathered distributed ones of
    a :class:`Generator` with the same seed and draw; the tests use it as the
    reference.
    """

    __slots__ = ()

    def _materialise(self, shape, dtype, fill, params, comm):
        # As the distributed path: 0-d parameters stay 0-d (NumPy takes other loops for
        # a scalar than for a full array, such as sqrt for ``x ** 0.5``, with other roundings).
        blocks = [p if np.ndim(p) == 0 else np.asarray(np.broadcast_to(np.asarray(p), shape)) for p in params]
        box = tuple((0, n) for n in shape)
        return np.asarray(fill(box, np, blocks), dtype=dtype)
