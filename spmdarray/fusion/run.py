"""Evaluation of deferred elementwise trees: one kernel per rank.  Not collective.

:func:`evaluate` flattens a tree of :class:`~spmdarray.fusion.record.Node` into a
:class:`Program` (leaves: this rank's blocks of the operands, already fetched
when the operations were recorded; steps: the ufuncs in NumPy's order) and
runs it with the compiled kernel of :mod:`spmdarray.fusion.kernels_cpu`, or one NumPy call per
step.  Nothing here sends a message: it waits for the flights the recording
posted, computing the interior of the block (which reads no ghost cell)
while they travel, and the boundary strips after they arrived.

An assignment whose destination the operands read (``center[:] =
center + north + ...``) keeps Jacobi semantics: rows are written back only
once no row still to be computed reads them (:func:`_lag`,
:func:`_compute_aliased`).
"""

from __future__ import annotations

import math
import os

import numpy as np

from spmdarray.backend import backends as _backends
from spmdarray.backend.backends import backend_of
from spmdarray.core.array import ndarray
from spmdarray.core.flights import complete, wait_all
from spmdarray.core.thunk import Quiet
from spmdarray.fusion import kernels_cpu, kernels_cuda
from spmdarray.fusion.splitmix import uniform_box
from spmdarray.settings import config

__all__ = ["Program", "evaluate", "flatten", "local_sum", "RAND", "COPY", "INLINE"]

RAND = "random"  # ``Node.func`` of a random leaf (``record.random_leaf``)
COPY = "copy"  # ``Node.func`` of a node standing for a copy of a view
INLINE = "inline"  # ``Node.locs`` entry of a deferred operand computed in the same kernel


class Program:
    """A flattened tree: leaves and steps, in the order eager NumPy runs them."""

    __slots__ = ("leaves", "steps", "index", "flights", "fetches")

    def __init__(self) -> None:
        self.leaves: list = []  # ("a", block) | ("s", scalar) | ("r", key)
        self.steps: list = []  # (func, loop dtypes, operand refs)
        self.index: dict = {}
        self.flights: list = []  # messages the leaves wait for
        self.fetches: list = []  # the fetches behind them (their plans)


def flatten(node, block):
    """``(program, root)`` of ``node``; ``block`` is this rank's box of its layout (None: none)."""
    prog = Program()
    return prog, _flat(node, prog, block, set())


def _flat(node, prog: Program, block, seen: set):
    """Reference (``("l", i)`` leaf or ``("t", j)`` step) of ``node``'s value."""
    if id(node) not in seen:
        seen.add(id(node))
        if node.flight is not None and not node.flight.done:
            prog.flights.append(node.flight)
        prog.fetches.extend(node.fetches)
    if node.func is RAND:
        return _leaf(prog, ("r", node.args[0]), ("r", node.args[0]))
    if node.func is COPY:
        return _leaf(prog, ("c", id(node)), ("a", node.locs[0]))
    refs = []
    for a, loc in zip(node.args, node.locs):
        if type(a) is ndarray:
            if loc is INLINE:
                s = a._s
                if s.deferred:
                    r = _flat(s, prog, block, seen)
                else:  # evaluated since, on this rank: read its block
                    blk = s.view_of(a._map, block) if block is not None else None
                    r = _leaf(prog, (id(s), a._map), ("a", blk))
            else:
                r = _leaf(prog, (id(a._s), a._map), ("a", loc))
        else:
            r = _leaf(prog, None, ("s", a))
        refs.append(r)
    prog.steps.append((node.func, node.loop, tuple(refs)))
    return ("t", len(prog.steps) - 1)


def _leaf(prog, key, leaf):
    if key is not None:
        i = prog.index.get(key)
        if i is not None:
            return ("l", i)
        prog.index[key] = len(prog.leaves)
    prog.leaves.append(leaf)
    return ("l", len(prog.leaves) - 1)


def _here(node):
    """``(program, root, owned)`` of ``node`` on this rank."""
    layout = node.layout
    rank = node.ctx.rank
    owned = layout.owned_size(rank)
    prog, root = flatten(node, layout.block(rank) if owned else None)
    return prog, root, owned


def _wait(flights) -> None:
    wait_all(flights)  # one wait for the messages of every operation of the tree


def evaluate(node, dst, fresh: bool, before_write=None) -> None:
    """Compute ``node`` into the view ``dst`` (same shape, on ``node.layout``).  Not collective.

    ``before_write``: the destination's storage, when it may have messages
    of other computations in flight; they are completed before it is written.
    """
    prog, root, owned = _here(node)
    Quiet.depth += 1
    try:
        if before_write is not None and before_write.flights:
            complete(before_write, keep=set(prog.flights))
        if not owned:
            _wait(prog.flights)
            return
        _run(prog, root, node, dst, fresh)
    finally:
        Quiet.depth -= 1


