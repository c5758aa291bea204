"""The full suite that ``python -m scaling all`` runs, sized for a 2-core machine.

Each entry is ``(workload, mode, size, iters, warmup)``; see each workload's
``dims`` for what ``size`` means.  The sizes keep each timed section between
about 0.1 and 1 s, so the whole suite runs in a few minutes.
"""

from __future__ import annotations

SUITE: list[tuple[str, str, int, int, int]] = [
    ("stencil", "weak", 1000, 20, 3),
    ("stencil", "strong", 2000, 20, 3),
    ("heat3d", "weak", 64, 10, 2),
    ("heat3d", "strong", 100, 10, 2),
    ("pi", "weak", 2_000_000, 5, 1),
    ("pi", "strong", 4_000_000, 5, 1),
    ("matmul", "weak", 500, 3, 1),
    ("matmul", "strong", 800, 3, 1),
    ("reductions", "weak", 1000, 10, 2),
    ("reductions", "strong", 2000, 10, 2),
]

#: The memory benchmark: the stencil at N = 8000 (one 8002 x 8002 grid).
MEMORY = ("stencil", "strong", 8000, 2, 1)
