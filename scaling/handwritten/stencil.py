"""5-point Jacobi with explicit ghost rows (1-D row decomposition).

The interior rows are split over the ranks; each rank keeps one ghost row
above and below.  Per iteration a middle rank sends two full rows of
``cols + 2`` cells (one per neighbour, boundary columns included) with
``Isend``/``Irecv``, then updates its block in place through NumPy views.
"""

from __future__ import annotations

from .common import exchange_ghosts, interior_slab, new_state


def setup(comm, d: tuple[int, int]) -> dict:
    """Random local slab of the ``(rows + 2) x (cols + 2)`` grid."""
    s = new_state(comm)
    s["a"] = interior_slab(comm, (d[0] + 2, d[1] + 2), seed=42)
    return s


def step(s: dict) -> None:
    """Exchange ghost rows, then one sweep."""
    a = s["a"]
    exchange_ghosts(s, a)
    a[1:-1, 1:-1] = (a[1:-1, 1:-1] + a[:-2, 1:-1] + a[1:-1, 2:] + a[1:-1, :-2] + a[2:, 1:-1]) * 0.2


def result(s: dict) -> float:
    """Sum of the owned rows over all ranks (boundary rows left out)."""
    s["coll"] += 1
    return s["comm"].allreduce(float(s["a"][1:-1].sum()))
