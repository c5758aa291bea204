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
from .watchdog import arm, disarm

__all__ = [
    "Context",
    "get_context",
    "set_default_comm",
    "default_context",
    "local_rank",
    "on_new_context",
    "at_finalize",
    "MPI",
]

#: Called with each new context right after its communicator is cloned (collective
#: checks, such as the settings agreement of ``spmdarray.settings``).
_ON_NEW: list = []


def on_new_context(check) -> None:
    """Call ``check(ctx)`` on every context made from now on.

    Not collective to register; ``check`` then runs collectively over each
    new context as it is made.
    """
    _ON_NEW.append(check)


#: Called (in order, once) when MPI is finalised: see :func:`at_finalize`.
_AT_FINALIZE: list = []


def at_finalize(fn) -> None:
    """Call ``fn()`` first thing in ``MPI_Finalize``, while MPI still works.  Not collective.

    Finalisation comes from mpi4py at exit or from the program's own
    ``MPI.Finalize()``; either way work that needs MPI (messages still in
    flight, assignments waiting for them) is done before it.  MPI deletes
    the attributes of ``MPI_COMM_SELF`` before anything else when it is
    finalised: an attribute whose delete callback calls the functions.
    """
    if not _AT_FINALIZE:
        mpi = MPI()
        mpi.COMM_SELF.Set_attr(mpi.Comm.Create_keyval(delete_fn=_finalizing), None)
    _AT_FINALIZE.append(fn)


def _finalizing(comm, keyval, value) -> None:
    while _AT_FINALIZE:
        _AT_FINALIZE.pop(0)()


def MPI():  # noqa: N802 - mirrors ``mpi4py.MPI``
    """Import and return ``mpi4py.MPI`` (initialises MPI on first call).

    Not collective: each process imports mpi4py on its own.  The module is kept after
    the first call (the import statement costs about 0.3 us on every collective).
    """
    mpi = _MPI_MODULE[0]
    if mpi is None:
        from mpi4py import MPI as mpi

        _MPI_MODULE[0] = mpi
    return mpi


_MPI_MODULE: list = [None]  # mpi4py.MPI once imported (:func:`MPI`)


class Context:
    """A cloned communicator plus cached sub-communicators.

    Collective (construction clones the communicator).

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        Any intra-communicator, including one made by ``Split``.
    """

    __slots__ = ("comm", "rank", "size", "user_comm", "backend", "_subs", "_local", "__weakref__")

    def __init__(self, comm: Any, backend: Any = None) -> None:
        self.user_comm = comm
        # Where arrays on this context keep their blocks (an object from
        # ``spmdarray._backend``; None: NumPy on the host).  The transport
        # asks it to stage device buffers; this package never imports CuPy.
        self.backend = backend
        self._local: tuple[int, int] | None = None
        arm("Clone (a new communicator context)", comm)
        try:
            self.comm = comm.Clone()
        finally:
            disarm()
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self._subs: dict = {}
        for check in _ON_NEW:
            check(self)

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
            arm("Split (a sub-communicator)", self.comm)
            try:
                sub = self.comm.Split(color, order)
            finally:
                disarm()
            self._subs[key] = sub
        return sub

    def __repr__(self) -> str:
        return f"Context(rank={self.rank}, size={self.size})"


_default: Context | None = None
_by_handle: dict[tuple[int, str], Context] = {}


def local_rank(ctx: Context) -> tuple[int, int]:
    """(rank, size) among the ranks of ``ctx`` on this node.

    Collective over ``ctx`` on first call (``Split_type(COMM_TYPE_SHARED)``);
    cached afterwards.
    """
    if ctx._local is None:
        if ctx.size == 1:
            ctx._local = (0, 1)
        else:
            arm("Split_type (the ranks of this node)", ctx.comm)
            try:
                node = ctx.comm.Split_type(MPI().COMM_TYPE_SHARED, key=ctx.rank)
            finally:
                disarm()
            ctx._local = (node.Get_rank(), node.Get_size())
            node.Free()
    return ctx._local


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


def get_context(comm: Any = None, backend: Any = None) -> Context:
    """Context for ``comm`` (a ``Context``, an ``mpi4py`` communicator or None).

    Collective over ``comm`` the first time that communicator is seen with
    that backend.  ``backend`` (an object with a ``name``) gives arrays of
    another backend their own cloned communicator; None means the host.
    """
    if comm is None:
        ctx = default_context()
        if backend is None or getattr(ctx.backend, "name", "numpy") == backend.name:
            if backend is not None and ctx.backend is None:
                ctx.backend = backend
            return ctx
        comm = ctx.user_comm
    if isinstance(comm, Context):
        if backend is None or getattr(comm.backend, "name", "numpy") == backend.name:
            return comm
        comm = comm.user_comm
    if not hasattr(comm, "Clone"):
        raise TypeError(f"comm must be an mpi4py communicator or None, got {type(comm).__name__}")
    key = (comm.py2f(), getattr(backend, "name", "numpy"))
    ctx = _by_handle.get(key)
    if ctx is None or ctx.user_comm != comm:
        ctx = Context(comm, backend)
        _by_handle[key] = ctx
    elif backend is not None and ctx.backend is None:
        ctx.backend = backend
    return ctx
