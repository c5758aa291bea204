"""Small arrays replicated on every rank (``config.replicate_below``), and element access.

Every operation runs twice: with the library's default threshold (small
arrays whole on every rank, computed redundantly with NumPy) and with 0
(every array split, as in the rest of the suite).  Both are compared with
NumPy, and with each other bit for bit where the split computation is exact
(everything but floating-point reductions and products, whose split partial
sums round differently).  Replicated operations must send nothing.

Run at 1, 2, 3 and 4 ranks::

    mpiexec -n 3 python -m pytest -q tests/test_replicated.py
"""

from __future__ import annotations

import numpy
import pytest
from helpers import assert_eq, host, ref

import spmdarray as sp
from spmdarray.core.placement import is_whole
from spmdarray.settings import FIELDS, config

DEFAULT = FIELDS["replicate_below"].default


def _whole(x) -> bool:
    return isinstance(x, sp.ndarray) and is_whole(x.layout)


def _a(shape, seed=0, dtype=float):
    return ref(shape, dtype, seed)


# name -> (function of (xp, a, b, v, i) returning a result, exact when split)
_A, _B, _V, _I = (7, 5), (7, 5), (5,), (3, 11)


def _ops():
    return {
        "add_scalar": (lambda xp, a, b, v, i: a * 2.5 + b, True),
        "broadcast": (lambda xp, a, b, v, i: a - v, True),
        "ufunc": (lambda xp, a, b, v, i: xp.sin(a) + xp.hypot(a, b), True),
        "where": (lambda xp, a, b, v, i: xp.where(a > 0, a, b), True),
        "slice": (lambda xp, a, b, v, i: a[1:-1, ::2] * b[2:, ::-2], True),
        "transpose": (lambda xp, a, b, v, i: (a.T + 1).copy(), True),
        "take": (lambda xp, a, b, v, i: a[[0, 3, 3, 6]], True),
        "mask": (lambda xp, a, b, v, i: a[a > 0.1], True),
        "reshape": (lambda xp, a, b, v, i: a.reshape(5, 7), True),
        "ravel": (lambda xp, a, b, v, i: a.T.ravel(), True),
        "concat": (lambda xp, a, b, v, i: xp.concatenate([a, b], axis=1), True),
        "stack": (lambda xp, a, b, v, i: xp.stack([a, b]), True),
        "sort": (lambda xp, a, b, v, i: xp.sort(a, axis=0), True),
        "argsort": (lambda xp, a, b, v, i: xp.argsort(a, axis=1), True),
        "roll": (lambda xp, a, b, v, i: xp.roll(a, 3), True),
        "cumsum_int": (lambda xp, a, b, v, i: i.cumsum(axis=1), True),
        "sum_int": (lambda xp, a, b, v, i: i.sum(axis=0), True),
        "max": (lambda xp, a, b, v, i: a.max(axis=1), True),
        "argmax": (lambda xp, a, b, v, i: a.argmax(), True),
        "sum": (lambda xp, a, b, v, i: a.sum(axis=0), False),
        "mean": (lambda xp, a, b, v, i: a.mean(), False),
        "std": (lambda xp, a, b, v, i: b.std(axis=1), False),
        "matmul": (lambda xp, a, b, v, i: a @ b.T, False),
        "matvec": (lambda xp, a, b, v, i: a @ v, False),
        "dot": (lambda xp, a, b, v, i: a[2] @ b[4], False),
        "norm": (lambda xp, a, b, v, i: xp.linalg.norm(a), False),
    }


OPS = _ops()


def _operands():
    return _a(_A, 1), _a(_B, 2), _a(_V, 3), _a(_I, 4, numpy.int64)


@pytest.mark.parametrize("name", list(OPS))
def test_replicated_matches_numpy_and_split(name):
    f, exact = OPS[name]
    arrs = _operands()
    expected = f(numpy, *arrs)
    results = {}
    for below in (DEFAULT, 0):
        with config.set(replicate_below=below):
            xs = [sp.array(x) for x in arrs]
            assert all(_whole(x) for x in xs) == (below > 0)
            with sp.comm_stats() as st:
                got = f(sp, *xs)
            if below:
                # Replicated: NumPy's own computation on every rank, with no message.
                assert (st.messages_sent, st.messages_received, st.collectives) == (0, 0, 0), st
                assert not isinstance(got, sp.ndarray) or _whole(got)
                assert_eq(got, expected, exact=True)
            else:
                assert_eq(got, expected, exact=exact)
            results[below] = numpy.asarray(got)
    if exact:
        numpy.testing.assert_array_equal(results[DEFAULT], results[0])


