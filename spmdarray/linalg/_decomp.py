"""Decompositions and solvers: ``numpy.linalg.qr``, ``svd``, ``eigh``, ``solve`` ...

* ``qr`` (modes ``reduced`` and ``r``) and ``svd`` (``full_matrices=False`` or
  ``compute_uv=False``, and square matrices) of a single tall matrix use a
  tall-skinny QR (TSQR): each rank factors its row block, the small ``R``
  factors are gathered and factored again on one rank, and each rank applies
  its slice of that ``Q`` to its own block.  A wide matrix goes through its
  conjugate transpose.  Only ``N x N`` matrices (``N`` the short side) are
  ever held whole.
* Every other routine runs NumPy's routine batch-parallel on stacks
  ``(..., M, N)`` (each matrix whole on one rank, the batch split over
  ranks), and on a single matrix by gathering it onto one rank, computing
  there and scattering the result (see :mod:`spmdarray.linalg._batch`).  Those are
  marked ``replicated`` in the dispatch registry; each matrix is limited to
  ``config.linalg_max_elements`` elements.
"""

from __future__ import annotations

import operator

import numpy as np

from spmdarray.comm import agree_gathered, allgather_blocks
from spmdarray.core import fetch as _fetch
from spmdarray.core.conversion import gather
from spmdarray.core.registry import implements
from spmdarray.core.whole import SLOW, whole_copy
from spmdarray.decomposition import Layout, block_bounds
from spmdarray.engine import elementwise as _engine
from spmdarray.linalg._batch import _abs2, check_size, gufunc, new_array, on_lane, on_root, operand
from spmdarray.linalg._products import matmul, matmul_nd
from spmdarray.routines.creation import array, empty_like, eye
from spmdarray.routines.manipulation.shape import redistribute

__all__ = [
    "cholesky",
    "qr",
    "svd",
    "svdvals",
    "eigh",
    "eigvalsh",
    "eig",
    "eigvals",
    "solve",
    "inv",
    "det",
    "slogdet",
    "lstsq",
    "pinv",
    "matrix_rank",
    "matrix_power",
    "cond",
    "tensorinv",
    "tensorsolve",
]

LinAlgError = np.linalg.LinAlgError


def _at_least_2d(name, *arrays) -> None:
    for a in arrays:
        if a.ndim < 2:
            raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least two-dimensional")


def _square(*arrays) -> None:
    for a in arrays:
        m, n = a.shape[-2:]
        if m != n:
            raise LinAlgError("Last 2 dimensions of the array must be square")


# ------------------------------------------------------------------ TSQR
def _row_blocks(a, ctx):
    """``a`` (2-D) laid out in row blocks over all ranks.  Collective."""
    m, n = a.shape
    lay = Layout((m, n), (ctx.size,), (0,), (None,), (block_bounds(m, ctx.size), None))

    return redistribute(a, lay)


def _tsqr(a, want_q: bool = True):
    """Reduced QR of a tall ``M x N`` (``M >= N``) distributed matrix.  Collective.

    Returns ``(Q, R)`` with ``Q`` in row blocks (None without ``want_q``) and
    ``R`` an ``N x N`` NumPy array, identical on every rank.
    """
    ctx = a._st.ctx
    m, n = a.shape
    dt = np.linalg.qr(np.ones((1, 1), a.dtype))[1].dtype
    A = _row_blocks(a.astype(dt, copy=False), ctx)
    be = A._st.be
    loc = be.to_host(A._block)
    bounds = block_bounds(m, ctx.size)
    ks = [min(hi - lo, n) for lo, hi in bounds]
    q1, r1 = np.linalg.qr(loc, mode="reduced")
    rs = allgather_blocks(ctx.comm, np.ascontiguousarray(r1), [(k, n) for k in ks])
    stack = np.concatenate(rs, axis=0)
    # Factor the stack of R factors on rank 0 only and share it: bit-identical everywhere.
    q2, r = on_root(ctx, lambda: np.linalg.qr(stack, mode="reduced"))
    if not want_q:
        return None, r
    off = sum(ks[: ctx.rank])
    Q = new_array(ctx, A._layout, dt)
    if Q._block.size:
        Q._block[...] = be.asarray(q1 @ q2[off : off + ks[ctx.rank]])
    Q._st.bump()
    return Q, r


