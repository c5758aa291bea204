"""Reductions: local NumPy reduction, then a deterministic combine.

Each rank reduces its owned block with NumPy (keeping the reduced axes), then
the ranks that differ only along the reduced grid axes all-gather their
partials and combine them in rank order.  The result is replicated along
those grid axes (and distributed like the input along the others), which is
exactly the layout needed to broadcast it back against the input
(``x - x.mean(axis=0)`` moves no data).
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from spmdarray.backend.backends import backend_of
from spmdarray.comm import agreement, allgather_blocks, errors_may_raise, reduce_bcast
from spmdarray.core import fetch as _fetch
from spmdarray.core.array import ndarray
from spmdarray.core.fetch import is_distributed
from spmdarray.core.placement import is_whole
from spmdarray.core.registry import HANDLED, implements, provides
from spmdarray.core.storage import Storage
from spmdarray.decomposition import Layout
from spmdarray.engine import elementwise as _engine
from spmdarray.engine.fastpath import SLOW, _errors_raise
from spmdarray.engine.replicas import adopt
from spmdarray.fusion import record as _fusion
from spmdarray.routines.creation import array
from spmdarray.routines.reduction_axes import (
    _COMBINE,
    _cast,
    _combine_axes,
    _group,
    _lone_layout,
    _probe,
    normalize_axes,
)
from spmdarray.routines.reduction_plans import _drop_axes, _fast_full, _fast_lone
from spmdarray.settings import config

__all__ = ["reduce", "argreduce", "normalize_axes"]

def _partial_reduce(name, x, axes, dtype, initial=np._NoValue, lone=False):
    """Combine-ready partials: ndarray with the reduced axes kept (size 1).

    ``initial`` is used by min and max only (applying it to every partial is
    harmless there, and it makes empty blocks and empty arrays reducible).
    With ``lone`` (the result is an array, not a scalar every rank returns), a
    reduction whose data along the combined grid axes lies at one coordinate is
    left there (:func:`_lone_layout`): no collective, NumPy's bits from the
    holder's own reduction of all the data, empty blocks elsewhere.
    """
    ctx = x._s.ctx
    lay = x._layout
    fn = _COMBINE[name]
    kw = {} if name in ("min", "max", "any", "all") else {"dtype": dtype}
    if name in ("min", "max") and initial is not np._NoValue:
        kw["initial"] = initial
    res_dtype = _probe(fn, x, axes, keepdims=True, **kw).dtype
    rlay = _lone_layout(lay, axes) if lone and ctx.size > 1 else None
    if rlay is not None:
        be = backend_of(ctx)
        local = be.empty(tuple(hi - lo for lo, hi in rlay.block(ctx.rank)), res_dtype)
        with agreement(ctx, errors_may_raise()):  # (every rank joins it, the idle ones too)
            if rlay.owned_size(ctx.rank):
                local = _local_reduce(be, fn, x._block, axes, kw, res_dtype)
        return rlay, local, res_dtype
    rlay = lay.reduce(axes, keepdims=True)
    rshape = tuple(hi - lo for lo, hi in rlay.block(ctx.rank))

    def has_data(r):
        b = lay.block(r)
        return lay.holds(r) and all(b[a][1] > b[a][0] for a in axes)

    gaxes = _combine_axes(lay, axes)
    members = _group(lay, gaxes, ctx.rank) if gaxes else [ctx.rank]
    mine = None
    be = backend_of(ctx)
    # Under ``errstate(...='raise')`` (or warnings turned into errors) an error
    # may strike one rank only (its block overflows): every rank agrees on it,
    # whichever way it computes its partial (fused, stored, or no data at all).
    agreeing = errors_may_raise()

    def partial():
        if not has_data(ctx.rank):
            return None
        # A deferred bool/int tree summed whole is summed inside its fused kernel,
        # never stored; the partials are combined below exactly as stored ones.
        if name == "sum" and dtype is None and len(axes) == x.ndim and _fusion.is_deferred(x):
            fused = _fusion.local_sum(x, res_dtype)
            if fused is not None:
                return be.asarray(np.full((1,) * x.ndim, fused, res_dtype))
        return _local_reduce(be, fn, x._block, axes, kw, res_dtype)

    with agreement(ctx, agreeing):
        mine = partial()
    nbytes = len(members) * int(np.prod(rshape, dtype=np.int64)) * res_dtype.itemsize
    if len(members) > 1 and nbytes > config.reduce_gather_bytes and res_dtype.kind in "biufc":
        # Large partials: a rank-ordered Reduce + Bcast holds two blocks, not one per rank.
        mine = _identity(name, rshape, res_dtype) if mine is None else be.to_host(mine)
        return rlay, reduce_bcast(ctx.sub(lay.dims, gaxes), mine, name).reshape(rshape), res_dtype
    if len(members) > 1:
        shapes = [rshape if has_data(m) else (0,) * len(rshape) for m in members]
        block = be.to_host(mine) if mine is not None else np.empty((0,) * len(rshape), res_dtype)
        parts = allgather_blocks(ctx.sub(lay.dims, gaxes), block, shapes)
        parts = [p for p, m in zip(parts, members) if has_data(m)]
    else:
        parts = [mine] if mine is not None else []

    def combine():
        if not parts:
            empty = np.empty(tuple(0 if a in axes else n for a, n in enumerate(rshape)), x.dtype)
            return np.asarray(fn(empty, axis=axes, keepdims=True, **kw), dtype=res_dtype)
        if len(parts) == 1:
            return parts[0]
        return np.asarray(fn(np.stack(parts), axis=0, **kw), dtype=res_dtype)

    with agreement(ctx, agreeing):
        local = combine()
    return rlay, local, res_dtype


def _local_reduce(be, fn, block, axes, kw: dict, res_dtype):
    """``fn`` over this rank's block, keeping the reduced axes (on the block's device)."""
    if be.is_device and "initial" in kw:
        # Device reductions take no ``initial``: fold it in afterwards (the block is not empty).
        kw = dict(kw)
        initial = kw.pop("initial")
        part = fn(block, axis=axes, keepdims=True, **kw)
        part = (np.minimum if fn is np.min else np.maximum)(part, initial)
    else:
        part = fn(block, axis=axes, keepdims=True, **kw)
    return be.asarray(part, res_dtype)


def _identity(name: str, shape, dtype: np.dtype) -> np.ndarray:
    """A block that leaves reduction ``name`` unchanged (for ranks with no data)."""
    if name in ("min", "max"):
        big = name == "min"
        if dtype.kind in "fc":
            value = np.inf if big else -np.inf
        elif dtype.kind == "b":
            value = big
        else:
            info = np.iinfo(dtype)
            value = info.max if big else info.min
    else:
        value = {"sum": 0, "prod": 1, "any": False, "all": True}[name]
    return np.full(shape, value, dtype)


def _finish(ctx, rlay: Layout, local, dtype, axes, keepdims, out, ndim_in):
    """Wrap the combined local block as a result, a scalar, or into ``out``."""

    if not keepdims:
        final = [a for a in range(ndim_in) if a not in axes]
        lay = _drop_axes(rlay, axes)
        local = local.reshape(tuple(local.shape[a] for a in final))
    else:
        lay = rlay
    if out is None and not lay.shape:
        return backend_of(ctx).to_host(local).reshape(())[()]
    st = Storage(ctx, lay, dtype)
    res = ndarray._new(st, None)
    if lay.owned_size(ctx.rank):
        res._block[...] = st.be.asarray(local)
    if out is not None:
        _engine.assign(out, res)
        return out
    return res


@provides("reduce")
def reduce(name, x, axis=None, dtype=None, out=None, keepdims=False, ddof=0, initial=np._NoValue, where=True):
    """NumPy reduction ``name`` over a distributed array.

    Collective.  ``name`` is one of sum, prod, min, max, any, all, mean,
    var, std.  Supports ``axis`` (int or tuple), ``dtype``, ``out``,
    ``keepdims``, ``ddof`` (var/std) and ``initial`` (sum/prod/min/max).
    Full reductions without ``out`` return a NumPy scalar that is
    bit-for-bit identical on every rank.
    """
    if axis is None and dtype is None and out is None and not keepdims and initial is np._NoValue and where is True:
        if name == "mean" and type(x) is ndarray and x.dtype.kind in "fc" and x.dtype.itemsize > 2:
            # The sum's plan, then the general path's division (it accumulates in x's own dtype).
            res = _fast_full("sum", x)
            if res is not SLOW:
                with np.errstate(invalid="ignore", divide="ignore"):
                    return np.true_divide(res, x.size)
        res = _fast_full(name, x)
        if res is not SLOW:
            return res
    if out is None and where is True and x.ndim:
        res = _on_replica(name, x, axis, dtype, keepdims, ddof, initial)
        if res is not SLOW:
            return res
        if axis is not None and dtype is None and initial is np._NoValue and name in _COMBINE:
            res = _fast_lone(name, x, axis, keepdims)
            if res is not SLOW:
                return res
    if where is not True:
        raise NotImplementedError(f"{name}(where=...) is not implemented in spmdarray yet")
    if x.ndim == 0:
        return _reduce_0d(name, x, axis, dtype, out, keepdims, ddof, initial)
    axes = normalize_axes(axis, x.ndim)
    ctx = x._s.ctx  # (a deferred x is not evaluated here: a fused sum may not need it)
    npfn = getattr(np, name)
    kw: dict = {}
    if name in ("sum", "prod", "mean", "var", "std"):
        kw["dtype"] = dtype
    if name in ("var", "std"):
        kw["ddof"] = ddof
    if initial is not np._NoValue:
        if name not in ("sum", "prod", "min", "max"):
            raise TypeError(f"{name}() got an unexpected keyword argument 'initial'")
        kw["initial"] = initial
    res_dtype = _probe(npfn, x, axes, keepdims=keepdims, **kw).dtype  # NumPy's errors
    if out is not None and not _fetch.is_distributed(out):
        raise TypeError(f"out= must be a spmdarray array, got {type(out).__name__}")
    lone = keepdims or len(axes) < x.ndim  # an array result may stay on its one holder
    if name in _COMBINE:
        rlay, local, dt = _partial_reduce(name, x, axes, dtype if name in ("sum", "prod") else None, initial, lone)
        if initial is not np._NoValue:
            op = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}[name]
            local = op(local, initial).astype(res_dtype)
        return _finish(ctx, rlay, _cast(local, res_dtype), res_dtype, axes, keepdims, out, x.ndim)
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    if dtype is not None:
        acc = np.dtype(dtype)
    elif np.issubdtype(x.dtype, np.integer) or x.dtype == bool:
        acc = np.dtype(np.float64)
    elif x.dtype == np.float16:
        acc = np.dtype(np.float32)
    else:
        acc = x.dtype
    rlay, s, _ = _partial_reduce("sum", x, axes, acc, lone=lone)
    if name == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):
            local = np.true_divide(s, count) if count else np.full_like(s, np.nan)
        return _finish(ctx, rlay, _cast(local, res_dtype), res_dtype, axes, keepdims, out, x.ndim)
    # var / std: two passes, as NumPy does

    with np.errstate(invalid="ignore", divide="ignore"):
        mean_local = np.true_divide(s, count) if count else np.full_like(s, np.nan)
    mst = Storage(ctx, rlay, mean_local.dtype)
    mean = ndarray._new(mst, None)
    if rlay.owned_size(ctx.rank):
        mean._block[...] = mst.be.asarray(mean_local)
    d = _engine.elementwise(np.subtract, [x, mean])
    is_complex = d.dtype.kind == "c"
    if is_complex:
        sq = _engine.elementwise(np.multiply, [d, _engine.elementwise(np.conjugate, [d])])
        with warnings.catch_warnings():  # d * conj(d) is real: keep its real part, as NumPy does
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            sq = sq.astype(np.dtype(res_dtype))
    else:
        sq = _engine.elementwise(np.multiply, [d, d], out=(d,))  # d is a temporary: square it in place, as NumPy
    rlay2, ss, _ = _partial_reduce("sum", sq, axes, acc if dtype is None or not is_complex else None, lone=lone)
    with np.errstate(invalid="ignore", divide="ignore"):
        local = np.true_divide(ss, max(count - ddof, 0))
        if name == "std":
            local = np.sqrt(local)
    return _finish(ctx, rlay2, _cast(local.real, res_dtype), res_dtype, axes, keepdims, out, x.ndim)


_DTYPED = frozenset(("sum", "prod", "mean", "var", "std"))


def _on_replica(name, x, axis, dtype, keepdims, ddof, initial):
    """``numpy.<name>(x, axis=...)`` on the copy every rank holds of a replicated ``x``, or SLOW.

    Collective in the sense of :func:`reduce` (every rank takes the same
    branch); it sends nothing.  NumPy's own result and errors, the same on
    every rank (the same data); an array result is replicated, or split when
    it is not small.  SLOW (nothing done) for a deferred ``x``, a split one,
    a device backend, or while NumPy errors may raise (the general path's
    agreement and its floating-point error state decide then).
    """
    s = x._s
    if s.deferred or s.be.is_device or (dtype is not None and name not in _DTYPED) or not is_whole(x._layout):
        return SLOW
    if _errors_raise():
        return SLOW
    kw: dict = {"axis": axis}
    if dtype is not None:
        kw["dtype"] = dtype
    if keepdims:
        kw["keepdims"] = True
    if ddof and name in ("var", "std"):
        kw["ddof"] = ddof
    if initial is not np._NoValue:
        kw["initial"] = initial
    res = getattr(np, name)(x._block, **kw)
    if not isinstance(res, np.ndarray):
        return res
    return adopt(s.ctx, s.be, res)


def _reduce_0d(name, x, axis, dtype, out, keepdims, ddof, initial):
    """A reduction of a 0-d array, as NumPy's: a scalar (also with ``keepdims``).  Collective.

    ``axis`` may be None or ``()``; the ufunc reductions (sum, prod, min, max,
    any, all) also accept the integers 0 and -1, as NumPy's do.
    """
    axes = axis if isinstance(axis, (tuple, list)) else () if axis is None else None
    if axes is None:
        a = operator.index(axis)
        if name not in _COMBINE or a not in (0, -1):
            raise np.exceptions.AxisError(a, 0)
    elif axes:
        raise np.exceptions.AxisError(operator.index(axes[0]), 0)
    kw = {"ddof": ddof} if name in ("var", "std") else {}
    if initial is not np._NoValue:
        kw["initial"] = initial
    res = reduce(name, x.reshape(1), axis=0, dtype=dtype, **kw)
    if out is not None:
        _engine.assign(out, res)
        return out
    return res


def _local_arg(be, npfn, loc, axis):
    """argmin/argmax of a block.  Device kernels do not let the first NaN win as
    NumPy does: there, the first NaN's index (a min over positions) replaces it."""
    res = npfn(loc, axis=axis)
    if be.is_device and loc.dtype.kind in "fc":
        nan = np.isnan(loc)
        if axis is None:
            pos = be.xp.arange(loc.size).reshape(loc.shape)
            n = loc.size
        else:
            shape = [1] * loc.ndim
            shape[axis] = loc.shape[axis]
            pos = be.xp.arange(loc.shape[axis]).reshape(shape)
            n = loc.shape[axis]
        first = np.min(np.where(nan, pos, n), axis=axis)
        res = np.where(first < n, first, res)
    return res


