"""Loops over rows of small matrices (npbench's linear-algebra kernels) against NumPy.

Basic indexing goes through a cache of view maps per key
(``spmdarray.core.viewcache``), and ``x[key] op= y`` stores nothing back
when the value is the view it updated.  Every loop runs with the default
``replicate_below`` (replicated arrays, NumPy on every rank) and with 0
(every array split), and must equal NumPy bit for bit where the
computation is exact.

Run at 1, 2, 3 and 4 ranks::

    mpiexec -n 3 python -m pytest -q tests/test_row_loops.py
"""

from __future__ import annotations

import numpy
import pytest
from helpers import assert_eq, ref, world

import spmdarray as sp
from spmdarray.core.placement import is_whole
from spmdarray.settings import FIELDS, config

DEFAULT = FIELDS["replicate_below"].default
BELOW = [DEFAULT, 0]


def _syrk(xp, C, A):
    for i in range(A.shape[0]):
        C[i, : i + 1] *= 1.2
        for k in range(A.shape[1]):
            C[i, : i + 1] += 1.5 * A[i, k] * A[: i + 1, k]
    return C


def _trmm(xp, A, B):
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += A[i + 1 :, i] @ B[i + 1 :, j]
    return B


def _lu(xp, A):
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, A.shape[0]):
            A[i, j] -= A[i, :i] @ A[:i, j]
    return A


def _views(xp, A):
    # Views alias: writes through one are seen by another, negative steps and newaxis.
    v = A[1:-1, ::-2]
    v += 1
    w = A[..., None][2:, 1:3, 0]
    w[...] = w * 2
    A[0] = A[-1, ::-1]
    A[:, 0] -= A[:, -1]
    return A


@pytest.mark.parametrize("below", BELOW)
@pytest.mark.parametrize("shape", [(7, 5), (1, 4), (9, 9)])
def test_syrk_rows(below, shape):
    c, a = ref((shape[0], shape[0]), float, 1), ref(shape, float, 2)
    expected = _syrk(numpy, c.copy(), a)
    with config.set(replicate_below=below):
        got = _syrk(sp, sp.array(c), sp.array(a))
    assert_eq(got, expected, exact=below > 0)


@pytest.mark.parametrize("below", BELOW)
def test_trmm_and_lu(below):
    a, b = ref((6, 6), float, 3) + 6 * numpy.eye(6), ref((6, 4), float, 4)
    with config.set(replicate_below=below):
        got_t = _trmm(sp, sp.array(a), sp.array(b))
        got_l = _lu(sp, sp.array(a))
    assert_eq(got_t, _trmm(numpy, a, b.copy()), rtol=1e-12)
    assert_eq(got_l, _lu(numpy, a.copy()), rtol=1e-12)


@pytest.mark.parametrize("below", BELOW)
@pytest.mark.parametrize("dtype", [float, numpy.int64])
def test_views_alias(below, dtype):
    a = ref((6, 7), dtype, 5)
    expected = _views(numpy, a.copy())
    with config.set(replicate_below=below):
        x = sp.array(a)
        got = _views(sp, x)
        for _ in range(2):  # the second time from the cache
            assert_eq(x[2:5, ::3], expected[2:5, ::3], exact=True)
            assert x[1, 2:2].shape == (0,)
            assert float(x[3, 4]) == float(expected[3, 4])
    assert_eq(got, expected, exact=True)


@pytest.mark.parametrize("below", BELOW)
def test_self_store_of_a_view(below):
    # x[k] = x[k] (and x[k] op= y) changes nothing; a different view of the same storage copies.
    a = ref((5, 6), float, 6)
    expected = a.copy()
    expected[1:4] = expected[1:4]
    expected[1:4] += 1.0
    expected[0, :] = expected[0, ::-1]
    expected[2:, 1] = expected[:3, 1].copy()
    with config.set(replicate_below=below):
        x = sp.array(a)
        x[1:4] = x[1:4]
        x[1:4] += 1.0
        x[0, :] = x[0, ::-1]
        x[2:, 1] = x[:3, 1]
    assert_eq(x, expected, exact=True)


@pytest.mark.parametrize("below", BELOW)
def test_index_errors_every_time(below):
    with config.set(replicate_below=below):
        x = sp.zeros((4, 3))
        for _ in range(2):
            with pytest.raises(IndexError, match="out of bounds"):
                x[4, :]
            with pytest.raises(IndexError, match="too many indices"):
                x[1, :, 2]
            with pytest.raises(IndexError, match="out of bounds"):
                x[:, 3] = 1.0
        assert x[numpy.int64(1), 1:].shape == (2,)
        assert_eq(x[[0, 2], :2], numpy.zeros((2, 2)), exact=True)


