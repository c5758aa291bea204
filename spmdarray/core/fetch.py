"""Fetching operands: this rank's blocks of an operation's operands, aligned to where it is computed.

An operation is computed where its output lives.  For each distributed
operand :func:`fetch` asks :func:`~spmdarray.decomposition.fetch_plan` which
cells this rank lacks, posts every receive and send of every operand at once
(nonblocking: :func:`fetch_start` leaves them in flight), and hands back the
local views the computation reads.  :func:`choose_layout` decides where an
operation is computed.
"""

from __future__ import annotations

import numpy as np

from spmdarray.backend.backends import backend_of
from spmdarray.comm import label_frames, start_exchange
from spmdarray.core.array import ndarray
from spmdarray.core.conversion import gather
from spmdarray.core.element import copy_of, has_copy
from spmdarray.core.flights import Flight
from spmdarray.core.placement import default_layout, is_whole, result_layout
from spmdarray.core.registry import provides
from spmdarray.decomposition import Layout, ViewMap, cells_to_receive, cheapest_layout, fetch_plan, view_layout

__all__ = ["fetch", "fetch_start", "fetch_finish", "choose_layout", "context_of", "is_distributed"]


def is_distributed(x) -> bool:
    return isinstance(x, ndarray)


def context_of(*args):
    """The shared context of the distributed arguments (ValueError if mixed)."""
    ctx = None
    for a in args:
        if is_distributed(a):
            if ctx is None:
                ctx = a._st.ctx
            elif a._st.ctx is not ctx:
                b1, b2 = backend_of(ctx).name, a._st.be.name
                if b1 != b2 and ctx.user_comm is a._st.ctx.user_comm:
                    raise ValueError(
                        f"spmdarray arrays on different backends ({b1} and {b2}) cannot be combined; "
                        f"convert one with spmdarray.asarray(x, backend={b1!r}) (collective, no communication)"
                    )
                raise ValueError(
                    "spmdarray arrays on different communicators cannot be combined; "
                    "create them with the same comm= (or numpy.asarray one of them, if it is small)"
                )
    return ctx


def _rel(sub, need):
    # ``(...,)`` for 0-d boxes: ``buf[()]`` of a 0-d array is a scalar copy, not a view.
    return tuple(slice(lo - nlo, hi - nlo) for (lo, hi), (nlo, _) in zip(sub, need)) or (Ellipsis,)


class _Fetch:
    """Pending fetch of one operand onto an output layout.

    A halo counts as filled once its messages are posted (every rank decides
    alike), so a later fetch of the same halo posts nothing and instead waits
    for the flights still filling the ghost frame (``deps``).
    """

    __slots__ = ("x", "plan", "key", "buf", "deps", "st")

    def __init__(self, x, out_layout: Layout, sends: list, recvs: list, ghosts: list) -> None:
        self.st = st = x._st
        vm = x._map
        ctx = st.ctx
        self.x = x
        self.plan = plan = fetch_plan(st.layout, st.ghost, vm, out_layout, ctx.rank)
        self.key = key = (vm, out_layout)
        cached = st.halo_valid.get(key) == st.version
        self.deps = list(st.flights) if cached and st.flights else ()
        for dst, box, halo in plan.sends:
            if not (halo and cached):
                sends.append((dst, st.view_of(vm, box)))
        self.buf = None
        if plan.mode == "halo" and not cached:
            for src, box, _ in plan.recvs:
                v = st.view_of(vm, box)
                for fl in list(st.flights):
                    if fl.writes_into(v):  # never two receives into the same ghost cells at once
                        fl.wait()
                recvs.append((src, v))
                ghosts.append(v)
        elif plan.mode == "temp":
            need = plan.need
            self.buf = buf = st.be.empty(tuple(hi - lo for lo, hi in need), st.dtype)
            vl = view_layout(st.layout, vm)
            for src, sub in vl.sources(ctx.rank, need):
                if src == ctx.rank:
                    buf[_rel(sub, need)] = st.view_of(vm, sub)
            for src, box, _ in plan.recvs:
                recvs.append((src, buf[_rel(box, need)]))
        st.halo_valid[key] = st.version

    def result(self):
        plan = self.plan
        if plan.mode == "none":
            return None
        if plan.mode == "temp":
            return self.buf
        return self.st.view_of(self.x._map, plan.need)


def _broadcast_axes(x) -> tuple[int, ...]:
    """Axes of a ``broadcast_to`` view that repeat one element (step 0, length > 1)."""
    return x._map.broadcast_axes


