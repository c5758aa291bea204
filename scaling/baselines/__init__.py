"""Hand-written fused baselines: numba kernels with hand-written mpi4py halos.

They are the ceiling the fused spmdarray code is compared with (``--impl
baseline`` in :mod:`scaling.bench`); each module has ``setup(comm, dims)``,
``step(state)`` and ``result(state)`` like :mod:`scaling.handwritten`.
"""

from __future__ import annotations

from . import stencil

IMPLS = {"stencil": stencil}
