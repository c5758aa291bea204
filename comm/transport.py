"""Point-to-point transport: move buffers, count them, nothing else.

Plans (from ``spmdarray.decomposition``) decide *what* moves; this module
posts every ``Irecv`` first, then every ``Isend``, and waits on all of them
together.  Messages between one pair of ranks are matched in posting order
(MPI's non-overtaking rule), so one tag serves every exchange.
"""

from __future__ import annotations

import numpy as np

from .context import MPI, Context
from .stats import COUNTERS

__all__ = ["Exchange", "start_exchange"]

_TAG = 77


def _bytes(a: np.ndarray) -> np.ndarray:
    return a.reshape(-1).view(np.uint8)


class Exchange:
    """In-flight nonblocking exchange.  Call :meth:`wait` to complete it.

    Receives that could not go straight into their destination (it was not
    contiguous) land in a staging buffer that :meth:`wait` copies out.
    """

    __slots__ = ("requests", "copies", "keep")

    def __init__(self) -> None:
        self.requests: list = []
        self.copies: list = []
        self.keep: list = []

    def wait(self) -> None:
        """Complete every request and unpack staged receives.  Not collective."""
        if self.requests:
            MPI().Request.Waitall(self.requests)
            self.requests = []
        for dst, buf in self.copies:
            dst[...] = buf
        self.copies = []
        self.keep = []


def start_exchange(ctx: Context, sends: list, recvs: list) -> Exchange:
    """Post receives then sends.

    Not collective, but every rank named in a plan must make the matching
    call.

    Parameters
    ----------
    ctx : Context
    sends : list of (int, numpy.ndarray)
        Destination rank and the data to send (any layout; packed here).
    recvs : list of (int, numpy.ndarray)
        Source rank and a writable destination of the expected shape.
    """
    ex = Exchange()
    comm = ctx.comm
    for src, dst in recvs:
        if dst.size == 0:
            continue
        if dst.flags.c_contiguous:
            buf = dst
        else:
            buf = np.empty(dst.shape, dst.dtype)
            ex.copies.append((dst, buf))
        ex.requests.append(comm.Irecv([_bytes(buf), MPI().BYTE], source=src, tag=_TAG))
        COUNTERS["messages_received"] += 1
        COUNTERS["bytes_received"] += buf.nbytes
    for dest, data in sends:
        if data.size == 0:
            continue
        buf = np.ascontiguousarray(data)
        ex.keep.append(buf)
        ex.requests.append(comm.Isend([_bytes(buf), MPI().BYTE], dest=dest, tag=_TAG))
        COUNTERS["messages_sent"] += 1
        COUNTERS["bytes_sent"] += buf.nbytes
    return ex
