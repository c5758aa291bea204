"""Python operators, generated from one table, with temporary elision.

Each operator calls the elementwise engine (``registry.ops.elementwise``).  When an operand is a
*temporary* (the unnamed result of a previous operation: ``(a + b) * 0.2``)
of the result's dtype and layout and of at least :data:`MIN_ELIDE_BYTES`,
its allocation is reused for the result, as NumPy does.

A temporary is recognised by its reference count, and only where that count
can tell: the operator method must have been called by the binary-operator
instruction of the frame above (``a + b``, not ``a.__add__(b)`` or
``operator.add``, whose paths hold other numbers of references), and
calibration at import must show a named operand one reference above a
temporary on that exact path.  Python 3.14 and later borrow the stack
reference of a named local (``LOAD_FAST_BORROW``), so there the two counts are
equal: elision is off there, as on any interpreter other than CPython.  Every
doubt means a copy, never an overwritten named array.
"""

from __future__ import annotations

import dis
import math
import sys

import numpy as np

from spmdarray.core.refs import ATTRIBUTE, LOCAL
from spmdarray.core.registry import ops
from spmdarray.core.thunk import READERS
from spmdarray.core.whole import LANE, NUMPY_SCALARS, SLOW, local, operand, reread, wrap, writable, written
from spmdarray.settings import config

__all__ = ["OperatorsMixin"]

_BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "truediv": np.true_divide,
    "floordiv": np.floor_divide,
    "mod": np.remainder,
    "pow": np.power,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "lshift": np.left_shift,
    "rshift": np.right_shift,
}
_COMPARE = {
    "lt": np.less,
    "le": np.less_equal,
    "eq": np.equal,
    "ne": np.not_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}
_UNARY = {"neg": np.negative, "pos": np.positive, "abs": np.absolute, "invert": np.invert}

#: The binary-operator instructions: ``BINARY_OP`` (3.11+), ``BINARY_ADD`` ... (3.10).
_INSTRUCTIONS = ["BINARY_OP"] + [
    f"BINARY_{n}"
    for n in "ADD SUBTRACT MULTIPLY TRUE_DIVIDE FLOOR_DIVIDE MODULO POWER AND OR XOR LSHIFT RSHIFT".split()
]
_BINARY_OPCODES = frozenset(dis.opmap[n] for n in _INSTRUCTIONS if n in dis.opmap)

#: Largest reference count of a temporary operand inside ``_apply``, per path ("l", "r");
#: empty (elision off) unless :func:`calibrate` proved that the count tells.
_TEMP_COUNT: dict[str, int] = {}
_calibrating: dict | None = None

#: Smallest temporary (global bytes) whose allocation is reused, NumPy's own threshold
#: (``NPY_MIN_ELIDE_BYTES``): below it the checks cost more than the allocation they save
#: (about a sixth of a loop over rows of a split array).  Decided on global sizes, so
#: alike on every rank.
MIN_ELIDE_BYTES = 256 * 1024


def _called_by_operator() -> bool:
    """Whether the operator method calling ``_apply`` runs for a binary-operator instruction.

    Frames: this function, ``_apply``, the operator method, its caller.
    """
    f = sys._getframe(3)
    code, i = f.f_code.co_code, f.f_lasti
    return 0 <= i < len(code) and code[i] in _BINARY_OPCODES


def _apply(ufunc, a, b, path: str):
    """Run ``ufunc(a, b)``, reusing ``a``'s storage if it is an eligible temporary."""
    # Count references before anything here (such as an argument tuple) adds one.
    count = sys.getrefcount(a)
    if _calibrating is not None:
        _calibrating[path] = (count, _called_by_operator())
        return None
    out = None
    limit = _TEMP_COUNT.get(path)
    temp = (
        limit is not None
        and count <= limit
        and math.prod(a._map.shape) * a._s.dtype.itemsize >= MIN_ELIDE_BYTES
        and _called_by_operator()
        and _reusable(a)
    )
    args = (a, b) if path == "l" else (b, a)
    if temp:
        out = _maybe_reuse(ufunc, a, b, args)
    return ops.elementwise(ufunc, args, out=out)


