"""Norms: ``numpy.linalg.norm``, ``vector_norm``, ``matrix_norm``.

Vector norms and the matrix norms ``'fro'``, ``1``, ``-1``, ``inf`` and
``-inf`` are distributed reductions (the same formulas as NumPy's).  The
matrix norms ``2``, ``-2`` and ``'nuc'`` need singular values: ``svdvals``
(TSQR for a single matrix, batch-parallel for stacks).
"""

from __future__ import annotations

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from spmdarray.core import fetch as _fetch
from spmdarray.core.registry import implements
from spmdarray.engine import elementwise as _engine
from spmdarray.linalg._batch import _abs2, operand
from spmdarray.linalg._decomp import svdvals

__all__ = ["norm", "vector_norm", "matrix_norm"]

inf = np.inf


def _ew(func, *args, **kw):
    return _engine.elementwise(func, list(args), **kw)


def _sqrt(r):
    return np.sqrt(r) if not _fetch.is_distributed(r) else _ew(np.sqrt, r)


@implements(np.linalg.norm)
def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    """Distributed ``numpy.linalg.norm`` (every ``ord``, ``axis`` and ``keepdims``).  Collective.

    Sums of squares are combined in a different order than NumPy's, so
    results agree to rounding.
    """
    x = operand(x, _fetch.context_of(x))
    if x.dtype.kind not in "fc":
        x = x.astype(float)
    nd = x.ndim
    if axis is None:
        if ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1):
            s = _ew(_abs2, x).sum(axis=None, keepdims=keepdims)
            return _sqrt(s)
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = int(axis)
        except Exception as e:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from e
        axis = (axis,)
    if len(axis) == 1:
        (ax,) = normalize_axis_tuple(axis, nd)
        if isinstance(ord, str):
            raise ValueError(f"Invalid norm order '{ord}' for vectors")
        if ord == inf:
            return _ew(np.abs, x).max(axis=ax, keepdims=keepdims)
        if ord == -inf:
            return _ew(np.abs, x).min(axis=ax, keepdims=keepdims)
        rdt = np.empty(0, x.dtype).real.dtype
        if ord == 0:
            return _ew(np.not_equal, x, 0).astype(rdt).sum(axis=ax, keepdims=keepdims)
        if ord == 1:
            return _ew(np.abs, x).sum(axis=ax, keepdims=keepdims)
        if ord is None or ord == 2:
            return _sqrt(_ew(_abs2, x).sum(axis=ax, keepdims=keepdims))
        absx = _ew(np.power, _ew(np.abs, x), np.asarray(ord).astype(rdt) if np.ndim(ord) == 0 else ord)
        ret = absx.sum(axis=ax, keepdims=keepdims)
        p = np.reciprocal(np.asarray(ord, dtype=rdt))
        return _ew(np.power, ret, p) if _fetch.is_distributed(ret) else np.power(ret, p).astype(rdt)
    if len(axis) == 2:
        row, col = axis
        row = normalize_axis_index(row, nd)
        col = normalize_axis_index(col, nd)
        if row == col:
            raise ValueError("Duplicate axes given.")
        if ord in (2, -2, "nuc"):
            s = svdvals(np.moveaxis(x, (row, col), (-2, -1)))
            if not _fetch.is_distributed(s):
                s = operand(s, x._st.ctx)
            if ord == 2:
                ret = s.max(axis=-1)
            elif ord == -2:
                ret = s.min(axis=-1)
            else:
                ret = s.sum(axis=-1)
        elif ord == 1:
            c = col - 1 if col > row else col
            ret = _ew(np.abs, x).sum(axis=row).max(axis=c)
        elif ord == inf:
            r = row - 1 if row > col else row
            ret = _ew(np.abs, x).sum(axis=col).max(axis=r)
        elif ord == -1:
            c = col - 1 if col > row else col
            ret = _ew(np.abs, x).sum(axis=row).min(axis=c)
        elif ord == -inf:
            r = row - 1 if row > col else row
            ret = _ew(np.abs, x).sum(axis=col).min(axis=r)
        elif ord in (None, "fro", "f"):
            ret = _sqrt(_ew(_abs2, x).sum(axis=(row, col)))
        else:
            raise ValueError("Invalid norm order for matrices.")
        if keepdims:
            shp = list(x.shape)
            shp[row] = 1
            shp[col] = 1
            if _fetch.is_distributed(ret):
                return ret.reshape(tuple(shp))
            return operand(np.asarray(ret).reshape(shp), x._st.ctx)
        return ret
    raise ValueError("Improper number of dimensions to norm.")


@implements(np.linalg.vector_norm)
def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
    """Distributed ``numpy.linalg.vector_norm``.  Collective."""
    x = operand(x, _fetch.context_of(x))
    shape = x.shape
    if axis is None:
        x = x.reshape((-1,)) if x.ndim != 1 else x
        _axis = 0
    elif isinstance(axis, tuple):
        nax = normalize_axis_tuple(axis, x.ndim)
        rest = tuple(i for i in range(x.ndim) if i not in nax)
        newshape = tuple(x.shape[i] for i in rest) + (-1,)
        x = x.transpose(rest + nax).reshape(newshape)
        _axis = -1
    else:
        _axis = operator.index(axis)
    res = norm(x, axis=_axis, ord=ord)
    if keepdims:
        shp = list(shape)
        axes = range(len(shape)) if axis is None else normalize_axis_tuple(axis, len(shape))
        for a in axes:
            shp[a] = 1
        if _fetch.is_distributed(res):
            return res.reshape(tuple(shp))
        return operand(np.asarray(res).reshape(shp), x._st.ctx)
    return res


@implements(np.linalg.matrix_norm)
def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002
    """Distributed ``numpy.linalg.matrix_norm``.  Collective."""
    if np.ndim(x) < 2:
        raise ValueError(f"The input array must be at least 2-dimensional, but it has ndim={np.ndim(x)}")
    return norm(x, axis=(-2, -1), keepdims=keepdims, ord=ord)
