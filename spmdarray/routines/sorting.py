"""Sorting and set operations: a distributed sample sort.

Every sort is *stable*: equal elements keep their original order, whatever
``kind=`` says (NumPy guarantees that only for ``stable``/``mergesort``; the
answer of the other kinds is one of the valid ones).  NaNs sort last, and
complex numbers lexicographically, as in NumPy.

When the sort axis is not split over ranks, each rank sorts its block and no
data moves.  When it is split, the ranks along that axis run a sample sort
over their sub-communicator:

1. each rank sorts its block (keys: row of the block, value, global index);
2. each picks ``P`` regular samples; the samples are all-gathered and ``P-1``
   splitters chosen from them, identically on every rank;
3. each rank cuts its sorted block at the splitters and one ``alltoallv``
   sends piece ``j`` to rank ``j``; each rank re-sorts (merges) what it got;
4. a second ``alltoallv`` moves every element to the place its global
   position has in the original layout.

Bytes moved are about twice the array (once in each ``alltoallv``), and each
rank sends at most ``P`` messages per exchange.  ``unique`` and the set
operations use the sorted runs of step 3 directly (neighbours are found with
one small all-gather), and give distributed results.
"""

from __future__ import annotations

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from spmdarray.backend.backends import backend_of
from spmdarray.comm import allgather_blocks, allgather_counts, alltoallv
from spmdarray.core import fetch as _fetch
from spmdarray.core.array import ndarray
from spmdarray.core.placement import is_whole
from spmdarray.core.registry import implements
from spmdarray.core.storage import Storage
from spmdarray.decomposition import Layout
from spmdarray.engine import elementwise as _engine
from spmdarray.routines.creation import array, from_local
from spmdarray.routines.manipulation.joining import concatenate
from spmdarray.routines.manipulation.shape import redistribute

__all__ = [
    "sort",
    "argsort",
    "lexsort",
    "sort_complex",
    "partition",
    "argpartition",
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    "intersect1d",
    "union1d",
    "setdiff1d",
    "setxor1d",
    "isin",
]

_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


# ---------------------------------------------------------------- helpers
def _check_kind(kind) -> None:
    if kind not in _KINDS:
        raise ValueError(f"sort kind must be one of 'quick', 'heap', or 'stable' (got {kind!r})")


def balanced(x):
    """``x`` in the balanced layout of its shape (a copy only when needed).  Collective."""

    lay = Layout.balanced(x.shape, x._st.ctx.size)
    return x if x._layout == lay else redistribute(x, lay)


def _wrap(ctx, lay: Layout, dtype, local):
    """A new array of layout ``lay`` whose block is ``local`` (host or device)."""

    st = Storage(ctx, lay, dtype)
    res = ndarray._new(st, None)
    if lay.owned_size(ctx.rank):
        res._block[...] = st.be.asarray(local).reshape(res._block.shape)
    return res


def from_pieces(ctx, piece: np.ndarray):
    """1-D array made of each rank's ``piece`` in rank order, then balanced.  Collective."""

    be = backend_of(ctx)
    x = from_local(be.asarray(np.ascontiguousarray(piece)), ctx)
    return balanced(x)


def _argsort_keys(keys: list[np.ndarray]) -> np.ndarray:
    """Stable lexicographic order of ``keys`` (the first key is the most significant).

    The last key (the global index) must already be ascending among records
    equal in the other keys: a stable sort by those then orders it too.
    """
    if len(keys) == 2:
        return np.argsort(keys[0], kind="stable")
    return np.lexsort(keys[-2::-1])  # stable, NaNs last, as numpy.sort


def _sorted_keys(keys: list[np.ndarray]) -> np.ndarray:
    """Stable lexicographic order of arbitrary ``keys`` (samples: no ascending key)."""
    idx = np.arange(len(keys[0]))
    for k in reversed(keys):
        idx = idx[np.argsort(k[idx], kind="stable")]
    return idx


def _count_less(keys: list[np.ndarray], s: tuple) -> int:
    """Elements of the lexicographically sorted ``keys`` strictly below ``s``."""
    lo, hi = 0, len(keys[0])
    for k, v in zip(keys[:-1], s[:-1]):
        seg = k[lo:hi]
        a = int(np.searchsorted(seg, v, "left"))
        b = int(np.searchsorted(seg, v, "right"))
        lo, hi = lo + a, lo + b
        if lo == hi:
            return lo
    return lo + int(np.searchsorted(keys[-1][lo:hi], s[-1], "left"))


