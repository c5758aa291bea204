"""Synchronisation for file I/O: agreeing on errors and taking turns.

File operations can fail on some ranks only (a missing directory seen by
rank 0, a full disk on one node).  :func:`gather_errors` lets every rank learn
every rank's outcome, so that all of them can raise the same exception instead
of some waiting forever in the next collective.  :func:`wait_turn` and
:func:`pass_turn` run a piece of code on one rank at a time, in rank order
(a token passed from rank ``r`` to ``r + 1``).
"""

from __future__ import annotations

from .context import Context
from .debug import guard
from .stats import COUNTERS
from .trace import traced
from .watchdog import arm, disarm

__all__ = ["gather_errors", "pass_turn", "wait_turn"]

# Point-to-point tag of the turn token.  Transport uses 77 and completes every
# exchange before returning, so the two never meet.
_TURN_TAG = 78


@traced
def gather_errors(ctx: Context, error: tuple[type, str] | None, payload=None) -> list:
    """All-gather each rank's outcome: an error (or None) and a small payload.

    Collective.

    Parameters
    ----------
    ctx : Context
    error : object, or None
        This rank's failure, picklable: ``(exception class, message)`` (the
        class importable), or the pickled exception that
        :func:`spmdarray.comm.agree_gathered` sends.
    payload : object, optional
        Anything small and picklable to share with it (metadata read by
        rank 0, say).

    Returns
    -------
    list of tuple
        Per rank, in rank order: ``(error, payload)``.
    """
    COUNTERS["collectives"] += 1
    if ctx.size == 1:
        return [(error, payload)]
    with guard("gather_errors", ctx.comm):
        return ctx.comm.allgather((error, payload))


@traced
def wait_turn(ctx: Context) -> bool:
    """Block until the rank before this one passes the token.

    Not collective: rank ``r`` waits for rank ``r - 1``'s :func:`pass_turn`;
    rank 0 returns at once.  Every rank must call :func:`pass_turn` once after
    its turn, whatever happens in it.

    Returns
    -------
    bool
        False if an earlier rank reported a failure with its token.
    """
    if ctx.rank == 0:
        return True
    arm("wait_turn (the token of the previous rank)", ctx.comm, [ctx.rank - 1])
    try:
        ok = ctx.comm.recv(source=ctx.rank - 1, tag=_TURN_TAG)
    finally:
        disarm()
    COUNTERS["messages_received"] += 1
    COUNTERS["bytes_received"] += 1
    return bool(ok)


@traced
def pass_turn(ctx: Context, ok: bool) -> None:
    """Hand the token to the next rank (the last rank has no one to tell).

    Not collective.

    Parameters
    ----------
    ctx : Context
    ok : bool
        False tells the later ranks that this rank or an earlier one failed.
    """
    if ctx.rank + 1 < ctx.size:
        ctx.comm.send(bool(ok), dest=ctx.rank + 1, tag=_TURN_TAG)
        COUNTERS["messages_sent"] += 1
        COUNTERS["bytes_sent"] += 1
