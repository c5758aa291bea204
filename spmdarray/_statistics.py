"""Statistics: order statistics, NaN-aware reductions, histograms, averages,
covariance and 1-D convolution.

* ``median``/``percentile``/``quantile`` (and their ``nan`` forms) sort along
  the reduced axis with the distributed sort, then read the few order
  statistics they need (slices of the sorted array, or, for the ``nan``
  forms whose index differs per row, a masked sum along the axis) and
  interpolate as NumPy does, with NumPy's own index formulas.
* The ``nan`` reductions are the ordinary distributed reductions of the
  array with NaNs replaced, plus NumPy's all-NaN warnings and errors.
* ``histogram``/``histogramdd``/``bincount`` count each rank's block against
  bin edges every rank computes identically (from global minima and maxima),
  then add the counts in rank order: the bins are replicated (small).
* ``cov``/``corrcoef`` use the distributed matrix product; the ``k x k``
  result is replicated.
* ``convolve``/``correlate`` read ``len(v) - 1`` ghost cells from the next
  rank; the short kernel is replicated.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np
import numpy.lib._function_base_impl as _fb
from numpy.lib.array_utils import normalize_axis_tuple

from . import _engine
from ._dispatch import implements
from ._sorting import _wrap, balanced, sort
from .comm import reduce_bcast
from .decomposition import Layout

__all__ = [
    "median",
    "percentile",
    "quantile",
    "nanmedian",
    "nanpercentile",
    "nanquantile",
    "nansum",
    "nanprod",
    "nanmin",
    "nanmax",
    "nanmean",
    "nanvar",
    "nanstd",
    "nanargmin",
    "nanargmax",
    "histogram",
    "histogram_bin_edges",
    "histogram2d",
    "histogramdd",
    "bincount",
    "digitize",
    "average",
    "cov",
    "corrcoef",
    "convolve",
    "correlate",
]

_NV = np._NoValue


# ---------------------------------------------------------------- helpers
def _ew(fn, args, **kw):
    """``fn`` elementwise: distributed when an operand is, plain NumPy otherwise."""
    if any(_engine.is_distributed(a) for a in args):
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
    return bool(np.any(x)) if _engine.is_distributed(x) else bool(np.any(np.asarray(x)))


def _local_map(x, fn, dtype):
    """Block-by-block ``fn(block, be)`` on balanced ``x``, with result ``dtype``.  Collective."""
    x = balanced(x)
    ctx = x._st.ctx
    out = fn(x.local, x._st.be) if x._layout.owned_size(ctx.rank) else None
    return _wrap(ctx, x._layout, np.dtype(dtype), out)


def _finish(res, out):
    if out is not None:
        _engine.assign(out, res)
        return out
    return res


def _ctx(*xs):
    return next(x for x in xs if _engine.is_distributed(x))._st.ctx


# ------------------------------------------------------------ nan reductions
@implements(np.nansum)
def nansum(a, axis=None, dtype=None, out=None, keepdims=_NV, initial=_NV, where=_NV):
    """Sum with NaNs counted as zero.  Collective."""
    kw = _kd(keepdims)
    if initial is not _NV:
        kw["initial"] = initial
    if where is not _NV:
        kw["where"] = where
    return np.sum(_replace_nan(a, 0), axis=axis, dtype=dtype, out=out, **kw)


@implements(np.nanprod)
def nanprod(a, axis=None, dtype=None, out=None, keepdims=_NV, initial=_NV, where=_NV):
    """Product with NaNs counted as one.  Collective."""
    kw = _kd(keepdims)
    if initial is not _NV:
        kw["initial"] = initial
    if where is not _NV:
        kw["where"] = where
    return np.prod(_replace_nan(a, 1), axis=axis, dtype=dtype, out=out, **kw)


def _nan_extreme(name, a, axis, out, keepdims, initial, where):
    kw = _kd(keepdims)
    if initial is not _NV:
        kw["initial"] = initial
    if where is not _NV:
        kw["where"] = where
    fn = np.min if name == "min" else np.max
    if a.dtype.kind not in "fc":
        return fn(a, axis=axis, out=out, **kw)
    fill = np.inf if name == "min" else -np.inf
    res = fn(_replace_nan(a, fill), axis=axis, **kw)
    allnan = np.all(_isnan(a), axis=axis, **_kd(keepdims))
    if _any(allnan):
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
        res = np.where(allnan, np.array(np.nan, a.dtype), res)
        if not _engine.is_distributed(res):
            res = a.dtype.type(np.asarray(res)[()])
    return _finish(res, out)


@implements(np.nanmin)
def nanmin(a, axis=None, out=None, keepdims=_NV, initial=_NV, where=_NV):
    """Minimum ignoring NaNs (NaN, with a warning, for all-NaN slices).  Collective."""
    return _nan_extreme("min", a, axis, out, keepdims, initial, where)


@implements(np.nanmax)
def nanmax(a, axis=None, out=None, keepdims=_NV, initial=_NV, where=_NV):
    """Maximum ignoring NaNs (NaN, with a warning, for all-NaN slices).  Collective."""
    return _nan_extreme("max", a, axis, out, keepdims, initial, where)


def _nan_arg(name, a, axis, out, keepdims):
    kw = _kd(keepdims)
    fn = np.argmin if name == "min" else np.argmax
    if a.dtype.kind not in "fc":
        return fn(a, axis=axis, out=out, **kw)
    if a.size and _any(np.all(_isnan(a), axis=axis)):
        raise ValueError("All-NaN slice encountered")
    return fn(_replace_nan(a, np.inf if name == "min" else -np.inf), axis=axis, out=out, **kw)


@implements(np.nanargmin)
def nanargmin(a, axis=None, out=None, *, keepdims=_NV):
    """Index of the minimum ignoring NaNs (ValueError for all-NaN slices).  Collective."""
    return _nan_arg("min", a, axis, out, keepdims)


@implements(np.nanargmax)
def nanargmax(a, axis=None, out=None, *, keepdims=_NV):
    """Index of the maximum ignoring NaNs (ValueError for all-NaN slices).  Collective."""
    return _nan_arg("max", a, axis, out, keepdims)


def _count(a, axis, keepdims):
    return np.sum(_ew(np.logical_not, [_isnan(a)]), axis=axis, dtype=np.intp, keepdims=keepdims)


@implements(np.nanmean)
def nanmean(a, axis=None, dtype=None, out=None, keepdims=_NV, *, where=_NV):
    """Mean ignoring NaNs ("Mean of empty slice" warning where none is left).  Collective."""
    if where is not _NV:
        raise NotImplementedError("numpy.nanmean(where=...) is not implemented in spmdarray")
    if a.dtype.kind not in "fc":
        return np.mean(a, axis=axis, dtype=dtype, out=out, **_kd(keepdims))
    keep = keepdims is not _NV and bool(keepdims)
    cnt = _count(a, axis, keep)
    tot = np.sum(_replace_nan(a, 0), axis=axis, dtype=dtype, keepdims=keep)
    rdt = np.asarray(tot).dtype if not _engine.is_distributed(tot) else tot.dtype
    if _any(_ew(np.equal, [cnt, 0])):
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        avg = _ew(np.true_divide, [tot, cnt])
    avg = avg.astype(rdt) if _engine.is_distributed(avg) else rdt.type(avg)
    return _finish(avg, out)


@implements(np.nanvar)
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NV, *, where=_NV, mean=_NV, correction=_NV):
    """Variance ignoring NaNs (NumPy's warnings where ``count - ddof <= 0``).  Collective."""
    if where is not _NV or mean is not _NV:
        raise NotImplementedError("numpy.nanvar(where=..., mean=...) is not implemented in spmdarray")
    if correction is not _NV:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    if a.dtype.kind not in "fc":
        return np.var(a, axis=axis, dtype=dtype, out=out, ddof=ddof, **_kd(keepdims))
    keep = keepdims is not _NV and bool(keepdims)
    nan = _isnan(a)
    arr = _replace_nan(a, 0)
    cnt = _count(a, axis, True)
    tot = np.sum(arr, axis=axis, dtype=dtype, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        avg = _ew(np.true_divide, [tot, cnt])
        d = np.where(nan, np.array(0, a.dtype), _ew(np.subtract, [arr, avg]))
        if d.dtype.kind == "c":
            sq = _ew(np.multiply, [d, _ew(np.conjugate, [d])])
            with warnings.catch_warnings():  # d * conj(d) is real
                warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
                sq = sq.astype(np.finfo(d.dtype).dtype)
        else:
            sq = _ew(np.multiply, [d, d])
        ss = np.sum(sq, axis=axis, dtype=dtype, keepdims=keep)
        cnt = _count(a, axis, keep)
        dof = _ew(np.subtract, [cnt, ddof])
        bad = _ew(np.less_equal, [dof, 0])
        if _any(bad):
            warnings.warn("Degrees of freedom <= 0 for slice.", RuntimeWarning, stacklevel=2)
        var = _ew(np.true_divide, [ss, _ew(np.maximum, [dof, 0])])
        var = np.where(bad, np.nan, var)
    rdt = np.var(np.ones(1, a.dtype), dtype=dtype).dtype
    var = var.astype(rdt) if _engine.is_distributed(var) else rdt.type(np.asarray(var)[()])
    return _finish(var, out)


@implements(np.nanstd)
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NV, *, where=_NV, mean=_NV, correction=_NV):
    """Standard deviation ignoring NaNs.  Collective."""
    v = nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where, mean=mean, correction=correction)
    return _finish(_ew(np.sqrt, [v]), out)


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
    if not _engine.is_distributed(a):
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
        from ._sorting import _sort_along

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
        from ._joining import stack

        res = results[0] if median or qarr.ndim == 0 else stack(results)
        return res.reshape(out_shape) if res.shape != out_shape else res
    vals = np.array([np.asarray(r)[()] for r in results], rdt)
    res = vals.reshape(out_shape)
    return _rep(ctx, res) if res.ndim else rdt.type(res[()])