def _elide(ufunc, a, v, o, path: str):
    """``ufunc(a, o)`` (``ufunc(o, a)`` on the reflected path "r") written into ``v``, the lane's
    copy of ``a``, and ``a`` returned; None (nothing done) where ``a`` is not a temporary that
    nothing else holds, or the result would not have ``a``'s dtype and shape.  Not collective.

    NumPy's own temporary elision on the whole-array lane: in ``Z[I] ** 2 +
    C[I]`` the square's result takes the sum (arrays of at least
    :data:`MIN_ELIDE_BYTES`, whose new allocation costs page faults).  The
    caller is ``op`` or ``rop`` of :func:`_binary`, with ``a`` its ``self`` and
    ``v`` its local copy, so that the counts below are those ``_apply`` sees.
    """
    # Count references before anything here adds one (as ``_apply``, calibrated alike).
    count = sys.getrefcount(a)
    limit = _TEMP_COUNT.get(path)
    if limit is None or count > limit or ufunc.nout != 1 or a._pend is not None or not _called_by_operator():
        return None
    if sys.getrefcount(a._s) - ATTRIBUTE > 1:
        return None  # another array (a view) shares the storage (the caller's local ``s`` holds it too)
    s = a._s
    if s.deferred or s.flights or (READERS and id(s) in READERS) or v is not s.alloc or v.base is not None:
        return None
    cached = 0
    for w in s._views.values():
        if w is v:
            cached += 1
        elif w.base is v:
            if sys.getrefcount(w) - LOCAL > 1:
                return None  # a holder of a NumPy view besides the cache
            cached += 1
    w = None  # (the loop variable must not count as a holder)
    # Holders of the allocation besides this frame's ``v``: ``s.alloc``, the two entries of
    # ``a._loc``, the cached views and the caller's ``v``.  Any other holds a NumPy view of it.
    if sys.getrefcount(v) - LOCAL > 4 + cached:
        return None
    odt = o.dtype if isinstance(o, (np.ndarray, np.generic)) else type(o)
    try:
        dts = ufunc.resolve_dtypes((v.dtype, odt, None) if path == "l" else (odt, v.dtype, None))
    except Exception:  # noqa: BLE001 - NumPy raises it in the call that follows
        return None
    if dts[-1] != v.dtype or (type(o) is np.ndarray and np.broadcast_shapes(o.shape, v.shape) != v.shape):
        return None
    if path == "l":
        ufunc(v, o, v)
    else:
        ufunc(o, v, v)
    s.version += 1
    return a


def _reusable(a) -> bool:
    # Only a base array whose storage no other view shares (``a`` + this call),
    # that owns its memory (not a user's block wrapped by ``from_local``), and
    # whose memory no NumPy view outside the storage's cache holds (a kept
    # ``t.local``): as NumPy, which never elides an array something views.
    # (Counts relative to the measured baselines of core.refs: holders only.)
    if not (type(a)._elidable(a) and sys.getrefcount(a._st) - ATTRIBUTE <= 0):
        return False
    st = a._st
    if st.alloc.base is not None:
        return False
    alloc = st.alloc
    cached = 0
    for v in st._views.values():
        if v is alloc:  # the owned block of an allocation without ghost frame
            cached += 1
        elif v.base is alloc:
            if sys.getrefcount(v) - LOCAL > 1:  # a holder besides the cache
                return False
            cached += 1
    v = None  # the loop variable must not count as a holder of ``alloc``
    # holders besides the local ``alloc``: ``st.alloc`` and the cached views
    return sys.getrefcount(alloc) - LOCAL <= 1 + cached


#: (ufunc, order, a's layout, view map and dtype, b's key) -> whether ``a`` can take the result
_REUSE: dict = {}


