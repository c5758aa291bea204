"""The one elementwise engine: every ufunc, operator and assignment runs here.

An operation is computed where its output lives.  For each distributed
operand the engine asks :func:`~spmdarray.decomposition.fetch_plan` which
cells this rank lacks, posts every receive and send of every operand at once,
waits, and then calls the NumPy function once on local blocks.  Keeping all
evaluation behind :func:`elementwise` is what lets a later version defer and
fuse chains of operations without touching the API.
"""

from __future__ import annotations

import numpy as np

from spmdarray.backend.backends import backend_of
from spmdarray.comm import bcast_array, start_exchange
from spmdarray.core.flights import Flight
from spmdarray.core.storage import Storage
from spmdarray.decomposition import Layout, ViewMap, fetch_plan, view_layout
from spmdarray.fusion import record as _fusion

__all__ = ["elementwise", "fetch", "fetch_start", "fetch_finish", "assign", "is_distributed", "context_of"]


_ND: type | None = None  # set by ``_array`` once the class exists


def is_distributed(x) -> bool:
    return isinstance(x, _ND)


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
    (loc,) = fetch(ctx, [_ND._new(x._st, small)], lay)
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
    for i, it in enumerate(items):
        if isinstance(it, _ND) and it._map.broadcast_axes:
            out[i] = _fetch_broadcast(ctx, it, out_layout)
        elif isinstance(it, _ND):
            st, vm = it._st, it._map
            plan = fetch_plan(st.layout, st.ghost, vm, out_layout, rank)
            if not plan.sends and not plan.recvs and plan.mode != "temp":
                # Aligned operand: a view of the local allocation, no messages.
                out[i] = st.view_of(vm, plan.need) if plan.mode != "none" else None
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


def _slice_replicated(arr: np.ndarray, shape, block):
    off = len(shape) - arr.ndim
    idx = []
    for j, n in enumerate(arr.shape):
        lo, hi = block[j + off]
        idx.append(slice(0, 1) if (n == 1 and shape[j + off] != 1) else slice(lo, hi))
    return arr[tuple(idx)]


def _dummy(x):
    if is_distributed(x) or isinstance(x, np.ndarray):
        return np.ones((1,) * x.ndim, x.dtype)
    return x


def _shape_of(x):
    if is_distributed(x) or isinstance(x, np.ndarray):
        return x.shape
    return ()


_PASS = (int, float, complex, bool, np.ndarray, np.generic, type(None))


def _as_operand(x):
    if isinstance(x, _ND) or isinstance(x, _PASS) or np.isscalar(x):
        return x
    return np.asarray(x)


def choose_layout(ctx, args, shape) -> Layout:
    """Layout to compute an operation of output ``shape`` on.

    The first distributed operand of that shape wins (so ``center + north``
    is computed where ``center`` lives and needs only halos), preferring one
    without idle ranks; otherwise a fresh balanced layout.

    When the first operand has siblings, views of the same base with the same
    steps but other offsets (``north + south``), the operation is computed on
    the view half-way between them (here ``center``, rounding toward the first
    operand), so each sibling moves only its own halo and a later assignment to
    the middle view moves nothing.
    """
    best = None
    for i, a in enumerate(args):
        if isinstance(a, _ND) and a._map.shape == shape and not a._map.broadcast_axes:
            # (A broadcast view's repeated axes are not split: never compute there.)
            lay = a._layout
            if all(f is None for f in lay.gfixed):
                return _between(a, args[i + 1 :], lay)
            best = best or lay
    return best or Layout.balanced(shape, ctx.size)


def _between(first, rest, lay: Layout) -> Layout:
    """Layout of the view midway between ``first`` and its same-base siblings."""
    vm = first._map
    lo = hi = None
    for b in rest:
        if isinstance(b, _ND) and b._s is first._s and b._map.axes == vm.axes and b._map.shape == vm.shape:
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


def _shape_txt(s) -> str:
    """A shape as NumPy's error messages write it: ``(7,5)``, ``(3,)``, ``()``."""
    s = tuple(s)
    return "(" + ",".join(str(n) for n in s) + ("," if len(s) == 1 else "") + ")"


