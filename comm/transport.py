"""Point-to-point transport: move buffers, count them, nothing else.

Plans (from ``spmdarray.decomposition``) decide *what* moves; this module
posts every ``Irecv`` first, then every ``Isend``, and waits on all of them
together.  Messages between one pair of ranks are matched in posting order
(MPI's non-overtaking rule), so one tag serves every exchange.

Device blocks (a context whose ``backend.is_device``) are handed to the
backend: it gives either the device buffer itself (GPU-aware MPI, after a
stream synchronisation) or a reused pinned host buffer to stage through.
"""

from __future__ import annotations

from time import perf_counter

import numpy as np

from .context import MPI, Context
from .stats import COUNTERS
from .trace import TRACING, note_exchange, note_wait
from .watchdog import arm, disarm

__all__ = ["Exchange", "start_exchange", "wait_all"]

_TAG = 77


def _bytes(a: np.ndarray) -> np.ndarray:
    return a.reshape(-1).view(np.uint8)


class Exchange:
    """In-flight nonblocking exchange.  Call :meth:`wait` to complete it.

    Not collective: it holds this rank's pending sends and receives, which
    its peers complete with their own exchanges.

    Receives that could not go straight into their destination (it was not
    contiguous) land in a staging buffer that :meth:`wait` copies out.
    """

    __slots__ = ("requests", "copies", "keep", "finish", "pinned", "backend", "trace", "comm", "peers")

    def __init__(self, backend=None, comm=None) -> None:
        self.comm = comm
        self.peers: list = []  # the peer rank of each request (the hang report names them)
        self.requests: list = []
        self.copies: list = []
        self.keep: list = []  # send buffers that must outlive the wait
        self.finish: list = []  # unpacking of staged receives
        self.pinned: list = []  # staged send buffers, back to the pool after the wait
        self.backend = backend
        self.trace = None  # set while tracing (``comm.trace``): whom to charge the wait

    def wait(self) -> None:
        """Complete every request and unpack staged receives.  Not collective."""
        if self.requests:
            COUNTERS["waits"] += 1
            arm("halo exchange (point-to-point)", self.comm, self.peers, self.requests)
            try:
                if self.trace is not None:
                    t0 = perf_counter()
                    MPI().Request.Waitall(self.requests)
                    note_wait(self.trace, perf_counter() - t0)
                else:
                    MPI().Request.Waitall(self.requests)
            finally:
                disarm()
            self.requests = []
        for dst, buf in self.copies:
            dst[...] = buf
        for fn in self.finish:
            fn()
        for buf in self.pinned:
            self.backend.release(buf)
        self.copies = []
        self.keep = []
        self.finish = []
        self.pinned = []


def wait_all(exchanges) -> None:
    """Complete the requests of several exchanges with one ``Waitall``.  Not collective.

    Each exchange's own :meth:`Exchange.wait` then only unpacks (staged
    receives, device copies); call it afterwards.
    """
    reqs = [r for ex in exchanges for r in ex.requests]
    if reqs:
        COUNTERS["waits"] += 1
        traced = [ex.trace for ex in exchanges if ex.trace is not None and ex.requests]
        peers = [p for ex in exchanges for p in ex.peers]
        arm("halo exchange (point-to-point)", exchanges[0].comm, peers if len(peers) == len(reqs) else None, reqs)
        try:
            t0 = perf_counter()
            MPI().Request.Waitall(reqs)
        finally:
            disarm()
        share = (perf_counter() - t0) / max(1, len(traced))
        for tag in traced:  # one wait for all: each exchange's line is charged its part
            note_wait(tag, share)
    for ex in exchanges:
        ex.requests = []


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
    be = ctx.backend
    tag = None if TRACING.rec is None else note_exchange(sends, recvs)
    if be is not None and be.is_device:
        ex = _start_device(ctx, be, sends, recvs)
        ex.trace = tag
        return ex
    comm = ctx.comm
    ex = Exchange(None, comm)
    ex.trace = tag
    for src, dst in recvs:
        if dst.size == 0:
            continue
        if dst.flags.c_contiguous:
            buf = dst
        else:
            buf = np.empty(dst.shape, dst.dtype)
            ex.copies.append((dst, buf))
        ex.requests.append(comm.Irecv([_bytes(buf), MPI().BYTE], source=src, tag=_TAG))
        ex.peers.append(src)
        COUNTERS["messages_received"] += 1
        COUNTERS["bytes_received"] += buf.nbytes
    for dest, data in sends:
        if data.size == 0:
            continue
        buf = np.ascontiguousarray(data)
        ex.keep.append(buf)
        ex.requests.append(comm.Isend([_bytes(buf), MPI().BYTE], dest=dest, tag=_TAG))
        ex.peers.append(dest)
        COUNTERS["messages_sent"] += 1
        COUNTERS["bytes_sent"] += buf.nbytes
    return ex


def _start_device(ctx: Context, be, sends: list, recvs: list) -> Exchange:
    """:func:`start_exchange` for device blocks (staged or GPU-aware)."""
    comm = ctx.comm
    ex = Exchange(be, comm)
    byte = MPI().BYTE
    # Receive and send buffers first: staging copies device data to pinned
    # host memory (synchronously); GPU-aware sends may need a contiguous copy.
    rbufs = []
    for src, dst in recvs:
        if dst.size == 0:
            continue
        if isinstance(dst, np.ndarray):  # a host array among device blocks
            buf = dst if dst.flags.c_contiguous else np.empty(dst.shape, dst.dtype)
            if buf is not dst:
                ex.copies.append((dst, buf))
            buf = _bytes(buf)
        else:
            buf, finish = be.recv_buffer(dst)
            if finish is not None:
                ex.finish.append(finish)
        rbufs.append((src, buf, dst.nbytes))
    sbufs = []
    for dest, data in sends:
        if data.size == 0:
            continue
        if isinstance(data, np.ndarray):
            buf, pinned = _bytes(np.ascontiguousarray(data)), None
        else:
            buf, pinned = be.send_buffer(data)
        ex.keep.append(buf if pinned is None else None)
        if pinned is not None:
            ex.pinned.append(pinned)
        sbufs.append((dest, buf, data.nbytes))
    if rbufs or sbufs:
        # Kernels that wrote the send data or still read the receive regions are done.
        be.synchronize()
    for src, buf, n in rbufs:
        ex.requests.append(comm.Irecv([buf, byte], source=src, tag=_TAG))
        ex.peers.append(src)
        COUNTERS["messages_received"] += 1
        COUNTERS["bytes_received"] += n
    for dest, buf, n in sbufs:
        ex.requests.append(comm.Isend([buf, byte], dest=dest, tag=_TAG))
        ex.peers.append(dest)
        COUNTERS["messages_sent"] += 1
        COUNTERS["bytes_sent"] += n
    return ex
