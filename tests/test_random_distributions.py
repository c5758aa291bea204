"""Every Generator distribution, legacy function and sampler of ``spmdarray.random``.

Run serially and under ``mpiexec -n 2/3/4``.  For each distribution:
(a) the same seed gives the same array at every rank count: the distributed
result equals, bit for bit, the array built on ``COMM_SELF`` (the whole array
on one rank) and the serial reference ``_SerialGenerator``;
(b) statistics: a two-sample Kolmogorov--Smirnov statistic against NumPy's own
sampler (fixed seeds, so deterministic) stays below a generous bound;
(c) bad parameters raise the exception type NumPy raises, on every rank;
(d) result dtype and shape match NumPy's for ``size=None``, an int, a tuple and
broadcast array parameters.
"""

import math
import warnings

import numpy
import pytest
from helpers import real_gpu

import spmdarray as np
import spmdarray.random as sr
from spmdarray.random import Generator, _SerialGenerator

# name: parameters (NumPy's signature, scalars).
DISTS = {
    "beta": (0.5, 0.7),
    "beta_big": (2.0, 5.0),
    "binomial": (20, 0.3),
    "binomial_big": (1000, 0.6),
    "chisquare": (3.0,),
    "exponential": (2.0,),
    "f": (5.0, 7.0),
    "gamma": (3.0, 2.0),
    "gamma_small": (0.3, 1.5),
    "geometric": (0.3,),
    "gumbel": (1.0, 2.0),
    "hypergeometric": (10, 5, 6),
    "hypergeometric_big": (100, 200, 50),
    "laplace": (1.0, 2.0),
    "logistic": (1.0, 2.0),
    "lognormal": (0.0, 0.5),
    "logseries": (0.6,),
    "negative_binomial": (5, 0.4),
    "noncentral_chisquare": (3.0, 2.0),
    "noncentral_f": (5.0, 7.0, 1.5),
    "normal": (1.0, 2.0),
    "pareto": (3.0,),
    "poisson": (3.0,),
    "poisson_big": (50.0,),
    "power": (2.0,),
    "rayleigh": (2.0,),
    "standard_cauchy": (),
    "standard_exponential": (),
    "standard_gamma": (0.5,),
    "standard_normal": (),
    "standard_t": (5.0,),
    "triangular": (0.0, 1.0, 3.0),
    "uniform": (-1.0, 3.0),
    "vonmises": (0.5, 2.0),
    "vonmises_flat": (0.5, 1e-9),
    "wald": (1.0, 2.0),
    "weibull": (1.5,),
    "zipf": (2.5,),
}


def _method(name):
    for suffix in ("_big", "_small", "_flat"):
        name = name.removesuffix(suffix)
    return name


def _draw(g, name, size, *, comm=None, args=None):
    args = DISTS[name] if args is None else args
    kw = {} if comm is None else {"comm": comm}
    return getattr(g, _method(name))(*args, size=size, **kw)


def _self():
    from mpi4py import MPI

    return MPI.COMM_SELF


def _same(a, b):
    a, b = numpy.asarray(a), numpy.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    if real_gpu() and a.dtype.kind == "f":
        numpy.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-300)  # device math may differ in the last bits
    else:
        assert a.tobytes() == b.tobytes()


def _ks(a, b):
    """Two-sample Kolmogorov--Smirnov statistic (works for discrete samples too)."""
    a, b = numpy.sort(numpy.ravel(a)), numpy.sort(numpy.ravel(b))
    v = numpy.concatenate([a, b])
    return float(
        numpy.max(numpy.abs(numpy.searchsorted(a, v, "right") / a.size - numpy.searchsorted(b, v, "right") / b.size))
    )


# -- (a) the same array at every rank count ------------------------------------


@pytest.mark.parametrize("name", sorted(DISTS))
@pytest.mark.parametrize("shape", [(7, 5), (3, 4, 5), (), (0, 3)], ids=str)
def test_same_array_at_every_rank_count(name, shape):
    x = _draw(Generator(2024, draw=5), name, shape)
    assert isinstance(x, np.ndarray) and x.shape == shape
    _same(x, _draw(Generator(2024, draw=5), name, shape, comm=_self()))
    _same(x, _draw(_SerialGenerator(2024, draw=5), name, shape))


