"""Element reads of split arrays that walk a diagonal or a column, against NumPy.

``a[i, i]`` or ``a[i, j]`` for ``i`` in a loop reads one element per row.
Gathering each element's row for it (the read-ahead rows use) would move the
whole matrix; after two reads that no copy holds, stepping one direction across
rows, the next elements along it are broadcast by their owner as one *run* that
doubles in length
(``spmdarray.core.element._run_miss``).  Every read must equal NumPy's
element, writes in between must be seen, and the collectives and bytes stay
small.

Run at 1, 2, 3 and 4 ranks::

    mpiexec -n 3 python -m pytest -q tests/test_element_runs.py
"""

from __future__ import annotations

import numpy
import pytest
from helpers import ref, world

import spmdarray as sp
from spmdarray.settings import config


def _walk(x, n, step, start):
    i, j = start
    out = []
    for _ in range(n):
        out.append(x[i, j])
        i, j = i + step[0], j + step[1]
    return out


@pytest.mark.parametrize("shape", [(37, 37), (50, 23), (9, 40), (64, 64)])
@pytest.mark.parametrize("step", [(1, 1), (1, 0), (1, -1), (-1, -1), (-1, 0)])
def test_walks_equal_numpy(shape, step):
    a = ref(shape, float, 3)
    rows, cols = shape
    i0 = 0 if step[0] > 0 else rows - 1
    j0 = {1: 0, 0: cols // 2, -1: cols - 1}[step[1]]
    n = min(rows, cols if step[1] else rows)
    expected = _walk(a, n, step, (i0, j0))
    with config.set(replicate_below=0):
        x = sp.array(a)
        got = _walk(x, n, step, (i0, j0))
    assert [type(g) for g in got] == [type(e) for e in expected]
    assert got == expected


@pytest.mark.parametrize("dtype", [numpy.int32, numpy.complex64, bool])
def test_diagonal_dtypes(dtype):
    a = (ref((30, 30), float, 5) * 10).astype(dtype)
    with config.set(replicate_below=0):
        x = sp.array(a)
        got = [x[i, i] for i in range(30)]
    assert got == [a[i, i] for i in range(30)]
    assert {g.dtype for g in got} == {numpy.dtype(dtype)}


def _diagonal_with_writes(x, n):
    out = []
    for i in range(n):
        out.append(x[i, i])
        if i % 7 == 3:
            k = min(i + 1, n - 1)
            x[k, k] = -float(i)  # the next element of the run
        if i % 11 == 5:
            x[i:, :] *= 2.0  # every element after this one
    return out


def test_writes_between_reads_are_seen():
    a = ref((40, 40), float, 7)
    expected = _diagonal_with_writes(a.copy(), 40)
    with config.set(replicate_below=0):
        got = _diagonal_with_writes(sp.array(a), 40)
    assert got == expected


def test_diagonal_sweep_moves_little():
    # A 256 x 256 split matrix: its diagonal in runs that double within each owner's rows,
    # not the rows (524,288 bytes).  (Not gathered whole after its misses: test_rereads.py.)
    n = 256
    a = ref((n, n), float, 9)
    with config.set(replicate_below=0, gather_rereads_below=0):
        x = sp.array(a)
        sp.sync()
        with sp.comm_stats() as s:
            trace = 0.0
            for i in range(n):
                trace += x[i, i]
    assert trace == sum(a[i, i] for i in range(n))
    size = world()[1]
    assert s.messages_sent == 0
    if x._st.be.is_device:  # (runs are gathered from host blocks; device blocks read rows)
        return
    if size == 1:
        assert s.collectives == 0
    else:
        owners = min(size, n)
        rows = -(-n // owners)
        # The first two reads take the row copies; then about log2(rows) runs per owner.
        assert s.collectives <= 2 + owners * (rows.bit_length() + 1), s.collectives
        assert s.collective_bytes <= 2 * 2 * n * 8 + 2 * n * 8 * size, s.collective_bytes


def test_row_walk_keeps_row_copies():
    # A step along the last axis only is left to the row copies: one row, one collective.
    a = ref((20, 30), float, 11)
    with config.set(replicate_below=0):
        x = sp.array(a)
        sp.sync()
        with sp.comm_stats() as s:
            got = [x[4, j] for j in range(30)]
    assert got == list(a[4])
    assert s.collectives == (1 if world()[1] > 1 else 0)


def test_runs_keep_no_array_alive():
    # The record of a storage's runs holds it weakly: a freed array's memory goes at once.
    import gc
    import weakref

    with config.set(replicate_below=0):
        x = sp.array(ref((40, 40), float, 13))
        [x[i, i] for i in range(40)]
        st = weakref.ref(x._st)
        del x
        gc.collect()
    assert st() is None
