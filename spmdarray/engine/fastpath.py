"""The per-operation fast path: a cached plan for the common elementwise case.

Most operations in a loop repeat the same ufunc on operands of the same
kind: arrays with one layout, dtypes already checked, Python scalars.  The
first time such an operation is seen, :func:`plan_for` checks it with the
engine's own machinery (NumPy's dtype and casting rules on one-element
dummies, the layout the engine would compute on) and stores a :class:`Plan`
keyed by what decided it::

    (ufunc, [context, base layout, view map, dtype] per array,
     type (or integer sign and bit length) per Python scalar, out= marker)

Later calls with the same key run :func:`run`: this rank's block of every
operand (a cached view of its allocation), one call of the ufunc into the
result's block, and the write recorded on ``out=`` (halos of its views become
stale).  No message moves, because a plan exists only where every array
operand's layout equals the layout the result is computed on, whatever that
layout is (distributed, replicated, with idle ranks), or each rank holds the
operand's cells of its block (held whole, or placed alike on another grid).  Every rank makes the
same decisions: they rest on global layouts, dtypes and scalar kinds only.

Every rank must take the same path (the general engine may communicate), so
the decision never asks whether an operand is deferred, which may differ
between ranks (a deferred value evaluated on some ranks only): a deferred
operand keys as the storage it evaluates into, and is evaluated locally
(``a._st``, no message) when the fast path takes the operation.

Everything else returns :data:`SLOW` before any work, and the general engine
takes it: operations the fuser defers (``config.fuse``, a fusable ufunc, at
least ``config.fuse_min_size`` elements), broadcasting,
views needing halos, ``where=``, ``dtype=`` and other keywords, several
outputs, integer ``power`` (an error on some values only) and anything that
makes floating-point errors raise (``errstate(...="raise")``, a warnings
filter turning RuntimeWarning into errors: errors agreed across ranks).  Not
collective.

Assignments ``x[key] = v`` have plans of their own (:func:`fast_assign`):
where ``v`` is a number, or an array lying where the destination does (or
held whole by every rank), each rank copies its own part.
"""

from __future__ import annotations

import warnings

import numpy as np

from spmdarray.backend.backends import backend_of
from spmdarray.comm import errors_may_raise
from spmdarray.core.array import ndarray
from spmdarray.core.dtypes import _UNKEYED, _arg_key, _checked_dtypes
from spmdarray.core.element import direct_access
from spmdarray.core.fetch import choose_layout
from spmdarray.core.placement import is_whole, sole_holder
from spmdarray.core.storage import Storage, _geometry
from spmdarray.decomposition import ViewMap, cells_to_receive, view_layout
from spmdarray.engine.device_ufuncs import _on_device
from spmdarray.fusion.record import FUSABLE
from spmdarray.settings import config

__all__ = ["SLOW", "Plan", "fast", "fast_assign", "plan_count", "clear_plans"]

#: Returned when the fast path does not apply; nothing was done.
SLOW = object()

# Ufuncs whose integer loops raise on some *values* (``2 ** -1``).
_DATA_ERRORS = {np.power}

#: key -> Plan, or None for a key the fast path never takes.
_PLANS: dict = {}
_MAX_PLANS = 4096
#: view-layout key -> plan that applies (:func:`_shared`): the plans of the rows of a split array
_PLANS_BY_LAYOUT: dict = {}

# Whether an error may strike some ranks only (``spmdarray.comm.errors_may_raise``:
# errstate "raise" or "call", or a warnings filter turning RuntimeWarning into an
# error) is recomputed only when what decides it changed: NumPy's error state is a
# context variable whose value each ``errstate`` replaces; ``warnings.filters`` is
# replaced by ``catch_warnings`` and grows or changes its first entry on any new
# filter.  The objects compared are held, so their identities are never reused.
_ERRSTATE = getattr(getattr(np, "_core", None), "_multiarray_umath", None)
_ERRSTATE = getattr(_ERRSTATE, "_extobj_contextvar", None)
_SEEN: list = [object(), object(), -1, object(), False]


def _errors_raise() -> bool:
    """``errors_may_raise()``, cached while the error state and warning filters are unchanged.  Not collective."""
    if _ERRSTATE is None:
        return errors_may_raise()
    state = _ERRSTATE.get()
    filters = warnings.filters
    first = filters[0] if filters else None
    seen = _SEEN
    if state is not seen[0] or filters is not seen[1] or len(filters) != seen[2] or first is not seen[3]:
        seen[:] = [state, filters, len(filters), first, errors_may_raise()]
    return seen[4]


