"""NumPy functions that read an array's attributes or call its methods
(``shape``, ``ndim``, ``size``, ``transpose``, ``ravel``, ``copy``, ``result_type`` ...)."""

from __future__ import annotations

import numpy as np

from spmdarray.core.fetch import is_distributed
from spmdarray.core.registry import implements

__all__ = ["result_type", "can_cast", "iscomplexobj", "isrealobj"]


@implements(np.transpose)
def transpose(a, axes=None):
    """View with axes permuted.  Not collective."""
    return a.transpose(axes)


@implements(np.ravel)
def ravel(a, order="C"):
    """Distributed ``numpy.ravel``.  Collective."""
    return a.ravel(order)


@implements(np.shape)
def shape(a):
    return a.shape


@implements(np.ndim)
def ndim(a):
    return a.ndim


@implements(np.size)
def size(a, axis=None):
    return a.size if axis is None else a.shape[axis]


@implements(np.copy)
def _copy(a, order="K", subok=False):
    return a.copy()


def _dtype_arg(x):
    return x.dtype if is_distributed(x) else x


@implements(np.result_type)
def result_type(*arrays_and_dtypes):
    """``numpy.result_type`` (reads dtypes only).  Not collective."""
    return np.result_type(*(_dtype_arg(x) for x in arrays_and_dtypes))


@implements(np.can_cast)
def can_cast(from_, to, casting="safe"):
    """``numpy.can_cast`` (reads dtypes only).  Not collective."""
    return np.can_cast(_dtype_arg(from_), to, casting=casting)


@implements(np.iscomplexobj)
def iscomplexobj(x):
    """Whether the dtype is complex.  Not collective."""
    return issubclass(x.dtype.type, np.complexfloating)


@implements(np.isrealobj)
def isrealobj(x):
    """Whether the dtype is not complex.  Not collective."""
    return not iscomplexobj(x)
