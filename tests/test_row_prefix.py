"""Sweeps over row prefixes and row suffixes of a split matrix, against NumPy's bits.

A triangular solve (npbench ``trisolv``) reads ``L[i, :i]`` and ``L[i, i]``
of a split ``L`` row after row; a backward one ``U[i, i + 1:]``.  While the
matrix is unwritten, a part of a row that no copy holds is gathered with the
parts of the rows after it (before it, backwards) as one rectangle that
doubles in height (``spmdarray.core.rows``): a few collectives per owner, and
about the triangle moved, not the whole matrix.  Every result must be
NumPy's bits (the products are NumPy's own on the copies), and writes
between reads must be seen.

Run at 1, 2, 3 and 4 ranks::

    mpiexec -n 3 python -m pytest -q --with-mpi tests/test_row_prefix.py
"""

from __future__ import annotations

import numpy
import pytest
from helpers import ref, world

import spmdarray as sp
import spmdarray.core.rows as rows
from spmdarray.settings import FIELDS, config

DEFAULT = FIELDS["replicate_below"].default


pytestmark = pytest.mark.usefixtures("rectangles_only")


def _forward(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def _backward(U, x, b):
    n = x.shape[0]
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - U[i, i + 1 :] @ x[i + 1 :]) / U[i, i]
    return x


def _triangular(n, seed, dtype=float):
    a = ref((n, n), dtype, seed)
    return a + n * numpy.eye(n, dtype=dtype)  # a diagonal far from zero: a tame solve


def _split(a, split_vectors, *vectors):
    """``a`` split over the ranks; ``vectors`` split too, or replicated (as in trisolv:
    the library's default ``replicate_below``)."""
    with config.set(replicate_below=0):
        m = sp.array(a)
    with config.set(replicate_below=0 if split_vectors else DEFAULT):
        vs = [sp.array(v) for v in vectors]
    return (m, *vs)


def _bits(got, expected):
    g = numpy.asarray(got)
    assert g.dtype == expected.dtype
    assert g.tobytes() == expected.tobytes(), numpy.flatnonzero(g != expected)[:10]


def _total(value: int) -> int:
    from mpi4py import MPI

    return MPI.COMM_WORLD.allreduce(value)


@pytest.mark.parametrize("n", [601, 97, 1])
@pytest.mark.parametrize("split_vectors", [False, True])
@pytest.mark.parametrize("solve", [_forward, _backward])
def test_triangular_solves_equal_numpy(n, split_vectors, solve):
    a = _triangular(n, 1)
    b = ref((n,), float, 2)
    expected = solve(a, numpy.full(n, -999.0), b)
    L, x, bs = _split(a, split_vectors, numpy.full(n, -999.0), b)
    with config.set(replicate_below=DEFAULT):  # (the loop's small operands: NumPy's products)
        _bits(solve(L, x, bs), expected)


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.complex128, numpy.int64])
def test_prefix_products_dtypes(dtype):
    n = 300
    a, v = ref((n, n), dtype, 3), ref((n,), dtype, 4)
    expected = numpy.array([a[i, :i] @ v[:i] for i in range(n)])
    L, vs = _split(a, False, v)
    with config.set(replicate_below=DEFAULT):
        got = numpy.array([L[i, :i] @ vs[:i] for i in range(n)])
    _bits(got, expected)


def _parts(xp, a, v, forward: bool, suffix: bool):
    """Row-prefix (or row-suffix) products and diagonal-ish elements of a ``rows x cols`` ``a``."""
    r, c = a.shape
    out = []
    for i in range(r) if forward else range(r - 1, -1, -1):
        j = min(i, c - 1)
        if suffix:
            out.append(a[i, j:] @ v[j:])
        else:
            out.append(a[i, :j] @ v[:j])
        out.append(a[i, j])
    return out


@pytest.mark.parametrize("shape", [(1000, 700), (601, 601), (240, 900)])
@pytest.mark.parametrize("forward", [True, False])
@pytest.mark.parametrize("suffix", [False, True])
def test_prefix_and_suffix_products_uneven(shape, forward, suffix):
    a, v = ref(shape, float, 5), ref((shape[1],), float, 6)
    expected = numpy.array(_parts(numpy, a, v, forward, suffix))
    A, vs = _split(a, False, v)
    with config.set(replicate_below=DEFAULT):
        got = numpy.array(_parts(sp, A, vs, forward, suffix))
    _bits(got, expected)


