"""Row and column loops over split arrays: computed where the slices live, NumPy's values.

npbench's ``deriche`` updates a row-split image column by column
(``y[:, j] = ...``: every rank its own rows, no message) and row by row
(``y[i, :] = ...``: the owner of row ``i`` alone, a message only for a
neighbour row held by another rank).  ``vadv`` does the same on slabs
``x[:, :, k]``.  Each test counts the messages of every iteration exactly.

Run at 1, 2, 3 and 4 ranks::

    mpiexec -n 3 python -m pytest -q --with-mpi tests/test_split_slices.py
"""

from __future__ import annotations

import numpy
import pytest
from helpers import assert_eq, block, ref
from spmdarray.decomposition import Layout

import spmdarray as sp
from spmdarray.core.placement import is_whole
from spmdarray.settings import config


def _rowsplit(a, comm):
    """``a`` split by rows only (uneven blocks, some empty past ``len(a)`` ranks), as ``from_local`` stacks them."""
    return sp.from_local(block(numpy.array_split(a, comm.size)[comm.rank].copy()))


def _owner(x, i: int) -> int:
    """The grid coordinate along axis 0 that holds row ``i`` of ``x``."""
    return next(c for c, (lo, hi) in enumerate(x.layout.intervals[0]) if lo <= i < hi)


def _counts(comm, st) -> tuple[int, int, int]:
    """(collectives, messages, bytes) of one step, messages and bytes summed over the ranks."""
    return st.collectives, comm.allreduce(st.messages_sent), comm.allreduce(st.bytes_sent)


@pytest.mark.parametrize("shape", [(41, 6), (23, 9), (5, 3)], ids=str)
@pytest.mark.parametrize("fuse", [True, False])
def test_column_recurrence_sends_nothing(shape, fuse, comm):
    """``y[:, j] = a * x[:, j] + b * x[:, j - 1] + c * y[:, j - 1]`` on row-split arrays."""
    a = ref(shape, float, 1)
    e = numpy.empty_like(a)
    e[:, 0] = 0.5 * a[:, 0]
    for j in range(1, shape[1]):
        e[:, j] = 0.5 * a[:, j] + 0.25 * a[:, j - 1] + 0.125 * e[:, j - 1]
    with config.set(replicate_below=0, fuse=fuse):
        x = _rowsplit(a, comm)
        y = sp.empty_like(x)
        assert x.layout.dims[1:] == (1,)  # rows split, columns whole
        y[:, 0] = 0.5 * x[:, 0]
        for j in range(1, shape[1]):
            with sp.comm_stats() as st:
                y[:, j] = 0.5 * x[:, j] + 0.25 * x[:, j - 1] + 0.125 * y[:, j - 1]
                sp.sync()
            assert _counts(comm, st) == (0, 0, 0), (j, st)
        assert not is_whole((x[:, 2] * 2.0).layout)  # a column result stays split
    assert_eq(y, e, exact=True)


def _rows(xp, img, y):
    """deriche's row sweeps, forward then backward (two neighbour rows each)."""
    n = img.shape[0]
    y[0, :] = 0.5 * img[0, :]
    y[1, :] = 0.5 * img[1, :] + 0.25 * img[0, :]
    for i in range(2, n):
        y[i, :] = 0.5 * img[i, :] + 0.25 * img[i - 1, :] + 0.125 * y[i - 1, :] - 0.0625 * y[i - 2, :]
    z = xp.empty_like(img)
    z[-1, :] = 0.0
    z[-2, :] = 0.5 * img[-1, :]
    for i in range(n - 3, -1, -1):
        z[i, :] = 0.5 * img[i + 1, :] + 0.25 * img[i + 2, :] + 0.125 * z[i + 1, :] - 0.0625 * z[i + 2, :]
    return y, z


@pytest.mark.parametrize("shape, split_columns", [((29, 7), False), ((9, 40), True), ((4, 3), False)], ids=str)
@pytest.mark.parametrize("fuse", [True, False])
def test_row_recurrence_moves_only_boundary_rows(shape, split_columns, fuse, comm):
    """``y[i, :] = ... y[i - 1, :] ...``: computed by the owner of row ``i``, which receives
    each neighbour row held by another rank (one message of one row), and nothing else."""
    a = ref(shape, float, 2)
    ey, ez = _rows(numpy, a, numpy.empty_like(a))
    n, w = shape
    with config.set(replicate_below=0, fuse=fuse):
        img = sp.array(a) if split_columns else _rowsplit(a, comm)
        y = sp.empty_like(img)
        rowsplit = img.layout.dims[1:] == (1,)
        y[0, :] = 0.5 * img[0, :]
        y[1, :] = 0.5 * img[1, :] + 0.25 * img[0, :]
        for i in range(2, n):
            with sp.comm_stats() as st:
                y[i, :] = 0.5 * img[i, :] + 0.25 * img[i - 1, :] + 0.125 * y[i - 1, :] - 0.0625 * y[i - 2, :]
                sp.sync()
            coll, msgs, nbytes = _counts(comm, st)
            assert coll == 0, (i, st)
            if rowsplit:
                # img[i - 1] and y[i - 1] come from the same rank: one message each.
                far = [k for k in (i - 1, i - 2) if _owner(img, k) != _owner(img, i)]
                expected = 2 * (i - 1 in far) + (i - 2 in far)
                assert (msgs, nbytes) == (expected, expected * w * 8), (i, far, st)
        _, z = _rows(sp, img, y)
    assert_eq(y, ey, exact=True)
    assert_eq(z, ez, exact=True)


