"""Diagonals and triangles: ``diagonal`` (N-D), ``trace`` (N-D), ``diag``,
``diagflat``, ``tri`` and the triangle index functions.

``diagonal`` is a masked reduction: a mask of the diagonal is generated per
block (no communication), everything off the diagonal becomes the least
value of the dtype (``-inf`` for floats), and a maximum along the second
axis, which meets one diagonal value per row, leaves it exactly (NaN and
signed zeros included).  Its
cost is one pass over the array and one reduction across the ranks that
share rows.  NumPy returns a read-only view; spmdarray returns a copy.

Index arrays (``tril_indices`` ...) are distributed 1-D arrays, generated per
block from a closed form: no rank holds all of them.
"""

from __future__ import annotations

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from spmdarray.core import fetch as _fetch
from spmdarray.core.registry import implements
from spmdarray.routines.creation import arange, array, empty, generate, ones, zeros
from spmdarray.routines.indexing.selection import where
from spmdarray.routines.reductions import reduce

__all__ = [
    "diagonal",
    "trace",
    "diag",
    "diagflat",
    "diag_indices",
    "fill_diagonal",
    "tri",
    "tril_indices",
    "triu_indices",
    "mask_indices",
]


def _diag_mask(n: int, m: int, k: int, ctx):
    def fill(box, xp):
        (r0, r1), (c0, c1) = box
        return (xp.arange(c0, c1)[None, :] - xp.arange(r0, r1)[:, None]) == k

    return generate((n, m), bool, fill, ctx)


def _lowest(dtype):
    """The least value of ``dtype``: ``max`` with it is the identity (NaN and -0.0 survive)."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return dt.type(-np.inf)
    if dt.kind == "c":
        return dt.type(complex(-np.inf, -np.inf))
    if dt.kind in "iu":
        return np.iinfo(dt).min
    if dt.kind == "b":
        return False
    raise NotImplementedError(f"numpy.diagonal of a {dt} array (only numeric and bool dtypes)")


@implements(np.diagonal)
def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal(s) of ``a`` along ``axis1``/``axis2`` (last axis of the result).  Collective.

    A masked reduction (see the module docstring); the result is a copy,
    where NumPy gives a read-only view.
    """
    if a.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    offset = operator.index(offset)
    ax1 = normalize_axis_index(axis1, a.ndim, "axis1")
    ax2 = normalize_axis_index(axis2, a.ndim, "axis2")
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 cannot be the same")
    fill = _lowest(a.dtype)
    rest = [k for k in range(a.ndim) if k not in (ax1, ax2)]
    t = a.transpose(rest + [ax1, ax2])
    n1, n2 = t.shape[-2:]
    if offset >= 0:
        first, length = 0, max(0, min(n1, n2 - offset))
    else:
        first, length = -offset, max(0, min(n1 + offset, n2))
    ctx = a._st.ctx
    if length == 0 or t.size == 0:
        return empty(t.shape[:-2] + (length,), a.dtype, comm=ctx)
    masked = where(_diag_mask(n1, n2, offset, ctx), t, fill)
    rows = reduce("any" if a.dtype == bool else "max", masked, axis=-1)
    if not _fetch.is_distributed(rows):
        rows = array(np.asarray(rows), comm=ctx)
    return rows[..., first : first + length]


