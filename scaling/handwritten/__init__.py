"""Hand-written mpi4py + NumPy versions of the workloads.

What a skilled user writes without a library: a 1-D decomposition along the
first axis (``block_range``, the same ``divmod`` split as spmdarray),
explicit ghost rows exchanged with ``Isend``/``Irecv``, and collectives for
reductions.  Each module has ``setup(comm, dims)``, ``step(state)`` and
``result(state)``; ``state["sent"]`` counts the bytes and messages this rank
sends point to point, and ``state["coll"]`` the collective calls, so the
driver can put them next to spmdarray's counters.

The local data are generated with NumPy from a per-rank seed: the values
differ from NumPy's and spmdarray's, the amount of work does not.
"""

from __future__ import annotations

from types import ModuleType

from . import heat3d, matmul, pi, reductions, stencil

IMPLS: dict[str, ModuleType] = {
    "stencil": stencil,
    "pi": pi,
    "matmul": matmul,
    "heat3d": heat3d,
    "reductions": reductions,
}

__all__ = ["IMPLS"]
