"""Pending writes in whole jobs: a rank raising alone, exit and ``MPI.Finalize()`` with writes pending.

Each job runs as an ``mpiexec -n 2/3/4`` subprocess with a timeout (the
serial pass runs them), with every operation fused so that the assignments
are left pending (each script checks it); NumPy is the reference.
"""

from __future__ import annotations

import os
import re

import numpy
import pytest
from io_helpers import h5_read, run_mpi, shared_dir

_ONE_RANK_RAISES = """
import spmdarray as sp
from mpi4py import MPI
sp.config.set(fuse_min_size=0, replicate_below=0)
rank, size = MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()
a = sp.arange(40.0 * 7).reshape(40, 7)
x = sp.zeros((40, 7))
x[1:-1, :] = a[2:, :] + a[:-2, :]
assert any(type(w).__name__ == "Write" for w in x._s.flights)
if rank == size - 1:
    raise ValueError(f"bad input on rank {rank}")
print("SUM", float(x.sum()))
"""

_LEFT_PENDING = """
import sys
import numpy
import spmdarray as sp
sp.config.set(fuse_min_size=0, replicate_below=0)
path = sys.argv[1]
a0 = numpy.arange(23.0 * 9).reshape(23, 9) % 7
a, x = sp.array(a0), sp.zeros((23, 9))
for k in range(3):
    x[1:-1, :] = a[2:, :] + a[:-2, :] * k
    a[1:-1, :] = x[2:, :] - x[:-2, :]
sp.save_hdf5(path, {"x": x, "a": a})
a += 1.0  # fresh halos
x[1:-1, :] = (a[2:, :] - a[:-2, :]) * 2.0
assert any(type(w).__name__ == "Write" for w in x._s.flights)
print("LEFT", flush=True)
"""


def _left_pending_ref():
    a0 = numpy.arange(23.0 * 9).reshape(23, 9) % 7
    x0 = numpy.zeros((23, 9))
    for k in range(3):
        x0[1:-1, :] = a0[2:, :] + a0[:-2, :] * k
        a0[1:-1, :] = x0[2:, :] - x0[:-2, :]
    return a0, x0


@pytest.mark.parametrize("n", [2, 3, 4])
def test_a_rank_raising_alone_after_a_pending_write_aborts(comm, monkeypatch, n):
    if comm.size > 1:
        pytest.skip("launches mpiexec itself: runs in the serial pass")
    monkeypatch.setenv("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")
    monkeypatch.setenv("SPMDARRAY_BACKEND", "numpy")
    monkeypatch.setenv("SPMDARRAY_HANG_TIMEOUT", "0")  # the excepthook alone must end the job
    rc, out = run_mpi(n, _ONE_RANK_RAISES, timeout=90.0, expect_rc=None)
    assert rc != 0, out
    assert f"ValueError: bad input on rank {n - 1}" in out, out
    assert "SUM" not in out, out


@pytest.mark.parametrize("n", [2, 3])
def test_exit_with_pending_writes(comm, monkeypatch, n):
    if comm.size > 1:
        pytest.skip("launches mpiexec itself: runs in the serial pass")
    pytest.importorskip("h5py")
    monkeypatch.setenv("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")
    monkeypatch.setenv("SPMDARRAY_BACKEND", "numpy")
    with shared_dir() as d:
        path = os.path.join(d, "left.h5")
        rc, out = run_mpi(n, _LEFT_PENDING, path, timeout=90.0, expect_rc=0)
        assert "LEFT" in out and "Traceback" not in out and "Warning" not in out, out
        a0, x0 = _left_pending_ref()
        numpy.testing.assert_array_equal(h5_read(path, "x"), x0)
        numpy.testing.assert_array_equal(h5_read(path, "a"), a0)


_FINALIZED_BY_THE_PROGRAM = """
import os
import numpy
import spmdarray as sp
from mpi4py import MPI
sp.config.set(fuse_min_size=0, replicate_below=0)
a0 = numpy.arange(23.0 * 9).reshape(23, 9) % 7
a, b, x = sp.array(a0), sp.array(a0 + 1.0), sp.zeros((23, 9))
box = x.global_slices
x[1:-1, :] = (a[2:, :] + a[:-2, :]) * 2.0
t = (b[2:, :] - b[:-2, :]) * 3.0  # a deferred value never read: its messages are in flight
assert any(type(w).__name__ == "Write" for w in x._s.flights) and t._s.args[0]._s.flight is not None
MPI.Finalize()
line = f"BLOCK {box[0].start} {box[0].stop} {box[1].start} {box[1].stop} {float(x.local.sum())}\\n"
os.write(1, line.encode())  # one write: lines of ranks do not interleave
"""


@pytest.mark.parametrize("n", [2, 4])
def test_the_program_finalizes_mpi_itself(comm, monkeypatch, n):
    """``MPI.Finalize()`` with a pending write and messages in flight: both complete first, the block
    reads right after, and the job exits cleanly (it used to fail: a Waitall after finalising)."""
    if comm.size > 1:
        pytest.skip("launches mpiexec itself: runs in the serial pass")
    monkeypatch.setenv("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")
    monkeypatch.setenv("SPMDARRAY_BACKEND", "numpy")
    rc, out = run_mpi(n, _FINALIZED_BY_THE_PROGRAM, timeout=90.0, expect_rc=0)
    a0 = numpy.arange(23.0 * 9).reshape(23, 9) % 7
    x0 = numpy.zeros((23, 9))
    x0[1:-1, :] = (a0[2:, :] + a0[:-2, :]) * 2.0
    blocks = re.findall(r"BLOCK (\d+) (\d+) (\d+) (\d+) ([0-9.]+)", out)
    assert len(blocks) == n and "Traceback" not in out and "finaliz" not in out, out
    for r0, r1, c0, c1, total in blocks:
        assert float(total) == x0[int(r0) : int(r1), int(c0) : int(c1)].sum(), out