def _replicated_result(arr, ctx):
    """A global NumPy value (the same on every rank) as a balanced distributed array.  Not communicating."""

    return array(arr, comm=ctx)


def _tsqr_ok(a, mode: str) -> bool:
    return a.ndim == 2 and a.shape[0] >= a.shape[1] and mode in ("reduced", "r") and a.shape[1] > 0


@implements(np.linalg.qr)
def qr(a, mode="reduced"):
    """Distributed ``numpy.linalg.qr``.  Collective.

    A single tall matrix in modes ``reduced`` and ``r`` uses TSQR (``Q`` is
    distributed in row blocks, ``R`` is ``N x N``).  Other cases are
    batch-parallel / replicated (limited by ``config.linalg_max_elements``).
    TSQR's ``R`` may differ from LAPACK's by the signs of its rows (and
    ``Q``'s columns); ``Q @ R`` is the same to rounding.
    """
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"Unrecognized mode '{mode}'")
    ctx = _fetch.context_of(a)
    a = operand(a, ctx)
    _at_least_2d("qr", a)
    if _tsqr_ok(a, mode):
        check_size("qr", (a.shape[1], a.shape[1]))
        if (res := on_lane(lambda x: np.linalg.qr(x, mode=mode), [a])) is not SLOW:
            return res  # held whole on every rank: NumPy's own, its signs too
        q, r = _tsqr(a, want_q=mode == "reduced")
        R = _replicated_result(r, ctx)
        if mode == "r":
            return R
        return type(np.linalg.qr(np.ones((1, 1))))(q, R)
    if mode == "complete":
        check_size("qr", (a.shape[-2], a.shape[-2]))  # the full Q
    return gufunc("qr", lambda x: np.linalg.qr(x, mode=mode), [a], [2])


def _tsqr_svd_ok(a, hermitian=False) -> bool:
    return a.ndim == 2 and not hermitian and min(a.shape) > 0


def _tsqr_svd(a, compute_uv=True):
    """SVD of one matrix through TSQR (of ``a``, or of ``a^H`` when wide).  Collective.

    Returns ``(big, s, vh, wide)``: ``x = big @ diag(s) @ vh`` where ``x`` is
    ``a`` (``a^H`` when ``wide``), ``big`` the distributed ``(max, min)``
    factor (None without ``compute_uv``), ``s`` and ``vh`` NumPy arrays, the
    same on every rank.
    """

    ctx = a._st.ctx
    m, n = a.shape
    check_size("svd", (min(m, n), min(m, n)))
    wide = m < n
    x = a.conj().T if wide else a
    q, r = _tsqr(x, want_q=compute_uv)
    out = on_root(ctx, lambda: np.linalg.svd(r, full_matrices=False, compute_uv=compute_uv))
    if not compute_uv:
        return None, out, None, wide
    u_r, s, vh = out
    return matmul(q, _replicated_result(u_r, ctx)), s, vh, wide  # (M, N) @ (N, N)


@implements(np.linalg.svd)
def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """Distributed ``numpy.linalg.svd``.  Collective.

    A single matrix with ``compute_uv=False``, ``full_matrices=False`` or
    square shape goes through TSQR (of ``a`` when tall, of ``a^H`` when wide):
    ``U`` (or ``Vh``) stays distributed.  Stacks and full rectangular factors
    are batch-parallel / replicated.  Singular vectors are unique only up to
    a phase per vector, so they may differ from NumPy's by signs.
    """
    ctx = _fetch.context_of(a)
    a = operand(a, ctx)
    _at_least_2d("svd", a)
    m, n = a.shape[-2:]
    if _tsqr_svd_ok(a, hermitian) and (not compute_uv or not full_matrices or m == n):
        check_size("svd", (min(m, n), min(m, n)))

        def npsvd(x):
            return np.linalg.svd(x, full_matrices=full_matrices, compute_uv=compute_uv)

        if (res := on_lane(npsvd, [a])) is not SLOW:
            return res  # held whole on every rank: NumPy's own, its signs too
        big, s, vh, wide = _tsqr_svd(a, compute_uv)
        S = _replicated_result(s, ctx)
        if not compute_uv:
            return S
        small = _replicated_result(vh, ctx)
        res = type(np.linalg.svd(np.ones((1, 1))))
        if wide:  # x = a^H = big s vh  ->  a = vh^H s big^H
            return res(small.conj().T.copy(), S, big.conj().T.copy())
        return res(big, S, small)
    if compute_uv and full_matrices:
        check_size("svd", (max(m, n), max(m, n)))  # the full U or Vh
    return gufunc(
        "svd",
        lambda x: np.linalg.svd(x, full_matrices=full_matrices, compute_uv=compute_uv, hermitian=hermitian),
        [a],
        [2],
    )


