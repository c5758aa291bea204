"""Collectives with deterministic, rank-identical results.

Reductions gather the per-rank partials and combine them in rank order on
every rank, so a replicated result is bit-for-bit the same everywhere: code
such as ``if float(err) < tol: break`` can never send ranks down different
branches.
"""

from __future__ import annotations

import numpy as np

from .context import MPI, Context
from .stats import COUNTERS

__all__ = ["allgather_blocks", "allgather_object", "bcast_array", "barrier"]


def _count(nbytes: int) -> None:
    COUNTERS["collectives"] += 1
    COUNTERS["collective_bytes"] += int(nbytes)


def allgather_blocks(comm, block: np.ndarray, shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    """All-gather one array per rank of ``comm``.

    Collective over ``comm``.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        Communicator (a context's or a sub-communicator).
    block : numpy.ndarray
        This rank's contribution; its dtype must match every other rank's.
    shapes : list of tuple
        Shape contributed by each rank of ``comm``, known to every rank.

    Returns
    -------
    list of numpy.ndarray
        One array per rank, in rank order.
    """
    dtype = block.dtype
    counts = [int(np.prod(s, dtype=np.int64)) * dtype.itemsize for s in shapes]
    total = sum(counts)
    recv = np.empty(total, np.uint8)
    send = np.ascontiguousarray(block).reshape(-1).view(np.uint8)
    _count(send.nbytes)
    if comm.Get_size() == 1:
        recv[...] = send
    else:
        displs = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64).tolist()
        comm.Allgatherv([send, MPI().BYTE], [recv, (counts, displs), MPI().BYTE])
    out, pos = [], 0
    for s, c in zip(shapes, counts):
        out.append(recv[pos : pos + c].view(dtype).reshape(s))
        pos += c
    return out


def allgather_object(ctx: Context, obj):
    """All-gather a small picklable object.  Collective."""
    _count(0)
    return ctx.comm.allgather(obj)


def bcast_array(ctx: Context, arr: np.ndarray | None, root: int, shape: tuple[int, ...], dtype) -> np.ndarray:
    """Broadcast an array of known shape and dtype from ``root``.  Collective."""
    if ctx.rank == root:
        buf = np.ascontiguousarray(arr, dtype=dtype).reshape(shape).copy()
    else:
        buf = np.empty(shape, dtype)
    _count(buf.nbytes if ctx.rank == root else 0)
    if ctx.size > 1 and buf.size:
        ctx.comm.Bcast([buf.reshape(-1).view(np.uint8), MPI().BYTE], root=root)
    return buf


def barrier(ctx: Context) -> None:
    """Synchronise every rank of the context.  Collective."""
    _count(0)
    ctx.comm.Barrier()
