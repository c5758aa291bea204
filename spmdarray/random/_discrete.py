"""Kernels of the discrete distributions: ``kernel(stream, *params) -> int64 values``.

Not collective; pure functions of the stream's ``(seed, draw, path, i)`` and of
each element's own parameters (float64 arrays of the stream's length; integer
parameters arrive as whole-valued float64).  Run under
``numpy.errstate(all="ignore")``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spmdarray.random._counter import Stream, branch, logfactorial, until_accepted

_I64_MAX = float(np.nextafter(2.0**63, 0.0))  # the largest float64 below 2**63


def _to_int(x: Any) -> Any:
    """Whole-valued float64 to int64 (values beyond int64 saturate)."""
    return np.clip(x, -_I64_MAX, _I64_MAX).astype(np.int64)


def _search(st: Stream, first: Any, step: Any, limit: Any) -> Any:
    """Sequential-search inversion with one uniform (lane 0).

    ``first`` is P(X = 0); ``step(k, p)`` gives P(X = k) from P(X = k - 1).
    Stops at the first ``k`` with ``u <= F(k)``, at ``limit``, or past the
    mode where ``P(X = k) < 2**-60`` (rounding can keep ``F`` just below ``u``;
    that happens with probability of order ``2**-50``).
    """
    xp = st.xp
    u = st.uniform(0)
    k = xp.zeros(st.n, dtype=np.float64)
    p = first + 0.0 * u
    cdf = p.copy()
    act = xp.nonzero((u > cdf) & (k < limit))[0]
    while act.shape[0]:
        k[act] += 1.0
        p[act] = step(k[act], p[act], act)
        cdf[act] += p[act]
        lim = limit[act] if getattr(limit, "ndim", 0) else limit
        # Stop where the remaining mass is below 2**-60: rounding can leave F just below u.
        keep = (u[act] > cdf[act]) & (k[act] < lim) & (p[act] > 2.0**-60)
        act = act[keep]
    return k


# -- Poisson -----------------------------------------------------------------


def _poisson_inversion(st: Stream, lam: Any) -> Any:
    """Inversion by sequential search (``lam < 10``; capped at 200 steps)."""
    return _search(st, np.exp(-lam), lambda k, p, idx: p * lam[idx] / k, 200.0)


def _ptrs(st: Stream, lam: Any) -> Any:
    """Hörmann's PTRS transformed rejection (``lam >= 10``; acceptance above 0.9), lanes 0-1 per round."""
    slam = np.sqrt(lam)
    loglam = np.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2.0)

    def attempt(s: Stream, lam: Any, loglam: Any, a: Any, b: Any, invalpha: Any, vr: Any):
        u = s.uniform(0) - 0.5
        v = s.uniform(1)
        us = 0.5 - np.abs(u)
        k = np.floor((2.0 * a / us + b) * u + lam + 0.43)
        fast = (us >= 0.07) & (v <= vr)
        valid = (k >= 0) & ~((us < 0.013) & (v > us)) & np.isfinite(k)
        kk = np.where(valid, k, 0.0)
        lhs = np.log(v) + np.log(invalpha) - np.log(a / (us * us) + b)
        rhs = -lam + kk * loglam - logfactorial(kk, s.xp)
        return kk, fast | (valid & (lhs <= rhs))

    return until_accepted(st, [lam, loglam, a, b, invalpha, vr], attempt)


def poisson(st: Stream, lam: Any) -> Any:
    """Inversion below ``lam = 10``, PTRS from 10; 0 where ``lam == 0``."""
    small = (lam > 0) & (lam < 10)
    big = lam >= 10
    return _to_int(branch(st, st.n, [(small, _poisson_inversion), (big, _ptrs)], [lam]))


# -- binomial ----------------------------------------------------------------


def _binomial_inversion(st: Stream, n: Any, p: Any) -> Any:
    """Sequential search from ``(1 - p) ** n`` (``n * p < 10``, ``p <= 1/2``)."""
    q = 1.0 - p
    r = p / q
    return _search(st, np.exp(n * np.log1p(-p)), lambda k, pk, idx: pk * r[idx] * (n[idx] - k + 1.0) / k, n)


def _btrs(st: Stream, n: Any, p: Any) -> Any:
    """Hörmann's BTRS transformed rejection (``n * p >= 10``, ``p <= 1/2``), lanes 0-1 per round.

    The exact acceptance test uses ``log f(k) / f(m)`` from log-factorials.
    """
    q = 1.0 - p
    spq = np.sqrt(n * p * q)
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    vr = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    m = np.floor((n + 1.0) * p)
    logr = np.log(p / q)
    lfm = logfactorial(m, st.xp) + logfactorial(n - m, st.xp)

    def attempt(s: Stream, n, a, b, c, vr, alpha, m, logr, lfm):
        u = s.uniform(0) - 0.5
        v = s.uniform(1)
        us = 0.5 - np.abs(u)
        k = np.floor((2.0 * a / us + b) * u + c)
        fast = (us >= 0.07) & (v <= vr)
        valid = (k >= 0) & (k <= n) & np.isfinite(k)
        kk = np.where(valid, k, m)
        lv = np.log(v * alpha / (a / (us * us) + b))
        bound = lfm - logfactorial(kk, s.xp) - logfactorial(n - kk, s.xp) + (kk - m) * logr
        return kk, fast | (valid & (lv <= bound))

    return until_accepted(st, [n, a, b, c, vr, alpha, m, logr, lfm], attempt)


