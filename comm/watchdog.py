"""The hang watchdog: a rank never waits silently in a spmdarray collective.

Every collective and halo wait of :mod:`spmdarray.comm` is *armed* here
(:func:`arm` before the blocking MPI call, :func:`disarm` after it): two
assignments and one clock read, nothing else on the calling thread.  A
daemon thread, started on the first wait, wakes up a few times per timeout;
when the armed wait is older than ``config.hang_timeout`` seconds it prints
the waiting thread's Python stack, the operation, the user's call site and
the peers that have not arrived (halo waits, where MPI can tell), then
aborts the job (``MPI_Abort``): a hang becomes an error message.

The thread reads the timeout at every tick, so ``spmdarray.config.set(
hang_timeout=...)`` takes effect at once; 0 turns the watchdog off.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback

from .callsite import _internal

__all__ = ["arm", "describe_peers", "disarm", "use_config", "where"]

#: The settings object (``spmdarray.config``), given by spmdarray.settings.
_config = None
#: The armed wait: (start time, operation, communicator, peers, thread id, requests), or None.
_slot: tuple | None = None
_thread: threading.Thread | None = None
_lock = threading.Lock()
#: ``poll()`` called by the thread at every tick (the debug mode answers other ranks' questions).
_pollers: list = []
#: ``report(comm, tick) -> str`` called at a timeout, for more lines (the debug mode asks the
#: other ranks which call they are in).
_reporters: list = []


def use_config(config) -> None:
    """Read ``hang_timeout`` (and the debug settings) from ``config`` from now on.  Not collective."""
    global _config
    _config = config


def _timeout() -> float:
    if _config is None:
        return 0.0
    return float(getattr(_config, "hang_timeout", 0) or 0)


def arm(op: str, comm, peers=None, requests=None) -> None:
    """Start timing a wait of this thread in ``op`` over ``comm``.  Not collective.

    Parameters
    ----------
    op : str
        What is waited for (``"allreduce"``, ``"halo exchange"`` ...).
    comm : mpi4py.MPI.Comm
        The communicator of the wait (its ``Abort`` ends the job).
    peers : list of int, optional
        Ranks of ``comm`` this wait depends on, when known.
    requests : list, optional
        One request per entry of ``peers``; at a timeout, the incomplete ones
        name the peers that have not arrived.
    """
    global _slot
    _slot = (time.monotonic(), op, comm, peers, threading.get_ident(), requests)
    if _thread is None:
        _start()


def disarm() -> None:
    """The wait armed by :func:`arm` has ended.  Not collective."""
    global _slot
    _slot = None


def _start() -> None:
    global _thread
    with _lock:
        if _thread is None:
            t = threading.Thread(target=_run, name="spmdarray-watchdog", daemon=True)
            t.start()
            _thread = t


def _tick(limit: float) -> float:
    # A few ticks per timeout: a hang is reported within 25% of it.
    return min(1.0, limit / 4) if limit > 0 else 1.0


def _run() -> None:
    while True:
        limit = _timeout()
        time.sleep(_tick(limit))
        for poll in _pollers:
            poll()
        slot = _slot
        if slot is None or limit <= 0:
            continue
        waited = time.monotonic() - slot[0]
        if waited > limit and _slot is slot:
            _fire(slot, waited, limit)
            return


def where(ident: int | None = None) -> str:
    """Where thread ``ident`` (default: the main thread) is: its wait, or its user frame.  Not collective."""
    slot = _slot
    if slot is not None and (ident is None or slot[4] == ident):
        file, line, func = _user_frame(sys._current_frames().get(slot[4]))
        return f"waits in {slot[1]} called at {file}:{line} in {func}"
    ident = threading.main_thread().ident if ident is None else ident
    file, line, func = _user_frame(sys._current_frames().get(ident))
    return f"runs {file}:{line} in {func}, outside any spmdarray collective"


def describe_peers(comm, peers, requests) -> str:
    """Which peers a wait still needs: from incomplete ``requests`` when given.  Not collective."""
    if requests:
        missing = []
        for rank, req in zip(peers, requests):
            try:
                done = req.Get_status()
            except Exception:  # noqa: BLE001 - the report goes on without it
                done = False
            if not done:
                missing.append(rank)
        if missing:
            return f"ranks {sorted(set(missing))} have not sent or received their messages yet"
        return "every message has arrived"
    if peers:
        return f"waits for ranks {sorted(set(peers))}"
    return f"waits for the other {comm.Get_size() - 1} rank(s) of its communicator (which are unknown)"


def _user_frame(frame) -> tuple[str, int, str]:
    f = frame
    while f is not None:
        if not _internal(f.f_code.co_filename):
            return f.f_code.co_filename, f.f_lineno, f.f_code.co_name
        f = f.f_back
    return "?", 0, "?"


#: Seconds a process that calls ``MPI_Abort`` may take to end before the kernel ends it.
ABORT_GRACE = 10


def end_within(seconds: int) -> None:
    """Make sure this process ends within ``seconds``, even if ``MPI_Abort`` itself blocks.
    Not collective.

    Arms ``SIGALRM`` while its action is the default one (terminate the
    process); a program that handles ``SIGALRM`` itself is left alone.  Once
    the process is gone, the launcher ends the others, as for any rank that
    dies.  Called from any thread, just before ``Abort``.
    """
    try:
        if signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None):
            signal.alarm(seconds)
    except (AttributeError, ValueError, OSError):  # no SIGALRM on this platform
        pass


def _fire(slot: tuple, waited: float, limit: float) -> None:
    t0, op, comm, peers, ident, requests = slot
    frame = sys._current_frames().get(ident)
    stack = "".join(traceback.format_stack(frame)) if frame is not None else "(stack not available)\n"
    file, line, func = _user_frame(frame)
    try:
        rank, size = comm.Get_rank(), comm.Get_size()
    except Exception:  # noqa: BLE001
        rank, size = -1, -1
    lines = [
        f"spmdarray: rank {rank} of {size} waited {waited:.1f} s (hang_timeout {limit:g} s) in {op}, "
        f"called at {file}:{line} in {func}; it {describe_peers(comm, peers, requests)}.",
    ]
    for report in _reporters:
        try:
            extra = report(comm, _tick(limit))
        except Exception as e:  # noqa: BLE001 - the abort must happen whatever the report does
            extra = f"(no report from the other ranks: {type(e).__name__}: {e})"
        if extra:
            lines.append(extra)
    lines += [
        "The other ranks are not making the same call: a collective inside `if rank == ...`, a rank that "
        "raised or left the loop early, or calls in a different order. Run with SPMDARRAY_DEBUG=1 to check "
        "every collective's call site; raise SPMDARRAY_HANG_TIMEOUT (0 turns this off) if the wait is legitimate.",
        f"Stack of rank {rank} (pid {os.getpid()}):",
        stack.rstrip(),
        f"spmdarray: aborting the job (MPI_Abort) because rank {rank} hung.",
    ]
    sys.stderr.write("\n".join(lines) + "\n")
    sys.stderr.flush()
    end_within(ABORT_GRACE)
    try:
        comm.Abort(1)
    except Exception:  # noqa: BLE001 - no communicator to abort: end this process
        from mpi4py import MPI  # noqa: PLC0415 - already imported by then; never at import time

        MPI.COMM_WORLD.Abort(1)
    os._exit(1)
