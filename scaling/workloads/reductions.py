"""Reduction-heavy statistics of a tall matrix.

Per iteration: column means, row standard deviations, the row of each
column's maximum, and the global maximum.  Weak scaling has
``size * ranks`` rows of ``size`` columns; strong scaling ``size x size``.
"""

from __future__ import annotations

UNIT = "elements"
SEED = 11


def dims(size: int, ranks: int, mode: str) -> tuple[int, int]:
    """Shape of the matrix."""
    return (size * ranks, size) if mode == "weak" else (size, size)


def work(d: tuple[int, ...]) -> float:
    """Matrix elements visited by each of the four reductions."""
    return float(d[0] * d[1])


def setup(np, d: tuple[int, int]) -> dict:
    """A random matrix."""
    np.random.seed(SEED)
    return {"x": np.random.rand(*d), "out": 0.0}


def step(np, s: dict) -> None:
    """mean(axis=0), std(axis=1), argmax(axis=0) and max()."""
    x = s["x"]
    col_mean = x.mean(axis=0)
    row_std = x.std(axis=1)
    col_argmax = x.argmax(axis=0)
    s["out"] = float(col_mean[0]) + float(row_std[-1]) + float(col_argmax[-1]) + float(x.max())


def result(np, s: dict) -> float:
    """Combination of the last iteration's figures."""
    return s["out"]
