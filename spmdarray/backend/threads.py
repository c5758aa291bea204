"""BLAS and OpenMP threads per rank: several ranks on one node must not oversubscribe its cores.

NumPy's BLAS (OpenBLAS, MKL) starts one thread per core in every process.
Under ``mpiexec -n 16`` on a 16-core node that is 256 threads on 16 cores:
the threads that spin between BLAS calls take the cores from the ranks'
other work, message copies included.  npbench's ``stockham_fft`` (preset M,
2 ranks on 2 cores) took 0.47 to 1.0 s that way and 0.16 s with one BLAS
thread per rank.

At ``import spmdarray`` (:func:`apply_at_import`), where the MPI launcher
says that several ranks share this node and the program set no thread count
of its own, each rank's BLAS and OpenMP libraries get the node's cores
divided by its ranks.  ``config.blas_threads`` (``SPMDARRAY_BLAS_THREADS``)
overrides that; 0 leaves the libraries alone.  Nothing here is collective:
each rank reads its own environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from spmdarray.settings import config, environment, set_environment_defaults

try:  # (a dependency; without it only libraries loaded later follow the environment)
    from threadpoolctl import threadpool_info, threadpool_limits
except ImportError:  # pragma: no cover - installed with spmdarray
    threadpool_info = threadpool_limits = None

__all__ = [
    "LAUNCHER_LOCAL_SIZE",
    "USER_THREADS",
    "apply_at_import",
    "blas_threads",
    "ranks_on_node",
    "threads_per_rank",
]

#: Environment variables in which MPI launchers give the number of ranks on this node:
#: MPICH's Hydra and Intel MPI, Open MPI, MVAPICH2.
LAUNCHER_LOCAL_SIZE = ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "MV2_COMM_WORLD_LOCAL_SIZE")

#: Thread counts a program (or its job script) sets itself: any of them leaves "auto" alone.
USER_THREADS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)

#: The threads per rank set at import, or None where the libraries were left alone.
_applied: list = [None]


def ranks_on_node(environ: Mapping[str, str]) -> int | None:
    """Ranks of this job on this node, as the MPI launcher gives them; None where it does not.

    Not collective.
    """
    for name in LAUNCHER_LOCAL_SIZE:
        raw = environ.get(name, "").strip()
        if raw.isdigit() and int(raw) > 0:
            return int(raw)
    return None


def threads_per_rank(setting: int, environ: Mapping[str, str], cores: int, usable: int) -> int | None:
    """The BLAS/OpenMP threads for this rank, or None to leave the libraries alone.  Not collective.

    Parameters
    ----------
    setting : int
        ``config.blas_threads``: -1 (auto), 0 (leave alone) or a count.
    environ : mapping
        The process environment.
    cores : int
        Cores of the node (``os.cpu_count()``).
    usable : int
        Cores this process may run on (its affinity mask: fewer where the
        launcher binds ranks to cores).

    Auto gives ``cores // ranks on the node`` threads (at least 1, at most
    ``usable``) where the launcher says several ranks share the node and none
    of :data:`USER_THREADS` is set; otherwise None.
    """
    if setting > 0:
        return setting
    if setting == 0 or any(environ.get(name) for name in USER_THREADS):
        return None
    local = ranks_on_node(environ)
    if local is None or local < 2:
        return None
    return max(1, min(cores // local, usable))


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # (no affinity on this platform)
        return os.cpu_count() or 1


def apply_at_import() -> int | None:
    """Limit this rank's BLAS and OpenMP threads as :func:`threads_per_rank` decides; return the
    count set, or None.  Not collective.

    The libraries already loaded (NumPy's BLAS) are limited through
    ``threadpoolctl``; the environment variables of :data:`USER_THREADS`
    that are unset are set, for libraries loaded later (SciPy's BLAS) and
    for child processes.
    """
    env = environment(LAUNCHER_LOCAL_SIZE + USER_THREADS)
    n = threads_per_rank(config.blas_threads, env, os.cpu_count() or 1, _usable_cores())
    _applied[0] = n
    if n is None:
        return None
    set_environment_defaults(dict.fromkeys(USER_THREADS, str(n)))
    if threadpool_limits is not None:
        threadpool_limits(limits=n)
    return n


def blas_threads() -> dict:
    """``set_at_import`` (the count :func:`apply_at_import` set, or None) and ``libraries``
    (each loaded BLAS/OpenMP library's ``internal_api`` and ``num_threads`` now).  Not collective."""
    libs = threadpool_info() if threadpool_info is not None else []
    return {
        "set_at_import": _applied[0],
        "libraries": [{"internal_api": lib["internal_api"], "num_threads": lib["num_threads"]} for lib in libs],
    }