def _run(prog: Program, root, node, dst, fresh: bool) -> None:
    layout = node.layout
    block = layout.block(node.ctx.rank)
    bshape = tuple(hi - lo for lo, hi in block)
    d = dst._s.view_of(dst._map, block)
    vals = [lf[1] if lf[0] != "r" else lf for lf in prog.leaves]
    arrays = [i for i, lf in enumerate(prog.leaves) if lf[0] == "a"]
    gshape = dst.shape
    origin = tuple(lo for lo, _ in block)
    flights = [fl for fl in prog.flights if not fl.done]
    be = dst._s.be
    if be.is_device:
        kern = _device_kernels() if config.fuse_compiler != "numpy" and _worth_compiling(prog, bshape) else None
        _run_device(kern, prog, root, vals, arrays, d, bshape, gshape, origin, flights, fresh, be, node.ctx)
        return
    kern = _kernels() if config.fuse_compiler == "numba" and _worth_compiling(prog, bshape) else None
    overlap = (not fresh) and any(_hazard(d, vals[i]) for i in arrays)
    if flights:
        inner = _interior(prog.fetches, gshape, bshape) if _overlapping(node.ctx, bshape) else None
        if inner is not None and overlap:
            hazards = [vals[i] for i in arrays if _hazard(d, vals[i])]
            if _overlap_aliased(kern, prog, root, vals, d, hazards, inner, gshape, origin, flights):
                return
        elif inner is not None:
            sub = tuple(slice(a, b) for a, b in inner)
            # A send still reading the memory about to be written waits first.
            if fresh or not any(fl.reads_from(d[sub]) for fl in flights):
                _compute(kern, prog, root, vals, d, sub, gshape, origin)
                _wait(flights)
                for sub in _strips(inner, bshape):
                    _compute(kern, prog, root, vals, d, sub, gshape, origin)
                return
        _wait(flights)
    full = tuple(slice(0, n) for n in bshape)
    if overlap:
        lag = _lag(d, [vals[i] for i in arrays if _hazard(d, vals[i])]) if kern is not None else None
        if lag is not None:
            kern.run_lag(prog, root, vals, d, full, gshape, origin, lag)
        else:
            _compute_aliased(
                kern, prog, root, vals, d, [vals[i] for i in arrays if _hazard(d, vals[i])], gshape, origin
            )
    else:
        _compute(kern, prog, root, vals, d, full, gshape, origin)


def _overlapping(ctx, bshape=()) -> bool:
    """Whether to compute the interior while halos travel (``settings.overlap``).  Not collective."""
    ov = config.fuse_overlap
    if ov != "auto":
        return bool(ov)
    if bshape and math.prod(bshape) < config.fuse_overlap_min_size:
        return False
    local = ctx._local
    return local is None or local[1] <= (os.cpu_count() or 1)


def _run_device(kern, prog, root, vals, arrays, d, bshape, gshape, origin, flights, fresh, be, ctx) -> None:
    """:func:`_run` on device blocks: one generated kernel launch per box.

    Kernel launches return at once, so the interior computes on the GPU while
    the host waits for the halos.  A destination that an operand may read
    (``may_share_memory``: GPU threads run in any order) is computed into a
    scratch block first and copied: Jacobi semantics at the cost of one copy.
    """
    xp = be.xp
    full = tuple(slice(0, n) for n in bshape)
    if not fresh and any(xp.may_share_memory(d, vals[i]) for i in arrays):
        _wait(flights)
        tmp = be.empty(bshape, d.dtype)
        _compute_into(kern, prog, root, vals, tmp, full, gshape, origin)
        d[...] = tmp
        return
    if flights:
        inner = _interior(prog.fetches, gshape, bshape) if _overlapping(ctx, bshape) else None
        # (Device sends may read the destination directly: only a fresh one overlaps.)
        if inner is not None and fresh:
            _compute(kern, prog, root, vals, d, tuple(slice(a, b) for a, b in inner), gshape, origin)
            _wait(flights)
            for sub in _strips(inner, bshape):
                _compute(kern, prog, root, vals, d, sub, gshape, origin)
            return
        _wait(flights)
    _compute(kern, prog, root, vals, d, full, gshape, origin)


