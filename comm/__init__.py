"""The only part of spmdarray that talks to MPI (through mpi4py).

``mpi4py`` is imported on first use, so importing spmdarray does not
initialise MPI.
"""

from .agree import agree, agree_gathered, agreement, errors_may_raise, rebuild
from .collectives import (
    allgather_blocks,
    allgather_counts,
    allgather_object,
    allreduce_max,
    alltoallv,
    barrier,
    bcast_array,
    first_failure,
    reduce_bcast,
)
from .context import MPI, Context, default_context, get_context, local_rank, on_new_context, set_default_comm
from .io_sync import gather_errors, pass_turn, wait_turn
from .stats import COUNTERS, CommStats, comm_stats
from .trace import CommTrace, TraceRecord, comm_trace, label_frames
from .transport import Exchange, start_exchange

__all__ = [
    "COUNTERS",
    "CommStats",
    "CommTrace",
    "TraceRecord",
    "Context",
    "Exchange",
    "MPI",
    "agree",
    "agree_gathered",
    "agreement",
    "errors_may_raise",
    "rebuild",
    "allgather_blocks",
    "allgather_counts",
    "alltoallv",
    "allgather_object",
    "allreduce_max",
    "barrier",
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
    "set_default_comm",
    "start_exchange",
    "wait_turn",
]
