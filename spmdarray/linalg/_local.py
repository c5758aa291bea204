"""Matrix products computed on each rank's own blocks, without SUMMA.

Three layouts of the operands of ``c = a @ b`` (``a`` of shape ``(..., n, k)``
or ``(k,)``, ``b`` of shape ``(k, m)`` or ``(k,)``; only ``a`` may be a stack)
need no panel broadcasts:

*contraction split*
    The ranks partition ``k`` alone: rank ``r`` holds ``a[..., K_r]`` and
    ``b[K_r, :]``.  Each rank multiplies its blocks into a partial ``c_r`` of
    the full result shape, and one collective combines the partials **in rank
    order**.  A small result is all-gathered and summed on every rank as
    ``((c_0 + c_1) + c_2) + ...`` (replicated: every rank gets the same bits,
    as for :mod:`reductions <spmdarray.routines.reductions>`; MPI's
    ``Allreduce`` is never used, its combination order is the
    implementation's); a larger one is reduce-scattered onto the balanced
    layout of its shape with a non-commutative operation (each rank receives
    only its block, each element is combined once).  When only one operand is
    split along ``k``, the other (whole, or the smaller) is moved onto that
    operand's ``k`` intervals; the larger operand never moves.
*rows of* ``a`` *split*
    ``a``'s last axis is whole on every rank that holds a block (its other
    axes split any way); ``b`` is whole (replicated) or small and fetched
    whole once.  Each rank's ``a_block @ b`` is its block of the result, laid
    out as ``a``: no message.  This covers stacks ``(..., n, k) @ (k, m)``.
*columns of* ``b`` *split*
    The mirror image for a 1-D or 2-D ``a``: ``c[..., M_r] = a @ b[:, M_r]``.

A result with fewer than ``config.replicate_below`` elements is replicated
(the row and column cases then all-gather the result's blocks once).

Summation order.  A contraction-split product sums the partial products of
the ``k`` blocks, so its last bits may change with the rank count (as for
``sum``), never between the ranks of one run.  At one rank, when both
operands are replicated and for two small vectors, NumPy's own ``@``
computes the result (:func:`spmdarray.linalg._summa.matmul_2d`).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from spmdarray.backend.backends import backend_of
from spmdarray.comm import (
    agreement,
    allgather_blocks,
    allgather_same,
    errors_may_raise,
    reduce_scatter_blocks,
)
from spmdarray.core import fetch as _fetch
from spmdarray.core.array import ndarray
from spmdarray.core.placement import default_layout, is_small, is_whole
from spmdarray.core.storage import Storage
from spmdarray.core.whole import wrap
from spmdarray.decomposition import Layout, block_bounds, cells_to_receive

__all__ = ["keeps", "local_product", "slabs", "spread"]

_KINDS = "biufc"


@functools.lru_cache(maxsize=4096)
def slabs(lay: Layout, axis: int) -> tuple[tuple[int, int], ...] | None:
    """Per rank, in rank order, the interval of ``axis`` it holds, when the ranks partition ``axis`` alone.

    Not collective; pure and cached.  Every rank must hold all of the other
    axes, and the intervals must be disjoint and cover the axis (empty ones
    allowed).  Otherwise (a replica along some grid axis, a fixed grid axis,
    another axis split) the answer is None.

    Examples
    --------
    >>> rows = Layout.balanced((7, 3), 2)      # rows (0, 4) and (4, 7)
    >>> slabs(rows, 0), slabs(rows, 1)
    (((0, 4), (4, 7)), None)
    >>> slabs(Layout.replicated((7, 3), 2), 0) is None
    True
    """
    n = lay.shape[axis]
    out = []
    for r in range(lay.nprocs):
        if not lay.holds(r):
            return None
        box = lay.block(r)
        if any(ax != axis and lohi != (0, lay.shape[ax]) for ax, lohi in enumerate(box)):
            return None
        out.append(box[axis])
    covered = 0
    for lo, hi in sorted(iv for iv in out if iv[1] > iv[0]):
        if lo != covered:
            return None
        covered = hi
    return tuple(out) if covered == n else None


def _split_layout(shape: tuple[int, ...], axis: int, intervals) -> Layout:
    """One grid axis over every rank, splitting ``axis`` into ``intervals`` (rank order).  Not collective."""
    return Layout(
        tuple(shape),
        (len(intervals),),
        (axis,),
        (None,),
        tuple(tuple(intervals) if a == axis else None for a in range(len(shape))),
    )


@functools.lru_cache(maxsize=1024)
def keeps(lay: Layout, axis: int) -> Layout | None:
    """``lay`` with ``axis`` marked whole, when every rank holds a block with all of ``axis``; else None.

    Not collective; pure and cached.  A grid axis of length 1 over ``axis``
    becomes a replicated one (the same blocks), so that ``axis`` can be
    dropped or resized.
    """
    if any(f is not None for f in lay.gfixed):
        return None
    if any(a == axis and d > 1 for a, d in zip(lay.gaxis, lay.dims)):
        return None
    gaxis = tuple(None if a == axis else a for a in lay.gaxis)
    intervals = tuple(None if a == axis else iv for a, iv in enumerate(lay.intervals))
    return Layout(lay.shape, lay.dims, gaxis, lay.gfixed, intervals)


def _boxed(box) -> tuple[slice, ...]:
    return tuple(slice(lo, hi) for lo, hi in box)


def spread(ctx, full, dtype) -> ndarray:
    """A new array holding ``full`` (the same on every rank) in the default layout of its shape.

    Not collective: each rank keeps its own block of its copy.  A host result
    takes :func:`~spmdarray.core.whole.wrap`'s path (its result kinds are
    cached per shape, and a replicated one adopts ``full`` when it owns its data).
    """
    be = backend_of(ctx)
    if type(full) is np.ndarray and not be.is_device:
        return wrap(ctx, be, full.astype(dtype, copy=False))
    lay = default_layout(full.shape, ctx.size)
    c = ndarray._new(Storage(ctx, lay, dtype), None)
    if lay.owned_size(ctx.rank):
        c._block[...] = full[_boxed(lay.block(ctx.rank))]
    return c


def _fetched(ctx, x, lay: Layout):
    """This rank's block of ``x`` laid out as ``lay`` (an empty array when it holds none).  Collective."""
    (loc,) = _fetch.fetch(ctx, [x], lay)
    if loc is None:
        loc = x._st.be.asarray(np.empty(tuple(hi - lo for lo, hi in lay.block(ctx.rank)), x.dtype))
    return loc


