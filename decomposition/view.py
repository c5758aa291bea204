"""Views: how a basic-indexed view's coordinates map onto its base array.

A :class:`ViewMap` records, for every view axis, the base axis it walks and
the step (any sign), plus the base index of view element ``(0, 0, ...)``.
Base axes that no view axis walks were removed by an integer index and stay
at ``start``.  ``newaxis`` axes walk no base axis (``base_axis == -1``).

>>> m = ViewMap.identity((6, 8)).getitem((slice(1, -1), slice(None, None, -2)))
>>> m.shape, m.start, m.axes
((4, 4), (1, 7), ((0, 1), (1, -2)))
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from functools import lru_cache

from .blocks import find_coord
from .layout import Box, Layout, box_size

__all__ = ["ViewMap", "strided_range", "view_layout", "normalize_key"]


def strided_range(start: int, step: int, count: int, lo: int, hi: int) -> tuple[int, int]:
    """Range ``[i0, i1)`` of ``i`` in ``[0, count)`` with ``lo <= start + i*step < hi``.

    Not collective.  The result is contiguous for any non-zero step.

    >>> strided_range(7, -2, 4, 0, 4)   # base 7, 5, 3, 1 -> keep 3, 1
    (2, 4)
    """
    if count <= 0 or hi <= lo:
        return (0, 0)
    if step > 0:
        i0 = -((start - lo) // step)  # ceil((lo - start) / step)
        i1 = -((start - hi) // step)
    else:
        s = -step
        i0 = (start - hi) // s + 1
        i1 = (start - lo) // s + 1
    i0 = min(max(i0, 0), count)
    i1 = min(max(i1, 0), count)
    return (i0, max(i0, i1))


def normalize_key(key, shape: tuple[int, ...]) -> tuple:
    """Turn a basic index into a tuple of ints, slices and None.

    Not collective.  Integers are made non-negative and bounds-checked,
    ``...`` is expanded.  Raises NumPy's ``IndexError`` for bad indices and
    ``NotImplementedError`` for advanced (array or boolean) indices.
    """
    if not isinstance(key, tuple):
        key = (key,)
    n_ell = sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = 0
    for k in key:
        if k is None or k is Ellipsis:
            continue
        if isinstance(k, (bool,)) or _is_array_like(k):
            raise NotImplementedError(
                "ndarray.__getitem__/__setitem__ with an integer-array or boolean index "
                f"(got {type(k).__name__}); use slices, integers, None and ... for now"
            )
        consumed += 1
    if consumed > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, but {consumed} were indexed")
    out = []
    axis = 0
    for k in key:
        if k is Ellipsis:
            out.extend([slice(None)] * (len(shape) - consumed))
            axis += len(shape) - consumed
        elif k is None:
            out.append(None)
        elif isinstance(k, slice):
            out.append(k)
            axis += 1
        else:
            try:
                i = operator.index(k)
            except TypeError:
                raise IndexError(
                    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                    "integer or boolean arrays are valid indices"
                ) from None
            n = shape[axis]
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            out.append(i + n if i < 0 else i)
            axis += 1
    out.extend([slice(None)] * (len(shape) - axis))
    return tuple(out)


def _is_array_like(k) -> bool:
    if isinstance(k, (list,)):
        return True
    if hasattr(k, "shape") and hasattr(k, "dtype"):
        import numpy as np

        return not (np.ndim(k) == 0 and np.issubdtype(np.asarray(k).dtype, np.integer))
    return False


@dataclass(frozen=True, slots=True)
class ViewMap:
    """Map from view coordinates to base coordinates.

    Attributes
    ----------
    base_shape : tuple of int
    start : tuple of int
        Base index of the view's first element, per base axis.
    axes : tuple of (int, int)
        Per view axis ``(base_axis, step)``; ``base_axis == -1`` for newaxis.
    shape : tuple of int
        View shape.
    """

    base_shape: tuple[int, ...]
    start: tuple[int, ...]
    axes: tuple[tuple[int, int], ...]
    shape: tuple[int, ...]
    _hash: int | None = field(default=None, compare=False, repr=False)
    _bcast: tuple[int, ...] | None = field(default=None, compare=False, repr=False)

    @property
    def broadcast_axes(self) -> tuple[int, ...]:
        """View axes that repeat one element (``broadcast_to``: no base axis, length > 1).

        Computed once per map (asked for every operand of every operation).
        """
        b = self._bcast
        if b is None:
            b = tuple(v for v, ((ax, _), n) in enumerate(zip(self.axes, self.shape)) if ax < 0 and n > 1)
            object.__setattr__(self, "_bcast", b)
        return b

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash((self.base_shape, self.start, self.axes, self.shape))
            object.__setattr__(self, "_hash", h)
        return h

    @staticmethod
    @lru_cache(maxsize=1024)
    def identity(shape: tuple[int, ...]) -> ViewMap:
        return ViewMap(tuple(shape), (0,) * len(shape), tuple((b, 1) for b in range(len(shape))), tuple(shape))

    @property
    def is_identity(self) -> bool:
        return self == ViewMap.identity(self.base_shape)

    def dropped(self) -> tuple[int, ...]:
        """Base axes removed by integer indices."""
        walked = {b for b, _ in self.axes if b >= 0}
        return tuple(b for b in range(len(self.base_shape)) if b not in walked)

    def getitem(self, key: tuple) -> ViewMap:
        """Compose a normalised basic index (see :func:`normalize_key`)."""
        start = list(self.start)
        axes, shape = [], []
        v = 0
        for k in key:
            if k is None:
                axes.append((-1, 0))
                shape.append(1)
                continue
            b, step = self.axes[v]
            n = self.shape[v]
            v += 1
            if isinstance(k, slice):
                s0, _, s = k.indices(n)
                cnt = len(range(*k.indices(n)))
                if b >= 0:
                    if cnt:
                        start[b] += s0 * step
                    axes.append((b, step * s))
                else:
                    axes.append((-1, 0))
                shape.append(cnt)
            elif b >= 0:
                start[b] += k * step
        return ViewMap(self.base_shape, tuple(start), tuple(axes), tuple(shape))

    def transpose(self, perm: tuple[int, ...]) -> ViewMap:
        axes = tuple(self.axes[p] for p in perm)
        return ViewMap(self.base_shape, self.start, axes, tuple(self.shape[p] for p in perm))

    def base_index(self, box: Box) -> tuple:
        """Per base axis: ``(first, step, count)`` for a view box, or an int
        for dropped axes.  Count is 0 when the box is empty."""
        out: list = list(self.start)
        empty = box_size(box) == 0
        for (b, step), (lo, hi) in zip(self.axes, box):
            if b >= 0:
                out[b] = (self.start[b] + lo * step, step, 0 if empty else hi - lo)
        return tuple(out)


@lru_cache(maxsize=8192)
def view_layout(layout: Layout, vmap: ViewMap) -> Layout:
    """Layout of a view, in view coordinates, derived from its base layout.

    Not collective.  Every view element keeps the owner of its base element.
    """
    gaxis = list(layout.gaxis)
    gfixed = list(layout.gfixed)
    # Dropped base axes that were partitioned: only one grid row holds data.
    for b in vmap.dropped():
        k = layout.grid_axis_of(b)
        if k is not None:
            gaxis[k] = None
            gfixed[k] = find_coord(layout.intervals[b], vmap.start[b])
    intervals = []
    for v, (b, step) in enumerate(vmap.axes):
        n = vmap.shape[v]
        k = layout.grid_axis_of(b) if b >= 0 else None
        if k is None:
            intervals.append(None)
            continue
        gaxis[k] = v
        intervals.append(tuple(strided_range(vmap.start[b], step, n, lo, hi) for lo, hi in layout.intervals[b]))
    return Layout(vmap.shape, layout.dims, tuple(gaxis), tuple(gfixed), tuple(intervals))