@pytest.mark.parametrize("below", [DEFAULT, 0])
def test_creation_and_random_identical(below):
    with config.set(replicate_below=below):
        made = {
            "zeros": sp.zeros((4, 9)),
            "arange": sp.arange(3.0, 40.0, 0.7),
            "linspace": sp.linspace(-1, 1, 33),
            "eye": sp.eye(6, 8, k=1),
            "full_like": sp.full_like(sp.ones((3, 5)), 2.5),
            "random": sp.random.default_rng(7).random((60, 700)),  # 42,000: fused draws
            "normal": sp.random.default_rng(7).normal(size=(9, 11)),
            "integers": sp.random.default_rng(7).integers(0, 100, size=(25,)),
        }
        for x in made.values():
            assert _whole(x) == (below > 0)
    expected = {
        "zeros": numpy.zeros((4, 9)),
        "arange": numpy.arange(3.0, 40.0, 0.7),
        "linspace": numpy.linspace(-1, 1, 33),
        "eye": numpy.eye(6, 8, k=1),
        "full_like": numpy.full((3, 5), 2.5),
    }
    for k, e in expected.items():
        assert_eq(made[k], e, exact=True)
    # Counter-based draws do not depend on the layout: the replicated and split draws agree.
    with config.set(replicate_below=0):
        split = numpy.asarray(sp.random.default_rng(7).random((60, 700)))
        normal = numpy.asarray(sp.random.default_rng(7).normal(size=(9, 11)))
    numpy.testing.assert_array_equal(numpy.asarray(made["random"]), split)
    numpy.testing.assert_array_equal(numpy.asarray(made["normal"]), normal)


def test_threshold_and_growth():
    with config.set(replicate_below=100):
        small = sp.array(_a((9,), 5))
        assert _whole(small)
        assert not _whole(sp.zeros(100))  # at the threshold: split
        with sp.comm_stats() as st:
            outer = small[:, None] * small[None, :] + 0.0  # 81 elements: still replicated
            big = small[:, None] * sp.arange(12.0)  # 108 elements: split
        assert _whole(outer)
        assert not _whole(big)
        assert (st.messages_sent, st.messages_received, st.collectives) == (0, 0, 0)
        assert_eq(big, _a((9,), 5)[:, None] * numpy.arange(12.0), exact=True)


def test_default_threshold_keeps_loop_sized_matrices_whole():
    # 2 MiB of float64: a 300 x 300 matrix (npbench's cholesky at preset M) is replicated, and
    # an element loop over it sends nothing at any rank count.
    assert DEFAULT == 1 << 18
    with config.set(replicate_below=DEFAULT):
        assert _whole(sp.zeros((512, 511)))
        assert not _whole(sp.zeros((512, 512))) or sp.zeros(1).comm.Get_size() == 1
        m = _a((300, 300), 9)
        a = m @ m.T + 300 * numpy.eye(300)
        x = sp.array(a)
        assert _whole(x)
        with sp.comm_stats() as st:
            for i in range(1, 6):
                for j in range(i):
                    x[i, j] -= sp.dot(x[i, :j], x[j, :j])
                    x[i, j] /= x[j, j]
        assert (st.messages_sent, st.collectives) == (0, 0)
    for i in range(1, 6):
        for j in range(i):
            a[i, j] -= numpy.dot(a[i, :j], a[j, :j])
            a[i, j] /= a[j, j]
    assert_eq(x, a, exact=True)


def test_replica_meets_split_array():
    with config.set(replicate_below=50):
        a = _a((10, 8), 6)
        big = sp.array(a)  # 80 elements: split
        small = sp.array(a[2])  # 8: replicated
        assert _whole(small) and not _whole(big)
        with sp.comm_stats() as st:
            r1 = big + small  # the replica broadcasts against the split array
            r2 = small + big
        assert r1.layout == big.layout and r2.layout == big.layout
        assert (st.messages_sent, st.messages_received, st.collectives) == (0, 0, 0)
        assert_eq(r1, a + a[2], exact=True)
        assert_eq(r2, a[2] + a, exact=True)
        # Same shape: the split operand decides, wherever it is.
        s2 = sp.array(a[:5, :5].copy())  # 25: replicated
        r3 = s2 * big[:5, :5]
        assert_eq(r3, a[:5, :5] * a[:5, :5], exact=True)


