"""Distributed matrix products (SUMMA).

``C = A @ B`` on a ``pr x pc`` grid: ``A`` is laid out with C's row blocks
and ``k`` split over grid columns, ``B`` with ``k`` split over grid rows and
C's column blocks.  For each panel of ``k`` the owning grid column broadcasts
its ``A`` panel along grid rows and the owning grid row its ``B`` panel along
grid columns; each rank accumulates ``A_panel @ B_panel``.  A rank never
holds more than its blocks plus two panels.
"""

from __future__ import annotations

import functools

import numpy as np

from spmdarray.comm import agree, bcast_array, errors_may_raise
from spmdarray.core import fetch as _fetch
from spmdarray.core.array import ndarray
from spmdarray.core.placement import is_small, is_whole
from spmdarray.core.storage import Storage
from spmdarray.decomposition import Layout, block_bounds, box_size, find_coord, unravel
from spmdarray.engine import elementwise as _engine
from spmdarray.linalg._local import local_product, spread
from spmdarray.routines.manipulation.shape import redistribute, reshape

__all__ = ["matmul_2d"]


@functools.lru_cache(maxsize=256)
def _result_dtype(nda: int, ndb: int, da: np.dtype, db: np.dtype) -> np.dtype:
    """NumPy's ``matmul`` result dtype for operands of these dimensions and dtypes (raises NumPy's TypeError)."""
    return np.matmul(np.ones((1,) * nda, da), np.ones((1,) * ndb, db)).dtype


def matmul_2d(ctx, a, b, out=None):
    """``a @ b`` for distributed 1-D and 2-D operands with the same context.  Collective.

    In order: NumPy's ``@`` on whole copies when both operands are replicated
    (at one rank too) or are two small vectors (NumPy's bits); local products
    when a layout allows them (:func:`~spmdarray.linalg._local.local_product`:
    the contraction axis, ``a``'s rows or ``b``'s columns split); whole
    copies of small operands; an elementwise product and a sum for two
    vectors; SUMMA otherwise.

    :func:`spmdarray.linalg._products.matmul` checks the arguments and sends
    stacks elsewhere first.
    """
    ka = a.shape[-1]
    kb = b.shape[0]
    dtype = _result_dtype(a.ndim, b.ndim, a.dtype, b.dtype)
    if out is not None:  # NumPy's errors, before any work
        cshape = a.shape[:-1] + b.shape[1:]
        if out.shape != cshape:
            if out.ndim == len(cshape):
                i = next(i for i, (p, q) in enumerate(zip(out.shape, cshape)) if p != q)
                raise ValueError(
                    f"matmul: Output operand 0 has a mismatch in its core dimension {i}, with gufunc signature "
                    f"(n?,k),(k,m?)->(n?,m?) (size {out.shape[i]} is different from {cshape[i]})"
                )
            raise ValueError(
                f"matmul: Output operand 0 has a mismatch in its core dimension, shape {out.shape} vs {cshape}"
            )
        np.matmul(
            np.ones((1,) * a.ndim, a.dtype), np.ones((1,) * b.ndim, b.dtype), out=np.empty((1,) * out.ndim, out.dtype)
        )
    vectors = a.ndim == 1 and b.ndim == 1
    whole, small = _replica_operands(a, b)
    if whole or (small and vectors):  # NumPy's bits, as for replicated arrays
        return _deliver(_replicated_product(ctx, a, b, dtype), out)
    c = local_product(ctx, a, b, dtype)  # a split contraction axis, rows or columns: no SUMMA
    if c is None and small:
        c = _replicated_product(ctx, a, b, dtype)
    if c is None and vectors:
        prod = _engine.elementwise(np.multiply, [a, b])
        # A float or complex sum keeps its dtype: the argument-free sum is the same reduction.
        c = prod.sum() if prod.dtype == dtype and dtype.kind in "fc" else prod.sum(dtype=dtype)
    if c is not None:
        return _deliver(c, out)
    a2 = reshape(a, (1, ka)) if a.ndim == 1 else a
    b2 = reshape(b, (kb, 1)) if b.ndim == 1 else b
    c = _summa(ctx, a2, b2, dtype)
    if a.ndim == 1:
        c = reshape(c, (c.shape[1],))
    elif b.ndim == 1:
        c = reshape(c, (c.shape[0],))
    return _deliver(c, out)


