"""Where new arrays live: small arrays whole on every rank, the others split.

An array with fewer than ``config.replicate_below`` elements gets
:meth:`Layout.replicated <spmdarray.decomposition.Layout.replicated>`: every
rank holds all of it, computes on it redundantly and reads or writes its
elements without messages.  Larger arrays get the balanced block layout.
:func:`result_layout` is the one rule an operation's result follows.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from spmdarray.comm import allgather_blocks, bcast_array
from spmdarray.decomposition import Layout, ViewMap, box_size, unravel
from spmdarray.settings import config

__all__ = ["default_layout", "gather_view", "is_small", "is_whole", "result_layout", "sole_holder", "stretch"]


def is_small(shape) -> bool:
    """Whether an array of ``shape`` is replicated by default.  Not collective."""
    return math.prod(shape) < config.replicate_below


def default_layout(shape: tuple[int, ...], nprocs: int) -> Layout:
    """The layout of a new array of ``shape``: replicated when small, else balanced.  Not collective.

    Every rank must see the same ``config.replicate_below`` (an agreed setting).
    """
    if shape and math.prod(shape) < config.replicate_below:
        return Layout.replicated(shape, nprocs)
    return Layout.balanced(shape, nprocs)


@lru_cache(maxsize=4096)
def is_whole(layout: Layout) -> bool:
    """Whether every rank holds the whole array (replicated on every grid axis).  Not collective.

    A split layout on one rank is not whole: it takes the distributed paths.
    Cached per layout (asked for every operand of every operation).
    """
    return all(a is None and f is None for a, f in zip(layout.gaxis, layout.gfixed))


def result_layout(operands, shape: tuple[int, ...], nprocs: int, readable=None) -> Layout | None:
    """The layout a small result takes, or None to let the distributed operands decide.  Not collective.

    A result stays replicated while it is small and no operand anchors it: an
    operand anchors the result when it is split (not whole) and has the
    result's shape, and is a base array (a ``from_local`` array keeps its
    layout) or the slice of a loop over an axis (:func:`_loop_slice`: a row,
    a column, a slab).  A small block ``A[:, :k]`` of a split axis does not
    anchor: it usually feeds whole-array routines (``reshape``, ``repeat``),
    which are NumPy's own calls on replicas.  A
    row ``A[i, :]`` of a row-split array lives on one rank, so
    ``A[i, :] * 2 + A[i - 1, :]`` is computed by that rank alone and
    ``B[i, :] = ...`` of the result sends nothing; a column ``A[:, j]`` is
    computed by every rank on its own rows.  Replicating such a result would
    gather or broadcast every operand.  A slice for which ``readable(a)`` is
    true (every rank already holds a current copy of it, see
    :func:`spmdarray.core.element.has_copy`) does not anchor: reading it
    whole costs nothing.  A large result (past the threshold) is never
    replicated here.
    """
    if not shape or math.prod(shape) >= config.replicate_below:
        return None
    for a in operands:
        m = getattr(a, "_map", None)
        if m is None or m.shape != shape or m.broadcast_axes:
            continue
        if is_whole(a._layout):
            continue
        if m.is_identity or (_loop_slice(a._s.layout, m) and (readable is None or not readable(a))):
            return None
    lone = _one_holder(operands, shape, readable)
    return lone if lone is not None else Layout.replicated(shape, nprocs)


def _one_holder(operands, shape: tuple[int, ...], readable) -> Layout | None:
    """Owner computes: the layout of a small result whose split operands all lie on one rank.

    Every split operand that no current copy holds (``readable``) must be a view
    that one rank holds whole, every other rank's block being empty (a window
    ``x[:, i:i + k, j:j + k, :, None]`` inside one rank's rows), and the same rank
    for all of them; and one of them must broadcast to a larger shape than its
    own (a product with a replicated ``w[None]`` that a reduction then sums).
    The result is then computed there, on the first such operand's layout
    stretched to the result's shape (:func:`stretch`): the other ranks hold
    empty blocks and nothing moves.  None (replicate) otherwise: a block of
    the result's own shape (``ii[:, :k] * jj[:, :k]``) usually feeds
    whole-array routines (``reshape``, ``repeat``), NumPy's calls on replicas.
    Not collective; every rank decides alike from the layouts.
    """
    found, holder, stretched = None, None, False
    for a in operands:
        m = getattr(a, "_map", None)
        if m is None or is_whole(a._layout) or (readable is not None and readable(a)):
            continue
        h = sole_holder(a._layout)
        if h is None or m.broadcast_axes or (holder is not None and h != holder):
            return None
        stretched = stretched or m.shape != shape
        if found is None:
            found, holder = a._layout, h
    return stretch(found, shape) if stretched else None


@lru_cache(maxsize=4096)
def sole_holder(layout: Layout) -> int | None:
    """The one rank holding any element of a layout that several ranks share, or None.  Not collective.

    None when no rank or more than one rank holds elements (a replicated grid
    axis of several coordinates has as many holders), or on one rank.
    """
    if layout.nprocs == 1:
        return None
    holders = [r for r in range(layout.nprocs) if layout.owned_size(r)]
    return holders[0] if len(holders) == 1 else None


@lru_cache(maxsize=4096)
def stretch(layout: Layout, shape: tuple[int, ...]) -> Layout:
    """A one-holder operand's layout extended to the broadcast ``shape``.  Not collective.

    New leading axes are whole; a length-1 axis stretched to a longer one is
    whole, and the grid axis that split it becomes fixed at the holder's
    coordinate.  The other axes keep their intervals, so the holder's block is
    the whole result and every other rank's block is empty.
    """
    off = len(shape) - layout.ndim
    holder = sole_holder(layout)
    coords = unravel(holder, layout.dims)
    gaxis, gfixed = list(layout.gaxis), list(layout.gfixed)
    intervals: list = [None] * off
    for a, n in enumerate(layout.shape):
        k = layout.grid_axis_of(a)
        if k is None:
            intervals.append(None)
        elif n == 1 and shape[a + off] != 1:
            gaxis[k], gfixed[k] = None, coords[k]
            intervals.append(None)
        else:
            gaxis[k] = a + off
            intervals.append(layout.intervals[a])
    return Layout(tuple(shape), layout.dims, tuple(gaxis), tuple(gfixed), tuple(intervals))


#: Elements a view may leave out of a split axis and still span it (see :func:`_loop_slice`).
_SHIFT = 2


@lru_cache(maxsize=4096)
def _loop_slice(base: Layout, m: ViewMap) -> bool:
    """Whether the view is a slice of a loop over an axis: it indexes some base axis with
    an integer (a row ``A[i, :]``, a column ``A[:, j]``, a slab ``A[:, :, k]``), and
    either that axis is split or the view spans every split axis whole, or whole but
    for at most :data:`_SHIFT` elements (a shifted slab ``w[1:, :, k]`` or ``w[:-1, :, k]``
    of a stencil, whose siblings then exchange halos instead of being gathered).  A block
    ``A[:, :k]`` of a split axis (an operand of a whole-array computation) is not."""
    walked = {}
    for (b, step), n in zip(m.axes, m.shape):
        if b >= 0:
            walked[b] = n >= m.base_shape[b] - _SHIFT and abs(step) == 1
    dropped = [b for b in range(len(m.base_shape)) if b not in walked]
    split = [b for b, iv in enumerate(base.intervals) if iv is not None and len(iv) > 1]
    if not dropped:
        return False
    return any(b in split for b in dropped) or all(walked.get(b, False) for b in split)


def gather_view(st, vmap: ViewMap, lay: Layout, out: np.ndarray | None = None) -> np.ndarray:
    """The view ``vmap`` of storage ``st`` (view layout ``lay``) whole on every rank, in host memory.

    Collective: one ``Allgatherv`` of the primary copy of every block, or one
    ``Bcast`` when a single rank holds it all (a row of a row-split array);
    nothing when every rank holds it all (a replicated array, or one rank).
    ``out``: a C-ordered host array of the view's shape and dtype to hold the
    result (a reused buffer); None allocates one.
    """
    ctx, be = st.ctx, st.be
    if ctx.size == 1 or is_whole(lay):
        mine = be.to_host(st.view_of(vmap, lay.block(ctx.rank)))
        if out is None:
            return np.array(mine, copy=True)
        np.copyto(out, mine)
        return out
    owners = set(lay.owners())
    holders = [r for r in sorted(owners) if box_size(lay.block(r))]
    mine = be.to_host(st.view_of(vmap, lay.block(ctx.rank))) if ctx.rank in owners else None
    if len(holders) == 1:
        root = holders[0]
        return bcast_array(ctx, mine if ctx.rank == root else None, root, vmap.shape, st.dtype, out)
    shapes = [tuple(hi - lo for lo, hi in lay.block(r)) if r in owners else (0,) for r in range(ctx.size)]
    parts = allgather_blocks(ctx.comm, mine if mine is not None else np.empty((0,), st.dtype), shapes)
    if out is None:
        out = np.empty(vmap.shape, st.dtype)
    for r, part in enumerate(parts):
        if r in owners:
            box = lay.block(r)
            if box_size(box):
                out[tuple(slice(lo, hi) for lo, hi in box)] = part
    return out
