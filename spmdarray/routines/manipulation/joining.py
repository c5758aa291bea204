"""Joining arrays: concatenate and the stack family.

The result gets a fresh balanced layout of its shape, and each input is
assigned into the slab of the result it occupies.  Assignment between layouts
moves exactly the overlap of each rank's blocks (the engine's redistribution
plans), so no rank ever holds more than its own blocks and one input's
overlapping part.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from spmdarray.core import fetch as _fetch
from spmdarray.core.registry import implements
from spmdarray.engine import elementwise as _engine
from spmdarray.routines.creation import empty
from spmdarray.routines.manipulation.axes import atleast_1d, atleast_2d, atleast_3d, expand_dims

__all__ = ["concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack"]


def _shape_dtype(a):
    if _fetch.is_distributed(a) or isinstance(a, np.ndarray):
        return a.shape, a.dtype
    arr = np.asarray(a)
    return arr.shape, arr.dtype


@implements(np.concatenate, np.concat)
def concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """Join arrays along an existing axis.  Collective.

    Inputs may be spmdarray arrays or NumPy arrays that every rank passes.
    """
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    ctx = _fetch.context_of(*arrays, out)
    if axis is None:
        arrays = [a.ravel() if _fetch.is_distributed(a) else np.ravel(a) for a in arrays]
        axis = 0
    infos = [_shape_dtype(a) for a in arrays]
    nd = len(infos[0][0])
    if nd == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    for i, (s, _) in enumerate(infos[1:], 1):
        if len(s) != nd:
            raise ValueError(
                "all the input arrays must have same number of dimensions, but the array at index 0 has "
                f"{nd} dimension(s) and the array at index {i} has {len(s)} dimension(s)"
            )
    axis = normalize_axis_index(axis, nd)
    first = infos[0][0]
    for i, (s, _) in enumerate(infos[1:], 1):
        for k in range(nd):
            if k != axis and s[k] != first[k]:
                raise ValueError(
                    "all the input array dimensions except for the concatenation axis must match exactly, but "
                    f"along dimension {k}, the array at index 0 has size {first[k]} and the array at index {i} "
                    f"has size {s[k]}"
                )
    if out is not None and dtype is not None:
        raise TypeError("concatenate() only takes `out` or `dtype` as an argument, but both were provided.")
    dts = [d for _, d in infos]
    res_dt = np.dtype(dtype) if dtype is not None else (out.dtype if out is not None else np.result_type(*dts))
    for d in dts:
        if not np.can_cast(d, res_dt, casting=casting):
            raise TypeError(f"Cannot cast array data from {d!r} to {res_dt!r} according to the rule {casting!r}")
    shape = tuple(sum(s[axis] for s, _ in infos) if k == axis else first[k] for k in range(nd))
    if out is not None:
        if out.shape != shape:
            raise ValueError("Output array is the wrong shape")
        res = out
    else:
        res = empty(shape, res_dt, comm=ctx)
    pos = 0
    for a, (s, _) in zip(arrays, infos):
        n = s[axis]
        if n:
            key = tuple(slice(pos, pos + n) if k == axis else slice(None) for k in range(nd))
            _engine.assign(res[key], a)
        pos += n
    return res


@implements(np.stack)
def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join arrays along a new axis.  Collective."""
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to stack")
    shapes = {_shape_dtype(a)[0] for a in arrays}
    if len(shapes) != 1:
        raise ValueError("all input arrays must have the same shape")
    nd = len(next(iter(shapes))) + 1
    axis = normalize_axis_index(axis, nd)
    parts = [expand_dims(a, axis) if _fetch.is_distributed(a) else np.expand_dims(a, axis) for a in arrays]
    return concatenate(parts, axis=axis, out=out, dtype=dtype, casting=casting)


def _lift(fn, arrays):
    return [fn(a) if _fetch.is_distributed(a) else getattr(np, fn.__name__)(a) for a in arrays]


@implements(np.vstack)
def vstack(tup, *, dtype=None, casting="same_kind"):
    """Stack along the first axis (1-D inputs become rows).  Collective."""
    return concatenate(_lift(atleast_2d, tup), 0, dtype=dtype, casting=casting)


@implements(np.hstack)
def hstack(tup, *, dtype=None, casting="same_kind"):
    """Stack along the second axis (the first for 1-D inputs).  Collective."""
    arrs = _lift(atleast_1d, tup)
    axis = 0 if arrs and np.ndim(arrs[0]) == 1 else 1
    return concatenate(arrs, axis, dtype=dtype, casting=casting)


@implements(np.dstack)
def dstack(tup):
    """Stack along the third axis.  Collective."""
    return concatenate(_lift(atleast_3d, tup), 2)


@implements(np.column_stack)
def column_stack(tup):
    """1-D inputs as columns of a 2-D result; 2-D inputs as they are.  Collective."""
    cols = []
    for a in tup:
        shape = _shape_dtype(a)[0]
        if len(shape) < 2:
            a = atleast_2d(a).T if _fetch.is_distributed(a) else np.atleast_2d(np.asarray(a)).T
        cols.append(a)
    return concatenate(cols, 1)


def row_stack(tup, *, dtype=None, casting="same_kind"):
    """NumPy's deprecated alias of :func:`numpy.vstack`.  Collective.

    ``numpy.row_stack`` does not dispatch; this warns as it does and stacks
    through the distributed ``vstack``.
    """
    import warnings

    warnings.warn("`row_stack` alias is deprecated. Use `np.vstack` directly.", DeprecationWarning, stacklevel=2)
    return np.vstack(tup, dtype=dtype, casting=casting)
