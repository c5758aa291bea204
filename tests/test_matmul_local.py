"""Products computed on each rank's own blocks (``spmdarray.linalg._local``), against NumPy.

Run serially and under ``mpiexec -n 2/3/4 python -m pytest tests/test_matmul_local.py``.
Operands are built with ``from_local`` from uneven splits (the last rank may hold
nothing), so every layout the paths accept is met with its corner cases.  Each path
is checked against NumPy and by its exact communication: the contraction split is
one collective (an ``Allgather`` of the partials, or a ``Reduce_scatter`` for a large
result) and no point-to-point message; a split of ``a``'s rows or ``b``'s columns
sends nothing when the result stays split.
"""

import numpy
import pytest
from helpers import assert_eq, block, host, ref, world
from spmdarray.comm import reduce_scatter_blocks
from spmdarray.decomposition import Layout

import spmdarray as sp
from spmdarray.core import rereads
from spmdarray.core.placement import is_whole
from spmdarray.settings import config


def _counts(n, size, kind):
    """Per-rank lengths of an axis of ``n``: ``even``, ``front`` (rank 0 holds more), ``empty`` (the last: none)."""
    if kind == "even" or size == 1:
        q, r = divmod(n, size)
        return [q + (i < r) for i in range(size)]
    if kind == "front":
        first = n - (size - 1) * (n // (2 * size))
        return [first] + [n // (2 * size)] * (size - 1)
    q, r = divmod(n, size - 1)
    return [q + (i < r) for i in range(size - 1)] + [0]


def _split(a, axis, counts):
    """``a`` (the same on every rank) split along ``axis`` into ``counts`` (rank order), via ``from_local``."""
    rank, size = world()
    lo = sum(counts[:rank])
    blk = numpy.ascontiguousarray(numpy.take(a, range(lo, lo + counts[rank]), axis=axis))
    grid = None if axis == 0 else tuple(size if d == axis else 1 for d in range(a.ndim))
    return sp.from_local(block(blk), grid=grid)


def _tol(dtype):
    return {"exact": True} if numpy.dtype(dtype).kind in "iub" else {"rtol": 1e-12, "atol": 1e-12}


def _same_everywhere(x):
    """Every rank holds the same bits of the replicated result ``x``."""
    from mpi4py import MPI

    mine = numpy.ascontiguousarray(numpy.asarray(x)).tobytes()
    assert len(set(MPI.COMM_WORLD.allgather(mine))) == 1


KINDS = ["even", "front", "empty"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", [float, numpy.int64, numpy.complex128, numpy.float32])
def test_contraction_split_small_result(kind, dtype):
    """``a[:, K_r] @ b[K_r, :]``: partials and one ``Allgather``; the small result is replicated."""
    _, size = world()
    n, k, m = 3, 23, 4
    a, b = ref((n, k), dtype), ref((k, m), dtype, seed=1)
    cnt = _counts(k, size, kind)
    x, y = _split(a, 1, cnt), _split(b, 0, cnt)
    with config.set(replicate_below=n * m + 1), sp.comm_stats() as s:  # the result is small, not the operands
        got = x @ y
    exp = a @ b
    assert_eq(got, exp, **(_tol(dtype) if numpy.dtype(dtype) != numpy.float32 else {"rtol": 1e-5, "atol": 1e-5}))
    if size > 1:
        assert is_whole(got._layout)
        assert (s.collectives, s.messages_sent, s.collective_bytes) == (1, 0, n * m * exp.dtype.itemsize)
        _same_everywhere(got)


@pytest.mark.parametrize("kind", KINDS)
def test_contraction_split_large_result_is_reduce_scattered(kind):
    """A result past ``replicate_below`` is reduce-scattered onto its balanced layout: one collective."""
    _, size = world()
    n, k, m = 9, 17, 7
    a, b = ref((n, k)), ref((k, m), seed=1)
    cnt = _counts(k, size, kind)
    x, y = _split(a, 1, cnt), _split(b, 0, cnt)
    with sp.comm_stats() as s:  # the suite's replicate_below is 0: every result is split
        got = x @ y
    assert_eq(got, a @ b, rtol=1e-12, atol=1e-12)
    if size > 1:
        assert got._layout == Layout.balanced((n, m), size)
        mine = got._layout.owned_size(world()[0])
        assert (s.collectives, s.messages_sent) == (1, 0)
        assert s.collective_bytes == (n * m - mine) * 8


@pytest.mark.parametrize("kind", KINDS)
def test_covariance_column_products(kind):
    """``data[:, i] @ data[:, i:M]`` on row-split data: one collective of ``M - i`` numbers, no message.

    (Past a few such products the data is gathered whole instead, when small enough:
    ``test_rereads.py``; here it is never.)"""
    rank, size = world()
    nrow, M = 31, 9
    data = ref((nrow, M))
    d = _split(data, 0, _counts(nrow, size, kind))
    for i in (0, 4, M - 1):
        with config.set(replicate_below=M + 1, gather_rereads_below=0), sp.comm_stats() as s:  # not small
            got = d[:, i] @ d[:, i:M]
        assert_eq(got, data[:, i] @ data[:, i:M])
        if size > 1:
            assert (s.collectives, s.messages_sent, s.collective_bytes) == (1, 0, (M - i) * 8)
            _same_everywhere(got)


def test_small_operands():
    """Small slices of a split array: two vectors give NumPy's bits (whole copies); a vector
    times a matrix is one collective of the partials, until the products have read the
    unwritten array a few times: then it is gathered whole once (``core.rereads``)."""
    _, size = world()
    data = ref((31, 9))
    d = _split(data, 0, _counts(31, size, "front"))
    with config.set(replicate_below=1 << 16):
        for n, i in enumerate((0, 4, 8, 3, 1)):
            with sp.comm_stats() as s:
                got = d[:, i] @ d[:, i:9]
            assert_eq(got, data[:, i] @ data[:, i:9])
            if size == 1 or n >= rereads.REREADS and not d._st.be.is_device:
                assert (s.collectives, s.messages_sent, s.collective_bytes) == (0, 0, 0)
            elif n < rereads.REREADS - 1 or d._st.be.is_device:  # (device arrays: the general path)
                assert (s.collectives, s.messages_sent, s.collective_bytes) == (1, 0, (9 - i) * 8)
            else:  # the whole array, once
                assert (s.collectives, s.messages_sent) == (1, 0)
                assert s.collective_bytes <= 31 * 9 * 8 * size
        assert_eq(d[:, 2] @ d[:, 5], data[:, 2] @ data[:, 5], exact=True)


def test_covariance_kernel():
    """npbench's covariance kernel, unmodified, on row-split data: NumPy's matrix."""
    _, size = world()
    M, N = 12, 29
    data = ref((N, M))

    def kernel(np, M, float_n, data):
        mean = np.mean(data, axis=0)
        data -= mean
        cov = np.zeros((M, M), dtype=data.dtype)
        for i in range(M):
            cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)
        return cov

    exp = kernel(numpy, M, float(N), data.copy())
    with config.set(replicate_below=M + 1):
        got = kernel(sp, M, float(N), _split(data, 0, _counts(N, size, "empty")))
    assert_eq(got, exp, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kind", KINDS)
def test_whole_vector_times_row_split_matrix(kind):
    """``y @ A`` with ``y`` replicated: ``y`` is sliced locally, the partials are combined once."""
    _, size = world()
    n, m = 26, 5
    A, y = ref((n, m)), ref((n,), seed=2)
    a = _split(A, 0, _counts(n, size, kind))
    with config.set(replicate_below=n + 1):  # y is replicated, A is not
        yy = sp.array(y)
        with sp.comm_stats() as s:
            got = yy @ a
    assert_eq(got, y @ A)
    if size > 1:
        assert (s.collectives, s.messages_sent, s.collective_bytes) == (1, 0, m * 8)


@pytest.mark.parametrize("kind", KINDS)
def test_mismatched_contraction_splits_move_the_smaller(kind):
    """``a`` and ``b`` split along ``k`` differently: only the smaller operand moves."""
    _, size = world()
    n, k, m = 2, 20, 11
    a, b = ref((n, k)), ref((k, m), seed=1)
    x = _split(a, 1, _counts(k, size, "even"))
    y = _split(b, 0, _counts(k, size, kind))
    with sp.comm_stats() as s:
        got = x @ y
    assert_eq(got, a @ b, rtol=1e-12, atol=1e-12)
    if size > 1:
        assert s.bytes_sent <= a.nbytes  # a (2 x 20) moves; b (20 x 11) stays
        assert s.collectives == 1


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("small", [False, True])
def test_row_split_matrix_times_vector(kind, small):
    """``A @ x`` on row-split ``A``: the result keeps ``A``'s rows; a small one is all-gathered once."""
    rank, size = world()
    n, k = 27, 6
    A, x = ref((n, k)), ref((k,), seed=3)
    cnt = _counts(n, size, kind)
    a = _split(A, 0, cnt)
    with config.set(replicate_below=(n + 1) if small else 0):
        xx = sp.array(x)  # replicated when small, else split (fetched whole once, A never moves)
        with sp.comm_stats() as s:
            got = a @ xx
    assert_eq(got, A @ x)
    if size > 1 and small:
        assert is_whole(got._layout)
        assert (s.collectives, s.messages_sent, s.collective_bytes) == (1, 0, cnt[rank] * 8)
    elif size > 1:
        assert s.collectives == 1 and s.messages_sent == 0 and s.collective_bytes <= x.nbytes
        lo = sum(cnt[:rank])  # this rank's rows of the result, computed from its rows of A
        numpy.testing.assert_allclose(host(got._block), (A @ x)[lo : lo + cnt[rank]], rtol=1e-12)


FREE = {
    # shapes of a and b, the split operand, its split axis
    "columns": ((4, 5), (5, 19), 1, 1),  # W @ B, B's columns split
    "stack": ((7, 3, 1, 6), (6, 5), 0, 0),  # (s, q, 1, k) @ (k, m) (npbench doitgen), batch axis split
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", list(FREE))
def test_free_axis_split_sends_nothing(case, kind):
    """The other operand is replicated: no message, and the result keeps the split."""
    rank, size = world()
    sa, sb, which, axis = FREE[case]
    A, B = ref(sa), ref(sb, seed=4)
    cnt = _counts((A, B)[which].shape[axis], size, kind)
    with config.set(replicate_below=64):
        ops = [sp.array(x) if i != which else _split(x, axis, cnt) for i, x in enumerate((A, B))]
        with sp.comm_stats() as s:
            got = ops[0] @ ops[1]
    exp = A @ B
    assert_eq(got, exp)
    if size > 1:
        assert (s.collectives, s.messages_sent) == (0, 0)
        lo = sum(cnt[:rank])
        sel = [slice(None)] * exp.ndim
        sel[axis if which == 0 else exp.ndim - 1] = slice(lo, lo + cnt[rank])
        numpy.testing.assert_allclose(host(got._block), exp[tuple(sel)], rtol=1e-12)


def test_doitgen_kernel_last_axis_split():
    """npbench's doitgen, its array split along the contraction axis: the product is one reduce-scatter."""
    _, size = world()
    NR, NQ, NP = 5, 4, 8
    A, C4 = ref((NR, NQ, NP)), ref((NP, NP), seed=6)
    exp = numpy.reshape(numpy.reshape(A, (NR, NQ, 1, NP)) @ C4, (NR, NQ, NP))
    a = _split(A, 2, _counts(NP, size, "even"))
    with config.set(replicate_below=NP * NP + 1):
        c4 = sp.array(C4)
        with sp.comm_stats() as s:
            prod = sp.reshape(a, (NR, NQ, 1, NP)) @ c4
        a[:] = sp.reshape(prod, (NR, NQ, NP))
    assert_eq(a, exp)
    if size > 1:
        assert (s.collectives, s.messages_sent) == (1, 0)
        assert prod._layout == Layout.balanced((NR, NQ, 1, NP), size)


@pytest.mark.parametrize("dtype", [numpy.int32, numpy.bool_, numpy.complex64])
def test_dtypes_exact_or_close(dtype):
    _, size = world()
    a, b = ref((3, 14), dtype), ref((14, 2), dtype, seed=1)
    cnt = _counts(14, size, "empty")
    got = _split(a, 1, cnt) @ _split(b, 0, cnt)
    exp = a @ b
    assert got.dtype == exp.dtype
    assert_eq(got, exp, **({"rtol": 1e-5, "atol": 1e-5} if dtype == numpy.complex64 else {"exact": True}))


def test_empty_contraction_and_empty_rows():
    _, size = world()
    a, b = numpy.zeros((3, 0)), numpy.zeros((0, 4))
    assert_eq(sp.array(a) @ sp.array(b), a @ b)
    A, x = ref((size - 1, 5)), ref((5,), seed=1)  # fewer rows than ranks
    assert_eq(_split(A, 0, _counts(size - 1, size, "empty") if size > 1 else [0]) @ sp.array(x), A @ x)


def test_out_argument():
    _, size = world()
    a, b = ref((4, 10)), ref((10, 3), seed=1)
    cnt = _counts(10, size, "front")
    out = sp.zeros((4, 3))
    res = sp.matmul(_split(a, 1, cnt), _split(b, 0, cnt), out=out)
    assert res is out
    assert_eq(out, a @ b)


FORMS = {
    "dot": lambda p, q: numpy.dot(p, q),
    "inner": lambda p, q: numpy.inner(p, q.T),
    "tensordot": lambda p, q: numpy.tensordot(p, q, axes=1),
    "einsum": lambda p, q: numpy.einsum("ij,jk->ik", p, q),
}


@pytest.mark.parametrize("form", list(FORMS))
def test_other_products_reach_the_local_paths(form):
    """``dot``, ``inner``, ``tensordot`` and ``einsum`` with the contraction axis split: NumPy's values."""
    _, size = world()
    a, b = ref((3, 21)), ref((21, 4), seed=1)
    cnt = _counts(21, size, "empty")
    got = FORMS[form](_split(a, 1, cnt), _split(b, 0, cnt))
    assert_eq(got, FORMS[form](a, b), rtol=1e-12, atol=1e-12)


def test_vdot_of_split_matrices():
    _, size = world()
    a, b = ref((6, 5), numpy.complex128), ref((6, 5), numpy.complex128, seed=1)
    cnt = _counts(6, size, "front")
    assert numpy.allclose(numpy.vdot(_split(a, 0, cnt), _split(b, 0, cnt)), numpy.vdot(a, b), rtol=1e-12)


def test_repeated_products_are_bitwise_reproducible():
    """The same product twice gives the same bits (partials combined in rank order)."""
    _, size = world()
    a, b = ref((5, 40)), ref((40, 3), seed=1)
    cnt = _counts(40, size, "front")
    x, y = _split(a, 1, cnt), _split(b, 0, cnt)
    with config.set(replicate_below=16):
        r1, r2 = numpy.asarray(x @ y), numpy.asarray(x @ y)
    assert r1.tobytes() == r2.tobytes()


def test_reduce_scatter_blocks():
    """``comm.reduce_scatter_blocks``: rank ``r`` gets the sum of every rank's block ``r`` (empty blocks too)."""
    from mpi4py import MPI

    rank, size = world()
    shapes = [(r % 3, 2) for r in range(size)]  # rank 0's block is empty
    blocks = [numpy.full(sh, 10.0 * rank + r) for r, sh in enumerate(shapes)]
    with sp.comm_stats() as s:
        got = reduce_scatter_blocks(MPI.COMM_WORLD, blocks, "sum")
    expected = numpy.full(shapes[rank], sum(10.0 * q + rank for q in range(size)))
    numpy.testing.assert_array_equal(got, expected)
    assert s.collectives == 1
    assert s.collective_bytes == sum(b.nbytes for b in blocks) - blocks[rank].nbytes
