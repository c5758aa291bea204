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
* :func:`sync`, or a tree larger than ``settings.max_ops`` operations.

Evaluation is one compiled numba kernel per rank (:mod:`._kernels`), or, when
numba is missing or disabled, the same operations run one by one with NumPy
on local blocks (:mod:`._fusion_run`).  ``SPMDARRAY_FUSE=0`` turns deferral
off entirely; ``SPMDARRAY_FUSE_COMPILER=numpy`` keeps deferral but evaluates
with NumPy.

Communication happens when an operation is *recorded*, never when it is
evaluated.  Recording is a point every rank reaches in the same order, and it
posts exactly the messages the eager engine would (the same fetch plans onto
the same layout), with nonblocking sends and receives left in flight
(:mod:`._flights`).  Evaluation only waits for them, which is local: so a
deferred value may be evaluated on some ranks only (``t.local`` taken on one
rank, a reference kept on one rank) and every rank still gets the same
result.  An operand that is itself deferred is computed inside the same
kernel when it lives on the same layout, and evaluated first otherwise.  The
interior of the block, which needs no ghost cell, is computed while the halos
travel, and the boundary strips after they arrived.
"""

from __future__ import annotations

import math
import os
import sys
import weakref

import numpy as np

from spmdarray.backend.backends import backend_of
from spmdarray.comm import local_rank
from spmdarray.core import elementwise as _engine
from spmdarray.core.flights import complete, complete_all
from spmdarray.core.storage import Storage

__all__ = ["Node", "settings", "sync", "record", "is_deferred"]


class _Settings:
    r"""Fusion settings (the same on every rank).

    ``enabled``: defer elementwise operations (``SPMDARRAY_FUSE``, default on).
    ``compiler``: ``"numba"`` or ``"numpy"`` (``SPMDARRAY_FUSE_COMPILER``;
    ``"numba"`` falls back to ``"numpy"`` when numba cannot be imported).
    ``max_ops``: a deferred tree with more operations is evaluated at once.
    ``chunk_bytes``: size of the row chunks an aliased assignment is computed in.
    ``min_size``: operations with fewer elements run eagerly (their data
    sits in cache, so fusing saves little, and recording costs a few
    microseconds; ``SPMDARRAY_FUSE_MIN_SIZE``, default 16384).
    ``overlap``: compute the interior while halos travel (``SPMDARRAY_FUSE_OVERLAP``:
    ``auto``, the default, overlaps blocks of at least ``overlap_min_size``
    elements (2**20) unless a node runs more ranks than it has cores: the
    split into interior, frame and strips costs about a millisecond of
    fixed work, more than a small block's halos take to arrive, and a
    waiting rank on a shared core leaves it to another anyway; ``1``/``0``:
    always/never).
    ``device``: defer on the CuPy backend too (``SPMDARRAY_FUSE_DEVICE``,
    default on), evaluated by generated ``cupy.ElementwiseKernel``\ s.
    ``jit_min_size`` and ``jit_after``: a kernel is compiled for blocks of at
    least ``jit_min_size`` elements, or once the same program was evaluated
    ``jit_after`` times; before that NumPy evaluates it (compiling costs
    0.1 to 2 s per new kernel, see docs/fusion.md).
    """

    __slots__ = (
        "enabled",
        "compiler",
        "max_ops",
        "chunk_bytes",
        "jit_min_size",
        "jit_after",
        "min_size",
        "device",
        "overlap",
        "overlap_min_size",
    )

    def __init__(self) -> None:
        self.enabled = os.environ.get("SPMDARRAY_FUSE", "1").strip().lower() not in ("0", "off", "false", "no")
        self.compiler = os.environ.get("SPMDARRAY_FUSE_COMPILER", "numba").strip().lower()
        self.max_ops = 48
        self.chunk_bytes = 1 << 18
        self.jit_min_size = int(os.environ.get("SPMDARRAY_FUSE_JIT_MIN_SIZE", 1 << 14))
        self.jit_after = int(os.environ.get("SPMDARRAY_FUSE_JIT_AFTER", 3))
        self.min_size = int(os.environ.get("SPMDARRAY_FUSE_MIN_SIZE", 1 << 14))
        self.device = os.environ.get("SPMDARRAY_FUSE_DEVICE", "1").strip().lower() not in ("0", "off", "false", "no")
        ov = os.environ.get("SPMDARRAY_FUSE_OVERLAP", "auto").strip().lower()
        self.overlap = "auto" if ov == "auto" else ov not in ("0", "off", "false", "no")
        self.overlap_min_size = 1 << 20


settings = _Settings()

_ND = None  # the ndarray class, set by ``_array``
_RAND = "random"  # function of a random leaf (see :func:`random_leaf`)
_COPY = "copy"  # function of a node standing for a copy of a view
_INLINE = "inline"  # ``Node.locs`` entry of a deferred operand computed in the same kernel

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

#: id(Storage) -> list of weak references to deferred arrays reading it.
READERS: dict = {}
#: Weak references to every deferred array, in creation order (for :func:`sync`).
_PENDING: list = []
_quiet = 0  # > 0 while the fuser reads storage itself: no flushing


class Node:
    """A deferred elementwise operation.  Not collective.

    ``func`` is a ufunc (or ``_RAND`` / ``_COPY``), ``args`` its operands:
    ``ndarray`` (deferred or not) or scalars already converted to the loop
    dtype; ``loop`` the loop dtypes (inputs then output).  ``locs`` holds,
    per operand, this rank's block of it aligned to ``layout`` as fetched
    when the operation was recorded (``_INLINE`` for a deferred operand on the
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


def is_deferred(x) -> bool:
    """Whether ``x`` is an ``ndarray`` whose value has not been computed yet."""
    return type(x) is _ND and type(x._s) is Node


# ------------------------------------------------------------------ record
_LOOPS: dict = {}
_NOLOOP = object()


def _kind_of(a):
    """What decides the loop dtype for operand ``a`` (a dtype or a Python type)."""
    t = type(a)
    if t is _ND:
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


def _errors_raise() -> bool:
    return any(v != "warn" and v != "ignore" for v in np.geterr().values())


def record(func, args, out, where, nout, kwargs):
    """A deferred ``func(*args)``, or NotImplemented to run it eagerly.

    Collective: it posts the operands' messages (those the eager engine would
    send), and every decision here rests on data all ranks share.
    """
    if not settings.enabled or where is not True or nout != 1 or kwargs or func not in FUSABLE:
        return NotImplemented
    ctx = None
    shape = None
    nops = 1
    for a in args:
        if type(a) is _ND:
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
            if type(s) is Node:
                nops += s.nops
    if ctx is None or not shape or math.prod(shape) < settings.min_size:
        return NotImplemented
    kinds = [_kind_of(a) for a in args]
    if any(k is None for k in kinds):
        return NotImplemented
    if _errors_raise() or (backend_of(ctx).is_device and not settings.device):
        return NotImplemented
    o = None
    if out is not None:
        # Whether ``out`` is deferred on this rank must not matter: it never does here.
        if len(out) != 1 or type(out[0]) is not _ND or out[0]._map.shape != shape or out[0]._s.ctx is not ctx:
            return NotImplemented
        o = out[0]
    lp = _loop(func, kinds)
    if lp is _NOLOOP:
        return NotImplemented
    # NumPy's own checks (dtypes, casting, Python int overflow), raised here.
    dt = _engine._checked_dtypes(func, args, (o,), None, {}, 1)[0]
    if dt != lp[-1] or (o is not None and o.dtype != dt):
        return NotImplemented
    if ctx.size > 1 and ctx._local is None and settings.overlap == "auto":
        local_rank(ctx)  # ranks per node, for the overlap decision (collective once per context)
    # Computed where the eager engine would compute it, with the same messages.
    layout = o._layout if o is not None else _engine.choose_layout(ctx, args, shape)
    node = _build(func, args, lp, dt, shape, ctx, layout, nops)
    res = _deferred(node)
    for a, loc in zip(node.args, node.locs):
        if loc is _INLINE and type(a._s) is Node:
            sub = a._s
            if sub.readers is None:
                sub.readers = []
            sub.readers.append(weakref.ref(res))
            sub.st = None
    if o is None and backend_of(ctx).is_device:
        node.st = Storage(ctx, layout, dt)
    if o is not None:
        if not assign(o, res):
            _engine.assign(o, _ND._new(storage(res), None))
        return o
    if nops > settings.max_ops:
        res._st  # noqa: B018 - evaluates (locally)
    return res


def _inlinable(a, layout) -> bool:
    """Whether operand ``a`` can be computed inside a kernel on ``layout``.

    Deferred on this rank and living on the same layout.  When ``a`` was
    evaluated on this rank only, its block is read instead, which moves no
    message either: the two cases post the same messages.
    """
    s = a._s
    return type(s) is Node and (s.layout is layout or s.layout == layout)


def _build(func, args, lp, dt, shape, ctx, layout, nops) -> Node:
    """The node of ``func(*args)`` on ``layout``, with its operands' messages posted."""
    global _quiet
    cargs: list = []
    locs: list = []
    items: list = []
    where: list = []
    for a, ldt in zip(args, lp):
        if type(a) is _ND:
            cargs.append(a)
            if _inlinable(a, layout):
                locs.append(_INLINE)
                continue
            if type(a._s) is Node:
                _materialise(a)  # another layout: evaluated (locally), then fetched as stored
            where.append(len(locs))
            locs.append(None)
            items.append(a)
        else:
            cargs.append(ldt.type(a))
            locs.append(None)
    fetches: list = []
    flight = None
    if items:
        _quiet += 1
        try:
            got, fetches, flight = _engine.fetch_start(ctx, items, layout)
        finally:
            _quiet -= 1
        rank = ctx.rank
        if layout.owned_size(rank):
            bshape = tuple(hi - lo for lo, hi in layout.block(rank))
            for k, loc in zip(where, got):
                locs[k] = np.broadcast_to(loc, bshape) if loc is not None and loc.shape != bshape else loc
    return Node(func, tuple(cargs), dt, lp, shape, ctx, layout, nops, tuple(locs), fetches, flight)


def _deferred(node: Node):
    from spmdarray.decomposition import ViewMap

    x = object.__new__(_ND)
    x._s = node
    x._map = ViewMap.identity(node.shape)
    x._lay = node.layout
    ref = weakref.ref(x)
    seen = set()
    for a in node.args:
        if type(a) is _ND:
            s = a._s
            if type(s) is Storage and id(s) not in seen:
                seen.add(id(s))
                lst = READERS.get(id(s))
                if lst is None:
                    READERS[id(s)] = [ref]
                else:
                    if len(lst) > 32:
                        lst[:] = [r for r in lst if r() is not None and type(r()._s) is Node]
                    lst.append(ref)
    if len(READERS) > 256:
        for k in [k for k, lst in READERS.items() if not any(_alive(r) for r in lst)]:
            del READERS[k]
    _PENDING.append(ref)
    if len(_PENDING) > 256:
        _PENDING[:] = [r for r in _PENDING if r() is not None and type(r()._s) is Node]
    return x


def _alive(r) -> bool:
    y = r()
    return y is not None and type(y._s) is Node


def random_leaf(key: int, shape, comm):
    """A deferred array of uniform [0, 1) float64 draws (``random.Generator.random``).

    Element ``i`` (global C-order flat index) is the top 53 bits of
    SplitMix64 output ``i`` of stream ``key`` times ``2**-53``: the same bits
    as the eager generator.  None when fusion is off (or off on the device backend).
    Collective (no message; on a device, the result's allocation is agreed).
    """
    if not settings.enabled:
        return None
    from spmdarray.decomposition import Layout
    from spmdarray.routines.creation import context

    ctx = context(comm, None)
    be = backend_of(ctx)
    if (be.is_device and not settings.device) or math.prod(shape) < settings.min_size:
        return None
    layout = Layout.balanced(shape, ctx.size)
    node = Node(_RAND, (key,), np.dtype(np.float64), None, shape, ctx, layout, 1)
    if be.is_device:
        node.st = Storage(ctx, layout, node.dtype)  # agreed now (see ``Node.st``)
    return _deferred(node)


# ----------------------------------------------------------------- forcing
def storage(x) -> Storage:
    """``x``'s storage, evaluating ``x`` and the deferred arrays reading it first.

    Not collective: evaluation only waits for messages posted when the
    operations were recorded.  Outside the fuser's own reads it also
    completes the messages in flight from or into the storage, so that the
    caller may write it.
    """
    s = x._s
    if type(s) is Node:
        s = _materialise(x)
    if _quiet == 0:
        if id(s) in READERS:
            flush(s)
        if s.flights:
            complete(s)
    return s


def flush(st: Storage, keep=None) -> None:
    """Evaluate every deferred array that reads ``st`` (except ``keep``).  Not collective."""
    refs = READERS.pop(id(st), None)
    if not refs:
        return
    inner = _subtree(keep._s) if keep is not None and type(keep._s) is Node else set()
    kept = []
    for r in refs:
        y = r()
        if y is None or type(y._s) is not Node:
            continue
        if y is keep:
            kept.append(r)
        elif id(y) in inner and sys.getrefcount(y) <= _TREE_REFS:
            # An unnamed operand inside ``keep``'s own tree: computed inside its kernel.
            kept.append(r)
        else:
            _materialise(y)
    if kept:
        READERS.setdefault(id(st), []).extend(kept)


#: References to an unnamed deferred operand seen in :func:`flush`: its parent
#: node's argument tuple, the local variable, and ``getrefcount``'s argument.
_TREE_REFS = 3


def _subtree(node: Node) -> set:
    out: set = set()
    stack = [node]
    while stack:
        n = stack.pop()
        for a in n.args:
            if type(a) is _ND and type(a._s) is Node and id(a) not in out:
                out.add(id(a))
                stack.append(a._s)
    return out


def sync() -> None:
    """Evaluate every deferred array now and complete every message in flight.

    Safe on any subset of ranks (it waits only for messages that every rank
    posted already); every rank calling it, as in an SPMD program, is the
    usual case.
    """
    refs = list(_PENDING)
    _PENDING.clear()
    for r in refs:
        y = r()
        if y is not None and type(y._s) is Node:
            _materialise(y)
    complete_all()


def _materialise(x) -> Storage:
    """Evaluate the deferred ``x`` into a fresh allocation on its layout.  Not collective."""
    node = x._s
    st = node.st
    if st is None:
        # (On a device, a value computed inside another kernel and then needed on
        # its own: this allocation is this rank's alone.)
        st = Storage(node.ctx, node.layout, node.dtype, agree=False)
    node.st = None
    dst = _ND._new(st, None)
    _run.evaluate(node, dst, fresh=True)
    x._s = st
    if node.readers:
        # Deferred arrays that computed ``x`` inside their kernel now read this
        # storage instead: they are evaluated before it is written.
        live = [r for r in node.readers if _alive(r)]
        if live:
            READERS.setdefault(id(st), []).extend(live)
    return st


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
    if type(dst._s) is Node:
        _materialise(dst)
    dst_st = dst._s
    reads = _reads_storage(node, dst_st)
    if reads and dst.dtype != node.dtype:
        return False  # the eager path materialises the value first
    # Deferred arrays reading the destination must see its old values.
    flush(dst_st, keep=value)
    _run.evaluate(node, dst, fresh=False, before_write=dst_st)
    dst_st.bump()
    if reads:
        # The value was computed into ``dst``: later reads of ``value`` see that
        # copy, which is evaluated (copied) before ``dst`` is written again.
        rank = node.ctx.rank
        loc = dst_st.view_of(dst._map, lay.block(rank)) if lay.owned_size(rank) else None
        value._s = Node(_COPY, (dst,), node.dtype, None, node.shape, node.ctx, node.layout, 1, (loc,))
        READERS.setdefault(id(dst_st), []).append(weakref.ref(value))
    return True


def _reads_storage(node: Node, st: Storage) -> bool:
    for a in node.args:
        if type(a) is _ND:
            s = a._s
            if s is st or (type(s) is Node and _reads_storage(s, st)):
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
    if type(node) is not Node or node.dtype.kind not in "biu" or settings.compiler == "numpy":
        return None
    return _run.local_sum(node, x.shape, res_dtype)


from spmdarray.fusion import run as _run  # noqa: E402 - evaluation needs the names above