def test_write_split_value_into_replica():
    with config.set(replicate_below=50):
        a = _a((12, 9), 7)
        big = sp.array(a)
        small = sp.zeros((9,))
        small[:] = big[5]
        small[2:4] = big[7, 3:5] * 2
        small[[0, 8]] = big[1, [4, 6]]
        exp = a[5].copy()
        exp[2:4] = a[7, 3:5] * 2
        exp[[0, 8]] = a[1, [4, 6]]
        assert _whole(small)
        # Every rank holds the same data (not only rank 0's block).
        local = host(small.local)
        every = small.comm.allgather(local)
        for r in every:
            numpy.testing.assert_array_equal(r, exp)


def test_from_local_never_replicated(comm):
    with config.set(replicate_below=DEFAULT):
        blk = numpy.arange(3.0) + 10 * comm.rank
        x = sp.from_local(blk)
        assert x.shape == (3 * comm.size,)
        assert not _whole(x)
        y = x * 2
        assert y.layout == x.layout
        numpy.testing.assert_array_equal(host(y.local), blk * 2)


def test_small_slice_of_split_array_is_computed_where_it_lives(comm):
    with config.set(replicate_below=50):
        a = _a((20, 20), 8)
        big = sp.array(a)
        with sp.comm_stats() as st:
            got = big[3, :7] + big[:7, 11]
        # Computed by the holder of the row, not spread over every rank: no
        # collective; the column moves only where another rank holds it (at 4
        # ranks the grid is 2 x 2: one message of its 7 elements).
        assert not _whole(got) or comm.size == 1  # (one rank: the whole lane lays it out as a new array)
        assert st.collectives == 0
        sent = comm.allreduce(st.bytes_sent)
        assert (comm.allreduce(st.messages_sent), sent) == ((1, 56) if comm.size == 4 else (0, 0))
        assert_eq(got, a[3, :7] + a[:7, 11], exact=True)
        assert_eq(big[3, :] @ big[:, 3], a[3, :] @ a[:, 3], exact=True)
        assert_eq(big[:4, :6] @ big[6:12, 2:5], a[:4, :6] @ a[6:12, 2:5], exact=True)


@pytest.mark.parametrize("below", [DEFAULT, 0])
def test_element_access(below, comm):
    a = _a((13, 6), 9)
    with config.set(replicate_below=below):
        x = sp.array(a)
        v = x[:, ::-2].T  # a strided, reversed, transposed view
        e = a[:, ::-2].T
        split = not _whole(x) and comm.size > 1
        for k, idx in enumerate([(0, 0), (2, 12), (-1, -3), (1, 7)]):
            with sp.comm_stats() as st:
                got = v[idx]
            assert type(got) is type(e[idx]) and got == e[idx]
            # Split: one collective, of the element's row; once the array has been only
            # read since a gather, of the owner's block of rows around it, where the
            # next reads may find their rows (none then).
            assert st.collectives <= (1 if split else 0) and st.messages_sent == 0
            assert st.collectives == (1 if split else 0) or k > 0
            assert st.collective_bytes <= ((8 * 6 if k == 0 else 8 * 6 * 13) if split else 0)
            with sp.comm_stats() as st:
                again = v[idx]
            assert again == got and st.collectives == 0  # the row's copy is current
        for idx, val in [((4, 2), 1.5), ((-2, -1), numpy.float32(-3.25)), ((0, 5), 7)]:
            with sp.comm_stats() as st:
                x[idx] = val
            a[idx] = val
            assert (st.messages_sent, st.collectives) == (0, 0)
        assert_eq(x, a, exact=True)
        with pytest.raises(IndexError):
            x[13, 0]
        with pytest.raises(TypeError):
            x[1, 1] = 1j
        y = sp.arange(10)
        y[3] = 2.9  # NumPy's cast: truncated
        assert int(y[3]) == 2 and y[-1] == 9


def test_seidel_like_loop_sends_nothing_when_small():
    n = 12
    a = numpy.arange(n * n, dtype=float).reshape(n, n) / 7.0
    with config.set(replicate_below=DEFAULT):
        x = sp.array(a)
        with sp.comm_stats() as st:
            for i in range(1, n - 1):
                x[i, 1:-1] = (x[i - 1, :-2] + x[i - 1, 1:-1] + x[i + 1, 2:]) / 3.0
                for j in range(1, n - 1):
                    x[i, j] = (x[i, j - 1] + x[i, j]) / 2.0
    for i in range(1, n - 1):
        a[i, 1:-1] = (a[i - 1, :-2] + a[i - 1, 1:-1] + a[i + 1, 2:]) / 3.0
        for j in range(1, n - 1):
            a[i, j] = (a[i, j - 1] + a[i, j]) / 2.0
    assert (st.messages_sent, st.messages_received, st.collectives) == (0, 0, 0)
    assert_eq(x, a, exact=True)