def _reuse_key(ufunc, a, b, args) -> tuple | None:
    """The :data:`_REUSE` key of :func:`_maybe_reuse`'s decision, or None (not cached):
    global metadata only, as the decision."""
    s = a._s
    t = type(b)
    if t is type(a):
        if b._s is s:
            return None
        bs = b._s
        bk = (bs.layout, b._map, bs.dtype)
    elif t is float or t is complex or t is bool:
        bk = t
    elif t is int:  # what decides NumPy's overflow errors (as the fast path's key)
        bk = (int, b.bit_length() if b >= 0 else -1 - (~b).bit_length())
    elif isinstance(b, np.generic):
        bk = (t, b.dtype)
    else:
        return None
    return (ufunc, args[0] is a, s.layout, a._map, s.dtype, bk)


def _maybe_reuse(ufunc, a, b, args):
    """``(a,)`` when ``ufunc(a, b)`` can be written into ``a``, else None.

    The decision is cached per :func:`_reuse_key` where it does not depend on
    the layout the engine would choose (that may depend on settings).
    """
    key = _reuse_key(ufunc, a, b, args)
    hit = _REUSE.get(key) if key is not None else None
    if hit is not None:
        return (a,) if hit else None
    res, settled = _decide_reuse(ufunc, a, b, args)
    if key is not None and settled:
        if len(_REUSE) >= 4096:
            _REUSE.clear()
        _REUSE[key] = res is not None
    return res


def _decide_reuse(ufunc, a, b, args):
    """:func:`_maybe_reuse`'s decision, and whether it rests on global metadata only."""
    # Reuse only where ``a``'s layout is the one the engine would choose anyway:
    # the decision rests on per-rank reference counts (a ``.local`` kept on some
    # ranks only), so it must never change the result's layout.
    if a.ndim == 0 or any(f is not None for f in a._layout.gfixed):
        return None, True
    if isinstance(b, OperatorsMixin):
        if b.shape != a.shape or b._s is a._s:
            return None, b._s is not a._s
        if b._layout != a._layout:
            return (
                None if ops.choose_layout(a._s.ctx, args, a.shape) != a._layout else _same_dtype(ufunc, a, args)
            ), False
    elif isinstance(b, (np.ndarray, np.generic)):
        if np.ndim(b) > a.ndim or (np.ndim(b) and np.broadcast_shapes(np.shape(b), a.shape) != a.shape):
            return None, True
    elif not isinstance(b, (int, float, complex, bool)):
        return None, True
    return _same_dtype(ufunc, a, args), True


def _same_dtype(ufunc, a, args):
    # The engine's dtype check for these operands (cached, so done once).
    dtypes = ops.result_dtypes(ufunc, args)
    return (a,) if dtypes is not None and dtypes[0] == a.dtype else None


def _scalar_power(x, e):
    """The unary ufunc NumPy's ``x ** e`` calls instead of ``power`` (its ``fast_scalar_power``), or None.

    ``x ** 2`` is ``square(x)`` for every non-object dtype; ``x ** 0.5`` is
    ``sqrt(x)`` and ``x ** -1`` is ``reciprocal(x)`` for inexact dtypes.  Only
    a Python ``int`` or ``float`` exponent of exactly these values (not a bool
    or a NumPy scalar) takes them.  The result is then NumPy's bit for bit, and
    a fused expression keeps ``** 2`` in its kernel (``power`` is not fused).
    """
    t = type(e)
    kind = x.dtype.kind
    if t is int:
        if e == 2 and kind != "O":
            return np.square
        if e == -1 and kind in "fc":
            return np.reciprocal
    elif t is float and e == 0.5 and kind in "fc":
        return np.sqrt
    return None


