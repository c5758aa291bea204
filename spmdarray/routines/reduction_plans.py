"""Cached plans of the reductions loops make: a full reduction (``x.sum()``) and an axis
reduction that its one holder computes alone, each decided once per kind of array.

:func:`_fast_full` and :func:`_fast_lone` answer :data:`SLOW` (nothing done)
where the general path of :mod:`spmdarray.routines.reductions` must run.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from spmdarray.backend.backends import backend_of
from spmdarray.comm import PreparedAllgather, allgather_same
from spmdarray.core.array import ndarray
from spmdarray.core.registry import ops, provides
from spmdarray.core.storage import Storage
from spmdarray.decomposition import Layout, view_layout
from spmdarray.engine.fastpath import SLOW, _errors_raise
from spmdarray.fusion import record as _fusion
from spmdarray.routines.reduction_axes import (
    _COMBINE,
    _cast,
    _combine_axes,
    _group,
    _lone_layout,
    _probe,
    normalize_axes,
)
from spmdarray.settings import config

__all__: list[str] = []

#: The ufunc reduction each of ``_COMBINE`` makes on a NumPy array, and its dtype argument.
_UFUNC_REDUCE = {
    "sum": (np.add, None),
    "prod": (np.multiply, None),
    "min": (np.minimum, None),
    "max": (np.maximum, None),
    "any": (np.logical_or, bool),
    "all": (np.logical_and, bool),
}
#: (name, context, base layout, view map, dtype) -> _FullPlan, or None where it does not apply.
_FULL: dict = {}
#: [name, base layout, view map, dtype, context, plan, its quick function or None, its
#: partials' bytes] of the last full reduction (the plan depends on nothing else; the objects
#: are held, so their identities are not reused)
_LAST_FULL: list = [None] * 8


@provides("reduce_full")
def reduce_full(name: str, x):
    """``x.<name>()`` with NumPy's default arguments: the last plan's quick function where it
    applies (a method call on a split array in a loop), else :func:`_fast_full`, else the
    general path (``ops.reduce``).  Collective."""
    s = x._s
    last = _LAST_FULL
    if (
        last[0] == name
        and last[2] is x._map
        and last[1] is s.layout
        and last[3] is s.dtype
        and last[4] is s.ctx
        and (quick := last[6]) is not None
        and not s.deferred
        and last[7] <= config.reduce_gather_bytes
        and type(x) is ndarray
        and not _errors_raise()
    ):
        return quick(x)
    if name != "mean":
        res = _fast_full(name, x)
        if res is not SLOW:
            return res
    return ops.reduce(name, x)


class _FullPlan:
    """A full reduction (``x.sum()``) of one kind of array, decided once.  Not collective.

    It makes the calls of :func:`reduce` for ``axis=None`` and no other
    argument, in the same order and with the same NumPy functions, so the
    result is bit-for-bit the general path's: this rank's partial (kept
    axes), then, over the ranks that hold other parts, one all-gather of the
    partials, combined in rank order by those that hold data.
    """

    __slots__ = (
        "fn",
        "ufunc",
        "udt",
        "axes",
        "kw",
        "dtype",
        "be",
        "block",
        "mine",
        "comm",
        "data",
        "all",
        "nbytes",
        "fused",
        "quick",
    )

    def __init__(self, name: str, x) -> None:
        ctx = x._s.ctx
        lay = view_layout(x._s.layout, x._map)  # (x._layout would evaluate a deferred x)
        axes = self.axes = tuple(range(x.ndim))
        self.fn = fn = _COMBINE[name]
        # What ``fn`` calls on a NumPy array (numpy.sum -> numpy.add.reduce ...), without its wrapper.
        self.ufunc, self.udt = _UFUNC_REDUCE[name]
        self.kw = kw = {} if name in ("min", "max", "any", "all") else {"dtype": None}
        self.dtype = _probe(fn, x, axes, keepdims=True, **kw).dtype
        self.be = backend_of(ctx)
        self.block = lay.block(ctx.rank)

        def has_data(r):
            b = lay.block(r)
            return lay.holds(r) and all(hi > lo for lo, hi in b)

        gaxes = _combine_axes(lay, axes)
        members = _group(lay, gaxes, ctx.rank) if gaxes else [ctx.rank]
        self.mine = has_data(ctx.rank)
        self.data = [i for i, m in enumerate(members) if has_data(m)]
        self.comm = ctx.sub(lay.dims, gaxes) if len(members) > 1 else None
        self.all = len(self.data) == len(members)
        self.nbytes = len(members) * self.dtype.itemsize
        self.fused = name == "sum"  # a deferred tree is summed inside its kernel where it can be
        quick = self.comm is not None and not self.be.is_device and self.ufunc is not None
        self.quick = _quick_full(self, x.ndim) if quick and self.data else None


def _quick_full(plan: _FullPlan, ndim: int):
    """The function of ``x`` that :func:`_fast_full` calls for ``plan`` on host blocks, partials
    to combine: this rank's partial written into a send buffer kept with the plan (the loop's
    dtype is the result's, as NumPy's default for the reduction), one ``Allgather`` into a
    receive buffer kept with it, the partials combined in rank order: the general path's
    arithmetic, without its allocations and conversions.  Collective over the plan's
    communicator."""
    reduce, udt, axes, block, comm, dt = plan.ufunc.reduce, plan.udt, plan.axes, plan.block, plan.comm, plan.dtype
    send = np.zeros(1, dt)  # (ranks holding nothing send it as it is: their partial is not combined)
    out = send.reshape((1,) * ndim)
    recv = np.empty(comm.Get_size(), dt)
    gather = PreparedAllgather(comm, send, recv)
    mine = plan.mine
    data = plan.data
    first = data[0] if len(data) == 1 else None
    some = None if plan.all else data

    def quick(x):
        if mine:
            reduce(x._st.view_of(x._map, block), axes, udt, out, keepdims=True)
        gather()
        if first is not None:
            return recv[first]  # (a NumPy scalar, copied out of the buffer)
        return reduce(recv if some is None else recv[some], 0, udt)

    return quick


def _full_plan(name: str, x):
    """The :class:`_FullPlan` of ``name`` over ``x``, or None where the general path must run.  Collective
    (making a sub-communicator the first time); every rank decides alike from the global layout."""
    if name not in _COMBINE or x.ndim == 0 or x.size == 0 or x._map.broadcast_axes:
        return None
    try:
        _probe(getattr(np, name), x, tuple(range(x.ndim)))
    except Exception:  # noqa: BLE001 - the general path raises NumPy's error
        return None
    plan = _FullPlan(name, x)
    return plan if plan.data else None


def _fast_full(name: str, x):
    """``x.<name>()`` through a cached plan, or :data:`SLOW` (nothing done).  Collective."""
    # Whether ``x`` is deferred may differ between ranks (evaluated on some only): it
    # changes how this rank's partial is computed, never the path or its collective.
    s = x._s if type(x) is ndarray else None
    if s is None or _errors_raise():
        return SLOW
    last = _LAST_FULL  # (the last plan, by identity: a reduction in a loop hashes nothing)
    if last[0] == name and last[1] is s.layout and last[2] is x._map and last[3] is s.dtype and last[4] is s.ctx:
        plan = last[5]
    else:
        key = (name, s.ctx, s.layout, x._map, s.dtype)
        plan = _FULL.get(key, SLOW)
        if plan is SLOW:
            if len(_FULL) >= 1024:
                _FULL.clear()
            plan = _FULL[key] = _full_plan(name, x)
        quick = plan.quick if plan is not None else None
        last[:] = [name, s.layout, x._map, s.dtype, s.ctx, plan, quick, plan.nbytes if quick is not None else 0]
    if plan is None or (plan.comm is not None and plan.nbytes > config.reduce_gather_bytes):
        return SLOW
    quick = plan.quick
    if quick is not None and not (s.deferred and plan.fused):
        return quick(x)
    fn, kw, be, dt = plan.fn, plan.kw, plan.be, plan.dtype
    mine = None
    if plan.mine:
        fused = _fusion.local_sum(x, dt) if plan.fused and _fusion.is_deferred(x) else None
        if fused is not None:  # as _partial_reduce computes it
            mine = be.asarray(np.full((1,) * x.ndim, fused, dt))
        else:
            block = x._st.view_of(x._map, plan.block)
            if type(block) is np.ndarray:
                part = plan.ufunc.reduce(block, plan.axes, plan.udt, None, keepdims=True)
            else:
                part = fn(block, axis=plan.axes, keepdims=True, **kw)
            mine = be.asarray(part, dt)
    if plan.comm is None:
        local = mine
    else:
        parts = allgather_same(plan.comm, be.to_host(mine) if mine is not None else np.zeros((1,) * x.ndim, dt))
        data = plan.data
        if len(data) == 1:
            local = parts[data[0]]
        else:  # numpy.<fn>(numpy.stack(parts), axis=0) of the general path
            local = np.asarray(plan.ufunc.reduce(parts if plan.all else parts[data], 0, plan.udt, None), dtype=dt)
    return be.to_host(_cast(local, dt)).reshape(())[()]


#: (name, context, base layout, view map, dtype, axis, keepdims) -> _LonePlan, or None where it does not apply.
_LONE: dict = {}


class _LonePlan:
    """A reduction with ``axis=`` that its one holder computes alone (:func:`_lone_layout`), decided once.

    Not collective.  It makes the general path's NumPy call on the holder's
    block (so NumPy's bits) and wraps it in the layout the general path gives.
    """

    __slots__ = ("fn", "axes", "kw", "dtype", "layout", "owns", "shape")

    def __init__(self, name: str, x, axes: tuple[int, ...], rlay: Layout, keepdims: bool) -> None:
        self.fn = _COMBINE[name]
        self.axes = axes
        self.kw = {} if name in ("min", "max", "any", "all") else {"dtype": None}
        self.dtype = _probe(self.fn, x, axes, keepdims=True, **self.kw).dtype
        self.layout = lay = rlay if keepdims else _drop_axes(rlay, axes)
        rank = x._s.ctx.rank
        self.owns = lay.owned_size(rank) > 0
        self.shape = tuple(hi - lo for lo, hi in lay.block(rank))


def _lone_plan(name: str, x, axis, keepdims: bool):
    """The :class:`_LonePlan` of ``name`` over ``x``, or None.  Not collective."""
    if x.ndim == 0 or x._map.broadcast_axes or backend_of(x._s.ctx).is_device:
        return None
    try:
        axes = normalize_axes(axis, x.ndim)
        _probe(getattr(np, name), x, axes, keepdims=keepdims)  # (NumPy's errors: the general path)
    except Exception:  # noqa: BLE001
        return None
    if not (keepdims or len(axes) < x.ndim):
        return None
    rlay = _lone_layout(view_layout(x._s.layout, x._map), axes)
    return None if rlay is None else _LonePlan(name, x, axes, rlay, keepdims)


def _fast_lone(name: str, x, axis, keepdims: bool):
    """``numpy.<name>(x, axis=axis, keepdims=keepdims)`` through a cached :class:`_LonePlan`, or
    :data:`SLOW` (nothing done).  Collective in the sense of :func:`reduce`; it sends nothing."""
    s = x._s if type(x) is ndarray else None
    if s is None or s.ctx.size == 1 or _errors_raise():
        return SLOW
    try:
        key = (name, s.ctx, s.layout, x._map, s.dtype, axis, keepdims)
        plan = _LONE.get(key, SLOW)
    except TypeError:  # an unhashable axis (a list)
        return SLOW
    if plan is SLOW:
        if len(_LONE) >= 1024:
            _LONE.clear()
        plan = _LONE[key] = _lone_plan(name, x, axis, keepdims)
    if plan is None:
        return SLOW
    res = ndarray._new(Storage(s.ctx, plan.layout, plan.dtype), None)
    if plan.owns:
        part = plan.fn(x._block, axis=plan.axes, keepdims=True, **plan.kw)
        res._block[...] = np.asarray(part, plan.dtype).reshape(plan.shape)
    return res


@lru_cache(maxsize=4096)
def _drop_axes(rlay: Layout, axes: tuple[int, ...]) -> Layout:
    return rlay.take_axes(tuple(a for a in range(len(rlay.shape)) if a not in axes))
