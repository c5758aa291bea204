"""The NumPy functions built on distributed advanced indexing: ``nonzero``,
``flatnonzero``, ``argwhere``, ``take``, ``put``, ``putmask``, ``place``,
``compress``, ``extract``, ``choose``, ``searchsorted``, ``take_along_axis``,
``put_along_axis``, ``select``, ``ix_``, ``unravel_index`` and
``ravel_multi_index``.

Reads and writes by index go through the owner routing of
:mod:`spmdarray.routines.indexing.routing` (an all-to-all of requests and one of
replies; a scatter is one all-to-all, the last write wins as in NumPy);
``take_along_axis``/``put_along_axis`` use the getitem/setitem of
:mod:`spmdarray.routines.indexing.advanced`.  ``nonzero`` places each rank's indices by a
prefix sum of per-rank counts (no gather).
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from spmdarray.comm import allgather_blocks, allgather_object, reduce_bcast
from spmdarray.core import dtypes as _dtypes
from spmdarray.core import fetch as _fetch
from spmdarray.core.registry import implements, provides
from spmdarray.decomposition import Layout
from spmdarray.engine import elementwise as _engine
from spmdarray.routines.creation import _new, array, empty, empty_like
from spmdarray.routines.indexing.advanced import getitem, setitem
from spmdarray.routines.indexing.nonzero import flatnonzero, nonzero
from spmdarray.routines.indexing.routing import (
    _INTP,
    _block_of,
    _c_ordered_1d,
    _flat_nonzero,
    _gather,
    _local_1d,
    _ravel_c,
    _request,
    _scatter,
    _where_copy,
)
from spmdarray.routines.indexing.selection import where
from spmdarray.routines.manipulation.shape import _flat_of_box
from spmdarray.routines.reductions import normalize_axes

__all__ = [
    "take",
    "put",
    "putmask",
    "place",
    "compress",
    "choose",
    "extract",
    "searchsorted",
    "take_along_axis",
    "put_along_axis",
    "select",
    "ix_",
    "unravel_index",
    "ravel_multi_index",
]


def _index_1d(ctx, ind):
    """(offset, host block) of ``ravel(ind)`` on a balanced 1-D layout.  Collective."""
    if _fetch.is_distributed(ind):
        return _local_1d(_ravel_c(ind))
    a = np.asarray(ind).reshape(-1)
    lo, hi = Layout.balanced(a.shape, ctx.size).block(ctx.rank)[0]
    return lo, a[lo:hi]


def _agree_bounds(ctx, vals: np.ndarray, n: int, axis, replicated: bool = False) -> None:
    """Raise IndexError on every rank if any rank's ``vals`` leave ``[-n, n)``.

    Collective (one all-gather), unless ``replicated``: then ``vals`` is the
    whole index, the same on every rank, and nothing is communicated.
    """
    bad = None
    if np.size(vals):
        lo, hi = int(np.min(vals)), int(np.max(vals))
        if hi >= n or lo < -n:
            bad = hi if hi >= n else lo
    reports = [bad] if replicated else allgather_object(ctx, bad)
    reports = [r for r in reports if r is not None]
    if reports:
        where = f"axis {axis} with size {n}" if axis is not None else f"size {n}"
        raise IndexError(f"index {reports[0]} is out of bounds for {where}")


def _modes(ind, n: int, mode: str):
    """``ind`` with ``mode`` applied (distributed ufuncs or NumPy)."""
    if mode == "raise":
        return ind
    if mode not in ("wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    if mode == "wrap":
        return np.mod(ind, n) if n else ind
    return np.clip(ind, 0, max(n - 1, 0))


def _as_index(ind, name="indices"):
    if _fetch.is_distributed(ind):
        if ind.dtype.kind not in "iu":
            raise TypeError(f"Cannot cast array data from {ind.dtype!r} to dtype('int64') according to the rule 'safe'")
        return ind
    a = np.asarray(ind)
    if a.size == 0:
        return a.astype(_INTP)
    if a.dtype.kind not in "iub":
        raise TypeError(f"Cannot cast array data from {a.dtype!r} to dtype('int64') according to the rule 'safe'")
    return a.astype(_INTP)


def _take_flat(a, ind, mode="raise"):
    """``a.flat[ind]`` with the shape of ``ind`` (balanced).  Collective."""

    ctx = a._st.ctx
    ind = _modes(_as_index(ind), a.size, mode)
    if a.size == 0 and np.size(ind):
        raise IndexError("cannot do a non-empty take from an empty axes.")
    shape = np.shape(ind)
    lay = Layout.balanced(shape, ctx.size)
    dist = _fetch.is_distributed(ind)
    if not dist:
        _agree_bounds(ctx, ind, a.size, None, replicated=True)
    blk = np.asarray(_block_of(ctx, ind, shape, 0, lay), np.int64)
    if dist:
        _agree_bounds(ctx, blk, a.size, None)
    blk = np.where(blk < 0, blk + a.size, blk)
    vals = _gather(a, blk.reshape(-1))
    out = _new(shape, a.dtype, ctx, layout=lay)
    if lay.owned_size(ctx.rank):
        out._block[...] = out._st.be.asarray(vals.reshape(blk.shape))
    return out


def _result_out(res, out):
    if out is None:
        return res
    out[...] = res
    return out


@implements(np.take)
def take(a, indices, axis=None, out=None, mode="raise"):
    """Elements of ``a`` at ``indices`` (along ``axis``, or of the flattened array).

    Collective: an all-to-all of requests and one of replies.  ``indices``
    may be distributed or a NumPy array (the same on every rank).
    """
    if not _fetch.is_distributed(a):
        a = _engine_array(a, indices)
    if axis is None:
        if np.ndim(indices) == 0 and not _fetch.is_distributed(indices):
            i = int(_modes(np.asarray(operator.index(indices)), a.size, mode))
            if not -a.size <= i < a.size:
                raise IndexError(f"index {i} is out of bounds for size {a.size}")
            return _result_out(_take_flat(a, np.array([i]))[0], out)
        return _result_out(_take_flat(a, indices, mode), out)

    (axis,) = normalize_axes((axis,), a.ndim)
    n = a.shape[axis]
    if n == 0 and np.size(indices):
        raise IndexError("cannot do a non-empty take from an empty axes.")
    ind = _modes(_as_index(indices) if np.ndim(indices) else indices, n, mode)
    key = (slice(None),) * axis + (ind,)
    if np.ndim(ind) == 0 and not _fetch.is_distributed(ind):
        return _result_out(a[key].copy() if a.ndim > 1 else a[key], out)
    return _result_out(getitem(a, key), out)


def _engine_array(a, *others):
    ctx = _fetch.context_of(*others)
    return array(np.asarray(a), comm=ctx)


def _cycled(ctx, v, pos: np.ndarray, dtype) -> np.ndarray:
    """``v.flat[pos % v.size]`` (host): local for a replicated ``v``, a gather
    for a distributed one.  Collective.  (Casting was checked by ``_check_cast``.)"""
    if _fetch.is_distributed(v):
        if v.size == 0:
            return np.empty(0, dtype)
        out = _gather(v, pos % v.size)
    else:
        vv = np.asarray(v).reshape(-1)
        if vv.size == 0:
            return np.empty(0, dtype)
        out = vv[pos % vv.size]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        return out.astype(dtype, copy=False)


def _check_cast(dtype, v, func=np.put) -> None:
    """NumPy's error (or warning) for values that cannot go into ``dtype``:
    ``func`` (put, place or putmask) runs on a one-element array.  Not collective."""
    if _fetch.is_distributed(v) or isinstance(v, np.ndarray):
        v = np.ones(1, v.dtype) if v.size else np.ones(0, v.dtype)
    if np.size(v):
        func(np.zeros(1, dtype), [0] if func is np.put else np.ones(1, bool), v)


@implements(np.put)
def put(a, ind, v, mode="raise"):
    """``a.flat[ind] = v`` (``v`` repeated as needed), in place.  Collective.

    Writes go to the owners in one all-to-all; with repeated indices the
    last one (in the C order of ``ind``) wins.
    """
    ctx = a._st.ctx
    ind = _as_index(ind)
    _check_cast(a.dtype, v)
    if a.size == 0 and np.size(ind):
        raise IndexError("cannot replace elements of an empty array")
    ind = _modes(ind, a.size, mode)
    if not _fetch.is_distributed(ind):
        _agree_bounds(ctx, ind, a.size, None, replicated=True)
    lo, blk = _index_1d(ctx, ind)
    blk = np.asarray(blk, np.int64)
    if _fetch.is_distributed(ind):
        _agree_bounds(ctx, blk, a.size, None)
    if np.size(v) == 0:
        return None
    pos = lo + np.arange(blk.size, dtype=np.int64)
    vals = _cycled(ctx, v, pos, a.dtype)
    _scatter(a, np.where(blk < 0, blk + a.size, blk), vals, pos)
    return None


@implements(np.putmask)
def putmask(a, mask, values):
    """``a.flat[n] = values[n % values.size]`` where ``mask.flat[n]``, in place.  Collective.

    A scalar or ``a``-shaped ``values`` is elementwise (no all-to-all);
    other sizes are fetched by flat position.
    """
    if np.shape(mask) != a.shape:
        raise ValueError("putmask: mask and data must be the same size")
    _check_cast(a.dtype, values, np.putmask)
    m = mask if (not _fetch.is_distributed(mask) and np.asarray(mask).dtype == bool) else None
    if m is None:
        m = mask if mask.dtype == bool else np.not_equal(mask, 0)
    if np.size(values) == 0:
        if a.size and bool(np.any(m)):
            raise ValueError("Cannot insert from an empty array!")
        return None
    if np.ndim(values) == 0 or np.shape(values) == a.shape:
        _where_copy(a, values, m)
        return None

    ctx = a._st.ctx
    tmp = empty_like(a)
    held = tmp._layout.owned_size(ctx.rank) > 0
    pos = _flat_of_box(tmp._layout.block(ctx.rank), a.shape) if held else np.zeros(0, np.int64)
    vals = _cycled(ctx, values, pos, a.dtype)
    if held:
        tmp._block[...] = tmp._st.be.asarray(vals.reshape(tmp._block.shape))
    _where_copy(a, tmp, m)
    return None


@implements(np.place)
def place(arr, mask, vals):
    """``arr[mask] = vals`` with ``vals`` repeated as needed, in place.  Collective."""
    if np.size(mask) != arr.size:
        raise ValueError("place: mask and data must be the same size")
    _check_cast(arr.dtype, vals, np.place)
    ctx = arr._st.ctx
    if not _fetch.is_distributed(mask):
        mask = array(np.asarray(mask), comm=ctx)
    flat, counts = _flat_nonzero(mask)
    if np.size(vals) == 0:
        if counts.sum():
            raise ValueError("Cannot insert from an empty array!")
        return None
    pos = int(counts[: ctx.rank].sum()) + np.arange(flat.size, dtype=np.int64)
    v = _cycled(ctx, vals, pos, arr.dtype)
    _scatter(arr, flat, v, pos)
    return None


@implements(np.compress)
@provides("compress")
def compress(condition, a, axis=None, out=None):
    """Slices of ``a`` where ``condition`` (1-D) is true.  Collective."""
    if np.ndim(condition) != 1:
        raise ValueError("condition must be a 1-d array")
    if not _fetch.is_distributed(a):
        a = _engine_array(a, condition)
    if _fetch.is_distributed(condition):
        (idx,) = nonzero(condition)
    else:
        idx = np.nonzero(np.asarray(condition))[0]
    return take(a, idx, axis=axis, out=out)


@implements(np.extract)
def extract(condition, arr):
    """``ravel(arr)[ravel(condition) != 0]``, distributed.  Collective."""
    if not _fetch.is_distributed(arr):
        arr = _engine_array(arr, condition)
    if _fetch.is_distributed(condition):
        idx = flatnonzero(condition)
    else:
        idx = np.flatnonzero(np.asarray(condition))
    return _take_flat(arr, idx)


@implements(np.choose)
def choose(a, choices, out=None, mode="raise"):
    """``choices[a[i]][i]`` elementwise (broadcast), distributed.  Collective.

    One elementwise pass per choice (no all-to-all).
    """

    n = len(choices)
    if n == 0:
        raise ValueError("0-length sequence.")
    ctx = _fetch.context_of(a, *[choices[k] for k in range(n)])
    if mode == "raise":
        lo = np.min(a) if np.size(a) else 0
        hi = np.max(a) if np.size(a) else 0
        if int(lo) < 0 or int(hi) >= n:
            raise ValueError("invalid entry in choice array")
    else:
        a = _modes(a, n, mode)
    res = choices[n - 1]
    for k in range(n - 2, -1, -1):
        res = where(np.equal(a, k), choices[k], res)
    shape = np.broadcast_shapes(np.shape(a), *[np.shape(choices[k]) for k in range(n)])
    if not _fetch.is_distributed(res) or res.shape != shape:
        dt = np.result_type(*[_dtypes._dummy(_fetch._as_operand(choices[k])) for k in range(n)])
        full = empty(shape, dt, comm=ctx)
        _engine.assign(full, res)
        res = full
    return _result_out(res, out)


@implements(np.searchsorted)
def searchsorted(a, v, side="left", sorter=None):
    """Insertion points of ``v`` in the sorted 1-D distributed ``a``.  Collective.

    A replicated ``v`` (NumPy array or scalar): each rank searches its block
    and one all-reduce sums the counts.  A distributed ``v``: the first
    element of every rank's block is all-gathered, each value is sent to the
    one rank whose block can hold its insertion point, and the reply comes
    back (an all-to-all of requests and one of replies); the result has
    ``v``'s layout.  ``sorter`` permutes ``a`` first (a distributed take).
    """
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
    if not _fetch.is_distributed(a):
        a = _engine_array(a, v, sorter)
    if a.ndim != 1:
        raise ValueError("object too deep for desired array")
    if sorter is not None:
        if np.shape(sorter) != a.shape:
            raise ValueError("sorter.size must equal a.size")
        a = _take_flat(a, sorter)
    ctx = a._st.ctx
    m = _c_ordered_1d(a)
    lo, blk = _local_1d(m)
    if not _fetch.is_distributed(v):
        vv = np.asarray(v)
        cnt = np.searchsorted(blk, vv, side=side).astype(np.int64) if blk.size else np.zeros(vv.shape, np.int64)
        tot = reduce_bcast(ctx.comm, np.ascontiguousarray(cnt).reshape(-1), "sum").reshape(vv.shape)
        tot = tot.astype(_INTP)
        return tot[()] if vv.ndim == 0 else tot

    lay = m._layout
    sizes = [lay.owned_size(r) for r in range(ctx.size)]
    starts = [lay.block(r)[0][0] if sizes[r] else 0 for r in range(ctx.size)]
    firsts_l = allgather_blocks(ctx.comm, blk[:1], [(1,) if s else (0,) for s in sizes])
    ranks = np.array([r for r in range(ctx.size) if sizes[r]], np.int64)
    firsts = np.concatenate([f for f in firsts_l if f.size]) if ranks.size else np.empty(0, a.dtype)
    out = empty_like(v, dtype=_INTP)
    held = out._layout.owned_size(ctx.rank) > 0
    vloc = v._st.be.to_host(v._block).reshape(-1) if held else np.empty(0, v.dtype)
    dt = np.result_type(a.dtype, v.dtype)
    j = np.searchsorted(firsts.astype(dt), vloc.astype(dt), side=side) - 1 if ranks.size else np.full(vloc.size, -1)
    go = j >= 0
    dest = ranks[j[go]] if ranks.size else np.zeros(0, np.int64)

    def answer(vals):
        base = starts[ctx.rank]
        return base + np.searchsorted(blk.astype(dt), vals, side=side)

    res = np.zeros(vloc.size, np.int64)
    res[go] = _request(ctx, dest, [vloc[go].astype(dt)], answer, np.int64)
    if held:
        out._block[...] = out._st.be.asarray(res.reshape(out._block.shape).astype(_INTP))
    return out


def _along_key(shape, indices, axis: int):
    key = []
    nd = len(shape)
    for d in range(nd):
        if d == axis:
            key.append(indices)
        else:
            s = [1] * nd
            s[d] = shape[d]
            key.append(np.arange(shape[d], dtype=_INTP).reshape(s))
    return tuple(key)


@implements(np.take_along_axis)
def take_along_axis(arr, indices, axis=-1):
    """``arr`` picked along ``axis`` at ``indices`` (same ndim), distributed.  Collective."""
    if not _fetch.is_distributed(arr):
        arr = _engine_array(arr, indices)
    if axis is None:
        if np.ndim(indices) != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        return _take_flat(arr, indices)
    if np.ndim(indices) != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    if not np.issubdtype(np.result_type(indices), np.integer):
        raise IndexError("`indices` must be an integer array")

    (axis,) = normalize_axes((axis,), arr.ndim)
    return getitem(arr, _along_key(arr.shape, indices, axis))


@implements(np.put_along_axis)
def put_along_axis(arr, indices, values, axis):
    """``arr`` written along ``axis`` at ``indices``, in place.  Collective."""
    if axis is None:
        if np.ndim(indices) != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        put(arr, indices, values)
        return
    if np.ndim(indices) != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    if not np.issubdtype(np.result_type(indices), np.integer):
        raise IndexError("`indices` must be an integer array")

    (axis,) = normalize_axes((axis,), arr.ndim)
    setitem(arr, _along_key(arr.shape, indices, axis), values)


@implements(np.select)
def select(condlist, choicelist, default=0):
    """The first ``choicelist[i]`` whose ``condlist[i]`` holds, else ``default``.

    Collective; one elementwise pass per condition.
    """

    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    for i, c in enumerate(condlist):
        if np.result_type(c) != np.dtype(bool):
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    ops = [_fetch._as_operand(c) for c in choicelist] + [_fetch._as_operand(default)]
    dt = np.result_type(*[np.asarray(_dtypes._dummy(o)) for o in ops])
    ctx = _fetch.context_of(*condlist, *choicelist, default)
    shape = np.broadcast_shapes(*[np.shape(c) for c in list(condlist) + list(choicelist) + [default]])
    res = empty(shape, dt, comm=ctx)
    _engine.assign(res, default)
    for cond, choice in zip(reversed(condlist), reversed(choicelist)):
        _where_copy(res, choice, cond)
    return res


@implements(np.ix_)
def ix_(*args):
    """Open mesh of 1-D index arrays (distributed ones stay distributed, as views).

    Collective when a boolean argument is distributed (``nonzero``).
    """
    out = []
    nd = len(args)
    for k, s in enumerate(args):
        if _fetch.is_distributed(s):
            if s.ndim != 1:
                raise ValueError("Cross index must be 1 dimensional")
            if s.dtype == bool:
                (s,) = nonzero(s)
            out.append(s[(None,) * k + (slice(None),) + (None,) * (nd - k - 1)])
        else:
            out.append(np.ix_(*([np.zeros(0, _INTP)] * k + [s] + [np.zeros(0, _INTP)] * (nd - k - 1)))[k])
    return tuple(out)


def _local_map(x, fn, dtype, nout):
    """``nout`` arrays laid out like ``x`` whose blocks are ``fn(host block)``."""

    outs = [empty_like(x, dtype=dtype) for _ in range(nout)]
    ctx = x._st.ctx
    if x._layout.owned_size(ctx.rank):
        res = fn(x._st.be.to_host(x._block))
        for o, r in zip(outs, res):
            o._block[...] = o._st.be.asarray(np.asarray(r).reshape(o._block.shape))
    return outs


@implements(np.unravel_index)
def unravel_index(indices, shape, order="C"):
    """Coordinate arrays of flat ``indices`` (elementwise, laid out like them).  Collective."""
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"only int indices permitted (got {indices.dtype})")
    size = int(np.prod(shape, dtype=np.int64))
    ctx = indices._st.ctx
    loc = indices._st.be.to_host(indices._block) if indices._layout.owned_size(ctx.rank) else np.zeros(0, np.int64)
    bad = None
    if loc.size:
        lo, hi = int(loc.min()), int(loc.max())
        if lo < 0 or hi >= size:
            bad = lo if lo < 0 else hi
    reports = [r for r in allgather_object(ctx, bad) if r is not None]
    if reports:
        raise ValueError(f"index {reports[0]} is out of bounds for array with size {size}")
    return tuple(_local_map(indices, lambda b: np.unravel_index(b, shape, order=order), _INTP, len(shape)))


@implements(np.ravel_multi_index)
def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """Flat indices of coordinate arrays (broadcast, elementwise).  Collective."""

    dims = (int(dims),) if np.ndim(dims) == 0 else tuple(int(d) for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    ctx = _fetch.context_of(*multi_index)
    shape = np.broadcast_shapes(*[np.shape(m) for m in multi_index])
    lay = Layout.balanced(shape, ctx.size)
    blocks = [np.asarray(_block_of(ctx, m, shape, len(shape) - np.ndim(m), lay), np.int64) for m in multi_index]
    held = lay.owned_size(ctx.rank) > 0
    res, err = None, None
    if held:
        try:
            bl = np.broadcast_arrays(*blocks)
            res = np.ravel_multi_index(tuple(bl), dims, mode=mode, order=order)
        except ValueError as e:
            err = str(e)
    reports = [r for r in allgather_object(ctx, err) if r is not None]
    if reports:
        raise ValueError(reports[0])
    out = _new(shape, _INTP, ctx, layout=lay)
    if held:
        out._block[...] = out._st.be.asarray(np.asarray(res, _INTP).reshape(out._block.shape))
    return out
