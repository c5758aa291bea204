"""Row-block matrix product with one ``Allgather`` of ``B`` per product.

``A``, ``B`` and ``C`` are split into row blocks.  Each product all-gathers
the row blocks of ``B`` (every rank then holds all of ``B``, ``n**2`` values)
and computes its rows ``C_local = A_local @ B``.  Simple, and memory-hungry
next to SUMMA: a rank receives all of ``B`` every time.
"""

from __future__ import annotations

import numpy

from .common import block_range, new_state, rng


def setup(comm, d: tuple[int, int]) -> dict:
    """Random row blocks of ``A`` and ``B``; the row counts of every rank."""
    s = new_state(comm)
    n, size = d[0], comm.Get_size()
    counts = [block_range(n, size, r)[1] - block_range(n, size, r)[0] for r in range(size)]
    g = rng(comm, 7)
    mine = counts[comm.Get_rank()]
    s.update(n=n, counts=counts, A=g.random((mine, n)), B=g.random((mine, n)), C=None)
    s["Bfull"] = numpy.empty((n, n))
    return s


def step(s: dict) -> None:
    """Gather ``B``, multiply the local rows."""
    n = s["n"]
    counts = [c * n for c in s["counts"]]
    s["comm"].Allgatherv(s["B"], [s["Bfull"], counts])
    s["coll"] += 1
    s["C"] = s["A"] @ s["Bfull"]


def result(s: dict) -> float:
    """Sum of the last product over all ranks."""
    s["coll"] += 1
    return s["comm"].allreduce(float(s["C"].sum()))