def broadcast_error(shapes) -> ValueError:
    txt = " ".join(_shape_txt(s) for s in shapes)
    return ValueError(f"operands could not be broadcast together with shapes {txt} ")


_PROBES: dict = {}

# Ufuncs whose integer loops raise on some *values* (``2 ** -1``): only the
# rank holding such a value would raise, so every rank agrees on the outcome.
_DATA_ERRORS = {np.power}


def _attempt(func, locs, lout, kw, power: bool = False):
    try:
        if power and len(locs) == 2:
            # Device kernels do not check: NumPy's error for negative integer exponents.
            e = locs[1]
            if (bool((e < 0).any()) if hasattr(e, "shape") else e < 0) and lout[0].dtype.kind in "iu":
                raise ValueError("Integers to negative integer powers are not allowed.")
        func(*locs, out=lout, **kw)
    except Exception as e:  # noqa: BLE001 - re-raised on every rank by _agree
        return e
    return None


def _agree(ctx, err) -> None:
    """Raise the first rank's error on every rank (collective)."""
    from spmdarray.comm import allgather_object

    errs = (
        allgather_object(ctx, None if err is None else (type(err), str(err)))
        if ctx.size > 1
        else [err and (type(err), str(err))]
    )
    for e in errs:
        if e is not None:
            raise e[0](e[1])


_UNKEYED = object()


def _arg_key(a):
    """What decides dtypes and casting errors for one operand (``_UNKEYED``: unknown)."""
    t = type(a)
    if t is _ND or isinstance(a, (_ND, np.ndarray)):
        return (a.dtype, a.ndim)
    if a is None or t is float or t is complex or t is bool:
        return None if a is None else t
    if isinstance(a, int) and not isinstance(a, bool):
        # what decides overflow errors: int8 holds -128 (~a == 127) but not -129
        return (int, a < 0, (~a if a < 0 else a).bit_length())
    if isinstance(a, np.generic):
        return (type(a), a.dtype)
    return _UNKEYED


def cached_dtypes(func, args, outs=(None,), where_op=None):
    """Result dtypes of ``func`` already checked for these operand kinds, else None."""
    parts = [func]
    for a in (*args, *outs, where_op):
        k = _arg_key(a)
        if k is _UNKEYED:
            return None
        parts.append(k)
    return _PROBES.get(tuple(parts))


def _checked_dtypes(func, args, outs, where_op, kwargs, nout):
    """Result dtypes, by running ``func`` on one-element dummies (cached).

    Raises NumPy's own exception for bad dtypes, casting or Python-int
    overflow; it reads no element of any block, so every rank agrees.
    """
    pkey = _probe_key(func, args, outs, where_op, kwargs)
    dtypes = _PROBES.get(pkey) if pkey is not None else None
    if dtypes is not None:
        return dtypes
    dargs = [_dummy(a) for a in args]
    dkw = dict(kwargs)
    given = [o for o in outs if o is not None]
    if given:
        nd = given[0].ndim
        dkw["out"] = tuple(np.empty((1,) * nd, o.dtype) if o is not None else None for o in outs)
        if nout == 1 and not isinstance(func, np.ufunc):
            dkw["out"] = dkw["out"][0]
    if where_op is not None:
        dkw["where"] = np.ones((1,) * len(_shape_of(where_op)), bool) if _shape_of(where_op) else True
    with np.errstate(all="ignore"):
        probe = func(*dargs, **dkw)
    probes = probe if nout > 1 else (probe,)
    dtypes = [np.asarray(p).dtype for p in probes]
    if pkey is not None:
        if len(_PROBES) > 4096:
            _PROBES.clear()
        _PROBES[pkey] = dtypes
    return dtypes


def result_dtypes(func, args):
    """Checked result dtypes of ``func(*args)``, or None if NumPy rejects them."""
    try:
        return _checked_dtypes(func, args, (None,), None, {}, 1)
    except Exception:  # noqa: BLE001 - elementwise raises it properly later
        return None


def _probe_key(func, args, outs, where_op, kwargs):
    """Hashable description of everything that decides dtypes and casting errors."""
    parts = [func]
    for a in (*args, *outs, where_op):
        k = _arg_key(a)
        if k is _UNKEYED:
            return None
        parts.append(k)
    if kwargs:
        parts.append(tuple(sorted(kwargs.items())))
    key = tuple(parts)
    try:
        hash(key)
    except TypeError:
        return None
    return key