@pytest.mark.parametrize("name", ["normal", "gamma_small", "binomial_big", "poisson", "beta", "vonmises"])
def test_array_parameters_same_at_every_rank_count(name):
    """NumPy-array and distributed parameters give the serial reference's values."""
    args = DISTS[name]
    rows = numpy.linspace(0.6, 1.0, 7)[:, None]
    arr_args = (args[0] * rows,) + args[1:]  # the first parameter varies along axis 0
    want = _draw(_SerialGenerator(7), name, (7, 5), args=arr_args)
    _same(_draw(Generator(7), name, (7, 5), args=arr_args), want)
    dist_args = (np.asarray(args[0] * rows),) + args[1:]
    _same(_draw(Generator(7), name, (7, 5), args=dist_args), want)
    _same(_draw(Generator(7), name, (7, 5), args=dist_args, comm=None), want)


def test_distributed_parameter_broadcasts_without_size():
    loc = np.asarray(numpy.arange(12.0).reshape(3, 4))
    x = Generator(3).normal(loc, numpy.array([1.0, 2.0, 3.0, 4.0]))
    assert x.shape == (3, 4)
    _same(x, _SerialGenerator(3).normal(numpy.arange(12.0).reshape(3, 4), numpy.array([1.0, 2.0, 3.0, 4.0])))


def test_parameters_that_are_views():
    """Non-contiguous, reversed and transposed distributed parameters."""
    base = numpy.arange(1.0, 43.0).reshape(6, 7)
    x = np.asarray(base)
    for view, ref_view in ((x[::-2], base[::-2]), (x.T, base.T), (x[1:, ::3], base[1:, ::3])):
        got = Generator(6).gamma(view, 0.5)
        _same(got, _SerialGenerator(6).gamma(ref_view, 0.5))
        _same(
            Generator(6).poisson(view, size=(2,) + ref_view.shape),
            _SerialGenerator(6).poisson(ref_view, size=(2,) + ref_view.shape),
        )


def test_integers_with_array_bounds():
    lo, hi = numpy.array([0, 10, -5]), numpy.array([[5], [1000]]) + numpy.array([3, 20, 0])
    x = Generator(4).integers(lo, hi, size=(4, 2, 3))
    _same(x, _SerialGenerator(4).integers(lo, hi, size=(4, 2, 3)))
    v = numpy.asarray(x)
    assert numpy.all(v >= lo) and numpy.all(v < hi)
    e = numpy.asarray(Generator(4).integers(lo, hi, endpoint=True, dtype=numpy.int16))
    assert e.dtype == numpy.int16 and numpy.all(e >= lo) and numpy.all(e <= hi)
    d = Generator(5).integers(np.asarray(lo), hi)
    _same(d, _SerialGenerator(5).integers(lo, hi))


@pytest.mark.parametrize("name", ["standard_exponential", "standard_gamma", "standard_normal", "random"])
@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32])
def test_out_and_dtype(name, dtype):
    args = (2.0,) if name == "standard_gamma" else ()
    out = np.zeros((6, 4), dtype=dtype)
    res = getattr(Generator(8), name)(*args, dtype=dtype, out=out)
    assert res is out
    want = getattr(_SerialGenerator(8), name)(*args, size=(6, 4), dtype=dtype)
    assert want.dtype == dtype
    _same(out, want)
    view = np.zeros((6, 8), dtype=dtype)
    getattr(Generator(8), name)(*args, dtype=dtype, out=view[:, ::2])
    _same(view[:, ::2], want)
    assert not numpy.asarray(view[:, 1::2]).any()


# -- (b) statistics against NumPy's sampler ------------------------------------

N = 20_000


@pytest.mark.parametrize("name", sorted(DISTS))
def test_matches_numpys_distribution(name):
    x = numpy.asarray(_draw(Generator(11), name, N))
    ref = getattr(numpy.random.default_rng(11), _method(name))(*DISTS[name], size=N)
    assert x.dtype == ref.dtype
    if name == "standard_cauchy":  # heavy tails: compare a robust statistic too
        assert abs(numpy.median(x)) < 0.05
    # The 1e-4 critical value of the two-sample KS statistic is 2.3 sqrt(2/N) ~ 0.023.
    assert _ks(x, ref) < 0.03, _ks(x, ref)


