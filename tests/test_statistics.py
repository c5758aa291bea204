"""Order statistics, nan reductions, histograms, averages, covariance and 1-D
convolution against NumPy (uneven shapes, NaNs, empty inputs, views)."""

from __future__ import annotations

import warnings

import numpy
import pytest
from helpers import assert_eq, ref, world

import spmdarray as sp
from spmdarray.core.placement import is_whole

METHODS = [
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "linear",
    "median_unbiased",
    "normal_unbiased",
    "lower",
    "higher",
    "midpoint",
    "nearest",
]


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kw)


@pytest.mark.parametrize("method", METHODS)
def test_quantile_methods_match_numpy(method):
    a = ref((7, 6))
    x = sp.array(a)
    for axis in (None, 1, (0, 1)):
        for q in (0.0, 0.5, [0.1, 0.99]):
            assert_eq(numpy.quantile(x, q, axis=axis, method=method), numpy.quantile(a, q, axis=axis, method=method))
    want = numpy.percentile(a, [25, 50], axis=0, method=method)
    assert_eq(numpy.percentile(x, [25, 50], axis=0, method=method), want)
    i = ref((13,), numpy.int64)
    assert_eq(numpy.quantile(sp.array(i), 0.4, method=method), numpy.quantile(i, 0.4, method=method))


@pytest.mark.parametrize("shape", [(13,), (5, 6), (3, 4, 5)], ids=str)
def test_median_percentile_keepdims_and_nans(shape):
    a = ref(shape)
    x = sp.array(a)
    nd = len(shape)
    for axis in [None, *range(-nd, 0)]:
        for keepdims in (False, True)[: 1 + (axis is None or axis == -1)]:
            assert_eq(numpy.median(x, axis=axis, keepdims=keepdims), numpy.median(a, axis=axis, keepdims=keepdims))
            assert_eq(
                numpy.percentile(x, 30, axis=axis, keepdims=keepdims),
                numpy.percentile(a, 30, axis=axis, keepdims=keepdims),
            )
    assert_eq(numpy.median(x[::-2]), numpy.median(a[::-2]))
    f = a.astype(numpy.float32)
    assert_eq(numpy.median(sp.array(f), axis=0), numpy.median(f, axis=0), rtol=1e-6)
    assert_eq(numpy.quantile(sp.array(f), 0.3), numpy.quantile(f, 0.3), rtol=1e-6)
    i = ref(shape, numpy.int32)
    assert_eq(numpy.median(sp.array(i), axis=-1), numpy.median(i, axis=-1))
    b = a.copy()
    b.reshape(-1)[::4] = numpy.nan
    y = sp.array(b)
    for axis in [None, *range(nd)]:
        assert_eq(numpy.median(y, axis=axis), numpy.median(b, axis=axis))
        assert_eq(numpy.quantile(y, [0.2, 0.7], axis=axis), numpy.quantile(b, [0.2, 0.7], axis=axis))
        assert_eq(_quiet(numpy.nanmedian, y, axis=axis), _quiet(numpy.nanmedian, b, axis=axis))
        for method in ("linear", "lower"):
            assert_eq(
                _quiet(numpy.nanquantile, y, [0.2, 0.7], axis=axis, method=method),
                _quiet(numpy.nanquantile, b, [0.2, 0.7], axis=axis, method=method),
            )
        assert_eq(_quiet(numpy.nanpercentile, y, 40, axis=axis), _quiet(numpy.nanpercentile, b, 40, axis=axis))


