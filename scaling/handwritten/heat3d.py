"""Explicit 3-D heat equation with explicit ghost planes (1-D slab decomposition).

The interior planes along the first axis are split over the ranks; each rank
keeps one ghost plane on each side and sends full ``n1 x n2`` planes to its
neighbours with ``Isend``/``Irecv``.
"""

from __future__ import annotations

from .common import exchange_ghosts, interior_slab, new_state

ALPHA = 0.1


def setup(comm, d: tuple[int, int, int]) -> dict:
    """Random local slab of the grid."""
    s = new_state(comm)
    s["u"] = interior_slab(comm, d, seed=3)
    return s


def step(s: dict) -> None:
    """Exchange ghost planes, then one explicit Euler step."""
    u = s["u"]
    exchange_ghosts(s, u)
    i = slice(1, -1)
    c = u[i, i, i]
    lap = (u[:-2, i, i] + u[2:, i, i]) + (u[i, :-2, i] + u[i, 2:, i]) + (u[i, i, :-2] + u[i, i, 2:]) - 6.0 * c
    c += ALPHA * lap


def result(s: dict) -> float:
    """Sum of the owned planes over all ranks."""
    s["coll"] += 1
    return s["comm"].allreduce(float(s["u"][1:-1].sum()))
