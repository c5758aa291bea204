"""Order statistics, distributed: ``median``, ``percentile`` and ``quantile``
and their ``nan`` forms.

They sort along the reduced axis with the distributed sort, then read the few
order statistics they need (slices of the sorted array, or, for the ``nan``
forms whose index differs per row, a masked sum along the axis) and
interpolate as NumPy does, with NumPy's own index formulas.
"""

from __future__ import annotations

import warnings

import numpy as np
import numpy.lib._function_base_impl as _fb
from numpy.lib.array_utils import normalize_axis_tuple

from spmdarray.core import fetch as _fetch
from spmdarray.core.registry import implements
from spmdarray.routines.manipulation.joining import stack
from spmdarray.routines.sorting import _sort_along, sort
from spmdarray.routines.stats.helpers import _NV, _any, _as_dist, _count, _ew, _finish, _isnan, _local_map, _rep

__all__ = [
    "median",
    "percentile",
    "quantile",
    "nanmedian",
    "nanpercentile",
    "nanquantile",
]


# ---------------------------------------------------------- order statistics
def _to_last(a, axis):
    """(array with the reduced axes merged last, reduced axes, out shape with keepdims)."""
    if axis is None:
        axes = tuple(range(a.ndim))
    else:
        axes = normalize_axis_tuple(axis, a.ndim)
    rest = [k for k in range(a.ndim) if k not in axes]
    kept = tuple(1 if k in axes else n for k, n in enumerate(a.shape))
    if axes == tuple(range(a.ndim)):
        return a.ravel(), axes, kept
    moved = a.transpose(rest + list(axes))
    if len(axes) > 1:
        moved = moved.reshape(tuple(a.shape[k] for k in rest) + (-1,))
    return moved, axes, kept


def _pick(xs, idx):
    """``xs[..., idx[...]]`` for a per-row index ``idx`` (a distributed array).  Collective.

    A masked sum along the last axis: only the chosen element is non-zero.
    """
    n = xs.shape[-1]
    col = np.arange(n)
    sel = _ew(np.equal, [col, idx.reshape(idx.shape + (1,))])
    return np.sum(np.where(sel, xs, np.zeros((), xs.dtype)), axis=-1)


def _lerp(a, b, t):
    d = _ew(np.subtract, [b, a])
    lo = _ew(np.add, [a, _ew(np.multiply, [d, t])])
    hi = _ew(np.subtract, [b, _ew(np.multiply, [d, _ew(np.subtract, [1, t])])])
    ge = _ew(np.greater_equal, [t, 0.5])
    return np.where(ge, hi, lo)


def _table(props, method, n, qv, counts):
    """NumPy's (previous index, next index, gamma) for each row count in ``counts``."""
    vi = np.asanyarray(props["get_virtual_index"](counts, qv))
    if props["fix_gamma"] is None:
        vi = vi.astype(np.intp)
        return vi, vi, None
    prev, nxt = _fb._get_indexes(np.empty(0, np.float64), vi, counts)
    gamma = _fb._get_gamma(vi, prev, props)
    return prev, nxt, gamma


