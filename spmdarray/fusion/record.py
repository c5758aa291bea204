"""Deferred elementwise evaluation: chains of ufuncs fused into one kernel per rank.

An elementwise operation whose operands and ufunc the fuser handles does not
run: :func:`record` returns a *deferred* ``ndarray`` whose storage slot holds
a :class:`Node` (the ufunc and its operands) instead of a
:class:`~spmdarray.core.storage.Storage`.  Shapes, dtypes and NumPy's casting
errors are checked when the operation is recorded, exactly as the eager
engine checks them, so errors are raised at the line that caused them.

The value is computed when it is needed:

* assigning it (``x[...] = expr``, ``out=``, in-place operators): the whole
  tree is evaluated straight into the destination, with a scratch buffer only
  where the destination overlaps an operand (Jacobi semantics);
* any access to the array's storage (``x._st``, ``x.local``, printing,
  ``numpy.asarray``, reductions, indexing, non-elementwise functions): the
  tree is evaluated into a fresh allocation and the array becomes an ordinary
  one;
* a write to storage the expression reads (any storage access of an operand
  first evaluates the deferred arrays that read it);
* ``spmdarray.sync()``, or a tree larger than ``config.fuse_max_ops`` operations.

Evaluation is one compiled numba kernel per rank (:mod:`spmdarray.fusion.kernels_cpu`), or, when
numba is missing or disabled, the same operations run one by one with NumPy
on local blocks (:mod:`spmdarray.fusion.run`).  ``SPMDARRAY_FUSE=0`` turns deferral
off entirely; ``SPMDARRAY_FUSE_COMPILER=numpy`` keeps deferral but evaluates
with NumPy.

Communication happens when an operation is *recorded*, never when it is
evaluated.  Recording is a point every rank reaches in the same order, and it
posts exactly the messages the eager engine would (the same fetch plans onto
the same layout), with nonblocking sends and receives left in flight
(:mod:`spmdarray.core.flights`).  Evaluation only waits for them, which is local: so a
deferred value may be evaluated on some ranks only (``t.local`` taken on one
rank, a reference kept on one rank) and every rank still gets the same
result.  An operand that is itself deferred is computed inside the same
kernel when it lives on the same layout, and evaluated first otherwise.  The
interior of the block, which needs no ghost cell, is computed while the halos
travel, and the boundary strips after they arrived.
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from spmdarray.backend.backends import backend_of, context
from spmdarray.comm import errors_may_raise, label_frames, local_rank
from spmdarray.core.array import ndarray
from spmdarray.core.dtypes import _checked_dtypes
from spmdarray.core.fetch import choose_layout, fetch_start
from spmdarray.core.flights import track, untrack, wait_all
from spmdarray.core.placement import default_layout, is_whole
from spmdarray.core.storage import Storage
from spmdarray.core.thunk import PENDING, READERS, Quiet, Thunk, flush
from spmdarray.decomposition import ViewMap, fetch_plan
from spmdarray.fusion import run as _run
from spmdarray.fusion.run import COPY, INLINE, RAND
from spmdarray.settings import config

__all__ = ["Node", "FUSABLE", "record", "assign", "is_deferred", "random_leaf", "local_sum"]


#: Ufuncs the fuser records, with the dtype kinds of their loops (``b``: bool).
FUSABLE: dict = {
    np.add: "biuf",
    np.subtract: "iuf",
    np.multiply: "biuf",
    np.true_divide: "f",
    np.negative: "if",
    np.positive: "iuf",
    np.absolute: "f",
    np.square: "iuf",
    np.sqrt: "f",
    np.less: "biuf",
    np.less_equal: "biuf",
    np.greater: "biuf",
    np.greater_equal: "biuf",
    np.equal: "biuf",
    np.not_equal: "biuf",
    np.logical_and: "biuf",
    np.logical_or: "biuf",
    np.logical_xor: "biuf",
    np.logical_not: "biuf",
    np.bitwise_and: "biu",
    np.bitwise_or: "biu",
    np.bitwise_xor: "biu",
    np.maximum: "biu",
    np.minimum: "biu",
}


class Node(Thunk):
    """A deferred elementwise operation.  Not collective.

    ``func`` is a ufunc (or ``RAND`` / ``COPY``), ``args`` its operands:
    ``ndarray`` (deferred or not) or scalars already converted to the loop
    dtype; ``loop`` the loop dtypes (inputs then output).  ``locs`` holds,
    per operand, this rank's block of it aligned to ``layout`` as fetched
    when the operation was recorded (``INLINE`` for a deferred operand on the
    same layout, None for scalars); ``fetches`` and ``flight`` are those
    fetches and the messages still in flight.  ``readers`` are weak
    references to the deferred arrays that compute this node inside their
    own kernel (they must be evaluated before its value is overwritten).
    """

    __slots__ = (
        "func",
        "args",
        "dtype",
        "loop",
        "shape",
        "ctx",
        "layout",
        "nops",
        "be",
        "locs",
        "fetches",
        "flight",
        "readers",
        "st",
        "write",
        "after",
    )

    def __init__(self, func, args, dtype, loop, shape, ctx, layout, nops, locs=(), fetches=(), flight=None) -> None:
        self.func = func
        self.args = args
        self.dtype = dtype
        self.loop = loop
        self.shape = shape
        self.ctx = ctx
        self.layout = layout
        self.nops = nops
        self.be = None
        self.locs = locs
        self.fetches = fetches
        self.flight = flight
        self.readers = None
        self.st = None  # device backend: the result's allocation, reserved when recorded
        self.write = None  # a pending assignment of this value (:class:`Write`)
        self.after = ()  # pending writes into operands read in place, computed before this node

    deferred = True

    def stored(self, x) -> Storage:
        """Compute ``x`` (whose ``_s`` is this node) and return its storage (see ``Thunk``)."""
        return self.materialise(x).stored(x)

    def materialise(self, x) -> Storage:
        """Evaluate the deferred ``x`` into a fresh allocation on its layout.  Not collective."""
        st = self.st
        if st is None:
            # (On a device, a value computed inside another kernel and then needed on
            # its own: this allocation is this rank's alone.)
            st = Storage(self.ctx, self.layout, self.dtype, agree=False)
        self.st = None
        dst = ndarray._new(st, None)
        _settle_tree(self)
        _run.evaluate(self, dst, fresh=True)
        x._s = st
        x._loc = None
        w = self.write
        if w is not None:
            # An assignment of this value is pending: it copies the value now, before
            # anything (a write to ``x`` itself) can change it.
            self.write = None
            w.wait()
        if self.readers:
            # Deferred arrays that computed ``x`` inside their kernel now read this
            # storage instead: they are evaluated before it is written.
            live = [r for r in self.readers if _alive(r)]
            if live:
                READERS.setdefault(id(st), []).extend(live)
        return st

    def subtree(self) -> set:
        """ids of the deferred operands computed inside this node's kernel."""
        out: set = set()
        stack = [self]
        while stack:
            n = stack.pop()
            for a in n.args:
                if type(a) is ndarray and a._s.deferred and id(a) not in out:
                    out.add(id(a))
                    stack.append(a._s)
        return out


