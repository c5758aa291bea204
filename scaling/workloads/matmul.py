"""Dense matrix product ``C = A @ B`` of square float64 matrices.

Weak scaling keeps the flops per rank constant: ``n = round(size * ranks ** (1/3))``.
Strong scaling multiplies ``size x size`` matrices.
"""

from __future__ import annotations

UNIT = "flops"
SEED = 7


def dims(size: int, ranks: int, mode: str) -> tuple[int, int]:
    """Shape of the matrices."""
    n = round(size * ranks ** (1 / 3)) if mode == "weak" else size
    return (n, n)


def work(d: tuple[int, ...]) -> float:
    """Floating-point operations of one product."""
    return 2.0 * d[0] ** 3


def setup(np, d: tuple[int, int]) -> dict:
    """Two random matrices."""
    np.random.seed(SEED)
    return {"A": np.random.rand(*d), "B": np.random.rand(*d), "C": None}


def step(np, s: dict) -> None:
    """One product."""
    s["C"] = s["A"] @ s["B"]


def result(np, s: dict) -> float:
    """Sum of the last product."""
    return float(s["C"].sum())