@pytest.mark.parametrize(
    "name, args",
    [
        ("standard_gamma", (0.01,)),
        ("standard_gamma", (1e6,)),
        ("beta", (0.02, 0.03)),
        ("binomial", (10**9, 0.001)),
        ("binomial", (50, 0.999)),
        ("poisson", (9.99,)),
        ("poisson", (1e7,)),
        ("vonmises", (-2.0, 1e7)),
        ("hypergeometric", (5000, 3000, 4000)),
        ("logseries", (0.999,)),
        ("zipf", (1.1,)),
    ],
    ids=str,
)
def test_extreme_parameters(name, args):
    x = numpy.asarray(getattr(Generator(12), name)(*args, size=N))
    ref = getattr(numpy.random.default_rng(12), name)(*args, size=N)
    assert numpy.isfinite(x.astype(float)).all()
    assert _ks(x, ref) < 0.03


def test_zero_and_degenerate_parameters():
    g = Generator(13)
    assert numpy.all(numpy.asarray(g.standard_gamma(0.0, 5)) == 0)
    assert numpy.all(numpy.asarray(g.binomial(0, 0.5, 5)) == 0)
    assert numpy.all(numpy.asarray(g.binomial(7, 1.0, 5)) == 7)
    assert numpy.all(numpy.asarray(g.poisson(0.0, 5)) == 0)
    assert numpy.all(numpy.asarray(g.geometric(1.0, 5)) == 1)
    assert numpy.all(numpy.asarray(g.weibull(0.0, 5)) == 0)
    assert numpy.all(numpy.asarray(g.hypergeometric(5, 0, 3, 5)) == 3)
    assert numpy.all(numpy.asarray(g.logseries(0.0, 5)) == 1)
    assert numpy.all(numpy.asarray(g.normal(2.0, 0.0, 5)) == 2.0)


def _moments(x):
    return x.mean(), x.var()


@pytest.mark.parametrize(
    "name, args, mean, var",
    [
        ("gamma", (3.0, 2.0), 6.0, 12.0),
        ("beta", (2.0, 3.0), 0.4, 0.04),
        ("poisson", (4.0,), 4.0, 4.0),
        ("binomial", (40, 0.25), 10.0, 7.5),
        ("wald", (1.0, 3.0), 1.0, 1 / 3),
    ],
    ids=str,
)
def test_moments_within_standard_errors(name, args, mean, var):
    x = numpy.asarray(getattr(Generator(14), name)(*args, size=N)).astype(float)
    m, v = _moments(x)
    assert abs(m - mean) < 5 * math.sqrt(var / N)
    assert abs(v - var) < 0.05 * var


# -- (c) NumPy's exception types ------------------------------------------------