def _cast(x, dt):
    if _engine.is_distributed(x):
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
    w = weights if _engine.is_distributed(weights) else None
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


# ----------------------------------------------------------------- histograms
def _host_block(x):
    """This rank's block of balanced ``x``, flattened, on the host."""
    x = balanced(x)
    if not x._layout.owned_size(x._st.ctx.rank):
        return np.empty(0, x.dtype)
    return x._st.be.to_host(x.local).reshape(-1)


def _weights_block(weights, a):
    """This rank's block of ``weights`` (a's shape), aligned with ``_host_block(a.ravel())``."""
    if weights is None:
        return None
    if np.shape(weights) != a.shape:
        raise ValueError("weights should have the same shape as a.")
    if _engine.is_distributed(weights):
        return _host_block(weights.ravel())
    ctx = a._st.ctx
    lay = Layout.balanced((a.size,), ctx.size)
    lo, hi = lay.block(ctx.rank)[0]
    return np.asarray(weights).reshape(-1)[lo:hi]


def _allsum(ctx, arr: np.ndarray) -> np.ndarray:
    """Element-wise sum over all ranks (rank order, the same everywhere).  Collective."""
    return reduce_bcast(ctx.comm, np.ascontiguousarray(arr), "sum") if ctx.size > 1 else arr


