"""The univariate distribution methods of :class:`~spmdarray.random.Generator`,
as mixin classes it inherits: :class:`_ContinuousMethods` (exponential,
gamma, beta, chi-square, F, t, Cauchy, Laplace, ..., Wald) and
:class:`_DiscreteMethods` (Poisson, binomial, ..., Zipf).

Every method is one draw of an elementwise kernel of :mod:`._continuous` or
:mod:`._discrete`, run by ``Generator._run`` (or ``Generator._dist`` with the
checks of :data:`._parameters._SPECS`); see :mod:`._generator`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spmdarray.random import _continuous as C
from spmdarray.random import _discrete as D
from spmdarray.random._parameters import Size, _check, _float_dtype, _nan, _neg, _param


class _ContinuousMethods:
    """The continuous univariate distributions of :class:`Generator` (a mixin).

    Each method is one draw; collective when an array is returned.  Needs
    ``_run`` and ``_dist`` from :class:`Generator`.
    """

    __slots__ = ()

    def standard_exponential(
        self, size: Size = None, dtype: Any = np.float64, method: str = "zig", out: Any = None, *, comm: Any = None
    ):
        """Standard exponential samples by inversion, ``-log(1 - u)``.

        Collective when an array is returned.  ``method`` is accepted for
        NumPy compatibility ("zig" or "inv"); both use inversion.
        """
        if method not in ("zig", "inv"):
            raise ValueError(f"method must be 'zig' or 'inv', got {method!r}")
        dt = _float_dtype("standard_exponential", dtype)
        return self._run(C.standard_exponential, [], size, dt, comm, out)

    def exponential(self, scale: Any = 1.0, size: Size = None, *, comm: Any = None):
        """Exponential samples, ``scale * standard_exponential()``.  Collective when an array is returned."""
        return self._dist("exponential", (scale,), size, comm)

    def standard_gamma(
        self, shape: Any, size: Size = None, dtype: Any = np.float64, out: Any = None, *, comm: Any = None
    ):
        """Gamma(shape, 1) samples: Marsaglia--Tsang with masked rejection rounds.

        Collective when an array is returned.  ``shape < 1`` uses
        ``Gamma(shape + 1) * u**(1/shape)``; each rejection round draws fresh
        lanes, so values stay pure functions of ``(seed, draw, i)``.
        """
        dt = _float_dtype("standard_gamma", dtype)
        p = _param("standard_gamma", "shape", shape)
        _check([(p, _neg, "shape < 0")])
        return self._run(C.standard_gamma, [p], size, dt, comm, out)

    def gamma(self, shape: Any, scale: Any = 1.0, size: Size = None, *, comm: Any = None):
        """Gamma(shape, scale) samples, ``scale * standard_gamma(shape)``.  Collective when an array is returned."""
        return self._dist(
            "gamma",
            (
                shape,
                scale,
            ),
            size,
            comm,
        )

    def beta(self, a: Any, b: Any, size: Size = None, *, comm: Any = None):
        """Beta(a, b) samples: Johnk's method for ``a, b <= 1``, else a ratio of two gammas."""
        return self._dist(
            "beta",
            (
                a,
                b,
            ),
            size,
            comm,
        )

    def chisquare(self, df: Any, size: Size = None, *, comm: Any = None):
        """Chi-square samples, ``2 * standard_gamma(df / 2)``."""
        return self._dist("chisquare", (df,), size, comm)

    def noncentral_chisquare(self, df: Any, nonc: Any, size: Size = None, *, comm: Any = None):
        """Noncentral chi-square samples: ``chisquare(df + 2 N)`` with ``N ~ Poisson(nonc / 2)``."""
        return self._dist(
            "noncentral_chisquare",
            (
                df,
                nonc,
            ),
            size,
            comm,
        )

    def f(self, dfnum: Any, dfden: Any, size: Size = None, *, comm: Any = None):
        """F samples, a ratio of two scaled chi-squares."""
        return self._dist(
            "f",
            (
                dfnum,
                dfden,
            ),
            size,
            comm,
        )

    def noncentral_f(self, dfnum: Any, dfden: Any, nonc: Any, size: Size = None, *, comm: Any = None):
        """Noncentral F samples, a noncentral over a central chi-square."""
        return self._dist(
            "noncentral_f",
            (
                dfnum,
                dfden,
                nonc,
            ),
            size,
            comm,
        )

    def standard_t(self, df: Any, size: Size = None, *, comm: Any = None):
        """Student's t samples, ``Z / sqrt(chisquare(df) / df)``."""
        return self._dist("standard_t", (df,), size, comm)

    def standard_cauchy(self, size: Size = None, *, comm: Any = None):
        """Standard Cauchy samples by inversion, ``tan(pi (u - 1/2))``."""
        return self._run(C.standard_cauchy, [], size, np.float64, comm)

    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, size: Size = None, *, comm: Any = None):
        """Laplace samples by inversion."""
        return self._dist(
            "laplace",
            (
                loc,
                scale,
            ),
            size,
            comm,
        )

    def logistic(self, loc: Any = 0.0, scale: Any = 1.0, size: Size = None, *, comm: Any = None):
        """Logistic samples by inversion."""
        return self._dist(
            "logistic",
            (
                loc,
                scale,
            ),
            size,
            comm,
        )

    def lognormal(self, mean: Any = 0.0, sigma: Any = 1.0, size: Size = None, *, comm: Any = None):
        """Log-normal samples, ``exp(normal(mean, sigma))``."""
        return self._dist(
            "lognormal",
            (
                mean,
                sigma,
            ),
            size,
            comm,
        )

    def gumbel(self, loc: Any = 0.0, scale: Any = 1.0, size: Size = None, *, comm: Any = None):
        """Gumbel samples by inversion, ``loc - scale log(-log u)``."""
        return self._dist(
            "gumbel",
            (
                loc,
                scale,
            ),
            size,
            comm,
        )

    def pareto(self, a: Any, size: Size = None, *, comm: Any = None):
        """Pareto II (Lomax) samples, ``expm1(E / a)``."""
        return self._dist("pareto", (a,), size, comm)

    def power(self, a: Any, size: Size = None, *, comm: Any = None):
        """Power-distribution samples on [0, 1], ``(1 - exp(-E)) ** (1 / a)``."""
        return self._dist("power", (a,), size, comm)

    def rayleigh(self, scale: Any = 1.0, size: Size = None, *, comm: Any = None):
        """Rayleigh samples, ``scale * sqrt(2 E)``."""
        return self._dist("rayleigh", (scale,), size, comm)

    def weibull(self, a: Any, size: Size = None, *, comm: Any = None):
        """Weibull samples, ``E ** (1 / a)`` (0 for ``a == 0``)."""
        return self._dist("weibull", (a,), size, comm)

    def triangular(self, left: Any, mode: Any, right: Any, size: Size = None, *, comm: Any = None):
        """Triangular samples by inversion of the CDF."""
        ps = [_param("triangular", n, v) for n, v in (("left", left), ("mode", mode), ("right", right))]
        _check(
            [
                (ps[0] - ps[1], lambda d: d > 0, "left > mode"),
                (ps[1] - ps[2], lambda d: d > 0, "mode > right"),
                (ps[0] - ps[2], lambda d: d == 0, "left == right"),
            ]
        )
        return self._run(C.triangular, ps, size, np.float64, comm)

    def vonmises(self, mu: Any, kappa: Any, size: Size = None, *, comm: Any = None):
        """Von Mises samples on [-pi, pi]: Best--Fisher rejection (uniform / wrapped normal at the extremes)."""
        return self._dist(
            "vonmises",
            (
                mu,
                kappa,
            ),
            size,
            comm,
        )

    def wald(self, mean: Any, scale: Any, size: Size = None, *, comm: Any = None):
        """Wald (inverse Gaussian) samples by Michael, Schucany and Haas."""
        return self._dist(
            "wald",
            (
                mean,
                scale,
            ),
            size,
            comm,
        )


