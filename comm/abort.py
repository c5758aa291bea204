"""An uncaught exception on one rank ends the whole job.

Without this, the failing rank waits in ``MPI_Finalize`` while the others
wait in their next collective, for ever.  When spmdarray first makes a
communicator context, :func:`install` chains a ``sys.excepthook`` that
prints the traceback under a line naming the rank, then calls ``Abort`` on
``COMM_WORLD``, as ``python -m mpi4py`` does.  ``config.abort_on_error``
(``SPMDARRAY_ABORT_ON_ERROR=0``) turns the abort off; an interactive
interpreter never aborts (its excepthook does not end the process).
"""

from __future__ import annotations

import sys
import time
import traceback

from . import watchdog
from .context import MPI, on_new_context

__all__ = ["install"]

_previous = None


def _enabled() -> bool:
    cfg = watchdog._config
    return True if cfg is None else bool(getattr(cfg, "abort_on_error", True))


def _interactive() -> bool:
    return hasattr(sys, "ps1") or bool(sys.flags.interactive) or "IPython" in sys.modules


def _hook(tp, value, tb) -> None:
    mpi = MPI()
    world = mpi.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    abort = size > 1 and _enabled() and not _interactive() and not issubclass(tp, SystemExit)
    abort = abort and mpi.Is_initialized() and not mpi.Is_finalized()
    note = (
        f"spmdarray: aborting the job (MPI_Abort) because rank {rank} raised {tp.__name__}; "
        "set SPMDARRAY_ABORT_ON_ERROR=0 to let the other ranks run on\n"
        if abort
        else ""
    )
    if _previous in (None, sys.__excepthook__) and size > 1:
        # One write of the traceback and the note, so that the ranks' tracebacks do not
        # interleave line by line, and the launcher forwards both or neither.
        text = "".join(traceback.format_exception(tp, value, tb))
        sys.stderr.write(f"spmdarray: uncaught exception on rank {rank} of {size}:\n{text}{note}")
    else:
        (_previous or sys.__excepthook__)(tp, value, tb)
        sys.stderr.write(note)
    if abort:
        sys.stderr.flush()
        # MPI_Abort ends every process at once: give the launcher a moment to forward
        # what this rank just wrote, or the reason for the abort may never be shown.
        time.sleep(0.5)
        watchdog.end_within(watchdog.ABORT_GRACE)
        world.Abort(1)


def install(ctx=None) -> None:
    """Chain the aborting ``sys.excepthook`` (once).  Not collective."""
    global _previous
    if sys.excepthook is _hook:
        return
    _previous = sys.excepthook
    sys.excepthook = _hook


on_new_context(install)