class Plan:
    """What a cached elementwise operation does on this rank.  Not collective.

    Attributes
    ----------
    ctx : Context
        The operands' communicator context.
    layout : Layout
        Where the result is computed (every array operand's layout, or one
        that places each rank's block of it on that rank).
    block : Box
        This rank's block of ``layout`` (view coordinates).
    owns : bool
        Whether the block holds any element.
    dtype : numpy.dtype
        The result dtype (NumPy's, checked once).
    call : callable
        The ufunc, or its device wrapper on a device backend.
    deferrable : bool
        Whether the fuser would take the operation at ``config.fuse_min_size``.
    size : int
        Elements of the result.
    vmap, vlayout : ViewMap, Layout
        The map and layout of a new result array.
    be, geometry, ghost_width, direct
        The backend, and the allocation geometry of a new result on a host
        backend (for ``config.ghost_width`` as it was when the plan was made)
        and whether its elements are read by direct indexing.
    boxes : list or None
        Where operands broadcast (each held whole by every rank, or by the one rank that
        computes all of the result): per argument, the whole box of an array (None for a scalar).  None
        where every array has the result's shape and ``block`` applies.
    """

    __slots__ = (
        "ctx", "be", "layout", "block", "owns", "dtype", "call", "deferrable", "size", "vmap", "vlayout", "geometry",
        "ghost_width", "direct", "boxes",
    )  # fmt: skip

    def __init__(self, func, ctx, layout, dtype) -> None:
        rank = ctx.rank
        self.ctx = ctx
        self.layout = layout
        self.block = layout.block(rank)
        self.owns = layout.owned_size(rank) > 0
        self.dtype = dtype
        self.be = be = backend_of(ctx)
        self.call = _on_device(func, be, 1, {}) if be.is_device else func
        # Host results are allocated from the geometry computed here (device ones by Storage).
        self.ghost_width = config.ghost_width
        self.geometry = None if be.is_device else _geometry(layout, rank, self.ghost_width)
        self.direct = self.geometry is not None and direct_access(layout, be, dtype, self.geometry[2])
        self.deferrable = func in FUSABLE
        self.size = int(np.prod(layout.shape, dtype=np.int64))
        self.vmap = ViewMap.identity(layout.shape)
        self.vlayout = view_layout(layout, self.vmap)
        self.boxes = None


def _key(func, args, out, by_layout: bool = False):
    """The plan key of ``func(*args, out=out)``, or None (not a fast case).

    ``by_layout``: each array keyed by its view layout (and whether it broadcasts) instead
    of its base layout and view map: the key of :func:`_shared`.
    """
    k = [func]
    for a in args:
        t = type(a)
        if t is ndarray:
            # A deferred operand (a fusion Node) keys as the storage it evaluates into: whether
            # it was evaluated already differs between ranks, and must not change the path.
            s = a._s
            if by_layout:
                m = a._map
                k += (s.ctx, view_layout(s.layout, m), s.dtype, not m.broadcast_axes)
            else:
                k += (s.ctx, s.layout, a._map, s.dtype)
        elif t is float or t is complex or t is bool:
            k.append(t)
        elif t is int:
            # What decides NumPy's overflow errors: int8 holds -128 (~a == 127), not -129.
            k.append(a.bit_length() if a >= 0 else -1 - (~a).bit_length())
        elif isinstance(a, np.generic):  # ``numpy.float64(0.5) * x``: ``_arg_key``'s key, directly
            k.append(("scalar", (t, a.dtype)))
        else:
            ak = _arg_key(a)
            if ak is _UNKEYED or isinstance(a, np.ndarray):
                return None
            k.append(("scalar", ak))
    if out is not None:
        if len(out) != 1 or type(out[0]) is not ndarray:
            return None
        o = out[0]
        s = o._s
        if by_layout:
            m = o._map
            k += ("out", s.ctx, view_layout(s.layout, m), s.dtype, not m.broadcast_axes)
        else:
            k += ("out", s.ctx, s.layout, o._map, s.dtype)
    return tuple(k)


def _shared(table: dict, func, args, out, make):
    """The plan of ``func(*args, out=out)`` that applies, made by ``make()`` or found in
    ``table`` under the key of the operands' view layouts; None where none applies.

    Not collective.  A loop over the rows of a split array (``y[i, :] = a * x[i, :] +
    b * x[i - 1, :]``) makes a new view map at each row, so the plans keyed by maps
    miss at every row; the rows of one rank's block have one view layout, and a plan
    (its layout, block, dtype, the operands' alignment with it) depends on the
    operands' view layouts, dtypes and scalar kinds alone.  Only plans that apply are
    kept here: where ``make()`` declines (an operand needs messages, or a current copy
    made a replicated layout the better choice), the next row asks again.
    """
    lkey = _key(func, args, out, by_layout=True)
    plan = table.get(lkey) if lkey is not None else None
    if plan is None:
        plan = make()
        if plan is not None and lkey is not None:
            _remember(table, lkey, plan)
    return plan