def test_halo_stale_after_row_update():
    # A split array read through a shifted view after a row update sees the new values.
    with config.set(replicate_below=0):
        a = ref((8, 8), float, 7)
        x = sp.array(a)
        s1 = x[1:-1, 1:-1] + x[2:, 1:-1]
        for i in range(8):
            x[i, : i + 1] += 1.0
            a[i, : i + 1] += 1.0
        s2 = x[1:-1, 1:-1] + x[2:, 1:-1]
    assert_eq(s1, ref((8, 8), float, 7)[1:-1, 1:-1] + ref((8, 8), float, 7)[2:, 1:-1], exact=True)
    assert_eq(s2, a[1:-1, 1:-1] + a[2:, 1:-1], exact=True)


def _trisolv(xp, L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


@pytest.mark.parametrize("below", [DEFAULT, 30, 0])
def test_trisolv_split_rows_times_replicated_vector(below):
    # At 30 the matrix is split and the vectors replicated: a row of L is fetched whole.
    n = 8
    L, b = numpy.tril(ref((n, n), float, 8)) + n * numpy.eye(n), ref((n,), float, 9)
    expected = _trisolv(numpy, L, numpy.zeros(n), b)
    with config.set(replicate_below=below):
        got = _trisolv(sp, sp.array(L), sp.zeros(n), sp.array(b))
        row = sp.array(L)[5, 1:6] @ sp.array(L)[1:6, 2]
    assert_eq(got, expected, exact=below == DEFAULT)
    assert float(row) == pytest.approx(float(L[5, 1:6] @ L[1:6, 2]), rel=1e-12)


def _cholesky(xp, A):
    A[0, 0] = xp.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= xp.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= xp.dot(A[i, :i], A[i, :i])
        A[i, i] = xp.sqrt(A[i, i])
    return A


@pytest.mark.parametrize("below", BELOW)
def test_cholesky_and_owned_results(below):
    n = 7
    m = ref((n, n), float, 10)
    a = m @ m.T + n * numpy.eye(n)
    u = ref((n,), float, 11)
    with config.set(replicate_below=below):
        got = _cholesky(sp, sp.array(a))
        x = sp.array(a)
        # NumPy's new results become the replicated arrays themselves: they own their memory.
        o = sp.outer(x[0], x[1])
        d = sp.dot(x, x)
        w = sp.where(x > 0, u, 0.0)
        o[0, 0] = d[0, 0] = w[0, 0] = -1.0
        assert_eq(x, a, exact=True)
    assert numpy.array_equal(u, ref((n,), float, 11))
    assert_eq(got, _cholesky(numpy, a.copy()), exact=below > 0)
    expected_o = numpy.outer(a[0], a[1])
    expected_o[0, 0] = -1.0
    assert_eq(o, expected_o, exact=True)


@pytest.mark.parametrize("below", [DEFAULT, 100, 0])
def test_covariance_vector_times_split_matrix(below):
    # Row vectors times column ranges of a (split at 0 and 100) matrix; on one rank NumPy's product itself.
    m, n = 9, 13
    data = ref((n, m), float, 12)
    expected = numpy.zeros((m, m))
    for i in range(m):
        expected[i:m, i] = expected[i, i:m] = data[:, i] @ data[:, i:m] / (n - 1.0)
    with config.set(replicate_below=below):
        d = sp.array(data)
        cov = sp.zeros((m, m))
        for i in range(m):
            cov[i:m, i] = cov[i, i:m] = d[:, i] @ d[:, i:m] / (n - 1.0)
        mm = d.T @ d
    exact = below == DEFAULT or sp.array(data).comm.Get_size() == 1
    assert_eq(cov, expected, exact=exact)
    assert_eq(mm, data.T @ data, exact=exact)


def _gramschmidt(xp, A):
    Q = xp.zeros_like(A)
    R = xp.zeros((A.shape[1], A.shape[1]), dtype=A.dtype)
    for k in range(A.shape[1]):
        nrm = xp.dot(A[:, k], A[:, k])
        R[k, k] = xp.sqrt(nrm)
        Q[:, k] = A[:, k] / R[k, k]
        for j in range(k + 1, A.shape[1]):
            R[k, j] = xp.dot(Q[:, k], A[:, j])
            A[:, j] -= Q[:, k] * R[k, j]
    return Q, R


@pytest.mark.parametrize("below", BELOW)
def test_gramschmidt_slice_assignments(below):
    a = ref((8, 5), float, 13)
    eq, er = _gramschmidt(numpy, a.copy())
    with config.set(replicate_below=below):
        q, r = _gramschmidt(sp, sp.array(a))
    assert_eq(q, eq, exact=below > 0)
    assert_eq(r, er, exact=below > 0)


@pytest.mark.parametrize("below", BELOW)
def test_slice_assignment_casts_broadcasts_and_raises_alike(below):
    a = ref((4, 6), numpy.int8, 14)
    e = a.copy()
    e[1:3] = e[0]
    e[0, ::2] = 7
    e[3, 1:4] = numpy.float64(2.75)
    e[2:, :3] = e[:2, 3:]
    e[1:, 1:] = e[:-1, :-1]  # overlapping source and destination
    with config.set(replicate_below=below):
        x = sp.array(a)
        x[1:3] = x[0]
        x[0, ::2] = 7
        x[3, 1:4] = numpy.float64(2.75)
        x[2:, :3] = x[:2, 3:]
        x[1:, 1:] = x[:-1, :-1]
        assert_eq(x, e, exact=True)
        with pytest.raises(OverflowError):
            x[0, :2] = 300
        with pytest.raises(ValueError, match="could not broadcast"):
            x[0, :2] = x[1, :3]
        with pytest.raises(ValueError, match="read-only"):
            sp.broadcast_to(x[0], (3, 6))[1:, :] = 1
    assert_eq(x, e, exact=True)


def test_split_row_product_shares_the_row_copy():
    # L[i, i] gathers row i once; L[i, :i] @ x[:i] reads it from that copy: one collective per row.
    n = 8
    L = numpy.tril(ref((n, n), float, 15)) + n * numpy.eye(n)
    with config.set(replicate_below=30):
        lm, x = sp.array(L), sp.array(ref((n,), float, 16))
        size = lm.comm.Get_size()
        for i in (3, 6):
            with sp.comm_stats() as st:
                v = lm[i, i] + lm[i, :i] @ x[:i]
            assert st.collectives == (1 if size > 1 else 0), st
            assert v == L[i, i] + L[i, :i] @ ref((n,), float, 16)[:i]


def _durbin(xp, r):
    y = xp.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + xp.dot(xp.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * xp.flip(y[:k])
        y[k] = alpha
    return y


@pytest.mark.parametrize("below", BELOW)
def test_durbin_flipped_views(below):
    r = ref((9,), float, 17) / 10
    with config.set(replicate_below=below):
        got = _durbin(sp, sp.array(r))
        x = sp.array(r)
        f = sp.flip(x[2:7])
        f[0] = 5.0  # a view, as NumPy's: the write reaches x[6]
        assert float(x[6]) == 5.0
    assert_eq(got, _durbin(numpy, r), exact=below > 0)


@pytest.mark.parametrize("n", [5, 64])
def test_split_row_times_vector_gives_numpys_bits_and_gathers_by_doubling_blocks(n):
    # L is split, x replicated: each ``L[i, :i] @ x[:i]`` is NumPy's dot of the row's copy (the
    # same bits as NumPy), and the read-only sweep gathers blocks of rows that double in height
    # within each owner's rows: at most log2(rows) + 1 collectives per owner.
    L, b = numpy.tril(ref((n, n), float, 8)) + n * numpy.eye(n), ref((n,), float, 9)
    expected = _trisolv(numpy, L, numpy.zeros(n), b)
    with config.set(replicate_below=n + 1):
        Ls = sp.array(L)
        assert not is_whole(Ls.layout) or world()[1] == 1
        sp.sync()
        with sp.comm_stats() as s:
            got = _trisolv(sp, Ls, sp.zeros(n), sp.array(b))
    assert_eq(got, expected, exact=True)
    owners = min(world()[1], n)
    rows = -(-n // owners)
    assert s.messages_sent == 0
    assert s.collectives <= owners * (rows.bit_length() + 1)


def _spmv(xp, row, col, val, x):
    y = xp.empty(row.size - 1, val.dtype)
    for i in range(row.size - 1):
        cols = col[row[i] : row[i + 1]]
        vals = val[row[i] : row[i + 1]]
        y[i] = vals @ x[cols]
    return y


@pytest.mark.parametrize("nnz", [40, 9001])
def test_csr_row_loop_reads_stretches_by_doubling_blocks(nnz):
    # The index and value arrays are split, the rows and x replicated: each row's stretch of
    # col and val comes from a copy gathered by doubling read-ahead within each holder's
    # stretch (about log2(stretch) collectives per holder and array), never a message.
    m = nnz // 3  # (past 4096 elements a stretch is not widened to the whole array)
    rng = numpy.random.default_rng(6)
    row = numpy.sort(rng.integers(0, nnz + 1, m + 1))
    row[0], row[-1] = 0, nnz
    col = rng.integers(0, m, nnz)
    val = rng.random(nnz)
    x = rng.random(m)
    expected = _spmv(numpy, row, col, val, x)
    with config.set(replicate_below=nnz):
        r, c, v, xs = sp.array(row), sp.array(col), sp.array(val), sp.array(x)
        assert is_whole(r.layout) and (world()[1] == 1 or not is_whole(c.layout))
        sp.sync()
        with sp.comm_stats() as s:
            got = _spmv(sp, r, c, v, xs)
    assert_eq(got, expected, exact=True)
    holders = min(world()[1], nnz)
    stretch = -(-nnz // holders)
    assert s.messages_sent == 0
    if not xs._st.be.is_device:  # (device blocks are not read through host copies)
        assert s.collectives <= 2 * holders * (stretch.bit_length() + 3)  # against m = nnz / 3 rows
