"""Theoretical minimum communication of the halo workloads, from block boxes.

A box is a tuple of half-open global ``(lo, hi)`` ranges, one per axis, as
``Layout.block(rank)`` gives them.  The functions here take the boxes as
plain tuples and use no MPI, so the tests and the report can apply them to
any layout.
"""

from __future__ import annotations

Box = tuple[tuple[int, int], ...]


def _overlap(a: Box, b: Box) -> int:
    n = 1
    for (alo, ahi), (blo, bhi) in zip(a, b):
        n *= max(0, min(ahi, bhi) - max(alo, blo))
    return n


def halo_min_cells(blocks: list[Box], shape: tuple[int, ...]) -> list[int]:
    """Cells each rank must send per sweep of a radius-1 star stencil.

    The stencil (5-point in 2-D, 7-point in 3-D) updates the interior of a
    grid of ``shape`` (every index but the first and last along each axis).
    The rank owning an interior cell computes it and reads its ``2 * ndim``
    neighbours; every neighbour it does not own must be sent by its owner,
    once per receiving rank and direction.

    Parameters
    ----------
    blocks : list of Box
        The box each rank owns, in rank order; disjoint, covering the grid.
    shape : tuple of int
        Global shape of the grid, boundary included.

    Returns
    -------
    list of int
        Cells sent by each rank.

    Examples
    --------
    Two ranks splitting a 6 x 6 grid by rows: each sends the 4 interior cells
    of its edge row.

    >>> halo_min_cells([((0, 3), (0, 6)), ((3, 6), (0, 6))], (6, 6))
    [4, 4]

    A 2 x 2 grid of blocks: each rank sends two half-faces of 2 cells.

    >>> b = [((0, 3), (0, 3)), ((0, 3), (3, 6)), ((3, 6), (0, 3)), ((3, 6), (3, 6))]
    >>> halo_min_cells(b, (6, 6))
    [4, 4, 4, 4]
    """
    interior = tuple((1, n - 1) for n in shape)
    sent = [0] * len(blocks)
    for recv, rbox in enumerate(blocks):
        comp = tuple((max(lo, ilo), min(hi, ihi)) for (lo, hi), (ilo, ihi) in zip(rbox, interior))
        if any(lo >= hi for lo, hi in comp):
            continue
        for axis in range(len(shape)):
            for d in (-1, 1):
                read = tuple((lo + d, hi + d) if a == axis else (lo, hi) for a, (lo, hi) in enumerate(comp))
                for src, sbox in enumerate(blocks):
                    if src != recv:
                        sent[src] += _overlap(read, sbox)
    return sent


def halo_min_bytes(blocks: list[Box], shape: tuple[int, ...], itemsize: int = 8) -> list[int]:
    """``halo_min_cells`` in bytes, for elements of ``itemsize`` bytes."""
    return [c * itemsize for c in halo_min_cells(blocks, shape)]