def is_deferred(x) -> bool:
    """Whether ``x`` is an ``ndarray`` whose value has not been computed yet."""
    return type(x) is ndarray and x._s.deferred


# ------------------------------------------------------------------ record
_LOOPS: dict = {}
_NOLOOP = object()


def _kind_of(a):
    """What decides the loop dtype for operand ``a`` (a dtype or a Python type)."""
    t = type(a)
    if t is ndarray:
        return a.dtype
    if t is float or t is int or t is complex:
        return t
    if t is bool:
        return np.dtype(bool)
    if isinstance(a, np.generic):
        return a.dtype
    return None


def _loop(func, kinds):
    key = (func, *kinds)
    lp = _LOOPS.get(key)
    if lp is None:
        lp = _NOLOOP
        try:
            lp = func.resolve_dtypes((*kinds, None))
        except Exception:  # noqa: BLE001 - the eager engine raises NumPy's error
            lp = _NOLOOP
        if lp is not _NOLOOP:
            ok = FUSABLE[func]
            ins = lp[: func.nin]
            if any(d != ins[0] for d in ins) or any(d.kind not in ok or d.itemsize == 2 for d in ins):
                lp = _NOLOOP
            elif lp[-1].kind not in "biuf" or lp[-1].itemsize == 2:
                lp = _NOLOOP
        _LOOPS[key] = lp
    return lp