def _numpy_functions():
    return {
        "solve": lambda xp, s, v, i: xp.linalg.solve(s, v),
        "cholesky": lambda xp, s, v, i: xp.linalg.cholesky(s),
        "eigh": lambda xp, s, v, i: xp.linalg.eigh(s)[0],
        "svd": lambda xp, s, v, i: xp.linalg.svd(s)[1],
        "fft": lambda xp, s, v, i: xp.fft.fft(v),
        "unique": lambda xp, s, v, i: xp.unique(i, return_counts=True)[1],
        "histogram": lambda xp, s, v, i: xp.histogram(v, bins=3)[0],
        "nonzero": lambda xp, s, v, i: xp.nonzero(i > 2)[0],
        "kron": lambda xp, s, v, i: xp.kron(v, v),
        "median": lambda xp, s, v, i: xp.median(s, axis=0),
        "isin": lambda xp, s, v, i: xp.isin(i, [1, 3]),
    }


@pytest.mark.parametrize("name", list(_numpy_functions()))
def test_numpy_functions_on_replicas(name):
    f = _numpy_functions()[name]
    m = _a((6, 6), 11)
    arrs = (m @ m.T + 6 * numpy.eye(6), _a((6,), 12), numpy.arange(20) % 5)
    expected = f(numpy, *arrs)
    with config.set(replicate_below=DEFAULT):
        xs = [sp.array(x) for x in arrs]
        with sp.comm_stats() as st:
            got = f(sp, *xs)
        assert (st.messages_sent, st.messages_received, st.collectives) == (0, 0, 0), st
        assert _whole(got)
        assert_eq(got, expected, exact=True)  # NumPy's own computation on every rank
    with config.set(replicate_below=0):
        assert_eq(f(sp, *(sp.array(x) for x in arrs)), expected, rtol=1e-10, atol=1e-12)


def test_in_place_and_views_on_replicas():
    a = _a((5, 5), 13)
    with config.set(replicate_below=DEFAULT):
        x = sp.array(a)
        with sp.comm_stats() as st:
            sp.fill_diagonal(x, 2.0)
            sp.put(x, [0, 7], [-1.0, -2.0])
        numpy.fill_diagonal(a, 2.0)
        numpy.put(a, [0, 7], [-1.0, -2.0])
        assert (st.messages_sent, st.collectives) == (0, 0)
        assert_eq(x, a, exact=True)
        # Functions that give views still give views of the replica.
        t = sp.transpose(x)
        t[1, 0] = 9.0
        d = sp.diagonal(x)
        a[0, 1] = 9.0
        assert_eq(x, a, exact=True)
        assert_eq(d, numpy.diagonal(a), exact=True)
        with config.set(replicate_below=20):
            big = sp.kron(x, sp.ones(2))  # 50 elements: past the threshold, split
        assert not _whole(big)
        assert_eq(big, numpy.kron(a, numpy.ones(2)), exact=True)


def _lu(xp, a):
    """npbench's ``lu`` kernel: scalar reads and writes and small dot products in a loop."""
    n = a.shape[0]
    for i in range(n):
        for j in range(i):
            a[i, j] -= a[i, :j] @ a[:j, j]
            a[i, j] /= a[j, j]
        for j in range(i, n):
            a[i, j] -= a[i, :i] @ a[:i, j]
    return a


def test_lu_kernel_replicated_is_numpy_with_no_message():
    m = _a((14, 14), 14) + 14 * numpy.eye(14)
    expected = _lu(numpy, m.copy())
    with config.set(replicate_below=DEFAULT):
        x = sp.array(m)
        with sp.comm_stats() as st:
            _lu(sp, x)
    assert (st.messages_sent, st.messages_received, st.collectives) == (0, 0, 0)
    assert_eq(x, expected, exact=True)
    with config.set(replicate_below=0):
        y = _lu(sp, sp.array(m))
    assert_eq(y, expected, rtol=1e-12, atol=1e-12)


