"""Axis manipulations that are views: no data moves, nothing is collective.

Each function builds a basic index or an axis permutation and applies it to
the array's view map, as NumPy returns views for the same calls.  Errors are
NumPy's own, raised before anything else.
"""

from __future__ import annotations

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from spmdarray.core.registry import implements, provides

__all__ = [
    "swapaxes",
    "moveaxis",
    "rollaxis",
    "matrix_transpose",
    "squeeze",
    "expand_dims",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "flip",
    "fliplr",
    "flipud",
    "rot90",
]


def _view(a, key: tuple):
    # A trailing ``...`` keeps 0-d results arrays (views), as NumPy's functions do.
    return a[(*key, Ellipsis)]


@implements(np.swapaxes)
@provides("swapaxes")
def swapaxes(a, axis1, axis2):
    """View with two axes interchanged.  Not collective."""
    i = normalize_axis_index(operator.index(axis1), a.ndim, "axis1")
    j = normalize_axis_index(operator.index(axis2), a.ndim, "axis2")
    perm = list(range(a.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return a.transpose(perm)


@implements(np.moveaxis)
def moveaxis(a, source, destination):
    """View with axes moved to new positions.  Not collective."""
    src = normalize_axis_tuple(source, a.ndim, "source")
    dst = normalize_axis_tuple(destination, a.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return a.transpose(order)


@implements(np.squeeze)
@provides("squeeze")
def squeeze(a, axis=None):
    """View without length-1 axes (all of them, or those in ``axis``).  Not collective."""
    if axis is None:
        drop = {k for k, n in enumerate(a.shape) if n == 1}
    else:
        drop = set(normalize_axis_tuple(axis, a.ndim))
        if any(a.shape[k] != 1 for k in drop):
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return _view(a, tuple(0 if k in drop else slice(None) for k in range(a.ndim)))


@implements(np.expand_dims)
def expand_dims(a, axis):
    """View with new length-1 axes at positions ``axis``.  Not collective."""
    if not isinstance(axis, (tuple, list)):
        axis = (axis,)
    nd = a.ndim + len(axis)
    new = set(normalize_axis_tuple(axis, nd))
    return _view(a, tuple(None if k in new else slice(None) for k in range(nd)))


_REVERSED = (slice(None, None, -1),)  # (one axis: a plain key, the lane's own indexing)


@implements(np.flip)
def flip(m, axis=None):
    """View with the order of elements reversed along ``axis`` (all axes by default).  Not collective."""
    if axis is None and m.ndim == 1:
        return m[_REVERSED]  # (``np.flip(r[:k])`` in a loop: the key made once)
    axes = set(range(m.ndim)) if axis is None else set(normalize_axis_tuple(axis, m.ndim))
    return _view(m, tuple(slice(None, None, -1) if k in axes else slice(None) for k in range(m.ndim)))


@implements(np.fliplr)
def fliplr(m):
    """View reversed along axis 1.  Not collective."""
    if m.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(m, 1)


@implements(np.flipud)
def flipud(m):
    """View reversed along axis 0.  Not collective."""
    if m.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(m, 0)


@implements(np.rot90)
def rot90(m, k=1, axes=(0, 1)):
    """View rotated by 90 degrees ``k`` times in the plane of ``axes``.  Not collective."""
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError("Axes must be different.")
    if axes[0] >= m.ndim or axes[0] < -m.ndim or axes[1] >= m.ndim or axes[1] < -m.ndim:
        raise ValueError(f"Axes={axes} out of range for array of ndim={m.ndim}.")
    k %= 4
    if k == 0:
        return m[...]
    if k == 2:
        return flip(flip(m, axes[0]), axes[1])
    perm = list(range(m.ndim))
    perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
    if k == 1:
        return flip(m, axes[1]).transpose(perm)
    return flip(m.transpose(perm), axes[1])


@implements(np.rollaxis)
def rollaxis(a, axis, start=0):
    """View with ``axis`` rolled back to position ``start``.  Not collective."""
    n = a.ndim
    axis = normalize_axis_index(axis, n)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(
            f"'start' arg requires {-n} <= start < {n + 1}, but {start - n if start >= n + 1 else start} was passed in"
        )
    if axis < start:
        start -= 1
    if axis == start:
        return a[...]
    order = list(range(n))
    order.remove(axis)
    order.insert(start, axis)
    return a.transpose(order)


@implements(np.matrix_transpose)
def matrix_transpose(x):
    """View with the last two axes swapped.  Not collective."""
    if x.ndim < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {x.ndim}")
    return swapaxes(x, -1, -2)


def _atleast(arys, nd: int):
    out = []
    for a in arys:
        if a.ndim >= nd:
            out.append(a)
        elif nd == 3 and a.ndim == 2:
            out.append(_view(a, (slice(None), slice(None), None)))
        elif nd == 3 and a.ndim == 1:
            out.append(_view(a, (None, slice(None), None)))
        else:
            out.append(_view(a, (None,) * (nd - a.ndim)))
    return out[0] if len(out) == 1 else tuple(out)


@implements(np.atleast_1d)
def atleast_1d(*arys):
    """Views with at least one dimension.  Not collective."""
    return _atleast(arys, 1)


@implements(np.atleast_2d)
def atleast_2d(*arys):
    """Views with at least two dimensions (new axes in front).  Not collective."""
    return _atleast(arys, 2)


@implements(np.atleast_3d)
def atleast_3d(*arys):
    """Views with at least three dimensions, placed as NumPy places them.  Not collective."""
    return _atleast(arys, 3)