def _pad_value(dtype: np.dtype):
    """A value that sorts at or after every other of ``dtype`` (None: no such value)."""
    if dtype.kind == "f":
        return np.nan
    if dtype.kind == "c":
        return complex(np.nan, np.nan)
    if dtype.kind == "b":
        return True
    if dtype.kind in "iu":
        return np.iinfo(dtype).max
    return None


def _merge_rows(keys: list[np.ndarray]) -> np.ndarray:
    """Order of records (row, value, index) made of sorted pieces: per-row sorts.

    The records are grouped by row, each row's values padded into a rectangle
    with a value that sorts last, and the rectangle sorted along its rows
    (much faster than a lexicographic sort); padding sorts after the real
    values (it is placed after them and the sort is stable).
    """
    row, v = keys[0], keys[1]
    pad = _pad_value(v.dtype)
    if pad is None or not len(row):
        return _argsort_keys(keys)
    o = np.argsort(row, kind="stable")
    r = row[o]
    starts = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
    cnt = np.diff(np.r_[starts, len(r)])
    width = int(cnt.max())
    rect = np.full((len(starts), width), pad, v.dtype)
    seg = np.repeat(np.arange(len(starts)), cnt)
    within = np.arange(len(r)) - np.repeat(starts, cnt)
    rect[seg, within] = v[o]
    srt = np.argsort(rect, axis=1, kind="stable")
    real = np.arange(width)[None, :] < cnt[:, None]
    return o[(starts[:, None] + srt)[real]]


