"""Distributed matrix products (SUMMA).

``C = A @ B`` on a ``pr x pc`` grid: ``A`` is laid out with C's row blocks
and ``k`` split over grid columns, ``B`` with ``k`` split over grid rows and
C's column blocks.  For each panel of ``k`` the owning grid column broadcasts
its ``A`` panel along grid rows and the owning grid row its ``B`` panel along
grid columns; each rank accumulates ``A_panel @ B_panel``.  A rank never
holds more than its blocks plus two panels.
"""

from __future__ import annotations

import numpy as np

from spmdarray.comm import bcast_array
from spmdarray.core import elementwise as _engine
from spmdarray.core.storage import Storage
from spmdarray.decomposition import Layout, block_bounds, box_size, find_coord, unravel
from spmdarray.routines.manipulation.shape import redistribute, reshape

__all__ = ["matmul", "dot"]


def _operand(x, ctx):
    if _engine.is_distributed(x):
        return x
    from spmdarray.routines.creation import array

    return array(np.asarray(x), comm=ctx)


def matmul(a, b, out=None, **kwargs):
    """``a @ b``: SUMMA for 1-D and 2-D operands, stacks in ``_linalg_products``.  Collective.

    Raises
    ------
    ValueError
        NumPy's message when the core dimensions differ.
    NotImplementedError
        For gufunc keyword arguments other than ``dtype`` (``axes=`` ...).
    """
    dtype = kwargs.pop("dtype", None)
    for k in ("casting", "order", "subok"):
        kwargs.pop(k, None)
    for k in ("axes", "axis", "keepdims", "signature"):
        if kwargs.get(k, None) in (None, False, np._NoValue):
            kwargs.pop(k, None)
    if kwargs:
        raise NotImplementedError(f"matmul keyword arguments {sorted(kwargs)}")
    ctx = _engine.context_of(a, b, out)
    a, b = _operand(a, ctx), _operand(b, ctx)
    if dtype is not None or a.ndim > 2 or b.ndim > 2:
        from spmdarray.linalg._products import matmul_nd

        return matmul_nd(a, b, out=out, dtype=dtype)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(
            f"matmul: Input operand {0 if a.ndim == 0 else 1} does not have enough dimensions "
            "(has 0, gufunc core with signature "
            "(n?,k),(k,m?)->(n?,m?) requires 1)"
        )
    ka = a.shape[-1]
    kb = b.shape[0]
    if ka != kb:
        raise ValueError(
            "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
            f"(n?,k),(k,m?)->(n?,m?) (size {kb} is different from {ka})"
        )
    dtype = np.matmul(np.ones((1,) * a.ndim, a.dtype), np.ones((1,) * b.ndim, b.dtype)).dtype
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
    if a.ndim == 1 and b.ndim == 1:
        res = _engine.elementwise(np.multiply, [a, b]).sum(dtype=dtype)
        if out is not None:
            _engine.assign(out, res)
            return out
        return res
    a2 = reshape(a, (1, ka)) if a.ndim == 1 else a
    b2 = reshape(b, (kb, 1)) if b.ndim == 1 else b
    c = _summa(ctx, a2, b2, dtype)
    if a.ndim == 1:
        c = reshape(c, (c.shape[1],))
    elif b.ndim == 1:
        c = reshape(c, (c.shape[0],))
    if out is not None:
        _engine.assign(out, c)
        return out
    return c


def _summa(ctx, a, b, dtype):
    from spmdarray.core.array import ndarray

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
    cloc = C.local
    aloc, bloc = A.local, B.local
    be = C._st.be
    (_, _), (ak0, _) = alay.block(ctx.rank)
    (bk0, _), (_, _) = blay.block(ctx.rank)
    cuts = sorted({lo for lo, _ in block_bounds(k, pr)} | {lo for lo, _ in block_bounds(k, pc)} | {k})
    row_comm = ctx.sub((pr, pc), (1,))
    col_comm = ctx.sub((pr, pc), (0,))
    row_ctx = _SubCtx(row_comm)
    col_ctx = _SubCtx(col_comm)
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
        if box_size(((r0, r1), (c0, c1))):
            cloc += apan @ bpan
    C._st.bump()
    return C


class _SubCtx:
    __slots__ = ("comm", "rank", "size")

    def __init__(self, comm) -> None:
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()


def dot(a, b, out=None):
    """NumPy's ``dot``: scalars, SUMMA for 1-D and 2-D operands, ``tensordot`` above.  Collective."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return _engine.elementwise(np.multiply, [a, b], out=None if out is None else (out,))
    if np.ndim(a) > 2 or np.ndim(b) > 2:
        from spmdarray.linalg._products import dot as dot_nd

        return dot_nd(a, b, out=out)
    if np.shape(a)[-1] != np.shape(b)[0]:
        sa, sb = np.shape(a), np.shape(b)
        ta, tb = _engine._shape_txt(sa), _engine._shape_txt(sb)
        raise ValueError(f"shapes {ta} and {tb} not aligned: {sa[-1]} (dim {len(sa) - 1}) != {sb[0]} (dim 0)")
    if out is not None:  # NumPy's dot wants exactly the result's dtype and shape
        da, db = (x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype for x in (a, b))
        if out.dtype != np.dot(np.ones((1,) * np.ndim(a), da), np.ones((1,) * np.ndim(b), db)).dtype:
            raise ValueError(
                "output array is not acceptable (must have the right datatype, number of dimensions, and be a C-Array)"
            )
        if out.shape != np.shape(a)[:-1] + np.shape(b)[1:]:
            raise ValueError("output array has wrong dimensions")
    return matmul(a, b, out=out)
