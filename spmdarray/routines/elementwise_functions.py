"""NumPy functions computed by the elementwise engine with extra arguments:
``isclose``, ``allclose``, ``array_equal``, ``array_equiv``, ``round``, ``clip`` and ``copyto``."""

from __future__ import annotations

import numpy as np

from spmdarray.core.fetch import is_distributed
from spmdarray.core.registry import implements, provides
from spmdarray.engine.elementwise import assign, elementwise

__all__ = ["isclose", "allclose", "array_equal", "array_equiv", "round_", "clip", "copyto"]


def _isclose_local(rtol, atol, equal_nan):
    def f(a, b, out=None):
        r = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
        if out is None:
            return r
        out[...] = r
        return out

    return f


@implements(np.isclose)
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Distributed ``numpy.isclose``.  Collective."""
    return elementwise(_isclose_local(rtol, atol, equal_nan), [a, b])


@implements(np.allclose)
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Distributed ``numpy.allclose`` (the same bool on every rank).  Collective."""
    r = isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return bool(r.all() if is_distributed(r) else np.all(r))


@implements(np.array_equal)
def array_equal(a1, a2, equal_nan=False):
    """Distributed ``numpy.array_equal``.  Collective."""
    if np.shape(a1) != np.shape(a2):
        return False
    if equal_nan:
        return allclose(a1, a2, rtol=0, atol=0, equal_nan=True)
    r = elementwise(np.equal, [a1, a2])
    return bool(r.all() if is_distributed(r) else np.all(r))


@implements(np.round, np.around)
@provides("round")
def round_(a, decimals=0, out=None):
    """Distributed ``numpy.round``.  Collective."""
    return elementwise(np.round, [a], out=None if out is None else (out,), decimals=decimals)


@implements(np.clip)
def clip(a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue, max=np._NoValue, **kw):  # noqa: A002
    """Distributed ``numpy.clip``.  Collective."""
    lo = a_min if a_min is not np._NoValue else (None if min is np._NoValue else min)
    hi = a_max if a_max is not np._NoValue else (None if max is np._NoValue else max)
    o = None if out is None else (out,)
    if lo is None and hi is None:
        return elementwise(np.positive, [a], out=o, **kw)
    if lo is None:
        return elementwise(np.minimum, [a, hi], out=o, **kw)
    if hi is None:
        return elementwise(np.maximum, [a, lo], out=o, **kw)
    return elementwise(np._core.umath.clip, [a, lo, hi], out=o, **kw)


@implements(np.copyto)
def copyto(dst, src, casting="same_kind", where=True):
    """Distributed ``numpy.copyto``.  Collective."""
    # NumPy's own casting check (and NEP 50 rules for Python scalars) on a 0-d probe.
    if isinstance(src, (int, float, complex, np.generic)):
        probe = src
    else:
        probe = np.zeros((), src.dtype if hasattr(src, "dtype") else np.asarray(src).dtype)
    np.copyto(np.empty((), dst.dtype), probe, casting=casting)
    if where is True:
        assign(dst, src)
    else:
        # ``positive`` has no bool, string or date loop: those copy with ``numpy.copyto``.
        func = np.positive if dst.dtype.kind in "iufc" else _copy_into
        elementwise(func, [src], out=(dst,), where=where, casting="unsafe", dtype=dst.dtype)


def _copy_into(src, out=None, where=True, casting="unsafe", dtype=None):
    """``numpy.copyto(out, src, where=where)`` as an elementwise kernel (a block each)."""
    if out is None:
        return np.array(src, dtype=dtype)
    np.copyto(out, src, casting="unsafe", where=where)
    return out


@implements(np.array_equiv)
def array_equiv(a1, a2):
    """Distributed ``numpy.array_equiv``.  Collective."""
    try:
        np.broadcast_shapes(np.shape(a1), np.shape(a2))
    except ValueError:
        return False
    r = elementwise(np.equal, [a1, a2])
    return bool(r.all() if is_distributed(r) else np.all(r))
