"""Deferred elementwise evaluation: chains of ufuncs fused into one kernel per rank.

An elementwise operation whose operands and ufunc the fuser handles does not
run: :func:`record` returns a *deferred* ``ndarray`` whose storage slot holds
a :class:`Node` (the ufunc and its operands) instead of a
:class:`~spmdarray._storage.Storage`.  Shapes, dtypes and NumPy's casting
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
on local blocks.  ``SPMDARRAY_FUSE=0`` turns deferral off entirely;
``SPMDARRAY_FUSE_COMPILER=numpy`` keeps deferral but evaluates with NumPy.

Halos are exchanged with nonblocking messages posted for every operand at
once; the interior of the block, which needs no ghost cell, is computed while
they travel, and the boundary strips after they arrived.
"""

from __future__ import annotations

import math
import os
import sys
import weakref

import numpy as np

from . import _engine
from ._backend import backend_of
from ._storage import Storage

__all__ = ["Node", "settings", "sync", "record", "is_deferred"]


class _Settings:
    """Fusion settings (the same on every rank).

    ``enabled``: defer elementwise operations (``SPMDARRAY_FUSE``, default on).
    ``compiler``: ``"numba"`` or ``"numpy"`` (``SPMDARRAY_FUSE_COMPILER``;
    ``"numba"`` falls back to ``"numpy"`` when numba cannot be imported).
    ``max_ops``: a deferred tree with more operations is evaluated at once.
    ``chunk_bytes``: size of the row chunks an aliased assignment is computed in.
    ``min_size``: operations with fewer elements run eagerly (their data
    sits in cache, so fusing saves little, and recording costs a few
    microseconds; ``SPMDARRAY_FUSE_MIN_SIZE``, default 16384).
    ``jit_min_size`` and ``jit_after``: a kernel is compiled for blocks of at
    least ``jit_min_size`` elements, or once the same program was evaluated
    ``jit_after`` times; before that NumPy evaluates it (compiling costs
    0.1 to 2 s per new kernel, see docs/fusion.md).
    """

    __slots__ = ("enabled", "compiler", "max_ops", "chunk_bytes", "jit_min_size", "jit_after", "min_size")

    def __init__(self) -> None:
        self.enabled = os.environ.get("SPMDARRAY_FUSE", "1").strip().lower() not in ("0", "off", "false", "no")
        self.compiler = os.environ.get("SPMDARRAY_FUSE_COMPILER", "numba").strip().lower()
        self.max_ops = 48
        self.chunk_bytes = 1 << 18
        self.jit_min_size = int(os.environ.get("SPMDARRAY_FUSE_JIT_MIN_SIZE", 1 << 14))
        self.jit_after = int(os.environ.get("SPMDARRAY_FUSE_JIT_AFTER", 3))
        self.min_size = int(os.environ.get("SPMDARRAY_FUSE_MIN_SIZE", 1 << 14))


settings = _Settings()