def test_order_statistics_edge_cases_and_errors():
    a = ref((4, 5))
    x = sp.array(a)
    assert_eq(_quiet(numpy.median, sp.zeros((0, 3)), axis=0), _quiet(numpy.median, numpy.zeros((0, 3)), axis=0))
    b = numpy.full((3, 4), numpy.nan)
    b[1] = 1.0
    with pytest.warns(RuntimeWarning, match="All-NaN"):
        got = numpy.nanmedian(sp.array(b), axis=1)
    assert_eq(got, _quiet(numpy.nanmedian, b, axis=1))
    with pytest.warns(RuntimeWarning, match="All-NaN"):
        got = numpy.nanquantile(sp.array(b), 0.5, axis=1)
    assert_eq(got, _quiet(numpy.nanquantile, b, 0.5, axis=1))
    for call in (
        lambda m: numpy.quantile(m, 1.5),
        lambda m: numpy.percentile(m, -1),
        lambda m: numpy.quantile(m, 0.5, axis=2),
        lambda m: numpy.quantile(m, 0.5, method="bogus"),
        lambda m: numpy.median(m, axis=-3),
    ):
        with pytest.raises(Exception) as want:
            call(a)
        with pytest.raises(type(want.value)):
            call(x)


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32, numpy.int32, numpy.complex128])
def test_nan_reductions_match_numpy(dtype):
    a = ref((7, 5), dtype)
    if numpy.dtype(dtype).kind in "fc":
        a[1, 2] = a[4, 0] = a[6, 4] = numpy.nan
    x = sp.array(a)
    tol = 1e-5 if dtype == numpy.float32 else 1e-12
    for axis in (None, 0, 1, -1):
        for name in ("nansum", "nanprod", "nanmean", "nanvar", "nanstd"):
            fn = getattr(numpy, name)
            assert_eq(fn(x, axis=axis), fn(a, axis=axis), rtol=tol)
        if dtype != numpy.complex128:
            for name in ("nanmin", "nanmax", "nanargmin", "nanargmax"):
                fn = getattr(numpy, name)
                assert_eq(fn(x, axis=axis), fn(a, axis=axis))
    assert_eq(numpy.nansum(x, axis=0, keepdims=True), numpy.nansum(a, axis=0, keepdims=True), rtol=tol)
    assert_eq(numpy.nanvar(x, axis=1, ddof=1), numpy.nanvar(a, axis=1, ddof=1), rtol=tol)
    assert_eq(numpy.nanmean(x[::-2], axis=0), numpy.nanmean(a[::-2], axis=0), rtol=tol)


def test_nan_reductions_all_nan_warnings_and_errors():
    b = ref((3, 4))
    b[1] = numpy.nan
    y = sp.array(b)
    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
        got = numpy.nanmin(y, axis=1)
    assert_eq(got, _quiet(numpy.nanmin, b, axis=1))
    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
        got = numpy.nanmax(y, axis=1)
    assert_eq(got, _quiet(numpy.nanmax, b, axis=1))
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        got = numpy.nanmean(y, axis=1)
    assert_eq(got, _quiet(numpy.nanmean, b, axis=1))
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        got = numpy.nanvar(y, axis=1)
    assert_eq(got, _quiet(numpy.nanvar, b, axis=1))
    with pytest.raises(ValueError, match="All-NaN slice"):
        numpy.nanargmin(y, axis=1)
    with pytest.raises(ValueError, match="All-NaN slice"):
        numpy.nanargmax(sp.array(numpy.full(5, numpy.nan)))


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.int32, numpy.float32])
def test_histogram_matches_numpy(dtype):
    a = ref((17, 3), dtype)
    x = sp.array(a)
    w = ref((17, 3), numpy.float64, seed=4)
    for kw in (
        {},
        {"bins": 4},
        {"bins": 7, "range": (-1.0, 1.5)},
        {"bins": [-2, -0.5, 0, 0.3, 2]},
        {"density": True},
        {"bins": 5, "weights": w},
        {"bins": 5, "weights": sp.array(w), "density": True},
    ):
        want = numpy.histogram(a, **{k: (numpy.asarray(v) if k == "weights" else v) for k, v in kw.items()})
        got = numpy.histogram(x, **kw)
        assert_eq(got[0], want[0], rtol=1e-12)
        assert_eq(got[1], want[1], rtol=1e-12)
    assert_eq(numpy.histogram_bin_edges(x, 6), numpy.histogram_bin_edges(a, 6))
    assert_eq(numpy.histogram(x[::-2, 1])[0], numpy.histogram(a[::-2, 1])[0])
    e = numpy.zeros(0, dtype)
    assert_eq(numpy.histogram(sp.array(e), 3)[0], numpy.histogram(e, 3)[0])
    with pytest.raises(ValueError):
        numpy.histogram(x, bins=[1, 0])
    with pytest.raises(ValueError):
        numpy.histogram(x, range=(2, 1))
    for rule in ("auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"):
        assert_eq(numpy.histogram(x, bins=rule)[1], numpy.histogram(a, bins=rule)[1], rtol=1e-12)
    assert_eq(numpy.histogram(x, bins="auto", range=(-1, 1))[0], numpy.histogram(a, bins="auto", range=(-1, 1))[0])
    assert_eq(numpy.histogram_bin_edges(x, "fd"), numpy.histogram_bin_edges(a, "fd"), rtol=1e-12)
    with pytest.raises(ValueError):
        numpy.histogram(x, bins="bogus")
    with pytest.raises(TypeError):
        numpy.histogram(x, bins="auto", weights=numpy.ones(a.shape))