BAD = [
    ("normal", (0.0, -1.0)),
    ("exponential", (-1.0,)),
    ("gamma", (-1.0,)),
    ("gamma", (1.0, -2.0)),
    ("standard_gamma", (-0.5,)),
    ("beta", (0.0, 1.0)),
    ("beta", (1.0, -1.0)),
    ("chisquare", (0.0,)),
    ("noncentral_chisquare", (1.0, -1.0)),
    ("f", (0.0, 1.0)),
    ("noncentral_f", (1.0, 1.0, -1.0)),
    ("standard_t", (0.0,)),
    ("laplace", (0.0, -1.0)),
    ("logistic", (0.0, -1.0)),
    ("lognormal", (0.0, -1.0)),
    ("gumbel", (0.0, -1.0)),
    ("pareto", (0.0,)),
    ("power", (0.0,)),
    ("rayleigh", (-1.0,)),
    ("weibull", (-1.0,)),
    ("triangular", (1.0, 0.0, 2.0)),
    ("triangular", (0.0, 3.0, 2.0)),
    ("triangular", (1.0, 1.0, 1.0)),
    ("vonmises", (0.0, -1.0)),
    ("wald", (0.0, 1.0)),
    ("wald", (1.0, 0.0)),
    ("poisson", (-1.0,)),
    ("poisson", (float("nan"),)),
    ("poisson", (1e19,)),
    ("binomial", (-1, 0.5)),
    ("binomial", (5, 1.5)),
    ("binomial", (5, float("nan"))),
    ("negative_binomial", (0, 0.5)),
    ("negative_binomial", (1, 0.0)),
    ("geometric", (0.0,)),
    ("geometric", (1.5,)),
    ("hypergeometric", (5, 5, 11)),
    ("hypergeometric", (-1, 5, 1)),
    ("logseries", (1.0,)),
    ("logseries", (-0.1,)),
    ("zipf", (1.0,)),
    ("uniform", (-1e308, 1e308)),
    ("integers", (5, 2)),
    ("integers", (0, 300, None, numpy.int8)),
    ("normal", (numpy.zeros(3), 1.0, 4)),
    ("normal", (0.0, numpy.array([1.0, -1.0]))),
    ("poisson", (numpy.array([1.0, -1.0]),)),
    ("standard_normal", (None, numpy.int32)),
    ("multinomial", (5, [0.6, 0.6, 0.1])),
    ("multinomial", (-1, [0.5, 0.5])),
    ("dirichlet", ([-1.0, 1.0],)),
    ("multivariate_normal", ([0.0, 0.0], [[1.0, 0.0]])),
    ("multivariate_normal", ([0.0], [[1.0]], None, "bogus")),
    ("multivariate_hypergeometric", ([2, 3], 6)),
    ("multivariate_hypergeometric", ([2, 3], 2, None, "bogus")),
    ("choice", (5, 6, False)),
    ("choice", (5, 3, True, [0.5, 0.5, 0.0, 0.0, 0.1])),
    ("choice", (5, 3, True, [0.5, 0.5])),
    ("choice", (5, 3, True, [-0.5, 1.5, 0.0, 0.0, 0.0])),
    ("choice", (numpy.ones((2, 3)), 1, True, None, 2)),
    ("choice", (0, 1)),
    ("choice", (numpy.array([1.0, 2.0]), 3, False, [1.0, 0.0])),
    ("permutation", (numpy.ones(3), 1)),
    ("spawn", (-1,)),
]


def _exception(call):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
    except Exception as e:  # noqa: BLE001 - we want NumPy's type, whatever it is
        return type(e)
    return None


@pytest.mark.parametrize("name, args", BAD, ids=str)
def test_bad_parameters_raise_numpys_exception(name, args):
    want = _exception(lambda: getattr(numpy.random.default_rng(0), name)(*args))
    assert want is not None, "NumPy accepts these arguments"
    g = Generator(0)
    with pytest.raises(want):
        getattr(g, name)(*args)
    assert g.draw == 0  # a failed call does not advance the counter


def test_bad_distributed_parameter_raises_on_every_rank(comm):
    scale = np.asarray(numpy.array([1.0, 2.0, -3.0, 4.0, 5.0]))
    with pytest.raises(ValueError, match="scale < 0"):
        Generator(0).normal(0.0, scale)
    lam = np.asarray(numpy.array([1.0, numpy.nan, 3.0]))
    with pytest.raises(ValueError, match="lam < 0"):
        Generator(0).poisson(lam)


# -- (d) dtypes and shapes as NumPy's ------------------------------------------


@pytest.mark.parametrize("name", sorted(DISTS))
@pytest.mark.parametrize("size", [None, 3, (2, 3)], ids=str)
def test_dtype_and_shape_like_numpy(name, size):
    got = _draw(Generator(1), name, size)
    want = getattr(numpy.random.default_rng(1), _method(name))(*DISTS[name], size=size)
    if size is None:  # NumPy gives a Python float or int; spmdarray the NumPy scalar of the same dtype
        assert isinstance(got, numpy.generic) and isinstance(got, (numpy.floating, numpy.integer))
        assert got.dtype == numpy.asarray(want).dtype
    else:
        assert isinstance(got, np.ndarray) and got.shape == want.shape and got.dtype == want.dtype


@pytest.mark.parametrize("name", sorted(n for n in DISTS if DISTS[n]))
@pytest.mark.parametrize("size", [None, (4, 3)], ids=str)
def test_broadcast_parameter_shapes_like_numpy(name, size):
    args = DISTS[name]
    first = numpy.full((1, 3), args[0])
    if name.startswith("triangular"):
        first = numpy.array([[0.0, -1.0, 0.5]])
    arr_args = (first,) + args[1:]
    got = _draw(Generator(1), name, size, args=arr_args)
    want = getattr(numpy.random.default_rng(1), _method(name))(*arr_args, size=size)
    assert got.shape == want.shape and got.dtype == want.dtype


