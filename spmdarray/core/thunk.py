"""What an ``ndarray`` holds: stored data or a deferred computation, behind one interface.

``ndarray._s`` is a :class:`Thunk`.  Two kinds exist, as cuPyNumeric has
eager and deferred thunks:

* :class:`~spmdarray.core.storage.Storage` (``deferred = False``): this
  rank's allocation of a base array;
* :class:`~spmdarray.fusion.record.Node` (``deferred = True``): an
  elementwise computation recorded but not run yet.

Code never tests the type: it asks ``thunk.deferred`` and calls
``thunk.stored(x)``, which gives the storage of the array ``x`` holding the
thunk, computing it first if needed.  A stored thunk that deferred arrays
read (``READERS``) has them computed before it is handed out, so that a
write cannot change a value computed earlier.

Nothing here is collective: evaluating a deferred value waits only for
messages posted when it was recorded.
"""

from __future__ import annotations

import sys

from spmdarray.core.flights import complete_all, complete_writes
from spmdarray.core.refs import LOCAL

__all__ = ["Thunk", "READERS", "PENDING", "flush", "sync", "Quiet"]


class Thunk:
    """The interface of ``ndarray._s``.  Not collective."""

    __slots__ = ()

    #: True for a value not computed yet.
    deferred: bool = False
    #: A pending assignment of this deferred value (``spmdarray.fusion.record.Write``), or None.
    write = None

    def stored(self, x):
        """The :class:`~spmdarray.core.storage.Storage` of ``x`` (whose ``_s`` is ``self``),
        computed first if deferred, with nothing left in flight into it."""
        raise NotImplementedError(f"{type(self).__name__}.stored")

    def materialise(self, x):
        """Compute the deferred ``x`` into a fresh allocation (deferred thunks only)."""
        raise NotImplementedError(f"{type(self).__name__}.materialise")

    def subtree(self) -> set:
        """ids of the deferred arrays this thunk computes inside its own kernel."""
        return set()


#: id(Storage) -> list of weak references to deferred arrays reading it.
READERS: dict = {}
#: Weak references to every deferred array, in creation order (for :func:`sync`).
PENDING: list = []


class Quiet:
    """``Quiet.depth > 0`` while the fuser reads storage itself: no flushing, no waits."""

    depth = 0


#: Holders of an unnamed deferred operand seen in :func:`flush` besides its
#: local variable there: its parent node's argument tuple.  A user's name, a
#: container or any other holder makes one more (counted from the measured
#: baseline :data:`spmdarray.core.refs.LOCAL`, so on any interpreter).
_TREE_HOLDERS = 1


def flush(st, keep=None) -> None:
    """Compute every deferred array that reads storage ``st`` (except ``keep``).  Not collective."""
    refs = READERS.pop(id(st), None)
    if not refs:
        return
    inner = keep._s.subtree() if keep is not None and keep._s.deferred else set()
    kept = []
    for r in refs:
        y = r()
        if y is None or not y._s.deferred:
            continue
        if y is keep:
            kept.append(r)
        elif id(y) in inner and sys.getrefcount(y) - LOCAL <= _TREE_HOLDERS:
            # An unnamed operand inside ``keep``'s own tree: computed inside its kernel.
            kept.append(r)
        else:
            y._s.materialise(y)
    if kept:
        READERS.setdefault(id(st), []).extend(kept)


def sync() -> None:
    """Compute every deferred array now and complete every message in flight.

    Not collective: safe on any subset of ranks (it waits only for messages
    that every rank posted already); every rank calling it, as in an SPMD
    program, is the usual case.  Call it before reading a timer: evaluation
    is deferred and fused, so the cost of a line shows up where its result
    is first used.
    """
    # Pending assignments first: each computes its value into its destination, and
    # the parts of that value's tree are then dropped, not computed on their own.
    complete_writes()
    refs = list(PENDING)
    PENDING.clear()
    for r in refs:
        y = r()
        if y is not None and y._s.deferred:
            y._s.materialise(y)
    complete_all()