def test_slab_update_sends_nothing(comm):
    """vadv's ``c[:, :, k] = (d - a[:, :, k - 1] * r) * s`` on arrays split along axis 0 with
    replicated 2-D coefficients: every rank updates its own rows of each slab."""
    shape = (13, 5, 6)
    u, d2 = ref(shape, float, 3), ref(shape[:2], float, 4) + 3.0
    e = numpy.zeros(shape)
    for k in range(1, shape[2]):
        e[:, :, k] = (u[:, :, k] - e[:, :, k - 1] * d2) / (d2 + u[:, :, k - 1])
    with config.set(replicate_below=100):
        x, d = _rowsplit(u, comm), sp.array(d2)
        c = sp.zeros_like(x)
        assert is_whole(d.layout) and x.layout.dims[1:] == (1, 1)
        for k in range(1, shape[2]):
            with sp.comm_stats() as st:
                c[:, :, k] = (x[:, :, k] - c[:, :, k - 1] * d) / (d + x[:, :, k - 1])
                sp.sync()
            assert _counts(comm, st) == (0, 0, 0), (k, st)
        # A replicated destination needs the slab everywhere: one collective.
        r = sp.zeros(shape[:2])
        with sp.comm_stats() as st:
            r[:] = c[:, :, 3]
        assert st.collectives == (1 if comm.size > 1 else 0)
    assert_eq(c, e, rtol=1e-14)
    assert_eq(r, e[:, :, 3], rtol=1e-14)


@pytest.mark.parametrize("below", [0, 40])
def test_small_results_uneven_empty_and_broadcast(below, comm):
    """Small results of split slices with uneven blocks, empty slices, 0-d and broadcasting."""
    a = ref((11, 7), float, 5)
    v = ref((7,), float, 6)
    with config.set(replicate_below=below):
        x = sp.array(a)
        assert_eq(x[3, :] * v + x[9, ::-1], a[3, :] * v + a[9, ::-1], exact=True)
        assert_eq(x[2:9, 4] - x[1:8, 0] * 2.0, a[2:9, 4] - a[1:8, 0] * 2.0, exact=True)
        assert_eq(x[5, 2:2] + 1.0, a[5, 2:2] + 1.0, exact=True)
        assert_eq(x[4:6, :] + v, a[4:6, :] + v, exact=True)
        assert_eq(x[:, 1:2] * x[0, :], a[:, 1:2] * a[0, :], exact=True)
        assert_eq(x[6, 3] * x[1, :], a[6, 3] * a[1, :], exact=True)
        assert_eq(sp.sum(x[7, :] * 3.0), numpy.sum(a[7, :] * 3.0), rtol=1e-14)
        t = x[8, :] + 1.0
        t[2] = -1.0  # a result held by one rank: scalar writes and reads as any array
        e = a[8, :] + 1.0
        e[2] = -1.0
        assert float(t[2]) == -1.0
        assert_eq(t, e, exact=True)
        x[10, :] = t  # assigned back to the row it came from: same owner
        a[10, :] = e
    assert_eq(x, a, exact=True)