def test_float32_results():
    g = Generator(2)
    for name in ("random", "standard_normal", "standard_exponential"):
        assert getattr(g, name)(dtype=numpy.float32).dtype == numpy.float32
        assert getattr(g, name)(3, dtype=numpy.float32).dtype == numpy.float32
    assert g.standard_gamma(2.0, 3, dtype=numpy.float32).dtype == numpy.float32
    with pytest.raises(TypeError):
        g.standard_gamma(1.0, out=np.zeros(3, dtype=numpy.float32))
    with pytest.raises(ValueError):
        g.standard_normal(size=4, out=np.zeros(3))


# -- multivariate ---------------------------------------------------------------


def test_multinomial():
    pv = [0.2, 0.3, 0.5]
    x = Generator(3).multinomial(20, pv, size=(5, 4))
    assert x.shape == (5, 4, 3) and x.dtype == numpy.int64
    v = numpy.asarray(x)
    assert numpy.all(v.sum(axis=-1) == 20)
    _same(x, _SerialGenerator(3).multinomial(20, pv, size=(5, 4)))
    _same(x, Generator(3).multinomial(20, pv, size=(5, 4), comm=_self()))
    n = numpy.array([5, 10, 0])
    y = Generator(3).multinomial(n, pv)
    assert y.shape == (3, 3) and numpy.all(numpy.asarray(y).sum(axis=-1) == n)
    big = numpy.asarray(Generator(4).multinomial(100, pv, size=4000)).astype(float)
    assert numpy.all(numpy.abs(big.mean(axis=0) - 100 * numpy.array(pv)) < 5 * numpy.sqrt(100 * numpy.array(pv) / 4000))
    assert Generator(0).multinomial(5, pv).shape == numpy.random.default_rng(0).multinomial(5, pv).shape


def test_dirichlet():
    x = Generator(5).dirichlet([1.0, 2.0, 3.0], size=(6, 2))
    assert x.shape == (6, 2, 3) and x.dtype == numpy.float64
    numpy.testing.assert_allclose(numpy.asarray(x).sum(axis=-1), 1.0)
    _same(x, _SerialGenerator(5).dirichlet([1.0, 2.0, 3.0], size=(6, 2)))
    small = numpy.asarray(Generator(5).dirichlet([0.01, 0.02, 0.05], size=50))
    assert numpy.isfinite(small).all()
    numpy.testing.assert_allclose(small.sum(axis=-1), 1.0)
    big = numpy.asarray(Generator(6).dirichlet([1.0, 2.0, 3.0], size=N))
    ref = numpy.random.default_rng(6).dirichlet([1.0, 2.0, 3.0], size=N)
    assert max(_ks(big[:, j], ref[:, j]) for j in range(3)) < 0.03


@pytest.mark.parametrize("method", ["svd", "eigh", "cholesky"])
def test_multivariate_normal(method):
    mean, cov = [1.0, -2.0, 0.5], [[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]]
    x = Generator(7).multivariate_normal(mean, cov, size=(9, 2), method=method)
    assert x.shape == (9, 2, 3)
    _same(x, _SerialGenerator(7).multivariate_normal(mean, cov, size=(9, 2), method=method))
    _same(x, Generator(7).multivariate_normal(mean, cov, size=(9, 2), method=method, comm=_self()))
    big = numpy.asarray(Generator(8).multivariate_normal(mean, cov, size=N, method=method))
    numpy.testing.assert_allclose(big.mean(axis=0), mean, atol=5 * math.sqrt(2.0 / N))
    numpy.testing.assert_allclose(numpy.cov(big.T), cov, atol=0.06)
    assert Generator(0).multivariate_normal(mean, cov).shape == (3,)


def test_multivariate_normal_not_psd():
    with pytest.warns(RuntimeWarning):
        Generator(0).multivariate_normal([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]], size=2)
    with pytest.raises(ValueError):
        Generator(0).multivariate_normal([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]], check_valid="raise")


