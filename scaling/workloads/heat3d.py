"""Explicit 3-D heat equation: 7-point Laplacian through aliasing views.

The grid is ``n0 x n x n`` float64 with a fixed boundary.  Under weak scaling
the first axis grows with the rank count (``n0 = size * ranks``); under
strong scaling the grid is ``size**3``.
"""

from __future__ import annotations

UNIT = "cells"
SEED = 3
ALPHA = 0.1


def dims(size: int, ranks: int, mode: str) -> tuple[int, int, int]:
    """Shape of the grid, boundary included."""
    return (size * ranks, size, size) if mode == "weak" else (size, size, size)


def work(d: tuple[int, ...]) -> float:
    """Interior cells updated per iteration."""
    return float((d[0] - 2) * (d[1] - 2) * (d[2] - 2))


def setup(np, d: tuple[int, int, int]) -> dict:
    """Random grid, its interior view and the six shifted neighbour views."""
    np.random.seed(SEED)
    u = np.random.rand(*d)
    inner = slice(1, -1)
    return {
        "u": u,
        "c": u[inner, inner, inner],
        "pairs": [
            (u[:-2, inner, inner], u[2:, inner, inner]),
            (u[inner, :-2, inner], u[inner, 2:, inner]),
            (u[inner, inner, :-2], u[inner, inner, 2:]),
        ],
    }


def step(np, s: dict) -> None:
    """``c += alpha * laplacian(u)``, the neighbours summed in opposite pairs."""
    c = s["c"]
    (xm, xp), (ym, yp), (zm, zp) = s["pairs"]
    lap = (xm + xp) + (ym + yp) + (zm + zp) - 6.0 * c
    c[...] = c + ALPHA * lap


def result(np, s: dict) -> float:
    """Sum of the grid."""
    return float(s["u"].sum())
