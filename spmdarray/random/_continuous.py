"""Kernels of the continuous distributions: ``kernel(stream, *params) -> float64 values``.

Not collective; pure functions of the stream's ``(seed, draw, path, i)`` and of
each element's own parameters.  Parameters arrive as float64 arrays of the
stream's length (NumPy or CuPy).  Run under ``numpy.errstate(all="ignore")``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spmdarray.random._counter import Stream, branch, until_accepted

# -- building blocks ---------------------------------------------------------


def standard_exponential(st: Stream) -> Any:
    """``-log(1 - u)`` (inversion)."""
    return st.exponential(0)


def _marsaglia_tsang(st: Stream, shape: Any) -> Any:
    """Gamma(shape >= 1) by Marsaglia and Tsang (2000) with masked rounds.

    Each round uses lanes 0-1 (Box--Muller normal) and 2 (uniform) of its own
    sub-stream; a candidate is accepted with probability above 0.95.
    """
    d = shape - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)

    def attempt(s: Stream, d: Any, c: Any):
        x = s.normal(0)
        u = s.uniform(2)
        v = 1.0 + c * x
        v3 = v * v * v
        x2 = x * x
        ok = (v > 0) & ((u < 1.0 - 0.0331 * x2 * x2) | (np.log(u) < 0.5 * x2 + d * (1.0 - v3 + np.log(v3))))
        ok |= np.isnan(d)  # NaN shapes give NaN at once
        return d * v3, ok

    return until_accepted(st, [d, c], attempt)


def standard_gamma(st: Stream, shape: Any) -> Any:
    """Gamma(shape, 1): Marsaglia--Tsang on ``max(shape, shape + 1)``.

    For ``shape < 1`` the sample of Gamma(shape + 1) (sub-stream 0) is
    multiplied by ``u ** (1 / shape)`` (sub-stream 1, Stuart's theorem);
    ``shape == 0`` gives 0.
    """
    boost = shape < 1.0
    g = _marsaglia_tsang(st.sub(0), np.where(boost, shape + 1.0, shape))
    u = st.sub(1).uniform_open(0)
    return np.where(boost, g * u ** (1.0 / np.where(shape == 0, 1.0, shape)), g) * (shape > 0)


def chisquare(st: Stream, df: Any) -> Any:
    """``2 * standard_gamma(df / 2)``."""
    return 2.0 * standard_gamma(st, 0.5 * df)


def _johnk(st: Stream, a: Any, b: Any) -> Any:
    """Beta(a, b) for a, b <= 1 by Johnk's rejection (acceptance above pi/4); log space on underflow."""

    def attempt(s: Stream, a: Any, b: Any):
        u = s.uniform(0)
        v = s.uniform(1)
        x = u ** (1.0 / a)
        y = v ** (1.0 / b)
        xy = x + y
        ok = (xy <= 1.0) & (u + v > 0.0)
        lx = np.log(u) / a
        ly = np.log(v) / b
        lm = np.maximum(lx, ly)
        lx = lx - lm
        ly = ly - lm
        logged = np.exp(lx - np.log(np.exp(lx) + np.exp(ly)))
        return np.where(xy > 0, x / np.where(xy > 0, xy, 1.0), logged), ok

    return until_accepted(st, [a, b], attempt)


def beta(st: Stream, a: Any, b: Any) -> Any:
    """Johnk's method where ``a <= 1 and b <= 1``, else ``Ga / (Ga + Gb)`` (two gammas)."""

    def ratio(s: Stream, a: Any, b: Any) -> Any:
        ga = standard_gamma(s.sub(0), a)
        gb = standard_gamma(s.sub(1), b)
        return ga / (ga + gb)

    small = (a <= 1.0) & (b <= 1.0)
    return branch(st, st.n, [(small, _johnk), (~small, ratio)], [a, b])


def normal(st: Stream, loc: Any, scale: Any) -> Any:
    """``loc + scale * z`` with Box--Muller ``z``."""
    return loc + scale * st.normal(0)


def uniform(st: Stream, low: Any, high: Any) -> Any:
    """``low + (high - low) * u``."""
    return low + (high - low) * st.uniform(0)


def exponential(st: Stream, scale: Any) -> Any:
    """``scale * standard_exponential``."""
    return scale * st.exponential(0)


def gamma(st: Stream, shape: Any, scale: Any) -> Any:
    """``scale * standard_gamma(shape)``."""
    return scale * standard_gamma(st, shape)


def f(st: Stream, dfnum: Any, dfden: Any) -> Any:
    """``(X1 / dfnum) / (X2 / dfden)`` with independent chi-squares."""
    return (chisquare(st.sub(0), dfnum) * dfden) / (chisquare(st.sub(1), dfden) * dfnum)


def standard_t(st: Stream, df: Any) -> Any:
    """``Z / sqrt(chisquare(df) / df)``."""
    z = st.sub(0).normal(0)
    return z / np.sqrt(chisquare(st.sub(1), df) / df)


def standard_cauchy(st: Stream) -> Any:
    """``tan(pi * (u - 1/2))`` with ``u`` in the open interval (0, 1) (inversion)."""
    return np.tan(np.pi * (st.uniform_open(0) - 0.5))


def laplace(st: Stream, loc: Any, scale: Any) -> Any:
    """Inversion with ``u`` in (0, 1): ``loc + scale * log(2u)`` below 1/2, ``loc - scale * log(2 - 2u)`` above."""
    u = st.uniform_open(0)
    return np.where(u >= 0.5, loc - scale * np.log(2.0 - 2.0 * u), loc + scale * np.log(2.0 * u))


def logistic(st: Stream, loc: Any, scale: Any) -> Any:
    """Inversion: ``loc + scale * log(u / (1 - u))``, ``u`` in (0, 1)."""
    u = st.uniform_open(0)
    return loc + scale * np.log(u / (1.0 - u))


def lognormal(st: Stream, mean: Any, sigma: Any) -> Any:
    """``exp(mean + sigma * z)``."""
    return np.exp(mean + sigma * st.normal(0))


def gumbel(st: Stream, loc: Any, scale: Any) -> Any:
    """Inversion: ``loc - scale * log(-log(u))``, ``u`` in (0, 1)."""
    return loc - scale * np.log(-np.log(st.uniform_open(0)))


def pareto(st: Stream, a: Any) -> Any:
    """Lomax (Pareto II) by ``expm1(E / a)`` with E standard exponential."""
    return np.expm1(st.exponential(0) / a)


def power(st: Stream, a: Any) -> Any:
    """``(1 - exp(-E)) ** (1 / a)`` (inversion of ``x ** a``)."""
    return (-np.expm1(-st.exponential(0))) ** (1.0 / a)


def rayleigh(st: Stream, scale: Any) -> Any:
    """``scale * sqrt(2 E)``."""
    return scale * np.sqrt(2.0 * st.exponential(0))


def weibull(st: Stream, a: Any) -> Any:
    """``E ** (1 / a)``; 0 where ``a == 0``."""
    safe = np.where(a == 0, 1.0, a)
    return np.where(a == 0, 0.0, st.exponential(0) ** (1.0 / safe))


def triangular(st: Stream, left: Any, mode: Any, right: Any) -> Any:
    """Inversion of the piecewise-quadratic CDF."""
    base = right - left
    leftbase = mode - left
    ratio = leftbase / base
    u = st.uniform(0)
    lo = left + np.sqrt(u * leftbase * base)
    hi = right - np.sqrt((1.0 - u) * (right - mode) * base)
    return np.where(u <= ratio, lo, hi)


def wald(st: Stream, mean: Any, scale: Any) -> Any:
    """Michael, Schucany and Haas (1976): a normal (lanes 0-1) and a uniform (lane 2)."""
    y = st.normal(0)
    y = mean * y * y
    x = mean + (mean / (2.0 * scale)) * (y - np.sqrt(4.0 * scale * y + y * y))
    u = st.uniform(2)
    return np.where(u <= mean / (mean + x), x, mean * mean / x)


def _wrap_angle(x: Any) -> Any:
    """Map angles to [-pi, pi] as NumPy's von Mises sampler does."""
    neg = x < 0
    m = np.fmod(np.abs(x) + np.pi, 2.0 * np.pi) - np.pi
    return np.where(neg, -m, m)


def _best_fisher(st: Stream, mu: Any, kappa: Any) -> Any:
    """Von Mises by Best and Fisher (1979): rounds of two uniforms, then a sign uniform (sub-stream 1)."""
    r = 1.0 + np.sqrt(1.0 + 4.0 * kappa * kappa)
    rho = (r - np.sqrt(2.0 * r)) / (2.0 * kappa)
    s = np.where(kappa < 1e-5, 1.0 / kappa + kappa, (1.0 + rho * rho) / (2.0 * rho))

    def attempt(sub: Stream, s: Any, kappa: Any):
        z = np.cos(np.pi * sub.uniform(0))
        w = (1.0 + s * z) / (s + z)
        y = kappa * (s - w)
        v = sub.uniform(1)
        ok = (y * (2.0 - y) - v >= 0) | (np.log(y / v) + 1.0 - y >= 0) | np.isnan(s)
        return w, ok

    w = until_accepted(st.sub(0), [s, kappa], attempt)
    ang = np.arccos(np.clip(w, -1.0, 1.0))
    ang = np.where(st.sub(1).uniform(0) < 0.5, -ang, ang)
    return _wrap_angle(ang + mu)


def vonmises(st: Stream, mu: Any, kappa: Any) -> Any:
    """Uniform on [-pi, pi) for ``kappa < 1e-8``, a wrapped normal for ``kappa > 1e6``, else Best--Fisher."""
    flat = kappa < 1e-8
    sharp = kappa > 1e6
    mid = ~(flat | sharp)

    def uniform_circle(s: Stream, mu: Any, kappa: Any) -> Any:
        return np.pi * (2.0 * s.uniform(0) - 1.0)

    def wrapped(s: Stream, mu: Any, kappa: Any) -> Any:
        return _wrap_angle(mu + np.sqrt(1.0 / kappa) * s.normal(0))

    return branch(st, st.n, [(flat, uniform_circle), (sharp, wrapped), (mid, _best_fisher)], [mu, kappa])
