"""Rectangles of rows: the copies a sweep over row prefixes or row suffixes reads.

A triangular solve reads a prefix or a suffix of each row of a split matrix
in turn::

    for i in range(n):                      # forward
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    for i in range(n - 1, -1, -1):          # backward
        x[i] = (b[i] - U[i, i + 1:] @ x[i + 1:]) / U[i, i]

Gathering each part of a row on its own makes one collective per row;
gathering whole rows moves the whole matrix for its lower triangle.  While
the storage is unwritten (a read-only sweep), a part of a row that no copy
holds is gathered with the rows after it (or before it, sweeping backwards)
as one *rectangle*: rows ``[lo, hi)`` by the columns those rows' parts reach,
``[0, c1 + h)`` for prefixes ``[0, c1)`` read forwards (each row's prefix a
column longer than the last, and its diagonal), ``[c0 - h, W)`` for suffixes
read backwards.  The rectangles double in height at each miss, within the row
owner's block and ``BATCH`` elements, so a sweep over ``n`` rows of width
``W`` makes about ``log2`` of them plus ``n * W / (2 * BATCH)`` collectives
and moves about the triangle once.

The functions here are pure: they look at a storage's ``copies``
(view map -> ``[version, host array, handed out]``, see
:mod:`spmdarray.core.element`) and say which region to read or gather.  None
is collective.

>>> from spmdarray.decomposition import ViewMap
>>> m = ViewMap.identity((8, 8)).getitem((5, slice(0, 5)))
>>> row_part(m)
(0, 5, 0, 5)
>>> row_part(ViewMap.identity((80, 80)).getitem((5, slice(20, 40)))) is None  # a stretch in between
True
"""

from __future__ import annotations

from spmdarray.decomposition import ViewMap, find_coord

__all__ = ["BATCH", "held_part", "next_rectangle", "row_part"]

BATCH = 1 << 18  # elements: the most a rectangle (or a block of whole rows) gathered in a sweep holds
_SNAP = 16  # columns: a part starting this close to column 0 is a prefix, one ending this close to the end a suffix


def row_part(vm: ViewMap) -> tuple[int, int, int, int] | None:
    """``(row axis, row, first column, column stop)`` when the view ``vm`` is a non-empty
    prefix or suffix (within ``_SNAP`` columns) of one row along the last base axis of a
    base of 2 or more axes, step 1; else None."""
    shape = vm.base_shape
    b = len(shape) - 1
    axes = vm.axes
    if b < 1 or len(axes) != 1 or axes[0] != (b, 1):
        return None
    c0 = vm.start[b]
    c1 = c0 + vm.shape[0]
    if c1 == c0 or (c0 > _SNAP and c1 < shape[b] - _SNAP):
        return None
    return b - 1, vm.start[b - 1], c0, c1


def held_part(copies: dict, version: int, vm: ViewMap, part: tuple[int, int, int, int]):
    """``(entry, index)`` of the newest current copy holding the row part ``part`` of the view
    ``vm`` (see :func:`row_part`): a rectangle or block of rows, or a stretch of the row;
    ``entry[1][index]`` is the part.  None when no current copy holds it."""
    a, r, c0, c1 = part
    b = a + 1
    fixed = vm.start[:a]
    base = vm.base_shape
    block, line = ((a, 1), (b, 1)), ((b, 1),)
    for cm, e in reversed(copies.items()):  # the newest first: a sweep reads its last rectangle
        if e[0] != version or cm.base_shape != base or cm.start[:a] != fixed:
            continue
        axes = cm.axes
        j = c0 - cm.start[b]
        if axes == block:
            k = r - cm.start[a]
            if 0 <= k < cm.shape[0] and j >= 0 and j + c1 - c0 <= cm.shape[1]:
                return e, (k, slice(j, j + c1 - c0))
        elif axes == line and cm.start[a] == r and j >= 0 and j + c1 - c0 <= cm.shape[0]:
            return e, (slice(j, j + c1 - c0),)
    return None


def next_rectangle(copies: dict, version: int, layout, vm: ViewMap, part: tuple[int, int, int, int]):
    """The rectangle to gather for the row part ``part`` of ``vm`` that no copy holds, in a
    read-only sweep, and the part's index in it: ``(view map, index)``.  None when no copy
    is current (the storage was written since its last gather: no sweep, as Gauss-Seidel),
    or when the part alone is longer than ``BATCH``.

    Forwards (the newest current copy starts at or before row ``r``) the rectangle is
    rows ``[r, r + h)``, backwards ``(r - h, r]``, within the row owner's block, ``h``
    twice the rows of the newest copy, as many as fit in ``BATCH`` elements.  Its columns
    are the part's, snapped to the row's ends within ``_SNAP`` columns, and widened by
    ``h`` where the sweep's parts grow: a prefix's stop forwards, a suffix's start backwards.
    """
    last = None
    for cm, e in copies.items():
        if e[0] == version:
            last = cm
    a, r, c0, c1 = part
    if last is None or c1 - c0 > BATCH or len(last.start) != len(vm.start):
        return None
    b = a + 1
    shape = vm.base_shape
    n, w = shape[a], shape[b]
    h = 2 * (last.shape[0] if len(last.axes) == 2 and last.axes[0] == (a, 1) else 1)
    forward = last.start[a] <= r
    lo_c = 0 if c0 <= _SNAP else c0
    hi_c = w if c1 >= w - _SNAP else c1
    grow_hi, grow_lo = forward and hi_c < w, not forward and lo_c > 0
    for _ in range(2):  # the height that fits in BATCH, then the columns of that height
        first, stop = max(lo_c - h, 0) if grow_lo else lo_c, min(hi_c + h, w) if grow_hi else hi_c
        if h * (stop - first) <= BATCH:
            break
        h = max(1, BATCH // (stop - first))
    iv = layout.intervals[a]
    olo, ohi = iv[find_coord(iv, r)] if iv is not None else (0, n)
    lo, hi = (r, min(r + h, ohi)) if forward else (max(r + 1 - h, olo), r + 1)
    start = vm.start[:a] + (lo, first)
    rect = ViewMap(shape, start, ((a, 1), (b, 1)), (hi - lo, stop - first))
    return rect, (r - lo, slice(c0 - first, c1 - first))