@provides("argreduce")
def argreduce(name, x, axis=None, out=None, keepdims=False):
    """Distributed ``argmin``/``argmax``.  Collective.

    The first occurrence wins, and NaN counts as the extreme, as in NumPy.
    """
    ctx = x._st.ctx
    npfn = getattr(np, name)
    lay = x._layout
    if axis is None:
        with np.errstate(all="ignore"):
            npfn(np.ones(tuple(min(n, 1) for n in x.shape), x.dtype))  # NumPy's empty-sequence error
        # candidates: (global flat index, value) from each holder
        b = lay.block(ctx.rank)
        gaxes = tuple(k for k in range(len(lay.dims)) if not lay.is_replicated_axis(k))
        members = _group(lay, gaxes, ctx.rank) if gaxes else [ctx.rank]
        shapes = [(1,) if lay.owned_size(m) else (0,) for m in members]
        if lay.owned_size(ctx.rank):
            loc = x._block
            i = int(_local_arg(x._st.be, npfn, loc, None))
            idx = np.unravel_index(i, loc.shape)
            gidx = np.ravel_multi_index(tuple(j + lo for j, (lo, _) in zip(idx, b)), x.shape)
            val = x._st.be.to_host(loc[idx]).reshape(1)
            gi = np.array([gidx], np.int64)
        else:
            val = np.empty((0,), x.dtype)
            gi = np.empty((0,), np.int64)
        if len(members) > 1:
            sub = ctx.sub(lay.dims, gaxes)
            vals = np.concatenate(allgather_blocks(sub, val, shapes))
            gis = np.concatenate(allgather_blocks(sub, gi, shapes))
        else:
            vals, gis = val, gi
        order = np.argsort(gis, kind="stable")
        res = np.int64(gis[order][int(npfn(vals[order]))])
        if keepdims:
            res_arr = np.full((1,) * x.ndim, res)

            r = array(res_arr, comm=ctx)
            if out is not None:
                _engine.assign(out, r)
                return out
            return r
        if out is not None:
            _engine.assign(out, res)
            return out
        return res
    (ax,) = normalize_axes(axis, x.ndim)
    with np.errstate(all="ignore"):
        npfn(np.ones(tuple(min(n, 1) for n in x.shape), x.dtype), axis=ax)
    rlay = lay.reduce((ax,), keepdims=True)
    rshape = tuple(hi - lo for lo, hi in rlay.block(ctx.rank))
    gaxes = _combine_axes(lay, (ax,))
    members = _group(lay, gaxes, ctx.rank) if gaxes else [ctx.rank]

    def has_data(r):
        bb = lay.block(r)
        return lay.holds(r) and bb[ax][1] > bb[ax][0]

    b = lay.block(ctx.rank)
    if has_data(ctx.rank):
        loc = x._block
        li = np.expand_dims(_local_arg(x._st.be, npfn, loc, ax), ax)
        val = np.take_along_axis(loc, li, ax)
        gi = (li + b[ax][0]).astype(np.int64)
    else:
        val = np.empty((0,) * len(rshape), x.dtype)
        gi = np.empty((0,) * len(rshape), np.int64)
    if len(members) > 1:
        sub = ctx.sub(lay.dims, gaxes)
        shapes = [rshape if has_data(m) else (0,) * len(rshape) for m in members]
        be = x._st.be
        vals = allgather_blocks(sub, be.to_host(val), shapes)
        gis = allgather_blocks(sub, be.to_host(gi), shapes)
        keep = [i for i, m in enumerate(members) if has_data(m)]
        keep.sort(key=lambda i: lay.block(members[i])[ax][0])
        vals = np.stack([vals[i] for i in keep]) if keep else np.empty((0, *rshape), x.dtype)
        gis = np.stack([gis[i] for i in keep]) if keep else np.empty((0, *rshape), np.int64)
    else:
        vals, gis = val[None], gi[None]
    pick = np.expand_dims(npfn(vals, axis=0), 0)
    local = np.take_along_axis(gis, pick, 0)[0]
    return _finish(ctx, rlay, local, np.dtype(np.int64), (ax,), keepdims, out, x.ndim)