_SLOW = object()


def _fast(func, args, out):
    """The common case (ufunc, same-shape arrays and Python scalars, at most
    one ``out``, dtypes already checked once) without the general machinery.

    Returns ``_SLOW``, before any communication, when the case is not common.
    """
    if type(func) is not np.ufunc:
        return _SLOW
    ctx = None
    shape = ()
    for a in args:
        t = type(a)
        if t is _ND:
            if ctx is None:
                ctx = a._st.ctx
            elif a._st.ctx is not ctx:
                return _SLOW
            sh = a._map.shape
            if sh != shape:
                if shape:
                    return _SLOW
                shape = sh
        elif not (t is float or t is complex or t is bool or t is int):
            return _SLOW
    if not shape:
        return _SLOW
    o = None
    if out is not None:
        if len(out) != 1 or type(out[0]) is not _ND:
            return _SLOW
        o = out[0]
        if o._st.ctx is not ctx or o._map.shape != shape:
            return _SLOW
    dtypes = cached_dtypes(func, args, (o,))
    if dtypes is None or (func in _DATA_ERRORS and dtypes[0].kind in "iu") or "raise" in np.geterr().values():
        return _SLOW
    layout = o._layout if o is not None else choose_layout(ctx, args, shape)
    locs = fetch(ctx, args, layout)
    res = o if o is not None else _ND._new(Storage(ctx, layout, dtypes[0]), None)
    rank = ctx.rank
    if layout.owned_size(rank):
        be = res._st.be
        call = _on_device(func, be, 1, {}) if be.is_device else func
        call(*locs, out=(res._st.view_of(res._map, layout.block(rank)),))
    if o is not None:
        o._st.bump()
    return res