def _minmax(x):
    return np.min(x), np.max(x)


def _auto_edges(a, bins: str, range, weights):  # noqa: A002
    """Edges for a named rule (``'auto'``, ``'fd'``, ...): NumPy's own selector
    runs on the distributed data (its ``std``/``percentile``/``histogram``
    calls are the distributed ones)."""
    from numpy.lib import _histograms_impl as hi

    from ._sorting import _select

    if bins not in hi._hist_bin_selectors:
        raise ValueError(f"{bins!r} is not a valid estimator for `bins`")
    if weights is not None:
        raise TypeError("Automated estimation of the number of bins is not supported for weighted data")
    flat = a.ravel()
    if range is None:
        probe = np.array(_minmax(flat), a.dtype) if a.size else np.empty(0, a.dtype)
        first, last = hi._get_outer_edges(probe, None)
    else:
        first, last = hi._get_outer_edges(np.empty(0, a.dtype), range)
        keep = _ew(np.logical_and, [_ew(np.greater_equal, [flat, first]), _ew(np.less_equal, [flat, last])])
        if not bool(np.all(keep)):
            flat = _select(flat, keep)
    n = 1
    if flat.size:
        width = hi._hist_bin_selectors[bins](flat, (first, last))
        if width:
            if np.issubdtype(a.dtype, np.integer) and width < 1:
                width = 1
            n = int(np.ceil(hi._unsigned_subtract(last, first) / width))
    return np.histogram_bin_edges(np.empty(0, a.dtype), n, (first, last))


