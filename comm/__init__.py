"""The only part of spmdarray that talks to MPI (through mpi4py).

``mpi4py`` is imported on first use, so importing spmdarray does not
initialise MPI.
"""

from . import abort, watchdog  # noqa: F401 - abort installs its hook on import
from .agree import agree, agree_gathered, agreement, errors_may_raise, rebuild
from .collectives import (
    PreparedAllgather,
    allgather_blocks,
    allgather_counts,
    allgather_into,
    allgather_object,
    allgather_same,
    allreduce_max,
    alltoallv,
    barrier,
    bcast_array,
    first_failure,
    reduce_bcast,
    reduce_scatter_blocks,
)
from .context import (
    MPI,
    Context,
    at_finalize,
    default_context,
    get_context,
    local_rank,
    on_new_context,
    set_default_comm,
)
from .debug import CollectiveMismatch, SeedMismatch, check_seed, guard, unchecked
from .io_sync import gather_errors, pass_turn, wait_turn
from .stats import COUNTERS, CommStats, comm_stats
from .trace import CommTrace, TraceRecord, comm_trace, label_frames
from .transport import Exchange, start_exchange, wait_all
from .watchdog import use_config

__all__ = [
    "COUNTERS",
    "CollectiveMismatch",
    "CommStats",
    "CommTrace",
    "TraceRecord",
    "Context",
    "Exchange",
    "MPI",
    "agree",
    "at_finalize",
    "agree_gathered",
    "agreement",
    "errors_may_raise",
    "rebuild",
    "allgather_blocks",
    "PreparedAllgather",
    "allgather_into",
    "allgather_same",
    "allgather_counts",
    "alltoallv",
    "allgather_object",
    "allreduce_max",
    "barrier",
    "check_seed",
    "guard",
    "bcast_array",
    "comm_stats",
    "comm_trace",
    "default_context",
    "first_failure",
    "gather_errors",
    "get_context",
    "label_frames",
    "local_rank",
    "on_new_context",
    "pass_turn",
    "reduce_bcast",
    "reduce_scatter_blocks",
    "SeedMismatch",
    "set_default_comm",
    "start_exchange",
    "unchecked",
    "use_config",
    "wait_all",
    "wait_turn",
]
