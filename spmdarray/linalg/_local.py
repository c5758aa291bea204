"""Matrix products computed on each rank's own blocks, without SUMMA.

Three layouts of the operands of ``c = a @ b`` (``a`` of shape ``(n, k)`` or
``(k,)``, ``b`` of shape ``(k, m)`` or ``(k,)``) need no panel broadcasts:

*contraction split*
    The ranks partition ``k`` alone: rank ``r`` holds ``a[:, K_r]`` and
    ``b[K_r, :]``.  Each rank multiplies its blocks into a partial ``c_r`` of
    the full result shape, and one collective combines the partials **in rank
    order** (``((c_0 + c_1) + c_2) + ...``) on every rank: an ``Allgather``, or
    a rank-ordered ``Reduce`` + ``Bcast`` above ``config.reduce_gather_bytes``.
    Every rank gets the same bits, as for :mod:`reductions
    <spmdarray.routines.reductions>` (MPI's ``Allreduce`` is never used: its
    combination order is the implementation's).  When only one operand is
    split along ``k``, the other (whole, or the smaller) is moved onto that
    operand's ``k`` intervals; the larger operand never moves.
*row split of* ``a``
    Rank ``r`` holds ``a[N_r, :]``; ``b`` is whole (replicated) or small and
    fetched whole once.  ``c[N_r] = a[N_r] @ b`` needs nothing more.
*column split of* ``b``
    The mirror image: ``c[..., M_r] = a @ b[:, M_r]``.

A result with fewer than ``config.replicate_below`` elements is replicated
(the row and column cases then all-gather the result's blocks once); a larger
one is split: over the balanced layout after a contraction split, or over
``a``'s rows (``b``'s columns) with no message at all.

Summation order.  A contraction-split product sums the partial products of
the ``k`` blocks, so its last bits may change with the rank count (as for
``sum``), never between the ranks of one run.  At one rank, and when both
operands are replicated, NumPy's own ``@`` computes the result.
"""

from __future__ import annotations

import functools

import numpy as np

from spmdarray.comm import agreement, allgather_blocks, allgather_same, errors_may_raise, reduce_bcast
from spmdarray.core import fetch as _fetch
from spmdarray.core.array import ndarray
from spmdarray.core.placement import default_layout, is_small, is_whole
from spmdarray.core.storage import Storage
from spmdarray.decomposition import Layout
from spmdarray.settings import config

__all__ = ["local_product", "slabs", "spread"]

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


def spread(ctx, full, dtype) -> ndarray:
    """A new array holding ``full`` (the same on every rank) in the default layout of its shape.

    Not collective: each rank keeps its own block of its copy.
    """
    lay = default_layout(full.shape, ctx.size)
    c = ndarray._new(Storage(ctx, lay, dtype), None)
    if lay.owned_size(ctx.rank):
        c._block[...] = full[tuple(slice(lo, hi) for lo, hi in lay.block(ctx.rank))]
    return c


def _whole(ctx, x):
    """``x``'s view whole on this rank: its block when replicated, else fetched once.  Collective."""
    if is_whole(x._layout):
        return x._block
    (loc,) = _fetch.fetch(ctx, [x], Layout.replicated(x.shape, ctx.size))
    return loc


def _on(ctx, x, axis, intervals):
    """This rank's block of ``x`` split along ``axis`` into ``intervals`` (moved when needed).  Collective."""
    if slabs(x._layout, axis) == intervals:
        return x._block
    if is_whole(x._layout):
        lo, hi = intervals[ctx.rank]
        return x._block[(slice(None),) * axis + (slice(lo, hi),)]
    (loc,) = _fetch.fetch(ctx, [x], _split_layout(x.shape, axis, intervals))
    return loc


def _multiply(ctx, be, x, y, dtype):
    """``x @ y`` of local blocks in ``dtype``; errors agreed by every rank.  Collective when errors may raise."""
    with agreement(ctx, errors_may_raise()):
        return be.asarray(x).astype(dtype, copy=False) @ be.asarray(y).astype(dtype, copy=False)