def _order_stat(a, qs, axis, keepdims, nan: bool, probe, method="linear", median: bool = False, weights=None):
    """Shared body of the quantile family.  Collective.

    ``probe(host_array, keepdims)`` is NumPy's own function with the user's
    arguments: it gives NumPy's argument errors and result dtype (run on a
    one-element dummy), and the answer for empty inputs.
    """
    if not _fetch.is_distributed(a):
        raise TypeError("a must be a spmdarray array")
    qarr = np.asanyarray(qs)
    keep = keepdims is not _NV and bool(keepdims)
    dummy = np.ones((1,) * a.ndim, a.dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        rdt = np.asarray(probe(dummy, False)).dtype
    ctx = a._st.ctx
    if a.size == 0 or any(n == 0 for n in a.shape):
        res = probe(np.empty(a.shape, a.dtype), keep)
        return _rep(ctx, res) if np.ndim(res) else res
    x, axes, kept = _to_last(a, axis)
    n = x.shape[-1]
    rows_shape = x.shape[:-1]
    if weights is None:
        xs = sort(x, axis=-1)
    else:
        xs, _, ws = _sort_along(x, x.ndim - 1, True, False, carry=_to_last(weights, axis)[0])
        cdf = np.cumsum(ws, axis=-1, dtype=np.float64)
        tot = cdf[..., -1]
        cdf = _ew(np.true_divide, [cdf, tot.reshape(rows_shape + (1,)) if rows_shape else np.asarray(tot)[()]])
        if _any(_isnan(cdf[..., -1])):
            raise ValueError("Weights included NaN, inf or were all zero.")
        if qarr.dtype.kind == "f":
            cdf = cdf.astype(qarr.dtype, copy=False)
        if _any(_ew(np.equal, [cdf[..., 0], 0])):
            cdf = np.where(_ew(np.equal, [cdf, 0]), np.array(-1, cdf.dtype), cdf)

    def at(i):
        """Slice ``i`` of the sorted axis (a NumPy scalar for 1-D data)."""
        v = xs[..., i]
        return v if rows_shape else np.asarray(v)[()]

    last = at(-1)
    is_float = a.dtype.kind in "fc"
    if median:
        qs, props = [None], None
    else:
        props = _fb._QuantileMethods[method]
        qs = list(qarr.reshape(-1))
    if nan and is_float:
        cnt = _count(x, -1, False)
    results = []
    for qv in qs:
        if median:
            if nan and is_float:
                c = cnt
                if rows_shape:
                    lo_i = _ew(np.floor_divide, [_ew(np.subtract, [c, 1]), 2])
                    hi_i = _ew(np.floor_divide, [c, 2])
                if rows_shape:
                    va, vb = _pick(xs, lo_i), _pick(xs, hi_i)
                else:
                    va, vb = at(max((int(c) - 1) // 2, 0)), at(min(int(c) // 2, n - 1))
            else:
                va, vb = at((n - 1) // 2), at(n // 2)
            acc = np.result_type(rdt, a.dtype) if a.dtype.kind in "fc" else np.dtype(np.float64)
            s = _ew(np.add, [va, vb], dtype=acc)
            r = _ew(np.true_divide, [s, 2], dtype=acc)
        elif weights is not None:
            below = np.sum(_ew(np.less, [cdf, qarr.dtype.type(qv)]), axis=-1, dtype=np.intp)
            idx = _ew(np.minimum, [below, n - 1])
            r = _pick(xs, idx) if rows_shape else at(int(idx))
        elif nan and is_float and rows_shape:
            counts = np.arange(n + 1)
            prev, nxt, gamma = _table(props, method, n, np.float64(qv), counts)
            prev = np.where(prev < 0, counts - 1, prev).clip(0, max(n - 1, 0))
            nxt = np.where(nxt < 0, counts - 1, nxt).clip(0, max(n - 1, 0))
            pi = _local_map(cnt, lambda b, be, t=prev: be.asarray(t)[b], np.intp)
            va = _pick(xs, pi)
            if gamma is None:
                r = va
            else:
                ni = _local_map(cnt, lambda b, be, t=nxt: be.asarray(t)[b], np.intp)
                g = _local_map(cnt, lambda b, be, t=gamma: be.asarray(t)[b], gamma.dtype)
                r = _lerp(va.astype(rdt), _pick(xs, ni).astype(rdt), g)
        else:
            m = int(cnt) if nan and is_float else n
            if m == 0:
                r = np.nan
            else:
                prev, nxt, gamma = _table(props, method, m, np.float64(qv), m)
                p, nx = int(prev), int(nxt)
                p = m - 1 if p < 0 else p
                nx = m - 1 if nx < 0 else nx
                va = at(p)
                r = va if gamma is None else _lerp(_cast(va, rdt), _cast(at(nx), rdt), float(gamma))
        if is_float and not nan:
            nanrow = _isnan(last)
            r = np.where(nanrow, _cast(last, rdt), r)
        if nan and is_float:
            empty = _ew(np.equal, [cnt, 0])
            if _any(empty):
                warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
                r = np.where(empty, np.array(np.nan, rdt), r)
        results.append(_cast(r, rdt))
    out_shape = qarr.shape + (kept if keep else rows_shape)
    if median:
        out_shape = kept if keep else rows_shape
    if rows_shape:
        res = results[0] if median or qarr.ndim == 0 else stack(results)
        return res.reshape(out_shape) if res.shape != out_shape else res
    vals = np.array([np.asarray(r)[()] for r in results], rdt)
    res = vals.reshape(out_shape)
    return _rep(ctx, res) if res.ndim else rdt.type(res[()])


def _cast(x, dt):
    if _fetch.is_distributed(x):
        return x.astype(dt, copy=False)
    return np.asarray(x).astype(dt)[()]


def _check_q(q, pct: bool):
    qa = np.true_divide(np.asanyarray(q), 100) if pct else np.asanyarray(q)
    if qa.dtype.kind not in "biuf":
        raise TypeError("a must be an array of real numbers")
    if not (np.all(qa >= 0) and np.all(qa <= 1)):
        raise ValueError(
            "Percentiles must be in the range [0, 100]" if pct else "Quantiles must be in the range [0, 1]"
        )
    return qa


def _full_weights(a, weights, axis):
    """``weights`` as a distributed array of ``a``'s shape, with NumPy's checks.  Collective."""
    wshape = np.shape(weights)
    ctx = a._st.ctx
    w = weights if _fetch.is_distributed(weights) else None
    if wshape != a.shape:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        axes = normalize_axis_tuple(axis, a.ndim)
        if wshape != tuple(a.shape[ax] for ax in axes):
            raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
        wv = weights if w is not None else np.asarray(weights)
        wv = wv.transpose(tuple(int(i) for i in np.argsort(axes)))
        wv = wv.reshape(tuple((s if ax in axes else 1) for ax, s in enumerate(a.shape)))
        w = _ew(np.multiply, [np.ones_like(a, dtype=wv.dtype), wv])
    elif w is None:
        w = _as_dist(np.asarray(weights), ctx, np.asarray(weights).dtype).reshape(a.shape)
    if _any(_ew(np.less, [w, 0])):
        raise ValueError("Weights must be non-negative.")
    return w


def _quant(fname, a, q, axis, out, method, keepdims, weights, interpolation, nan, pct):
    if interpolation is not None:
        method = interpolation
    npfn = getattr(np, fname)
    wkw = {}
    if weights is not None:
        if nan:
            raise NotImplementedError(f"numpy.{fname}(weights=...) is not implemented in spmdarray")
        wkw = {"weights": np.ones((1,) * a.ndim)}

    def probe(host, keep):
        kw = {} if keep is False and nan else {"keepdims": keep}
        if wkw:
            kw["weights"] = np.ones(host.shape)
        return npfn(host, q, axis=axis, method=method, **kw)

    qa = _check_q(q, pct)
    if method not in _fb._QuantileMethods or wkw:
        probe(np.ones((1,) * a.ndim, a.dtype), False)  # NumPy's error for the method
    w = _full_weights(a, weights, axis) if weights is not None and a.size else None
    return _finish(_order_stat(a, qa, axis, keepdims, nan, probe, method, weights=w), out)


@implements(np.quantile)
def quantile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
    interpolation=None,
):
    """Distributed ``numpy.quantile`` (all of NumPy's methods).  Collective."""
    return _quant("quantile", a, q, axis, out, method, keepdims, weights, interpolation, False, False)


@implements(np.percentile)
def percentile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
    interpolation=None,
):
    """Distributed ``numpy.percentile``.  Collective."""
    return _quant("percentile", a, q, axis, out, method, keepdims, weights, interpolation, False, True)


@implements(np.nanquantile)
def nanquantile(
    a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=_NV, *, weights=None, interpolation=None
):
    """``quantile`` ignoring NaNs.  Collective."""
    return _quant("nanquantile", a, q, axis, out, method, keepdims, weights, interpolation, True, False)


@implements(np.nanpercentile)
def nanpercentile(
    a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=_NV, *, weights=None, interpolation=None
):
    """``percentile`` ignoring NaNs.  Collective."""
    return _quant("nanpercentile", a, q, axis, out, method, keepdims, weights, interpolation, True, True)


@implements(np.median)
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Distributed ``numpy.median`` (mean of the two middle values).  Collective."""

    def probe(host, keep):
        return np.median(host, axis=axis, keepdims=keep)

    return _finish(_order_stat(a, 0.5, axis, keepdims, False, probe, median=True), out)


@implements(np.nanmedian)
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=_NV):
    """``median`` ignoring NaNs.  Collective."""

    def probe(host, keep):
        return np.nanmedian(host, axis=axis, keepdims=keep)

    return _finish(_order_stat(a, 0.5, axis, keepdims, True, probe, median=True), out)