@pytest.mark.parametrize("method", ["marginals", "count"])
def test_multivariate_hypergeometric(method):
    colors = [5, 10, 3, 0, 7]
    x = Generator(9).multivariate_hypergeometric(colors, 12, size=(4, 3), method=method)
    assert x.shape == (4, 3, 5) and x.dtype == numpy.int64
    v = numpy.asarray(x)
    assert numpy.all(v.sum(axis=-1) == 12) and numpy.all(v <= colors) and numpy.all(v >= 0)
    _same(x, _SerialGenerator(9).multivariate_hypergeometric(colors, 12, size=(4, 3), method=method))
    big = numpy.asarray(Generator(10).multivariate_hypergeometric(colors, 12, size=N)).astype(float)
    numpy.testing.assert_allclose(big.mean(axis=0), 12 * numpy.array(colors) / sum(colors), atol=0.05)


# -- bytes, spawn, choice, permutations -------------------------------------------


def test_bytes_and_spawn(comm):
    b = Generator(1).bytes(10)
    assert isinstance(b, bytes) and len(b) == 10 and b == _SerialGenerator(1).bytes(10)
    assert len(set(comm.allgather(b))) == 1
    g = Generator(1)
    kids = g.spawn(3)
    assert g.draw == 1 and len({k.seed for k in kids}) == 3
    more = g.spawn(1)
    assert more[0].seed not in {k.seed for k in kids}
    assert [k.seed for k in Generator(1).spawn(3)] == [k.seed for k in kids]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"a": 10, "size": (3, 4)},
        {"a": 7, "size": 5, "replace": False},
        {"a": 7, "size": 7, "replace": False, "shuffle": False},
        {"a": 5, "size": 6, "p": [0.1, 0.2, 0.0, 0.3, 0.4]},
        {"a": 5, "size": 3, "replace": False, "p": [0.1, 0.2, 0.0, 0.3, 0.4]},
        {"a": numpy.arange(10.0) * 1.5, "size": (2, 3)},
        {"a": numpy.arange(24).reshape(4, 6), "size": (2, 2), "axis": 1},
        {"a": numpy.arange(24).reshape(4, 6), "size": 3, "replace": False, "axis": 0},
    ],
    ids=str,
)
def test_choice_same_at_every_rank_count(kwargs):
    x = Generator(21).choice(**kwargs)
    assert isinstance(x, np.ndarray)
    _same(x, _SerialGenerator(21).choice(**kwargs))
    _same(x, Generator(21).choice(**kwargs, comm=_self()))
    want = numpy.random.default_rng(0).choice(**kwargs)
    assert x.shape == want.shape and x.dtype == want.dtype


def test_choice_values():
    g = Generator(22)
    s = numpy.asarray(g.choice(50, 50, replace=False))
    assert sorted(s.tolist()) == list(range(50))
    s = numpy.asarray(g.choice(50, 20, replace=False, shuffle=False))
    assert len(set(s.tolist())) == 20 and numpy.all(numpy.diff(s) > 0)
    p = numpy.array([0.1, 0.2, 0.0, 0.3, 0.4])
    c = numpy.asarray(g.choice(5, N, p=p))
    numpy.testing.assert_allclose(numpy.bincount(c, minlength=5) / N, p, atol=5 * math.sqrt(0.25 / N))
    w = numpy.asarray(g.choice(5, 2, replace=False, p=p))
    assert 2 not in w.tolist() and len(set(w.tolist())) == 2
    u = numpy.asarray(g.choice(6, N))
    assert _ks(u, numpy.random.default_rng(0).choice(6, N)) < 0.03
    v = g.choice(5)
    assert isinstance(v, numpy.int64) and 0 <= v < 5
    assert g.choice([1.5, 2.5]) in (1.5, 2.5)


def test_permutation_and_shuffle_replicated(comm):
    g = Generator(23)
    p = g.permutation(11)
    assert isinstance(p, np.ndarray) and sorted(numpy.asarray(p).tolist()) == list(range(11))
    _same(p, _SerialGenerator(23).permutation(11))
    a = numpy.arange(20).reshape(5, 4)
    q = numpy.asarray(g.permutation(a, axis=1))
    assert sorted(q[0].tolist()) == [0, 1, 2, 3] and numpy.all(numpy.sort(q, axis=1) == a)
    b = numpy.arange(9)
    g.shuffle(b)
    assert sorted(b.tolist()) == list(range(9))
    assert len({tuple(x) for x in comm.allgather(b.tolist())}) == 1
    m = numpy.arange(12).reshape(3, 4)
    r = g.permuted(m, axis=1)
    assert numpy.all(numpy.sort(r, axis=1) == m)
    flat = g.permuted(m)
    assert sorted(flat.ravel().tolist()) == list(range(12))