def record(func, args, out, where, nout, kwargs):
    """A deferred ``func(*args)``, or NotImplemented to run it eagerly.

    Collective: it posts the operands' messages (those the eager engine would
    send), and every decision here rests on data all ranks share.
    """
    if not config.fuse or where is not True or nout != 1 or kwargs or func not in FUSABLE:
        return NotImplemented
    ctx = None
    shape = None
    nops = 1
    exposed = False
    for a in args:
        if type(a) is ndarray:
            s = a._s
            c = s.ctx
            if ctx is None:
                ctx = c
            elif c is not ctx:
                return NotImplemented
            sh = a._map.shape
            if shape is None or sh == shape:
                shape = sh
            else:
                try:
                    shape = np.broadcast_shapes(shape, sh)
                except ValueError:
                    return NotImplemented
            if s.deferred:
                nops += s.nops
            elif s.exposed:
                exposed = True
    if ctx is None or not shape or math.prod(shape) < config.fuse_min_size:
        return NotImplemented
    kinds = [_kind_of(a) for a in args]
    if any(k is None for k in kinds):
        return NotImplemented
    # Fused kernels report no floating-point errors: where one would raise (errstate, or a
    # warnings filter turning RuntimeWarnings into errors) the eager engine runs and agrees.
    if errors_may_raise() or (backend_of(ctx).is_device and not config.fuse_device):
        return NotImplemented
    o = None
    if out is not None:
        # Whether ``out`` is deferred on this rank must not matter: it never does here.
        if len(out) != 1 or type(out[0]) is not ndarray or out[0]._map.shape != shape or out[0]._s.ctx is not ctx:
            return NotImplemented
        o = out[0]
    lp = _loop(func, kinds)
    if lp is _NOLOOP:
        return NotImplemented
    # NumPy's own checks (dtypes, casting, Python int overflow), raised here.
    dt = _checked_dtypes(func, args, (o,), None, {}, 1)[0]
    if dt != lp[-1] or (o is not None and o.dtype != dt):
        return NotImplemented
    if ctx.size > 1 and ctx._local is None and config.fuse_overlap == "auto":
        local_rank(ctx)  # ranks per node, for the overlap decision (collective once per context)
    # Computed where the eager engine would compute it, with the same messages.
    layout = o._layout if o is not None else choose_layout(ctx, args, shape)
    node = _build(func, args, lp, dt, shape, ctx, layout, nops)
    res = _deferred(node)
    for a, loc in zip(node.args, node.locs):
        if loc is INLINE and a._s.deferred:
            sub = a._s
            if sub.readers is None:
                sub.readers = []
            sub.readers.append(weakref.ref(res))
            sub.st = None
    if o is None and backend_of(ctx).is_device:
        node.st = Storage(ctx, layout, dt)
    if exposed and o is None:  # (with ``out`` the engine assigns, so computes, it at once)
        # An operand's block is in the program's hands (``from_local``, ``x.local``
        # on this rank): it may be written before the value would be computed, so
        # it is computed now (locally; the messages are those just posted).
        res._st  # noqa: B018 - evaluates
    if o is not None:
        return res  # the engine assigns it to ``out`` (``spmdarray.engine.elementwise``)
    if nops > config.fuse_max_ops:
        res._st  # noqa: B018 - evaluates (locally)
    return res


def _op_label(frame) -> tuple[str, str]:
    """Trace label of a :func:`record` frame: the ufunc's name."""
    return "op", getattr(frame.f_locals.get("func"), "__name__", "fused")


