"""Distributions whose samples are rows: multinomial, dirichlet, multivariate normal and hypergeometric.

A result has shape ``size + (k,)`` and is distributed like any array (the
last axis may be split).  Row ``r``'s values are a pure function of
``(seed, draw, r)``: a rank computes the whole rows its block touches (``k``
values each; ``k`` is small and the parameters are replicated) and keeps
its columns, so no communication happens.  The small parameter vectors and
matrices (``pvals``, ``alpha``, ``mean``, ``cov``, ``colors``) are held
whole on every rank.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from spmdarray.random import _continuous as C
from spmdarray.random import _discrete as D
from spmdarray.random._counter import Box, Stream, _flat_indices, run_padded
from spmdarray.random._parameters import _any, _is_dist, _param
from spmdarray.routines.creation import _shape

_COLORS_MSG = "colors must be a one-dimensional sequence of nonnegative integers not exceeding 9223372036854775807."


def _rows(gen: Any, rshape: tuple[int, ...], k: int, dtype: Any, kernel: Any, params: list[Any], comm: Any) -> Any:
    """One draw of ``kernel(stream_over_rows, *row_params) -> (rows, k)`` as an array ``rshape + (k,)``.  Collective."""
    shape = rshape + (k,)
    dtype = np.dtype(dtype)
    draw = gen._next()

    def fill(box: Box, xp: Any, blocks: list[Any]) -> Any:
        (c0, c1) = box[-1]
        rows = _flat_indices(box[:-1], rshape, xp).reshape(-1)
        ps = [b[..., 0].reshape(-1) for b in blocks]
        with np.errstate(all="ignore"):
            v = run_padded(kernel, Stream(gen._seed, draw, rows, (), xp), ps)
        return v[:, c0:c1].astype(dtype, copy=False).reshape(tuple(b - a for a, b in box))

    full = [p[..., None] if _is_dist(p) else np.asarray(p)[..., None] for p in params]
    if comm is None:
        comm = next((p._st.ctx for p in params if _is_dist(p)), None)
    return gen._materialise(shape, dtype, fill, full, comm)


def _row_shape(size: Any, pshape: tuple[int, ...]) -> tuple[int, ...]:
    if size is None:
        return pshape
    shape = _shape(size, "size")
    if np.broadcast_shapes(pshape, shape) != shape:
        raise ValueError(f"shape mismatch: parameters of shape {pshape} cannot be broadcast to size {shape}")
    return shape


def _vector(func: str, name: str, value: Any) -> np.ndarray:
    if _is_dist(value):
        raise NotImplementedError(
            f"spmdarray.random.{func}: {name} must be a small NumPy array or sequence (held on every rank), "
            "not a distributed array"
        )
    return np.asarray(value)


def multinomial(gen: Any, n: Any, pvals: Any, size: Any, comm: Any) -> Any:
    """Multinomial counts, shape ``size + (len(pvals),)`` (int64).  Collective.

    Conditional binomials: count ``j`` is ``binomial(n - counts so far,
    p_j / (1 - p_0 - ... - p_{j-1}))`` on sub-stream ``j``; the last count
    takes the rest.  ``pvals`` is 1-D and replicated; ``n`` broadcasts
    against ``size``.
    """
    pv = _vector("multinomial", "pvals", pvals).astype(np.float64)
    if pv.ndim != 1:
        raise NotImplementedError("spmdarray.random.multinomial: pvals must be 1-D (2-D pvals are not supported)")
    if np.any(pv < 0) or np.any(pv > 1) or np.any(np.isnan(pv)):
        raise ValueError("pvals < 0, pvals > 1 or pvals contains NaNs")
    if pv.size and pv[:-1].sum() > 1.0 + 1e-12:
        raise ValueError("sum(pvals[:-1]) > 1.0")
    nn = np.trunc(_param("multinomial", "n", n))
    if _any(nn, lambda s: s < 0):
        raise ValueError("n < 0")
    k = pv.size
    rshape = _row_shape(size, tuple(nn.shape))

    def kernel(st: Stream, nrow: Any) -> Any:
        xp = st.xp
        out = xp.zeros((st.n, k), dtype=np.float64)
        rem = nrow.copy()
        tail = 1.0
        for j in range(k - 1):
            q = min(1.0, max(0.0, pv[j] / tail)) if tail > 0 else 0.0
            x = D.binomial(st.sub(j), rem, xp.full(st.n, q)).astype(np.float64)
            out[:, j] = x
            rem = rem - x
            tail -= pv[j]
        if k:
            out[:, k - 1] = rem
        return out

    return _rows(gen, rshape, k, np.int64, kernel, [nn], comm)


def dirichlet(gen: Any, alpha: Any, size: Any, comm: Any) -> Any:
    """Dirichlet samples, shape ``size + (len(alpha),)``.  Collective.

    Normalised gammas (component ``j`` on sub-stream ``j``); when every
    ``alpha < 0.1`` stick-breaking with betas, as NumPy does, so that tiny
    gammas do not underflow to 0/0.
    """
    al = _vector("dirichlet", "alpha", alpha).astype(np.float64)
    if al.ndim != 1:
        raise ValueError("alpha must be a one-dimensional sequence")
    if np.any(al < 0) or np.any(np.isnan(al)):
        raise ValueError("alpha < 0 or alpha contains NaNs")
    k = al.size
    rshape = _row_shape(size, ())
    tails = np.cumsum(al[::-1])[::-1]

    def kernel(st: Stream) -> Any:
        xp = st.xp
        out = xp.zeros((st.n, k), dtype=np.float64)
        if k and al.max() < 0.1:
            acc = xp.ones(st.n)
            for j in range(k - 1):
                v = C.beta(st.sub(j), xp.full(st.n, al[j]), xp.full(st.n, tails[j + 1]))
                v = np.where(np.isnan(v), 0.0, v)
                out[:, j] = acc * v
                acc = acc - out[:, j]
            out[:, k - 1] = acc
            return out
        for j in range(k):
            out[:, j] = C.standard_gamma(st.sub(j), xp.full(st.n, al[j]))
        return out / out.sum(axis=1, keepdims=True)

    return _rows(gen, rshape, k, np.float64, kernel, [], comm)


def multivariate_normal(
    gen: Any, mean: Any, cov: Any, size: Any, check_valid: str, tol: float, method: str, comm: Any
) -> Any:
    """Multivariate normal samples, shape ``size + (len(mean),)``.  Collective (no communication).

    ``mean`` and ``cov`` are small and replicated: every rank factors ``cov``
    identically (``method`` "svd" like NumPy's default, "eigh" or
    "cholesky") with NumPy's LAPACK, and each row is ``mean + z @ A`` with
    ``z`` the row's ``k`` standard normals (flat indices ``r * k + j``, so
    ``z`` equals ``standard_normal(size + (k,))`` of the same draw).
    """
    mu = _vector("multivariate_normal", "mean", mean).astype(np.float64)
    cv = _vector("multivariate_normal", "cov", cov).astype(np.float64)
    if mu.ndim != 1:
        raise ValueError("mean must be 1 dimensional")
    if cv.ndim != 2 or cv.shape[0] != cv.shape[1]:
        raise ValueError("cov must be 2 dimensional and square")
    if mu.shape[0] != cv.shape[0]:
        raise ValueError("mean and cov must have same length")
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError(f"method must be one of {{'eigh', 'svd', 'cholesky'}}, got {method!r}")
    if check_valid not in ("warn", "raise", "ignore"):
        raise ValueError("check_valid must equal 'warn', 'raise', or 'ignore'")
    k = mu.shape[0]
    if method == "cholesky":
        factor = np.linalg.cholesky(cv).T
    else:
        if method == "svd":
            _, s, vh = np.linalg.svd(cv)
            psd = np.allclose(np.dot(vh.T * s, vh), cv, rtol=tol, atol=tol)
            factor = np.sqrt(s)[:, None] * vh
        else:
            s, u = np.linalg.eigh(cv)
            psd = not np.any(s < -tol)
            factor = (u * np.sqrt(np.abs(s))).T
        if not psd and check_valid != "ignore":
            if check_valid == "warn":
                warnings.warn("covariance is not symmetric positive-semidefinite.", RuntimeWarning, stacklevel=3)
            else:
                raise ValueError("covariance is not symmetric positive-semidefinite.")
    rshape = _row_shape(size, ())

    def kernel(st: Stream) -> Any:
        xp = st.xp
        flat = (st.flat[:, None] * np.uint64(k) + xp.arange(k, dtype=np.uint64)[None, :]).reshape(-1)
        z = Stream(st.seed, st.draw, flat, st.path, xp).normal(0).reshape(st.n, k)
        # ``z @ factor`` as a fixed-order sum of products: a BLAS product may
        # round a row differently with the number of rows in the block.
        f = xp.asarray(factor)
        acc = z[:, :1] * f[0]
        for j in range(1, k):
            acc += z[:, j : j + 1] * f[j]
        return acc + xp.asarray(mu)

    return _rows(gen, rshape, k, np.float64, kernel, [], comm)


def multivariate_hypergeometric(gen: Any, colors: Any, nsample: Any, size: Any, method: str, comm: Any) -> Any:
    """Multivariate hypergeometric counts, shape ``size + (len(colors),)`` (int64).  Collective.

    Marginals: count ``j`` is ``hypergeometric(colors[j], rest, remaining
    sample)`` on sub-stream ``j``.  ``method="count"`` is accepted and uses
    the same algorithm (the distribution is the same; the stream differs
    from NumPy's anyway).
    """
    if method not in ("count", "marginals"):
        raise ValueError('method must be "count" or "marginals".')
    col = _vector("multivariate_hypergeometric", "colors", colors)
    if col.ndim != 1 or (col.size and (col.dtype.kind not in "iu" or np.any(col < 0))):
        raise ValueError(_COLORS_MSG)
    col = col.astype(np.int64)
    try:
        ns = int(np.asarray(nsample).item()) if np.ndim(nsample) == 0 else None
    except (TypeError, ValueError):
        ns = None
    if ns is None or ns < 0:
        raise ValueError("nsample must be a nonnegative integer")
    total = int(col.sum())
    if ns > total:
        raise ValueError(f"nsample > sum(colors)  (nsample={ns}, sum(colors)={total})")
    k = col.size
    rshape = _row_shape(size, ())

    def kernel(st: Stream) -> Any:
        xp = st.xp
        out = xp.zeros((st.n, k), dtype=np.float64)
        rem = xp.full(st.n, float(ns))
        rest = float(total)
        for j in range(k - 1):
            rest -= float(col[j])
            x = D.hypergeometric(st.sub(j), xp.full(st.n, float(col[j])), xp.full(st.n, rest), rem).astype(np.float64)
            out[:, j] = x
            rem = rem - x
        if k:
            out[:, k - 1] = rem
        return out

    return _rows(gen, rshape, k, np.int64, kernel, [], comm)