@implements(np.linalg.svdvals)
def svdvals(x, /):
    """Distributed ``numpy.linalg.svdvals`` (TSQR for a single matrix).  Collective."""
    return svd(x, compute_uv=False)


@implements(np.linalg.cholesky)
def cholesky(a, /, *, upper=False):
    """Distributed ``numpy.linalg.cholesky``.  Collective.

    One matrix on several ranks: a right-looking block Cholesky over row
    blocks (see :func:`_cholesky_rows`); stacks are batch-parallel (one
    matrix per rank, limited by ``config.linalg_max_elements``).  ``a`` must
    be Hermitian; the row-block algorithm reads its lower triangle.
    """
    ctx = _fetch.context_of(a)
    a = operand(a, ctx)
    _at_least_2d("cholesky", a)
    _square(a)
    if a.ndim == 2 and ctx.size > 1 and a.shape[0] > 0 and whole_copy(a) is None:
        low = _cholesky_rows(a)
        return low.conj().T if upper else low
    return gufunc("cholesky", lambda x: np.linalg.cholesky(x, upper=upper), [a], [2])


def _cholesky_rows(a):
    """Lower Cholesky factor of one ``N x N`` matrix laid out in row blocks.  Collective.

    For each rank ``p`` in turn: ``p`` factors its (updated) diagonal block
    and every rank learns it (with any ``LinAlgError``); the ranks below
    solve for their part of the panel ``L[:, p]``; the panel rows are
    all-gathered and each rank updates its own trailing rows.  A rank holds
    its row block plus one panel (``N x b``); each rank receives ``O(N^2)``
    words in all.
    """

    ctx = a._st.ctx
    n = a.shape[0]
    dt = np.linalg.cholesky(np.ones((1, 1), a.dtype)).dtype
    A = _row_blocks(a, ctx)
    be = A._st.be
    loc = be.to_host(A._block).astype(dt, copy=True)
    bounds = block_bounds(n, ctx.size)
    lo, hi = bounds[ctx.rank]
    me = ctx.rank
    for p, (plo, phi) in enumerate(bounds):
        b = phi - plo
        if b == 0:
            continue
        err, lpp = None, None
        if me == p:
            try:
                lpp = np.linalg.cholesky(loc[:, plo:phi])
            except Exception as e:
                err = (type(e), str(e))
        lpp = agree_gathered(ctx, err, lpp)[p]
        if me == p:
            loc[:, plo:phi] = lpp
        elif me > p and hi > lo:  # L[r, p] = A[r, p] L_pp^-H
            loc[:, plo:phi] = np.linalg.solve(lpp, loc[:, plo:phi].conj().T).conj().T
        shapes = [((h - l) if r > p else 0, b) for r, (l, h) in enumerate(bounds)]
        mine = np.ascontiguousarray(loc[:, plo:phi]) if me > p else np.empty((0, b), dt)
        parts = allgather_blocks(ctx.comm, mine, shapes)
        if me > p and hi > lo:
            panel = np.concatenate(parts[p + 1 : me + 1], axis=0)  # rows phi .. hi
            loc[:, phi:hi] -= loc[:, plo:phi] @ panel.conj().T
    loc[:, hi:] = 0
    L = new_array(ctx, A._layout, dt)  # noqa: N806
    if L._block.size:
        L._block[...] = be.asarray(loc)
    L._st.bump()
    return L


