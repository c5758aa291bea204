"""``where`` (three arguments), ``count_nonzero``, ``ptp``, ``tril``/``triu`` (``trace`` is in _diagonals),
built from the engine's pieces (masks are generated per block, so nothing is gathered)."""

from __future__ import annotations

import numpy as np

from spmdarray.core import dtypes as _dtypes
from spmdarray.core import fetch as _fetch
from spmdarray.core.array import ndarray
from spmdarray.core.registry import implements
from spmdarray.core.storage import Storage
from spmdarray.engine import elementwise as _engine
from spmdarray.routines.creation import generate
from spmdarray.routines.elementwise_functions import copyto
from spmdarray.routines.indexing.nonzero import nonzero
from spmdarray.routines.reductions import reduce

__all__ = ["where", "count_nonzero", "ptp", "tril", "triu"]


@implements(np.where)
def where(condition, *xy):
    """``x`` where ``condition`` is true, else ``y`` (broadcast).  Collective.

    The one-argument form is ``nonzero(condition)`` (distributed results).
    """
    if len(xy) != 2:
        if xy:
            raise ValueError("either both or neither of x and y should be given")

        return nonzero(condition)
    x, y = xy

    ctx = _fetch.context_of(condition, x, y)
    shapes = [np.shape(v) for v in (condition, x, y)]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise _engine.broadcast_error(shapes) from None
    dtype = np.where(True, _dtypes._dummy(_fetch._as_operand(x)), _dtypes._dummy(_fetch._as_operand(y))).dtype
    # Laid out where an elementwise operation of the same operands is computed (hdiff's
    # ``where(res * d > 0, 0, res)`` stays on ``res``'s layout), not on the default one.
    operands = [_fetch._as_operand(v) for v in (condition, x, y)]
    res = ndarray._new(Storage(ctx, _fetch.choose_layout(ctx, operands, shape), dtype), None)
    _engine.assign(res, y)
    cond = condition
    if not (_fetch.is_distributed(cond) and cond.dtype == bool):
        cond = _engine.elementwise(np.not_equal, [cond, 0]) if _fetch.is_distributed(cond) else np.asarray(cond, bool)
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


def _tri_mask(n: int, m: int, k: int, ctx):
    """Distributed boolean ``tri(n, m, k)``: True where ``col - row <= k``."""

    def fill(box, xp):
        (r0, r1), (c0, c1) = box
        return (xp.arange(c0, c1)[None, :] - xp.arange(r0, r1)[:, None]) <= k

    return generate((n, m), bool, fill, ctx)


def _last2(m):
    if m.ndim == 0:
        raise TypeError("tri() missing 1 required positional argument: 'N'")  # NumPy: tri(*m.shape[-2:])
    return m.shape[-2:] if m.ndim >= 2 else (m.shape[0], m.shape[0])


@implements(np.tril)
def tril(m, k=0):
    """Lower triangle (elements with ``col - row <= k``); zeros elsewhere.  Collective."""
    n, c = _last2(m)
    return where(_tri_mask(n, c, int(k), m._st.ctx), m, np.zeros(1, m.dtype)[0])


@implements(np.triu)
def triu(m, k=0):
    """Upper triangle (elements with ``col - row >= k``); zeros elsewhere.  Collective."""
    n, c = _last2(m)
    return where(_tri_mask(n, c, int(k) - 1, m._st.ctx), np.zeros(1, m.dtype)[0], m)
