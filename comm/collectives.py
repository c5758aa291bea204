"""Collectives with deterministic, rank-identical results.

Reductions gather the per-rank partials and combine them in rank order on
every rank, so a replicated result is bit-for-bit the same everywhere: code
such as ``if float(err) < tol: break`` can never send ranks down different
branches.
"""

from __future__ import annotations

import numpy as np

from .context import MPI, Context
from .debug import guard
from .stats import COUNTERS
from .trace import TRACING, traced
from .watchdog import disarm

__all__ = [
    "allgather_blocks",
    "allgather_same",
    "allgather_into",
    "PreparedAllgather",
    "allgather_counts",
    "allgather_object",
    "alltoallv",
    "bcast_array",
    "barrier",
    "first_failure",
    "reduce_bcast",
    "reduce_scatter_blocks",
]


def _count(nbytes: int) -> None:
    COUNTERS["collectives"] += 1
    COUNTERS["collective_bytes"] += int(nbytes)


@traced
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
        with guard("allgather_blocks", comm):
            comm.Allgatherv([send, MPI().BYTE], [recv, (counts, displs), MPI().BYTE])
    out, pos = [], 0
    for s, c in zip(shapes, counts):
        out.append(recv[pos : pos + c].view(dtype).reshape(s))
        pos += c
    return out


@traced
def allgather_same(comm, block: np.ndarray) -> np.ndarray:
    """All-gather one block of the same shape and dtype from every rank of ``comm``.

    Collective over ``comm``: one ``Allgather``, with no per-call counts or
    displacements (small partials of full reductions).

    Returns
    -------
    numpy.ndarray
        Shape ``(comm size, *block.shape)``: the blocks in rank order.
    """
    send = np.ascontiguousarray(block)
    n = send.nbytes
    _count(n)
    recv = np.empty((comm.Get_size(), *send.shape), send.dtype)
    byte = MPI().BYTE
    with guard("allgather_same", comm):
        # (``[buffer, count, BYTE]``: the bytes of any dtype, without byte views: 2.3 -> 1.4 us)
        comm.Allgather([send, n, byte], [recv, n, byte])
    return recv


@traced
def allgather_into(comm, send: np.ndarray, recv: np.ndarray, nbytes: int) -> np.ndarray:
    """All-gather the ``nbytes`` bytes of the C-contiguous ``send`` from every rank of
    ``comm`` into ``recv`` (``comm size * nbytes`` bytes, C-contiguous), in rank order.

    Collective over ``comm``: one ``Allgather``.  :func:`allgather_same` for a
    caller that keeps its buffers (a full reduction's plan): no allocation and
    no shape arithmetic per call.

    Returns
    -------
    numpy.ndarray
        ``recv``.
    """
    c = COUNTERS  # (``_count``, inline)
    c["collectives"] += 1
    c["collective_bytes"] += nbytes
    byte = MPI().BYTE
    guard("allgather_same", comm)  # (armed; ``try``/``finally`` rather than ``with``: two calls fewer)
    try:
        comm.Allgather([send, nbytes, byte], [recv, nbytes, byte])
    finally:
        disarm()
    return recv


class PreparedAllgather:
    """:func:`allgather_into` of buffers kept by the caller (a full reduction's plan): the
    message specifications are made once, so a call is the ``Allgather``, the counters and
    the hang watchdog.  ``send`` and ``recv`` are C-contiguous; ``recv`` holds ``comm size``
    times ``send``'s bytes.

    Collective over ``comm`` when called: one ``Allgather``; the call returns ``recv``.
    Making it is not collective.  While a trace records, the call goes through
    :func:`allgather_into` (charged to the caller's line).
    """

    __slots__ = ("comm", "send", "recv", "nbytes", "_sspec", "_rspec")

    def __init__(self, comm, send: np.ndarray, recv: np.ndarray) -> None:
        self.comm = comm
        self.send = send
        self.recv = recv
        self.nbytes = n = send.nbytes
        byte = MPI().BYTE
        self._sspec = [send, n, byte]
        self._rspec = [recv, n, byte]

    def __call__(self) -> np.ndarray:
        if TRACING.rec is not None:
            return allgather_into(self.comm, self.send, self.recv, self.nbytes)
        c = COUNTERS  # (``_count``, inline)
        c["collectives"] += 1
        c["collective_bytes"] += self.nbytes
        guard("allgather_same", self.comm)  # (armed: see ``allgather_into``)
        try:
            self.comm.Allgather(self._sspec, self._rspec)
        finally:
            disarm()
        return self.recv


@traced
def allgather_object(ctx: Context, obj):
    """All-gather a small picklable object.  Collective."""
    _count(0)
    with guard("allgather_object", ctx.comm):
        return ctx.comm.allgather(obj)