label_frames(record, _op_label)


def _inlinable(a, layout) -> bool:
    """Whether operand ``a`` can be computed inside a kernel on ``layout``.

    Deferred on this rank and living on the same layout.  When ``a`` was
    evaluated on this rank only, its block is read instead, which moves no
    message either: the two cases post the same messages.
    """
    s = a._s
    return s.deferred and (s.layout is layout or s.layout == layout)


def _build(func, args, lp, dt, shape, ctx, layout, nops) -> Node:
    """The node of ``func(*args)`` on ``layout``, with its operands' messages posted."""
    cargs: list = []
    locs: list = []
    items: list = []
    where: list = []
    after: list = []
    for a, ldt in zip(args, lp):
        if type(a) is ndarray:
            cargs.append(a)
            if _inlinable(a, layout):
                locs.append(INLINE)
                continue
            if a._s.deferred:
                a._s.materialise(a)  # another layout: evaluated (locally), then fetched as stored
            st = a._s
            if st.flights and any(type(w) is Write for w in st.flights):
                if _read_in_place(a, layout, ctx):
                    # Read by the kernel only: its pending writes are computed before this node,
                    # and wait together with this node's messages.
                    after += [w for w in st.flights if type(w) is Write]
                else:
                    settle(st)  # its cells are sent or copied now
            where.append(len(locs))
            locs.append(None)
            items.append(a)
        else:
            cargs.append(ldt.type(a))
            locs.append(None)
    fetches: list = []
    flight = None
    if items:
        Quiet.depth += 1
        try:
            got, fetches, flight = fetch_start(ctx, items, layout)
        finally:
            Quiet.depth -= 1
        rank = ctx.rank
        if layout.owned_size(rank):
            bshape = tuple(hi - lo for lo, hi in layout.block(rank))
            for k, loc in zip(where, got):
                locs[k] = np.broadcast_to(loc, bshape) if loc is not None and loc.shape != bshape else loc
    node = Node(func, tuple(cargs), dt, lp, shape, ctx, layout, nops, tuple(locs), fetches, flight)
    node.after = after
    return node


def _read_in_place(a, layout, ctx) -> bool:
    """Whether this rank's part of operand ``a`` on ``layout`` is a view of its own block (no message)."""
    if a._map.broadcast_axes or (ctx.size > 1 and is_whole(layout) and not is_whole(a._layout)):
        return False
    st = a._s
    plan = fetch_plan(st.layout, st.ghost, a._map, layout, ctx.rank)
    return not plan.sends and not plan.recvs and plan.mode != "temp"


def _settle_tree(node) -> None:
    """Compute the pending writes the nodes of ``node``'s kernel tree read in place.  Not collective."""
    stack = [node]
    while stack:
        n = stack.pop()
        after = n.after
        if after:
            n.after = ()
            for w in after:
                w.wait()
        for a in n.args:
            if type(a) is ndarray and a._s.deferred:
                stack.append(a._s)


def _deferred(node: Node):
    x = object.__new__(ndarray)
    x._s = node
    x._map = ViewMap.identity(node.shape)
    x._lay = node.layout
    x._loc = None
    x._pend = None
    ref = weakref.ref(x)
    seen = set()
    for a in node.args:
        if type(a) is ndarray:
            s = a._s
            if not s.deferred and id(s) not in seen:
                seen.add(id(s))
                lst = READERS.get(id(s))
                if lst is None:
                    READERS[id(s)] = [ref]
                else:
                    if len(lst) > 32:
                        lst[:] = [r for r in lst if r() is not None and r()._s.deferred]
                    lst.append(ref)
    if len(READERS) > 256:
        for k in [k for k, lst in READERS.items() if not any(_alive(r) for r in lst)]:
            del READERS[k]
    PENDING.append(ref)
    if len(PENDING) > 256:
        PENDING[:] = [r for r in PENDING if r() is not None and r()._s.deferred]
    return x


