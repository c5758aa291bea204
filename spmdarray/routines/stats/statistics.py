"""Statistics: NaN-aware reductions, averages, covariance and 1-D convolution;
with :mod:`spmdarray.routines.stats.order` and :mod:`spmdarray.routines.stats.histograms`,
whose names are re-exported here, where they were first defined.

* The ``nan`` reductions are the ordinary distributed reductions of the
  array with NaNs replaced, plus NumPy's all-NaN warnings and errors.
* ``median``/``percentile``/``quantile`` (and their ``nan`` forms) sort along
  the reduced axis with the distributed sort, then read the few order
  statistics they need and interpolate as NumPy does
  (:mod:`spmdarray.routines.stats.order`).
* ``histogram``/``histogramdd``/``bincount`` count each rank's block against
  bin edges every rank computes identically, then add the counts in rank
  order: the bins are replicated (small) (:mod:`spmdarray.routines.stats.histograms`).
* ``cov``/``corrcoef`` use the distributed matrix product; the ``k x k``
  result stays distributed as the product lays it out (nothing gathered).
* ``convolve``/``correlate`` read ``len(v) - 1`` ghost cells from the next
  rank; the short kernel is replicated.
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from spmdarray.core import fetch as _fetch
from spmdarray.core.registry import implements
from spmdarray.decomposition import Layout
from spmdarray.routines.creation import zeros
from spmdarray.routines.manipulation.joining import concatenate
from spmdarray.routines.sorting import _wrap
from spmdarray.routines.stats import histograms as _histograms
from spmdarray.routines.stats import order as _order_statistics
from spmdarray.routines.stats.helpers import (
    _NV,
    _any,
    _as_dist,
    _count,
    _ctx,
    _ew,
    _finish,
    _isnan,
    _kd,
    _rep,
    _replace_nan,
)
from spmdarray.routines.stats.histograms import *  # noqa: F403  (re-exported: first defined here)
from spmdarray.routines.stats.order import *  # noqa: F403  (re-exported: first defined here)

__all__ = [
    "nansum",
    "nanprod",
    "nanmin",
    "nanmax",
    "nanmean",
    "nanvar",
    "nanstd",
    "nanargmin",
    "nanargmax",
    "average",
    "cov",
    "corrcoef",
    "convolve",
    "correlate",
    *_order_statistics.__all__,
    *_histograms.__all__,
]


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
        if not _fetch.is_distributed(res):
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
    rdt = np.asarray(tot).dtype if not _fetch.is_distributed(tot) else tot.dtype
    if _any(_ew(np.equal, [cnt, 0])):
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        avg = _ew(np.true_divide, [tot, cnt])
    avg = avg.astype(rdt) if _fetch.is_distributed(avg) else rdt.type(avg)
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
    var = var.astype(rdt) if _fetch.is_distributed(var) else rdt.type(np.asarray(var)[()])
    return _finish(var, out)


@implements(np.nanstd)
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NV, *, where=_NV, mean=_NV, correction=_NV):
    """Standard deviation ignoring NaNs.  Collective."""
    v = nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where, mean=mean, correction=correction)
    return _finish(_ew(np.sqrt, [v]), out)


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
    wdt = wgt.dtype if _fetch.is_distributed(wgt) else np.asarray(wgt).dtype
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
        wgt = wgt if _fetch.is_distributed(wgt) else np.asarray(wgt)
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


@implements(np.cov)
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """Distributed ``numpy.cov``: centred data times its transpose.  Collective.

    The ``k x k`` result stays distributed as the matrix product lays it out
    (nothing is gathered), scaled in place as NumPy scales it.
    """

    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    if np.ndim(m) > 2:
        raise ValueError("m has more than 2 dimensions")
    if y is not None and np.ndim(y) > 2:
        raise ValueError("y has more than 2 dimensions")
    mdt = m.dtype if _fetch.is_distributed(m) else np.asarray(m).dtype
    if dtype is None:
        ydt = None if y is None else (y.dtype if _fetch.is_distributed(y) else np.asarray(y).dtype)
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
    c = np.matmul(Xc, XT)  # (distributed as the product lays it out: nothing gathered)
    with np.errstate(divide="ignore", invalid="ignore"):
        c *= np.true_divide(1, fact)  # (in place, as NumPy's own ``cov``: its dtype kept)
    return c.squeeze()


@implements(np.corrcoef)
def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Distributed ``numpy.corrcoef``: ``cov`` scaled by the standard deviations.  Collective.

    NumPy's own steps on the distributed covariance: its diagonal (``k``
    elements), then two in-place divisions and the clipping of the real (and
    imaginary) part to ``[-1, 1]``.  The ``k x k`` result stays distributed as
    ``cov`` lays it out: nothing is gathered.
    """
    c = cov(x, y, rowvar, dtype=dtype)
    try:
        d = np.diag(c)
    except ValueError:  # a 0-d covariance: NaN for NaN, inf or 0, else 1 (NumPy's ``c / c``)
        with np.errstate(divide="ignore", invalid="ignore"):
            return c / c
    stddev = np.sqrt(d.real)
    with np.errstate(divide="ignore", invalid="ignore"):
        c /= stddev[:, None]
        c /= stddev[None, :]
    np.clip(c.real, -1, 1, out=c.real)
    if np.iscomplexobj(c):
        np.clip(c.imag, -1, 1, out=c.imag)
    return c


# ------------------------------------------------------------- convolution
def _corr_core(a, v: np.ndarray, n_left: int, n_right: int):
    """``out[i] = sum_j a_pad[i + j] * conj(v[j])`` with ``n_left``/``n_right`` zeros around ``a``.

    Collective.  Each rank reads the ``len(v) - 1`` cells after its output
    block through shifted views (ghost cells), then runs NumPy's own
    ``correlate(..., 'valid')`` on that segment.
    """

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
    pieces = _fetch.fetch(ctx, views, olay)
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
    if _fetch.is_distributed(x):
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
        len(a) if not _fetch.is_distributed(a) else a.shape[0],
        len(v) if not _fetch.is_distributed(v) else v.shape[0],
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
    a = _as_dist(a, ctx, a.dtype) if not _fetch.is_distributed(a) else a
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
    a = a if _fetch.is_distributed(a) else _as_dist(a, ctx, a.dtype)
    return _corr_core(a, np.conj(_kernel(v)[::-1]), nl, nr)
