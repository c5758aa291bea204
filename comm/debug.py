"""``SPMDARRAY_DEBUG=1``: every collective is checked before it runs.

Mismatched collectives pair up silently in MPI: rank 0 in ``sum`` and rank 1
in ``max`` both reach an ``Allreduce`` and combine unrelated numbers.  In the
debug mode each collective first computes a *fingerprint* of the call on
every rank: the spmdarray function the user called (its name and arguments:
shapes and dtypes of arrays, values of scalars, slices and index keys), the
user's source line, the library-level operation, a per-communicator
sequence number and the hash of the agreed settings.  One ``Allreduce`` of a
64-bit hash compares them; only on a mismatch an ``allgather`` of the
descriptions lets every rank raise :class:`CollectiveMismatch` naming each
rank's call, e.g. ``rank 0 called sum(...) at sim.py:12; rank 1 called
max(...) at sim.py:14``.

:func:`guard` is the one hook each collective of :mod:`spmdarray.comm` calls:
it runs the check (debug mode only) and arms the hang watchdog
(:mod:`spmdarray.comm.watchdog`) for the blocking call.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import sys
import time

import numpy as np

from . import watchdog
from .callsite import _internal
from .context import MPI, get_context

__all__ = ["CollectiveMismatch", "SeedMismatch", "check_seed", "enabled", "guard", "unchecked"]

_paused = 0
_seq: dict[int, int] = {}
#: This rank's last checked call per communicator handle (for the watchdog report).
_last: dict[int, str] = {}
#: Every communicator a checked collective used: the watchdog thread answers questions on them.
_comms: dict[int, object] = {}
# Point-to-point tags of the "where are you?" question of a rank that timed out and of the
# answers (transport uses 77 and io_sync 78, both with explicit sources).
_ASK, _ANSWER = 79, 80
_COMM_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "")
# spmdarray's context managers (comm.agreement) run their collectives from contextlib's
# __exit__, on another of its lines when an exception passes: not the user's frame.
_CONTEXTLIB = contextlib.__file__


class CollectiveMismatch(RuntimeError):
    """Ranks reached a collective from different calls (debug mode).

    Not collective itself: the check that finds the mismatch is, and it raises
    this on every rank, naming each rank's call and source line.
    """


class SeedMismatch(ValueError):
    """A random seed differs between the ranks (debug mode).

    Not collective itself: the seed check is, and it raises this on every
    rank, naming each rank's seed.
    """


class _Guard:
    __slots__ = ()

    def __enter__(self) -> _Guard:
        return self

    def __exit__(self, *exc) -> None:
        watchdog.disarm()


_GUARD = _Guard()


class _Unchecked:
    __slots__ = ()

    def __enter__(self) -> None:
        global _paused
        _paused += 1

    def __exit__(self, *exc) -> None:
        global _paused
        _paused -= 1


def unchecked() -> _Unchecked:
    """``with unchecked():`` collectives inside skip the fingerprint check.  Not collective.

    For the settings agreement itself, which must run before any comparison
    that depends on the settings.
    """
    return _Unchecked()


def enabled() -> bool:
    """Whether the debug mode (``config.debug``) is on.  Not collective."""
    cfg = watchdog._config
    return cfg is not None and bool(cfg.debug)


def guard(op: str, comm, peers=None, requests=None) -> _Guard:
    """Check (debug mode) and watch one blocking collective: ``with guard("bcast", comm): comm.Bcast(...)``.

    Collective over ``comm`` in the debug mode (one ``Allreduce``); otherwise
    not: it only arms the hang watchdog until the ``with`` block ends.
    """
    cfg = watchdog._config
    if cfg is not None and cfg.debug and not _paused and comm.Get_size() > 1:
        _check(op, comm)
    watchdog.arm(op, comm, peers, requests)
    return _GUARD


def _arg(v, depth: int = 0) -> str:
    if isinstance(v, type):
        return v.__name__
    if isinstance(v, np.ndarray):  # host data may be rank-local (from_local checks it itself)
        return "numpy.ndarray"
    if hasattr(v, "shape") and hasattr(v, "dtype") and hasattr(v, "layout"):
        return f"array(shape={tuple(v.shape)}, {v.dtype})"
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes, slice, np.generic, np.dtype, type(...))):
        r = repr(v)
        return r if len(r) <= 80 else r[:77] + "..."
    if isinstance(v, (tuple, list)) and depth < 2:
        inner = ", ".join(_arg(x, depth + 1) for x in v[:8])
        if isinstance(v, list):
            return f"[{inner}]"
        return "(" + inner + (", ...)" if len(v) > 8 else ",)" if len(v) == 1 else ")")
    return type(v).__name__


@functools.lru_cache(maxsize=256)
def _short(path: str) -> str:
    rel = os.path.relpath(path) if os.path.isabs(path) else path
    return path if rel.startswith("..") else rel


_settings_hashes: dict = {}


def _settings_hash(cfg) -> int:
    """``cfg.agreed_hash()``, cached by the agreed values (computing it takes tens of microseconds)."""
    names = _settings_hashes.get(None)
    if names is None:
        names = _settings_hashes[None] = tuple(k for k, f in cfg.fields.items() if f.agreed)
    values = tuple(getattr(cfg, k) for k in names)
    try:
        h = _settings_hashes.get(values)
    except TypeError:  # an unhashable value
        return cfg.agreed_hash()
    if h is None:
        h = _settings_hashes[values] = cfg.agreed_hash()
    return h


def _call(depth: int) -> tuple[str, str]:
    """(``name(args)`` of the spmdarray function the user called, ``file:line``)."""
    f = sys._getframe(depth)
    api = None
    while f is not None and (_internal(f.f_code.co_filename) or f.f_code.co_filename == _CONTEXTLIB):
        if f.f_code.co_filename != _CONTEXTLIB:
            api = f
        f = f.f_back
    site = f"{_short(f.f_code.co_filename)}:{f.f_lineno}" if f is not None else "?"
    if api is None:
        return "?", site
    co = api.f_code
    if co.co_filename.startswith(_COMM_DIR):  # a comm helper called directly: its arguments are per rank
        return co.co_name, site
    n = co.co_argcount + co.co_kwonlyargcount
    loc = api.f_locals
    try:
        args = ", ".join(f"{a}={_arg(loc[a])}" for a in co.co_varnames[:n] if a in loc and a != "self")
    except Exception as e:  # noqa: BLE001 - an argument that cannot describe itself
        args = f"<{type(e).__name__}>"
    owner = _arg(loc["self"]) + "." if "self" in loc and co.co_varnames[:1] == ("self",) else ""
    return f"{owner}{co.co_name}({args})", site


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little") >> 2


def _check(op: str, comm) -> None:
    cfg = watchdog._config
    key = comm.py2f()
    seq = _seq.get(key, 0) + 1
    _seq[key] = seq
    call, site = _call(2)
    mine = (call, site, op, seq, _settings_hash(cfg))
    text = f"{call} at {site} [{op} #{seq}]"
    _last[key] = text
    _comms[key] = comm
    h = _hash(repr(mine))
    send = np.array([h, -h], np.int64)
    recv = np.empty(2, np.int64)
    watchdog.arm(f"{op} (debug check of the call)", comm)
    try:
        comm.Allreduce(send, recv, op=MPI().MAX)
        if recv[0] == -recv[1]:
            return
        every = comm.allgather(mine)
    finally:
        watchdog.disarm()
    raise CollectiveMismatch(_mismatch(every, cfg))


def _ranks(rs: list[int]) -> str:
    return f"rank {rs[0]}" if len(rs) == 1 else "ranks " + ",".join(map(str, rs))


def _mismatch(every: list, cfg) -> str:
    groups: dict = {}
    for r, (call, site, op, seq, _) in enumerate(every):
        groups.setdefault((call, site, op, seq), []).append(r)
    parts = [
        f"{_ranks(rs)} called {call} at {site} [{op}, collective #{seq}]"
        for (call, site, op, seq), rs in groups.items()
    ]
    msg = "spmdarray (SPMDARRAY_DEBUG=1): ranks reached a collective from different calls: " + "; ".join(parts)
    if len({e[4] for e in every}) > 1:
        msg += "; the agreed settings differ between the ranks (call config.set alike on every rank)"
    elif len(groups) == 1:
        msg += " (the same call: something the description leaves out differs)"
    return (
        msg + ". Every rank must make the same spmdarray calls in the same order: no collective under `if rank == ...`"
    )


def check_seed(comm, seed, user_only: bool = False) -> None:
    """Debug mode: raise :class:`SeedMismatch` on every rank when ``seed`` differs between ranks.

    Collective over ``comm`` (None: the default communicator) in the debug
    mode; does nothing otherwise.  ``user_only``: check only when called
    straight from the user's code (a Generator built by spmdarray itself is
    not checked).
    """
    if not enabled() or (user_only and _internal(sys._getframe(2).f_code.co_filename)):
        return
    ctx = get_context(comm)
    if ctx.size == 1:
        return
    call, site = _call(2)
    watchdog.arm("random seed (debug check)", ctx.comm)
    try:
        every = ctx.comm.allgather(repr(seed))
    finally:
        watchdog.disarm()
    if len(set(every)) > 1:
        values = "; ".join(f"rank {r}: {v}" for r, v in enumerate(every))
        raise SeedMismatch(
            f"{call} at {site}: the random seed differs between ranks ({values}). spmdarray's random numbers are "
            "global (each element already gets its own value): give every rank the same seed, not seed + rank"
        )


def _answer_questions() -> None:
    """Watchdog thread, every tick in the debug mode: tell a rank that timed out where this one is."""
    if not enabled() or not _comms or MPI().Query_thread() != MPI().THREAD_MULTIPLE:
        return
    status = MPI().Status()
    for key, comm in list(_comms.items()):
        while comm.Iprobe(source=MPI().ANY_SOURCE, tag=_ASK, status=status):
            src = status.Get_source()
            comm.recv(source=src, tag=_ASK)
            last = _last.get(key, "none")
            comm.send(f"{watchdog.where()}; its last checked collective here: {last}", dest=src, tag=_ANSWER)


def _ask_the_others(comm, tick: float) -> str:
    """At a timeout in the debug mode: each other rank's answer (their watchdog threads reply)."""
    if not enabled() or MPI().Query_thread() != MPI().THREAD_MULTIPLE:
        return ""
    me, size = comm.Get_rank(), comm.Get_size()
    others = [r for r in range(size) if r != me]
    reqs = [comm.isend(me, dest=r, tag=_ASK) for r in others]
    answers: dict[int, str] = {}
    status = MPI().Status()
    deadline = time.monotonic() + 2 * tick + 2.0
    while len(answers) < len(others) and time.monotonic() < deadline:
        if comm.Iprobe(source=MPI().ANY_SOURCE, tag=_ANSWER, status=status):
            src = status.Get_source()
            answers[src] = comm.recv(source=src, tag=_ANSWER)
        else:
            time.sleep(0.01)
    del reqs  # the job is aborted next: unanswered questions need no completion
    lines = [f"  rank {r}: " + answers.get(r, "no answer (it has finished, or exited)") for r in others]
    return "Where the other ranks are (SPMDARRAY_DEBUG=1):\n" + "\n".join(lines)


watchdog._pollers.append(_answer_questions)
watchdog._reporters.append(_ask_the_others)
