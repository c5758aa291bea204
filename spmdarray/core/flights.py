"""Messages in flight: nonblocking halo and redistribution exchanges not yet waited for.

A deferred elementwise operation posts the messages for its operands when it
is *recorded* (a point every rank reaches in the same order), and waits for
them only when it is *evaluated*, which may happen on some ranks only (a
``t.local`` taken on one rank).  A :class:`Flight` is one such posted
exchange.  Waiting for it is local: every peer posted its matching messages
at the same program point, so a wait never depends on what another rank does
next, and a deferred value can be evaluated on any subset of ranks.

A flight sends from, and receives into, the allocations of the storages it
names.  Before such a storage is written (or its ghost frame receives another
message) the flights touching it are completed; :func:`complete` does that.
Flights whose deferred value was dropped unevaluated are completed when their
storage is next touched, when too many are open, by ``spmdarray.sync()``,
and at exit.
"""

from __future__ import annotations

import atexit

import numpy as np

from spmdarray.comm import at_finalize
from spmdarray.comm import wait_all as _wait_exchanges

__all__ = ["Flight", "complete", "complete_all", "open_flights", "complete_writes", "track", "untrack", "wait_all"]

#: Open flights, oldest first.
_OPEN: list = []
_EXIT_HOOK: list = []
#: Above this many open flights the oldest is completed (bounds held buffers).
MAX_OPEN = 256


class Flight:
    """A posted exchange (or a wait on earlier ones) that a computation depends on.  Not collective.

    ``ex``: the :class:`~spmdarray.comm.Exchange`, or None.  ``deps``: earlier
    flights that fill ghost cells this computation reads (a cached halo
    still arriving).  ``stores``: the storages whose allocation the flight
    reads or writes.  ``ghosts``: receive destinations inside those
    allocations.  ``sends``: the send sources inside them.
    """

    __slots__ = ("ex", "deps", "stores", "ghosts", "sends", "done")

    def __init__(self, ex, deps: list, stores: list, ghosts: list, sends: list) -> None:
        self.ex = ex
        self.deps = deps
        self.stores = stores
        self.ghosts = ghosts
        self.sends = sends
        self.done = False
        if ex is not None:
            for st in stores:
                st.flights.append(self)
            track(self)

    def wait(self) -> None:
        """Complete the exchange and the flights it depends on.  Not collective."""
        if self.done:
            return
        self.done = True
        for d in self.deps:
            d.wait()
        if self.ex is not None:
            self.ex.wait()
            for st in self.stores:
                fl = st.flights
                if self in fl:
                    fl.remove(self)
            untrack(self)
        self.deps = self.stores = self.ghosts = self.sends = ()

    def writes_into(self, arr) -> bool:
        """Whether a message of this flight still lands in memory ``arr`` shares."""
        return not self.done and any(_overlap(g, arr) for g in self.ghosts)

    def reads_from(self, arr) -> bool:
        """Whether a send of this flight still reads memory ``arr`` shares."""
        return not self.done and any(_overlap(s, arr) for s in self.sends)


def track(fl) -> None:
    """Add ``fl`` (anything with ``wait()``) to the open list: completed by :func:`complete_all`,
    ``spmdarray.sync()``, at exit, or when too many are open.  Not collective."""
    if not _OPEN and not _EXIT_HOOK:
        # Registered after mpi4py's own exit handler, so it runs before MPI finalises; and
        # at the start of MPI_Finalize, for a program that calls ``MPI.Finalize()`` itself.
        _EXIT_HOOK.append(atexit.register(complete_all))
        at_finalize(complete_all)
    _OPEN.append(fl)
    if len(_OPEN) > MAX_OPEN:
        _OPEN[0].wait()


def untrack(fl) -> None:
    """Remove ``fl`` from the open list (it was completed).  Not collective."""
    try:
        _OPEN.remove(fl)
    except ValueError:
        pass


def _overlap(a, b) -> bool:
    if not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray):
        return True  # device blocks: assume they overlap
    if not np.may_share_memory(a, b):
        return False
    try:
        return np.shares_memory(a, b, max_work=1 << 16)
    except np.exceptions.TooHardError:
        return True


def wait_all(flights) -> None:
    """Complete several flights, and those they depend on, with one wait for all their messages.

    Not collective.  A fused expression posts one exchange per operation
    that needs cells of other ranks; its evaluation waits for all of them at
    once (one ``Waitall``), not once per operation.
    """
    pending: list = []
    seen: set = set()
    todo = list(flights)
    while todo:
        fl = todo.pop()
        if fl.done or id(fl) in seen:
            continue
        seen.add(id(fl))
        pending.append(fl)
        todo.extend(fl.deps)
    exchanges = [fl.ex for fl in pending if fl.ex is not None]
    if len(exchanges) > 1:
        _wait_exchanges(exchanges)
    for fl in flights:
        fl.wait()  # unpacks; the messages have all arrived


def complete(st, keep=()) -> None:
    """Complete every flight reading or writing storage ``st`` (except those in ``keep``).  Not collective."""
    for fl in list(st.flights):
        if fl not in keep:
            fl.wait()


def complete_all() -> None:
    """Complete every open flight.  Not collective."""
    while _OPEN:
        _OPEN[0].wait()


def complete_writes() -> None:
    """Complete every open entry that is not a :class:`Flight` (the fuser's pending writes), oldest first.

    Not collective.
    """
    for fl in [f for f in _OPEN if type(f) is not Flight]:
        fl.wait()


def open_flights() -> int:
    """Number of exchanges posted and not yet waited for on this rank.  Not collective."""
    return len(_OPEN)
