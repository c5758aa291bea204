"""Changing an array's length along an axis: ``repeat``, ``delete``,
``insert``, ``append``, ``resize``, and the joins ``block`` and ``unstack``.

``repeat`` and ``delete`` run without moving data first: each rank repeats
(or drops) the elements of its own block, and the blocks are relabelled with
new global extents from a prefix sum of the counts; one redistribution then
rebalances the result.  ``insert``, ``append`` and ``block`` assign slabs of
the result (see :mod:`spmdarray.routines.manipulation.joining`); ``insert`` at sorted indices
spreads the old blocks and the value blocks to their new positions per rank
(:func:`place`) and merges them with one masked copy.
"""

from __future__ import annotations

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from spmdarray.comm import allgather_object
from spmdarray.core import fetch as _fetch
from spmdarray.core.array import ndarray
from spmdarray.core.registry import implements
from spmdarray.core.storage import Storage
from spmdarray.decomposition import Layout, box_size, unravel
from spmdarray.engine import elementwise as _engine
from spmdarray.routines.creation import empty, zeros
from spmdarray.routines.manipulation.broadcasting import broadcast_to
from spmdarray.routines.manipulation.joining import concatenate
from spmdarray.routines.manipulation.shape import redistribute

__all__ = ["repeat", "delete", "insert", "append", "resize", "block", "unstack", "expand_along"]


def expand_along(x, axis: int, counts=None, dcounts=None):
    """Each element of ``x`` along ``axis`` repeated ``counts[i]`` times.  Collective.

    ``counts`` is a replicated 1-D integer NumPy array of length
    ``x.shape[axis]``; alternatively, for 1-D ``x``, ``dcounts`` is a
    distributed one of the same length (its prefix sum runs across ranks:
    one all-gather of a single integer per rank).  Each rank expands its own
    block; the result is then rebalanced (one redistribution).
    """

    ctx = x._st.ctx
    me = ctx.rank
    lay = Layout.balanced(x.shape, ctx.size)
    xb = redistribute(x, lay)
    box = lay.block(me)
    lo, hi = box[axis]
    be = x._st.be
    if dcounts is not None:
        cb = redistribute(dcounts.astype(np.intp, copy=False), lay)
        mine = be.to_host(cb._block).astype(np.intp) if box_size(box) else np.zeros(0, np.intp)
        info = allgather_object(ctx, (int(mine.sum()), bool((mine < 0).any())))
        if any(neg for _, neg in info):
            raise ValueError("repeats may not contain negative values.")
        k = lay.grid_axis_of(axis)
        sums = [0] * lay.dims[k]
        for r, (s, _) in enumerate(info):
            sums[unravel(r, lay.dims)[k]] = s
        starts = np.concatenate([[0], np.cumsum(sums)]).astype(np.int64)
        ivals = tuple((int(starts[c]), int(starts[c + 1])) for c in range(lay.dims[k]))
        local_counts = mine
    else:
        c = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
        ivals = tuple((int(c[a]), int(c[b])) for a, b in lay.intervals[axis])
        local_counts = counts[lo:hi]
    return _relabel(xb, axis, ivals, lambda blk: be.xp.repeat(blk, be.asarray(local_counts), axis=axis))


def _relabel(xb, axis: int, ivals, local_fn):
    """Wrap ``local_fn(block)`` of each rank's block of ``xb`` (balanced) as the
    blocks of a new array whose ``axis`` intervals are ``ivals``, then
    rebalance it.  Collective (the rebalancing is one redistribution)."""

    ctx = xb._st.ctx
    me = ctx.rank
    lay = xb._layout
    be = xb._st.be
    total = ivals[-1][1] if ivals else 0
    shape = tuple(total if a == axis else n for a, n in enumerate(xb.shape))
    intervals = tuple(ivals if a == axis else iv for a, iv in enumerate(lay.intervals))
    new_lay = Layout(shape, lay.dims, lay.gaxis, lay.gfixed, intervals)
    nbox = new_lay.block(me)
    if box_size(nbox):
        loc = local_fn(xb._block)
    else:
        loc = be.empty(tuple(b - a for a, b in nbox), xb.dtype)
    st = Storage(ctx, new_lay, xb.dtype, ghost=(0,) * xb.ndim, alloc=be.xp.ascontiguousarray(loc))
    return redistribute(ndarray._new(st, None), Layout.balanced(shape, ctx.size))


