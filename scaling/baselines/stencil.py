"""5-point Jacobi as one hand-written numba kernel per sweep, with mpi4py ghost rows.

The slab layout and halo exchange are those of :mod:`scaling.handwritten.stencil`
(one ghost row above and below, ``Isend``/``Irecv``).  The sweep is a single
pass over the slab: each new row is computed into a row buffer and written
back once the next row no longer needs its old values, with the sum in
NumPy's order ``((((c + n) + e) + w) + s) * 0.2``, so the grid equals the
NumPy version bit for bit.  Memory traffic is one read and one write of the
grid per sweep: the bandwidth floor the fused spmdarray code aims at.
"""

from __future__ import annotations

import numpy
from numba import njit

from ..handwritten.common import exchange_ghosts, interior_slab, new_state


@njit(cache=True, nogil=True, error_model="numpy")
def sweep(a, prev, cur) -> None:  # pragma: no cover - compiled
    """One Jacobi sweep of the interior of ``a`` in place (rows 1..n-2, columns 1..m-2)."""
    n, m = a.shape
    for j in range(m):
        prev[j] = a[0, j]
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            cur[j] = ((((a[i, j] + prev[j]) + a[i, j + 1]) + a[i, j - 1]) + a[i + 1, j]) * 0.2
        for j in range(1, m - 1):
            prev[j] = a[i, j]
            a[i, j] = cur[j]


def setup(comm, d: tuple[int, int]) -> dict:
    """Random local slab of the ``(rows + 2) x (cols + 2)`` grid and two row buffers."""
    s = new_state(comm)
    s["a"] = interior_slab(comm, (d[0] + 2, d[1] + 2), seed=42)
    s["prev"] = numpy.empty(d[1] + 2)
    s["cur"] = numpy.empty(d[1] + 2)
    return s


def step(s: dict) -> None:
    """Exchange ghost rows, then one fused sweep."""
    exchange_ghosts(s, s["a"])
    sweep(s["a"], s["prev"], s["cur"])


def result(s: dict) -> float:
    """Sum of the owned rows over all ranks (boundary rows left out)."""
    s["coll"] += 1
    return s["comm"].allreduce(float(s["a"][1:-1].sum()))