def _simple(name, npfunc):
    def impl(a):
        a = operand(a, _fetch.context_of(a))
        _at_least_2d(name, a)
        _square(a)
        return gufunc(name, npfunc, [a], [2])

    impl.__name__ = name
    impl.__doc__ = f"``numpy.linalg.{name}``: batch-parallel, or replicated for one matrix.  Collective."
    return impl


inv = implements(np.linalg.inv, replicated=True)(_simple("inv", np.linalg.inv))
det = implements(np.linalg.det, replicated=True)(_simple("det", np.linalg.det))
slogdet = implements(np.linalg.slogdet, replicated=True)(_simple("slogdet", np.linalg.slogdet))
eig = implements(np.linalg.eig, replicated=True)(_simple("eig", np.linalg.eig))
eigvals = implements(np.linalg.eigvals, replicated=True)(_simple("eigvals", np.linalg.eigvals))


def _hermitian(name, npfunc):
    def impl(a, UPLO="L"):  # noqa: N803
        if UPLO not in ("L", "U"):
            raise ValueError("UPLO argument must be 'L' or 'U'")
        a = operand(a, _fetch.context_of(a))
        _at_least_2d(name, a)
        _square(a)
        return gufunc(name, lambda x: npfunc(x, UPLO=UPLO), [a], [2])

    impl.__name__ = name
    impl.__doc__ = f"``numpy.linalg.{name}``: batch-parallel, or replicated for one matrix.  Collective."
    return impl


eigh = implements(np.linalg.eigh, replicated=True)(_hermitian("eigh", np.linalg.eigh))
eigvalsh = implements(np.linalg.eigvalsh, replicated=True)(_hermitian("eigvalsh", np.linalg.eigvalsh))


@implements(np.linalg.solve, replicated=True)
def solve(a, b):
    """``numpy.linalg.solve``: batch-parallel, or replicated for one system.  Collective.

    As in NumPy 2, ``b`` is a vector (``(..., M)``) only when it is 1-D.
    """
    ctx = _fetch.context_of(a, b)
    a, b = operand(a, ctx), operand(b, ctx)
    _at_least_2d("solve", a)
    _square(a)
    vec = b.ndim == 1
    m = a.shape[-1]
    kb = b.shape[-1] if vec else (b.shape[-2] if b.ndim >= 2 else None)
    if kb != m:
        raise ValueError(
            f"solve: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
            f"(m,m),(m{'' if vec else ',n'})->(m{'' if vec else ',n'}) (size {kb} is different from {m})"
        )
    if vec:
        return gufunc("solve", lambda x, y: np.linalg.solve(x, y[..., None])[..., 0], [a, b], [2, 1])
    return gufunc("solve", np.linalg.solve, [a, b], [2, 2])


@implements(np.linalg.lstsq)
def lstsq(a, b, rcond=None):
    """Distributed ``numpy.linalg.lstsq`` for tall systems.  Collective.

    With ``M >= N``: TSQR of ``a`` and an SVD of its ``N x N`` R factor (on
    rank 0), then ``x = V S^+ U_R^H (Q^H b)`` where ``Q^H b`` is a SUMMA
    product; residuals are the distributed column sums of ``|b - a x|^2``.
    Only ``N x N`` and ``N x K`` matrices are held whole.  Wide systems are
    gathered onto rank 0 and solved there (replicated, limited by
    ``config.linalg_max_elements``).  ``rank`` is a Python int; the arrays are
    distributed.
    """
    ctx = _fetch.context_of(a, b)
    a, b = operand(a, ctx), operand(b, ctx)
    if a.ndim != 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim not in (1, 2):
        raise LinAlgError(f"{b.ndim}-dimensional array given. Array must be one or two-dimensional")
    if a.shape[0] != b.shape[0]:
        raise LinAlgError("Incompatible dimensions")
    m, n = a.shape
    if m >= n > 0:
        check_size("lstsq", (n, n))
        return _lstsq_tall(a, b, rcond, ctx)
    return _lstsq_replicated(a, b, rcond, ctx)