def _binary(name: str, ufunc):
    power = name == "pow"  # (decided once: the other operators pay one flag test)

    def op(self, other):
        if power and (u := _scalar_power(self, other)) is not None:
            return _POWER_OPS[u](self)
        c = self._loc
        # (``local``, inline for a replicated array: on the lane whatever its size; no local
        # holds the storage on the way to ``_apply``, whose temporary reuse counts its references)
        v = c[1] if c is not None and c[0] == id(self._s) and c[2] and config.whole_lane else local(self)
        if v is None and self._loc[2] is None:
            v = reread(self)  # (a split array: a current copy may hold it whole)
        if v is not None:
            s = self._s
            t = type(other)
            if t is type(self):
                d = other._loc  # (``operand``, inline for a replicated array on the lane)
                if d is not None and d[0] == id(other._s) and d[2] and d[1] is not None and other._s.ctx is s.ctx:
                    o = d[1]  # every rank holds both whole: NumPy's own operation
                else:
                    o = operand(other, s.ctx)
            elif t is float or t is int or t in NUMPY_SCALARS:
                o = other
            else:
                o = operand(other, s.ctx)
            if o is not SLOW:
                if v.nbytes >= MIN_ELIDE_BYTES and (r := _elide(ufunc, self, v, o, "l")) is not None:
                    return r  # a temporary's allocation reused, as NumPy's own elision
                return wrap(s.ctx, s.be, ufunc(v, o))
        if not _known(other) or (name in ("eq", "ne") and isinstance(other, (str, bytes))):
            return NotImplemented
        return _apply(ufunc, self, other, "l")

    def rop(self, other):
        c = self._loc
        v = c[1] if c is not None and c[0] == id(self._s) and c[2] and config.whole_lane else local(self)
        if v is None and self._loc[2] is None:
            v = reread(self)  # (as ``op``)
        if v is not None:  # (as ``op``)
            s = self._s
            t = type(other)
            o = other if t is float or t is int or t in NUMPY_SCALARS else operand(other, s.ctx)
            if o is not SLOW:
                if v.nbytes >= MIN_ELIDE_BYTES and (r := _elide(ufunc, self, v, o, "r")) is not None:
                    return r  # (as ``op``)
                return wrap(s.ctx, s.be, ufunc(o, v))
        if not _known(other):
            return NotImplemented
        return _apply(ufunc, self, other, "r")

    def iop(self, other):
        if power and (u := _scalar_power(self, other)) is not None:
            v = writable(self)
            if v is not None:
                u(v, out=v)
                written(self)
            else:
                ops.elementwise(u, (self,), out=(self,))
            return self
        v = writable(self)
        if v is not None:
            d = other._loc if type(other) is type(self) else None  # (``operand``, inline for a replicated array)
            if d is not None and d[0] == id(other._s) and d[2] and d[1] is not None and other._s.ctx is self._s.ctx:
                o = d[1]
            else:
                o = operand(other, self._s.ctx)
            if o is not SLOW:
                ufunc(v, o, v)  # (``out=v``: positional, as NumPy's operators pass it, cheaper)
                written(self)
                return self
        if not _known(other):
            return NotImplemented
        ops.elementwise(ufunc, (self, other), out=(self,))
        return self

    for f, n in ((op, f"__{name}__"), (rop, f"__r{name}__"), (iop, f"__i{name}__")):
        f.__name__ = f.__qualname__ = n
        f.__doc__ = f"``numpy.{ufunc.__name__}`` elementwise.  Collective."
    return op, rop, iop


def _wrap(x, res):
    s = x._s
    return wrap(s.ctx, s.be, res)


def _known(x) -> bool:
    # str and bytes too: NumPy then raises its own error (``_UFuncNoLoopError`` for ``x + "abc"``).
    return isinstance(x, (OperatorsMixin, int, float, complex, bool, str, bytes, np.ndarray, np.generic, list))


def _unary(name: str, ufunc):
    def op(self):
        v = local(self)
        if v is not None:
            return _wrap(self, ufunc(v))
        return ops.elementwise(ufunc, (self,))

    op.__name__ = op.__qualname__ = f"__{name}__"
    op.__doc__ = f"``numpy.{ufunc.__name__}`` elementwise.  Collective."
    return op


#: ``x ** e`` as NumPy computes it for the exponents of :func:`_scalar_power`.
_POWER_OPS = {u: _unary(u.__name__, u) for u in (np.square, np.sqrt, np.reciprocal)}