def _whole(ctx, x):
    """``x``'s view whole on this rank: its block when replicated, else fetched once.  Collective."""
    if is_whole(x._layout):
        return x._block
    return _fetched(ctx, x, Layout.replicated(x.shape, ctx.size))


def _on(ctx, x, axis, intervals):
    """This rank's block of ``x`` split along ``axis`` into ``intervals`` (moved when needed).  Collective."""
    if slabs(x._layout, axis) == intervals:
        return x._block
    if is_whole(x._layout):
        lo, hi = intervals[ctx.rank]
        return x._block[(slice(None),) * axis + (slice(lo, hi),)]
    return _fetched(ctx, x, _split_layout(x.shape, axis, intervals))


def _multiply(ctx, be, x, y, dtype):
    """``x @ y`` of local blocks in ``dtype`` as a host array (None when ``x`` is None).

    Collective when errors may raise: every rank agrees on any error.
    """
    if not errors_may_raise():
        return _product(be, x, y, dtype)
    with agreement(ctx):
        return _product(be, x, y, dtype)


def _product(be, x, y, dtype):
    """``x @ y`` of local blocks in ``dtype`` as a host array; None when ``x`` is None.  Not collective."""
    if x is None:
        return None
    return np.asarray(be.to_host(be.asarray(x).astype(dtype, copy=False) @ be.asarray(y).astype(dtype, copy=False)))


def _result(ctx, be, full, dtype):
    """``full`` (the same on every rank) as the product: a NumPy scalar when 0-d, else :func:`spread`."""
    return full[()] if not full.ndim else spread(ctx, be.asarray(full), dtype)


def _contraction(ctx, a, b, dtype, kslabs):
    """``a @ b`` from partial products over ``k`` blocks, combined in rank order.  Collective."""
    be = a._st.be
    part = _multiply(ctx, be, _on(ctx, a, a.ndim - 1, kslabs), _on(ctx, b, 0, kslabs), dtype)
    lay = default_layout(part.shape, ctx.size)
    if not is_whole(lay):  # large: each rank receives the sum of its own block only
        blocks = [part[_boxed(lay.block(r))] for r in range(ctx.size)]
        c = ndarray._new(Storage(ctx, lay, dtype), None)
        c._block[...] = be.asarray(reduce_scatter_blocks(ctx.comm, blocks, "sum"))
        return c
    parts = allgather_same(ctx.comm, part.reshape(-1))
    full = parts[0].copy()
    for p in parts[1:]:
        full += p
    return _result(ctx, be, full.reshape(part.shape), dtype)


