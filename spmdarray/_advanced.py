"""Advanced indexing, distributed: integer-array and boolean-mask getitem and
setitem, and the NumPy functions built on them (``take``, ``put``, ``nonzero`` ...).

Every gather and scatter is one request/reply pattern: each rank works out,
for the elements it owns in the result, which rank owns each source element
(from the source's :class:`~spmdarray.decomposition.Layout`), then one
all-to-all carries the requests (flat source indices) and one carries the
replies (values).  A scatter sends ``(target, value, position)`` triples in
one all-to-all; owners apply them in order of ``position`` (the flat C-order
position in the index), so with duplicate targets the last one wins, as in
NumPy.  Boolean masks become index arrays through a distributed ``nonzero``:
a prefix sum of per-rank counts, no gather.
"""

from __future__ import annotations

import itertools
import operator
import warnings
from functools import lru_cache

import numpy as np

from . import _engine
from ._dispatch import implements
from ._storage import Storage
from .comm import allgather_blocks, allgather_counts, allgather_object, alltoallv, reduce_bcast
from .decomposition import Layout, normalize_key, unravel

__all__ = [
    "getitem",
    "setitem",
    "nonzero",
    "flatnonzero",
    "argwhere",
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
        return x._st.be.to_host(x.local[_local_coords(x, f)])

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
        x.local[_local_coords(x, rf[keep])] = x._st.be.asarray(rv[keep])
    x._st.bump()


# ------------------------------------------------------------- wrapping
def _wrap(ctx, block: np.ndarray, counts):
    """Distributed array whose rows are each rank's ``block`` stacked in rank
    order (``counts[r]`` rows on rank ``r``).  Not collective."""
    from ._array import ndarray

    extents = (tuple(int(c) for c in counts),) + tuple((int(n),) for n in block.shape[1:])
    lay = Layout.from_extents(extents)  # grid (p, 1, ...): ranks stacked along axis 0
    st = Storage(ctx, lay, block.dtype, ghost=(0,) * block.ndim, alloc=_backend(ctx).asarray(block))
    return ndarray._new(st, None)


def _backend(ctx):
    from ._backend import backend_of

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
    from ._manipulation import redistribute

    return redistribute(m, Layout.balanced(m.shape, m._st.ctx.size))


def _ravel_c(a):
    """``a`` as a 1-D array whose rank order is C order.  Collective."""
    from ._manipulation import reshape

    m = a if a.ndim == 1 else reshape(a, (-1,))
    return _c_ordered_1d(m)


def _local_1d(m):
    """(offset, host block) of a C-ordered 1-D array on this rank."""
    ctx = m._st.ctx
    if not m._layout.owned_size(ctx.rank):
        return 0, np.empty(0, m.dtype)
    return m._layout.block(ctx.rank)[0][0], m._st.be.to_host(m.local)


def _flat_nonzero(a):
    """(flat C-order indices of non-zeros held here, counts per rank).  Collective."""
    m = _ravel_c(a)
    lo, loc = _local_1d(m)
    flat = (lo + np.flatnonzero(loc)).astype(_INTP)
    return flat, allgather_counts(a._st.ctx.comm, flat.size)


# --------------------------------------------------------------- nonzero
@implements(np.nonzero)
def nonzero(a):
    """Indices of the non-zero elements, one distributed 1-D array per axis.  Collective.

    A prefix sum of per-rank counts places each rank's indices (no gather);
    the results are split over the ranks in C order (unevenly).
    """
    if a.ndim == 0:
        raise ValueError(
            "Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() instead. "
            "If the context of this error is of the form `arr[nonzero(cond)]`, just use `arr[cond]`."
        )
    flat, counts = _flat_nonzero(a)
    ctx = a._st.ctx
    return tuple(_wrap(ctx, c.astype(_INTP), counts) for c in np.unravel_index(flat, a.shape))


@implements(np.flatnonzero)
def flatnonzero(a):
    """Indices of the non-zero elements of ``ravel(a)``, distributed.  Collective."""
    if a.ndim == 0:
        return nonzero(a.reshape(1))[0]
    flat, counts = _flat_nonzero(a)
    return _wrap(a._st.ctx, flat, counts)


@implements(np.argwhere)
def argwhere(a):
    """``(N, a.ndim)`` indices of the non-zero elements, rows distributed.  Collective."""
    ctx = a._st.ctx
    if a.ndim == 0:
        flat, counts = _flat_nonzero(a.reshape(1))
        return _wrap(ctx, np.zeros((flat.size, 0), _INTP), counts)
    flat, counts = _flat_nonzero(a)
    block = np.stack(np.unravel_index(flat, a.shape), axis=1).astype(_INTP).reshape(flat.size, a.ndim)
    return _wrap(ctx, block, counts)


# ----------------------------------------------------------- key parsing
class _Parsed:
    __slots__ = ("v", "adv", "rdims", "bpos", "bshape", "masks", "ints")


def _index_error_dtype():
    return IndexError(
        "arrays used as indices must be of integer (or boolean) type; convert the index with .astype(numpy.intp)"
    )


def _classify(k):
    """('none'|'ell'|'slice'|'int'|'arr'|'mask'|'bool0', object) for one key item."""
    if k is None:
        return "none", None
    if k is Ellipsis:
        return "ell", None
    if isinstance(k, slice):
        return "slice", k
    if isinstance(k, (bool, np.bool_)):
        return "bool0", bool(k)
    if _engine.is_distributed(k):
        if k.dtype == bool:
            return ("bool0", bool(k)) if k.ndim == 0 else ("mask", k)
        if k.dtype.kind in "iu":
            return ("int", operator.index(k)) if k.ndim == 0 else ("arr", k)
        raise _index_error_dtype()
    if isinstance(k, (list, tuple, np.ndarray)):
        a = np.asarray(k)
        if a.dtype == bool:
            return ("bool0", bool(a)) if a.ndim == 0 else ("mask", a)
        if a.size == 0 and not isinstance(k, np.ndarray):
            a = a.astype(_INTP)
        if a.dtype.kind in "iu":
            return ("int", int(a)) if a.ndim == 0 else ("arr", a.astype(_INTP))
        raise _index_error_dtype()
    try:
        return "int", operator.index(k)
    except TypeError:
        raise IndexError(
            "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
            "integer or boolean arrays are valid indices"
        ) from None


def _parse(x, key, nonzero_masks: bool = True) -> _Parsed:
    """Split an advanced index into a basic view ``v`` plus index arrays on
    some of ``v``'s axes, and the result's dimension order (NumPy's rules).

    Collective only when an index array is distributed (one all-gather for
    the bounds check; masks also run ``nonzero``, unless ``nonzero_masks`` is False:
    then the mask axes get no index arrays and the result shape is unknown).
    """
    from ._array import ndarray

    if not isinstance(key, tuple):
        key = (key,)
    items = [_classify(k) for k in key]
    if sum(1 for t, _ in items if t == "ell") > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(o.ndim if t == "mask" else (1 if t in ("slice", "int", "arr") else 0) for t, o in items)
    if consumed > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but {consumed} were indexed")
    basic, adv, rdims, advpos, masks = [], {}, [], [], []
    bpos = None
    ax = vax = 0
    dist_checks = []
    for t, (kind, obj) in enumerate(items + [("ell", None)] if not any(i[0] == "ell" for i in items) else items):
        if kind == "ell":
            fill = x.ndim - consumed if t < len(items) else x.ndim - ax
            for _ in range(fill):
                basic.append(slice(None))
                rdims.append(vax)
                vax += 1
                ax += 1
            continue
        if kind == "none":
            basic.append(None)
            rdims.append(vax)
            vax += 1
            continue
        if kind == "slice":
            basic.append(obj)
            rdims.append(vax)
            vax += 1
            ax += 1
            continue
        if bpos is None:
            bpos = len(rdims)
        advpos.append(t)
        if kind == "int":
            n = x.shape[ax]
            if not -n <= obj < n:
                raise IndexError(f"index {obj} is out of bounds for axis {ax} with size {n}")
            basic.append(obj)
            ax += 1
        elif kind == "arr":
            n = x.shape[ax]
            if _engine.is_distributed(obj):
                dist_checks.append((obj, ax, n))
            elif obj.size:
                lo, hi = int(obj.min()), int(obj.max())
                if hi >= n or lo < -n:
                    raise IndexError(f"index {hi if hi >= n else lo} is out of bounds for axis {ax} with size {n}")
            basic.append(slice(None))
            adv[vax] = (obj, n)
            vax += 1
            ax += 1
        elif kind == "mask":
            k = obj.ndim
            for j in range(k):
                if obj.shape[j] != x.shape[ax + j]:
                    raise IndexError(
                        f"boolean index did not match indexed array along axis {ax + j}; size of axis is "
                        f"{x.shape[ax + j]} but size of corresponding boolean axis is {obj.shape[j]}"
                    )
            masks.append((obj, vax, ax))
            if not nonzero_masks:
                idx = [np.zeros(0, _INTP)] * k
            else:
                idx = nonzero(obj) if _engine.is_distributed(obj) else np.nonzero(obj)
            for j in range(k):
                basic.append(slice(None))
                adv[vax + j] = (idx[j], x.shape[ax + j])
            vax += k
            ax += k
        else:  # bool0: an index array of length 1 (True) or 0 (False) on a new axis
            basic.append(None)
            adv[vax] = (np.zeros(1 if obj else 0, _INTP), 1)
            vax += 1
    if advpos != list(range(advpos[0], advpos[-1] + 1)):
        bpos = 0
    if dist_checks:
        bad = None
        for arr, axis, n in dist_checks:
            loc = arr._st.be.to_host(arr.local) if arr._layout.owned_size(arr._st.ctx.rank) else np.zeros(0)
            if loc.size:
                lo, hi = int(loc.min()), int(loc.max())
                if hi >= n or lo < -n:
                    bad = (hi if hi >= n else lo, axis, n)
                    break
        reports = [r for r in allgather_object(dist_checks[0][0]._st.ctx, bad) if r is not None]
        if reports:
            i, axis, n = reports[0]
            raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
    shapes = [np.shape(a) for a, _ in adv.values()]
    try:
        bshape = np.broadcast_shapes(*shapes) if nonzero_masks or not masks else None
    except ValueError:
        raise IndexError(
            "shape mismatch: indexing arrays could not be broadcast together with shapes "
            + " ".join(str(tuple(s)) for s in shapes)
        ) from None
    p = _Parsed()
    p.v = ndarray._new(x._st, x._map.getitem(normalize_key(tuple(basic), x.shape)))
    p.adv, p.rdims, p.bpos, p.bshape, p.masks = adv, rdims, bpos, bshape, masks
    p.ints = any(kind == "int" for kind, _ in items)
    return p


def _result_shape(p: _Parsed) -> tuple[int, ...]:
    dims = [p.v.shape[j] for j in p.rdims]
    return tuple(dims[: p.bpos]) + tuple(p.bshape) + tuple(dims[p.bpos :])


def _block_of(ctx, arr, rshape, lead: int, lay: Layout, dtype=_INTP):
    """This rank's block of ``lay`` of ``arr`` broadcast into ``rshape``, with
    ``arr``'s last axis ending at result axis ``lead + arr.ndim - 1`` (host).
    Collective when ``arr`` is distributed."""
    nd = len(rshape)
    pre, post = lead, nd - lead - np.ndim(arr)
    box = lay.block(ctx.rank)
    if _engine.is_distributed(arr):
        from ._creation import _new

        view = arr[(None,) * pre + (Ellipsis,) + (None,) * post] if arr.ndim else arr[(None,) * nd]
        tmp = _new(rshape, dtype, ctx, layout=lay)
        _engine.assign(tmp, view)
        if not lay.owned_size(ctx.rank):
            return np.zeros(tuple(hi - lo for lo, hi in box), dtype)
        return tmp._st.be.to_host(tmp.local)
    a = np.asarray(arr).reshape((1,) * pre + np.shape(arr) + (1,) * post)
    if not lay.owned_size(ctx.rank):
        return np.zeros(tuple(hi - lo for lo, hi in box), a.dtype)
    sl = tuple(slice(0, 1) if n == 1 and r != 1 else slice(lo, hi) for n, r, (lo, hi) in zip(a.shape, rshape, box))
    return a[sl]


def _source_flat(p: _Parsed, rshape, lay: Layout) -> np.ndarray:
    """This rank's block of flat C indices into ``p.v``, one per result element."""
    v = p.v
    ctx = v._st.ctx
    box = lay.block(ctx.rank)
    held = lay.owned_size(ctx.rank) > 0
    bshape = tuple(hi - lo for lo, hi in box) if held else (0,) * len(rshape)
    strides = [int(np.prod(v.shape[j + 1 :], dtype=np.int64)) for j in range(v.ndim)]
    flat = np.zeros((1,) * len(rshape), np.int64)
    nb = len(p.bshape)
    for i, j in enumerate(p.rdims):
        r = i if i < p.bpos else i + nb
        shp = [1] * len(rshape)
        shp[r] = bshape[r]
        lo = box[r][0] if held else 0
        flat = flat + (np.arange(lo, lo + bshape[r], dtype=np.int64) * strides[j]).reshape(shp)
    for j, (arr, n) in p.adv.items():
        vals = np.asarray(_block_of(ctx, arr, rshape, p.bpos + nb - np.ndim(arr), lay), np.int64)
        if held:
            vals = np.where(vals < 0, vals + n, vals)
            flat = flat + vals * strides[j]
    return np.broadcast_to(flat, bshape)


# ----------------------------------------------------------- get / set
def _mask_only(p: _Parsed) -> bool:
    return len(p.masks) == 1 and len(p.adv) == p.masks[0][0].ndim and not p.ints


def getitem(x, key):
    """``x[key]`` for a key with integer arrays or boolean masks.  Collective.

    The result is a new array (as NumPy's advanced indexing gives a copy),
    laid out balanced; a lone distributed mask of ``x``'s shape gives a 1-D
    result split in C order like ``nonzero``'s.
    """
    from ._creation import _new

    k = key[0] if isinstance(key, tuple) and len(key) == 1 else key
    if _engine.is_distributed(k) and k.dtype == bool and k.ndim == x.ndim and k.ndim > 0:
        if k.shape != x.shape:
            _parse(x, key)  # raises NumPy's IndexError
        flat, counts = _flat_nonzero(k)
        return _wrap(x._st.ctx, _gather(x, flat), counts)
    p = _parse(x, key)
    ctx = x._st.ctx
    rshape = _result_shape(p)
    lay = Layout.balanced(rshape, ctx.size)
    flat = _source_flat(p, rshape, lay)
    vals = _gather(p.v, flat.reshape(-1))
    out = _new(rshape, x.dtype, ctx, layout=lay)
    if lay.owned_size(ctx.rank):
        out.local[...] = out._st.be.asarray(vals.reshape(flat.shape))
    return out


def _where_copy(dst, src, where) -> None:
    """``dst[where] = src`` elementwise (broadcast).  Collective."""
    func = np.logical_or if dst.dtype == bool else np.positive
    args = [src, False] if dst.dtype == bool else [src]
    _engine.elementwise(func, args, out=(dst,), where=where, casting="unsafe", dtype=dst.dtype)


def setitem(x, key, value) -> None:
    """``x[key] = value`` for a key with integer arrays or boolean masks.  Collective.

    With repeated indices the value at the last position (C order of the
    broadcast index) wins, as in NumPy.
    """
    from ._creation import _new

    p = _parse(x, key, nonzero_masks=False)
    scalar = not _engine.is_distributed(value) and np.ndim(value) == 0
    if scalar:
        np.empty(1, x.dtype)[0] = value  # NumPy's error for a value of the wrong type
    if _mask_only(p) and scalar and x.dtype.kind in "biufc":
        mask, vax, _ = p.masks[0]
        pre, post = vax, p.v.ndim - vax - mask.ndim
        if _engine.is_distributed(mask):
            mexp = mask[(None,) * pre + (Ellipsis,) + (None,) * post]
        else:
            mexp = mask.reshape((1,) * pre + mask.shape + (1,) * post)
        _where_copy(p.v, value, mexp)
        return
    if p.masks:
        p = _parse(x, key)
    ctx = x._st.ctx
    rshape = _result_shape(p)
    lay = Layout.balanced(rshape, ctx.size)
    flat = _source_flat(p, rshape, lay)
    vals = _new(rshape, x.dtype, ctx, layout=lay)
    try:
        _engine.assign(vals, value)
    except ValueError:
        vs = np.shape(value)
        raise ValueError(
            f"shape mismatch: value array of shape {vs} could not be broadcast to indexing result of shape {rshape}"
        ) from None
    from ._manipulation import _flat_of_box

    held = lay.owned_size(ctx.rank) > 0
    pos = _flat_of_box(lay.block(ctx.rank), rshape) if held else np.zeros(0, np.int64)
    loc = vals._st.be.to_host(vals.local) if held else np.zeros(0, x.dtype)
    _scatter(p.v, flat.reshape(-1), loc.reshape(-1), pos)
    x._st.bump()


# ------------------------------------------------------------ functions
def _index_1d(ctx, ind):
    """(offset, host block) of ``ravel(ind)`` on a balanced 1-D layout.  Collective."""
    if _engine.is_distributed(ind):
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
    if _engine.is_distributed(ind):
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
    from ._creation import _new

    ctx = a._st.ctx
    ind = _modes(_as_index(ind), a.size, mode)
    if a.size == 0 and np.size(ind):
        raise IndexError("cannot do a non-empty take from an empty axes.")
    shape = np.shape(ind)
    lay = Layout.balanced(shape, ctx.size)
    dist = _engine.is_distributed(ind)
    if not dist:
        _agree_bounds(ctx, ind, a.size, None, replicated=True)
    blk = np.asarray(_block_of(ctx, ind, shape, 0, lay), np.int64)
    if dist:
        _agree_bounds(ctx, blk, a.size, None)
    blk = np.where(blk < 0, blk + a.size, blk)
    vals = _gather(a, blk.reshape(-1))
    out = _new(shape, a.dtype, ctx, layout=lay)
    if lay.owned_size(ctx.rank):
        out.local[...] = out._st.be.asarray(vals.reshape(blk.shape))
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
    if not _engine.is_distributed(a):
        a = _engine_array(a, indices)
    if axis is None:
        if np.ndim(indices) == 0 and not _engine.is_distributed(indices):
            i = int(_modes(np.asarray(operator.index(indices)), a.size, mode))
            if not -a.size <= i < a.size:
                raise IndexError(f"index {i} is out of bounds for size {a.size}")
            return _result_out(_take_flat(a, np.array([i]))[0], out)
        return _result_out(_take_flat(a, indices, mode), out)
    from ._reductions import normalize_axes

    (axis,) = normalize_axes((axis,), a.ndim)
    n = a.shape[axis]
    if n == 0 and np.size(indices):
        raise IndexError("cannot do a non-empty take from an empty axes.")
    ind = _modes(_as_index(indices) if np.ndim(indices) else indices, n, mode)
    key = (slice(None),) * axis + (ind,)
    if np.ndim(ind) == 0 and not _engine.is_distributed(ind):
        return _result_out(a[key].copy() if a.ndim > 1 else a[key], out)
    return _result_out(getitem(a, key), out)


def _engine_array(a, *others):
    from ._creation import array

    ctx = _engine.context_of(*others)
    return array(np.asarray(a), comm=ctx)


def _cycled(ctx, v, pos: np.ndarray, dtype) -> np.ndarray:
    """``v.flat[pos % v.size]`` (host): local for a replicated ``v``, a gather
    for a distributed one.  Collective.  (Casting was checked by ``_check_cast``.)"""
    if _engine.is_distributed(v):
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
    if _engine.is_distributed(v) or isinstance(v, np.ndarray):
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
    if not _engine.is_distributed(ind):
        _agree_bounds(ctx, ind, a.size, None, replicated=True)
    lo, blk = _index_1d(ctx, ind)
    blk = np.asarray(blk, np.int64)
    if _engine.is_distributed(ind):
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
    m = mask if (not _engine.is_distributed(mask) and np.asarray(mask).dtype == bool) else None
    if m is None:
        m = mask if mask.dtype == bool else np.not_equal(mask, 0)
    if np.size(values) == 0:
        if a.size and bool(np.any(m)):
            raise ValueError("Cannot insert from an empty array!")
        return None
    if np.ndim(values) == 0 or np.shape(values) == a.shape:
        _where_copy(a, values, m)
        return None
    from ._creation import empty_like
    from ._manipulation import _flat_of_box

    ctx = a._st.ctx
    tmp = empty_like(a)
    held = tmp._layout.owned_size(ctx.rank) > 0
    pos = _flat_of_box(tmp._layout.block(ctx.rank), a.shape) if held else np.zeros(0, np.int64)
    vals = _cycled(ctx, values, pos, a.dtype)
    if held:
        tmp.local[...] = tmp._st.be.asarray(vals.reshape(tmp.local.shape))
    _where_copy(a, tmp, m)
    return None


@implements(np.place)
def place(arr, mask, vals):
    """``arr[mask] = vals`` with ``vals`` repeated as needed, in place.  Collective."""
    if np.size(mask) != arr.size:
        raise ValueError("place: mask and data must be the same size")
    _check_cast(arr.dtype, vals, np.place)
    ctx = arr._st.ctx
    if not _engine.is_distributed(mask):
        from ._creation import array

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
def compress(condition, a, axis=None, out=None):
    """Slices of ``a`` where ``condition`` (1-D) is true.  Collective."""
    if np.ndim(condition) != 1:
        raise ValueError("condition must be a 1-d array")
    if not _engine.is_distributed(a):
        a = _engine_array(a, condition)
    if _engine.is_distributed(condition):
        (idx,) = nonzero(condition)
    else:
        idx = np.nonzero(np.asarray(condition))[0]
    return take(a, idx, axis=axis, out=out)


@implements(np.extract)
def extract(condition, arr):
    """``ravel(arr)[ravel(condition) != 0]``, distributed.  Collective."""
    if not _engine.is_distributed(arr):
        arr = _engine_array(arr, condition)
    if _engine.is_distributed(condition):
        idx = flatnonzero(condition)
    else:
        idx = np.flatnonzero(np.asarray(condition))
    return _take_flat(arr, idx)


@implements(np.choose)
def choose(a, choices, out=None, mode="raise"):
    """``choices[a[i]][i]`` elementwise (broadcast), distributed.  Collective.

    One elementwise pass per choice (no all-to-all).
    """
    from ._selection import where

    n = len(choices)
    if n == 0:
        raise ValueError("0-length sequence.")
    ctx = _engine.context_of(a, *[choices[k] for k in range(n)])
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
    if not _engine.is_distributed(res) or res.shape != shape:
        from ._creation import empty

        dt = np.result_type(*[_engine._dummy(_engine._as_operand(choices[k])) for k in range(n)])
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
    if not _engine.is_distributed(a):
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
    if not _engine.is_distributed(v):
        vv = np.asarray(v)
        cnt = np.searchsorted(blk, vv, side=side).astype(np.int64) if blk.size else np.zeros(vv.shape, np.int64)
        tot = reduce_bcast(ctx.comm, np.ascontiguousarray(cnt).reshape(-1), "sum").reshape(vv.shape)
        tot = tot.astype(_INTP)
        return tot[()] if vv.ndim == 0 else tot
    from ._creation import empty_like

    lay = m._layout
    sizes = [lay.owned_size(r) for r in range(ctx.size)]
    starts = [lay.block(r)[0][0] if sizes[r] else 0 for r in range(ctx.size)]
    firsts_l = allgather_blocks(ctx.comm, blk[:1], [(1,) if s else (0,) for s in sizes])
    ranks = np.array([r for r in range(ctx.size) if sizes[r]], np.int64)
    firsts = np.concatenate([f for f in firsts_l if f.size]) if ranks.size else np.empty(0, a.dtype)
    out = empty_like(v, dtype=_INTP)
    held = out._layout.owned_size(ctx.rank) > 0
    vloc = v._st.be.to_host(v.local).reshape(-1) if held else np.empty(0, v.dtype)
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
        out.local[...] = out._st.be.asarray(res.reshape(out.local.shape).astype(_INTP))
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
    if not _engine.is_distributed(arr):
        arr = _engine_array(arr, indices)
    if axis is None:
        if np.ndim(indices) != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        return _take_flat(arr, indices)
    if np.ndim(indices) != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    if not np.issubdtype(np.result_type(indices), np.integer):
        raise IndexError("`indices` must be an integer array")
    from ._reductions import normalize_axes

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
    from ._reductions import normalize_axes

    (axis,) = normalize_axes((axis,), arr.ndim)
    setitem(arr, _along_key(arr.shape, indices, axis), values)


@implements(np.select)
def select(condlist, choicelist, default=0):
    """The first ``choicelist[i]`` whose ``condlist[i]`` holds, else ``default``.

    Collective; one elementwise pass per condition.
    """
    from ._creation import empty

    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    for i, c in enumerate(condlist):
        if np.result_type(c) != np.dtype(bool):
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    ops = [_engine._as_operand(c) for c in choicelist] + [_engine._as_operand(default)]
    dt = np.result_type(*[np.asarray(_engine._dummy(o)) for o in ops])
    ctx = _engine.context_of(*condlist, *choicelist, default)
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
        if _engine.is_distributed(s):
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
    from ._creation import empty_like

    outs = [empty_like(x, dtype=dtype) for _ in range(nout)]
    ctx = x._st.ctx
    if x._layout.owned_size(ctx.rank):
        res = fn(x._st.be.to_host(x.local))
        for o, r in zip(outs, res):
            o.local[...] = o._st.be.asarray(np.asarray(r).reshape(o.local.shape))
    return outs


@implements(np.unravel_index)
def unravel_index(indices, shape, order="C"):
    """Coordinate arrays of flat ``indices`` (elementwise, laid out like them).  Collective."""
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"only int indices permitted (got {indices.dtype})")
    size = int(np.prod(shape, dtype=np.int64))
    ctx = indices._st.ctx
    loc = indices._st.be.to_host(indices.local) if indices._layout.owned_size(ctx.rank) else np.zeros(0, np.int64)
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
    from ._creation import _new

    dims = (int(dims),) if np.ndim(dims) == 0 else tuple(int(d) for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    ctx = _engine.context_of(*multi_index)
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
        out.local[...] = out._st.be.asarray(np.asarray(res, _INTP).reshape(out.local.shape))
    return out
