"""Layouts: which rank owns which box of a global array.

A :class:`Layout` is pure data (hashable, no MPI).  Ranks sit on a C-ordered
process grid ``dims``.  Each grid axis is in one of three states:

* *partitioned*: it splits one array axis into ``dims[k]`` intervals (any
  order: a view with a negative step lists them in decreasing order);
* *fixed*: only ranks at one coordinate along it hold data (an integer index
  picked one base row, so the other rows of ranks hold nothing);
* *replicated*: every coordinate along it holds the same copy (the result of
  a reduction over that grid axis).

Boxes are tuples of half-open ``(lo, hi)`` global ranges, one per array axis.

>>> lay = Layout.balanced((10, 7), 4)
>>> lay.dims
(2, 2)
>>> lay.block(3)
((5, 10), (4, 7))
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from functools import lru_cache

from .blocks import block_bounds
from .grid import process_grid

Box = tuple[tuple[int, int], ...]

__all__ = ["Box", "Layout", "box_intersect", "box_size", "box_contains", "unravel"]


def box_size(box: Box) -> int:
    """Number of elements in ``box``.  Not collective."""
    return math.prod(max(0, hi - lo) for lo, hi in box)


def box_intersect(a: Box, b: Box) -> Box:
    """Intersection of two boxes (possibly empty).  Not collective."""
    out = []
    for (alo, ahi), (blo, bhi) in zip(a, b):
        lo, hi = max(alo, blo), min(ahi, bhi)
        out.append((lo, max(lo, hi)))
    return tuple(out)


def box_contains(outer: Box, inner: Box) -> bool:
    """Whether ``inner`` lies inside ``outer`` (an empty box lies anywhere)."""
    if box_size(inner) == 0:
        return True
    return all(olo <= ilo and ihi <= ohi for (olo, ohi), (ilo, ihi) in zip(outer, inner))


@lru_cache(maxsize=65536)
def unravel(rank: int, dims: tuple[int, ...]) -> tuple[int, ...]:
    """C-order grid coordinates of ``rank``.  Not collective."""
    out = []
    for d in reversed(dims):
        rank, c = divmod(rank, d)
        out.append(c)
    return tuple(reversed(out))


def ravel(coords: tuple[int, ...], dims: tuple[int, ...]) -> int:
    """Rank of C-order grid ``coords``.  Not collective."""
    r = 0
    for c, d in zip(coords, dims):
        r = r * d + c
    return r


@dataclass(frozen=True, slots=True)
class Layout:
    """Global shape plus the owner of every element.

    Attributes
    ----------
    shape : tuple of int
        Global shape.
    dims : tuple of int
        Process grid; ``prod(dims)`` is the communicator size.
    gaxis : tuple of (int or None)
        Per grid axis, the array axis it partitions, or None.
    gfixed : tuple of (int or None)
        Per grid axis that partitions nothing: the only coordinate holding
        data, or None when every coordinate holds a replica.
    intervals : tuple
        Per array axis: a tuple of ``(lo, hi)`` per coordinate of the grid
        axis that partitions it, or None when the axis is not partitioned.
    """

    shape: tuple[int, ...]
    dims: tuple[int, ...]
    gaxis: tuple[int | None, ...]
    gfixed: tuple[int | None, ...]
    intervals: tuple[tuple[tuple[int, int], ...] | None, ...]
    _hash: int | None = field(default=None, compare=False, repr=False)

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash((self.shape, self.dims, self.gaxis, self.gfixed, self.intervals))
            object.__setattr__(self, "_hash", h)
        return h

    # ----------------------------------------------------------- factories
    @staticmethod
    @lru_cache(maxsize=4096)
    def balanced(shape: tuple[int, ...], nprocs: int) -> Layout:
        """Balanced block layout on the grid from :func:`process_grid`.

        A 0-d shape is replicated on every rank.
        """
        shape = tuple(int(n) for n in shape)
        if not shape:
            return Layout.replicated((), nprocs)
        dims = process_grid(shape, nprocs)
        return Layout(
            shape,
            dims,
            tuple(range(len(shape))),
            (None,) * len(shape),
            tuple(block_bounds(n, d) for n, d in zip(shape, dims)),
        )

    @staticmethod
    def replicated(shape: tuple[int, ...], nprocs: int) -> Layout:
        """Every rank holds the whole array."""
        return Layout(tuple(shape), (nprocs,), (None,), (None,), (None,) * len(shape))

    @staticmethod
    def from_extents(extents: tuple[tuple[int, ...], ...]) -> Layout:
        """Layout whose axis ``a`` is split into consecutive ``extents[a]``.

        The grid is ``tuple(len(e) for e in extents)``.
        """
        intervals = []
        for ext in extents:
            lo, iv = 0, []
            for e in ext:
                iv.append((lo, lo + e))
                lo += e
            intervals.append(tuple(iv))
        shape = tuple(sum(e) for e in extents)
        dims = tuple(len(e) for e in extents)
        return Layout(shape, dims, tuple(range(len(shape))), (None,) * len(shape), tuple(intervals))

    # ------------------------------------------------------------- queries
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def nprocs(self) -> int:
        return math.prod(self.dims)

    def grid_axis_of(self, axis: int) -> int | None:
        """The grid axis partitioning array ``axis``, or None."""
        for k, a in enumerate(self.gaxis):
            if a == axis:
                return k
        return None

    def holds(self, rank: int) -> bool:
        """Whether ``rank`` holds a block (False off a fixed coordinate)."""
        c = unravel(rank, self.dims)
        return all(f is None or c[k] == f for k, f in enumerate(self.gfixed))

    def owned_size(self, rank: int) -> int:
        """Number of elements ``rank`` holds (0 off a fixed coordinate, even for 0-d)."""
        return _owned_size(self, rank)

    def block(self, rank: int) -> Box:
        """The box ``rank`` holds; all-empty when it holds nothing."""
        return _block(self, rank)

    def is_replicated_axis(self, k: int) -> bool:
        return self.gaxis[k] is None and self.gfixed[k] is None

    def sources(self, rank: int, box: Box):
        """Designated holders that give ``rank`` the parts of ``box``.

        Yields ``(source_rank, sub_box)`` pairs whose sub-boxes are non-empty,
        disjoint and cover ``box``.  Along replicated grid axes the source
        shares the receiver's coordinate, so a replica is read locally.
        """
        if box_size(box) == 0:
            return
        for src in self.ranks_meeting(box, unravel(rank, self.dims)):
            sub = box_intersect(box, _block(self, src))
            if box_size(sub):
                yield src, sub

    def ranks_meeting(self, box: Box, replica: tuple[int, ...] | None = None) -> list[int]:
        """Ranks whose block may meet ``box``, found per grid axis.

        Along a partitioned grid axis, the coordinates whose interval meets
        the box; along a fixed one, its coordinate; along a replicated one,
        ``replica``'s coordinate (one copy), or every coordinate when
        ``replica`` is None.
        """
        choices = []
        for k, d in enumerate(self.dims):
            a = self.gaxis[k]
            if a is not None:
                lo, hi = box[a]
                choices.append([c for c, (clo, chi) in enumerate(self.intervals[a]) if clo < hi and lo < chi])
            elif self.gfixed[k] is not None:
                choices.append([self.gfixed[k]])
            else:
                choices.append(range(d) if replica is None else [replica[k]])
        return [ravel(cs, self.dims) for cs in itertools.product(*choices)]

    def owners(self) -> list[int]:
        """Ranks holding the primary copy (coordinate 0 along replicated axes)."""
        out = []
        for r in range(self.nprocs):
            c = unravel(r, self.dims)
            if self.holds(r) and all(c[k] == 0 for k in range(len(self.dims)) if self.is_replicated_axis(k)):
                out.append(r)
        return out

    # ---------------------------------------------------------- transforms
    def take_axes(self, order: tuple[int, ...]) -> Layout:
        """Layout whose axis ``i`` is this layout's axis ``order[i]``.

        ``order`` is a permutation (a transpose) or a subset (dropping axes
        that no grid axis partitions, such as reduced ones).
        """
        new = {old: i for i, old in enumerate(order)}
        return Layout(
            tuple(self.shape[p] for p in order),
            self.dims,
            tuple(None if a is None else new[a] for a in self.gaxis),
            self.gfixed,
            tuple(self.intervals[p] for p in order),
        )

    def transpose(self, perm: tuple[int, ...]) -> Layout:
        """Layout of the array with axes permuted as ``numpy.transpose``."""
        return self.take_axes(tuple(perm))

    def reduce(self, axes: tuple[int, ...], keepdims: bool) -> Layout:
        """Layout of a reduction over ``axes``: their grid axes, and fixed
        grid axes, become replicated (the combine step is an all-gather)."""
        axes = set(axes)
        keep = [a for a in range(self.ndim) if a not in axes]
        newpos = {a: i for i, a in enumerate(keep)}
        gaxis, gfixed = [], []
        for a in self.gaxis:
            if a is None or a in axes:
                gaxis.append(None)
                gfixed.append(None)
            else:
                gaxis.append(a if keepdims else newpos[a])
                gfixed.append(None)
        if keepdims:
            shape = tuple(1 if a in axes else n for a, n in enumerate(self.shape))
            intervals = tuple(None if a in axes else iv for a, iv in enumerate(self.intervals))
        else:
            shape = tuple(self.shape[a] for a in keep)
            intervals = tuple(self.intervals[a] for a in keep)
        return Layout(shape, self.dims, tuple(gaxis), tuple(gfixed), intervals)


@lru_cache(maxsize=65536)
def _owned_size(layout: Layout, rank: int) -> int:
    return box_size(_block(layout, rank)) if layout.holds(rank) else 0


@lru_cache(maxsize=65536)
def _block(layout: Layout, rank: int) -> Box:
    if not layout.holds(rank):
        return ((0, 0),) * layout.ndim
    c = unravel(rank, layout.dims)
    out = []
    for a, n in enumerate(layout.shape):
        iv = layout.intervals[a]
        if iv is None:
            out.append((0, n))
        else:
            out.append(iv[c[layout.grid_axis_of(a)]])
    return tuple(out)


@lru_cache(maxsize=4096)
def cells_to_receive(src: Layout, dst: Layout) -> int:
    """Elements all ranks together receive to hold ``dst``'s blocks of an array laid out as ``src``.

    Rank ``r`` computes on ``dst.block(r)``; the part of it that ``src``
    already places on ``r`` stays, the rest arrives by message (a halo or a
    redistribution).  Both layouts describe the same global shape on the same
    ranks.  Pure; cached.

    Examples
    --------
    >>> a = Layout.balanced((10,), 2)                 # (0, 5) (5, 10)
    >>> b = Layout.from_extents(((3, 7),))            # (0, 3) (3, 10)
    >>> cells_to_receive(a, b), cells_to_receive(a, a)
    (2, 0)
    """
    total = 0
    for r in range(dst.nprocs):
        need = dst.owned_size(r)
        if need:
            total += need - (box_size(box_intersect(src.block(r), dst.block(r))) if src.holds(r) else 0)
    return total


@lru_cache(maxsize=4096)
def cheapest_layout(candidates: tuple, operands: tuple, preferred: Layout) -> Layout:
    """The candidate layout on which the operands move the fewest bytes.  Pure; cached.

    Parameters
    ----------
    candidates : tuple of Layout
        Where the operation could be computed, in order of preference.
    operands : tuple of (Layout, int)
        Each operand's layout and item size in bytes.
    preferred : Layout
        Wins ties (the balanced layout new arrays get, so that the result
        lines up with them later); further ties go to the first candidate.

    Each candidate costs the bytes all ranks together receive to align every
    operand with it (:func:`cells_to_receive` times the item size).

    Examples
    --------
    >>> a, b = Layout.balanced((10,), 2), Layout.from_extents(((3, 7),))
    >>> cheapest_layout((b, a), ((b, 8), (a, 8), (a, 8)), a) == a   # moves one b, not two a
    True
    """
    best, best_key = None, None
    for lay in candidates:
        key = (sum(cells_to_receive(src, lay) * size for src, size in operands), lay != preferred)
        if best_key is None or key < best_key:
            best, best_key = lay, key
    return best