def elementwise(func, args, out=None, where=True, nout: int = 1, **kwargs):
    """Apply an elementwise NumPy callable over distributed operands.

    Collective over the operands' communicator.

    Parameters
    ----------
    func : callable
        A ufunc or any NumPy function that works block by block and takes
        ``out=`` (``numpy.round`` for instance).
    args : sequence
        Operands: spmdarray arrays, NumPy arrays (the same on every rank),
        Python or NumPy scalars.
    out : tuple of (ndarray or None), optional
        Output arrays; NumPy's broadcasting and casting rules apply.
    where : array_like of bool, optional
        NumPy's ``where=``.
    nout : int
        Number of outputs of ``func``.
    **kwargs
        Passed to ``func`` (``dtype``, ``casting``, ...).

    Returns
    -------
    ndarray or tuple of ndarray
        NumPy scalars when the result is 0-d and no ``out`` was given.
    """
    for o in out or ():
        check_writeable(o)
    if _fusion.settings.enabled and func in _fusion.FUSABLE:
        res = _fusion.record(func, args, out, where, nout, kwargs)
        if res is not NotImplemented:
            return res
    if where is True and nout == 1 and not kwargs:
        res = _fast(func, args, out)
        if res is not _SLOW:
            return res
    ndarray = _ND
    args = [_as_operand(a) for a in args]
    outs = tuple(out) if out is not None else (None,) * nout
    if len(outs) != nout:
        raise ValueError(f"The 'out' tuple must have exactly {nout} entries: one per ufunc output")
    for o in outs:
        if o is not None and not is_distributed(o):
            raise TypeError(
                "out= must be a spmdarray array when the inputs are distributed; "
                f"got {type(o).__name__}. Convert inputs with numpy.asarray(x) to work on NumPy arrays"
            )
    where_op = None if where is True else _as_operand(where)
    ctx = context_of(*args, *outs, where_op)
    # 1. shapes, with NumPy's error messages
    shapes = [_shape_of(a) for a in args]
    full = [sh for sh in shapes if sh]
    if not full:
        shape = ()
    elif all(sh == full[0] for sh in full):
        shape = full[0]
    else:
        try:
            shape = np.broadcast_shapes(*shapes)
        except ValueError:
            raise broadcast_error(shapes) from None
    given = [o for o in outs if o is not None]
    if given:
        oshape = given[0].shape
        for o in given:
            if o.shape == shape:
                continue
            try:
                ok = np.broadcast_shapes(o.shape, shape) == o.shape
            except ValueError:
                ok = False
            if not ok:
                raise ValueError(
                    f"non-broadcastable output operand with shape {_shape_txt(o.shape)} doesn't match the broadcast "
                    f"shape {_shape_txt(shape)}"
                )
        shape = oshape
    if where_op is not None:
        try:
            if np.broadcast_shapes(_shape_of(where_op), shape) != shape:
                raise ValueError
        except ValueError:
            raise broadcast_error([*shapes, *(o.shape for o in given), _shape_of(where_op)]) from None
    # 2. dtypes and casting errors, by running NumPy on one-element dummies
    nd = len(shape)
    if where_op is not None and is_distributed(where_op) and where_op.dtype != bool:
        raise TypeError(f"where= must be a boolean array, got dtype {where_op.dtype}")
    dtypes = _checked_dtypes(func, args, outs, where_op, kwargs, nout)
    # 3. where to compute, and the local operands
    layout = outs[0]._layout if outs[0] is not None else choose_layout(ctx, args, shape)
    locs = fetch(ctx, [*args, where_op], layout)
    wloc = locs[-1]
    locs = locs[:-1]
    results = []
    for o, dt in zip(outs, dtypes):
        if o is not None:
            if o._layout is not layout and o._layout != layout:
                raise NotImplementedError(
                    "elementwise with several out= arrays of different layouts; use separate assignments"
                )
            results.append(o)
        else:
            results.append(ndarray._new(Storage(ctx, layout, dt), None))
    block = layout.block(ctx.rank)
    # Errors that depend on values (integer powers, or floating-point errors
    # under ``errstate(...='raise')``) would strike only some ranks: agree.
    agree = (func in _DATA_ERRORS and dtypes[0].kind in "iu") or "raise" in np.geterr().values()
    if layout.owned_size(ctx.rank):
        lout = tuple(r._st.view_of(r._map, block) for r in results)
        kw = dict(kwargs)
        is_ufunc = isinstance(func, np.ufunc)
        if where_op is not None:
            kw["where"] = wloc
        be = results[0]._st.be
        power = be.is_device and func is np.power
        if be.is_device and is_ufunc:
            func, kw = _on_device(func, be, nout, kw), {}
        if agree:
            _agree(ctx, _attempt(func, locs, lout, kw, power))
        elif is_ufunc:
            func(*locs, out=lout, **kw)
        else:
            func(*locs, out=lout[0], **kw)
    elif agree:
        _agree(ctx, None)
    for o in given:
        o._st.bump()
    if out is None and nd == 0:
        vals = tuple(r._scalar() for r in results)
        return vals if nout > 1 else vals[0]
    return tuple(results) if nout > 1 else results[0]


# Ufuncs CuPy lacks (``spacing``...), found on first use: computed on a host copy
# of this rank's block (never a gather) and copied back.
_HOST_UFUNCS: set = set()
_LOGICAL = frozenset({np.logical_and, np.logical_or, np.logical_xor, np.logical_not})


def _kind(a) -> str:
    return a.dtype.kind if hasattr(a, "dtype") else ("c" if isinstance(a, complex) else "")


def _device_operand(a, kinds: str):
    """A Python int beyond int64, as NumPy would convert it (CuPy overflows a C long)."""
    if type(a) is int and not -(1 << 63) <= a < 1 << 63:
        if any(k in "fc" for k in kinds):
            return float(a)
        if "u" in kinds and 0 <= a < 1 << 64:
            return np.uint64(a)
    return a


