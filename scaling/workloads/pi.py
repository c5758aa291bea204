"""Monte-Carlo estimate of pi: random draws, one elementwise test, one sum.

Each iteration draws ``n`` points in the unit square and counts those inside
the quarter circle.  Weak scaling draws ``size * ranks`` points per
iteration, strong scaling ``size``.
"""

from __future__ import annotations

UNIT = "samples"
SEED = 2026


def dims(size: int, ranks: int, mode: str) -> tuple[int]:
    """Points drawn per iteration."""
    return (size * ranks,) if mode == "weak" else (size,)


def work(d: tuple[int, ...]) -> float:
    """Points per iteration."""
    return float(d[0])


def setup(np, d: tuple[int]) -> dict:
    """Seed the generator; the estimate of the last iteration starts at 0."""
    np.random.seed(SEED)
    return {"n": d[0], "pi": 0.0}


def step(np, s: dict) -> None:
    """Draw, test, count."""
    x = np.random.random(s["n"])
    y = np.random.random(s["n"])
    s["pi"] = 4.0 * float(np.sum(x * x + y * y < 1.0)) / s["n"]


def result(np, s: dict) -> float:
    """The last estimate of pi."""
    return s["pi"]
