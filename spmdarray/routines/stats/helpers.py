"""Helpers the statistics modules share: elementwise calls on distributed or
NumPy operands, NaN masks and counts, small replicated results as balanced
distributed arrays, block-by-block maps and ``out=`` handling.

Used by :mod:`spmdarray.routines.stats.statistics`, :mod:`spmdarray.routines.stats.order` and
:mod:`spmdarray.routines.stats.histograms`.
"""

from __future__ import annotations

import numpy as np

from spmdarray.core import fetch as _fetch
from spmdarray.decomposition import Layout
from spmdarray.engine import elementwise as _engine
from spmdarray.routines.creation import array
from spmdarray.routines.sorting import _wrap, balanced

_NV = np._NoValue


# ---------------------------------------------------------------- helpers
def _ew(fn, args, **kw):
    """``fn`` elementwise: distributed when an operand is, plain NumPy otherwise."""
    if any(_fetch.is_distributed(a) for a in args):
        return _engine.elementwise(fn, args, **kw)
    return fn(*args, **kw)


def _isnan(a):
    return _ew(np.isnan, [a])


def _replace_nan(a, value):
    """``a`` with NaNs replaced by ``value`` (``a`` itself for non-float dtypes)."""
    if a.dtype.kind not in "fc":
        return a
    return np.where(_isnan(a), np.array(value, a.dtype), a)


def _rep(ctx, arr: np.ndarray):
    """A small host array every rank holds, as a balanced distributed array."""
    arr = np.asarray(arr)
    lay = Layout.balanced(arr.shape, ctx.size)
    box = lay.block(ctx.rank)
    return _wrap(ctx, lay, arr.dtype, arr[tuple(slice(lo, hi) for lo, hi in box)] if arr.ndim else arr)


def _kd(keepdims):
    return {} if keepdims is _NV else {"keepdims": keepdims}


def _any(x) -> bool:
    """``bool(any(x))`` for a distributed array or a scalar, the same on every rank."""
    return bool(np.any(x)) if _fetch.is_distributed(x) else bool(np.any(np.asarray(x)))


def _local_map(x, fn, dtype):
    """Block-by-block ``fn(block, be)`` on balanced ``x``, with result ``dtype``.  Collective."""
    x = balanced(x)
    ctx = x._st.ctx
    out = fn(x._block, x._st.be) if x._layout.owned_size(ctx.rank) else None
    return _wrap(ctx, x._layout, np.dtype(dtype), out)


def _finish(res, out):
    if out is not None:
        _engine.assign(out, res)
        return out
    return res


def _ctx(*xs):
    return next(x for x in xs if _fetch.is_distributed(x))._st.ctx


def _count(a, axis, keepdims):
    return np.sum(_ew(np.logical_not, [_isnan(a)]), axis=axis, dtype=np.intp, keepdims=keepdims)


def _as_dist(m, ctx, dtype):
    if _fetch.is_distributed(m):
        return m.astype(dtype)

    return array(np.asarray(m, dtype=dtype), comm=ctx)
