"""Balanced block partitions: the one ``divmod`` formula used everywhere.

All indices here are *global*, zero-based and half-open: ``(lo, hi)`` means
``range(lo, hi)``.  Leftover elements go to the lowest coordinates, and a
coordinate may own an empty block when there are more parts than elements.

>>> block_bounds(12, 4)
((0, 3), (3, 6), (6, 9), (9, 12))
>>> block_bounds(10, 4)
((0, 3), (3, 6), (6, 8), (8, 10))
>>> block_bounds(2, 4)
((0, 1), (1, 2), (2, 2), (2, 2))
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["block_bounds", "block_of", "find_coord"]


def block_of(n: int, parts: int, coord: int) -> tuple[int, int]:
    """Return the half-open global range owned by ``coord`` of ``parts``.

    Not collective.

    Parameters
    ----------
    n : int
        Global extent of the axis (``>= 0``).
    parts : int
        Number of blocks (``>= 1``).
    coord : int
        Block number, ``0 <= coord < parts``.

    Returns
    -------
    tuple of int
        ``(lo, hi)`` with ``hi - lo`` equal to ``n // parts`` plus one for the
        first ``n % parts`` coordinates.
    """
    if parts < 1 or not 0 <= coord < parts or n < 0:
        raise ValueError(f"block_of needs n >= 0 and 0 <= coord < parts; got n={n}, parts={parts}, coord={coord}")
    q, r = divmod(n, parts)
    lo = coord * q + min(coord, r)
    return lo, lo + q + (1 if coord < r else 0)


@lru_cache(maxsize=4096)
def block_bounds(n: int, parts: int) -> tuple[tuple[int, int], ...]:
    """Return every block of a balanced partition of ``n`` into ``parts``.

    Not collective.

    Parameters
    ----------
    n : int
        Global extent of the axis.
    parts : int
        Number of blocks.

    Returns
    -------
    tuple of (int, int)
        One ``(lo, hi)`` per coordinate, in coordinate order.
    """
    return tuple(block_of(n, parts, c) for c in range(parts))


def find_coord(intervals: tuple[tuple[int, int], ...], index: int) -> int:
    """Return the coordinate whose interval holds ``index``.

    Not collective.  ``intervals`` may be in any order (views with negative
    steps list them in decreasing order); empty intervals never match.

    Raises
    ------
    IndexError
        If no interval holds ``index``.
    """
    for c, (lo, hi) in enumerate(intervals):
        if lo <= index < hi:
            return c
    raise IndexError(f"index {index} is not inside any block of {intervals}")