def _alive(r) -> bool:
    y = r()
    return y is not None and y._s.deferred


def random_leaf(key: int, shape, comm):
    """A deferred array of uniform [0, 1) float64 draws (``random.Generator.random``).

    Element ``i`` (global C-order flat index) is the top 53 bits of
    SplitMix64 output ``i`` of stream ``key`` times ``2**-53``: the same bits
    as the eager generator.  None when fusion is off (or off on the device backend).
    Collective (no message; on a device, the result's allocation is agreed).
    """
    if not config.fuse:
        return None
    ctx = context(comm, None)
    be = backend_of(ctx)
    if (be.is_device and not config.fuse_device) or math.prod(shape) < config.fuse_min_size:
        return None
    layout = default_layout(shape, ctx.size)
    node = Node(RAND, (key,), np.dtype(np.float64), None, shape, ctx, layout, 1)
    if be.is_device:
        node.st = Storage(ctx, layout, node.dtype)  # agreed now (see ``Node.st``)
    return _deferred(node)


# ------------------------------------------------------------------ assign
def assign(dst, value) -> bool:
    """``dst[...] = value`` for a deferred ``value``, fused.  Collective.

    Returns False (having done nothing) when the case is left to the eager
    engine: another layout or shape, or a cast numba could round differently.
    The eager engine then moves ``value``'s block onto ``dst``'s layout,
    which, for the same layout, posts no message, as the fused path does:
    so a ``value`` already evaluated on some ranks only changes nothing.
    """
    node = value._s
    if dst._map.shape != node.shape or dst._s.ctx is not node.ctx:
        return False
    lay = dst._layout
    if lay is not node.layout and lay != node.layout:
        return False
    if dst.dtype != node.dtype and not (
        np.can_cast(node.dtype, dst.dtype, "safe") and dst.dtype.kind in "iuf" and dst.dtype.itemsize > 2
    ):
        return False
    if dst._s.deferred:
        dst._s.materialise(dst)
    dst_st = dst._s
    reads = _reads_storage(node, dst_st)
    if reads and dst.dtype != node.dtype:
        return False  # the eager path materialises the value first
    # Deferred arrays reading the destination must see its old values.
    flush(dst_st, keep=value)
    if reads and node.write is not None:
        # ``value`` becomes a copy of ``dst`` below: its pending assignment elsewhere is made now.
        node.write.wait()
    if not reads and _deferrable(node, dst, dst_st):
        Write(dst, value, dst_st)
    else:
        _settle_tree(node)
        _run.evaluate(node, dst, fresh=False, before_write=dst_st)
    dst_st.bump()
    if reads:
        # The value was computed into ``dst``: later reads of ``value`` see that
        # copy, which is evaluated (copied) before ``dst`` is written again.
        rank = node.ctx.rank
        loc = dst_st.view_of(dst._map, lay.block(rank)) if lay.owned_size(rank) else None
        value._s = Node(COPY, (dst,), node.dtype, None, node.shape, node.ctx, node.layout, 1, (loc,))
        value._loc = None
        READERS.setdefault(id(dst_st), []).append(weakref.ref(value))
    return True


# ------------------------------------------------------------ pending writes
#: Assignments recorded and not computed yet (:class:`Write`), oldest first.
WRITES: list = []