def _fetch_broadcast(ctx, x, out_layout: Layout):
    """Fetch a broadcast view: its source (length 1 along the repeated axes) is
    fetched onto ``out_layout`` with those axes shrunk to length 1 and held by
    every rank along them, then repeated locally.  Collective."""
    axes = _broadcast_axes(x)
    vm = x._map
    small = ViewMap(vm.base_shape, vm.start, vm.axes, tuple(1 if a in axes else n for a, n in enumerate(vm.shape)))
    gaxis, gfixed = list(out_layout.gaxis), list(out_layout.gfixed)
    for a in axes:
        k = out_layout.grid_axis_of(a)
        if k is not None:
            gaxis[k], gfixed[k] = None, None
    lay = Layout(
        small.shape,
        out_layout.dims,
        tuple(gaxis),
        tuple(gfixed),
        tuple(None if a in axes else iv for a, iv in enumerate(out_layout.intervals)),
    )
    (loc,) = fetch(ctx, [ndarray._new(x._st, small)], lay)
    block = out_layout.block(ctx.rank)
    if loc is None or not out_layout.owned_size(ctx.rank):
        return None
    return x._st.be.xp.broadcast_to(loc, tuple(hi - lo for lo, hi in block))


def fetch(ctx, items: list, out_layout: Layout) -> list:
    """Local blocks of ``items`` aligned to this rank's block of ``out_layout``.

    Collective over ``ctx``: every rank must call it with the same items.
    Distributed items are fetched through plans (halo or redistribution);
    NumPy arrays are sliced locally; scalars pass through unchanged.
    """
    out, fetches, exchange = fetch_start(ctx, items, out_layout)
    fetch_finish(fetches, exchange)
    return out


def fetch_start(ctx, items: list, out_layout: Layout):
    """:func:`fetch` with the messages left in flight: ``(blocks, fetches, flight)``.

    The blocks are already the views the operation reads, but cells that
    arrive by message (ghost frames, redistribution buffers) are valid only
    after :func:`fetch_finish`.  ``fetches`` are the pending operands
    (``.x``: the operand, ``.plan``: its fetch plan); ``flight`` (a
    :class:`~spmdarray.core.flights.Flight`) is None when nothing is in flight.
    Collective in the sense of :func:`fetch`; the wait is not.
    """
    out: list = [None] * len(items)
    pending = []
    rank = ctx.rank if ctx is not None else 0
    be = backend_of(ctx) if ctx is not None else None
    whole = ctx is not None and ctx.size > 1 and is_whole(out_layout)
    for i, it in enumerate(items):
        if whole and isinstance(it, ndarray) and not is_whole(it._layout):
            # Every rank needs all of it: one collective (a Bcast from a single
            # holder, else an Allgatherv), not a message from each holder to each rank,
            # and none while a copy of its region is current (core.element).
            full = gather(it) if it._map.broadcast_axes else copy_of(it._st, it._map)
            out[i] = _slice_replicated(full, out_layout.shape, out_layout.block(rank))
            if be.is_device:
                out[i] = be.asarray(out[i])
        elif isinstance(it, ndarray) and it._map.broadcast_axes:
            out[i] = _fetch_broadcast(ctx, it, out_layout)
        elif isinstance(it, ndarray):
            st, vm = it._st, it._map
            plan = fetch_plan(st.layout, st.ghost, vm, out_layout, rank)
            if not plan.sends and not plan.recvs and plan.mode != "temp":
                # Aligned operand: a view of the local allocation, no messages.
                out[i] = st.view_of(vm, plan.need) if plan.mode != "none" else None
            elif has_copy(it):
                # Every rank holds a current copy of it (core.element): sliced, no messages.
                out[i] = _slice_replicated(copy_of(st, vm), out_layout.shape, out_layout.block(rank))
                if be.is_device:
                    out[i] = be.asarray(out[i])
            else:
                pending.append(i)
        elif isinstance(it, np.ndarray) and it.ndim:
            out[i] = _slice_replicated(it, out_layout.shape, out_layout.block(rank))
            if be is not None and be.is_device:
                out[i] = be.asarray(out[i])
        elif be is not None and be.is_device and isinstance(it, np.ndarray):
            out[i] = it[()]  # 0-d: a NumPy scalar, which device kernels take
        else:
            out[i] = it
    if not pending:
        return out, [], None
    sends: list = []
    recvs: list = []
    ghosts: list = []
    fetches: dict = {}
    for i in pending:
        it = items[i]
        k = (id(it._st), it._map)
        if k not in fetches:
            fetches[k] = _Fetch(it, out_layout, sends, recvs, ghosts)
    for i in pending:
        it = items[i]
        out[i] = fetches[(id(it._st), it._map)].result()
    fl = list(fetches.values())
    deps = [d for f in fl for d in f.deps]
    if not (sends or recvs or deps):
        return out, fl, None
    ex = start_exchange(ctx, sends, recvs) if sends or recvs else None
    stores = list({id(f.st): f.st for f in fl}.values())
    return out, fl, Flight(ex, deps, stores, ghosts, [v for _, v in sends])


def fetch_finish(fetches: list, flight) -> None:
    """Complete a :func:`fetch_start`: wait for its messages.  Not collective.

    Ghost cells filled by a plan stay valid until the base is written.  Only
    messages into ghost frames are ever skipped, and every rank makes the
    same decision because writes are collective.
    """
    if flight is not None:
        flight.wait()