def test_histogram2d_histogramdd_match_numpy():
    a = ref((23, 3))
    x = sp.array(a)
    w = ref((23,), seed=9)
    rng = [(-1, 1), (-2, 2), (0, 1)]
    for kw in ({}, {"bins": 4}, {"bins": (3, 4, 2)}, {"bins": 3, "range": rng}, {"density": True}):
        got, gedges = numpy.histogramdd(x, **kw)
        want, wedges = numpy.histogramdd(a, **kw)
        assert_eq(got, want, rtol=1e-12)
        for g, e in zip(gedges, wedges):
            assert_eq(g, e)
    got = numpy.histogramdd(x, bins=3, weights=sp.array(w))[0]
    assert_eq(got, numpy.histogramdd(a, bins=3, weights=w)[0], rtol=1e-12)
    u, v = sp.array(a[:, 0]), sp.array(a[:, 1])
    for kw in ({}, {"bins": 5}, {"bins": [3, 6]}, {"bins": 4, "density": True, "weights": w}):
        want = numpy.histogram2d(a[:, 0], a[:, 1], **kw)
        got = numpy.histogram2d(u, v, **kw)
        for g, e in zip(got, want):
            assert_eq(g, e, rtol=1e-12)


def test_bincount_digitize_match_numpy():
    i = numpy.abs(ref((29,), numpy.int64)) % 11
    x = sp.array(i)
    w = ref((29,))
    assert_eq(numpy.bincount(x), numpy.bincount(i))
    assert_eq(numpy.bincount(x, minlength=20), numpy.bincount(i, minlength=20))
    assert_eq(numpy.bincount(x, weights=sp.array(w)), numpy.bincount(i, weights=w), rtol=1e-12)
    assert_eq(numpy.bincount(x[::-3]), numpy.bincount(i[::-3]))
    assert_eq(numpy.bincount(sp.zeros(0, int)), numpy.bincount(numpy.zeros(0, int)))
    with pytest.raises(ValueError):
        numpy.bincount(sp.array(i - 5))
    with pytest.raises(TypeError):
        numpy.bincount(sp.array(w))
    a = ref((6, 7))
    bins = numpy.array([-1.0, -0.2, 0.0, 0.5, 1.2])
    for right in (False, True):
        assert_eq(numpy.digitize(sp.array(a), bins, right=right), numpy.digitize(a, bins, right=right))
        assert_eq(numpy.digitize(sp.array(a)[::-1], bins[::-1], right), numpy.digitize(a[::-1], bins[::-1], right))
    with pytest.raises(ValueError):
        numpy.digitize(sp.array(a), numpy.array([1.0, 0.0, 2.0]))


def test_average_matches_numpy():
    a = ref((6, 5))
    x = sp.array(a)
    w = numpy.abs(ref((6, 5), seed=2))
    w1 = numpy.abs(ref((5,), seed=3))
    assert_eq(numpy.average(x), numpy.average(a))
    assert_eq(numpy.average(x, axis=0), numpy.average(a, axis=0))
    assert_eq(numpy.average(x, weights=sp.array(w)), numpy.average(a, weights=w))
    assert_eq(numpy.average(x, axis=1, weights=w1), numpy.average(a, axis=1, weights=w1))
    assert_eq(numpy.average(x, axis=1, weights=sp.array(w1)), numpy.average(a, axis=1, weights=w1))
    got = numpy.average(x, axis=0, weights=w, returned=True)
    want = numpy.average(a, axis=0, weights=w, returned=True)
    for g, e in zip(got, want):
        assert_eq(g, e)
    got = numpy.average(x, axis=0, returned=True)
    want = numpy.average(a, axis=0, returned=True)
    for g, e in zip(got, want):
        assert_eq(g, e)
    i = ref((7,), numpy.int32)
    assert_eq(numpy.average(sp.array(i), weights=numpy.arange(7)), numpy.average(i, weights=numpy.arange(7)))
    assert_eq(numpy.average(x, axis=1, keepdims=True), numpy.average(a, axis=1, keepdims=True))
    with pytest.raises(ZeroDivisionError):
        numpy.average(x, axis=1, weights=numpy.zeros(5))
    with pytest.raises(TypeError):
        numpy.average(x, weights=w1)
    with pytest.raises(ValueError):
        numpy.average(x, axis=0, weights=w1)