def sample_sort(comm, keys: list[np.ndarray], payload: list[np.ndarray] = (), *, presorted=False, merge=None):
    """Globally sort records over ``comm``.  Collective over ``comm``.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
    keys : list of numpy.ndarray
        1-D host arrays of one length (this rank's records); the first is the
        most significant.  The last must be a global index: unique, and
        among records equal in the other keys, ascending in (rank, position
        on the rank), so that a stable sort by the other keys orders it too.
        It makes the order total and the sort stable.
    payload : list of numpy.ndarray
        Arrays that travel with the records.
    presorted : bool
        The records are already in order on each rank.
    merge : callable, optional
        ``merge(keys) -> order`` of the received pieces (each sorted, in rank
        order); default: a stable lexicographic sort.

    Returns
    -------
    keys, payload : lists of numpy.ndarray
        This rank's run of the global order: rank ``j`` holds records that all
        come after those of ranks ``< j``.
    offset : int
        Global position of this rank's first record.
    counts : numpy.ndarray
        Number of records each rank holds afterwards.
    """
    if not presorted:
        order = _argsort_keys(keys)
        keys = [k[order] for k in keys]
        payload = [p[order] for p in payload]
    size = comm.Get_size()
    n = len(keys[0])
    if size > 1:
        ns = allgather_counts(comm, n)
        take = (np.arange(size) * n) // size if n else np.empty(0, np.intp)
        shapes = [((size,) if m else (0,)) for m in ns]
        samples = [np.concatenate(allgather_blocks(comm, np.ascontiguousarray(k[take]), shapes)) for k in keys]
        so = _sorted_keys(samples) if len(samples[0]) else np.empty(0, np.intp)
        s_tot = len(so)
        cuts = [0]
        for i in range(1, size):
            if s_tot:
                j = so[(i * s_tot) // size]
                cuts.append(max(cuts[-1], _count_less(keys, tuple(k[j] for k in samples))))
            else:
                cuts.append(0)
        cuts.append(n)
        send_counts = np.diff(np.asarray(cuts, np.int64))
        # One count exchange, then one Alltoallv per array (keys and payload share the counts).
        moved, _ = alltoallv(comm, [np.ravel(a) for a in (*keys, *payload)], send_counts)
        got, pay = moved[: len(keys)], moved[len(keys) :]
        order = (merge or _argsort_keys)(got)  # merge the sorted pieces (they arrive in index order)
        keys = [k[order] for k in got]
        payload = [p[order] for p in pay]
    counts = allgather_counts(comm, len(keys[0])) if size > 1 else np.array([n], np.int64)
    offset = int(counts[: comm.Get_rank()].sum())
    return keys, payload, offset, counts


def route(comm, dest: np.ndarray, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Send element ``i`` of every array to rank ``dest[i]`` of ``comm``.  Collective.

    Returns the arrays received, grouped by source rank (ascending), each
    group in the sender's order.
    """
    counts = np.bincount(dest, minlength=comm.Get_size()).astype(np.int64)
    if len(dest) < 2 or bool(np.all(dest[1:] >= dest[:-1])):
        return alltoallv(comm, [np.ravel(a) for a in arrays], counts)[0]
    order = np.argsort(dest, kind="stable")
    return alltoallv(comm, [np.ravel(a[order]) for a in arrays], counts)[0]


def owner_of(intervals, idx: np.ndarray) -> np.ndarray:
    """Grid coordinate whose ``(lo, hi)`` interval holds each index (empty intervals skipped)."""
    full = [(c, hi) for c, (lo, hi) in enumerate(intervals) if hi > lo]
    coords = np.array([c for c, _ in full] or [0], np.int64)
    his = np.array([hi for _, hi in full], np.int64)
    return coords[np.minimum(np.searchsorted(his, idx, "right"), len(coords) - 1)]


def _local_argsort(be, block, axis):
    if be.is_device:
        try:
            return be.xp.argsort(block, axis=axis, kind="stable")
        except (TypeError, ValueError, NotImplementedError):  # a device library without kind=: its sort is stable
            return be.xp.argsort(block, axis=axis)
    return np.argsort(block, axis=axis, kind="stable")


# ------------------------------------------------------------------ sort
def _sort_along(x, axis: int, values: bool, indices: bool, carry=None):
    """(sorted values, sorting indices) along ``axis`` of ``x``; either may be None.

    Collective.  The results have the balanced layout of ``x.shape`` (replicated
    when ``x`` is).  With
    ``carry`` (an array of ``x``'s shape), a third result: ``carry`` permuted
    as ``x`` is.
    """
    if not (is_whole(x._layout) and (carry is None or is_whole(carry._layout))):
        x = balanced(x)  # replicated operands are sorted where they are, each rank its copy
        if carry is not None:
            carry = balanced(carry)
    ctx = x._st.ctx
    be = x._st.be
    lay = x._layout
    itype = np.dtype(np.intp)
    k = lay.grid_axis_of(axis)
    if k is None or lay.dims[k] == 1 or x.size == 0:
        vals = idxs = cv = None
        if lay.owned_size(ctx.rank):
            loc = x._block
            o = _local_argsort(be, loc, axis)
            idxs = o
            vals = np.take_along_axis(loc, o, axis) if values else None
            cv = np.take_along_axis(carry._block, o, axis) if carry is not None else None
        res = (
            _wrap(ctx, lay, x.dtype, vals) if values else None,
            _wrap(ctx, lay, itype, idxs) if indices else None,
        )
        return res if carry is None else (*res, _wrap(ctx, lay, carry.dtype, cv))
    sub = ctx.sub(lay.dims, (k,))
    box = lay.block(ctx.rank)
    lo = box[axis][0]
    n_ax = x.shape[axis]
    loc = np.moveaxis(be.to_host(x._block), axis, -1)
    moved_shape = loc.shape
    rows = int(np.prod(moved_shape[:-1], dtype=np.int64))
    nloc = moved_shape[-1]
    b2 = loc.reshape(rows, nloc)
    o = np.argsort(b2, axis=1, kind="stable")  # each row sorted: the records in (row, value) order
    row = np.repeat(np.arange(rows, dtype=np.int64), nloc)
    gidx = (row * n_ax + lo + o.reshape(-1)).astype(np.int64)
    vals = np.take_along_axis(b2, o, 1).reshape(-1)
    keys = [row, vals, gidx] if rows > 1 else [vals, gidx]
    pay = []
    if carry is not None:
        cb = np.moveaxis(be.to_host(carry._block), axis, -1).reshape(rows, nloc)
        pay = [np.take_along_axis(cb, o, 1).reshape(-1)]
    keys, pay, offset, _ = sample_sort(sub, keys, pay, presorted=True, merge=_merge_rows if rows > 1 else None)
    v, g = keys[-2], keys[-1]
    pos = offset + np.arange(len(g), dtype=np.int64)
    col = pos % n_ax
    dest = owner_of(lay.intervals[axis], col)
    send = [pos] + ([v] if values else []) + ([g % n_ax] if indices else []) + list(pay)
    got = route(sub, dest, send)
    p = got[0]
    flat = (p // n_ax) * nloc + (p % n_ax - lo)
    out = []
    dts = ([x.dtype] if values else []) + ([itype] if indices else []) + ([carry.dtype] if carry is not None else [])
    for arr, dt in zip(got[1:], dts):
        res = np.empty(rows * nloc, dt)
        res[flat] = arr
        out.append(_wrap(ctx, lay, dt, np.moveaxis(res.reshape(moved_shape), -1, axis)))
    vals = out.pop(0) if values else None
    idxs = out.pop(0) if indices else None
    return (vals, idxs) if carry is None else (vals, idxs, out.pop(0))


def _prepare(a, axis):
    if axis is None:
        return a.ravel(), 0
    if a.ndim == 0:
        raise np.exceptions.AxisError(axis, 0)
    return a, normalize_axis_index(operator.index(axis), a.ndim)


@implements(np.sort)
def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """Distributed ``numpy.sort`` (a sample sort when the axis is split).  Collective.

    Always stable; ``kind`` is checked and otherwise ignored.
    """
    _check_kind(kind)
    if order is not None:
        raise NotImplementedError("numpy.sort(order=...) (structured dtypes) is not implemented in spmdarray")
    a, axis = _prepare(a, axis)
    return _sort_along(a, axis, True, False)[0]


@implements(np.argsort)
def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """Distributed ``numpy.argsort``.  Collective.

    Always stable (ties keep their original order), whatever ``kind``.
    """
    _check_kind(kind)
    if order is not None:
        raise NotImplementedError("numpy.argsort(order=...) (structured dtypes) is not implemented in spmdarray")
    a, axis = _prepare(a, axis)
    return _sort_along(a, axis, False, True)[1]


@implements(np.sort_complex)
def sort_complex(a):
    """Sort along the last axis, as complex.  Collective."""
    res = sort(a)
    if res.dtype.kind != "c":
        res = res.astype(np.result_type(res.dtype, np.complex64))
    return res


def _check_kth(kth, n):
    k = np.asarray(kth)
    if k.dtype.kind not in "iu":
        raise TypeError("Partition index must be integer")
    if k.size and (k.max() >= n or k.min() < -n):
        bad = int(k.max()) if k.max() >= n else int(k.min())
        raise ValueError(f"kth(={bad}) out of bounds ({n})")


@implements(np.partition)
def partition(a, kth, axis=-1, kind="introselect", order=None):
    """``numpy.partition`` computed as a full (stable) sort.  Collective.

    A sorted array is one valid partition for every ``kth``.
    """
    if kind != "introselect":
        raise ValueError(f"partition kind must be 'introselect' (got {kind!r})")
    a, ax = _prepare(a, axis)
    _check_kth(kth, a.shape[ax])
    return sort(a, axis=ax)


@implements(np.argpartition)
def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """``numpy.argpartition`` computed as a full (stable) argsort.  Collective."""
    if kind != "introselect":
        raise ValueError(f"partition kind must be 'introselect' (got {kind!r})")
    a, ax = _prepare(a, axis)
    _check_kth(kth, a.shape[ax])
    return argsort(a, axis=ax)


@implements(np.lexsort)
def lexsort(keys, axis=-1):
    """Distributed ``numpy.lexsort`` of 1-D keys (the last key is the primary).  Collective.

    Sorts the records (keys, index) with the sample sort; N-D keys raise
    ``NotImplementedError``.
    """
    keys = [k for k in keys]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shapes = {tuple(np.shape(k)) for k in keys}
    if len(shapes) != 1:
        raise ValueError("all keys need to be the same shape")
    (shape,) = shapes
    if len(shape) != 1:
        raise NotImplementedError("numpy.lexsort of N-D keys in spmdarray (1-D keys only)")
    normalize_axis_index(axis, 1)
    ref = next(k for k in keys if _fetch.is_distributed(k))
    ctx = ref._st.ctx
    lay = Layout.balanced(shape, ctx.size)
    blocks = []
    for k in keys:
        if _fetch.is_distributed(k):
            blocks.append(k._st.be.to_host(balanced(k)._block).reshape(-1))
        else:
            lo, hi = lay.block(ctx.rank)[0]
            blocks.append(np.asarray(k)[lo:hi])
    lo = lay.block(ctx.rank)[0][0]
    gidx = lo + np.arange(len(blocks[0]), dtype=np.int64)
    out, _, offset, _ = sample_sort(ctx.comm, blocks[::-1] + [gidx])
    return from_pieces(ctx, out[-1].astype(np.intp))


# ---------------------------------------------------------------- unique
def _flat_run(x):
    """This rank's run of the sorted flattened ``x``: (values, global indices, offset, counts)."""
    x = balanced(x.ravel())
    ctx = x._st.ctx
    lo = x._layout.block(ctx.rank)[0][0] if x._layout.owned_size(ctx.rank) else 0
    v = x._st.be.to_host(x._block).reshape(-1) if x._layout.owned_size(ctx.rank) else np.empty(0, x.dtype)
    g = lo + np.arange(len(v), dtype=np.int64)
    keys, _, offset, counts = sample_sort(ctx.comm, [v, g])
    return keys[0], keys[1], offset, counts


def _row_run(ar, axis):
    """Sorted run of the slices of ``ar`` along ``axis`` as records (rows of a 2-D block).

    Returns (rows, global slice indices, offset, counts, shape of one slice).
    """

    (axis,) = normalize_axis_tuple(axis, ar.ndim) if ar.ndim else (None,)
    if axis is None:
        raise np.exceptions.AxisError(0, 0)
    moved = np.moveaxis(ar, axis, 0)
    n = moved.shape[0]
    rec_shape = moved.shape[1:]
    k = int(np.prod(rec_shape, dtype=np.int64))
    if k == 0:
        raise NotImplementedError("numpy.unique(axis=...) of zero-size slices in spmdarray")
    ctx = ar._st.ctx
    sizes = [hi - lo for lo, hi in Layout.balanced((n,), ctx.size).intervals[0] or ((0, n),)]
    sizes += [0] * (ctx.size - len(sizes))
    m2 = redistribute(moved.reshape(n, k), Layout.from_extents((tuple(sizes), (k,))))
    lo = int(sum(sizes[: ctx.rank]))
    blk = m2._st.be.to_host(m2._block).reshape(-1, k) if m2._layout.owned_size(ctx.rank) else np.empty((0, k), ar.dtype)
    g = lo + np.arange(len(blk), dtype=np.int64)
    keys, _, offset, counts = sample_sort(ctx.comm, [blk[:, j] for j in range(k)] + [g])
    rows = np.stack(keys[:-1], axis=1) if len(keys) > 1 else np.empty((0, k), ar.dtype)
    return rows.reshape(-1, k), keys[-1], offset, counts, rec_shape


def _neighbour(ctx, vals: np.ndarray, counts: np.ndarray, last: bool):
    """The last (or first) value of the nearest non-empty run before (after) this rank, or None."""
    me = ctx.rank
    pick = vals[-1:] if last else vals[:1]
    shapes = [((1,) if c else (0,)) + vals.shape[1:] for c in counts]
    edges = allgather_blocks(ctx.comm, np.ascontiguousarray(pick), shapes)
    order = range(me - 1, -1, -1) if last else range(me + 1, ctx.size)
    for r in order:
        if counts[r]:
            return edges[r][0]
    return None


def _same(a, b, equal_nan: bool):
    eq = a == b
    if equal_nan and np.asarray(a).dtype.kind in "fc":
        eq = eq | (np.isnan(a) & np.isnan(b))
    return eq


def _group_starts(ctx, v, counts, equal_nan):
    """Bool per element of the run: it starts a new group of equal values."""
    prev = _neighbour(ctx, v, counts, last=True)
    starts = np.ones(len(v), bool)
    if len(v) > 1:
        starts[1:] = ~_same(v[1:], v[:-1], equal_nan)
    if len(v) and prev is not None:
        starts[0] = not bool(_same(v[0], prev, equal_nan))
    return starts


@implements(np.unique)
def unique(
    ar,
    return_index=False,
    return_inverse=False,
    return_counts=False,
    axis=None,
    *,
    equal_nan=True,
    sorted=True,  # noqa: A002
):
    """Distributed ``numpy.unique``.  Collective.

    The results are distributed arrays (``inverse`` has ``ar``'s shape when
    ``axis`` is None).  With ``axis=k`` the slices along ``k`` are sorted
    lexicographically as records, as NumPy does.
    """
    ctx = ar._st.ctx
    if axis is None:
        v, g, offset, counts = _flat_run(ar)
        starts = _group_starts(ctx, v, counts, equal_nan)
        n_rec = ar.size
    else:
        v, g, offset, counts, rec_shape = _row_run(ar, axis)
        n_rec = ar.shape[axis]
        prev = _neighbour(ctx, v, counts, last=True)
        starts = np.ones(len(v), bool)
        if len(v) > 1:
            starts[1:] = ~np.all(v[1:] == v[:-1], axis=1)
        if len(v) and prev is not None:
            starts[0] = not bool(np.all(v[0] == prev))
    total = int(counts.sum())
    if axis is None:
        res = [from_pieces(ctx, v[starts])]
    else:
        rows = from_local(backend_of(ctx).asarray(np.ascontiguousarray(v[starts])), ctx)
        rows = rows.reshape((rows.shape[0],) + rec_shape)
        res = [np.moveaxis(rows, 0, axis)]
    if return_index:
        res.append(from_pieces(ctx, g[starts].astype(np.intp)))
    if return_inverse or return_counts:
        nstart = allgather_counts(ctx.comm, int(starts.sum()))
        gid = int(nstart[: ctx.rank].sum()) + np.cumsum(starts) - 1
    if return_inverse:
        flat = Layout.balanced((n_rec,), ctx.size)
        dest = owner_of(flat.intervals[0], g)
        pos, val = route(ctx.comm, dest, [g, gid.astype(np.intp)])
        out = np.empty(flat.owned_size(ctx.rank), np.intp)
        out[pos - flat.block(ctx.rank)[0][0]] = val
        inv = _wrap(ctx, flat, np.dtype(np.intp), out)
        res.append(inv.reshape(ar.shape) if ar.ndim > 1 and axis is None else inv)
    if return_counts:
        spos = (offset + np.nonzero(starts)[0]).astype(np.int64)
        nxt = _neighbour(ctx, spos, np.asarray(nstart), last=False)
        ends = np.append(spos[1:], total if nxt is None else nxt)
        res.append(from_pieces(ctx, (ends - spos).astype(np.intp)))
    return res[0] if len(res) == 1 else tuple(res)


def _named(name, fields, values):
    import collections

    return collections.namedtuple(name, fields)(*values)


@implements(np.unique_values)
def unique_values(x):
    """Sorted unique values (array API).  Collective."""
    return unique(x, equal_nan=False)


@implements(np.unique_counts)
def unique_counts(x):
    """(values, counts) (array API).  Collective."""
    return _named("UniqueCountsResult", ["values", "counts"], unique(x, return_counts=True, equal_nan=False))


@implements(np.unique_inverse)
def unique_inverse(x):
    """(values, inverse_indices) (array API).  Collective."""
    return _named("UniqueInverseResult", ["values", "inverse_indices"], unique(x, return_inverse=True, equal_nan=False))


@implements(np.unique_all)
def unique_all(x):
    """(values, indices, inverse_indices, counts) (array API).  Collective."""
    r = unique(x, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    return _named("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"], r)


# ------------------------------------------------------------ set operations
def _dist(x, ctx):
    """``x`` as a distributed 1-D array on ``ctx`` (a NumPy input is split, not gathered)."""
    if _fetch.is_distributed(x):
        return x.ravel()

    return array(np.asarray(x).ravel(), comm=ctx)


def _ctx(*xs):
    return next(x for x in xs if _fetch.is_distributed(x))._st.ctx


def _select(x, mask):
    """Elements of 1-D ``x`` where 1-D ``mask`` is true, as a balanced array.  Collective."""
    x = balanced(x)
    mask = balanced(mask)
    ctx = x._st.ctx
    if x._layout.owned_size(ctx.rank):
        piece = x._st.be.to_host(x._block)[x._st.be.to_host(mask._block)]
    else:
        piece = np.empty(0, x.dtype)
    return from_pieces(ctx, piece)


@implements(np.isin)
def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Distributed ``numpy.isin``: one sample sort of both inputs together.  Collective.

    Records (value, 0 for a test element or 1 for an element, index) are
    sorted; an element is in ``test_elements`` when the last test record at
    or before it has its value.  The answers travel back to the elements'
    places.  ``kind`` is checked and otherwise ignored.
    """
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    ctx = _ctx(element, test_elements)
    e = balanced(_dist(element, ctx))
    t = balanced(_dist(test_elements, ctx))
    dt = np.result_type(e.dtype, t.dtype)
    ne = e.size
    parts = []
    for arr, tag, base in ((t, 0, ne), (e, 1, 0)):
        if arr._layout.owned_size(ctx.rank):
            v = arr._st.be.to_host(arr._block).astype(dt)
        else:
            v = np.empty(0, dt)
        lo = arr._layout.block(ctx.rank)[0][0] if len(v) else 0
        parts.append((v, np.full(len(v), tag, np.int8), base + lo + np.arange(len(v), dtype=np.int64)))
    keys = [np.concatenate([p[i] for p in parts]) for i in range(3)]
    (v, tag, g), _, _, counts = sample_sort(ctx.comm, keys)
    # The value of the last test record at or before each record (carried across ranks).
    is_t = tag == 0
    last_t = np.where(is_t, np.arange(len(v)), -1)
    last_t = np.maximum.accumulate(last_t) if len(v) else last_t
    my_last = v[last_t[-1:]] if len(v) and last_t[-1] >= 0 else v[:0]
    have = allgather_counts(ctx.comm, len(my_last))
    edges = allgather_blocks(ctx.comm, np.ascontiguousarray(my_last), [(int(h),) for h in have])
    carry = None
    for r in range(ctx.rank - 1, -1, -1):
        if have[r]:
            carry = edges[r][0]
            break
    found = np.zeros(len(v), bool)
    ok = last_t >= 0
    found[ok] = v[ok] == v[last_t[ok]]
    if carry is not None:
        found[~ok] = v[~ok] == carry
    if invert:
        found = ~found
    sel = ~is_t
    g_e, f_e = g[sel], found[sel]
    flat = Layout.balanced((ne,), ctx.size)
    pos, val = route(ctx.comm, owner_of(flat.intervals[0], g_e), [g_e, f_e])
    out = np.empty(flat.owned_size(ctx.rank), bool)
    out[pos - (flat.block(ctx.rank)[0][0] if len(out) else 0)] = val
    res = _wrap(ctx, flat, np.dtype(bool), out)
    shape = np.shape(element)
    return res.reshape(shape) if len(shape) != 1 else res


if hasattr(np, "in1d"):  # removed in NumPy 2.4

    @implements(np.in1d)
    def in1d(ar1, ar2, assume_unique=False, invert=False, *, kind=None):
        """Distributed ``numpy.in1d`` (``isin`` of the flattened input).  Collective."""
        return isin(_dist(ar1, _ctx(ar1, ar2)), ar2, assume_unique, invert, kind=kind)


@implements(np.intersect1d)
def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """Sorted common unique values (and the indices of their first occurrences).  Collective."""
    ctx = _ctx(ar1, ar2)
    dt = np.result_type(_dtype(ar1), _dtype(ar2))
    a, b = _dist(ar1, ctx), _dist(ar2, ctx)
    if not return_indices:
        u = unique(a)
        return _select(u, isin(u, b)).astype(dt, copy=False)
    u1, i1 = unique(a, return_index=True)
    u2, i2 = unique(b, return_index=True)
    m1, m2 = isin(u1, u2), isin(u2, u1)
    # Both are sorted, so their common values come in the same order.
    return _select(u1, m1).astype(dt, copy=False), _select(i1, m1), _select(i2, m2)


def _dtype(x):
    return x.dtype if _fetch.is_distributed(x) else np.asarray(x).dtype


@implements(np.union1d)
def union1d(ar1, ar2):
    """Sorted unique values of both inputs.  Collective."""

    ctx = _ctx(ar1, ar2)
    return unique(concatenate([_dist(ar1, ctx), _dist(ar2, ctx)]))


@implements(np.setdiff1d)
def setdiff1d(ar1, ar2, assume_unique=False):
    """Unique values of ``ar1`` not in ``ar2`` (sorted unless ``assume_unique``).  Collective."""
    ctx = _ctx(ar1, ar2)
    u = _dist(ar1, ctx) if assume_unique else unique(_dist(ar1, ctx))
    return _select(u, isin(u, ar2, invert=True))


@implements(np.setxor1d)
def setxor1d(ar1, ar2, assume_unique=False):
    """Sorted values in exactly one of the inputs.  Collective."""

    ctx = _ctx(ar1, ar2)
    a = _dist(ar1, ctx) if assume_unique else unique(_dist(ar1, ctx))
    b = _dist(ar2, ctx) if assume_unique else unique(_dist(ar2, ctx))
    vals, cnt = unique(concatenate([a, b]), return_counts=True, equal_nan=False)
    return _select(vals, _engine.elementwise(np.equal, [cnt, 1]))