def place(x, axis: int, positions: np.ndarray, new_len: int):
    """Array of length ``new_len`` along ``axis`` with ``x[..., i, ...]`` at
    ``positions[i]`` (increasing); the other positions are uninitialised.

    Collective.  Each rank spreads its own block; one redistribution balances.
    """

    ctx = x._st.ctx
    lay = Layout.balanced(x.shape, ctx.size)
    xb = redistribute(x, lay)
    p = np.concatenate([np.asarray(positions, np.int64), [new_len]])
    iv = lay.intervals[axis]
    ivals = tuple(
        (0 if c == 0 else int(p[lo]), new_len if c == len(iv) - 1 else int(p[hi])) for c, (lo, hi) in enumerate(iv)
    )
    k = lay.grid_axis_of(axis)
    c = unravel(ctx.rank, lay.dims)[k]
    lo, hi = iv[c]
    start = ivals[c][0]
    be = x._st.be

    def spread(blk):
        shp = list(blk.shape)
        shp[axis] = ivals[c][1] - start
        out = be.empty(tuple(shp), blk.dtype)
        out[(slice(None),) * axis + (be.asarray(p[lo:hi] - start),)] = blk
        return out

    return _relabel(xb, axis, ivals, spread)


@implements(np.repeat)
def repeat(a, repeats, axis=None):
    """Repeat elements (a scalar count, or one count per element).  Collective.

    Each rank repeats its own block; the global offsets come from a prefix sum
    of the counts, then one redistribution balances the result.  Counts given
    as a distributed array are used in place when they are as long as the
    repeated (1-D or flattened) array; along an axis of an N-D array they are
    gathered (one axis long).
    """
    if axis is None or a.ndim == 0:  # NumPy treats a 0-d array as 1-d here
        a = a.ravel()
        axis = 0 if axis is None else axis
    axis = normalize_axis_index(axis, a.ndim)
    n = a.shape[axis]
    if _fetch.is_distributed(repeats):
        if repeats.ndim > 1:
            raise ValueError("repeats must be a scalar or a 1-D array")
        if repeats.ndim == 1 and repeats.shape[0] == n and a.ndim == 1:
            return expand_along(a, 0, dcounts=repeats)
        repeats = np.asarray(repeats)
    r = np.asarray(repeats)
    if r.ndim > 1:
        raise ValueError("repeats must be a scalar or a 1-D array")
    r = r.astype(np.intp)  # NumPy truncates float counts
    if (r < 0).any():
        raise ValueError("repeats may not contain negative values.")
    if r.ndim == 1 and r.shape[0] not in (1, n):
        raise ValueError(f"operands could not be broadcast together with shape ({n},) ({r.shape[0]},)")
    counts = np.ascontiguousarray(np.broadcast_to(r.reshape(-1) if r.ndim else r, (n,)))
    return expand_along(a, axis, counts)


@implements(np.delete)
def delete(arr, obj, axis=None):
    """Copy without the sub-arrays at ``obj`` along ``axis``.  Collective.

    ``obj`` (indices, a slice or a boolean mask; one axis long) is replicated;
    each rank drops its own elements, then one redistribution balances.
    """
    if axis is None:
        arr = arr.ravel()
        axis = 0
    axis = normalize_axis_index(axis, arr.ndim)
    n = arr.shape[axis]
    if _fetch.is_distributed(obj):
        obj = np.asarray(obj)
    kept = np.delete(np.arange(n), obj)  # NumPy's errors and index rules
    counts = np.zeros(n, np.intp)
    counts[kept] = 1
    return expand_along(arr, axis, counts)


def _slab(a, axis: int, lo: int, hi: int):
    return a[(slice(None),) * axis + (slice(lo, hi), Ellipsis)]