class _DiscreteMethods:
    """The discrete univariate distributions of :class:`Generator` (a mixin); int64 results.

    Each method is one draw; collective when an array is returned.  Needs
    ``_run`` and ``_dist`` from :class:`Generator`.
    """

    __slots__ = ()

    def poisson(self, lam: Any = 1.0, size: Size = None, *, comm: Any = None):
        """Poisson samples: inversion for ``lam < 10``, Hörmann's PTRS rejection above.  int64."""
        return self._dist("poisson", (lam,), size, comm)

    def binomial(self, n: Any, p: Any, size: Size = None, *, comm: Any = None):
        """Binomial samples: inversion for ``n min(p, 1-p) < 10``, Hörmann's BTRS above.  int64."""
        nn = _param("binomial", "n", n)
        nn = np.trunc(nn)
        pp = _param("binomial", "p", p)
        _check([(nn, _neg, "n < 0"), (pp, lambda s: (s < 0) | (s > 1) | _nan(s), "p < 0, p > 1 or p is NaN")])
        return self._run(D.binomial, [nn, pp], size, np.int64, comm)

    def negative_binomial(self, n: Any, p: Any, size: Size = None, *, comm: Any = None):
        """Negative binomial samples, a gamma--Poisson mixture.  int64."""
        return self._dist(
            "negative_binomial",
            (
                n,
                p,
            ),
            size,
            comm,
        )

    def geometric(self, p: Any, size: Size = None, *, comm: Any = None):
        """Geometric samples (trials to the first success) by inversion.  int64."""
        return self._dist("geometric", (p,), size, comm)

    def hypergeometric(self, ngood: Any, nbad: Any, nsample: Any, size: Size = None, *, comm: Any = None):
        """Hypergeometric samples: HRUA for ``10 <= nsample <= total - 10``, sequential draws otherwise.  int64."""
        ps = [
            np.trunc(_param("hypergeometric", n, v))
            for n, v in (("ngood", ngood), ("nbad", nbad), ("nsample", nsample))
        ]
        _check(
            [
                (ps[0], _neg, "ngood < 0"),
                (ps[1], _neg, "nbad < 0"),
                (ps[2], _neg, "nsample < 0"),
                (ps[0] + ps[1] - ps[2], lambda d: d < 0, "ngood + nbad < nsample"),
            ]
        )
        return self._run(D.hypergeometric, ps, size, np.int64, comm)

    def logseries(self, p: Any, size: Size = None, *, comm: Any = None):
        """Logarithmic-series samples by Kemp's rejection.  int64."""
        return self._dist("logseries", (p,), size, comm)

    def zipf(self, a: Any, size: Size = None, *, comm: Any = None):
        """Zipf samples by Devroye's rejection.  int64."""
        return self._dist("zipf", (a,), size, comm)