def _lstsq_tall(a, b, rcond, ctx):
    m, n = a.shape
    vec = b.ndim == 1
    x0, _, _, s0 = np.linalg.lstsq(np.ones((1, 1), a.dtype), np.ones((1,), b.dtype))
    dt, rdt = x0.dtype, s0.dtype
    a = a.astype(dt, copy=False)
    bb = (b.reshape((m, 1)) if vec else b).astype(dt, copy=False)
    check_size("lstsq", (n, bb.shape[1]))
    q, r = _tsqr(a)
    u_r, s, vh = on_root(ctx, lambda: np.linalg.svd(r, full_matrices=False))
    rc = np.finfo(dt).eps * max(m, n) if rcond is None else rcond
    keep = s > (rc * s.max() if s.size else 0)
    rank = int(keep.sum())
    qtb = gather(matmul(q.conj().T, bb))  # N x K, small
    y = (u_r.conj().T @ qtb)[keep] / s[keep][:, None]
    x = (vh[keep].conj().T @ y).astype(dt, copy=False)
    X = _replicated_result(x, ctx)
    if rank == n and m > n:
        diff = _engine.elementwise(np.subtract, [bb, matmul(a, X)])
        res = _engine.elementwise(_abs2, [diff]).sum(axis=0).astype(rdt, copy=False)
    else:
        res = _replicated_result(np.empty((0,), rdt), ctx)
    S = _replicated_result(s.astype(rdt, copy=False), ctx)
    return (X.reshape((n,)) if vec else X), res, rank, S


def _lstsq_replicated(a, b, rcond, ctx):
    check_size("lstsq", a.shape)
    check_size("lstsq", b.shape)
    ga, gb = gather(a), gather(b)
    x, res, rank, s = on_root(ctx, lambda: np.linalg.lstsq(ga, gb, rcond=rcond))
    return _replicated_result(x, ctx), _replicated_result(res, ctx), rank, _replicated_result(s, ctx)


@implements(np.linalg.pinv)
def pinv(a, rcond=None, hermitian=False, *, rtol=np._NoValue):
    """Distributed ``numpy.linalg.pinv`` of one matrix (TSQR-based SVD).  Collective.

    ``pinv(a) = V S^+ U^H``: the distributed factor times a small ``N x N``
    matrix (SUMMA).  Stacks and ``hermitian=True`` are batch-parallel (one
    matrix per rank, limited by ``config.linalg_max_elements``).
    ``rcond``/``rtol`` must be scalars (array values raise NotImplementedError).
    """
    if np.ndim(rcond) or np.ndim(rtol if rtol is not np._NoValue else None):
        raise NotImplementedError("numpy.linalg.pinv with array-valued rcond/rtol on spmdarray arrays")
    ctx = _fetch.context_of(a)
    a = operand(a, ctx)
    _at_least_2d("pinv", a)
    if not _tsqr_svd_ok(a, hermitian):
        return gufunc("pinv", lambda x: np.linalg.pinv(x, rcond=rcond, hermitian=hermitian, rtol=rtol), [a], [2])

    if rcond is None:
        if rtol is np._NoValue:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(a.shape) * np.finfo(a.dtype).eps
        else:
            rcond = rtol
    elif rtol is not np._NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    big, s, vh, wide = _tsqr_svd(a)
    large = s > rcond * s.max()
    sp_ = np.where(large, 1 / np.where(large, s, 1), 0).astype(s.dtype)
    prod = matmul(big, _replicated_result(sp_[:, None] * vh, ctx))
    # tall: pinv = vh^H S+ big^H = prod^H;  wide (x = a^H): pinv = big S+ vh = prod
    res = prod if wide else prod.conj().T
    dt = np.linalg.pinv(np.ones((1, 1), a.dtype)).dtype
    return res.astype(dt, copy=False)