def _on_device(func, be, nout: int, kw: dict):
    """``run(*blocks, out=...)``: ufunc ``func`` on device blocks with NumPy's results.

    CuPy's ufuncs take no ``where=`` or ``signature=``, fill at most one
    ``out``, reject complex logical operands and Python ints beyond int64, and
    lack a few ufuncs.  Each case is computed another way here; every other
    call goes straight to CuPy.
    """
    kw = dict(kw)
    where = kw.pop("where", None)
    sig = kw.pop("signature", None)
    if sig is not None:
        sig = sig if isinstance(sig, tuple) else (sig,)
        if len(sig) == 1 and not isinstance(sig[0], str):
            kw["dtype"] = sig[0]
        elif any(isinstance(t, str) for t in sig) or any(t is not None for t in sig[:-1]):
            raise NotImplementedError(
                f"{func.__name__}(signature={sig!r}) on the cupy backend: give only the output type, or dtype="
            )
        else:
            kw["dtype"] = sig[-1]

    def run(*args, out) -> None:
        outs = out if isinstance(out, tuple) else (out,)
        kinds = "".join(_kind(a) for a in args)
        args = [_device_operand(a, kinds) for a in args]
        if func in _LOGICAL and "c" in kinds:
            args = [np.not_equal(a, 0) if _kind(a) == "c" else a for a in args]
        if where is None and nout == 1 and func not in _HOST_UFUNCS:
            try:
                func(*args, out=outs, **kw)
                return
            except TypeError as e:
                if "NotImplemented" not in str(e):
                    raise
                _HOST_UFUNCS.add(func)
        if func in _HOST_UFUNCS:
            res = func(*[be.to_host(a) if be.is_block(a) else a for a in args], **kw)
            res = tuple(be.asarray(r) for r in (res if nout > 1 else (res,)))
        else:
            res = func(*args, **kw)
            res = res if nout > 1 else (res,)
        w = True if where is None else where if hasattr(where, "shape") else bool(where)
        for o, r in zip(outs, res):
            # Casting was checked against NumPy's rules before any work.
            np.copyto(o, r, casting="unsafe", where=w)

    return run


def check_writeable(dst) -> None:
    """ValueError on every rank when ``dst`` is a read-only broadcast view.  Not collective."""
    if is_distributed(dst) and dst._map.broadcast_axes:
        raise ValueError("assignment destination is read-only")


def assign(dst, value) -> None:
    """``dst[...] = value`` with NumPy's broadcasting and casting.  Collective."""
    check_writeable(dst)
    if type(value) is _ND and type(value._s) is _fusion.Node and _fusion.assign(dst, value):
        return
    value = _as_operand(value)
    vshape = _shape_of(value)
    # NumPy drops leading length-1 axes of the value before broadcasting.
    while len(vshape) > dst.ndim and vshape[0] == 1:
        vshape = vshape[1:]
        value = value[0]
    try:
        ok = len(vshape) <= dst.ndim and np.broadcast_shapes(vshape, dst.shape) == dst.shape
    except ValueError:
        ok = False
    if not ok:
        vs, ds = _shape_txt(_shape_of(value)), _shape_txt(dst.shape)
        raise ValueError(f"could not broadcast input array from shape {vs} into shape {ds}")
    probe = np.empty((1,) * dst.ndim, dst.dtype)
    probe[...] = _dummy(value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "OSU" and value.dtype != dst.dtype:
        # Converting strings or objects can fail on some values only; the value
        # is global (every rank passes it), so convert it all here, identically.
        value = value.astype(dst.dtype)
    ctx = dst._st.ctx
    context_of(dst, value)
    layout = dst._layout
    (loc,) = fetch(ctx, [value], layout)
    block = layout.block(ctx.rank)
    if layout.owned_size(ctx.rank):
        d = dst._st.view_of(dst._map, block)
        be = dst._st.be
        if (isinstance(loc, np.ndarray) or be.is_block(loc)) and be.xp.may_share_memory(loc, d):
            # As if the value were copied first, on any rank count: NumPy skips this
            # copy for 1-D destinations, where crossing strides then give order-dependent values.
            loc = loc.copy()
        d[...] = loc
    dst._st.bump()


def to_scalar(x):
    """The value of a size-1 array as a NumPy scalar on every rank.  Collective."""
    lay = x._layout
    ctx = x._st.ctx
    box = tuple((0, 1) for _ in x.shape)
    be = x._st.be
    if _replicated(lay):  # every rank holds the element
        return be.to_host(x._st.view_of(x._map, box)).reshape(()).copy()[()]
    root = next(r for r, _ in lay.sources(0, box))
    data = be.to_host(x._st.view_of(x._map, box)) if ctx.rank == root else None
    return bcast_array(ctx, data, root, (), x.dtype)[()]


def _replicated(lay: Layout) -> bool:
    return all(lay.is_replicated_axis(k) for k in range(len(lay.dims))) or lay.nprocs == 1