def _edges(a, bins, range, weights=None):  # noqa: A002
    """Bin edges every rank computes identically (global min/max when needed)."""
    if isinstance(bins, str):
        return _auto_edges(a, bins, range, weights)
    if np.ndim(bins) == 0 and range is None and a.size:
        try:
            operator.index(bins)
        except TypeError:
            raise TypeError("`bins` must be an integer, a string, or an array") from None
        mn, mx = _minmax(a)
        return np.histogram_bin_edges(np.array([mn, mx], a.dtype), bins)
    return np.histogram_bin_edges(np.empty(0, a.dtype), bins, range)


@implements(np.histogram_bin_edges, replicated=True)
def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    """Bin edges (replicated).  Collective."""
    return _rep(a._st.ctx, _edges(a, bins, range, weights))


@implements(np.histogram, replicated=True)
def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """Distributed ``numpy.histogram``: per-rank counts added in rank order.  Collective.

    The counts and edges are small and replicated.  String ``bins`` raise
    ``NotImplementedError``.
    """
    wb = _weights_block(weights, a)
    edges = _edges(a, bins, range, weights)
    block = _host_block(a.ravel())
    n = np.histogram(block, edges, weights=wb)[0]
    n = _allsum(a._st.ctx, n)
    if density:
        db = np.diff(edges).astype(float)
        n = n / db / n.sum()
    ctx = a._st.ctx
    return _rep(ctx, n), _rep(ctx, edges)


def _columns(sample):
    if isinstance(sample, (list, tuple)):
        return [c.ravel() if _engine.is_distributed(c) else c for c in sample]
    if sample.ndim == 1:
        return [sample]
    if sample.ndim != 2:
        raise NotImplementedError("numpy.histogramdd of a sample with more than 2 dimensions in spmdarray")
    return [sample[:, i] for i in range(sample.shape[1])]