def test_choice_large_population_path_equals_replicated(monkeypatch):
    small = numpy.asarray(Generator(31).choice(40, 15, replace=False))
    small_p = numpy.asarray(Generator(31).choice(40, 15, replace=False, p=numpy.full(40, 1 / 40)))
    monkeypatch.setattr(sr._choice, "SMALL_POPULATION", 8)
    assert numpy.array_equal(numpy.asarray(Generator(31).choice(40, 15, replace=False)), small)
    assert numpy.array_equal(numpy.asarray(Generator(31).permutation(40))[:15], small)
    assert numpy.array_equal(
        numpy.asarray(Generator(31).choice(40, 15, replace=False, p=numpy.full(40, 1 / 40))), small_p
    )


def test_choice_from_distributed_array():
    a = numpy.arange(30.0) * 2
    x = Generator(32).choice(np.asarray(a), (3, 4))
    _same(x, _SerialGenerator(32).choice(a, (3, 4)))


def test_permutation_and_shuffle_of_distributed_arrays():
    a = numpy.arange(35.0).reshape(7, 5)
    p = Generator(33).permutation(np.asarray(a))
    _same(p, _SerialGenerator(33).permutation(a))
    x = np.asarray(a)
    Generator(33).shuffle(x)
    _same(x, p)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_permuted_distributed(axis):
    a = numpy.arange(35.0).reshape(7, 5)
    got = Generator(34).permuted(np.asarray(a), axis=axis)
    _same(got, Generator(34).permuted(a, axis=axis))


# -- legacy API -------------------------------------------------------------------

LEGACY = {
    "beta": (0.5, 0.7),
    "binomial": (10, 0.3),
    "chisquare": (2.0,),
    "exponential": (1.0,),
    "f": (3.0, 4.0),
    "gamma": (2.0,),
    "geometric": (0.4,),
    "gumbel": (),
    "hypergeometric": (5, 6, 4),
    "laplace": (),
    "logistic": (),
    "lognormal": (),
    "logseries": (0.5,),
    "negative_binomial": (3, 0.5),
    "noncentral_chisquare": (2.0, 1.0),
    "noncentral_f": (2.0, 3.0, 1.0),
    "normal": (),
    "pareto": (2.0,),
    "poisson": (2.0,),
    "power": (2.0,),
    "rayleigh": (),
    "standard_cauchy": (),
    "standard_exponential": (),
    "standard_gamma": (2.0,),
    "standard_normal": (),
    "standard_t": (3.0,),
    "triangular": (0.0, 0.5, 1.0),
    "uniform": (),
    "vonmises": (0.0, 1.0),
    "wald": (1.0, 1.0),
    "weibull": (2.0,),
    "zipf": (2.0,),
    "random_sample": (),
    "random": (),
    "ranf": (),
    "sample": (),
}


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_legacy_functions(name):
    sr.seed(5)
    x = getattr(sr, name)(*LEGACY[name], size=(4, 3))
    want = getattr(numpy.random, name)(*LEGACY[name], size=(4, 3))
    assert x.shape == want.shape and x.dtype == want.dtype
    meth = {"random_sample": "random", "ranf": "random", "sample": "random"}.get(name, name)
    _same(x, getattr(_SerialGenerator(5), meth)(*LEGACY[name], size=(4, 3)))
    assert sr._state.draw == 1
    scalar = getattr(sr, name)(*LEGACY[name])
    assert isinstance(scalar, numpy.generic)
    assert scalar.dtype == numpy.asarray(getattr(numpy.random, name)(*LEGACY[name])).dtype


