"""NumPy protocol dispatch: ``__array_ufunc__`` and ``__array_function__``.

Every ufunc call lands in :func:`array_ufunc` and goes to the elementwise
engine (reductions, scans and generalized ufuncs to the implementations the
layers above registered in :mod:`spmdarray.core.registry`); every other
NumPy function called with a spmdarray argument lands in
:func:`array_function` and is looked up in the ``HANDLED`` registry.  A
function that is not registered raises ``NotImplementedError`` naming it: it
is never computed by silently gathering the array.  A registered function
whose spmdarray arguments are all replicated is NumPy's own call on each
rank's copy (:mod:`spmdarray.engine.replicas`).
"""

from __future__ import annotations

import numpy as np

from spmdarray.core.fetch import is_distributed
from spmdarray.core.registry import GUFUNCS, HANDLED, ops, provides
from spmdarray.engine.elementwise import elementwise
from spmdarray.engine.fastpath import SLOW, fast
from spmdarray.engine.replicas import call_on_replicas

__all__ = ["REDUCE_NAMES", "array_ufunc", "array_function"]

#: Ufuncs whose ``reduce`` and ``accumulate`` spmdarray computes, and the reduction of each.
REDUCE_NAMES = {
    np.add: "sum",
    np.multiply: "prod",
    np.minimum: "min",
    np.maximum: "max",
    np.logical_and: "all",
    np.logical_or: "any",
}


def _known(x) -> bool:
    return is_distributed(x) or isinstance(x, (np.ndarray, np.generic, int, float, complex, bool, list, tuple))


@provides("array_ufunc")
def array_ufunc(ufunc, method, inputs, kwargs):
    """Route a ufunc call to the engine.  Collective."""
    if method == "__call__" and not kwargs:  # ``numpy.float64(2.0) * x``, ``np.exp(x)``: a cached plan
        res = fast(ufunc, inputs, None)
        if res is not SLOW:
            return res
    if not all(_known(x) or x is None for x in inputs):
        return NotImplemented
    out = kwargs.pop("out", None)
    if method == "__call__":
        if ufunc is np.matmul:
            o = out[0] if out else None
            return ops.matmul(*inputs, out=o, **kwargs)
        if ufunc in GUFUNCS:
            return GUFUNCS[ufunc](*inputs, out=out[0] if out else None, **kwargs)
        if ufunc.signature is not None:
            # A generalized ufunc has core dimensions: not elementwise.
            raise NotImplementedError(f"numpy.{ufunc.__name__} (generalized ufunc) on spmdarray arrays")
        where = kwargs.pop("where", True)
        return elementwise(ufunc, inputs, out=out, where=where, nout=ufunc.nout, **kwargs)
    if method == "reduce":
        (x,) = inputs
        name = REDUCE_NAMES.get(ufunc)
        if name is None:
            raise NotImplementedError(f"numpy.{ufunc.__name__}.reduce (only associative ufuncs reduce in spmdarray)")
        axis = kwargs.pop("axis", 0)
        o = out[0] if out else None
        if name in ("all", "any"):
            kwargs.pop("dtype", None)
            x = elementwise(np.not_equal, [x, 0]) if x.dtype != bool else x
        return ops.reduce(name, x, axis=axis, out=o, **kwargs)
    if method == "accumulate":
        (x,) = inputs
        o = out[0] if out else None
        return ops.accumulate(ufunc, x, axis=kwargs.pop("axis", 0), dtype=kwargs.pop("dtype", None), out=o)
    if method == "outer":
        return _outer(ufunc, inputs, out, kwargs)
    raise NotImplementedError(f"numpy.{ufunc.__name__}.{method} on spmdarray arrays")


def _outer(ufunc, inputs, out, kwargs):
    """``ufunc.outer(a, b)``: ``ufunc(a[..., None, ...], b)``, as NumPy computes it.  Collective.

    The result is laid out as a fresh array of shape ``a.shape + b.shape``
    (or as ``out``); each rank fetches the parts of ``a`` and ``b`` its block needs.
    """
    if ufunc.signature is not None:
        raise TypeError("method outer is not allowed in ufunc with non-trivial signature")
    if ufunc.nin != 2:
        raise ValueError("outer product only supported for binary functions")
    a, b = (x if is_distributed(x) else np.asarray(x) for x in inputs)
    a = a[(Ellipsis,) + (None,) * b.ndim]
    where = kwargs.pop("where", True)
    return elementwise(ufunc, [a, b], out=out, where=where, nout=ufunc.nout, **kwargs)


@provides("array_function")
def array_function(func, types, args, kwargs):
    """Look ``func`` up in the registry.  Collective when the implementation is."""
    impl = HANDLED.get(func)
    if impl is None:
        name = getattr(func, "__module__", "numpy") or "numpy"
        raise NotImplementedError(
            f"spmdarray does not implement {name}.{func.__name__} yet; it was not computed by gathering the "
            "array. Call it on numpy.asarray(x) explicitly if the array is small"
        )
    res = call_on_replicas(func, args, kwargs)  # replicated arguments: NumPy on each rank's copy
    if res is not NotImplemented:
        return res
    return impl(*args, **kwargs)