@pytest.mark.parametrize("split", [False, True], ids=["replicated", "split"])
def test_cov_corrcoef_match_numpy(split):
    # Split: the samples over the ranks (some hold none at 4 ranks), the k x k result as the product lays it out.
    with sp.config.set(replicate_below=0 if split else sp.config.replicate_below):
        _cov_corrcoef_cases()


def _cov_corrcoef_cases():
    a = ref((3, 17))
    x = sp.array(a)
    b = ref((17,), seed=5)
    assert_eq(numpy.cov(x), numpy.cov(a))
    # (scaled in place: float32 kept; partial sums combined in rank order: float32 rounding)
    assert_eq(numpy.cov(x, dtype=numpy.float32), numpy.cov(a, dtype=numpy.float32), rtol=1e-6, atol=1e-7)
    assert_eq(numpy.cov(sp.array(ref((6, 41)))), numpy.cov(ref((6, 41))))
    assert_eq(numpy.cov(x, bias=True), numpy.cov(a, bias=True))
    assert_eq(numpy.cov(x, ddof=2), numpy.cov(a, ddof=2))
    assert_eq(numpy.cov(x.T, rowvar=False), numpy.cov(a.T, rowvar=False))
    assert_eq(numpy.cov(x, sp.array(b)), numpy.cov(a, b))
    assert_eq(numpy.cov(sp.array(b)), numpy.cov(b))
    f = numpy.arange(17) % 3
    aw = numpy.abs(ref((17,), seed=6))
    assert_eq(numpy.cov(x, fweights=f), numpy.cov(a, fweights=f))
    assert_eq(numpy.cov(x, aweights=sp.array(aw)), numpy.cov(a, aweights=aw))
    assert_eq(numpy.cov(x, fweights=f, aweights=aw), numpy.cov(a, fweights=f, aweights=aw))
    c = ref((2, 9), numpy.complex128)
    assert_eq(numpy.cov(sp.array(c)), numpy.cov(c))
    assert_eq(numpy.corrcoef(x), numpy.corrcoef(a))
    assert_eq(numpy.corrcoef(x, sp.array(b)), numpy.corrcoef(a, b))
    assert_eq(numpy.corrcoef(sp.array(c)), numpy.corrcoef(c))
    assert_eq(numpy.cov(x[:, ::-2]), numpy.cov(a[:, ::-2]))
    with pytest.raises(ValueError):
        numpy.cov(sp.array(ref((2, 3, 4))))
    with pytest.raises(ValueError):
        numpy.cov(x, ddof=1.5)


@pytest.mark.parametrize(
    "k,n,kind", [(40, 7, "f8"), (33, 5, "c16"), (12, 30, "f4"), (1, 9, "f8"), (9, 1, "f8")], ids=str
)
def test_corrcoef_stays_distributed(k, n, kind):
    # k variables of n samples: the k x k result as cov lays it out, never gathered (the
    # bytes moved stay under the result's own size), NumPy's values (the distributed
    # product's rounding, as cov), NaN where a variable is constant, 0-d for one variable.
    a = ref((k, n), numpy.dtype(kind))
    if k > 3:
        a[2] = 1.5  # a constant row: its standard deviation is 0, its row and column NaN
    x = sp.array(a)
    with numpy.errstate(divide="ignore", invalid="ignore"):
        exp = numpy.corrcoef(a)
        with sp.comm_stats() as c:
            numpy.cov(x)
        with sp.comm_stats() as s:
            got = numpy.corrcoef(x)
    tol = {"rtol": 1e-5, "atol": 1e-6} if kind == "f4" else {}
    assert_eq(got, exp, **tol)
    assert got.dtype == exp.dtype and numpy.shape(got) == exp.shape
    if k > 1 and world()[1] > 1:
        # Beyond cov's own traffic: the diagonal's k values and a few flags, not the k x k result.
        extra = s.collective_bytes + s.bytes_sent - c.collective_bytes - c.bytes_sent
        assert extra <= 2 * k * exp.dtype.itemsize + 64, (extra, s, c)
        assert not is_whole(got._st.layout)  # split over the ranks, not held whole by each
    with numpy.errstate(divide="ignore", invalid="ignore"):
        assert_eq(numpy.corrcoef(x.T, rowvar=False), numpy.corrcoef(a.T, rowvar=False), **tol)
        if kind != "f4":
            y = ref((n,), numpy.dtype(kind), seed=4)
            assert_eq(numpy.corrcoef(x, sp.array(y)), numpy.corrcoef(a, y))
            assert_eq(
                numpy.corrcoef(x, dtype=numpy.float32), numpy.corrcoef(a, dtype=numpy.float32), rtol=1e-5, atol=1e-6
            )