def plan_for(func, args, out):
    """A new :class:`Plan` for ``func(*args, out=out)``, or None where the fast path does not apply.

    Not collective: it reads global shapes, layouts and dtypes only.
    """
    if type(func) is not np.ufunc or func.nin != len(args) or func.nout != 1 or func.signature is not None:
        return None
    arrays = [a for a in args if type(a) is ndarray]
    o = out[0] if out is not None else None
    if o is not None:
        arrays.append(o)
    if not arrays:
        return None
    ctx = arrays[0]._s.ctx
    shape = arrays[0].shape
    if any(a._s.ctx is not ctx or not a.shape or a._map.broadcast_axes for a in arrays):
        return None
    same = all(a.shape == shape for a in arrays)
    whole = True
    if not same:  # operands broadcast: only where each rank holds every operand and the result whole,
        try:  # or where one rank computes it all (below)
            shape = np.broadcast_shapes(*(a.shape for a in arrays))
        except ValueError:
            return None  # the general engine raises NumPy's error
        whole = ctx.size == 1 or all(is_whole(a._layout) for a in arrays)
        if (o is not None and o.shape != shape) or (o is not None and not whole):
            return None
    try:
        dtypes = _checked_dtypes(func, args, (o,), None, {}, 1)
    except Exception:  # noqa: BLE001 - the general engine raises it, in its order of checks
        return None
    if func in _DATA_ERRORS and dtypes[0].kind in "iu":
        return None
    layout = o._layout if o is not None else choose_layout(ctx, args, shape)
    if not same:
        if ctx.size > 1 and not (is_whole(layout) if whole else _one_rank_computes(arrays, layout)):
            return None
        plan = Plan(func, ctx, layout, np.dtype(dtypes[0]))
        plan.boxes = [tuple((0, n) for n in a.shape) if type(a) is ndarray else None for a in args]
        return plan
    # On one rank every layout of the shape holds all of it there: nothing moves.  An
    # operand that holds each rank's block of the layout (``A[:, k] * v`` of a replicated
    # ``v``, or of one split as the column is) gives each rank its block from its own cells.
    if ctx.size > 1 and any(not _aligned(a, layout, a is not o) for a in arrays):
        return None  # some operand needs messages
    return Plan(func, ctx, layout, np.dtype(dtypes[0]))


def _one_rank_computes(arrays, layout) -> bool:
    """Whether one rank holds all of ``layout`` and every operand whole (a window on one rank
    times a replicated array, see :func:`~spmdarray.core.placement.stretch`).  Not collective."""
    h = sole_holder(layout)
    return h is not None and all(view_layout(a._s.layout, a._map).owned_size(h) == a.size for a in arrays)


def _remember(table: dict, key, plan):
    """Store ``plan`` under ``key`` (forgetting every plan past :data:`_MAX_PLANS`); return it.  Not collective."""
    if len(table) >= _MAX_PLANS:
        table.clear()
    table[key] = plan
    return plan


def _aligned(a, layout, operand: bool) -> bool:
    """Whether ``a`` has ``layout``, or is an operand each rank holds its block of ``layout`` of
    (held whole, or placed alike on another grid: a column of a row-split matrix and a vector).
    Not collective."""
    lay = view_layout(a._s.layout, a._map)
    return lay == layout or (operand and cells_to_receive(lay, layout) == 0)


def fast(func, args, out):
    """``func(*args, out=out)`` through a cached plan, or :data:`SLOW` (nothing done).

    Collective in the sense of the engine (every rank takes the same branch);
    it sends no message.
    """
    key = _key(func, args, out)
    if key is None:
        return SLOW
    plan = _PLANS.get(key, SLOW)
    if plan is SLOW:
        plan = _remember(_PLANS, key, _shared(_PLANS_BY_LAYOUT, func, args, out, lambda: plan_for(func, args, out)))
    if plan is None or (plan.deferrable and config.fuse and plan.size >= config.fuse_min_size) or _errors_raise():
        return SLOW
    block = plan.block
    if out is not None:
        res = out[0]
        st = res._st  # deferred readers of it computed, messages into it completed
        dst = st.view_of(res._map, block) if plan.owns else None
    else:
        if plan.geometry is None or plan.ghost_width != config.ghost_width:
            st = Storage(plan.ctx, plan.layout, plan.dtype)
            dst = st.view_of(plan.vmap, block) if plan.owns else None
        else:
            st, dst = Storage.blank(plan.ctx, plan.be, plan.layout, plan.dtype, plan.geometry, plan.direct)
        res = ndarray._new(st, plan.vmap)
        res._lay = plan.vlayout
    if dst is not None and plan.owns:  # (an idle rank of a one-rank computation: nothing to compute)
        boxes = plan.boxes
        if boxes is None:
            locs = [a._st.view_of(a._map, block) if type(a) is ndarray else a for a in args]
        else:  # broadcasting operands, each held whole
            locs = [a if b is None else a._st.view_of(a._map, b) for a, b in zip(args, boxes)]
        plan.call(*locs, out=(dst,))
    if out is not None:
        st.bump()
    return res