def _free(ctx, a, b, dtype, by_rows):
    """``a @ b`` when ``a``'s last axis (``by_rows``) or ``b``'s first is whole on every rank.  Collective.

    The other operand is used whole.  Each rank's product is its block of the
    result, laid out as the split operand, or all-gathered when small.
    """
    be = a._st.be
    cshape = a.shape[:-1] + b.shape[1:]
    if by_rows:
        la, part = keeps(a._layout, a.ndim - 1), _multiply(ctx, be, a._block, _whole(ctx, b), dtype)
        axes = range(a.ndim - 1) if b.ndim == 1 else range(a.ndim)
    else:
        la, part = keeps(b._layout, 0), _multiply(ctx, be, _whole(ctx, a), b._block, dtype)
        axes = (1,) if a.ndim == 1 else (0, 1)
    part = be.asarray(part)
    src = la.take_axes(tuple(axes))
    lay = Layout(cshape, src.dims, src.gaxis, src.gfixed, src.intervals)
    if not is_small(cshape):
        c = ndarray._new(Storage(ctx, lay, dtype), None)
        c._block[...] = part
        return c
    owners = set(lay.owners())
    shapes = [tuple(hi - lo for lo, hi in lay.block(r)) if r in owners else (0,) * len(cshape) for r in range(ctx.size)]
    mine = np.ascontiguousarray(be.to_host(part)) if ctx.rank in owners else np.empty(shapes[ctx.rank], dtype)
    full = np.empty(cshape, dtype)
    for r, blk in enumerate(allgather_blocks(ctx.comm, mine, shapes)):
        if r in owners:
            full[_boxed(lay.block(r))] = blk
    return spread(ctx, be.asarray(full), dtype)


@functools.lru_cache(maxsize=1024)
def _summa_cost(la: Layout, lb: Layout, p: int) -> int:
    """Elements one rank receives, on average, in SUMMA's ``a @ b`` from layouts ``la`` and ``lb``.  Pure; cached.

    The redistributions onto SUMMA's layouts (all of a vector), then the
    panels: ``A``'s along grid rows, ``B``'s along grid columns.
    """
    n = la.shape[0] if len(la.shape) == 2 else 1
    k = lb.shape[0]
    m = lb.shape[1] if len(lb.shape) == 2 else 1
    pr, pc = Layout.balanced((n, m), p).dims
    move = 0
    for lay, (r, c), (gr, gc) in ((la, (n, k), (pr, pc)), (lb, (k, m), (pr, pc))):
        if len(lay.shape) == 2:
            dst = Layout((r, c), (gr, gc), (0, 1), (None, None), (block_bounds(r, gr), block_bounds(c, gc)))
            move += cells_to_receive(lay, dst)
        else:
            move += math.prod(lay.shape) * (p - 1)
    return move // p + n * k * (pc - 1) // (pr * pc) + k * m * (pr - 1) // (pr * pc)


def local_product(ctx, a, b, dtype):
    """``a @ b`` without SUMMA or a batch redistribution when the layouts allow it, else None.  Collective.

    Parameters
    ----------
    ctx : Context
        The operands' context (more than one rank).
    a, b : ndarray
        Distributed operands with matching contraction lengths (checked by
        the caller): ``a`` 1-D, 2-D or a stack, ``b`` 1-D or 2-D.  Two
        vectors give a NumPy scalar.
    dtype : numpy.dtype
        The result's dtype (NumPy's for these operands, or the ``dtype=``
        asked for).

    Returns
    -------
    ndarray or None
        The product, or None (on every rank alike: the choice depends only
        on shapes and layouts) when the general path should compute it.
    """
    if dtype.kind not in _KINDS or a.dtype.kind not in _KINDS or b.dtype.kind not in _KINDS:
        return None
    p = ctx.size
    k = b.shape[0]
    n = a.size // k if k else math.prod(a.shape[:-1])
    m = b.shape[1] if b.ndim == 2 else 1
    la, lb = a._layout, b._layout
    small = is_whole(default_layout(a.shape[:-1] + b.shape[1:], p))
    # Elements a rank receives, roughly: the moved operand and the partials here, against
    # SUMMA's redistributions and panels, or (stacks) the batch layout of both operands.
    ka, kb = slabs(la, a.ndim - 1), slabs(lb, 0)
    if ka is not None or kb is not None:
        if ka == kb:
            moved = 0
        elif kb is None:  # b moves onto a's k blocks (sliced locally when whole)
            moved = 0 if is_whole(lb) else b.size
        elif ka is None:
            ka, moved = kb, 0 if is_whole(la) else a.size
        else:  # both split along k, differently: the smaller moves
            ka, moved = (ka, b.size) if a.size >= b.size else (kb, a.size)
        rival = _summa_cost(la, lb, p) if a.ndim <= 2 else (n * k + k * m) * (p - 1) // p
        if moved * (p - 1) // p + n * m * (p - 1) // (1 if small else p) <= rival:
            return _contraction(ctx, a, b, dtype, ka)
    if a.ndim >= 2 and not is_whole(la) and keeps(la, a.ndim - 1) is not None:
        if is_whole(lb) or is_small(b.shape) or b.size * p <= a.size:
            return _free(ctx, a, b, dtype, True)
    if a.ndim <= 2 and b.ndim == 2 and not is_whole(lb) and keeps(lb, 0) is not None:
        if is_whole(la) or is_small(a.shape) or a.size * p <= b.size:
            return _free(ctx, a, b, dtype, False)
    return None
