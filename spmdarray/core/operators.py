"""Python operators, generated from one table, with temporary elision.

Each operator calls the elementwise engine (``registry.ops.elementwise``).  When an operand is a
*temporary* (the unnamed result of a previous operation: ``(a + b) * 0.2``)
of the result's dtype and layout, its allocation is reused for the result,
as NumPy does.  A temporary is recognised by its reference count, calibrated
once at import against this exact call path, so a named array is never
overwritten; if calibration is inconclusive, elision is simply off.
"""

from __future__ import annotations

import sys

import numpy as np

from spmdarray.core.registry import ops

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

# Reference counts a temporary operand shows inside ``_apply``, per path.
_TEMP_COUNT: dict[str, int] = {}
_calibrating = False


def _apply(ufunc, a, b, path: str):
    """Run ``ufunc(a, b)``, reusing ``a``'s storage if it is an eligible temporary."""
    if _calibrating:
        _TEMP_COUNT[path] = sys.getrefcount(a)
        return None
    out = None
    limit = _TEMP_COUNT.get(path)
    # Count references before anything here (such as an argument tuple) adds one.
    temp = limit is not None and sys.getrefcount(a) <= limit and _reusable(a)
    args = (a, b) if path == "l" else (b, a)
    if temp:
        out = _maybe_reuse(ufunc, a, b, args)
    return ops.elementwise(ufunc, args, out=out)


def _reusable(a) -> bool:
    # Only a base array whose storage no other view shares (``a`` + this call),
    # that owns its memory (not a user's block wrapped by ``from_local``), and
    # whose memory no NumPy view outside the storage's cache holds (a kept
    # ``t.local``): as NumPy, which never elides an array something views.
    if not (type(a)._elidable(a) and sys.getrefcount(a._st) <= 2):
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
            if sys.getrefcount(v) > 3:  # the cache, ``v`` and the argument
                return False
            cached += 1
    v = None  # the loop variable must not count as a holder of ``alloc``
    # holders: ``st.alloc``, the local ``alloc``, the argument, the cached views
    return sys.getrefcount(alloc) <= 3 + cached


def _maybe_reuse(ufunc, a, b, args):
    """``(a,)`` when ``ufunc(a, b)`` can be written into ``a``, else None."""
    # Reuse only where ``a``'s layout is the one the engine would choose anyway:
    # the decision rests on per-rank reference counts (a ``.local`` kept on some
    # ranks only), so it must never change the result's layout.
    if a.ndim == 0 or any(f is not None for f in a._layout.gfixed):
        return None
    if isinstance(b, OperatorsMixin):
        if b.shape != a.shape or b._s is a._s:
            return None
        if b._layout != a._layout and ops.choose_layout(a._s.ctx, args, a.shape) != a._layout:
            return None  # the operation is computed on another layout (the cheaper one)
    elif isinstance(b, (np.ndarray, np.generic)):
        if np.ndim(b) > a.ndim or (np.ndim(b) and np.broadcast_shapes(np.shape(b), a.shape) != a.shape):
            return None
    elif not isinstance(b, (int, float, complex, bool)):
        return None
    # The engine's dtype check for these operands (cached, so done once).
    dtypes = ops.result_dtypes(ufunc, args)
    return (a,) if dtypes is not None and dtypes[0] == a.dtype else None


def _binary(name: str, ufunc):
    def op(self, other):
        if not _known(other) or (name in ("eq", "ne") and isinstance(other, (str, bytes))):
            return NotImplemented
        return _apply(ufunc, self, other, "l")

    def rop(self, other):
        if not _known(other):
            return NotImplemented
        return _apply(ufunc, self, other, "r")

    def iop(self, other):
        if not _known(other):
            return NotImplemented
        ops.elementwise(ufunc, (self, other), out=(self,))
        return self

    for f, n in ((op, f"__{name}__"), (rop, f"__r{name}__"), (iop, f"__i{name}__")):
        f.__name__ = f.__qualname__ = n
        f.__doc__ = f"``numpy.{ufunc.__name__}`` elementwise.  Collective."
    return op, rop, iop


def _known(x) -> bool:
    # str and bytes too: NumPy then raises its own error (``_UFuncNoLoopError`` for ``x + "abc"``).
    return isinstance(x, (OperatorsMixin, int, float, complex, bool, str, bytes, np.ndarray, np.generic, list))


def _unary(name: str, ufunc):
    def op(self):
        return ops.elementwise(ufunc, (self,))

    op.__name__ = op.__qualname__ = f"__{name}__"
    op.__doc__ = f"``numpy.{ufunc.__name__}`` elementwise.  Collective."
    return op


class OperatorsMixin:
    """Every Python operator, routed to the elementwise engine."""

    __slots__ = ()

    @staticmethod
    def _elidable(a) -> bool:
        return False

    def __matmul__(self, other):
        return ops.matmul(self, other)

    def __rmatmul__(self, other):
        return ops.matmul(other, self)

    def __imatmul__(self, other):
        return ops.matmul(self, other, out=self)

    def __divmod__(self, other):
        return ops.elementwise(np.divmod, (self, other), nout=2)

    def __rdivmod__(self, other):
        return ops.elementwise(np.divmod, (other, self), nout=2)


for _n, _u in _BINARY.items():
    _o, _r, _i = _binary(_n, _u)
    setattr(OperatorsMixin, f"__{_n}__", _o)
    setattr(OperatorsMixin, f"__r{_n}__", _r)
    setattr(OperatorsMixin, f"__i{_n}__", _i)
for _n, _u in _COMPARE.items():
    setattr(OperatorsMixin, f"__{_n}__", _binary(_n, _u)[0])
for _n, _u in _UNARY.items():
    setattr(OperatorsMixin, f"__{_n}__", _unary(_n, _u))


def calibrate(cls) -> None:
    """Measure the reference count of a temporary on the left and reflected paths."""
    global _calibrating

    def temp():
        return object.__new__(cls)

    _calibrating = True
    try:
        temp() + 1
        1 + temp()
    finally:
        _calibrating = False
    if set(_TEMP_COUNT) != {"l", "r"}:
        _TEMP_COUNT.clear()
