"""Broadcasting views and the copies built on them: ``broadcast_to``,
``broadcast_arrays``, ``tile``, ``meshgrid``.

A broadcast view repeats an axis of length one (or adds leading axes) without
copying: its view map drops the base axis and adds an axis of step 0, which no
rank partitions, so every rank that holds an element of the source holds the
whole broadcast extent.  As in NumPy the view is read-only: writing through it
raises ``ValueError``.
"""

from __future__ import annotations

import operator

import numpy as np

from spmdarray.core import fetch as _fetch
from spmdarray.core.array import ndarray
from spmdarray.core.registry import implements
from spmdarray.decomposition import ViewMap
from spmdarray.engine import elementwise as _engine
from spmdarray.routines.creation import array

__all__ = ["broadcast_to", "broadcast_arrays", "tile", "meshgrid"]


def _bshape(shape) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    out = tuple(operator.index(n) for n in shape)
    if any(n < 0 for n in out):
        raise ValueError("all elements of broadcast shape must be non-negative")
    return out


def _broadcast_view(x, shape: tuple[int, ...]):
    """View of ``x`` broadcast to ``shape`` (already checked).  Not collective."""

    m = x._map
    lead = len(shape) - x.ndim
    start = list(m.start)
    axes = [(-1, 0)] * lead
    for a, ((b, step), n) in enumerate(zip(m.axes, m.shape)):
        if n == 1 and shape[lead + a] != 1:
            axes.append((-1, 0))  # base index stays at ``start[b]``: the axis is dropped
        else:
            axes.append((b, step))
    vm = ViewMap(m.base_shape, tuple(start), tuple(axes), tuple(shape))
    return ndarray._new(x._st, vm)


@implements(np.broadcast_to)
def broadcast_to(array, shape, subok=False):
    """Read-only view of ``array`` broadcast to ``shape``.  Not collective.

    No data is copied or moved: a repeated axis is held whole by every rank
    that holds the source element (the view's layout does not partition it).
    Writing through the view raises ``ValueError`` as in NumPy.
    """
    shape = _bshape(shape)
    if not _fetch.is_distributed(array):
        return np.broadcast_to(array, shape, subok=subok)
    if len(shape) < array.ndim:
        raise ValueError(
            f"input operand has more dimensions than allowed by the axis remapping: cannot broadcast "
            f"{array.shape} to {shape}"
        )
    try:
        ok = np.broadcast_shapes(array.shape, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"operands could not be broadcast together with remapped shapes [original->remapped]: "
            f"{array.shape} and requested shape {shape}"
        )
    return _broadcast_view(array, shape)


@implements(np.broadcast_arrays)
def broadcast_arrays(*args, subok=False):
    """Read-only broadcast views of the arguments (a tuple, as NumPy 2).  Not collective.

    NumPy arrays among the arguments are broadcast by NumPy (every rank holds them).
    """
    shapes = [np.shape(a) for a in args]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise _engine.broadcast_error(shapes) from None
    return tuple(a if np.shape(a) == shape else broadcast_to(a, shape) for a in args)


@implements(np.tile)
def tile(A, reps):
    """``A`` repeated ``reps`` times per axis.  Collective.

    A broadcast view of ``A`` (no copy) reshaped into a fresh balanced array:
    each rank receives only the elements of its block of the result.
    """
    try:
        tup = tuple(reps)
    except TypeError:
        tup = (reps,)
    tup = tuple(operator.index(r) for r in tup)
    if any(r < 0 for r in tup):
        raise ValueError("negative dimensions are not allowed")
    d = len(tup)
    a = A
    if a.ndim < d:
        a = a[(None,) * (d - a.ndim) + (Ellipsis,)]
    if d < a.ndim:
        tup = (1,) * (a.ndim - d) + tup
    shape_out = tuple(s * t for s, t in zip(a.shape, tup))
    if all(t == 1 for t in tup):
        return a.copy()
    inter = a[tuple(k for n in range(a.ndim) for k in (None, slice(None)))]
    wide = broadcast_to(inter, tuple(v for s, t in zip(a.shape, tup) for v in (t, s)))
    return wide.reshape(shape_out)


@implements(np.meshgrid)
def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from 1-D coordinate vectors.  Collective when ``copy``.

    With ``copy=False`` the results are broadcast views (no data moves); with
    ``copy=True`` each is a fresh balanced array filled from its vector.
    """
    ndim = len(xi)
    if indexing not in ["xy", "ij"]:
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    s0 = (1,) * ndim
    out = []
    for i, x in enumerate(xi):
        x = x.ravel() if _fetch.is_distributed(x) else np.asanyarray(x).ravel()
        shp = s0[:i] + (-1,) + s0[i + 1 :]
        out.append(x.reshape(shp))
    if indexing == "xy" and ndim > 1:
        out[0] = out[0].reshape((1, -1) + s0[2:])
        out[1] = out[1].reshape((-1, 1) + s0[2:])
    if not sparse:
        shape = np.broadcast_shapes(*(np.shape(o) for o in out))
        out = [broadcast_to(o, shape) if _fetch.is_distributed(o) else np.broadcast_to(o, shape) for o in out]
    if copy:
        ctx = _fetch.context_of(*xi)
        out = [o.copy() if _fetch.is_distributed(o) else array(o, comm=ctx) for o in out]
    return tuple(out)
