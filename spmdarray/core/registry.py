"""The function registry: how the layers below reach implementations that live above them.

Layers import only downward (see docs/design.md).  The ``ndarray`` class and
its operators live in :mod:`spmdarray.core`, but most of what its methods do
(reductions, reshaping, indexing, the elementwise engine) is implemented in
the layers above.  Those modules register their implementations here when
they are imported, and the methods call them through this table:

* ``HANDLED`` maps a NumPy function to spmdarray's implementation
  (``__array_function__``), filled by :func:`implements`;
* ``ops`` holds the internal operations that ``ndarray`` methods and
  operators call, each set once by the module that defines it
  (:func:`provides`).

``import spmdarray`` imports every registering module, so both tables are
complete before any array exists.  Nothing here is collective.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["HANDLED", "REPLICATED", "GUFUNCS", "implements", "ops", "provides"]

#: NumPy function -> spmdarray implementation (``__array_function__``).
HANDLED: dict = {}
#: NumPy functions whose implementation replicates its (small) inputs or result on
#: every rank instead of distributing it; the API coverage table marks them so.
REPLICATED: set = set()
#: Generalized ufuncs (core dimensions) -> implementation ``f(*inputs, out=None, **kw)``.
GUFUNCS: dict = {}


def implements(*funcs, replicated: bool = False) -> Callable:
    """Register an implementation for NumPy functions (``__array_function__``).

    ``replicated=True`` marks an implementation that holds its inputs or its
    result whole on every rank (meant for small arrays only); the generated
    API coverage table lists it as replicated rather than distributed.
    """

    def deco(impl):
        for f in funcs:
            HANDLED[f] = impl
            if replicated:
                REPLICATED.add(f)
            else:
                REPLICATED.discard(f)
        return impl

    return deco


class _Ops:
    """Internal operations of the layers above ``core``, by name.

    An attribute that is still missing means its module was not imported:
    ``import spmdarray`` imports them all.
    """

    __slots__ = (
        # spmdarray.core.fetch
        "choose_layout",  # fetch.choose_layout(ctx, args, shape): where an elementwise operation runs
        # spmdarray.engine
        "elementwise",  # elementwise.elementwise(func, args, out=None, where=True, nout=1, **kw)
        "assign",  # elementwise.assign(dst, value): dst[...] = value
        "to_scalar",  # elementwise.to_scalar(x): a size-1 array's value on every rank
        "result_dtypes",  # dtypes.result_dtypes(func, args)
        "array_ufunc",  # dispatch.array_ufunc(ufunc, method, inputs, kwargs)
        "array_function",  # dispatch.array_function(func, types, args, kwargs)
        # spmdarray.routines
        "empty",
        "empty_like",
        "zeros",
        "zeros_like",
        "to_backend",  # creation._to_backend(x, name, dtype)
        "getitem",  # indexing.advanced.getitem(x, key): advanced indexing
        "setitem",  # indexing.advanced.setitem(x, key, value)
        "compress",
        "byteswap",
        "flags_of",
        "part_view",  # logic.part_view(x, "real" | "imag")
        "squeeze",
        "swapaxes",
        "ravel",
        "reshape",
        "set_shape",  # manipulation.shape.set_shape(x, newshape): the array x.shape = newshape makes x
        "reduce",  # reductions.reduce(name, x, axis=..., ...)
        "reduce_full",  # reductions.reduce_full(name, x): x.<name>() with the default arguments
        "argreduce",  # reductions.argreduce(name, x, axis, out, keepdims)
        "normalize_axes",
        "cumsum",
        "cumprod",
        "round",
        "accumulate",  # scans.accumulate(ufunc, x, axis, dtype, out)
        # spmdarray.linalg
        "dot",
        "matmul",
        # spmdarray.array_api
        "array_namespace",  # array_namespace(api_version) -> the module
    )


#: The table ``ndarray`` methods and operators call (attributes set by :func:`provides`).
ops: Any = _Ops()


def provides(name: str) -> Callable:
    """Decorator: register ``func`` as ``ops.<name>``."""

    def deco(func):
        setattr(ops, name, func)
        return func

    return deco
