"""Errors that depend on data, raised alike on every rank.

An error that depends on values (a NaN cast to an integer under
``errstate(invalid="raise")``, a string that is not a number, a user callback
that fails on one row, a warning turned into an error) strikes only the ranks
whose blocks hold the bad values.  If those ranks raised on their own, the
others would go on to the next collective and wait forever.  :func:`agree` is
the one way such an error is raised: every rank reports whether it failed
(one ``Allreduce`` of a single integer), and only when some rank did, the
lowest failing rank broadcasts its exception, which every rank then raises
with the same type and message.

::

    with agreement(ctx):          # collective
        block[...] = values       # may fail on some ranks only

:func:`errors_may_raise` tells whether NumPy's floating-point errors or its
warnings are set to raise, that is whether agreeing is needed at all.
"""

from __future__ import annotations

import contextlib
import pickle
import warnings

import numpy as np

from .collectives import first_failure
from .context import Context
from .debug import guard
from .io_sync import gather_errors
from .stats import COUNTERS

__all__ = ["agree", "agreement", "agree_gathered", "errors_may_raise", "rebuild"]


def errors_may_raise() -> bool:
    """Whether floating-point errors or NumPy's RuntimeWarnings raise now.  Not collective.

    True under ``numpy.errstate(...="raise")`` (or ``"call"``), and when a
    warnings filter turns RuntimeWarnings (or a class above or below it) into
    errors: ``warnings.simplefilter("error")``, ``python -W error``, pytest's
    ``filterwarnings = error``.  It is a conservative test: an earlier filter
    that ignores the warning is not looked at.
    """
    for v in np.geterr().values():
        if v != "warn" and v != "ignore" and v != "print" and v != "log":
            return True
    for f in warnings.filters:
        if f[0] == "error":
            cat = f[2]
            if issubclass(RuntimeWarning, cat) or issubclass(cat, RuntimeWarning):
                return True
    return False


def _pack(err: BaseException | tuple) -> bytes:
    """The exception as bytes: pickled whole if it can be, else its class and message."""
    if isinstance(err, tuple):
        cls, msg = err
        return pickle.dumps((cls, str(msg)))
    try:
        data = pickle.dumps(err)
        pickle.loads(data)
        return data
    except Exception:  # noqa: BLE001 - an exception that does not pickle: class and message
        return pickle.dumps((type(err), str(err)))


def rebuild(cls: type, message: str) -> BaseException:
    """An instance of exception class ``cls`` whose ``str`` is ``message``.  Not collective.

    ``cls(message)`` where the class accepts it; otherwise an instance made
    without calling its ``__init__`` (NumPy's ``_UFuncNoLoopError`` takes a
    ufunc and dtypes, say), its ``args`` the message.
    """
    try:
        e = cls(message)
        if str(e) == message:
            return e
    except Exception:  # noqa: BLE001 - classes that want other arguments
        pass
    e = cls.__new__(cls)
    e.args = (message,)
    try:
        if str(e) == message:
            return e
    except Exception:  # noqa: BLE001 - a __str__ that reads attributes not set
        pass
    sub = type(cls.__name__, (cls,), {"__str__": lambda self: self.args[0], "__module__": cls.__module__})
    e = sub.__new__(sub)
    e.args = (message,)
    return e


def _unpack(data: bytes) -> BaseException:
    obj = pickle.loads(data)
    if isinstance(obj, BaseException):
        return obj
    cls, msg = obj
    return rebuild(cls, msg)


_NOTE = "(raised on every rank: "


def _note(exc: BaseException, bad: int, size: int) -> None:
    """Say which rank's data failed (once, however many agreements the error passes)."""
    if size > 1 and hasattr(exc, "add_note") and not any(n.startswith(_NOTE) for n in getattr(exc, "__notes__", ())):
        exc.add_note(f"{_NOTE}it occurred on rank {bad} of {size})")


def agree(ctx: Context, err: BaseException | tuple | None) -> None:
    """Raise the lowest failing rank's error on every rank; return if no rank failed.

    Collective: one ``Allreduce`` of a 4-byte flag when no rank failed; when
    one did, a broadcast of its exception from the lowest failing rank.  The
    failing rank raises its own exception object (with its traceback); the
    others raise the same class with the same message.  Every rank's
    exception gets a note naming the rank that failed.

    Parameters
    ----------
    ctx : Context
        The communicator context of the operation.
    err : BaseException, tuple of (type, str), or None
        This rank's failure, or None.
    """
    if ctx.size == 1:
        bad = 0 if err is not None else -1
    else:
        bad = first_failure(ctx, err is not None)
    if bad < 0:
        return
    if ctx.size > 1:
        data = _pack(err) if ctx.rank == bad else None
        COUNTERS["collectives"] += 1
        with guard("agree (the failing rank's error)", ctx.comm, [bad]):
            data = ctx.comm.bcast(data, root=bad)
    if ctx.rank == bad and isinstance(err, BaseException):
        exc = err
    else:
        exc = _unpack(data) if ctx.size > 1 else _unpack(_pack(err))
    _note(exc, bad, ctx.size)
    if exc is err:
        raise exc
    raise exc from None


@contextlib.contextmanager
def agreement(ctx: Context, enabled: bool = True, catch: type | tuple = Exception):
    """Run the ``with`` body, then agree on its outcome with :func:`agree`.

    Collective when ``enabled`` (every rank must enter it, also ranks with
    nothing to do); with ``enabled=False`` it does nothing more than the body.
    Only exceptions of class ``catch`` are agreed; others propagate at once.
    """
    if not enabled:
        yield
        return
    err = None
    try:
        yield
    except catch as e:
        err = e
    agree(ctx, err)


def agree_gathered(ctx: Context, err: BaseException | tuple | None, payload=None) -> list:
    """Every rank's payload, or the lowest failing rank's error raised on every rank.

    Collective: one all-gather of ``(error, payload)`` (use it where a small
    payload is shared anyway; :func:`agree` is cheaper otherwise).

    Returns
    -------
    list
        Each rank's payload, in rank order.
    """
    got = gather_errors(ctx, None if err is None else _pack(err), payload)
    for r, (e, _) in enumerate(got):
        if e is not None:
            exc = err if (r == ctx.rank and isinstance(err, BaseException)) else _unpack(e)
            _note(exc, r, ctx.size)
            if exc is err:
                raise exc
            raise exc from None
    return [p for _, p in got]
