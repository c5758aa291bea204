"""Errors of the HDF5 functions, agreed between ranks before they are raised.

A file operation can fail on one rank only.  Each phase of a read or write
ends with :func:`agree`: one all-gather of every rank's outcome, after which
every rank raises the same exception (the lowest failing rank's), so none is
left waiting in a later collective.
"""

from __future__ import annotations

from spmdarray.comm import agree_gathered

__all__ = ["DatasetNotFoundError", "agree", "attempt"]


class DatasetNotFoundError(KeyError):
    """The HDF5 file has no dataset of the requested name.

    Not collective: raised on every rank, with the same message, by the
    collective call that looked the dataset up.
    """

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def _message(err: BaseException) -> str:
    if isinstance(err, KeyError) and len(err.args) == 1 and isinstance(err.args[0], str):
        return err.args[0]
    return str(err)


def agree(ctx, err: BaseException | None, payload=None, *, which_rank: bool = False):
    """Raise the lowest failing rank's error on every rank, or return rank 0's payload.

    Collective (one all-gather, through :func:`spmdarray.comm.agree_gathered`).

    Parameters
    ----------
    ctx : Context
    err : BaseException or None
        This rank's failure in the phase that just ended.
    payload : object, optional
        Small picklable data; rank 0's is returned to every rank.
    which_rank : bool
        Append ``(on rank r of n)`` to the message: for failures that depend
        on the rank (its own hyperslab, its own file handle).
    """
    outcome = None
    if err is not None:
        msg = _message(err)
        if which_rank and ctx.size > 1:
            msg = f"{msg} (on rank {ctx.rank} of {ctx.size})"
        outcome = (type(err), msg)
    try:
        payloads = agree_gathered(ctx, outcome, payload)
    except Exception as exc:
        if err is not None:
            raise exc from err
        raise
    return payloads[0]


def attempt(fn, *args, **kwargs):
    """Run ``fn``; return ``(result, None)`` or ``(None, exception)``.  Not collective."""
    try:
        return fn(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001 - re-raised on every rank by agree()
        return None, e