@implements(np.trace)
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along diagonals (N-D: one sum per diagonal).  Collective.

    The diagonal is extracted exactly (:func:`diagonal`) and summed by a
    distributed reduction; float sums may differ from NumPy's in the last bits.
    """
    d = diagonal(a, offset, axis1, axis2)
    return reduce("sum", d, axis=-1, dtype=dtype, out=out)


@implements(np.diag)
def diag(v, k=0):
    """Diagonal of a 2-D array, or a 2-D array with ``v`` on diagonal ``k``.  Collective.

    From 1-D: a mask generated per block selects, per row (``k >= 0``) or
    column (``k < 0``), the matching element of ``v``; each rank receives only
    the part of ``v`` its rows or columns need.
    """
    k = operator.index(k)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")

    n = v.shape[0]
    size = n + abs(k)
    ctx = v._st.ctx
    vec = zeros((size,), v.dtype, comm=ctx)
    vec[:n] = v
    mask = _diag_mask(size, size, k, ctx)
    src = vec[:, None] if k >= 0 else vec[None, :]
    zero = np.zeros((), v.dtype)[()]
    return where(mask, src, zero)


@implements(np.diagflat)
def diagflat(v, k=0):
    """2-D array with the flattened input on diagonal ``k``.  Collective."""
    return diag(v.ravel(), k)


def _comm_of(like, comm):
    return like._st.ctx if _fetch.is_distributed(like) else comm


def tri(N, M=None, k=0, dtype=float, *, like=None, comm=None, backend=None):
    """Ones at and below diagonal ``k``.  Collective (no communication: generated per block)."""

    if M is None:
        M = N
    N, M, k = operator.index(N), operator.index(M), operator.index(k)

    def fill(box, xp):
        (r0, r1), (c0, c1) = box
        return ((xp.arange(c0, c1)[None, :] - xp.arange(r0, r1)[:, None]) <= k).astype(dtype)

    return generate((N, M), dtype, fill, _comm_of(like, comm), backend)


def _tri_indices(n: int, k: int, m: int, lower: bool, comm):
    rows = np.arange(n, dtype=np.int64)
    if lower:
        first = np.zeros(n, np.int64)
        counts = np.clip(rows + k + 1, 0, m)
    else:
        first = np.clip(rows + k, 0, m)
        counts = m - first
    starts = np.concatenate([[0], np.cumsum(counts)])
    total = int(starts[-1])

    def which(lo, hi):
        p = np.arange(lo, hi, dtype=np.int64)
        r = np.searchsorted(starts, p, side="right") - 1
        return r, first[r] + (p - starts[r])

    def fill_r(box, xp):
        return xp.asarray(which(*box[0])[0].astype(np.intp))

    def fill_c(box, xp):
        return xp.asarray(which(*box[0])[1].astype(np.intp))

    return generate((total,), np.intp, fill_r, comm), generate((total,), np.intp, fill_c, comm)


def tril_indices(n, k=0, m=None, *, comm=None):
    """Row and column indices of the lower triangle (distributed 1-D arrays).  Collective.

    Generated per block from the row counts (one axis long, replicated): no communication.
    """
    n = operator.index(n)
    return _tri_indices(n, operator.index(k), n if m is None else operator.index(m), True, comm)


def triu_indices(n, k=0, m=None, *, comm=None):
    """Row and column indices of the upper triangle (distributed 1-D arrays).  Collective."""
    n = operator.index(n)
    return _tri_indices(n, operator.index(k), n if m is None else operator.index(m), False, comm)


@implements(np.tril_indices_from)
def tril_indices_from(arr, k=0):
    """Indices of the lower triangle of a 2-D array (distributed).  Collective."""
    if arr.ndim != 2:
        raise ValueError("input array must be 2-d")
    return _tri_indices(arr.shape[-2], operator.index(k), arr.shape[-1], True, arr._st.ctx)


@implements(np.triu_indices_from)
def triu_indices_from(arr, k=0):
    """Indices of the upper triangle of a 2-D array (distributed).  Collective."""
    if arr.ndim != 2:
        raise ValueError("input array must be 2-d")
    return _tri_indices(arr.shape[-2], operator.index(k), arr.shape[-1], False, arr._st.ctx)


def mask_indices(n, mask_func, k=0, *, comm=None):
    """Indices where ``mask_func(ones((n, n)), k)`` is non-zero.  Collective.

    ``numpy.triu`` and ``numpy.tril`` (the usual masks) give distributed
    indices from a closed form; another function is applied to a distributed
    array of ones and needs ``numpy.nonzero`` on spmdarray arrays.
    """
    n = operator.index(n)
    if mask_func is np.triu:
        return triu_indices(n, k, comm=comm)
    if mask_func is np.tril:
        return tril_indices(n, k, comm=comm)

    a = mask_func(ones((n, n), int, comm=comm), k)
    return np.nonzero(a != 0)


def diag_indices(n, ndim=2, *, comm=None):
    """Indices of the main diagonal: ``ndim`` times one distributed ``arange(n)``.  Collective."""

    idx = arange(operator.index(n), comm=comm)
    return (idx,) * operator.index(ndim)


@implements(np.diag_indices_from)
def diag_indices_from(arr):
    """Indices of the main diagonal of an array with equal extents.  Collective."""
    if not arr.ndim >= 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(arr.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(arr.shape[0], arr.ndim, comm=arr._st.ctx)


@implements(np.fill_diagonal)
def fill_diagonal(a, val, wrap=False):
    """Write ``val`` into the main diagonal in place (NumPy's flat-step rule).  Collective.

    A mask and the values (``val`` repeated cyclically, replicated: it is one
    diagonal long at most) are generated per block; one masked copy writes
    them.
    """

    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    end = None
    if a.ndim == 2:
        step = a.shape[1] + 1
        if not wrap:
            end = a.shape[1] * a.shape[1]
    else:
        if len(set(a.shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + int(np.cumprod(a.shape[:-1]).sum())
    vals = np.asarray(val).astype(a.dtype).reshape(-1)
    if vals.size == 0 or a.size == 0:
        return
    strides = np.cumprod((1,) + a.shape[::-1])[:-1][::-1]

    def flat(box, xp):
        f = xp.zeros(tuple(hi - lo for lo, hi in box), np.int64)
        for k, ((lo, hi), s) in enumerate(zip(box, strides)):
            shp = [1] * len(box)
            shp[k] = hi - lo
            f = f + (xp.arange(lo, hi, dtype=np.int64) * int(s)).reshape(shp)
        return f

    def fill_mask(box, xp):
        f = flat(box, xp)
        m = f % step == 0
        return m & (f < end) if end is not None else m

    def fill_vals(box, xp):
        return xp.asarray(vals)[(flat(box, xp) // step) % vals.size]

    ctx = a._st.ctx
    mask = generate(a.shape, bool, fill_mask, ctx)
    src = generate(a.shape, a.dtype, fill_vals, ctx)
    np.copyto(a, src, casting="unsafe", where=mask)
