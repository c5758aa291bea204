"""Advanced indexing, distributed: integer-array and boolean-mask getitem and
setitem (``x[key]`` and ``x[key] = value`` for keys basic indexing cannot view).

A key is parsed into a basic view plus index arrays on some of its axes
(NumPy's rules for the result's dimension order); each rank then computes the
flat source index of every result element it owns and reads or writes them
through the owner routing of :mod:`spmdarray.routines.indexing.routing` (one all-to-all
of requests and one of replies; a scatter is one all-to-all, the last write
wins as in NumPy).  Boolean masks become index arrays through the
distributed ``nonzero``.

The NumPy functions built on these (``take``, ``put``, ``nonzero``,
``searchsorted`` ...) are in :mod:`spmdarray.routines.indexing.functions`; their names
are re-exported here, where they were first defined.
"""

from __future__ import annotations

import operator

import numpy as np

from spmdarray.comm import allgather_object
from spmdarray.core import fetch as _fetch
from spmdarray.core.array import ndarray
from spmdarray.core.placement import is_whole
from spmdarray.core.registry import provides
from spmdarray.decomposition import Layout, normalize_key
from spmdarray.engine import elementwise as _engine
from spmdarray.routines.creation import _new
from spmdarray.routines.indexing.nonzero import nonzero
from spmdarray.routines.indexing.routing import (
    _INTP,
    _block_of,
    _flat_nonzero,
    _gather,
    _scatter,
    _where_copy,
    _wrap,
    masked_rows,
)
from spmdarray.routines.manipulation.shape import _flat_of_box

__all__ = ["getitem", "setitem"]


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
    if _fetch.is_distributed(k):
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
            if _fetch.is_distributed(obj):
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
                idx = nonzero(obj) if _fetch.is_distributed(obj) else np.nonzero(obj)
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
            loc = arr._st.be.to_host(arr._block) if arr._layout.owned_size(arr._st.ctx.rank) else np.zeros(0)
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


def _result_layout(p: _Parsed, rshape, nprocs: int) -> Layout:
    """Where the elements of an advanced-index result are computed: the layout of its
    distributed index arrays when they all have the result's shape and one layout that
    holds each element once (``N[Xi[I], Yi[I]] = Z[I]``: nothing moves to line them up),
    else the balanced layout of its shape.  Not collective."""
    dist = [a for a, _ in p.adv.values() if _fetch.is_distributed(a)]
    lays = {a._layout for a in dist}
    if len(lays) == 1 and all(a.shape == rshape for a in dist):
        (lay,) = lays
        if all(f is None for f in lay.gfixed) and all(d == 1 or a is not None for d, a in zip(lay.dims, lay.gaxis)):
            return lay
    return Layout.balanced(rshape, nprocs)


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
def _replica_key(x, key):
    """``key`` for NumPy on ``x``'s own copy, or None (the distributed path).

    Only when ``x`` is replicated (every rank holds all of it) and every
    spmdarray array in the key is replicated too: each rank then indexes
    its copy with NumPy, with no message and NumPy's own errors.
    """
    if not x.ndim or not is_whole(x._layout):
        return None
    items = key if isinstance(key, tuple) else (key,)
    out = []
    for k in items:
        if _fetch.is_distributed(k):
            if k._st.ctx is not x._st.ctx or not is_whole(k._layout):
                return None
            k = k._block
        out.append(k)
    return tuple(out) if isinstance(key, tuple) else out[0]


def _whole(v):
    """``v`` replicated on every rank (its owners send it once).  Collective."""
    out = _new(v.shape, v.dtype, v._st.ctx, layout=Layout.replicated(v.shape, v._st.ctx.size))
    _engine.assign(out, v)
    return out


def _mask_only(p: _Parsed) -> bool:
    return len(p.masks) == 1 and len(p.adv) == p.masks[0][0].ndim and not p.ints


@provides("getitem")
def getitem(x, key):
    """``x[key]`` for a key with integer arrays or boolean masks.  Collective.

    The result is a new array (as NumPy's advanced indexing gives a copy),
    laid out balanced; a lone distributed mask of ``x``'s shape gives a 1-D
    result split in C order like ``nonzero``'s.
    """

    local = _replica_key(x, key)
    if local is not None:
        res = x._block[local]
        out = _new(res.shape, res.dtype, x._st.ctx)
        if out._layout.owned_size(x._st.ctx.rank):
            out._block[...] = res[tuple(slice(lo, hi) for lo, hi in out._layout.block(x._st.ctx.rank))]
        return out
    k = key[0] if isinstance(key, tuple) and len(key) == 1 else key
    if _fetch.is_distributed(k) and k.dtype == bool and k.ndim == x.ndim and k.ndim > 0:
        if k.shape != x.shape:
            _parse(x, key)  # raises NumPy's IndexError
        out = masked_rows(x, k)
        if out is not None:
            return out
        flat, counts = _flat_nonzero(k)
        return _wrap(x._st.ctx, _gather(x, flat), counts)
    p = _parse(x, key)
    ctx = x._st.ctx
    rshape = _result_shape(p)
    lay = _result_layout(p, rshape, ctx.size)
    flat = _source_flat(p, rshape, lay)
    vals = _gather(p.v, flat.reshape(-1))
    out = _new(rshape, x.dtype, ctx, layout=lay)
    if lay.owned_size(ctx.rank):
        out._block[...] = out._st.be.asarray(vals.reshape(flat.shape))
    return out


@provides("setitem")
def setitem(x, key, value) -> None:
    """``x[key] = value`` for a key with integer arrays or boolean masks.  Collective.

    With repeated indices the value at the last position (C order of the
    broadcast index) wins, as in NumPy.
    """

    local = _replica_key(x, key)
    if local is not None:
        if _fetch.is_distributed(value):
            if not is_whole(value._layout):  # every rank receives the same copy
                value = _whole(value)
            value = value._block
        x._block[local] = value
        x._st.bump()
        return
    p = _parse(x, key, nonzero_masks=False)
    scalar = not _fetch.is_distributed(value) and np.ndim(value) == 0
    if scalar:
        np.empty(1, x.dtype)[0] = value  # NumPy's error for a value of the wrong type
    if _mask_only(p) and scalar and x.dtype.kind in "biufc":
        mask, vax, _ = p.masks[0]
        pre, post = vax, p.v.ndim - vax - mask.ndim
        if _fetch.is_distributed(mask):
            mexp = mask[(None,) * pre + (Ellipsis,) + (None,) * post]
        else:
            mexp = mask.reshape((1,) * pre + mask.shape + (1,) * post)
        _where_copy(p.v, value, mexp)
        return
    if p.masks:
        p = _parse(x, key)
    ctx = x._st.ctx
    rshape = _result_shape(p)
    lay = _result_layout(p, rshape, ctx.size)
    flat = _source_flat(p, rshape, lay)
    vals = _new(rshape, x.dtype, ctx, layout=lay)
    try:
        _engine.assign(vals, value)
    except ValueError:
        vs = np.shape(value)
        raise ValueError(
            f"shape mismatch: value array of shape {vs} could not be broadcast to indexing result of shape {rshape}"
        ) from None

    held = lay.owned_size(ctx.rank) > 0
    pos = _flat_of_box(lay.block(ctx.rank), rshape) if held else np.zeros(0, np.int64)
    loc = vals._st.be.to_host(vals._block) if held else np.zeros(0, x.dtype)
    _scatter(p.v, flat.reshape(-1), loc.reshape(-1), pos)
    x._st.bump()