_ND = None  # the ndarray class, set by ``_array``
_RAND = "random"  # function of a random leaf (see :func:`random_leaf`)
_COPY = "copy"  # function of a node standing for a copy of a view

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
    dtype; ``loop`` the loop dtypes (inputs then output).
    """

    __slots__ = ("func", "args", "dtype", "loop", "shape", "ctx", "layout", "nops", "be")

    def __init__(self, func, args, dtype, loop, shape, ctx, layout, nops) -> None:
        self.func = func
        self.args = args
        self.dtype = dtype
        self.loop = loop
        self.shape = shape
        self.ctx = ctx
        self.layout = layout
        self.nops = nops
        self.be = None


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

    Collective when it evaluates (``out=`` given, or the tree is too large).
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
    if backend_of(ctx).is_device or _errors_raise():
        return NotImplemented
    o = None
    if out is not None:
        if len(out) != 1 or type(out[0]) is not _ND or out[0]._map.shape != shape or type(out[0]._s) is not Storage:
            return NotImplemented
        if out[0]._s.ctx is not ctx:
            return NotImplemented
        o = out[0]
    lp = _loop(func, kinds)
    if lp is _NOLOOP:
        return NotImplemented
    # NumPy's own checks (dtypes, casting, Python int overflow), raised here.
    dt = _engine._checked_dtypes(func, args, (o,), None, {}, 1)[0]
    if dt != lp[-1] or (o is not None and o.dtype != dt):
        return NotImplemented
    cargs = []
    for a, ldt in zip(args, lp):
        if type(a) is _ND:
            cargs.append(a)
        else:
            cargs.append(ldt.type(a))
    layout = _engine.choose_layout(ctx, args, shape)
    node = Node(func, tuple(cargs), dt, lp, shape, ctx, layout, nops)
    res = _deferred(node)
    if o is not None:
        if not assign(o, res):
            _engine.assign(o, _ND._new(storage(res), None))
        return o
    if nops > settings.max_ops:
        res._st  # noqa: B018 - evaluates
    return res


def _deferred(node: Node):
    from .decomposition import ViewMap

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
    as the eager generator.  None when fusion is off or the backend is a GPU.
    Not collective (no communication; a new context is collective once).
    """
    if not settings.enabled:
        return None
    from ._creation import context
    from .decomposition import Layout

    ctx = context(comm, None)
    if backend_of(ctx).is_device or math.prod(shape) < settings.min_size:
        return None
    layout = Layout.balanced(shape, ctx.size)
    node = Node(_RAND, (key,), np.dtype(np.float64), None, shape, ctx, layout, 1)
    return _deferred(node)


# ----------------------------------------------------------------- forcing
def storage(x) -> Storage:
    """``x``'s storage, evaluating ``x`` (or arrays reading it) first.  Collective if it evaluates."""
    s = x._s
    if type(s) is Node:
        return _materialise(x)
    if _quiet == 0 and id(s) in READERS:
        flush(s)
    return s


def flush(st: Storage, keep=None) -> None:
    """Evaluate every deferred array that reads ``st`` (except ``keep``).  Collective."""
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
    """Evaluate every deferred array now.  Collective."""
    refs = list(_PENDING)
    _PENDING.clear()
    for r in refs:
        y = r()
        if y is not None and type(y._s) is Node:
            _materialise(y)


def _materialise(x) -> Storage:
    node = x._s
    st = Storage(node.ctx, node.layout, node.dtype)
    dst = _ND._new(st, None)
    _evaluate(node, dst, fresh=True)
    x._s = st
    x._lay = None
    return st


# ------------------------------------------------------------------ assign
def assign(dst, value) -> bool:
    """``dst[...] = value`` for a deferred ``value``, fused.  Collective.

    Returns False (having done nothing) when the case is left to the eager
    engine: other shapes, or a cast numba could round differently.
    """
    node = value._s
    if dst._map.shape != node.shape or dst._s.ctx is not node.ctx or type(dst._s) is not Storage:
        return False
    if dst.dtype != node.dtype and not (
        np.can_cast(node.dtype, dst.dtype, "safe") and dst.dtype.kind in "iuf" and dst.dtype.itemsize > 2
    ):
        return False
    dst_st = dst._s
    reads = _reads_storage(node, dst_st)
    if reads and dst.dtype != node.dtype:
        return False  # the eager path materialises the value first
    # Deferred arrays reading the destination must see its old values.
    flush(dst_st, keep=value)
    _evaluate(node, dst, fresh=False)
    dst_st.bump()
    if reads:
        # The value was computed into ``dst``: later reads of ``value`` see that
        # copy, which is evaluated (copied) before ``dst`` is written again.
        value._s = Node(_COPY, (dst,), node.dtype, None, node.shape, node.ctx, node.layout, 1)
        READERS.setdefault(id(dst_st), []).append(weakref.ref(value))
    return True


def _reads_storage(node: Node, st: Storage) -> bool:
    for a in node.args:
        if type(a) is _ND:
            s = a._s
            if s is st or (type(s) is Node and _reads_storage(s, st)):
                return True
    return False