@traced
def bcast_array(
    ctx: Context, arr: np.ndarray | None, root: int, shape: tuple[int, ...], dtype, out: np.ndarray | None = None
) -> np.ndarray:
    """Broadcast an array of known shape and dtype from ``root``.  Collective.

    ``out``: where to receive it (on ``root``: where to copy ``arr`` to send it), a
    C-contiguous array of ``shape`` and ``dtype`` (a reused buffer: no fresh pages to
    fault in); None allocates one.  Returned.
    """
    if out is not None and (out.shape != tuple(shape) or out.dtype != dtype or not out.flags.c_contiguous):
        raise ValueError(
            f"bcast_array: out has shape {out.shape} and dtype {out.dtype} (C-contiguous: "
            f"{out.flags.c_contiguous}); pass a C-contiguous array of shape {tuple(shape)} and dtype {dtype}"
        )
    if ctx.rank == root:
        if out is None:
            buf = np.array(arr, dtype=dtype, order="C").reshape(shape)  # (one copy, C-ordered: reshape is a view)
        else:
            buf = out
            np.copyto(buf, np.asarray(arr).reshape(shape), casting="unsafe")
    else:
        buf = np.empty(shape, dtype) if out is None else out
    _count(buf.nbytes if ctx.rank == root else 0)
    if ctx.size > 1 and buf.size:
        with guard("bcast_array", ctx.comm, [root]):
            ctx.comm.Bcast([buf.reshape(-1).view(np.uint8), MPI().BYTE], root=root)
    return buf


@traced
def first_failure(ctx: Context, failed: bool) -> int:
    """The lowest rank that reports ``failed``, or -1 if none did.  Collective.

    One all-reduce of a single integer, so every rank takes the same branch.
    """
    _count(4)
    send = np.array([ctx.rank if failed else ctx.size], np.int32)
    recv = np.empty(1, np.int32)
    with guard("first_failure", ctx.comm):
        ctx.comm.Allreduce(send, recv, op=MPI().MIN)
    return -1 if int(recv[0]) == ctx.size else int(recv[0])


@traced
def allreduce_max(ctx: Context, values: tuple[int, ...]) -> tuple[int, ...]:
    """Elementwise maximum over the ranks of a few 64-bit integers.  Collective (one Allreduce)."""
    _count(8 * len(values))
    send = np.array(values, np.int64)
    recv = np.empty_like(send)
    with guard("allreduce_max", ctx.comm):
        ctx.comm.Allreduce(send, recv, op=MPI().MAX)
    return tuple(int(v) for v in recv)


@traced
def barrier(ctx: Context) -> None:
    """Synchronise every rank of the context.  Collective."""
    _count(0)
    with guard("barrier", ctx.comm):
        ctx.comm.Barrier()


_UFUNCS = {
    "sum": np.add,
    "prod": np.multiply,
    "min": np.minimum,
    "max": np.maximum,
    "any": np.logical_or,
    "all": np.logical_and,
}
_OPS: dict = {}
_TYPES: dict = {}
_DTYPE_OF: dict = {}


def _mpi_type(dtype: np.dtype):
    t = _TYPES.get(dtype)
    if t is None:
        t = MPI().BYTE.Create_contiguous(dtype.itemsize).Commit()
        _TYPES[dtype] = t
        _DTYPE_OF[t.py2f()] = dtype
    return t


def _mpi_op(name: str):
    op = _OPS.get(name)
    if op is None:
        ufunc = _UFUNCS[name]

        def combine(inbuf, inoutbuf, datatype) -> None:
            dt = _DTYPE_OF[datatype.py2f()]
            b = np.frombuffer(inoutbuf, dt)
            ufunc(np.frombuffer(inbuf, dt), b, out=b)

        # Non-commutative: MPI then combines in rank order, as the gather path does.
        op = _OPS[name] = MPI().Op.Create(combine, commute=False)
    return op


@traced
def reduce_bcast(comm, block: np.ndarray, name: str) -> np.ndarray:
    """Combine equal-shape blocks with reduction ``name`` and give the result to all.

    Collective over ``comm``.  A rank-ordered ``Reduce`` to rank 0 followed by a
    ``Bcast``, so every rank holds bit-for-bit the same result while no rank
    ever holds more than two blocks (the gather path holds one per rank).

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
    block : numpy.ndarray
        This rank's partial result (ranks with no data pass the identity).
    name : str
        One of sum, prod, min, max, any, all.
    """
    send = np.ascontiguousarray(block)
    recv = np.empty_like(send)
    _count(send.nbytes)
    t = _mpi_type(send.dtype)
    n = send.size
    with guard(f"reduce_bcast({name})", comm):
        comm.Reduce([send, n, t], [recv, n, t], op=_mpi_op(name), root=0)
        comm.Bcast([recv, n, t], root=0)
    return recv