def _deliver(c, out):
    """``c``, or ``out`` after ``c`` is assigned to it.  Collective when ``out`` is given."""
    if out is None:
        return c
    _engine.assign(out, c)
    return out


def _replica_operands(a, b) -> tuple[bool, bool]:
    """Whether every rank holds both operands of ``a @ b`` whole (both
    replicated, or a single rank), and whether both are small (below
    ``config.replicate_below``: fetching both whole is cheap).  Not collective."""
    whole = (is_whole(a._layout) and is_whole(b._layout)) or a._st.ctx.size == 1
    return whole, is_small(a.shape) and is_small(b.shape)


def _replicated_product(ctx, a, b, dtype):
    """``a @ b`` computed redundantly on every rank from whole copies of the
    operands (fetched once when they are split).  Collective; no message when
    both are replicated.  The result takes the default layout of its shape."""
    whole = []
    for x in (a, b):
        if is_whole(x._layout) or ctx.size == 1:
            whole.append(x._block)
        else:  # fetched whole (a row of a split array from its row copy, shared with element reads)
            (loc,) = _fetch.fetch(ctx, [x], Layout.replicated(x.shape, ctx.size))
            whole.append(loc)
    full = whole[0].astype(dtype, copy=False) @ whole[1].astype(dtype, copy=False)
    if not full.ndim:  # vector @ vector: a NumPy scalar, as NumPy gives
        return np.asarray(a._st.be.to_host(full))[()]
    return spread(ctx, full, dtype)


def _summa(ctx, a, b, dtype):
    n, k = a.shape
    m = b.shape[1]
    clay = Layout.balanced((n, m), ctx.size)
    pr, pc = clay.dims
    alay = Layout((n, k), (pr, pc), (0, 1), (None, None), (block_bounds(n, pr), block_bounds(k, pc)))
    blay = Layout((k, m), (pr, pc), (0, 1), (None, None), (block_bounds(k, pr), block_bounds(m, pc)))
    A = redistribute(a.astype(dtype, copy=False), alay)
    B = redistribute(b.astype(dtype, copy=False), blay)
    C = ndarray._new(Storage(ctx, clay, dtype, fill=0), None)
    me = unravel(ctx.rank, (pr, pc))
    (r0, r1), (c0, c1) = clay.block(ctx.rank)
    cloc = C._block
    aloc, bloc = A._block, B._block
    be = C._st.be
    (_, _), (ak0, _) = alay.block(ctx.rank)
    (bk0, _), (_, _) = blay.block(ctx.rank)
    cuts = sorted({lo for lo, _ in block_bounds(k, pr)} | {lo for lo, _ in block_bounds(k, pc)} | {k})
    row_comm = ctx.sub((pr, pc), (1,))
    col_comm = ctx.sub((pr, pc), (0,))
    row_ctx = _SubCtx(row_comm)
    col_ctx = _SubCtx(col_comm)
    err = None
    for p0, p1 in zip(cuts[:-1], cuts[1:]):
        if p1 <= p0:
            continue
        ca = find_coord(alay.intervals[1], p0)
        rb = find_coord(blay.intervals[0], p0)
        apan = aloc[:, p0 - ak0 : p1 - ak0] if me[1] == ca else None
        bpan = bloc[p0 - bk0 : p1 - bk0, :] if me[0] == rb else None
        if pc > 1:  # panels travel through host memory on device backends
            apan = be.asarray(
                bcast_array(row_ctx, None if apan is None else be.to_host(apan), ca, (r1 - r0, p1 - p0), dtype)
            )
        if pr > 1:
            bpan = be.asarray(
                bcast_array(col_ctx, None if bpan is None else be.to_host(bpan), rb, (p1 - p0, c1 - c0), dtype)
            )
        if err is None and box_size(((r0, r1), (c0, c1))):
            try:
                cloc += apan @ bpan
            except Exception as e:  # noqa: BLE001 - overflow under errstate: agreed after the loop
                err = e  # the panels still travel, so that no rank waits for this one
    if errors_may_raise():
        agree(ctx, err)  # one 4-byte all-reduce
    elif err is not None:
        raise err
    C._st.bump()
    return C


class _SubCtx:
    __slots__ = ("comm", "rank", "size")

    def __init__(self, comm) -> None:
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