def binomial(st: Stream, n: Any, p: Any) -> Any:
    """``n - binomial(n, 1 - p)`` for ``p > 1/2``; inversion for ``n p < 10``, BTRS otherwise."""
    flip = p > 0.5
    pp = np.where(flip, 1.0 - p, p)
    live = (n > 0) & (pp > 0)
    small = live & (n * pp < 10)
    big = live & (n * pp >= 10)
    k = branch(st, st.n, [(small, _binomial_inversion), (big, _btrs)], [n, pp])
    return _to_int(np.where(flip, n - k, k))


# -- others ------------------------------------------------------------------


def geometric(st: Stream, p: Any) -> Any:
    """Inversion: ``ceil(log(u) / log(1 - p))``, ``u`` in (0, 1), at least 1."""
    k = np.ceil(np.log(st.uniform_open(0)) / np.log1p(-p))
    return _to_int(np.maximum(np.where(p >= 1.0, 1.0, k), 1.0))


def _hyper_sequential(st: Stream, good: Any, bad: Any, sample: Any) -> Any:
    """Draw ``min(sample, total - sample)`` (< 10) items one by one (lane ``j`` for draw ``j``)."""
    total = good + bad
    upper = sample > total / 2.0
    todo = np.where(upper, total - sample, sample)
    rem_total = total.copy()
    rem_good = good.copy()
    for j in range(10):
        act = (todo > 0) & (rem_good > 0) & (rem_total > rem_good)
        pick = np.floor(st.uniform(j) * rem_total)
        rem_good = np.where(act & (pick < rem_good), rem_good - 1.0, rem_good)
        rem_total = np.where(act, rem_total - 1.0, rem_total)
        todo = np.where(act, todo - 1.0, todo)
    rem_good = np.where(rem_total == rem_good, rem_good - todo, rem_good)
    return np.where(upper, rem_good, good - rem_good)


_D1 = 1.7155277699214135
_D2 = 0.8989161620588988


def _hrua(st: Stream, good: Any, bad: Any, sample: Any) -> Any:
    """Stadlober's HRUA ratio-of-uniforms rejection (``10 <= sample <= total - 10``), lanes 0-1 per round."""
    xp = st.xp
    total = good + bad
    cs = np.minimum(sample, total - sample)
    mgb = np.minimum(good, bad)
    xgb = np.maximum(good, bad)
    p = mgb / total
    q = xgb / total
    mu = cs * p
    a = mu + 0.5
    var = (total - cs) * cs * p * q / (total - 1.0)
    c = np.sqrt(var + 0.5)
    h = _D1 * c + _D2
    m = np.floor((cs + 1.0) * (mgb + 1.0) / (total + 2.0))
    g = logfactorial(m, xp) + logfactorial(mgb - m, xp) + logfactorial(cs - m, xp) + logfactorial(xgb - cs + m, xp)
    b = np.minimum(np.minimum(cs, mgb) + 1.0, np.floor(a + 16.0 * c))

    def attempt(s: Stream, a, h, b, g, mgb, cs, xgb):
        u = s.uniform(0)
        v = s.uniform(1)
        x = a + h * (v - 0.5) / u
        valid = (x >= 0) & (x < b) & np.isfinite(x)
        k = np.floor(np.where(valid, x, 0.0))
        gp = logfactorial(k, s.xp) + logfactorial(mgb - k, s.xp) + logfactorial(cs - k, s.xp)
        gp = gp + logfactorial(xgb - cs + k, s.xp)
        t = g - gp
        fast = u * (4.0 - u) - 3.0 <= t
        rej = u * (u - t) >= 1.0
        ok = valid & (fast | (~rej & (2.0 * np.log(u) <= t)))
        return k, ok

    k = until_accepted(st, [a, h, b, g, mgb, cs, xgb], attempt)
    k = np.where(good > bad, cs - k, k)
    return np.where(cs < sample, good - k, k)


def hypergeometric(st: Stream, good: Any, bad: Any, sample: Any) -> Any:
    """NumPy's split: HRUA for ``10 <= nsample <= total - 10``, sequential draws otherwise."""
    total = good + bad
    big = (sample >= 10) & (sample <= total - 10)
    k = branch(st, st.n, [(~big, _hyper_sequential), (big, _hrua)], [good, bad, sample])
    return _to_int(k)


def logseries(st: Stream, p: Any) -> Any:
    """Kemp's (1981) rejection (LK), two uniforms (lanes 0-1) per round."""
    r = np.log1p(-p)

    def attempt(s: Stream, p: Any, r: Any):
        v = s.uniform(0)
        u = s.uniform(1)
        q = -np.expm1(r * u)
        k = np.floor(1.0 + np.log(v) / np.log(q))
        ok_k = (v <= q * q) & (k >= 1) & (v > 0) & np.isfinite(k)
        res = np.where(v >= p, 1.0, np.where(v <= q * q, k, np.where(v >= q, 1.0, 2.0)))
        ok = (v >= p) | ok_k | (v > q * q)
        return np.where(ok, res, 1.0), ok

    return _to_int(until_accepted(st, [p, r], attempt))


def zipf(st: Stream, a: Any) -> Any:
    """Devroye's rejection for Zipf (NumPy's algorithm), lanes 0-1 per round; values above int64 are rejected."""
    am1 = a - 1.0
    b = 2.0**am1

    def attempt(s: Stream, am1: Any, b: Any):
        u = 1.0 - s.uniform(0)
        v = s.uniform(1)
        x = np.floor(u ** (-1.0 / am1))
        valid = (x >= 1.0) & (x <= _I64_MAX)
        xs = np.where(valid, x, 1.0)
        t = (1.0 + 1.0 / xs) ** am1
        ok = valid & (v * xs * (t - 1.0) / (b - 1.0) <= t / b)
        return xs, ok | np.isnan(am1)

    return _to_int(until_accepted(st, [am1, b], attempt))
