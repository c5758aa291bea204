"""Owner routing for advanced indexing: which rank holds each element, and the
all-to-all request/reply pattern that reads and writes elements by flat index.

Every gather and scatter is one request/reply pattern: each rank works out,
for the elements it owns in the result, which rank owns each source element
(from the source's :class:`~spmdarray.decomposition.Layout`), then one
all-to-all carries the requests (flat source indices) and one carries the
replies (values).  A scatter sends ``(target, value, position)`` triples in
one all-to-all; owners apply them in order of ``position`` (the flat C-order
position in the index), so with duplicate targets the last one wins, as in
NumPy.  Boolean masks become index arrays through a distributed ``nonzero``:
a prefix sum of per-rank counts (``_flat_nonzero`` here), no gather.

Also here: wrapping per-rank blocks as one distributed array (``_wrap``),
C-ordered 1-D views (``_ravel_c``), a broadcast index's block on a layout
(``_block_of``) and the masked elementwise copy (``_where_copy``).  Used by
:mod:`spmdarray.routines.indexing.advanced` (getitem/setitem) and
:mod:`spmdarray.routines.indexing.functions` (take, put, nonzero, ...).
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np

from spmdarray.backend.backends import backend_of
from spmdarray.comm import allgather_counts, alltoallv
from spmdarray.core import fetch as _fetch
from spmdarray.core.array import ndarray
from spmdarray.core.storage import Storage
from spmdarray.decomposition import Layout, unravel
from spmdarray.engine import elementwise as _engine
from spmdarray.routines.creation import _new
from spmdarray.routines.manipulation.shape import redistribute, reshape

_INTP = np.dtype(np.intp)


# --------------------------------------------------------------- owners
@lru_cache(maxsize=256)
def _coord_table(lay: Layout, axis: int) -> np.ndarray:
    """Grid coordinate owning each index along array ``axis`` (partitioned)."""
    table = np.zeros(lay.shape[axis], np.int64)
    for c, (lo, hi) in enumerate(lay.intervals[axis]):
        table[lo:hi] = c
    return table


def _owners(lay: Layout, coords, me: int) -> np.ndarray:
    """Rank holding each element at ``coords`` (one index array per axis).

    Along replicated grid axes the copy at ``me``'s coordinate is used (a
    local read); along fixed ones, the fixed coordinate.  Not collective.
    """
    mine = unravel(me, lay.dims)
    n = coords[0].shape if coords else (1,)
    rank = np.zeros(n, np.int64)
    for k, d in enumerate(lay.dims):
        a = lay.gaxis[k]
        if a is not None:
            c = _coord_table(lay, a)[coords[a]]
        elif lay.gfixed[k] is not None:
            c = lay.gfixed[k]
        else:
            c = mine[k]
        rank = rank * d + c
    return rank


def _holders(lay: Layout, coords) -> tuple[np.ndarray, np.ndarray]:
    """Every rank holding each element (all replicas), as ``(ranks, which)``:
    ``which[i]`` is the element that ``ranks[i]`` holds.  Not collective."""
    base = _owners(lay, coords, 0)  # coordinate 0 along replicated grid axes
    which = np.arange(base.size)
    rep = [k for k in range(len(lay.dims)) if lay.is_replicated_axis(k)]
    if not rep or all(lay.dims[k] == 1 for k in rep):
        return base, which
    strides = [int(np.prod(lay.dims[k + 1 :], dtype=np.int64)) for k in range(len(lay.dims))]
    ranks, whiches = [], []
    for combo in itertools.product(*(range(lay.dims[k]) for k in rep)):
        ranks.append(base + sum(c * strides[k] for c, k in zip(combo, rep)))
        whiches.append(which)
    return np.concatenate(ranks), np.concatenate(whiches)


def _request(ctx, dest: np.ndarray, payloads: list, handler, dtype) -> np.ndarray:
    """Send ``payloads`` rows to ``dest`` ranks, apply ``handler`` there and
    return its replies in the original order.  Collective (two all-to-alls)."""
    order = np.argsort(dest, kind="stable")
    counts = np.bincount(dest, minlength=ctx.size)
    recv, rcounts = alltoallv(ctx.comm, [p[order] for p in payloads], counts)
    rep = np.ascontiguousarray(handler(*recv), dtype)
    (back,), _ = alltoallv(ctx.comm, [rep], rcounts, recv_counts=counts)
    out = np.empty(back.shape, dtype)
    out[order] = back
    return out


def _local_coords(x, flat: np.ndarray):
    box = x._layout.block(x._st.ctx.rank)
    coords = np.unravel_index(flat, x.shape)
    be = x._st.be
    return tuple(be.asarray(c - lo) for c, (lo, _) in zip(coords, box))


def _gather(x, flat: np.ndarray) -> np.ndarray:
    """Values of ``x`` at C-order flat indices ``flat`` (in bounds, host int64).

    Collective: every rank passes its own requests.  Returns host values.
    """
    ctx = x._st.ctx
    if x.ndim == 0:
        x = x[None]
    flat = np.asarray(flat, np.int64).reshape(-1)
    if flat.size:
        dest = _owners(x._layout, np.unravel_index(flat, x.shape), ctx.rank)
    else:
        dest = np.zeros(0, np.int64)

    def read(f):
        if f.size == 0:
            return np.empty(0, x.dtype)
        return x._st.be.to_host(x._block[_local_coords(x, f)])

    return _request(ctx, dest, [flat], read, x.dtype)


def _scatter(x, flat: np.ndarray, vals: np.ndarray, pos: np.ndarray) -> None:
    """``x.flat[flat] = vals`` across ranks.  Collective.

    ``pos`` (unique over all ranks) orders the writes: for a target written
    more than once, the write with the largest position wins.
    """
    ctx = x._st.ctx
    flat = np.asarray(flat, np.int64).reshape(-1)
    vals = np.asarray(vals).astype(x.dtype, copy=False).reshape(-1)
    pos = np.asarray(pos, np.int64).reshape(-1)
    if flat.size:
        dest, which = _holders(x._layout, np.unravel_index(flat, x.shape))
    else:
        dest = which = np.zeros(0, np.int64)
    order = np.argsort(dest, kind="stable")
    sel = which[order]
    counts = np.bincount(dest, minlength=ctx.size)
    (rf, rv, rp), _ = alltoallv(ctx.comm, [flat[sel], vals[sel], pos[sel]], counts)
    if rf.size:
        o = np.argsort(rp, kind="stable")
        rf, rv = rf[o], rv[o]
        _, first = np.unique(rf[::-1], return_index=True)
        keep = rf.size - 1 - first
        x._block[_local_coords(x, rf[keep])] = x._st.be.asarray(rv[keep])
    x._st.bump()


# ------------------------------------------------------------- wrapping
def _wrap(ctx, block: np.ndarray, counts):
    """Distributed array whose rows are each rank's ``block`` stacked in rank
    order (``counts[r]`` rows on rank ``r``).  Not collective."""

    extents = (tuple(int(c) for c in counts),) + tuple((int(n),) for n in block.shape[1:])
    lay = Layout.from_extents(extents)  # grid (p, 1, ...): ranks stacked along axis 0
    st = Storage(ctx, lay, block.dtype, ghost=(0,) * block.ndim, alloc=_backend(ctx).asarray(block))
    return ndarray._new(st, None)


def _backend(ctx):
    return backend_of(ctx)


def _c_ordered_1d(m):
    """``m`` (1-D) laid out so that rank order is C order.  Collective when it must move data."""
    lay = m._layout
    ok = False
    k = lay.grid_axis_of(0)
    if k is not None:
        others = all(lay.dims[j] == 1 or lay.gfixed[j] is not None for j in range(len(lay.dims)) if j != k)
        iv = lay.intervals[0]
        ok = others and all(iv[c][0] == (iv[c - 1][1] if c else 0) for c in range(len(iv)))
    elif all(d == 1 for d in lay.dims):
        ok = True
    if ok:
        return m

    return redistribute(m, Layout.balanced(m.shape, m._st.ctx.size))


def _ravel_c(a):
    """``a`` as a 1-D array whose rank order is C order.  Collective."""

    m = a if a.ndim == 1 else reshape(a, (-1,))
    return _c_ordered_1d(m)


def _local_1d(m):
    """(offset, host block) of a C-ordered 1-D array on this rank."""
    ctx = m._st.ctx
    if not m._layout.owned_size(ctx.rank):
        return 0, np.empty(0, m.dtype)
    return m._layout.block(ctx.rank)[0][0], m._st.be.to_host(m._block)


def _flat_nonzero(a):
    """(flat C-order indices of non-zeros held here, counts per rank).  Collective."""
    m = _ravel_c(a)
    lo, loc = _local_1d(m)
    flat = (lo + np.flatnonzero(loc)).astype(_INTP)
    return flat, allgather_counts(a._st.ctx.comm, flat.size)


@lru_cache(maxsize=256)
def _rows_in_rank_order(lay: Layout) -> bool:
    """Whether the blocks of ``lay`` concatenated in rank order are the array in C order:
    at most axis 0 split, over ranks in order, each element held once.  Not collective."""
    k = lay.grid_axis_of(0)
    if any(d > 1 and j != k for j, d in enumerate(lay.dims)) or any(f is not None for f in lay.gfixed):
        return False
    if k is None:
        return all(d == 1 for d in lay.dims)
    covered = 0
    for lo, hi in lay.intervals[0]:  # rank order; empty blocks anywhere
        if hi > lo:
            if lo != covered:
                return False
            covered = hi
    return covered == lay.shape[0]


#: (id of the mask's storage, its version, its view map) -> (the storage, per-rank counts); the
#: storage is held so that its id is not reused while the entry lives
_COUNTS: dict = {}


def masked_rows(x, mask):
    """``x[mask]`` for a boolean ``mask`` of ``x``'s shape and layout, both laid out so that
    rank order is C order (:func:`_rows_in_rank_order`): each rank compresses its own block,
    with no message; or None, having done nothing, for other layouts.

    Collective: one all-gather of the counts, once per mask (the counts are kept while the
    mask is unwritten, for ``Z[I]``, ``C[I]``, ``Xi[I]`` in a row).
    """
    lay = x._layout
    if mask._layout != lay or not lay.shape or not _rows_in_rank_order(lay):
        return None
    ctx = x._st.ctx
    if lay.owned_size(ctx.rank):
        vals = x._block[mask._st.be.asarray(mask._block)]
    else:
        vals = x._st.be.empty((0,), x.dtype)
    ms = mask._st
    key = (id(ms), ms.version, mask._map)
    hit = _COUNTS.get(key)
    if hit is not None and hit[0] is ms:
        counts = hit[1]
    elif ctx.size == 1:
        counts = np.array([vals.shape[0]], np.int64)
    else:
        counts = allgather_counts(ctx.comm, int(vals.shape[0]))
        if len(_COUNTS) >= 2:  # (the entries keep their masks' storages alive: two at most)
            _COUNTS.clear()
        _COUNTS[key] = (ms, counts)
    return _wrap(ctx, vals, counts)


def _block_of(ctx, arr, rshape, lead: int, lay: Layout, dtype=_INTP):
    """This rank's block of ``lay`` of ``arr`` broadcast into ``rshape``, with
    ``arr``'s last axis ending at result axis ``lead + arr.ndim - 1`` (host).
    Collective when ``arr`` is distributed."""
    nd = len(rshape)
    pre, post = lead, nd - lead - np.ndim(arr)
    box = lay.block(ctx.rank)
    if _fetch.is_distributed(arr):
        view = arr[(None,) * pre + (Ellipsis,) + (None,) * post] if arr.ndim else arr[(None,) * nd]
        tmp = _new(rshape, dtype, ctx, layout=lay)
        _engine.assign(tmp, view)
        if not lay.owned_size(ctx.rank):
            return np.zeros(tuple(hi - lo for lo, hi in box), dtype)
        return tmp._st.be.to_host(tmp._block)
    a = np.asarray(arr).reshape((1,) * pre + np.shape(arr) + (1,) * post)
    if not lay.owned_size(ctx.rank):
        return np.zeros(tuple(hi - lo for lo, hi in box), a.dtype)
    sl = tuple(slice(0, 1) if n == 1 and r != 1 else slice(lo, hi) for n, r, (lo, hi) in zip(a.shape, rshape, box))
    return a[sl]


def _where_copy(dst, src, where) -> None:
    """``dst[where] = src`` elementwise (broadcast).  Collective."""
    func = np.logical_or if dst.dtype == bool else np.positive
    args = [src, False] if dst.dtype == bool else [src]
    _engine.elementwise(func, args, out=(dst,), where=where, casting="unsafe", dtype=dst.dtype)
