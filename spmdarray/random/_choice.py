"""Sampling from populations: ``choice``, ``permutation``, ``shuffle`` and ``permuted``.

Indices are pure functions of ``(seed, draw, i)`` as everywhere in
:mod:`spmdarray.random`:

* with replacement, index ``i`` is ``integers(0, n)`` (no ``p``) or the
  inverse CDF of ``p`` at the element's uniform (``p`` is replicated);
* without replacement (and for permutations) every member ``j`` of the
  population gets a random 64-bit key (lane 0 of the draw at flat index
  ``j``; with ``p`` the Efraimidis--Spirakis key ``-log(u_j) / p_j``) and the
  sample is the population sorted by key (stable, so ties are broken by
  ``j``), truncated to the sample size.

A population of at most :data:`SMALL_POPULATION` members is sorted on every
rank identically (replicated keys, no communication).  A larger one is
sorted distributed with ``numpy.argsort(keys, kind="stable")`` on a
spmdarray array, and values are fetched with ``numpy.take`` (a distributed
gather); both paths give the same sample.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from spmdarray.random._counter import Box, Stream, _flat_indices, _integers_kernel, run_padded
from spmdarray.random._parameters import _is_dist
from spmdarray.routines.creation import _shape

SMALL_POPULATION = 1 << 20
"""Populations up to this size are permuted on every rank identically (8 MiB of keys)."""


def _from_flat(gen: Any, shape: tuple[int, ...] | None, dtype: Any, fn: Any, comm: Any) -> Any:
    """An array (or a scalar for ``shape=None``) whose element ``i`` is ``fn(flat, xp)``.  Collective for arrays."""
    dtype = np.dtype(dtype)
    if shape is None:
        return np.asarray(fn(np.zeros(1, dtype=np.uint64), np)).astype(dtype)[0]

    def fill(box: Box, xp: Any, blocks: list[Any]) -> Any:
        flat = _flat_indices(box, shape, xp)
        return fn(flat.reshape(-1), xp).astype(dtype, copy=False).reshape(flat.shape)

    return gen._materialise(shape, dtype, fill, [], comm)


def _take_replicated(gen: Any, a: np.ndarray, axis: int, shape: tuple[int, ...] | None, idx_of: Any, comm: Any):
    """``numpy.take(a, idx, axis)`` for a replicated NumPy ``a`` and indices ``idx_of(flat, xp)``, blockwise."""
    if shape is None:
        return np.take(a, idx_of(np.zeros(1, dtype=np.uint64), np)[0], axis=axis)
    out_shape = a.shape[:axis] + shape + a.shape[axis + 1 :]
    m = len(shape)

    def fill(box: Box, xp: Any, blocks: list[Any]) -> Any:
        ibox = box[axis : axis + m]
        flat = _flat_indices(ibox, shape, xp)
        idx = idx_of(flat.reshape(-1), xp).reshape(flat.shape)
        pre = tuple(slice(lo, hi) for lo, hi in box[:axis])
        post = tuple(slice(lo, hi) for lo, hi in box[axis + m :])
        part = xp.asarray(np.ascontiguousarray(a[pre + (slice(None),) + post]))
        return xp.take(part, idx, axis=axis)

    return gen._materialise(out_shape, a.dtype, fill, [], comm)


def _keys_replicated(seed: int, draw: int, n: int, p: np.ndarray | None) -> np.ndarray:
    """The population sorted by key, computed whole on this rank (identical on every rank)."""
    st = Stream(seed, draw, np.arange(n, dtype=np.uint64))
    if p is None:
        return np.argsort(st.bits(0), kind="stable")
    with np.errstate(divide="ignore"):
        key = -np.log(st.uniform_open(0)) / p
    return np.argsort(key, kind="stable")


def _keys_distributed(gen: Any, draw: int, n: int, p: np.ndarray | None, comm: Any) -> Any:
    """The same order as :func:`_keys_replicated`, by a distributed stable argsort.  Collective."""
    seed = gen._seed
    if p is None:
        keys = _from_flat(gen, (n,), np.uint64, lambda flat, xp: Stream(seed, draw, flat, (), xp).bits(0), comm)
    else:

        def key(flat: Any, xp: Any) -> Any:
            with np.errstate(divide="ignore"):
                e = run_padded(lambda s: -np.log(s.uniform_open(0)), Stream(seed, draw, flat, (), xp), [])
                return e / xp.asarray(p)[flat.astype(np.int64)]

        keys = _from_flat(gen, (n,), np.float64, key, comm)
    return np.argsort(keys, kind="stable")


def _check_p(p: Any, n: int) -> np.ndarray | None:
    if p is None:
        return None
    if _is_dist(p):
        raise NotImplementedError("spmdarray.random.choice: p must be a NumPy array or sequence (held on every rank)")
    pa = np.asarray(p, dtype=np.float64)
    if pa.ndim != 1:
        raise ValueError("p must be 1-dimensional")
    if pa.size != n:
        raise ValueError("a and p must have same size")
    if np.any(np.isnan(pa)):
        raise ValueError("probabilities contain NaN")
    if np.any(pa < 0):
        raise ValueError("probabilities are not non-negative")
    if abs(float(pa.sum()) - 1.0) > np.sqrt(np.finfo(np.float64).eps):
        raise ValueError("probabilities do not sum to 1")
    return pa


def choice(gen: Any, a: Any, size: Any, replace: bool, p: Any, axis: int, shuffle: bool, comm: Any) -> Any:
    """Random sample from ``a`` (an int ``n`` meaning ``arange(n)``, a NumPy array or a distributed array).

    Collective unless ``size`` is None and ``a`` is not distributed.  One
    draw.  See the module docstring for the algorithms.  A replicated
    (NumPy) ``a`` is indexed blockwise with no communication; a distributed
    ``a`` is gathered from with ``numpy.take`` (distributed indexing).
    ``shuffle=False`` (without replacement) returns the sample in population
    order.
    """
    dist_a = _is_dist(a)
    if not dist_a and np.ndim(a) == 0:
        try:
            n = operator.index(a)
        except TypeError:
            raise ValueError("a must be a sequence or an integer, not a float") from None
        arr = None
        if n < 0:
            raise ValueError("a must be a positive integer unless no samples are taken")
    else:
        arr = a if dist_a else np.asarray(a)
        if arr.ndim == 0:
            raise ValueError("a must be a sequence or an integer, not a 0-d array")
        axis = operator.index(axis)
        if not -arr.ndim <= axis < arr.ndim:
            raise np.exceptions.AxisError(axis, arr.ndim)
        axis %= arr.ndim
        n = arr.shape[axis]
    pa = _check_p(p, n)
    shape = None if size is None else _shape(size, "size")
    m = 1 if shape is None else int(np.prod(shape, dtype=np.int64))
    if n == 0 and m > 0:
        raise ValueError("a cannot be empty unless no samples are taken")
    if not replace:
        if m > n:
            raise ValueError("Cannot take a larger sample than population when replace is False")
        if pa is not None and np.count_nonzero(pa > 0) < m:
            raise ValueError("Fewer non-zero entries in p than size")
    if comm is None and dist_a:
        comm = a._st.ctx
    draw = gen._next()
    seed = gen._seed
    idx_dist = None
    if replace and pa is None:

        def idx_of(flat: Any, xp: Any) -> Any:
            return _integers_kernel(seed, draw, flat, 0, max(n - 1, 0), np.dtype(np.int64))

    elif replace:
        cdf = np.cumsum(pa)
        cdf /= cdf[-1]

        def idx_of(flat: Any, xp: Any) -> Any:
            u = Stream(seed, draw, flat, (), xp).uniform(0)
            return np.minimum(np.searchsorted(xp.asarray(cdf), u, side="right"), n - 1).astype(np.int64)

    elif n <= SMALL_POPULATION:
        sel = _keys_replicated(seed, draw, n, pa)[:m]
        if not shuffle:
            sel = np.sort(sel)

        def idx_of(flat: Any, xp: Any) -> Any:
            return xp.asarray(sel)[flat.astype(np.int64)]

    else:
        order = _keys_distributed(gen, draw, n, pa, comm)
        sel = order[:m]
        if not shuffle:
            sel = np.sort(sel)
        idx_dist = sel.reshape(() if shape is None else shape)
        if arr is None:
            return idx_dist
        return np.take(arr, idx_dist, axis=axis)
    if arr is None:
        return _from_flat(gen, shape, np.int64, idx_of, comm)
    if not dist_a:
        return _take_replicated(gen, arr, axis, shape, idx_of, comm)
    if shape is None:
        i = int(idx_of(np.zeros(1, dtype=np.uint64), np)[0])
        return arr[(slice(None),) * axis + (i,)].copy() if arr.ndim > 1 else arr[i]
    idx = _from_flat(gen, shape, np.int64, idx_of, comm)
    return np.take(arr, idx, axis=axis)


def permutation(gen: Any, x: Any, axis: int, comm: Any) -> Any:
    """A permuted ``arange(x)`` (int ``x``) or a permuted copy of ``x`` along ``axis``.  Collective.

    The same keys-and-stable-sort order as :func:`choice` without replacement.
    """
    if not _is_dist(x) and np.ndim(x) == 0:
        n = operator.index(x)
        return choice(gen, n, n, False, None, 0, True, comm)
    arr = x if _is_dist(x) else np.asarray(x)
    if arr.ndim == 0:
        raise np.exceptions.AxisError("x must be an integer or at least 1-dimensional")
    axis = operator.index(axis)
    if not -arr.ndim <= axis < arr.ndim:
        raise np.exceptions.AxisError(axis, arr.ndim)
    axis %= arr.ndim
    n = arr.shape[axis]
    return choice(gen, arr, n, False, None, axis, True, comm)


def shuffle(gen: Any, x: Any, axis: int) -> None:
    """Shuffle ``x`` in place along ``axis``.  Collective for a distributed ``x``.

    A NumPy ``x`` (replicated) is shuffled identically on every rank; a
    distributed one is overwritten with its :func:`permutation`.
    """
    if not _is_dist(x):
        if not isinstance(x, np.ndarray):
            raise TypeError("shuffle needs an array (a spmdarray.ndarray or a NumPy array) to shuffle in place")
        if x.ndim == 0:
            raise TypeError("shuffle of a 0-d array is not possible")
        axis = operator.index(axis) % x.ndim
        n = x.shape[axis]
        draw = gen._next()
        order = _keys_replicated(gen._seed, draw, n, None)
        x[...] = np.take(x, order, axis=axis)
        return
    x[...] = permutation(gen, x, axis, None)


def permuted(gen: Any, x: Any, axis: int | None, out: Any) -> Any:
    """``x`` with each 1-D slice along ``axis`` (or all of ``x`` for None) shuffled independently.  Collective.

    Keys are the draw's 64-bit words over ``x``'s flat indices; each slice is
    ordered by a stable argsort of its keys (distributed sort along
    ``axis``, then ``numpy.take_along_axis``).  A NumPy ``x`` is permuted on
    every rank identically and returned as a NumPy array.
    """
    dist = _is_dist(x)
    arr = x if dist else np.asarray(x)
    if axis is not None:
        axis = operator.index(axis)
        if not -arr.ndim <= axis < max(arr.ndim, 1):
            raise np.exceptions.AxisError(axis, arr.ndim)
        axis %= arr.ndim
    draw = gen._next()
    seed = gen._seed
    if not dist:
        keys = Stream(seed, draw, np.arange(arr.size, dtype=np.uint64)).bits(0).reshape(arr.shape)
        if axis is None:
            res = arr.reshape(-1)[np.argsort(keys.reshape(-1), kind="stable")].reshape(arr.shape)
        else:
            res = np.take_along_axis(arr, np.argsort(keys, axis=axis, kind="stable"), axis=axis)
    else:
        keys = _from_flat(
            gen, arr.shape, np.uint64, lambda flat, xp: Stream(seed, draw, flat, (), xp).bits(0), arr._st.ctx
        )
        if axis is None:
            res = np.take(np.ravel(arr), np.argsort(np.ravel(keys), kind="stable")).reshape(arr.shape)
        else:
            res = np.take_along_axis(arr, np.argsort(keys, axis=axis, kind="stable"), axis=axis)
    if out is not None:
        out[...] = res
        return out
    return res
