"""Splitting into views, and ``roll`` (a copy through ``concatenate``)."""

from __future__ import annotations

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from spmdarray.core.registry import implements
from spmdarray.routines.manipulation.joining import concatenate

__all__ = ["array_split", "split", "hsplit", "vsplit", "dsplit", "roll"]


def _along(a, axis: int, lo: int, hi: int):
    return a[(slice(None),) * axis + (slice(lo, hi), Ellipsis)]


@implements(np.array_split)
def array_split(ary, indices_or_sections, axis=0):
    """Views of ``ary`` split along ``axis`` (sections may differ by one).  Not collective."""
    axis = normalize_axis_index(axis, ary.ndim)
    total = ary.shape[axis]
    try:
        points = [0, *(operator.index(i) for i in indices_or_sections), total]
    except TypeError:
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.") from None
        each, extras = divmod(total, sections)
        sizes = [0] + extras * [each + 1] + (sections - extras) * [each]
        points = list(np.cumsum(sizes))
    return [_along(ary, axis, int(lo), int(hi)) for lo, hi in zip(points[:-1], points[1:])]


@implements(np.split)
def split(ary, indices_or_sections, axis=0):
    """Views of ``ary`` split into equal sections (or at indices).  Not collective."""
    try:
        len(indices_or_sections)
    except TypeError:
        sections = operator.index(indices_or_sections)
        n = ary.shape[normalize_axis_index(axis, ary.ndim)]
        if sections == 0 or n % sections:
            raise ValueError("array split does not result in an equal division") from None
    return array_split(ary, indices_or_sections, axis)


@implements(np.hsplit)
def hsplit(ary, indices_or_sections):
    """Split along axis 1 (axis 0 for 1-D).  Not collective."""
    if ary.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(ary, indices_or_sections, 1 if ary.ndim > 1 else 0)


@implements(np.vsplit)
def vsplit(ary, indices_or_sections):
    """Split along axis 0.  Not collective."""
    if ary.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, 0)


@implements(np.dsplit)
def dsplit(ary, indices_or_sections):
    """Split along axis 2.  Not collective."""
    if ary.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, 2)


@implements(np.roll)
def roll(a, shift, axis=None):
    """Copy with elements shifted cyclically.  Collective (only the wrapped parts move across ranks)."""

    if axis is None:
        return roll(a.ravel(), shift, 0).reshape(a.shape)
    axes = normalize_axis_tuple(axis, a.ndim, allow_duplicate=True)
    shifts, axes = np.broadcast_arrays(np.asarray(shift), np.asarray(axes))  # NumPy's error for a mismatch
    total = {}
    for s, ax in zip(shifts.ravel(), axes.ravel()):
        total[int(ax)] = total.get(int(ax), 0) + int(s)
    out = a
    for ax, s in total.items():
        n = a.shape[ax]
        s = s % n if n else 0
        if s:
            out = concatenate((_along(out, ax, n - s, n), _along(out, ax, 0, n - s)), axis=ax)
    return out.copy() if out is a else out