# Python scalar types each destination dtype kind takes without a value-dependent error
# (a NaN into an integer raises, a complex into a float warns).
_SCALAR_INTO = {
    "b": (bool,),
    "i": (bool, int),
    "u": (bool, int),
    "f": (bool, int, float),
    "c": (bool, int, float, complex),
}

#: key -> (block, owns, casts) of an assignment, or None for a key the fast path never takes.
_ASSIGNS: dict = {}
#: view-layout key -> (block, owns, casts) of an assignment that applies (:func:`_shared`)
_ASSIGNS_BY_LAYOUT: dict = {}


def _assign_plan(dst, value):
    """``(block, owns, casts)`` for ``dst[...] = value``, or None where the fast path does not apply.

    It applies where no message moves and no check can fail on some values
    only: ``value`` is a number of a kind the destination dtype takes, or an
    array of ``dst``'s shape of which each rank holds its block of ``dst``
    (the same view layout, a replicated array, or one placed alike), of a
    dtype that casts to ``dst``'s within its kind.  Not
    collective: it reads global shapes, layouts and dtypes only.
    """
    s = dst._s
    ctx = s.ctx
    ddt = s.dtype
    if not dst.shape or dst._map.broadcast_axes or backend_of(ctx).is_device or ddt.kind not in _SCALAR_INTO:
        return None
    layout = dst._layout
    if type(value) is ndarray:
        vdt = value._s.dtype
        if (
            value._s.ctx is not ctx
            or value.shape != dst.shape
            or value._map.broadcast_axes
            or vdt.kind not in _SCALAR_INTO
            or not np.can_cast(vdt, ddt, "same_kind")
            or not _aligned(value, layout, True)
        ):
            return None
        casts = vdt != ddt
    elif isinstance(value, np.generic):
        if value.dtype.kind not in _SCALAR_INTO or not np.can_cast(value.dtype, ddt, "same_kind"):
            return None
        casts = value.dtype != ddt
    else:
        if type(value) not in _SCALAR_INTO[ddt.kind]:
            return None
        casts = True  # a Python float into float32 may overflow
    try:  # NumPy's error for a Python int out of range (decided by the key: sign and bit length)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            np.empty(1, ddt)[...] = value if type(value) is not ndarray else np.ones(1, value.dtype)
    except Exception:  # noqa: BLE001 - the general path raises it
        return None
    rank = ctx.rank
    return layout.block(rank), layout.owned_size(rank) > 0, casts


def fast_assign(dst, value) -> bool:
    """``dst[...] = value`` through a cached plan; False where the fast path does not apply (nothing done).

    Each rank copies the part of ``value`` that lands in its block of ``dst``,
    from a block it holds: no message, no collective.  Collective in the sense
    of the engine's assignment (every rank takes the same branch: the decision
    rests on global layouts, dtypes and scalar kinds, and on the error state).
    """
    key = _key(None, (value,), (dst,))  # keyed as the operand and out= of an operation
    if key is None:
        return False
    plan = _ASSIGNS.get(key, SLOW)
    if plan is SLOW:
        made = _shared(_ASSIGNS_BY_LAYOUT, None, (value,), (dst,), lambda: _assign_plan(dst, value))
        plan = _remember(_ASSIGNS, key, made)
    if plan is None:
        return False
    block, owns, casts = plan
    array = type(value) is ndarray
    if (casts and _errors_raise()) or (array and value._s is dst._s):
        return False  # errors agreed across ranks, or a value aliasing its destination: the general path
    st = dst._st  # deferred readers of it computed, messages into it completed
    if owns:
        d = st.view_of(dst._map, block)
        if array:
            loc = value._st.view_of(value._map, block)
            if np.may_share_memory(loc, d):
                loc = loc.copy()  # as if the value were copied first, as the general path does
            d[...] = loc
        else:
            d[...] = value
    st.bump()
    return True


def plan_count() -> int:
    """Number of cached plans (those that apply).  Not collective."""
    return sum(p is not None for p in _PLANS.values())


def clear_plans() -> None:
    """Forget every cached plan.  Not collective."""
    _PLANS.clear()
    _ASSIGNS.clear()
    _PLANS_BY_LAYOUT.clear()
    _ASSIGNS_BY_LAYOUT.clear()
