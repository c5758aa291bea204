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

The functions here look at a storage's ``copies`` (view map -> ``[version,
host array, handed out]``, see :mod:`spmdarray.core.element`) and say which
region to read or gather; :mod:`~spmdarray.core.element` gathers it.  None
is collective.  :func:`next_rectangle` records the last miss per storage
(every rank misses alike, so every rank keeps the same record), from which
the columns of the next rectangle follow parts that grow at other rates.

>>> from spmdarray.decomposition import ViewMap
>>> m = ViewMap.identity((8, 8)).getitem((5, slice(0, 5)))
>>> row_part(m)
(0, 5, 0, 5)
>>> row_part(ViewMap.identity((80, 80)).getitem((5, slice(20, 40)))) is None  # a stretch in between
True
"""

from __future__ import annotations

import math
import weakref

from spmdarray.decomposition import ViewMap, find_coord

__all__ = ["BATCH", "SNAP", "held_part", "next_rectangle", "row_part"]

BATCH = 1 << 18  # elements: the most a rectangle (or a block of whole rows) gathered in a sweep holds
SNAP = 16  # columns: a part starting this close to column 0 is a prefix, one ending this close to the end a suffix


def row_part(vm: ViewMap) -> tuple[int, int, int, int] | None:
    """``(row axis, row, first column, column stop)`` when the view ``vm`` is a non-empty
    prefix or suffix (within ``SNAP`` columns) of one row along the last base axis of a
    base of 2 or more axes, step 1; else None."""
    shape = vm.base_shape
    b = len(shape) - 1
    axes = vm.axes
    if b < 1 or len(axes) != 1 or axes[0] != (b, 1):
        return None
    c0 = vm.start[b]
    c1 = c0 + vm.shape[0]
    if c1 == c0 or (c0 > SNAP and c1 < shape[b] - SNAP):
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


def next_rectangle(st, vm: ViewMap, part: tuple[int, int, int, int]):
    """The rectangle of storage ``st`` to gather for the row part ``part`` of ``vm`` that no
    copy holds, in a read-only sweep, and the part's index in it: ``(view map, index)``.
    None when no copy is current (the storage was written since its last gather: no sweep,
    as Gauss-Seidel), or when the part alone is longer than ``BATCH``.

    Forwards (the newest current copy starts at or before row ``r``) the rectangle is
    rows ``[r, r + h)``, backwards ``(r - h, r]``, within the row owner's block, ``h``
    twice the rows of the newest copy, as many as fit in ``BATCH`` elements.  Its columns
    are the part's, one more on each side (the diagonal next to a prefix or a suffix),
    widened by what the parts of the next ``h - 1`` rows need: the parts' ends move as they
    did since the last miss (:data:`_MISSES`; before one, a prefix's stop grows one column
    a row forwards, a suffix's start one column a row backwards, as in a triangular solve).
    Columns within ``SNAP`` of the row's ends reach them.
    """
    copies, version = st.copies, st.version
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
    grow_lo, grow_hi = _rates(st, r, c0, c1, forward)
    for _ in range(2):  # the height that fits in BATCH, then the columns of that height
        first = c0 - math.ceil(grow_lo * (h - 1)) - 1
        stop = c1 + math.ceil(grow_hi * (h - 1)) + 1
        first = 0 if first <= SNAP else first
        stop = w if stop >= w - SNAP else stop
        if h * (stop - first) <= BATCH:
            break
        h = max(1, BATCH // (stop - first))
    iv = st.layout.intervals[a]
    olo, ohi = iv[find_coord(iv, r)] if iv is not None else (0, n)
    lo, hi = (r, min(r + h, ohi)) if forward else (max(r + 1 - h, olo), r + 1)
    start = vm.start[:a] + (lo, first)
    rect = ViewMap(shape, start, ((a, 1), (b, 1)), (hi - lo, stop - first))
    return rect, (r - lo, slice(c0 - first, c1 - first))


#: storage -> [row, first column, column stop] of the last row part that missed every copy
#: (:func:`next_rectangle`).  Every rank misses alike and keeps the same record.  Held
#: weakly and never evicted: an entry goes with its storage, so that no rank can drop a live
#: storage's record that another rank keeps (its rectangles, and collectives, would differ).
_MISSES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _rates(st, r: int, c0: int, c1: int, forward: bool) -> tuple[float, float]:
    """Columns per row by which the parts' start falls and stop rises along the sweep, from
    the last miss (recorded here for the next); a triangular solve's before any."""
    m = _MISSES.get(st)
    if m is None:
        m = _MISSES[st] = [None, 0, 0]
    rows = r - m[0] if m[0] is not None else 0
    if rows and (rows > 0) == forward:
        rows = abs(rows)
        rates = max(m[1] - c0, 0) / rows, max(c1 - m[2], 0) / rows
    else:
        rates = (0.0, 1.0) if forward else (1.0, 0.0)
    m[0], m[1], m[2] = r, c0, c1
    return rates
