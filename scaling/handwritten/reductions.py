"""Column means, row standard deviations, column argmax and the maximum, by hand.

Rows are split over the ranks.  Row statistics are local; a column mean is
one ``Allreduce`` of the local column sums; a column argmax all-gathers each
rank's local maxima and their global row indices and picks the first
largest; the global maximum is an ``allreduce`` with ``MAX``.
"""

from __future__ import annotations

import numpy

from .common import block_range, new_state, rng


def setup(comm, d: tuple[int, int]) -> dict:
    """Random row block of the matrix."""
    s = new_state(comm)
    lo, hi = block_range(d[0], comm.Get_size(), comm.Get_rank())
    s.update(rows=d[0], lo=lo, x=rng(comm, 11).random((hi - lo, d[1])), out=0.0)
    return s


def step(s: dict) -> None:
    """The four statistics of the workload."""
    from mpi4py import MPI

    comm, x = s["comm"], s["x"]
    col_sum = numpy.empty(x.shape[1])
    comm.Allreduce(x.sum(axis=0), col_sum)
    col_mean = col_sum / s["rows"]
    row_std = x.std(axis=1)
    # Ranks without rows offer -inf, which never wins.
    idx = x.argmax(axis=0) if len(x) else numpy.zeros(x.shape[1], numpy.int64)
    val = x[idx, numpy.arange(x.shape[1])] if len(x) else numpy.full(x.shape[1], -numpy.inf)
    vals = numpy.empty((comm.Get_size(), x.shape[1]))
    idxs = numpy.empty((comm.Get_size(), x.shape[1]), numpy.int64)
    comm.Allgather(val, vals)
    comm.Allgather(idx + s["lo"], idxs)
    col_argmax = idxs[vals.argmax(axis=0), numpy.arange(x.shape[1])]
    xmax = comm.allreduce(float(x.max()) if len(x) else -numpy.inf, op=MPI.MAX)
    s["coll"] += 4
    last_std = row_std[-1] if len(row_std) else 0.0
    s["out"] = float(col_mean[0]) + float(last_std) + float(col_argmax[-1]) + xmax


def result(s: dict) -> float:
    """Combination of the last iteration's figures (rank-local row term)."""
    return s["out"]