@implements(np.insert)
def insert(arr, obj, values, axis=None):
    """Copy with ``values`` inserted before ``obj`` along ``axis``.  Collective.

    Follows NumPy's algorithm; the result is assigned slab by slab (one slab
    per run of old elements and one per inserted index), so each rank receives
    only the parts of its block.  ``obj`` is replicated.
    """

    if axis is None:
        arr = arr.ravel()
        axis = 0
    axis = normalize_axis_index(axis, arr.ndim)
    nd = arr.ndim
    n = arr.shape[axis]
    ctx = arr._st.ctx
    if _fetch.is_distributed(obj):
        obj = np.asarray(obj)
    if isinstance(obj, slice):
        indices = np.arange(*obj.indices(n), dtype=np.intp)
    else:
        indices = np.array(obj)
        if indices.dtype == bool:
            raise IndexError("boolean array argument obj to insert must be one dimensional")
        if indices.ndim > 1:
            raise ValueError("index array argument obj to insert must be one dimensional or scalar")
    if not _fetch.is_distributed(values):
        values = np.asarray(values)
    vdt = values.dtype
    if not np.can_cast(vdt, arr.dtype, "unsafe"):
        raise TypeError(f"Cannot cast {vdt!r} to {arr.dtype!r}")
    if indices.size == 1:
        index = int(indices.item())
        if index < -n or index > n:
            raise IndexError(f"index {obj} is out of bounds for axis {axis} with size {n}")
        if index < 0:
            index += n
        if _fetch.is_distributed(values):
            while values.ndim < nd:
                values = values[None]
            if indices.ndim == 0:
                values = np.moveaxis(values, 0, axis)
        else:
            values = np.array(values, copy=None, ndmin=nd, dtype=arr.dtype)
            if indices.ndim == 0:
                values = np.moveaxis(values, 0, axis)
        numnew = values.shape[axis]
        shape = tuple(s + numnew if k == axis else s for k, s in enumerate(arr.shape))
        new = empty(shape, arr.dtype, comm=ctx)
        _engine.assign(_slab(new, axis, 0, index), _slab(arr, axis, 0, index))
        vshape = tuple(numnew if k == axis else s for k, s in enumerate(arr.shape))
        vals = values if values.shape == vshape else _b(values, vshape)
        _engine.assign(_slab(new, axis, index, index + numnew), vals)
        _engine.assign(_slab(new, axis, index + numnew, shape[axis]), _slab(arr, axis, index, n))
        return new
    if indices.size == 0 and not isinstance(obj, (np.ndarray,)) and np.asarray(obj).dtype != np.intp:
        indices = indices.astype(np.intp)
    indices = indices.astype(np.intp, casting="same_kind")
    if ((indices < -n) | (indices > n)).any():
        bad = indices[(indices < -n) | (indices > n)][0]
        raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
    indices = indices.copy()
    indices[indices < 0] += n
    numnew = len(indices)
    order = indices.argsort(kind="mergesort")
    indices[order] += np.arange(numnew)
    shape = tuple(s + numnew if k == axis else s for k, s in enumerate(arr.shape))
    vshape = tuple(numnew if k == axis else s for k, s in enumerate(arr.shape))
    vals = _b(values, vshape) if _fetch.is_distributed(values) else broadcast_to_np(values, vshape)
    old_mask = np.ones(shape[axis], bool)
    old_mask[indices] = False
    pos_old = np.flatnonzero(old_mask)
    if (order == np.arange(numnew)).all():
        # Sorted indices: old blocks and value blocks are each spread to their
        # new positions per rank, then merged by one masked copy.
        dv = empty(vshape, arr.dtype, comm=ctx)
        _engine.assign(dv, vals)
        new = place(arr, axis, pos_old, shape[axis])
        mask = (~old_mask).reshape(tuple(-1 if k == axis else 1 for k in range(nd)))
        np.copyto(new, place(dv, axis, indices, shape[axis]), casting="unsafe", where=mask)
        return new
    new = empty(shape, arr.dtype, comm=ctx)
    # runs of consecutive old positions
    src = 0
    i = 0
    while i < pos_old.size:
        j = i
        while j + 1 < pos_old.size and pos_old[j + 1] == pos_old[j] + 1:
            j += 1
        ln = j - i + 1
        _engine.assign(_slab(new, axis, int(pos_old[i]), int(pos_old[i]) + ln), _slab(arr, axis, src, src + ln))
        src += ln
        i = j + 1
    # inserted values in order of their index (later ones win, as in NumPy)
    for j, p in enumerate(indices):
        _engine.assign(_slab(new, axis, int(p), int(p) + 1), _slab(vals, axis, j, j + 1))
    return new