# -------------------------------------------------------------- evaluation
class _Program:
    """A flattened tree: leaves and steps, in the order eager NumPy runs them."""

    __slots__ = ("leaves", "steps", "index", "key")

    def __init__(self) -> None:
        self.leaves: list = []  # ("a", ndarray) | ("s", scalar) | ("r", key)
        self.steps: list = []  # (func, loop dtypes, operand refs)
        self.index: dict = {}
        self.key: list = []


def _flatten(node: Node, shape, prog: _Program):
    """Reference (``("l", i)`` leaf or ``("t", j)`` step) of ``node``'s value."""
    if node.func is _RAND:
        if node.shape != shape:
            return None
        return _leaf(prog, ("r", node.args[0]), ("r", node.args[0]))
    if node.func is _COPY:
        return _operand(node.args[0], shape, prog)
    refs = []
    for a in node.args:
        if type(a) is _ND:
            r = _operand(a, shape, prog)
            if r is None:
                return None
        else:
            r = _leaf(prog, None, ("s", a))
        refs.append(r)
    prog.steps.append((node.func, node.loop, tuple(refs)))
    return ("t", len(prog.steps) - 1)


def _operand(a, shape, prog):
    s = a._s
    if type(s) is Node:
        r = _flatten(s, shape, prog)
        if r is None:
            _materialise(a)
            return _operand(a, shape, prog)
        return r
    return _leaf(prog, (id(s), a._map), ("a", a))


def _leaf(prog, key, leaf):
    if key is not None:
        i = prog.index.get(key)
        if i is not None:
            return ("l", i)
        prog.index[key] = len(prog.leaves)
    prog.leaves.append(leaf)
    return ("l", len(prog.leaves) - 1)


def _evaluate(node: Node, dst, fresh: bool) -> None:
    """Compute ``node`` into the view ``dst`` (same shape).  Collective."""
    global _quiet
    prog = _Program()
    root = _flatten(node, node.shape, prog)
    if root is None:  # the root itself is a random leaf of another shape (never)
        raise AssertionError("random leaf of another shape")
    _quiet += 1
    try:
        _run(prog, root, node, dst, fresh)
    finally:
        _quiet -= 1


def _run(prog: _Program, root, node: Node, dst, fresh: bool) -> None:
    ctx = node.ctx
    rank = ctx.rank
    layout = dst._layout
    arrays = [i for i, lf in enumerate(prog.leaves) if lf[0] == "a"]
    items = [prog.leaves[i][1] for i in arrays]
    locs, fetches, exchange = _engine.fetch_start(ctx, items, layout)
    block = layout.block(rank)
    bshape = tuple(hi - lo for lo, hi in block)
    if not layout.owned_size(rank):
        _engine.fetch_finish(fetches, exchange)
        return
    d = dst._s.view_of(dst._map, block)
    vals: list = [None] * len(prog.leaves)
    for i, lf in enumerate(prog.leaves):
        if lf[0] == "s":
            vals[i] = lf[1]
        elif lf[0] == "r":
            vals[i] = lf
    for i, loc in zip(arrays, locs):
        vals[i] = np.broadcast_to(loc, bshape) if loc.shape != bshape else loc
    kern = _kernels() if settings.compiler == "numba" and _worth_compiling(prog, bshape) else None
    overlap = (not fresh) and any(_hazard(d, vals[i]) for i in arrays)
    gshape = dst.shape
    origin = tuple(lo for lo, _ in block)
    if exchange is not None:
        inner = _interior(fetches, gshape, bshape)
        if inner is not None and overlap:
            hazards = [vals[i] for i in arrays if _hazard(d, vals[i])]
            if kern is not None and _overlap_aliased(
                kern, prog, root, vals, d, hazards, inner, gshape, origin, fetches, exchange
            ):
                return
        elif inner is not None:
            sub = tuple(slice(a, b) for a, b in inner)
            _compute(kern, prog, root, vals, d, sub, gshape, origin)
            _engine.fetch_finish(fetches, exchange)
            for sub in _strips(inner, bshape):
                _compute(kern, prog, root, vals, d, sub, gshape, origin)
            return
        _engine.fetch_finish(fetches, exchange)
    full = tuple(slice(0, n) for n in bshape)
    if overlap:
        lag = _lag(d, [vals[i] for i in arrays if _hazard(d, vals[i])]) if kern is not None else None
        if lag is not None:
            kern.run_lag(prog, root, vals, d, full, gshape, origin, lag)
        else:
            _compute_aliased(kern, prog, root, vals, d, arrays, gshape, origin)
    else:
        _compute(kern, prog, root, vals, d, full, gshape, origin)