@traced
def reduce_scatter_blocks(comm, blocks: list[np.ndarray], name: str) -> np.ndarray:
    """Combine every rank's ``blocks[r]`` with reduction ``name``, in rank order, on rank ``r``.

    Collective over ``comm``: one ``Reduce_scatter`` with the non-commutative
    operation of :func:`reduce_bcast`, so MPI combines the blocks in rank
    order (it may group them, as ``(b_0 + b_1) + (b_2 + b_3)``, but never
    reorders them), each element on one rank only, and no rank holds more
    than its own partial and one block.  The bytes counted are those
    that leave this rank (every block but its own).

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
    blocks : list of numpy.ndarray
        One block per rank of ``comm``, in rank order, of the same dtype; block
        ``r`` has the same shape on every rank (empty blocks allowed).
    name : str
        One of sum, prod, min, max, any, all.

    Returns
    -------
    numpy.ndarray
        The combined block of this rank, of the shape of ``blocks[rank]``.
    """
    dtype = blocks[0].dtype
    counts = [int(b.size) for b in blocks]
    send = np.concatenate([np.ascontiguousarray(b, dtype=dtype).reshape(-1) for b in blocks])
    mine = blocks[comm.Get_rank()]
    recv = np.empty(mine.shape, dtype)
    _count(send.nbytes - mine.nbytes)
    if sum(counts):
        t = _mpi_type(dtype)
        with guard(f"reduce_scatter_blocks({name})", comm):
            comm.Reduce_scatter([send, sum(counts), t], [recv, counts[comm.Get_rank()], t], counts, _mpi_op(name))
    return recv


@traced
def allgather_counts(comm, n: int) -> np.ndarray:
    """Every rank's integer ``n``, in rank order, on every rank.  Collective over ``comm``.

    One ``Allgather`` of a single int64 per rank (the per-rank counts behind a
    prefix sum: rank ``r`` starts at ``counts[:r].sum()``).
    """
    send = np.array([n], np.int64)
    _count(send.nbytes)
    if comm.Get_size() == 1:
        return send
    recv = np.empty(comm.Get_size(), np.int64)
    with guard("allgather_counts", comm):
        comm.Allgather(send, recv)
    return recv


@traced
def alltoallv(comm, arrays: list[np.ndarray], counts, recv_counts=None) -> tuple[list[np.ndarray], np.ndarray]:
    """Personalised all-to-all of rows grouped by destination rank.

    Collective over ``comm``.  Row ``i`` of every array in ``arrays`` goes to
    the rank whose segment holds it: the first ``counts[0]`` rows to rank 0,
    the next ``counts[1]`` to rank 1, and so on.  One ``Alltoall`` of the
    counts, then one ``Alltoallv`` per array (all arrays share the counts).

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
    arrays : list of numpy.ndarray
        Host arrays with the same number of rows, grouped by destination.
        Each array's dtype and trailing shape must be the same on every rank.
    counts : sequence of int
        Rows for each destination rank (length ``comm.Get_size()``).
    recv_counts : sequence of int, optional
        Rows to expect from each rank, when the caller knows them (a reply
        to an earlier exchange); skips the ``Alltoall`` of the counts.

    Returns
    -------
    (list of numpy.ndarray, numpy.ndarray)
        The received arrays (rows from rank 0 first, then rank 1 ...), and
        the number of rows received from each rank.
    """
    size = comm.Get_size()
    counts = np.asarray(counts, np.int64).reshape(size)
    if size == 1:
        _count(0)
        return [np.ascontiguousarray(a) for a in arrays], counts.copy()
    if recv_counts is None:
        rcounts = np.empty(size, np.int64)
        _count(counts.nbytes)
        with guard("alltoallv (counts)", comm):
            comm.Alltoall(counts, rcounts)
    else:
        rcounts = np.asarray(recv_counts, np.int64).reshape(size)
    out = []
    for a in arrays:
        a = np.ascontiguousarray(a)
        row = int(np.prod(a.shape[1:], dtype=np.int64)) * a.dtype.itemsize
        recv = np.empty((int(rcounts.sum()), *a.shape[1:]), a.dtype)
        sb, rb = counts * row, rcounts * row
        sd = np.concatenate([[0], np.cumsum(sb)[:-1]])
        rd = np.concatenate([[0], np.cumsum(rb)[:-1]])
        _count(int(sb.sum()))
        with guard("alltoallv", comm):
            comm.Alltoallv(
                [a.reshape(-1).view(np.uint8), (sb.tolist(), sd.tolist()), MPI().BYTE],
                [recv.reshape(-1).view(np.uint8), (rb.tolist(), rd.tolist()), MPI().BYTE],
            )
        out.append(recv)
    return out, rcounts
