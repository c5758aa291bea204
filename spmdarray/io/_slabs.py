"""Hyperslab math: which part of a file dataset a box of an array covers.

Pure functions of shapes and boxes (no MPI, no h5py).  Index spaces: a *box*
is a tuple of half-open ``(lo, hi)`` ranges in the coordinates of the array
being read or written (the *view*); the *file* coordinates address the whole
dataset.  A selection ``dataset[key]`` is a :class:`ViewMap` from view to file
coordinates.

>>> from spmdarray.decomposition import ViewMap
>>> m = ViewMap.identity((10, 8)).getitem((slice(2, 9, 3), slice(None, None, -2)))
>>> m.shape
(3, 4)
>>> file_selection(m, ((0, 2), (1, 3)))   # rows 2, 5; columns 5, 3 (read as 3, 5, flipped)
((2, 3), (2, 2), (3, 2), (1,))
"""

from __future__ import annotations

from spmdarray.decomposition import Box, Layout, ViewMap, box_size

__all__ = ["file_selection", "relative", "slab_boxes", "transfers"]


def slab_boxes(box: Box, itemsize: int, limit: int) -> list[Box]:
    """Cut ``box`` into C-ordered pieces of at most ``limit`` bytes each.

    Not collective.  Pieces are runs of whole leading-axis rows; a row larger
    than ``limit`` is cut the same way along the next axis, and so on, so a
    piece exceeds ``limit`` only when a single element does.  An empty box
    gives no pieces; a 0-d box gives itself.

    >>> slab_boxes(((0, 5), (0, 4)), 8, 64)        # 2 rows of 32 bytes per piece
    [((0, 2), (0, 4)), ((2, 4), (0, 4)), ((4, 5), (0, 4))]
    >>> slab_boxes(((3, 4), (0, 10)), 8, 32)       # one row of 80 bytes: cut it
    [((3, 4), (0, 4)), ((3, 4), (4, 8)), ((3, 4), (8, 10))]
    """
    if box_size(box) == 0:
        return []
    if not box or box_size(box) * itemsize <= limit:
        return [box]
    (lo, hi), rest = box[0], box[1:]
    row = box_size(rest) * itemsize
    if row <= limit or not rest:
        rows = max(1, limit // max(1, row))
        return [((s, min(hi, s + rows)), *rest) for s in range(lo, hi, rows)]
    return [((s, s + 1), *sub) for s in range(lo, hi) for sub in slab_boxes(rest, itemsize, limit)]


def transfers(layout: Layout, rank: int, itemsize: int, limit: int, collective: bool, movers=None) -> list:
    """The slabs ``rank`` moves, one per HDF5 call, padded with None.

    Not collective.  A collective transfer needs the same number of calls on
    every rank, so the list is padded to the largest count of any rank (a
    None call moves nothing); otherwise it has this rank's slabs only.

    Parameters
    ----------
    layout : Layout
        Who holds which box.
    movers : collection of int, optional
        The ranks that move data (default: every rank holding some).

    >>> lay = Layout.balanced((10,), 2)
    >>> transfers(lay, 1, 8, 24, True), transfers(lay, 1, 8, 24, True, movers={0})
    ([((5, 8),), ((8, 10),)], [None, None])
    """

    def pieces(r: int) -> list:
        if (movers is not None and r not in movers) or not layout.owned_size(r):
            return []
        return slab_boxes(layout.block(r), itemsize, limit)

    mine: list = pieces(rank)
    calls = max(len(pieces(r)) for r in range(layout.nprocs)) if collective else len(mine)
    return mine + [None] * (calls - len(mine))


def relative(box: Box, outer: Box) -> tuple[slice, ...]:
    """Index of ``box`` inside an array holding ``outer``.  Not collective."""
    return tuple(slice(lo - olo, hi - olo) for (lo, hi), (olo, _) in zip(box, outer))


def file_selection(
    vmap: ViewMap, box: Box
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """File hyperslab of a non-empty view ``box``.  Not collective.

    Returns
    -------
    start, count, stride : tuple of int
        Per file axis, for ``H5Sselect_hyperslab`` (strides are positive;
        axes removed by an integer index have count 1).
    flip : tuple of int
        View axes with a negative step: the hyperslab lists them in
        increasing file order, so the data read must be reversed along them
        (and data to write reversed before).

    Raises
    ------
    ValueError
        If the view permutes file axes (selections never do).
    """
    start = list(vmap.start)
    count = [1] * len(vmap.base_shape)
    stride = [1] * len(vmap.base_shape)
    flip = []
    last = -1
    for v, ((b, step), (lo, hi)) in enumerate(zip(vmap.axes, box)):
        if b < 0:
            continue
        if b < last:
            raise ValueError(f"file_selection: view axes {vmap.axes} permute the file axes")
        last = b
        if step > 0:
            start[b] = vmap.start[b] + lo * step
        else:
            start[b] = vmap.start[b] + (hi - 1) * step
            flip.append(v)
        count[b] = hi - lo
        stride[b] = abs(step)
    return tuple(start), tuple(count), tuple(stride), tuple(flip)