def _trisolv(xp, L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


@pytest.mark.parametrize("n", [64, 45])
@pytest.mark.parametrize("backward", [False, True])
def test_read_only_row_sweep_gathers_growing_blocks_of_rows(n, backward, comm):
    """trisolv with ``L`` split and ``x`` replicated: ``L[i, :i]`` and ``L[i, i]`` come from
    one copy of row ``i``.  While ``L`` is only read, a miss gathers a block of the rows
    that follow in the sweep's direction, twice as many as the last block, within the
    owner's stretch: about log2(rows) collectives per owner, not one per row."""
    L = numpy.tril(ref((n, n), float, 7)) + n * numpy.eye(n)
    b = ref((n,), float, 8)
    if backward:  # upper triangular, solved from the last row up
        L = L[::-1, ::-1].copy()
    expected = (
        _trisolv(numpy, L[::-1, ::-1], numpy.zeros(n), b[::-1])[::-1]
        if backward
        else _trisolv(numpy, L, numpy.zeros(n), b)
    )
    with config.set(replicate_below=n * n):
        lm, x, bb = sp.array(L), sp.zeros(n), sp.array(b)
        assert not is_whole(lm.layout) and is_whole(x.layout)
        with sp.comm_stats() as st:
            if backward:
                for i in range(n - 1, -1, -1):
                    x[i] = (bb[i] - lm[i, i + 1 :] @ x[i + 1 :]) / lm[i, i]
            else:
                _trisolv(sp, lm, x, bb)
        iv = lm.layout.intervals[0] or ((0, n),)
    assert st.messages_sent == 0
    if lm.layout.nprocs > 1:
        stretches = [hi - lo for lo, hi in iv if hi > lo]
        bound = 1 + sum(int(numpy.ceil(numpy.log2(m + 1))) + 1 for m in stretches)
        assert len(stretches) <= st.collectives <= bound, (st, stretches)
    else:
        assert st.collectives == 0
    assert_eq(x, expected, rtol=1e-13)


def _columnsplit(a, comm):
    """``a`` (3-D) split along axis 1 only, as a transposed view of a row-split array."""
    t = numpy.ascontiguousarray(a.transpose(1, 0, 2))
    return sp.from_local(block(numpy.array_split(t, comm.size)[comm.rank].copy())).transpose(1, 0, 2)


def test_slab_chain_across_two_placements_settles_on_the_balanced_one(comm):
    """vadv: coefficients from an array split along axis 1 (``wcon``) meet slabs of
    arrays split along axis 0.  Where moving either operand costs the same, the result
    takes the placement a new array of its shape gets (rows split), so the chain moves
    the coefficient slab twice per step, not three times."""
    n, m, kk = 12, 12, 5
    u, wv, d2 = ref((n, m, kk), float, 9), ref((n + 1, m, kk), float, 10), ref((n, m), float, 11) + 4.0
    e = numpy.zeros((n, m, kk))
    for k in range(1, kk):
        g = 0.25 * (0.5 * (wv[1:, :, k] + wv[:-1, :, k]))
        b = d2 - g - e[:, :, k - 1]
        e[:, :, k] = (u[:, :, k] - e[:, :, k - 1] * g) / b
    with config.set(replicate_below=200):
        x, w, d = _rowsplit(u, comm), _columnsplit(wv, comm), sp.array(d2)
        c = sp.zeros_like(x)
        p = comm.size
        for k in range(1, kk):
            with sp.comm_stats() as st:
                g = 0.25 * (0.5 * (w[1:, :, k] + w[:-1, :, k]))
                b = d - g - c[:, :, k - 1]
                c[:, :, k] = (x[:, :, k] - c[:, :, k - 1] * g) / b
                sp.sync()
            coll, msgs, _ = _counts(comm, st)
            assert coll == 0
            # Transpositions of an n x m slab between p ranks: each rank sends to each other.
            # Two where a new n x m array is split by rows (the first operand's placement
            # decided before: three); three on a 2 x 2 grid, which matches neither.
            rows = Layout.balanced((n, m), p).dims[1:] == (1,)
            assert msgs == (2 if rows else 3) * p * (p - 1), (k, st)
    assert_eq(c, e, rtol=1e-13)


@pytest.mark.parametrize("below", [0, 10**6])
def test_where_is_computed_on_its_operands_layout(below, comm):
    """``where(c, 0, r)`` (hdiff's flux limiter) lays its result out as an elementwise
    operation of the same operands would, not on the default layout: no message."""
    wv = ref((9, 14, 3), float, 14)
    e = numpy.where(wv * 2.0 > 0, 0, wv)
    with config.set(replicate_below=below):
        w = _columnsplit(wv, comm) if below == 0 else sp.array(wv)
        r = w * 2.0
        with sp.comm_stats() as st:
            got = sp.where(r > 0, 0, w)
            sp.sync()
        assert _counts(comm, st) == (0, 0, 0), st
        assert got.layout == w.layout or comm.size == 1  # (one rank: any layout holds it all)
        assert_eq(sp.tril(w[:, :, 1]), numpy.tril(wv[:, :, 1]), exact=True)
    assert_eq(got, e, exact=True)


def test_block_of_a_split_axis_gives_a_replicated_result(comm):
    """stockham_fft: ``ii[:, :k] * jj[:, :k]`` of ``mgrid`` rows (split along their long
    axis) feeds ``reshape`` and ``repeat``: a block of a split axis is not a loop slice,
    so the small result is replicated (the whole-array routines then run on replicas)."""
    r, n = 2, 1 << 13
    with config.set(replicate_below=1 << 13):
        ii, jj = sp.mgrid[0:r, 0:n]
        for k in (4, 64):
            t = sp.exp(-2.0j * numpy.pi * ii[:, :k] * jj[:, :k] / (2 * k))
            assert is_whole(t.layout) or comm.size == 1
            d = sp.empty((r, k, 3), complex)
            with sp.comm_stats() as st:
                d[:] = sp.repeat(sp.reshape(t, (r, k, 1)), 3, axis=2)
            assert (st.collectives, st.messages_sent) == (0, 0)
            ei, ej = numpy.mgrid[0:r, 0:n]
            e = numpy.exp(-2.0j * numpy.pi * ei[:, :k] * ej[:, :k] / (2 * k))
            assert_eq(d, numpy.repeat(e.reshape(r, k, 1), 3, axis=2), exact=True)