@implements(np.linalg.matrix_rank)
def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):  # noqa: N803
    """Distributed ``numpy.linalg.matrix_rank`` of one matrix (TSQR singular values).  Collective.

    Stacks and ``hermitian=True`` are batch-parallel.
    """
    if np.ndim(tol) or np.ndim(rtol):
        raise NotImplementedError("numpy.linalg.matrix_rank with array-valued tol/rtol on spmdarray arrays")
    A = operand(A, _fetch.context_of(A))  # noqa: N806
    if A.ndim < 2:
        return int(bool(_engine.elementwise(np.not_equal, [A, 0]).any()))
    if _tsqr_svd_ok(A, hermitian):
        s = _tsqr_svd(A, compute_uv=False)[1]
        if tol is None:
            rt = max(A.shape) * np.finfo(s.dtype).eps if rtol is None else rtol
            tol = s.max(initial=0) * rt
        return np.count_nonzero(s > tol, axis=-1)
    return gufunc(
        "matrix_rank",
        lambda x: np.asarray(np.linalg.matrix_rank(x, tol=tol, hermitian=hermitian, rtol=rtol)),
        [A],
        [2],
    )


@implements(np.linalg.cond, replicated=True)
def cond(x, p=None):
    """``numpy.linalg.cond``.  Collective.

    ``p`` in ``None, 2, -2`` of one matrix: TSQR singular values
    (distributed); other ``p`` and stacks: batch-parallel / replicated.
    """
    x = operand(x, _fetch.context_of(x))
    _at_least_2d("cond", x)
    if p not in (None, 2, -2):
        _square(x)
    elif _tsqr_svd_ok(x):
        s = _tsqr_svd(x, compute_uv=False)[1]
        with np.errstate(all="ignore"):
            r = s[-1] / s[0] if p == -2 else s[0] / s[-1]
        if np.isnan(r) and not bool(_engine.elementwise(np.isnan, [x]).any()):
            r = np.array(np.inf, r.dtype)[()]
        return r
    return gufunc("cond", lambda v: np.asarray(np.linalg.cond(v, p)), [x], [2])


@implements(np.linalg.matrix_power)
def matrix_power(a, n):
    """Distributed ``numpy.linalg.matrix_power``.  Collective.

    ``n >= 0``: binary powering with distributed ``matmul`` (SUMMA for one
    matrix, batch-parallel for stacks).  ``n < 0`` inverts first (``inv`` is
    replicated for one matrix).
    """

    try:
        n = operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e
    a = operand(a, _fetch.context_of(a))
    _at_least_2d("matrix_power", a)
    _square(a)
    if n == 0:
        out = empty_like(a)
        _engine.assign(out, eye(a.shape[-1], dtype=a.dtype, comm=a._st.ctx))
        return out
    if n < 0:
        a = inv(a)
        n = -n
    if n == 1:
        return a.copy()
    result, z = None, a
    while True:
        if n & 1:
            result = z if result is None else matmul_nd(result, z)
        n >>= 1
        if not n:
            return result
        z = matmul_nd(z, z)


@implements(np.linalg.tensorinv, replicated=True)
def tensorinv(a, ind=2):
    """``numpy.linalg.tensorinv``: reshape (distributed) and ``inv`` (replicated).  Collective."""
    a = operand(a, _fetch.context_of(a))
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    old = a.shape
    prod = 1
    for k in old[ind:]:
        prod *= k
    inv_shape = old[ind:] + old[:ind]
    r = inv(a.reshape(prod, -1))
    return r.reshape(inv_shape)


@implements(np.linalg.tensorsolve, replicated=True)
def tensorsolve(a, b, axes=None):
    """``numpy.linalg.tensorsolve``: reshape (distributed) and ``solve`` (replicated).  Collective."""
    ctx = _fetch.context_of(a, b)
    a, b = operand(a, ctx), operand(b, ctx)
    an = a.ndim
    if axes is not None:
        allaxes = list(range(an))
        for k in axes:
            allaxes.remove(k)
            allaxes.insert(an, k)
        a = a.transpose(allaxes)
    oldshape = a.shape[-(an - b.ndim) :]
    prod = 1
    for k in oldshape:
        prod *= k
    if a.size != prod**2:
        raise LinAlgError("Input arrays must satisfy the requirement prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    a2 = a.reshape(prod, prod)
    b1 = b.reshape(prod)
    return solve(a2, b1).reshape(oldshape)