class Write:
    """``dst[...] = value`` recorded, computed later.  Not collective.

    An assignment whose value waits for messages is not computed when the
    statement runs: the next statements post their own messages first, and the
    first access to the destination's storage computes it (a read or write of
    it, a new statement sending its cells, the evaluation of a node reading its
    block in place: ``Node.after``, ``spmdarray.sync()``, exit).  Its wait then
    covers the messages of every pending write together: one ``Waitall`` for
    consecutive statements that do not read each other's results.

    A ``Write`` sits in the destination storage's ``flights``, so that
    :meth:`~spmdarray.core.storage.Storage.stored` and
    :func:`~spmdarray.core.flights.complete` compute it before the storage is
    read or written, and in the open list of :mod:`spmdarray.core.flights`.
    Writes into one storage are computed in the order they were recorded.
    The version of the destination was bumped when the statement ran, on
    every rank, so cached halos are decided as before.
    """

    __slots__ = ("dst", "value", "st", "done")

    def __init__(self, dst, value, st: Storage) -> None:
        self.dst = dst
        self.value = value
        self.st = st
        self.done = False
        value._s.write = self
        st.flights.append(self)
        WRITES.append(self)
        track(self)

    def wait(self) -> None:
        """Compute the assignment (after the earlier ones into the same storage).  Not collective."""
        if self.done:
            return
        fl = self.st.flights
        for w in fl[: fl.index(self)]:
            if type(w) is Write:
                w.wait()
        self.done = True
        fl.remove(self)
        WRITES.remove(self)
        untrack(self)
        dst, value, st = self.dst, self.value, self.st
        self.dst = self.value = self.st = None
        node = value._s
        if node.deferred:
            node.write = None
            # One wait for the messages of every pending write, and for those still
            # reading or filling the destination.
            flights = [f for f in st.flights if type(f) is not Write]
            for w in WRITES:
                if w.value._s.deferred:
                    _tree_flights(w.value._s, flights)
            _tree_flights(node, flights)
            wait_all(flights)
            _settle_tree(node)
            _run.evaluate(node, dst, fresh=False)
        else:  # the value was computed on its own meanwhile (it is read elsewhere)
            rank = st.ctx.rank
            lay = dst._layout
            if lay.owned_size(rank):
                block = lay.block(rank)
                st.view_of(dst._map, block)[...] = node.view_of(value._map, block)

    def writes_into(self, arr) -> bool:
        return not self.done

    def reads_from(self, arr) -> bool:
        return not self.done


def _tree_flights(node, out: list) -> None:
    """Append the open flights of ``node``'s kernel tree to ``out``."""
    stack = [node]
    while stack:
        n = stack.pop()
        f = n.flight
        if f is not None and not f.done:
            out.append(f)
        for a in n.args:
            if type(a) is ndarray and a._s.deferred:
                stack.append(a._s)


def _deferrable(node: Node, dst, st: Storage) -> bool:
    """Whether to leave ``dst[...] = node`` pending (:class:`Write`).  Not collective.

    Only where it waits for messages (several ranks, a flight open in its tree),
    on the host, into a split array whose block the program cannot hold
    (``exposed``), with ``config.fuse_defer_writes``, for a value not pending
    into another destination already (``Node.write`` names one: the value
    computed on its own later copies itself into that one only).  Whether a
    rank defers changes only when it waits, never a message or a collective.
    """
    if not config.fuse_defer_writes or st.exposed or node.ctx.size == 1 or backend_of(node.ctx).is_device:
        return False
    if node.write is not None:
        return False
    if is_whole(dst._layout):
        return False
    flights: list = []
    _tree_flights(node, flights)
    return bool(flights)


def settle(st) -> None:
    """Compute the pending writes into storage ``st`` (before its cells are sent or read).  Not collective."""
    for w in [w for w in st.flights if type(w) is Write]:
        w.wait()


def _reads_storage(node: Node, st: Storage) -> bool:
    for a in node.args:
        if type(a) is ndarray:
            s = a._s
            if s is st or (s.deferred and _reads_storage(s, st)):
                return True
    return False


# --------------------------------------------------------------- reductions
def local_sum(x, res_dtype):
    """This rank's part of a full ``sum`` of the deferred bool or integer ``x``, fused.

    Returns None when the fused kernel does not apply (the caller then
    evaluates ``x``).  Integer sums wrap modulo 2**64 in any order, so the
    partial equals the sum of the evaluated block bit for bit, and the
    reduction combines partials exactly as it does for stored arrays.  Not
    collective.
    """
    node = x._s
    if not node.deferred or node.dtype.kind not in "biu" or config.fuse_compiler == "numpy":
        return None
    _settle_tree(node)
    return _run.local_sum(node, x.shape, res_dtype)