class OperatorsMixin:
    """Every Python operator, routed to the elementwise engine."""

    __slots__ = ()

    @staticmethod
    def _elidable(a) -> bool:
        return False

    def __matmul__(self, other):
        v = local(self)
        if v is None and self._loc[2] is None:
            v = reread(self)  # (as ``op``: ``L[i, :i] @ x[:i]`` along a row sweep served from its copies)
        if v is not None and (o := operand(other, self._s.ctx)) is not SLOW and type(o) is np.ndarray:
            return _wrap(self, np.matmul(v, o))
        return ops.matmul(self, other)

    def __rmatmul__(self, other):
        v = local(self)
        if v is None and self._loc[2] is None:
            v = reread(self)  # (as ``__matmul__``)
        if v is not None and (o := operand(other, self._s.ctx)) is not SLOW and type(o) is np.ndarray:
            return _wrap(self, np.matmul(o, v))
        return ops.matmul(other, self)

    def __imatmul__(self, other):
        return ops.matmul(self, other, out=self)

    def __divmod__(self, other):
        return ops.elementwise(np.divmod, (self, other), nout=2)

    def __rdivmod__(self, other):
        return ops.elementwise(np.divmod, (other, self), nout=2)


def _compiled(name: str, func, ufunc, side: str):
    """The operator ``name`` as set on the class: where the compiled lane is built, a method
    that tries its case first with no Python frame, then ``func`` (``__wrapped__``).  ``side``:
    "l" for ``x op y``, "r" for the reflected ``y op x``, "i" for ``x op= y`` (given, not read
    from the name: ``__rshift__`` is not a reflected ``shift``)."""
    return func if LANE is None else LANE.method(name, func, ufunc, side)


for _n, _u in _BINARY.items():
    for _side, _name, _f in zip("lri", (f"__{_n}__", f"__r{_n}__", f"__i{_n}__"), _binary(_n, _u)):
        setattr(OperatorsMixin, _name, _compiled(_name, _f, _u, _side))
for _n, _u in _COMPARE.items():
    setattr(OperatorsMixin, f"__{_n}__", _compiled(f"__{_n}__", _binary(_n, _u)[0], _u, "l"))
OperatorsMixin.__matmul__ = _compiled("__matmul__", OperatorsMixin.__matmul__, np.matmul, "l")
for _n, _u in _UNARY.items():
    setattr(OperatorsMixin, f"__{_n}__", _unary(_n, _u))


def elision_decision(temporary: dict, named: dict, version: tuple = sys.version_info, impl: str = "") -> dict:
    """The per-path count limits that :func:`calibrate`'s measurements allow; ``{}`` turns elision off.

    ``temporary`` and ``named`` map each path ("l", "r") to ``(count,
    called_by_operator)`` as ``_apply`` saw them for ``temp() + 1`` and for a
    named local ``x + 1`` (and the reflected forms).  Elision needs CPython
    before 3.14, the operator instruction seen on both, and a named operand
    counted above a temporary on both paths.
    """
    impl = impl or sys.implementation.name
    if impl != "cpython" or tuple(version[:2]) >= (3, 14):
        return {}
    if set(temporary) != {"l", "r"} or set(named) != {"l", "r"}:
        return {}
    for p in ("l", "r"):
        (t, t_op), (n, n_op) = temporary[p], named[p]
        if not (t_op and n_op and n > t):
            return {}
    return {p: temporary[p][0] for p in ("l", "r")}


def calibrate(cls) -> None:
    """Measure the reference counts of a temporary and of a named operand on the left and reflected paths."""
    global _calibrating

    def temp():
        x = object.__new__(cls)
        x._s = None
        x._loc = (None, None)  # off the whole-array lane (spmdarray.core.whole)
        return x

    seen = {}
    try:
        _calibrating = {}
        temp() + 1
        1 + temp()
        seen["temporary"] = _calibrating
        _calibrating = {}
        x = temp()
        x + 1
        1 + x
        seen["named"] = _calibrating
    finally:
        _calibrating = None
    _TEMP_COUNT.clear()
    _TEMP_COUNT.update(elision_decision(seen.get("temporary", {}), seen.get("named", {})))