@implements(np.histogramdd, replicated=True)
def histogramdd(sample, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """Distributed ``numpy.histogramdd``.  Collective.  The histogram and edges are replicated."""
    cols = _columns(sample)
    ctx = _ctx(*cols)
    D = len(cols)
    N = cols[0].size if _engine.is_distributed(cols[0]) else len(cols[0])
    from ._creation import array

    cols = [c if _engine.is_distributed(c) else array(np.asarray(c), comm=ctx) for c in cols]
    try:
        M = len(bins)
        if M != D:
            raise ValueError("The dimension of bins must be equal to the dimension of the sample x.")
    except TypeError:
        bins = D * [bins]
    if range is None and N:
        rng = []
        for c, b in zip(cols, bins):
            rng.append(tuple(_minmax(c)) if np.ndim(b) == 0 else None)
        range = rng  # noqa: A001
    dt = np.result_type(*[c.dtype for c in cols])
    edges = np.histogramdd(np.empty((0, D), dt), bins, range)[1]
    blocks = np.stack([_host_block(c) for c in cols], axis=-1) if N else np.empty((0, D), dt)
    wb = None
    if weights is not None:
        if np.shape(weights) != (N,):
            raise ValueError("weights should have the same shape as a.")
        wb = _host_block(weights) if _engine.is_distributed(weights) else _weights_block(weights, cols[0])
    hist = np.histogramdd(blocks, list(edges), weights=wb)[0]
    hist = _allsum(ctx, hist)
    if density:
        s = hist.sum()
        for i in np.arange(D):
            shape = np.ones(D, int)
            shape[i] = len(edges[i]) - 1
            hist = hist / np.diff(edges[i]).reshape(shape)
        hist /= s
    return _rep(ctx, hist), [_rep(ctx, e) for e in edges]


@implements(np.histogram2d, replicated=True)
def histogram2d(x, y, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """Distributed ``numpy.histogram2d``.  Collective.  The histogram and edges are replicated."""
    try:
        N = len(bins)
    except TypeError:
        N = 1
    if N != 1 and N != 2:
        xedges = yedges = np.asarray(bins)
        bins = [xedges, yedges]
    hist, edges = histogramdd([x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]


@implements(np.bincount, replicated=True)
def bincount(x, weights=None, minlength=0):
    """Distributed ``numpy.bincount``: per-rank counts added in rank order.  Collective.

    The result (``max(x) + 1`` bins) is replicated.
    """
    np.bincount(np.zeros((0,) * max(x.ndim, 1) if x.ndim != 1 else 0, x.dtype), minlength=minlength)
    if weights is not None and np.shape(weights) != x.shape:
        raise ValueError("The weights and list don't have the same length.")
    length = minlength
    if x.size:
        mn, mx = _minmax(x)
        if mn < 0:
            raise ValueError("'list' argument must have no negative elements")
        length = max(int(mx) + 1, minlength)
    wb = _weights_block(weights, x)
    n = np.bincount(_host_block(x), wb, minlength=length)
    return _rep(x._st.ctx, _allsum(x._st.ctx, n))


@implements(np.digitize)
def digitize(x, bins, right=False):
    """Distributed ``numpy.digitize`` (``bins`` replicated; gathered if distributed).  Collective."""
    b = np.asarray(bins)
    np.digitize(np.zeros(0, x.dtype), b, right)  # NumPy's errors
    shape = x.shape
    res = _local_map(x, lambda blk, be: be.xp.digitize(blk, be.asarray(b), right), np.intp)
    return res.reshape(shape) if res.shape != shape else res


# ------------------------------------------------------------- average, cov
@implements(np.average)
def average(a, axis=None, weights=None, returned=False, *, keepdims=_NV):
    """Distributed ``numpy.average``.  Collective."""
    keep = keepdims is not _NV and bool(keepdims)
    if weights is None:
        avg = np.mean(a, axis=axis, keepdims=keep)
        adt = avg.dtype if hasattr(avg, "dtype") else np.asarray(avg).dtype
        scl = adt.type(a.size / max(np.size(avg), 1))
        if returned:
            if np.shape(avg):
                scl = _ew(np.multiply, [np.ones_like(avg), scl])
            return avg, scl
        return avg
    wgt = weights
    wshape = np.shape(wgt)
    wdt = wgt.dtype if _engine.is_distributed(wgt) else np.asarray(wgt).dtype
    if a.dtype.kind in "iub":
        rdt = np.result_type(a.dtype, wdt, "f8")
    else:
        rdt = np.result_type(a.dtype, wdt)
    if a.shape != wshape:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        axes = normalize_axis_tuple(axis, a.ndim)
        if wshape != tuple(a.shape[ax] for ax in axes):
            raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
        wgt = wgt if _engine.is_distributed(wgt) else np.asarray(wgt)
        wgt = wgt.transpose(tuple(int(i) for i in np.argsort(axes)))
        wgt = wgt.reshape(tuple((s if ax in axes else 1) for ax, s in enumerate(a.shape)))
        axis = axes
    scl = np.sum(_ew(np.multiply, [np.ones_like(a, dtype=rdt), wgt]), axis=axis, dtype=rdt, keepdims=keep)
    if _any(_ew(np.equal, [scl, 0.0])):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    tot = np.sum(_ew(np.multiply, [a, wgt], dtype=rdt), axis=axis, keepdims=keep)
    avg = _ew(np.true_divide, [tot, scl])
    if returned:
        return avg, scl
    return avg


def _as_dist(m, ctx, dtype):
    if _engine.is_distributed(m):
        return m.astype(dtype)
    from ._creation import array

    return array(np.asarray(m, dtype=dtype), comm=ctx)


@implements(np.cov, replicated=True)
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """Distributed ``numpy.cov``: centred data times its transpose.  Collective.

    The ``k x k`` result is replicated.
    """
    from ._joining import concatenate

    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    if np.ndim(m) > 2:
        raise ValueError("m has more than 2 dimensions")
    if y is not None and np.ndim(y) > 2:
        raise ValueError("y has more than 2 dimensions")
    mdt = m.dtype if _engine.is_distributed(m) else np.asarray(m).dtype
    if dtype is None:
        ydt = None if y is None else (y.dtype if _engine.is_distributed(y) else np.asarray(y).dtype)
        dtype = np.result_type(mdt, np.float64) if ydt is None else np.result_type(mdt, ydt, np.float64)
    ctx = _ctx(*(v for v in (m, y, fweights, aweights) if v is not None))
    X = _as_dist(m, ctx, dtype)
    if X.ndim == 1:
        X = X.reshape(1, -1)
    if not rowvar and np.ndim(m) != 1:
        X = X.T
    if X.shape[0] == 0:
        return _rep(ctx, np.array([]).reshape(0, 0))
    if y is not None:
        Y = _as_dist(y, ctx, dtype)
        if Y.ndim == 1:
            Y = Y.reshape(1, -1)
        if not rowvar and Y.shape[0] != 1:
            Y = Y.T
        X = concatenate((X, Y), axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        f = _as_dist(fweights, ctx, float)
        if f.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if f.shape[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if _any(_ew(np.not_equal, [f, np.around(f)])):
            raise TypeError("fweights must be integer")
        if _any(_ew(np.less, [f, 0])):
            raise ValueError("fweights cannot be negative")
        w = f
    if aweights is not None:
        aw = _as_dist(aweights, ctx, float)
        if aw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if aw.shape[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and aweights")
        if _any(_ew(np.less, [aw, 0])):
            raise ValueError("aweights cannot be negative")
        w = aw if w is None else _ew(np.multiply, [w, aw])
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    w_sum = np.asarray(w_sum)[0]
    if w is None:
        fact = X.shape[1] - ddof
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * np.sum(_ew(np.multiply, [w, aw])) / w_sum
    if fact <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    Xc = _ew(np.subtract, [X, avg.reshape(-1, 1)])
    XT = Xc.T if w is None else _ew(np.multiply, [Xc, w]).T
    if XT.dtype.kind == "c":
        XT = _ew(np.conjugate, [XT])
    c = np.asarray(np.matmul(Xc, XT))
    with np.errstate(divide="ignore", invalid="ignore"):
        c = c * np.true_divide(1, fact)
    return _rep(ctx, c.squeeze())


@implements(np.corrcoef, replicated=True)
def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Distributed ``numpy.corrcoef`` (through ``cov``).  Collective.  The result is replicated."""
    c = np.asarray(cov(x, y, rowvar, dtype=dtype))
    ctx = _ctx(*(v for v in (x, y) if v is not None))
    try:
        d = np.diag(c)
    except ValueError:
        with np.errstate(divide="ignore", invalid="ignore"):
            return _rep(ctx, c / c)
    stddev = np.sqrt(d.real)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = c / stddev[:, None]
        c = c / stddev[None, :]
    np.clip(c.real, -1, 1, out=c.real)
    if np.iscomplexobj(c):
        np.clip(c.imag, -1, 1, out=c.imag)
    return _rep(ctx, c)


# ------------------------------------------------------------- convolution
def _corr_core(a, v: np.ndarray, n_left: int, n_right: int):
    """``out[i] = sum_j a_pad[i + j] * conj(v[j])`` with ``n_left``/``n_right`` zeros around ``a``.

    Collective.  Each rank reads the ``len(v) - 1`` cells after its output
    block through shifted views (ghost cells), then runs NumPy's own
    ``correlate(..., 'valid')`` on that segment.
    """
    from ._creation import zeros

    ctx = a._st.ctx
    n, m = a.shape[0], len(v)
    dt = np.result_type(a.dtype, v.dtype)
    npad = n + n_left + n_right
    L = npad - m + 1
    pad = zeros(npad, dtype=a.dtype, comm=ctx)
    pad[n_left : n_left + n] = a
    olay = Layout.balanced((L,), ctx.size)
    sizes = [hi - lo for lo, hi in olay.intervals[0] if hi > lo] if olay.intervals[0] is not None else [L]
    shifts = [0, m - 1] if min(sizes, default=0) >= m - 1 else list(range(m))
    views = [pad[j : j + L] for j in shifts]
    pieces = _engine.fetch(ctx, views, olay)
    be = a._st.be
    if olay.owned_size(ctx.rank):
        B = olay.block(ctx.rank)[0][1] - olay.block(ctx.rank)[0][0]
        hp = [be.to_host(p).reshape(-1) for p in pieces]
        if shifts == [0, m - 1]:
            seg = np.concatenate([hp[0], hp[1][B - (m - 1) :]]) if m > 1 else hp[0]
        else:
            seg = np.concatenate([hp[0]] + [p[-1:] for p in hp[1:]])
        local = np.correlate(seg, v, "valid")
    else:
        local = None
    return _wrap(
        ctx, olay, np.correlate(np.ones(1, a.dtype), np.ones(1, v.dtype)).dtype if local is None else local.dtype, local
    ).astype(dt, copy=False)


def _mode_pads(mode, m):
    if mode in ("full", 2):
        return m - 1, m - 1
    if mode in ("same", 1):
        return m // 2, m - m // 2 - 1
    if mode in ("valid", 0):
        return 0, 0
    raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")


def _as_1d(x, ctx):
    if _engine.is_distributed(x):
        if x.ndim != 1:
            if x.ndim == 0:
                x = x.reshape(1)
            else:
                raise ValueError("object too deep for desired array")
        return x
    arr = np.atleast_1d(np.asarray(x))
    if arr.ndim != 1:
        raise ValueError("object too deep for desired array")
    return arr


def _kernel(v):
    """The short input on every rank (gathered when distributed: it must be small)."""
    return np.asarray(v)


@implements(np.correlate)
def correlate(a, v, mode="valid"):
    """Distributed 1-D ``numpy.correlate``; the shorter input is replicated.  Collective."""
    ctx = _ctx(a, v)
    a, v = _as_1d(a, ctx), _as_1d(v, ctx)
    n, m = (
        len(a) if not _engine.is_distributed(a) else a.shape[0],
        len(v) if not _engine.is_distributed(v) else v.shape[0],
    )
    if n == 0:
        raise ValueError("a cannot be empty")
    if m == 0:
        raise ValueError("v cannot be empty")
    _mode_pads(mode, 1)
    if m > n:
        r = correlate(v, a, mode)
        r = r[::-1]
        return _ew(np.conjugate, [r]) if r.dtype.kind == "c" else r.copy()
    vh = _kernel(v)
    a = _as_dist(a, ctx, a.dtype) if not _engine.is_distributed(a) else a
    nl, nr = _mode_pads(mode, m)
    return _corr_core(a, vh, nl, nr)


@implements(np.convolve)
def convolve(a, v, mode="full"):
    """Distributed 1-D ``numpy.convolve``; the shorter input is replicated.  Collective."""
    ctx = _ctx(a, v)
    a, v = _as_1d(a, ctx), _as_1d(v, ctx)
    n = a.shape[0]
    m = v.shape[0]
    if m > n:
        a, v, n, m = v, a, m, n
    if n == 0:
        raise ValueError("a cannot be empty")
    if m == 0:
        raise ValueError("v cannot be empty")
    nl, nr = _mode_pads(mode, m)
    a = a if _engine.is_distributed(a) else _as_dist(a, ctx, a.dtype)
    return _corr_core(a, np.conj(_kernel(v)[::-1]), nl, nr)