@pytest.mark.parametrize("n,m", [(23, 3), (23, 4), (9, 9), (5, 8), (40, 1), (2, 7)], ids=str)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_correlate_match_numpy(n, m, mode):
    a, v = ref((n,), seed=1), ref((m,), seed=2)
    x = sp.array(a)
    assert_eq(numpy.convolve(x, v, mode), numpy.convolve(a, v, mode))
    assert_eq(numpy.correlate(x, v, mode), numpy.correlate(a, v, mode))
    assert_eq(numpy.convolve(x, sp.array(v), mode), numpy.convolve(a, v, mode))
    assert_eq(numpy.correlate(x[::-1], v, mode), numpy.correlate(a[::-1], v, mode))
    c, d = ref((n,), numpy.complex128, 3), ref((m,), numpy.complex128, 4)
    assert_eq(numpy.correlate(sp.array(c), d, mode), numpy.correlate(c, d, mode))
    i, k = ref((n,), numpy.int32), ref((m,), numpy.int32, 5)
    assert_eq(numpy.convolve(sp.array(i), k, mode), numpy.convolve(i, k, mode))


def test_convolve_errors_are_numpys():
    x = sp.array(ref((5,)))
    with pytest.raises(ValueError):
        numpy.convolve(x, numpy.zeros(0))
    with pytest.raises(ValueError):
        numpy.correlate(x, numpy.ones(2), mode="bogus")


def test_statistics_of_0d_and_out_arguments():
    x, a = sp.array(2.5), numpy.array(2.5)
    for fn in (numpy.median, numpy.nanmedian, numpy.nansum, numpy.nanmax, numpy.nanmean, numpy.average):
        assert_eq(fn(x), fn(a))
    assert_eq(numpy.quantile(x, 0.3), numpy.quantile(a, 0.3))
    assert_eq(numpy.histogram(x, 3)[0], numpy.histogram(a, 3)[0])
    b = ref((5, 4))
    b[1, 1] = numpy.nan
    y = sp.array(b)
    out = sp.empty(4)
    assert numpy.nanquantile(y, 0.4, axis=0, out=out) is out
    assert_eq(out, numpy.nanquantile(b, 0.4, axis=0))
    assert_eq(
        numpy.nanpercentile(y, [10, 90], axis=1, keepdims=True), numpy.nanpercentile(b, [10, 90], axis=1, keepdims=True)
    )
    out2 = sp.empty(5)
    assert numpy.median(y, axis=1, out=out2) is out2
    assert_eq(out2, numpy.median(b, axis=1))
    i = ref((5, 4), numpy.int64)
    assert_eq(numpy.nanmedian(sp.array(i), axis=0), numpy.nanmedian(i, axis=0))
    assert_eq(numpy.nanquantile(sp.array(i), 0.7, axis=1), numpy.nanquantile(i, 0.7, axis=1))


def test_weighted_quantile_matches_numpy():
    rng = numpy.random.default_rng(5)
    a = rng.integers(0, 6, (6, 7)).astype(float)
    a[3, 4] = numpy.nan
    w = rng.integers(1, 3, (6, 7)).astype(float)
    w[0, 0] = w[2, 3] = 0
    x = sp.array(a)
    for axis in (None, 0, 1):
        for q in (0.0, 0.3, [0.2, 1.0]):
            want = numpy.quantile(a, q, axis=axis, method="inverted_cdf", weights=w)
            assert_eq(numpy.quantile(x, q, axis=axis, method="inverted_cdf", weights=sp.array(w)), want)
    w1 = rng.random(7)
    want = numpy.percentile(a, [30, 70], axis=1, method="inverted_cdf", weights=w1)
    assert_eq(numpy.percentile(x, [30, 70], axis=1, method="inverted_cdf", weights=w1), want)
    for call in (
        lambda m: numpy.quantile(m, 0.5, weights=w),
        lambda m: numpy.quantile(m, 0.5, method="inverted_cdf", weights=-w),
        lambda m: numpy.quantile(m, 0.5, method="inverted_cdf", weights=w1),
        lambda m: numpy.quantile(m, 0.5, axis=0, method="inverted_cdf", weights=w * 0),
    ):
        with pytest.raises(Exception) as want:
            call(a)
        with pytest.raises(type(want.value)):
            call(x)