def _fetch_label(frame) -> tuple[str, str]:
    """Trace label of a :func:`fetch_start` frame: halo exchange when every message is a halo."""
    fl = frame.f_locals.get("fetches") or {}
    plans = [f.plan for f in fl.values()]
    halo = plans and all(h for p in plans for *_, h in (*p.sends, *p.recvs))
    return "kind", "halo exchange" if halo else "redistribute"


label_frames(fetch_start, _fetch_label)


def _slice_replicated(arr: np.ndarray, shape, block):
    off = len(shape) - arr.ndim
    idx = []
    for j, n in enumerate(arr.shape):
        lo, hi = block[j + off]
        idx.append(slice(0, 1) if (n == 1 and shape[j + off] != 1) else slice(lo, hi))
    return arr[tuple(idx)]


_PASS = (int, float, complex, bool, np.ndarray, np.generic, type(None))


def _as_operand(x):
    if isinstance(x, ndarray) or isinstance(x, _PASS) or np.isscalar(x):
        return x
    return np.asarray(x)


@provides("choose_layout")
def choose_layout(ctx, args, shape) -> Layout:
    """Layout to compute an operation of output ``shape`` on.

    A small result of small or replicated operands, or of slices every rank
    holds a current copy of, is replicated
    (:func:`~spmdarray.core.placement.result_layout`); a small result of a
    split slice is computed where the slice lives.  Otherwise the
    candidates are the layouts of the split operands of that shape
    (preferring those without idle ranks), and
    :func:`~spmdarray.decomposition.cheapest_layout` picks the one that moves
    the fewest bytes, so the choice does not depend on the operand order.  A
    replica meeting a split array takes the split layout, reading its own
    copy.  Without such an operand: the default layout.

    When the first operand has siblings, views of the same base with the same
    steps but other offsets (``north + south``), the view half-way between
    them (here ``center``, rounding toward the first operand) is the first
    candidate: each sibling then moves only its own halo, and a later
    assignment to the middle view moves nothing.
    """
    small = result_layout(args, shape, ctx.size, has_copy)
    if small is not None:
        return small
    full = [
        (i, a)
        for i, a in enumerate(args)
        if isinstance(a, ndarray) and a._map.shape == shape and not a._map.broadcast_axes
    ]
    # (A broadcast view's repeated axes are not split: never compute there.)
    lays = [a._layout for _, a in full]
    split = [k for k, lay in enumerate(lays) if not (lay.nprocs > 1 and is_whole(lay))]
    if not split:
        return lays[0] if lays else default_layout(shape, ctx.size)
    # A slice fixed along a grid axis of one rank (a column of a row-split array) leaves no
    # rank idle: it is busy like a full array, and its siblings settle half-way between them.
    busy = [k for k in split if all(f is None or d == 1 for f, d in zip(lays[k].gfixed, lays[k].dims))]
    if not busy:
        # Slices that leave ranks idle (rows, slabs): the cheapest of them.
        candidates = tuple(dict.fromkeys(lays[k] for k in split))
        if len(candidates) == 1:
            return candidates[0]
        operands = tuple([(x, a.dtype.itemsize) for x, (_, a) in zip(lays, full)])
        return cheapest_layout(candidates, operands, _preferred(candidates, shape, ctx.size))
    i, first = full[busy[0]]
    lay = _between(first, args[i + 1 :], lays[busy[0]])
    if all(x is lay for x in lays) or all(x == lay for x in lays):
        return lay
    operands = tuple([(x, a.dtype.itemsize) for x, (_, a) in zip(lays, full)])
    candidates = (lay, *[lays[k] for k in busy])
    return cheapest_layout(candidates, operands, _preferred(candidates, shape, ctx.size))


def _preferred(candidates: tuple, shape, nprocs: int) -> Layout:
    """The layout that wins ties: the balanced layout a new array of ``shape`` gets, or a
    candidate that places every element where it does (a slab ``A[:, :, k]`` of an array
    split along axis 0, for a 2-D shape balanced along axis 0), so that a chain of small
    results of slices settles on one placement instead of the first operand's."""
    bal = Layout.balanced(shape, nprocs)
    for c in candidates:
        if c == bal or (cells_to_receive(c, bal) == 0 and cells_to_receive(bal, c) == 0):
            return c
    return bal


def _between(first, rest, lay: Layout) -> Layout:
    """Layout of the view midway between ``first`` and its same-base siblings."""
    vm = first._map
    lo = hi = None
    for b in rest:
        if isinstance(b, ndarray) and b._s is first._s and b._map.axes == vm.axes and b._map.shape == vm.shape:
            if lo is None:
                lo, hi = list(vm.start), list(vm.start)
            for k, s in enumerate(b._map.start):
                lo[k], hi[k] = min(lo[k], s), max(hi[k], s)
    if lo is None:
        return lay
    # Midpoint per base axis, rounded toward the first operand's offset.
    mid = tuple(
        s + (l + h - 2 * s) // 2 if l + h >= 2 * s else s - (2 * s - l - h) // 2 for s, l, h in zip(vm.start, lo, hi)
    )
    if mid == vm.start:
        return lay
    return view_layout(first._s.layout, ViewMap(vm.base_shape, mid, vm.axes, vm.shape))