def broadcast_to_np(values, shape):
    try:
        return np.broadcast_to(values, shape)
    except ValueError:
        raise ValueError(
            f"shape mismatch: value array of shape {values.shape} could not be broadcast to indexing result of "
            f"shape {shape}"
        ) from None


def _b(values, shape):
    if not _fetch.is_distributed(values):
        return broadcast_to_np(values, shape)
    v = values
    while v.ndim > len(shape) and v.shape[0] == 1:
        v = v[0]
    try:
        return broadcast_to(v, shape)
    except ValueError:
        raise ValueError(
            f"shape mismatch: value array of shape {values.shape} could not be broadcast to indexing result of "
            f"shape {shape}"
        ) from None


@implements(np.append)
def append(arr, values, axis=None):
    """``arr`` with ``values`` appended (flattened when ``axis`` is None).  Collective."""
    if axis is None:
        if _fetch.is_distributed(arr) and arr.ndim != 1:
            arr = arr.ravel()
        elif not _fetch.is_distributed(arr):
            arr = np.ravel(arr)
        values = values.ravel() if _fetch.is_distributed(values) else np.ravel(values)
        axis = arr.ndim - 1
    return concatenate((arr, values), axis=axis)


@implements(np.resize)
def resize(a, new_shape):
    """New array of ``new_shape`` filled by repeating ``a`` (flattened) cyclically.  Collective.

    A broadcast view of ``a`` flattened is cut to size and reshaped: each rank
    receives only its block of the result.
    """

    if isinstance(new_shape, (int, np.integer)):
        new_shape = (new_shape,)
    new_shape = tuple(operator.index(s) for s in new_shape)
    flat = a.ravel()
    new_size = 1
    for dim_length in new_shape:
        new_size *= dim_length
        if dim_length < 0:
            raise ValueError("all elements of `new_shape` must be non-negative")
    if a.size == 0 or new_size == 0:
        return zeros(new_shape, a.dtype, comm=a._st.ctx)
    reps = -(-new_size // a.size)
    wide = broadcast_to(flat[None, :], (reps, a.size)).reshape(-1)
    return wide[:new_size].reshape(new_shape)


@implements(np.unstack)
def unstack(x, /, *, axis=0):
    """Views of ``x`` along ``axis`` (a tuple).  Not collective."""
    if x.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    axis = normalize_axis_index(axis, x.ndim)
    return tuple(x[(slice(None),) * axis + (i, Ellipsis)] for i in range(x.shape[axis]))


def _atleast_nd(a, nd: int):
    if _fetch.is_distributed(a):
        return a[(None,) * (nd - a.ndim) + (Ellipsis,)] if a.ndim < nd else a
    return np.array(a, copy=None, ndmin=nd)


def _block_rec(arrays, list_ndim: int, result_ndim: int, depth: int = 0):
    if depth < list_ndim:
        parts = [_block_rec(a, list_ndim, result_ndim, depth + 1) for a in arrays]
        return concatenate(parts, axis=-(list_ndim - depth))
    return _atleast_nd(arrays, result_ndim)


@implements(np.block)
def block(arrays):
    """Assemble an array from nested lists of blocks.  Collective.

    Blocks may be spmdarray arrays or NumPy arrays and scalars that every
    rank passes; each block is assigned into its slab of the result.
    """
    from numpy._core.shape_base import _block_check_depths_match

    bottom_index, arr_ndim, final_size = _block_check_depths_match(arrays)
    list_ndim = len(bottom_index)
    if bottom_index and bottom_index[-1] is None:
        raise ValueError(f"List at {_idx(bottom_index)} cannot be empty")
    result_ndim = max(arr_ndim, list_ndim)
    res = _block_rec(arrays, list_ndim, result_ndim)
    if list_ndim == 0:
        return res.copy() if _fetch.is_distributed(res) else res
    return res


def _idx(index) -> str:
    return "arrays" + "".join(f"[{i}]" for i in index if i is not None)