def test_fused_chain_on_replicas():
    """Above ``fuse_min_size`` elementwise chains are deferred and fused; on replicas too."""
    a, b = _a((200, 150), 15), _a((200, 150), 16)
    expected = numpy.sqrt((a * 2.5 + b) ** 2 - a * b) / (1.0 + a)
    got = {}
    for below in (DEFAULT, 0):
        with config.set(replicate_below=below):
            x, y = sp.array(a), sp.array(b)
            assert _whole(x) == (below > 0)
            for _ in range(4):  # evaluated by NumPy first, then by the compiled kernel
                with sp.comm_stats() as st:
                    r = sp.sqrt((x * 2.5 + y) ** 2 - x * y) / (1.0 + x)
                    got[below] = numpy.asarray(r)
                if below:
                    assert (st.messages_sent, st.collectives) == (0, 0)
                assert_eq(r, expected, exact=True)
    numpy.testing.assert_array_equal(got[DEFAULT], got[0])


def _seidel_rows(xp, a, rows):
    """npbench's ``seidel_2d`` sweep over ``rows`` rows: small row slices and scalar updates."""
    for i in range(1, rows + 1):
        a[i, 1:-1] += (
            a[i - 1, :-2] + a[i - 1, 1:-1] + a[i - 1, 2:] + a[i, 2:] + a[i + 1, :-2] + a[i + 1, 1:-1] + a[i + 1, 2:]
        )
        for j in range(1, a.shape[1] - 1):
            a[i, j] += a[i, j - 1]
            a[i, j] /= 9.0
    return a


@pytest.mark.parametrize("shape", [(14, 11), (9, 40)], ids=str)
def test_seidel_rows_of_a_split_array_gather_each_row_once(shape, comm):
    """A row expression of a split array is computed where the row lives (messages only
    for the neighbour rows held elsewhere), and the element loop reads one copy of the
    updated row, which scalar writes keep current: one collective per row."""
    a = _a(shape, 17)
    rows = shape[0] - 2
    expected = _seidel_rows(numpy, a.copy(), rows)
    with config.set(replicate_below=50):  # the array split, its rows replicated
        x = sp.array(a)
        assert not _whole(x)
        with sp.comm_stats() as st:
            _seidel_rows(sp, x, rows)
    # Was 7 collectives per row expression and one per element read (2 per column), then
    # 3 per row (rows i and i + 1 gathered for the expression, row i after its update).
    if x.layout.dims[1:] == (1,):
        # Rows split: the owner computes the row expression, neighbour rows move at the block
        # boundaries only, and the element loop gathers row i after its update.
        assert st.collectives == (rows if comm.size > 1 else 0), st
        assert comm.allreduce(st.messages_sent) <= 8 * (comm.size - 1), st
    else:  # columns split too: a row's slices are blocks of a split axis
        assert st.collectives <= 3 * rows + 1, st
    assert_eq(x, expected, exact=True)


def test_copies_follow_writes(comm):
    """A copy serves reads until the array is written: scalar writes go into it, other writes
    make it stale; a slice already handed to an operation keeps the values it was read with."""
    a = _a((10, 7), 18)
    with config.set(replicate_below=50):  # the array split, its rows replicated
        x = sp.array(a)
        assert not _whole(x)
        assert x[2, 0] == a[2, 0]  # an element read copies its row to every rank
        t = x[2, 1:5] * 1.0  # the row's copy, handed to the product
        assert _whole(t) or comm.size == 1  # computed on that copy, on every rank
        x[2, 3] = 99.0  # written into the copy (a fresh one: the old one was handed out)
        a[2, 3] = 99.0
        assert_eq(t, _a((10, 7), 18)[2, 1:5], exact=True)
        with sp.comm_stats() as st:
            u = x[2, :4] + x[2, 3:]
            r = x[2, 3]
        assert st.collectives == 0  # both from the current copy of row 2
        assert r == 99.0
        assert_eq(u, a[2, :4] + a[2, 3:], exact=True)
        x[1:3] += 1.0  # any other write: the copy is stale
        a[1:3] += 1.0
        with sp.comm_stats() as st:
            r = x[2, 3]
            s = x[2, ::-2] * 2.0
        assert st.collectives == (1 if comm.size > 1 else 0)
        assert r == a[2, 3]
        assert_eq(s, a[2, ::-2] * 2.0, exact=True)
        assert_eq(x[:, 4] - x[3:8, None, 2], a[:, 4] - a[3:8, None, 2], exact=True)
        with pytest.raises(TypeError):
            x[2, 2] = 1j  # NumPy's cast error, copies untouched
        assert x[2, 2] == a[2, 2]
        x.local[...] = 0.0
        x.mark_modified()  # a write through .local, declared
        assert x[2, 3] == 0.0
