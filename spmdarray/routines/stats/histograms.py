"""Histograms, distributed: ``histogram``, ``histogram_bin_edges``,
``histogram2d``, ``histogramdd``, ``bincount`` and ``digitize``.

``histogram``/``histogramdd``/``bincount`` count each rank's block against
bin edges every rank computes identically (from global minima and maxima),
then add the counts in rank order: the bins are replicated (small).
``digitize`` maps each block against the replicated bins (elementwise).
"""

from __future__ import annotations

import operator

import numpy as np

from spmdarray.comm import reduce_bcast
from spmdarray.core import fetch as _fetch
from spmdarray.core.registry import implements
from spmdarray.decomposition import Layout
from spmdarray.routines.creation import array
from spmdarray.routines.sorting import _select, balanced
from spmdarray.routines.stats.helpers import _ctx, _ew, _local_map, _rep

__all__ = [
    "histogram",
    "histogram_bin_edges",
    "histogram2d",
    "histogramdd",
    "bincount",
    "digitize",
]


# ----------------------------------------------------------------- histograms
def _host_block(x):
    """This rank's block of balanced ``x``, flattened, on the host."""
    x = balanced(x)
    if not x._layout.owned_size(x._st.ctx.rank):
        return np.empty(0, x.dtype)
    return x._st.be.to_host(x._block).reshape(-1)


def _weights_block(weights, a):
    """This rank's block of ``weights`` (a's shape), aligned with ``_host_block(a.ravel())``."""
    if weights is None:
        return None
    if np.shape(weights) != a.shape:
        raise ValueError("weights should have the same shape as a.")
    if _fetch.is_distributed(weights):
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
    block = _host_block(a.ravel())
    rng = range
    if rng is None and a.size and not isinstance(bins, str) and np.ndim(bins) == 0:
        rng = _minmax(a)
        if not (np.isfinite(rng[0]) and np.isfinite(rng[1])):
            rng = None  # NumPy's error for the autodetected range, below
    if rng is not None and not isinstance(bins, str) and np.ndim(bins) == 0:
        # Uniform bins: each block is counted by NumPy's fast uniform-bin path over the
        # global range, which bins every value as NumPy's call on the whole array does.
        n, edges = np.histogram(block, bins, rng, weights=wb)
    else:
        edges = _edges(a, bins, range, weights)
        n = np.histogram(block, edges, weights=wb)[0]
    n = _allsum(a._st.ctx, n)
    if density:
        db = np.diff(edges).astype(float)
        n = n / db / n.sum()
    ctx = a._st.ctx
    return _rep(ctx, n), _rep(ctx, edges)


def _columns(sample):
    if isinstance(sample, (list, tuple)):
        return [c.ravel() if _fetch.is_distributed(c) else c for c in sample]
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
    N = cols[0].size if _fetch.is_distributed(cols[0]) else len(cols[0])

    cols = [c if _fetch.is_distributed(c) else array(np.asarray(c), comm=ctx) for c in cols]
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
        wb = _host_block(weights) if _fetch.is_distributed(weights) else _weights_block(weights, cols[0])
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