def test_rows_of_a_3d_array():
    a, v = ref((3, 70, 50), float, 7), ref((50,), float, 8)
    expected = numpy.array([a[k, i, : i % 50] @ v[: i % 50] + a[k, i, i % 50] for k in range(3) for i in range(70)])
    A, vs = _split(a, False, v)
    with config.set(replicate_below=DEFAULT):
        got = numpy.array([A[k, i, : i % 50] @ vs[: i % 50] + A[k, i, i % 50] for k in range(3) for i in range(70)])
    _bits(got, expected)


def _sweep_counts(n, solve, batch=None, monkeypatch=None):
    a = _triangular(n, 9)
    b = ref((n,), float, 10)
    expected = solve(a, numpy.zeros(n), b)
    L, x, bs = _split(a, False, numpy.zeros(n), b)
    if batch is not None:
        monkeypatch.setattr(rows, "BATCH", batch)
    sp.sync()
    with config.set(replicate_below=DEFAULT), sp.comm_stats() as s:
        got = solve(L, x, bs)
    _bits(got, expected)
    return L, s


@pytest.mark.parametrize("solve", [_forward, _backward])
def test_sweep_moves_about_the_triangle(solve):
    # 600 x 600: every row within 4096 elements, where a row read used to gather whole
    # rows (the whole matrix, 2,880,000 bytes) and the rows past 1,024 elements one by one.
    n = 600
    L, s = _sweep_counts(n, solve)
    size = world()[1]
    assert s.messages_sent == 0
    if size == 1:  # every rank holds it all: nothing to send
        assert s.collectives == 0
        return
    owners = len(L._st.layout.intervals[0] or [None])
    rows_per_owner = -(-n // owners)
    # About log2(rows) rectangles per owner (each twice the last), and a few reads
    # before the sweep is known.
    assert s.collectives <= 4 + owners * (rows_per_owner.bit_length() + 1), s.collectives
    moved = _total(s.collective_bytes)
    triangle = n * (n + 1) // 2 * 8
    # The triangle and the overhang of each rectangle past the diagonal (at most its
    # height squared), never the whole matrix.
    assert moved <= 1.5 * triangle, (moved, triangle)
    assert moved < 0.8 * n * n * 8
    assert _total(s.collectives) == size * s.collectives  # every rank took part in each


@pytest.mark.parametrize("solve", [_forward, _backward])
def test_sweep_rectangles_stay_within_batch(solve, monkeypatch):
    # Rectangles of at most BATCH elements: about n * n / (2 * BATCH) of them past the doubling.
    n, batch = 500, 4096
    L, s = _sweep_counts(n, solve, batch, monkeypatch)
    if world()[1] == 1:
        assert s.collectives == 0
        return
    owners = len(L._st.layout.intervals[0] or [None])
    bound = 4 + owners * 8 + (n * n // 2) // (batch // 2)
    assert s.collectives <= bound, (s.collectives, bound)
    assert _total(s.collective_bytes) <= 1.5 * n * (n + 1) // 2 * 8


def _with_writes(xp, a, v, n):
    out = []
    for i in range(n):
        out.append(a[i, :i] @ v[:i])
        out.append(a[i, i])
        if i % 5 == 2 and i + 1 < n:
            a[i + 1, 0] = float(i)  # a scalar, into the copies
        if i % 7 == 3:
            a[i:, : i // 2] *= 0.5  # a block: every copy stale
        if i % 11 == 4 and i + 2 < n:
            a[i + 2, :] = a[i + 1, :] + 1.0  # a row from the row before it (Gauss-Seidel)
    return out


def test_writes_between_reads_are_seen():
    n = 257
    a, v = ref((n, n), float, 11), ref((n,), float, 12)
    expected = numpy.array(_with_writes(numpy, a.copy(), v, n))
    A, vs = _split(a, False, v)
    with config.set(replicate_below=DEFAULT):
        got = numpy.array(_with_writes(sp, A, vs, n))
    _bits(got, expected)
    _bits(A, _with_writes_final(a.copy(), v, n))


def _with_writes_final(a, v, n):
    _with_writes(numpy, a, v, n)
    return a


def test_no_read_ahead_after_a_write():
    # Each step writes a block of the matrix: no copy is current at the next read, which
    # then gathers only its own row (read-ahead is for read-only sweeps).
    n = 200
    a, v = ref((n, n), float, 13), ref((n,), float, 14)

    def loop(m, w):
        out = []
        for i in range(1, n):
            out.append(m[i, :i] @ w[:i])
            m[i:, :] *= 1.0
        return out

    expected = numpy.array(loop(a.copy(), v))
    A, vs = _split(a, False, v)
    sp.sync()
    with config.set(replicate_below=DEFAULT), sp.comm_stats() as s:
        got = numpy.array(loop(A, vs))
    _bits(got, expected)
    if world()[1] == 1:
        assert s.collectives == 0
    else:
        assert s.collectives == n - 1
        assert _total(s.collective_bytes) == (n - 1) * n * 8  # a row each, not a rectangle


_PATTERNS = {
    "fixed prefix": lambda i, w: (0, 3),
    "half-rate prefix": lambda i, w: (0, min(i // 2, w)),
    "triangle": lambda i, w: (0, min(i, w)),
    "double-rate prefix": lambda i, w: (0, min(2 * i, w)),
    "anti-diagonal suffix": lambda i, w: (max(w - 1 - i, 0), w),
}


@pytest.mark.parametrize("shape", [(240, 5000), (900, 700)])
@pytest.mark.parametrize("pattern", list(_PATTERNS))
def test_parts_moving_at_other_rates(shape, pattern):
    # The rectangles' columns follow the parts' ends at the rate they moved since the
    # last miss: a few collectives per owner, and not much more than the parts moved
    # (rows past 4,096 elements used to be gathered one part per row, shorter ones whole).
    rows_, w = shape
    f = _PATTERNS[pattern]
    a, v = ref(shape, float, 15), ref((w,), float, 16)
    expected = numpy.array([a[i, slice(*f(i, w))] @ v[slice(*f(i, w))] for i in range(rows_)])
    A, vs = _split(a, False, v)
    sp.sync()
    with config.set(replicate_below=DEFAULT), sp.comm_stats() as s:
        got = numpy.array([A[i, slice(*f(i, w))] @ vs[slice(*f(i, w))] for i in range(rows_)])
    _bits(got, expected)
    if world()[1] == 1:
        assert s.collectives == 0
        return
    owners = len(A._st.layout.intervals[0] or [None])
    rows_per_owner = -(-rows_ // owners)
    assert s.collectives <= 4 + owners * (rows_per_owner.bit_length() + 2), s.collectives
    needed = sum(hi - lo for lo, hi in (f(i, w) for i in range(rows_))) * 8
    assert _total(s.collective_bytes) <= 2 * needed + 64 * rows_ * 8, (_total(s.collective_bytes), needed)


def test_miss_record_keeps_no_array_alive():
    # The record of a storage's last miss holds it weakly: a freed array's memory goes at once.
    import gc
    import weakref

    n = 120
    A, vs = _split(ref((n, n), float, 17), False, ref((n,), float, 18))
    with config.set(replicate_below=DEFAULT):
        [A[i, :i] @ vs[:i] for i in range(n)]
    st = weakref.ref(A._st)
    del A
    gc.collect()
    assert st() is None


def test_served_prefix_products_are_numpys_on_the_copy(monkeypatch):
    # Along the sweep, ``L[i, :i] @ x[:i]`` whose part a rectangle holds is NumPy's product on
    # that copy (``whole.reread`` in ``__matmul__``): no collective, no general product.
    from spmdarray.core.registry import ops

    n = 400
    a = _triangular(n, 11)
    v = ref((n,), float, 12)
    L, vs = _split(a, False, v)
    calls = []
    general = ops.matmul
    monkeypatch.setattr(ops, "matmul", lambda *args, **kw: calls.append(1) or general(*args, **kw))
    split = world()[1] > 1 and not L._st.be.is_device
    with config.set(replicate_below=DEFAULT):
        got, served = [], 0
        for i in range(n):
            part = rows.row_part(L[i, :i]._map) if split and L._st.copies else None
            held = part is not None and rows.held_part(L._st.copies, L._st.version, L[i, :i]._map, part)
            calls.clear()
            with sp.comm_stats() as s:
                got.append(L[i, :i] @ vs[:i])
            if held:  # a copy held the part before the product: served from it
                assert (s.collectives, s.messages_sent, len(calls)) == (0, 0, 0), i
                served += 1
    _bits(numpy.array(got), numpy.array([a[i, :i] @ v[:i] for i in range(n)]))
    if split:
        assert served > n // 2, served  # most rows: a few rectangles hold them all
