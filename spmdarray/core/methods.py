"""Helpers of the ``ndarray`` class's methods: NumPy methods mirrored from the
registered functions, axis permutations, and the errors of missing methods and fields.
"""

from __future__ import annotations

import sys

import numpy as np

from spmdarray.comm import allgather_object
from spmdarray.core.refs import ATTRIBUTE
from spmdarray.core.registry import HANDLED, ops

__all__ = ["_MissingMethod", "_field_error", "_mirror_method", "_perm"]


#: ndarray methods that take the same arguments as the NumPy function of the same
#: name, with the array first; each works once that function is registered.
_MIRRORED = (
    "argpartition",
    "argsort",
    "choose",
    "conj",
    "conjugate",
    "diagonal",
    "nonzero",
    "ptp",
    "put",
    "repeat",
    "searchsorted",
    "take",
    "trace",
)
#: In-place methods: ``a.sort(...)`` stores ``numpy.sort(a, ...)`` into ``a``.
_IN_PLACE = ("sort", "partition")


def _mirror_method(x, name: str):
    if name in _MIRRORED:
        func = getattr(np, name)
        if func in HANDLED or isinstance(func, np.ufunc):

            def method(*args, **kwargs):
                return func(x, *args, **kwargs)

            method.__name__ = name
            method.__doc__ = f"Same as ``numpy.{name}(a, ...)`` (see its docstring)."
            return method
    elif name in _IN_PLACE and getattr(np, name) in HANDLED:
        func = getattr(np, name)

        def in_place(*args, **kwargs) -> None:
            x[...] = func(x, *args, **kwargs)

        in_place.__name__ = name
        in_place.__doc__ = f"In place: ``a[...] = numpy.{name}(a, ...)``.  Collective."
        return in_place
    return None


class _MissingMethod(NotImplementedError, AttributeError):
    """A NumPy ``ndarray`` method spmdarray lacks (``hasattr`` still says False)."""


def _perm(axes, ndim: int) -> tuple[int, ...]:
    if len(axes) != ndim:
        raise ValueError("axes don't match array")
    try:
        return ops.normalize_axes(tuple(axes), ndim)
    except ValueError as e:
        if isinstance(e, np.exceptions.AxisError):
            raise
        raise ValueError("repeated axis in transpose") from None


def _field_error(dtype: np.dtype, key: str) -> None:
    """NumPy's ValueError for a missing field; NotImplementedError, naming a way out, for a present one."""
    if key not in dtype.names:
        raise ValueError(f"no field of name {key}")
    raise NotImplementedError(
        f"x[{key!r}]: selecting a field of a structured spmdarray array is not supported (a field would have to "
        f"be a view). Keep the fields as separate arrays, or read one as a copy with "
        f"spmdarray.from_local(x.local[{key!r}].copy()) on the same layout"
    )


def resized(x, new_shape: tuple[int, ...], refcheck: bool):
    """The array ``x.resize(new_shape)`` makes ``x`` (new elements zero, C order), or None when
    nothing changes.  Collective (NumPy's errors on every rank alike)."""
    if not new_shape and not x.ndim:
        return None
    if any(n < 0 for n in new_shape):
        raise ValueError("negative dimensions not allowed")
    if not x._map.is_identity:
        raise ValueError("cannot resize this array: it does not own its data")
    if refcheck:
        shared = sys.getrefcount(x._st) - ATTRIBUTE > 0  # a holder besides ``x._st``
        if any(allgather_object(x._st.ctx, shared)):
            raise ValueError(
                "cannot resize an array that references or is referenced\nby another array in this way.\n"
                "Use the np.resize function or refcheck=False"
            )
    size = int(np.prod(new_shape, dtype=np.int64))
    flat = ops.zeros((size,), x.dtype, comm=x._st.ctx)
    n = min(size, x.size)
    if n:
        flat[:n] = x.ravel()[:n]
    return flat.reshape(new_shape)
