"""``where`` (three arguments), ``count_nonzero`` and ``ptp`` from the engine's pieces."""

from __future__ import annotations

import numpy as np

from . import _engine
from ._dispatch import copyto, implements
from ._reductions import reduce

__all__ = ["where", "count_nonzero", "ptp"]


@implements(np.where)
def where(condition, *xy):
    """``x`` where ``condition`` is true, else ``y`` (broadcast).  Collective.

    The one-argument form (``nonzero``) raises ``NotImplementedError``.
    """
    if len(xy) != 2:
        if xy:
            raise ValueError("either both or neither of x and y should be given")
        raise NotImplementedError("numpy.where(condition) with one argument (nonzero) is not implemented yet")
    x, y = xy
    from ._creation import empty

    ctx = _engine.context_of(condition, x, y)
    shapes = [_engine._shape_of(v) if _engine.is_distributed(v) else np.shape(v) for v in (condition, x, y)]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise _engine.broadcast_error(shapes) from None
    dtype = np.where(True, _engine._dummy(_engine._as_operand(x)), _engine._dummy(_engine._as_operand(y))).dtype
    res = empty(shape, dtype, comm=ctx)
    _engine.assign(res, y)
    cond = condition
    if not (_engine.is_distributed(cond) and cond.dtype == bool):
        cond = _engine.elementwise(np.not_equal, [cond, 0]) if _engine.is_distributed(cond) else np.asarray(cond, bool)
    copyto(res, x, casting="unsafe", where=cond)
    return res


@implements(np.count_nonzero)
def count_nonzero(a, axis=None, *, keepdims=False):
    """Number of non-zero elements (as NumPy: an ``intp`` array along axes).  Collective."""
    nz = _engine.elementwise(np.not_equal, [a, 0]) if a.dtype != bool else a
    return reduce("sum", nz, axis=axis, dtype=np.intp, keepdims=keepdims)


@implements(np.ptp)
def ptp(a, axis=None, out=None, keepdims=False):
    """Range (maximum - minimum).  Collective."""
    hi = reduce("max", a, axis=axis, keepdims=keepdims)
    lo = reduce("min", a, axis=axis, keepdims=keepdims)
    if out is not None:
        return _engine.elementwise(np.subtract, [hi, lo], out=(out,))
    return np.subtract(hi, lo)
