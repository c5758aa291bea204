"""spmdarray.comm_trace: communication charged to the user's source line, at any rank count."""

import json
import os

import numpy
import pytest
from spmdarray.comm.trace import TRACING

import spmdarray as np


def _line(fn, offset: int) -> int:
    return fn.__code__.co_firstlineno + offset


def _jacobi(g, iters):
    i = slice(1, -1)  # examples/stencil.py's update, written on the slices themselves
    for _ in range(iters):
        average = (g[i, i] + g[:-2, i] + g[i, 2:] + g[i, :-2] + g[2:, i]) * 0.2  # the line (offset 3)
        g[i, i] = average
    return g


@pytest.mark.parametrize("fuse", [False, True])
def test_stencil_line_has_exact_halo_bytes(fuse):
    n, iters = 41, 3
    with np.config.set(fuse=fuse, fuse_min_size=1):
        grid = np.random.default_rng(3).random((n + 2, n + 2))
        ref = numpy.asarray(grid)
        _jacobi(grid, 1)  # plans built
        with np.comm_stats() as stats, np.comm_trace() as tr:
            _jacobi(grid, iters)
        got = numpy.asarray(grid)
    rank, size = grid.comm.Get_rank(), grid.comm.Get_size()
    # Every byte and message, and nothing else, is on the stencil's line.
    assert tr.totals() == {k: getattr(stats, k) for k in tr.totals()}
    recs = [r for r in tr.records if r.bytes or r.messages]
    if size > 1:
        assert len(recs) == 1
        (r,) = recs
        assert os.path.samefile(r.file, __file__) and r.line == _line(_jacobi, 3)
        assert r.operation == "halo exchange for add"
        assert r.bytes == stats.bytes_sent > 0
        if grid._layout.dims == (size, 1):
            # A row split: one row of n interior cells to each neighbour per iteration.
            neighbours = (rank > 0) + (rank < size - 1)
            assert r.bytes == iters * neighbours * n * 8
            assert r.messages == iters * neighbours
    else:
        assert recs == [] and stats.bytes_sent == 0
    # The result is NumPy's.
    numpy.testing.assert_array_equal(got, _jacobi(ref, iters + 1))


def test_collectives_and_table():
    x = np.arange(30.0)
    with np.comm_stats() as stats, np.comm_trace() as tr:
        s = float(x.sum())  # line 2 of the with block
    assert s == 435.0
    assert tr.totals()["collectives"] == stats.collectives
    if x.comm.Get_size() == 1:
        assert stats.collectives == 0 and tr.records == []  # one rank: no collective at all
        return
    assert stats.collectives >= 1
    r = tr.records[0]
    assert r.line == _line(test_collectives_and_table, 3) and "sum" in r.operation
    assert r.collectives == stats.collectives and r.wait >= 0.0
    table = tr.table()
    assert "file:line" in table and f"test_trace.py:{r.line}" in table
    data = tr.as_dict()
    assert json.loads(json.dumps(data))[0]["line"] == r.line


def test_off_outside_the_block_and_nested():
    assert TRACING.rec is None
    x = np.arange(20.0)
    with np.comm_trace() as outer:
        with np.comm_trace() as inner:
            float(x.sum())
        assert TRACING.rec is outer
        float(x.max())
    assert TRACING.rec is None
    assert sum(r.collectives for r in inner.records) >= (x.comm.Get_size() > 1)
    assert all("max" in r.operation for r in outer.records)
    float(x.sum())  # after the block: recorded nowhere
    assert all("sum" not in r.operation for r in outer.records)


def test_deferred_wait_is_charged_to_the_line_that_built_it():
    with np.config.set(fuse=True, fuse_min_size=1):
        u = np.arange(64.0)
        with np.comm_trace() as tr:
            d = u[1:] - u[:-1]  # messages posted here (offset 4)
            total = float(d.sum())  # evaluated here
    assert total == 63.0
    size = u.comm.Get_size()
    built = [r for r in tr.records if r.line == _line(test_deferred_wait_is_charged_to_the_line_that_built_it, 4)]
    if size > 1:
        assert built and sum(r.messages_received + r.messages for r in built) >= 1
        assert "subtract" in built[0].operation
    evaluated = [r for r in tr.records if r.line == _line(test_deferred_wait_is_charged_to_the_line_that_built_it, 5)]
    assert all(r.messages == 0 for r in evaluated)


def test_plot(tmp_path):
    pytest.importorskip("matplotlib")
    x = np.arange(50.0)
    with np.comm_trace() as tr:
        float((x[1:] + x[:-1]).sum())
    path = str(tmp_path / f"trace{x.comm.Get_rank()}.png")
    tr.plot(path)
    assert os.path.getsize(path) > 0


def test_io_counts_match_comm_stats():
    pytest.importorskip("h5py")
    from io_helpers import shared_dir

    x = np.arange(40.0).reshape(8, 5)
    with shared_dir() as d:
        path = os.path.join(d, "ck.h5")
        with np.comm_stats() as stats, np.comm_trace() as tr:
            np.checkpoint(path, step=1, u=x)
            np.restore(path, like=x)
    assert tr.totals() == {k: getattr(stats, k) for k in tr.totals()}
    lines = {r.line for r in tr.records}
    assert lines <= {_line(test_io_counts_match_comm_stats, 8), _line(test_io_counts_match_comm_stats, 9)}


@pytest.mark.parametrize("nprocs", [2, 3])
def test_stencil_example_trace_names_its_line(nprocs):
    from mpi4py import MPI

    if MPI.COMM_WORLD.size > 1:
        pytest.skip("launches mpiexec itself: runs in the serial pass")
    from io_helpers import TESTS, run_mpi

    script = os.path.join(os.path.dirname(TESTS), "examples", "stencil.py")
    with open(script) as f:
        line = 1 + next(i for i, t in enumerate(f) if "average = (center" in t)
    run = "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
    iters = 5
    _, out = run_mpi(nprocs, run, script, "-N", "61", "--iters", str(iters), "--trace", timeout=120)
    per_rank = out.split("halo bytes/iter per rank")[1].splitlines()[0].split(",")
    rows = [t.split() for t in out.splitlines() if "halo exchange for add" in t]
    assert len(rows) == 1 and rows[0][0].endswith(f"stencil.py:{line}"), out
    messages, nbytes = int(rows[0][-4]), int(rows[0][-3])
    # Rank 0's table: exactly the bytes its comm_stats() counted, one row of 61 float64 per iteration.
    assert nbytes == iters * int(per_rank[0]) == iters * 61 * 8
    assert messages == iters
