"""The communicator wrapper: the only state spmdarray keeps about MPI.

A :class:`Context` owns a ``Clone()`` of the user's communicator, so library
traffic never matches user messages.  MPI is initialised on first use, not at
import, and no module-level ``COMM_WORLD`` exists: the default context is
created lazily from ``COMM_WORLD`` the first time an array is made without
``comm=``, or from whatever :func:`set_default_comm` was given.
"""

from __future__ import annotations

from typing import Any

from ..decomposition import unravel

__all__ = ["Context", "get_context", "set_default_comm", "default_context", "MPI"]


def MPI():  # noqa: N802 - mirrors ``mpi4py.MPI``
    """Import and return ``mpi4py.MPI`` (initialises MPI on first call)."""
    from mpi4py import MPI as _MPI

    return _MPI


class Context:
    """A cloned communicator plus cached sub-communicators.

    Collective (construction clones the communicator).

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        Any intra-communicator, including one made by ``Split``.
    """

    __slots__ = ("comm", "rank", "size", "user_comm", "_subs", "__weakref__")

    def __init__(self, comm: Any) -> None:
        self.user_comm = comm
        self.comm = comm.Clone()
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self._subs: dict = {}

    def sub(self, dims: tuple[int, ...], axes: tuple[int, ...]):
        """Communicator of the ranks that differ only along grid ``axes``.

        Collective over this context the first time a ``(dims, axes)`` pair
        is asked for; cached afterwards.  Ranks are ordered by their
        C-order coordinates along ``axes``.
        """
        key = (dims, axes)
        sub = self._subs.get(key)
        if sub is None:
            c = unravel(self.rank, dims)
            color = 0
            order = 0
            for k, d in enumerate(dims):
                if k in axes:
                    order = order * d + c[k]
                else:
                    color = color * d + c[k]
            sub = self.comm.Split(color, order)
            self._subs[key] = sub
        return sub

    def __repr__(self) -> str:
        return f"Context(rank={self.rank}, size={self.size})"


_default: Context | None = None
_by_handle: dict[int, Context] = {}


def set_default_comm(comm: Any) -> Context:
    """Use ``comm`` when an array is created without ``comm=``.

    Collective over ``comm``.
    """
    global _default
    _default = get_context(comm)
    return _default


def default_context() -> Context:
    """The default context (``COMM_WORLD`` unless changed).  Collective on first call."""
    global _default
    if _default is None:
        _default = get_context(MPI().COMM_WORLD)
    return _default


def get_context(comm: Any = None) -> Context:
    """Context for ``comm`` (a ``Context``, an ``mpi4py`` communicator or None).

    Collective over ``comm`` the first time that communicator is seen.
    """
    if comm is None:
        return default_context()
    if isinstance(comm, Context):
        return comm
    if not hasattr(comm, "Clone"):
        raise TypeError(f"comm must be an mpi4py communicator or None, got {type(comm).__name__}")
    key = comm.py2f()
    ctx = _by_handle.get(key)
    if ctx is None or ctx.user_comm != comm:
        ctx = Context(comm)
        _by_handle[key] = ctx
    return ctx