def _overlap_aliased(kern, prog, root, vals, d, hazards, inner, gshape, origin, fetches, exchange) -> bool:
    """An in-place stencil with its halos in flight (2-D blocks, halos along rows only).

    The ``h`` interior rows next to each boundary strip (``h``: how far the
    operands reach) are computed first into buffers, the rest of the interior
    in place through the row ring; after the wait the strips are computed
    into buffers too, reading old values, and every buffer is written back.
    Returns False (having done nothing) when the case does not apply.
    """
    lag = _lag(d, hazards)
    if lag is None or d.ndim != 2 or inner[1] != (0, d.shape[1]):
        return False
    item, s0 = d.itemsize, d.strides[0] // d.itemsize
    width = (d.shape[1] - 1) * abs(d.strides[1]) // item
    base = d.__array_interface__["data"][0]
    h = max(-(-(abs(v.__array_interface__["data"][0] - base) // item + width) // s0) for v in hazards)
    a, b = inner[0]
    if b - a <= 2 * h:
        return False
    cols = slice(0, d.shape[1])
    held = []

    def hold(lo: int, hi: int) -> None:
        if hi > lo:
            tmp = np.empty((hi - lo, d.shape[1]), d.dtype)
            _compute_into(kern, prog, root, vals, tmp, (slice(lo, hi), cols), gshape, origin)
            held.append((lo, hi, tmp))

    hold(a, a + h)
    hold(b - h, b)
    kern.run_lag(prog, root, vals, d, (slice(a + h, b - h), cols), gshape, origin, lag)
    _engine.fetch_finish(fetches, exchange)
    hold(0, a)
    hold(b, d.shape[0])
    for lo, hi, tmp in held:
        d[lo:hi] = tmp
    return True


_SEEN: dict = {}


def _worth_compiling(prog: _Program, bshape) -> bool:
    """Compile for large blocks, or for programs evaluated often."""
    if math.prod(bshape) >= settings.jit_min_size:
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
    return n > settings.jit_after


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
        st, vm = f.x._s, f.x._map
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
        d[sub] = _interpret(prog, root, vals, sub, gshape, origin, d.dtype)


def _compute_aliased(kern, prog, root, vals, d, arrays, gshape, origin) -> None:
    """Compute into ``d`` while some operands read ``d``'s memory: Jacobi semantics.

    Rows (chunks along the first axis) are computed into scratch buffers and
    written back as soon as no chunk still to be computed reads their memory,
    so a stencil holds about two chunks of scratch, a reversed view the whole
    block.
    """
    from numpy.lib.array_utils import byte_bounds

    n0 = d.shape[0] if d.ndim else 1
    if d.ndim == 0:
        tmp = np.empty((), d.dtype)
        _compute(kern, prog, root, vals, tmp, (), gshape, origin)
        d[...] = tmp
        return
    row = max(1, d[0].nbytes if d.ndim > 1 else d.itemsize)
    step = max(1, settings.chunk_bytes // row)
    hazards = [vals[i] for i in arrays if _hazard(d, vals[i])]
    pending: list = []
    rest = tuple(slice(0, n) for n in d.shape[1:])
    for lo in range(0, n0, step):
        hi = min(n0, lo + step)
        tmp = np.empty((hi - lo, *d.shape[1:]), d.dtype)
        _compute_into(kern, prog, root, vals, tmp, (slice(lo, hi), *rest), gshape, origin)
        pending.append((lo, hi, tmp))
        # Memory still to be read by the chunks after this one.
        reads = [byte_bounds(v[hi:]) for v in hazards if hi < n0 and v[hi:].size]
        while pending:
            plo, phi, ptmp = pending[0]
            wl, wh = byte_bounds(d[plo:phi])
            if any(rl < wh and wl < rh for rl, rh in reads):
                break
            d[plo:phi] = ptmp
            pending.pop(0)
    for plo, phi, ptmp in pending:
        d[plo:phi] = ptmp


def _compute_into(kern, prog, root, vals, tmp, sub, gshape, origin) -> None:
    """Evaluate over ``sub`` of the block into the separate buffer ``tmp``."""
    if any(s.stop <= s.start for s in sub):
        return
    if kern is not None:
        kern.run(prog, root, vals, tmp, sub, gshape, origin, out_is_sub=True)
    else:
        tmp[...] = _interpret(prog, root, vals, sub, gshape, origin, tmp.dtype)


def _interpret(prog, root, vals, sub, gshape, origin, out_dtype):
    """The program run one NumPy call at a time on local blocks (the eager results)."""
    from .random import _uniform_box

    sv = []
    for v in vals:
        if isinstance(v, tuple):  # random leaf
            sv.append(_uniform_box(v[1], _sub_box(sub, origin), gshape))
        elif isinstance(v, np.ndarray):
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
    return np.asarray(res).astype(out_dtype, copy=False)


def _sub_box(sub, origin):
    return tuple((o + s.start, o + s.stop) for s, o in zip(sub, origin))


_KERNELS = None


def _kernels():
    """The numba kernel module, or None (fallback to NumPy) when it cannot load."""
    global _KERNELS
    if _KERNELS is None:
        try:
            from . import _kernels as k

            k.check()
            _KERNELS = k
        except Exception:  # noqa: BLE001 - numba missing or broken: NumPy evaluates
            _KERNELS = False
    return _KERNELS or None


# --------------------------------------------------------------- reductions
def try_sum(name, x, axes, dtype, out, keepdims, initial):
    """A full ``sum`` of a deferred bool or integer array without materialising it.

    Integer sums wrap modulo 2**64 in any order, so the fused per-rank sum
    plus an all-reduce equals NumPy's bit for bit.  Returns None for every
    other case (evaluated eagerly).  Collective.
    """
    node = x._s
    if (
        name != "sum"
        or out is not None
        or keepdims
        or dtype is not None
        or initial is not np._NoValue
        or len(axes) != len(node.shape)
        or node.dtype.kind not in "biu"
        or settings.compiler != "numba"
        or _kernels() is None
    ):
        return None
    res_dtype = np.sum(np.zeros(1, node.dtype)).dtype
    global _quiet
    prog = _Program()
    root = _flatten(node, node.shape, prog)
    layout = node.layout
    ctx = node.ctx
    rank = ctx.rank
    _quiet += 1
    try:
        arrays = [i for i, lf in enumerate(prog.leaves) if lf[0] == "a"]
        items = [prog.leaves[i][1] for i in arrays]
        locs, fetches, exchange = _engine.fetch_start(ctx, items, layout)
        _engine.fetch_finish(fetches, exchange)
        total = np.zeros((), res_dtype)
        if layout.owned_size(rank):
            block = layout.block(rank)
            bshape = tuple(hi - lo for lo, hi in block)
            vals: list = [None] * len(prog.leaves)
            for i, lf in enumerate(prog.leaves):
                vals[i] = lf[1] if lf[0] == "s" else lf
            for i, loc in zip(arrays, locs):
                vals[i] = np.broadcast_to(loc, bshape) if loc.shape != bshape else loc
            full = tuple(slice(0, n) for n in bshape)
            total = _kernels().run_sum(prog, root, vals, full, x.shape, tuple(lo for lo, _ in block), res_dtype)
    finally:
        _quiet -= 1
    if ctx.size > 1:
        from .comm import allgather_object

        parts = allgather_object(ctx, res_dtype.type(total).item())
        total = np.array(parts, dtype=res_dtype).sum(dtype=res_dtype)
    return res_dtype.type(total)