def _contraction(ctx, a, b, dtype, kslabs):
    """``a @ b`` from partial products over ``k`` blocks, combined in rank order.  Collective."""
    be = a._st.be
    part = be.to_host(_multiply(ctx, be, _on(ctx, a, a.ndim - 1, kslabs), _on(ctx, b, 0, kslabs), dtype))
    part = np.ascontiguousarray(part)
    if part.nbytes * ctx.size > config.reduce_gather_bytes:
        full = reduce_bcast(ctx.comm, part, "sum")
    else:
        parts = allgather_same(ctx.comm, part)
        full = parts[0].copy()
        for p in parts[1:]:
            full += p
    return spread(ctx, be.asarray(full), dtype)


def _free(ctx, a, b, dtype, by_rows, intervals):
    """``a @ b`` when ``a``'s rows (``by_rows``) or ``b``'s columns are split.  Collective.

    The other operand is used whole.  Each rank's product is its block of the
    result, which is split the same way (along its first or last axis), or
    all-gathered when small.
    """
    be = a._st.be
    cshape = a.shape[:-1] + b.shape[1:]
    if by_rows:
        axis, part = 0, _multiply(ctx, be, a._block, _whole(ctx, b), dtype)
    else:
        axis, part = len(cshape) - 1, _multiply(ctx, be, _whole(ctx, a), b._block, dtype)
    if is_small(cshape):
        shapes = [cshape[:axis] + (hi - lo,) + cshape[axis + 1 :] for lo, hi in intervals]
        blocks = allgather_blocks(ctx.comm, np.ascontiguousarray(be.to_host(part)), shapes)
        full = np.empty(cshape, dtype)
        for (lo, hi), blk in zip(intervals, blocks):
            full[(slice(None),) * axis + (slice(lo, hi),)] = blk
        return spread(ctx, be.asarray(full), dtype)
    c = ndarray._new(Storage(ctx, _split_layout(cshape, axis, intervals), dtype), None)
    c._block[...] = part
    return c


def local_product(ctx, a, b, dtype):
    """``a @ b`` without SUMMA when the layouts allow it, else None.  Collective.

    Parameters
    ----------
    ctx : Context
        The operands' context (more than one rank).
    a, b : ndarray
        Distributed operands, ``a`` 1-D or 2-D, ``b`` 1-D or 2-D, not both
        1-D, with matching contraction lengths (checked by the caller).
    dtype : numpy.dtype
        The result's dtype (NumPy's for these operands).

    Returns
    -------
    ndarray or None
        The product, or None (on every rank alike: the choice depends only
        on shapes and layouts) when SUMMA should compute it.
    """
    if dtype.kind not in _KINDS or a.dtype.kind not in _KINDS or b.dtype.kind not in _KINDS:
        return None
    p = ctx.size
    n = a.shape[0] if a.ndim == 2 else 1
    k = b.shape[0]
    m = b.shape[1] if b.ndim == 2 else 1
    la, lb = a._layout, b._layout
    ka, kb = slabs(la, a.ndim - 1), slabs(lb, 0)
    # Receives per rank, roughly: SUMMA's panels, against the moved operand plus the partials.
    summa = (n * k + k * m) * (p - 1) // p
    if ka is not None or kb is not None:
        if ka == kb:
            moved = 0
        elif kb is None:  # b moves onto a's k blocks (sliced locally when whole)
            moved = 0 if is_whole(lb) else b.size
        elif ka is None:
            ka, moved = kb, 0 if is_whole(la) else a.size
        else:  # both split along k, differently: the smaller moves
            ka, moved = (ka, b.size) if a.size >= b.size else (kb, a.size)
        if moved + n * m * (p - 1) <= summa:
            return _contraction(ctx, a, b, dtype, ka)
    if a.ndim == 2 and (rows := slabs(la, 0)) is not None:
        if is_whole(lb) or is_small(b.shape) or b.size * p <= a.size:
            return _free(ctx, a, b, dtype, True, rows)
    if b.ndim == 2 and (cols := slabs(lb, 1)) is not None:
        if is_whole(la) or is_small(a.shape) or a.size * p <= b.size:
            return _free(ctx, a, b, dtype, False, cols)
    return None
