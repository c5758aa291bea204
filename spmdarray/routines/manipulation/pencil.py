"""Pencil layouts: make chosen axes local to every rank, and work line by line.

A *pencil* layout of an array splits only the axes that are not being
worked on, so every rank holds whole lines along the others.  The FFT, and
``apply_along_axis``, redistribute into a pencil, work on each block with the
backend's own functions, and redistribute back.  Redistributions move only the
overlaps between the old and the new blocks (an all-to-all in general).
"""

from __future__ import annotations

from spmdarray.decomposition import Layout
from spmdarray.decomposition.blocks import block_bounds
from spmdarray.decomposition.grid import process_grid
from spmdarray.routines.manipulation.shape import redistribute

__all__ = ["pencil_layout", "is_local", "to_pencil", "with_extents"]


def pencil_layout(shape: tuple[int, ...], local: set[int], nprocs: int) -> Layout:
    """Layout of ``shape`` in which no axis in ``local`` is split.  Not collective.

    The other axes are split on the grid that :func:`process_grid` picks
    for their extents.  When every axis is local (a 1-D array, say), the
    array lives whole on rank 0 and the other ranks hold nothing.
    """
    shape = tuple(int(n) for n in shape)
    split = [a for a in range(len(shape)) if a not in local]
    if not split or nprocs == 1:
        if nprocs == 1:
            return Layout.balanced(shape, 1) if shape else Layout.replicated((), 1)
        return Layout(shape, (nprocs,), (None,), (0,), (None,) * len(shape))
    dims = dict(zip(split, process_grid(tuple(shape[a] for a in split), nprocs)))
    extents = []
    for a, n in enumerate(shape):
        if a in dims:
            extents.append(tuple(hi - lo for lo, hi in block_bounds(n, dims[a])))
        else:
            extents.append((n,))
    return Layout.from_extents(tuple(extents))


def is_local(lay: Layout, axis: int) -> bool:
    """Whether no rank's block is cut along ``axis``."""
    k = lay.grid_axis_of(axis)
    return k is None or lay.dims[k] == 1


def to_pencil(x, local):
    """``x`` itself when ``local`` axes are already whole in every block, else a pencil copy.

    Collective (a redistribution when needed).  Returns ``(array, moved)``.
    """

    lay = x._layout
    if all(is_local(lay, a) for a in local):
        return x, False
    return redistribute(x, pencil_layout(x.shape, set(local), x._st.ctx.size)), True


def with_extents(lay: Layout, new: dict[int, int]) -> Layout:
    """``lay`` with local axes ``a`` resized to ``new[a]`` (same grid).  Not collective."""
    shape = list(lay.shape)
    intervals = list(lay.intervals)
    for a, n in new.items():
        shape[a] = n
        if intervals[a] is not None:
            intervals[a] = ((0, n),)
    return Layout(tuple(shape), lay.dims, lay.gaxis, lay.gfixed, tuple(intervals))
