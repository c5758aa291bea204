"""Process grids chosen from the array's shape.

``MPI_Dims_create`` only balances the factors of the rank count and its
result varies between MPI implementations.  :func:`process_grid` instead
scores every ordered factorisation of the rank count by the largest block a
rank must compute plus the halo surface it must exchange, so the answer
depends on the shape, is the same under every MPI, and needs no MPI at all.

>>> process_grid((4002, 4002), 4)
(2, 2)
>>> process_grid((5, 1000), 4)
(1, 4)
>>> process_grid((3,), 8)
(8,)
"""

from __future__ import annotations

import math
from functools import lru_cache

__all__ = ["process_grid", "factorisations"]

# Relative cost of exchanging one halo cell against computing one cell.
_SURFACE_WEIGHT = 4


@lru_cache(maxsize=1024)
def factorisations(n: int, k: int) -> tuple[tuple[int, ...], ...]:
    """Return every ordered tuple of ``k`` positive integers whose product is ``n``.

    Not collective.

    >>> factorisations(4, 2)
    ((1, 4), (2, 2), (4, 1))
    """
    if k == 0:
        return ((),) if n == 1 else ()
    if k == 1:
        return ((n,),)
    out = []
    for d in range(1, n + 1):
        if n % d == 0:
            out.extend((d, *rest) for rest in factorisations(n // d, k - 1))
    return tuple(out)


def _score(shape: tuple[int, ...], dims: tuple[int, ...], rounded: bool = True) -> float:
    """Largest block plus weighted halo surface; with ``rounded=False``, of blocks of ``n / d`` elements."""
    local = [math.ceil(n / d) if rounded else n / d for n, d in zip(shape, dims)]
    volume = math.prod(local)
    surface = 0
    for axis, d in enumerate(dims):
        if d > 1:
            face = math.prod(local[:axis] + local[axis + 1 :])
            surface += min(2, d - 1) * face
    return volume + _SURFACE_WEIGHT * surface


@lru_cache(maxsize=4096)
def process_grid(shape: tuple[int, ...], nprocs: int) -> tuple[int, ...]:
    """Choose a process grid for an array of ``shape`` on ``nprocs`` ranks.

    Not collective.

    Parameters
    ----------
    shape : tuple of int
        Global array shape.  A 0-d shape gets the grid ``(nprocs,)``.
    nprocs : int
        Number of ranks, any positive integer (primes included).

    Returns
    -------
    tuple of int
        ``len(shape)`` factors (one for 0-d) whose product is ``nprocs``,
        minimising the largest block plus the weighted halo surface per rank;
        among the grids that score no worse with blocks of fractional size, the
        one with the largest factors on the leading axes.
    """
    if nprocs < 1:
        raise ValueError(f"process_grid needs nprocs >= 1, got {nprocs}")
    shape = tuple(int(n) for n in shape)
    if not shape:
        return (nprocs,)
    grids = factorisations(nprocs, len(shape))
    best = min(_score(shape, dims) for dims in grids)
    # Rounding blocks up to whole elements must not decide: a grid that would score as
    # well with fractional blocks ties with the best, and leading axes win ties (their
    # halos are contiguous in C order).  So (61, 60, 40) on 2 ranks splits axis 0, as
    # (60, 60, 40) does, and ``w[1:] + a`` exchanges at most a halo row instead of
    # redistributing.
    return max(dims for dims in grids if _score(shape, dims, rounded=False) <= best)
