"""5-point Jacobi iteration with aliasing views (the README's stencil).

The grid is ``(rows + 2) x (cols + 2)`` float64 with a fixed boundary.
Under weak scaling the rows grow with the rank count (``rows = size * ranks``,
``cols = size``), so each rank keeps a ``size x size`` block and its halo
volume stays constant.  Under strong scaling the grid is ``size x size``.
"""

from __future__ import annotations

UNIT = "cells"
SEED = 42


def dims(size: int, ranks: int, mode: str) -> tuple[int, int]:
    """Interior ``(rows, cols)`` of the grid."""
    return (size * ranks, size) if mode == "weak" else (size, size)


def work(d: tuple[int, ...]) -> float:
    """Interior cells updated per iteration."""
    return float(d[0] * d[1])


def setup(np, d: tuple[int, int]) -> dict:
    """Random grid and the five aliasing views of the update."""
    np.random.seed(SEED)
    grid = np.random.rand(d[0] + 2, d[1] + 2)
    return {
        "grid": grid,
        "center": grid[1:-1, 1:-1],
        "north": grid[0:-2, 1:-1],
        "east": grid[1:-1, 2:],
        "west": grid[1:-1, 0:-2],
        "south": grid[2:, 1:-1],
    }


def step(np, s: dict) -> None:
    """One Jacobi sweep, written through the ``center`` view into the grid."""
    s["center"][:] = (s["center"] + s["north"] + s["east"] + s["west"] + s["south"]) * 0.2


def result(np, s: dict) -> float:
    """Sum of the grid."""
    return float(s["grid"].sum())