def test_legacy_others():
    sr.seed(6)
    assert sr.randn(3, 2).shape == (3, 2) and isinstance(sr.randn(), numpy.float64)
    with pytest.warns(DeprecationWarning):
        r = numpy.asarray(sr.random_integers(1, 3, size=200))
    assert set(r.tolist()) == {1, 2, 3}
    assert len(sr.bytes(4)) == 4
    assert sr.multinomial(5, [0.5, 0.5], size=2).shape == (2, 2)
    assert sr.dirichlet([1.0, 1.0], size=2).shape == (2, 2)
    assert sr.multivariate_normal([0.0], [[1.0]], size=2).shape == (2, 1)
    assert sr.choice(5, 3).shape == (3,)
    assert sorted(numpy.asarray(sr.permutation(5)).tolist()) == list(range(5))
    a = numpy.arange(5)
    sr.shuffle(a)
    assert sorted(a.tolist()) == list(range(5))
    sr.seed([1, 2, 3])
    assert sr._state.seed == sr.default_rng([1, 2, 3]).seed and sr._state.draw == 0


def test_state_round_trip():
    sr.seed(7)
    sr.random(3)
    state = sr.get_state()
    assert state == ("spmdarray.counter", 7, 1)
    a = numpy.asarray(sr.random(5))
    sr.set_state(state)
    _same(sr.random(5), a)
    d = sr.get_state(legacy=False)
    assert d["state"] == {"seed": 7, "draw": 2}
    sr.set_state(d)
    assert sr._state.draw == 2
    with pytest.raises(ValueError):
        sr.set_state(("MT19937", numpy.zeros(624, numpy.uint32), 0, 0, 0.0))
    with pytest.raises(NotImplementedError, match="get_bit_generator"):
        sr.get_bit_generator()
    with pytest.raises(NotImplementedError, match="set_bit_generator"):
        sr.set_bit_generator(numpy.random.PCG64())


def test_random_state_class(comm):
    rs = sr.RandomState(8)
    x = rs.normal(1.0, 2.0, (3, 4))
    _same(x, _SerialGenerator(8).normal(1.0, 2.0, (3, 4)))
    assert rs.randint(5, size=3).dtype == numpy.dtype(int)
    assert rs.tomaxint(3).dtype == numpy.int64
    assert rs.rand(2, 2).shape == (2, 2)
    rs.seed(8)
    _same(rs.normal(1.0, 2.0, (3, 4)), x)
    assert rs.get_state() == ("spmdarray.counter", 8, 1)
    fresh = sr.RandomState(comm=comm)
    assert len(set(comm.allgather(fresh.get_state()))) == 1


def test_bit_generator_state():
    g = Generator(3, draw=4)
    assert g.bit_generator.state == {"bit_generator": "spmdarray.counter", "state": {"seed": 3, "draw": 4}}
    h = Generator(0)
    h.bit_generator.state = g.bit_generator.state
    _same(h.random(5), g.random(5))
    with pytest.raises(ValueError):
        h.bit_generator.state = numpy.random.PCG64().state


def test_multinomial_with_distributed_n():
    n = numpy.array([3, 7, 0, 12, 5])
    x = Generator(4).multinomial(np.asarray(n), [0.3, 0.7], size=(2, 5))
    assert x.shape == (2, 5, 2)
    _same(x, _SerialGenerator(4).multinomial(n, [0.3, 0.7], size=(2, 5)))


def test_default_rng_seed_objects():
    ss = numpy.random.SeedSequence(42)
    assert sr.default_rng(ss).seed == sr.default_rng(numpy.random.SeedSequence(42)).seed
    assert sr.default_rng(numpy.random.PCG64(ss)).seed == sr.default_rng(ss).seed
    assert sr.default_rng([1, 2, 3]).seed == sr.default_rng([1, 2, 3]).seed != sr.default_rng([1, 2, 4]).seed
    assert sr.SeedSequence is numpy.random.SeedSequence and sr.PCG64 is numpy.random.PCG64
    with pytest.raises(TypeError):
        sr.default_rng(numpy.random.default_rng(0))


def test_every_numpy_random_function_exists():
    names = [n for n in dir(numpy.random) if not n.startswith("_") and callable(getattr(numpy.random, n))]
    missing = [n for n in names if n not in sr.__all__ and n not in ("test", "mtrand")]
    assert missing == []
    gen = [n for n in dir(numpy.random.Generator) if not n.startswith("_")]
    assert [n for n in gen if not hasattr(Generator, n)] == []