def _reach(d, hazards):
    """How far the operands reach from each cell of ``d``, per axis, or None.

    The operands must be shifted views of ``d``'s memory with its shape,
    dtype and strides (a stencil); each offset is split over ``d``'s
    strides (positive and decreasing) into per-axis shifts.
    """
    item = d.itemsize
    strides = [s // item for s in d.strides]
    if any(s <= 0 for s in strides) or any(a <= b for a, b in zip(strides, strides[1:])):
        return None
    base = d.__array_interface__["data"][0]
    reach = [0] * d.ndim
    for v in hazards:
        if v.strides != d.strides or v.dtype != d.dtype or v.shape != d.shape:
            return None
        rem = (v.__array_interface__["data"][0] - base) // item
        for k, st in enumerate(strides):
            r = round(rem / st)
            rem -= r * st
            reach[k] = max(reach[k], abs(r))
        if rem:
            return None
    return reach


def _overlap_aliased(kern, prog, root, vals, d, hazards, inner, gshape, origin, flights) -> bool:
    """An in-place stencil with its halos in flight (any number of axes, halos along any of them).

    The *core* is the interior box shrunk, on each side that has a boundary
    strip, by how far the operands reach along that axis.  The frame between
    core and strips is computed first into buffers (reading old values),
    then the core in place (2-D: the row ring; otherwise row chunks, both
    keeping Jacobi semantics) while the halos travel; after the wait the
    strips are computed into buffers too (they read only frame and ghost
    cells, still old), and every buffer is written back.  Returns False
    (having done nothing) when the case does not apply: operands that are
    not shifted views of the destination, a core too thin, or a send still
    reading the core's memory.
    """
    if d.ndim == 0:
        return False
    reach = _reach(d, hazards)
    if reach is None:
        return False
    core = tuple(
        (lo + (h if lo > 0 else 0), hi - (h if hi < n else 0)) for (lo, hi), h, n in zip(inner, reach, d.shape)
    )
    if any(lo >= hi for lo, hi in core):
        return False
    csub = tuple(slice(lo, hi) for lo, hi in core)
    if any(fl.reads_from(d[csub]) for fl in flights):
        return False
    held = []

    def hold(sub) -> None:
        if all(x.stop > x.start for x in sub):
            tmp = np.empty(tuple(x.stop - x.start for x in sub), d.dtype)
            _compute_into(kern, prog, root, vals, tmp, sub, gshape, origin)
            held.append((sub, tmp))

    ishape = tuple(hi - lo for lo, hi in inner)
    rel = tuple((lo - a, hi - a) for (lo, hi), (a, _) in zip(core, inner))
    for sub in _strips(rel, ishape):  # the frame: inner box minus core
        hold(tuple(slice(x.start + a, x.stop + a) for x, (a, _) in zip(sub, inner)))
    lag = _lag(d, hazards) if kern is not None and d.ndim == 2 else None
    if lag is not None:
        kern.run_lag(prog, root, vals, d, csub, gshape, origin, lag)
    else:
        _compute_aliased(kern, prog, root, vals, d, hazards, gshape, origin, core)
    _wait(flights)
    for sub in _strips(inner, d.shape):
        hold(sub)
    for sub, tmp in held:
        d[sub] = tmp
    return True


_SEEN: dict = {}


def _worth_compiling(prog: Program, bshape) -> bool:
    """Compile for large blocks, or for programs evaluated often."""
    if math.prod(bshape) >= config.fuse_jit_min_size:
        return True
    key = (
        tuple((lf[0], lf[1].dtype) if lf[0] != "r" else ("r",) for lf in prog.leaves),
        tuple((f, lp, r) for f, lp, r in prog.steps),
        len(bshape),
    )
    n = _SEEN.get(key, 0) + 1
    if len(_SEEN) > 4096:
        _SEEN.clear()
    _SEEN[key] = n
    return n > config.fuse_jit_after


def _hazard(d, v) -> bool:
    """Whether writing ``d`` can change what ``v`` reads (other than the same element)."""
    if not np.may_share_memory(d, v):
        return False
    return not (
        d.shape == v.shape
        and d.strides == v.strides
        and d.dtype == v.dtype
        and d.__array_interface__["data"][0] == v.__array_interface__["data"][0]
    )


def _lag(d, hazards):
    """Rows a computed row must wait before it is written back, or None.

    For operands with ``d``'s strides (shifted views of the same array, as in
    a stencil) and rows ascending in memory: row ``i`` of such an operand
    reads the memory of row ``r`` of ``d`` only if ``|(i - r) s0 + diff|`` is
    at most the row's extent ``W``, so row ``r`` may be written once row
    ``r + L`` is computed, with ``L`` the smallest value where
    ``(L + 1) s0 + diff > W``.
    """
    if d.ndim not in (1, 2) or d.size == 0 or d.strides[0] <= 0:
        return None
    item = d.itemsize
    s0 = d.strides[0] // item
    width = sum((n - 1) * abs(s) for n, s in zip(d.shape[1:], d.strides[1:])) // item
    base = d.__array_interface__["data"][0]
    lag = 0
    for v in hazards:
        if v.strides != d.strides or v.dtype != d.dtype or v.shape != d.shape:
            return None
        diff = (v.__array_interface__["data"][0] - base) // item
        lag = max(lag, (width - diff) // s0 if width - diff >= 0 else 0)
    if lag >= d.shape[0]:
        return None
    return lag


def _interior(fetches, gshape, bshape):
    """Box of the block (local indices) that reads no ghost cell, or None."""
    lo = [0] * len(bshape)
    hi = list(bshape)
    for f in fetches:
        plan = f.plan
        if plan.mode == "temp":
            return None
        if plan.mode != "halo" or not plan.recvs:
            continue
        st, vm = f.st, f.x._map
        if vm.shape != gshape:
            return None
        own = st.layout.block(st.ctx.rank)
        walked = {b for b, _ in vm.axes}
        if any(not own[b][0] <= vm.start[b] < own[b][1] for b in range(len(own)) if b not in walked):
            return None  # an integer-indexed axis at a ghost position: every cell reads ghosts
        for k, ((b, step), (nlo, _)) in enumerate(zip(vm.axes, plan.need)):
            if b < 0:
                continue
            olo, ohi = own[b]
            s0 = vm.start[b]
            # base index of local cell i is s0 + (nlo + i) * step: inside [olo, ohi)?
            if step > 0:
                a = _ceil_div(olo - s0, step) - nlo
                e = _ceil_div(ohi - s0, step) - nlo
            else:
                t = -step
                a = (s0 - ohi) // t + 1 - nlo
                e = (s0 - olo) // t + 1 - nlo
            lo[k] = max(lo[k], a)
            hi[k] = min(hi[k], e)
    if any(a >= b for a, b in zip(lo, hi)):
        return None
    return tuple(zip(lo, hi))


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def _strips(inner, bshape):
    """Slices covering the block minus the box ``inner``."""
    nd = len(bshape)
    out = []
    for k in range(nd):
        a, b = inner[k]
        pre = tuple(slice(inner[j][0], inner[j][1]) for j in range(k))
        post = tuple(slice(0, bshape[j]) for j in range(k + 1, nd))
        if a > 0:
            out.append((*pre, slice(0, a), *post))
        if b < bshape[k]:
            out.append((*pre, slice(b, bshape[k]), *post))
    return out


def _compute(kern, prog, root, vals, d, sub, gshape, origin) -> None:
    """Evaluate the program over the local sub-box ``sub`` into ``d[sub]``."""
    if any(s.stop <= s.start for s in sub):
        return
    if kern is not None:
        kern.run(prog, root, vals, d, sub, gshape, origin)
    else:
        d[sub] = _on(d, _interpret(prog, root, vals, sub, gshape, origin, d.dtype))


def _compute_aliased(kern, prog, root, vals, d, hazards, gshape, origin, box=None) -> None:
    """Compute into ``d`` (or its sub-box ``box``) while operands read ``d``'s memory: Jacobi semantics.

    Rows (chunks along the first axis) are computed into scratch buffers and
    written back as soon as no chunk still to be computed reads their memory,
    so a stencil holds about two chunks of scratch, a reversed view the whole
    block.  ``hazards``: the operands' blocks that share memory with ``d``.
    """
    from numpy.lib.array_utils import byte_bounds

    if d.ndim == 0:
        tmp = np.empty((), d.dtype)
        _compute(kern, prog, root, vals, tmp, (), gshape, origin)
        d[...] = tmp
        return
    box = box or tuple((0, n) for n in d.shape)
    (a0, b0), rest = box[0], tuple(slice(lo, hi) for lo, hi in box[1:])
    shape = tuple(hi - lo for lo, hi in box)
    row = max(1, math.prod(shape[1:]) * d.itemsize)
    step = max(1, config.fuse_chunk_bytes // row)
    pending: list = []
    for lo in range(a0, b0, step):
        hi = min(b0, lo + step)
        tmp = np.empty((hi - lo, *shape[1:]), d.dtype)
        _compute_into(kern, prog, root, vals, tmp, (slice(lo, hi), *rest), gshape, origin)
        pending.append((lo, hi, tmp))
        # Memory still to be read by the chunks after this one.
        later = (slice(hi, b0), *rest)
        reads = [byte_bounds(v[later]) for v in hazards if hi < b0 and v[later].size]
        while pending:
            plo, phi, ptmp = pending[0]
            wl, wh = byte_bounds(d[(slice(plo, phi), *rest)])
            if any(rl < wh and wl < rh for rl, rh in reads):
                break
            d[(slice(plo, phi), *rest)] = ptmp
            pending.pop(0)
    for plo, phi, ptmp in pending:
        d[(slice(plo, phi), *rest)] = ptmp


def _compute_into(kern, prog, root, vals, tmp, sub, gshape, origin) -> None:
    """Evaluate over ``sub`` of the block into the separate buffer ``tmp``."""
    if any(s.stop <= s.start for s in sub):
        return
    if kern is not None:
        kern.run(prog, root, vals, tmp, sub, gshape, origin, out_is_sub=True)
    else:
        tmp[...] = _on(tmp, _interpret(prog, root, vals, sub, gshape, origin, tmp.dtype))


def _interpret(prog, root, vals, sub, gshape, origin, out_dtype):
    """The program run one NumPy call at a time on local blocks (the eager results)."""

    blocks = [v for v in vals if not isinstance(v, (tuple, np.generic)) and hasattr(v, "shape")]
    xp = np if not blocks or isinstance(blocks[0], np.ndarray) else _device_xp()

    sv = []
    for v in vals:
        if isinstance(v, tuple):  # random leaf
            u = uniform_box(v[1], _sub_box(sub, origin), gshape)
            sv.append(u if xp is np else xp.asarray(u))
        elif not isinstance(v, np.generic) and hasattr(v, "shape"):  # a block (NumPy or device)
            sv.append(v[sub])
        else:
            sv.append(v)
    temps: list = []
    with np.errstate(all="ignore"):
        for func, _loop_dt, refs in prog.steps:
            ops = [sv[i] if t == "l" else temps[i] for t, i in refs]
            temps.append(func(*ops))
    t, i = root
    res = sv[i] if t == "l" else temps[i]
    if not hasattr(res, "astype"):
        res = np.asarray(res)
    return res.astype(out_dtype, copy=False)


def _on(dst, res):
    """``res`` on ``dst``'s side (a program of random leaves only is computed on the host)."""
    if isinstance(res, np.ndarray) and not isinstance(dst, np.ndarray):
        return _device_xp().asarray(res)
    return res


def _sub_box(sub, origin):
    return tuple((o + s.start, o + s.stop) for s, o in zip(sub, origin))


_KERNELS = None


def _kernels():
    """The numba kernel module, or None (fallback to NumPy) when it cannot load."""
    global _KERNELS
    if _KERNELS is None:
        try:
            kernels_cpu.check()
            _KERNELS = kernels_cpu
        except Exception:  # noqa: BLE001 - numba missing or broken: NumPy evaluates
            _KERNELS = False
    return _KERNELS or None


_DEVICE_KERNELS = None


def _device_xp():
    return _backends._cupy_module()


def _device_kernels():
    """The generated-CuPy-kernel module, or None (NumPy calls on device blocks) when it cannot load."""
    global _DEVICE_KERNELS
    if _DEVICE_KERNELS is None:
        try:
            kernels_cuda.check()
            _DEVICE_KERNELS = kernels_cuda
        except Exception:  # noqa: BLE001 - no ElementwiseKernel: one CuPy call per step
            _DEVICE_KERNELS = False
    return _DEVICE_KERNELS or None


def local_sum(node, gshape, res_dtype):
    """This rank's fused partial ``sum`` of ``node`` (an int/bool tree), or None.  Not collective."""
    device = backend_of(node.ctx).is_device
    kern = _device_kernels() if device else _kernels()
    if kern is None:
        return None
    prog, root, owned = _here(node)
    Quiet.depth += 1
    try:
        _wait(prog.flights)
        if not owned:
            return res_dtype.type(0)
        block = node.layout.block(node.ctx.rank)
        vals = [lf[1] if lf[0] != "r" else lf for lf in prog.leaves]
        full = tuple(slice(0, hi - lo) for lo, hi in block)
        total = kern.run_sum(prog, root, vals, full, gshape, tuple(lo for lo, _ in block), res_dtype)
    finally:
        Quiet.depth -= 1
    if device:
        total = backend_of(node.ctx).to_host(total)
    return res_dtype.type(total)
