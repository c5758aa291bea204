"""The workloads: NumPy programs that run unchanged on spmdarray.

Each module is one workload.  Its ``setup(np, dims)`` and ``step(np, state)``
take the array namespace as their first argument, ``numpy`` or ``spmdarray``:
the code is the same for both.  Every module also defines:

``UNIT``
    What the throughput counts (``"cells"``, ``"samples"``, ``"flops"``, ...).
``dims(size, ranks, mode)``
    The global problem for ``size`` at ``ranks`` ranks.  ``mode="strong"``
    keeps the global problem fixed; ``mode="weak"`` grows it with ``ranks`` so
    that each rank keeps about the same share.
``work(dims)``
    Units of work in one iteration (the throughput's numerator).
``result(np, state)``
    A float that depends on the data (a checksum), for cross-checks.
"""

from __future__ import annotations

from types import ModuleType

from . import heat3d, matmul, pi, reductions, stencil

WORKLOADS: dict[str, ModuleType] = {
    "stencil": stencil,
    "pi": pi,
    "matmul": matmul,
    "heat3d": heat3d,
    "reductions": reductions,
}

__all__ = ["WORKLOADS"]