# ------------------------------------------------ NumPy functions (__array_function__)
def _reg_reduction(name):
    def impl(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
        if not is_distributed(a):
            return getattr(np, name)(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)
        if name in ("min", "max", "any", "all"):
            if dtype is not None:
                raise TypeError(f"{name}() got an unexpected keyword argument 'dtype'")
            return reduce(name, a, axis=axis, out=out, keepdims=keepdims, **kw)
        return reduce(name, a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)

    impl.__name__ = name
    impl.__doc__ = f"Distributed ``numpy.{name}``.  Collective."
    return impl


def _minmax_sig(name):
    def impl(a, axis=None, out=None, keepdims=False, **kw):
        return reduce(name, a, axis=axis, out=out, keepdims=keepdims, **kw)

    impl.__name__ = name
    return impl


for _n in ("sum", "prod", "mean"):
    implements(getattr(np, _n))(_reg_reduction(_n))
for _n in ("min", "max", "any", "all"):
    implements(getattr(np, _n))(_minmax_sig(_n))
implements(np.amin)(_minmax_sig("min"))
implements(np.amax)(_minmax_sig("max"))


def _vs(name):
    def impl(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        return reduce(name, a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, **kw)

    impl.__name__ = name
    return impl


HANDLED[np.var] = _vs("var")
HANDLED[np.std] = _vs("std")


@implements(np.argmin)
def _argmin(a, axis=None, out=None, *, keepdims=False):
    return argreduce("argmin", a, axis, out, keepdims)


@implements(np.argmax)
def _argmax(a, axis=None, out=None, *, keepdims=False):
    return argreduce("argmax", a, axis, out, keepdims)
