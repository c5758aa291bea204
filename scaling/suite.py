"""The full suite that ``python -m scaling all`` runs, sized for a 2-core machine.

Each entry is ``(workload, mode, size, iters, warmup)``; see each workload's
``dims`` for what ``size`` means.  The sizes keep each timed section between
about 0.1 and 1 s, so the whole suite runs in a few minutes: most of a run's
time is starting ``mpiexec`` and Python.  Strong scaling covers the three
workloads whose global problem is worth splitting (the stencils and matmul)
and runs without peers; weak scaling covers all five with every
implementation.
"""

from __future__ import annotations

SUITE: list[tuple[str, str, int, int, int]] = [
    ("stencil", "weak", 800, 15, 3),
    ("stencil", "strong", 1600, 15, 3),
    ("heat3d", "weak", 64, 8, 2),
    ("heat3d", "strong", 100, 8, 2),
    ("pi", "weak", 1_000_000, 4, 1),
    ("matmul", "weak", 400, 3, 1),
    ("matmul", "strong", 700, 3, 1),
    ("reductions", "weak", 800, 8, 2),
]

#: Implementations left out of strong-scaling entries.
STRONG_SKIPS = ("dask",)

#: The memory benchmark: the stencil at N = 8000 (one 8002 x 8002 grid).
MEMORY = ("stencil", "strong", 8000, 2, 1)
