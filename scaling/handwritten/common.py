"""Block ranges and the ghost-row exchange shared by the hand-written versions."""

from __future__ import annotations

import numpy


def block_range(n: int, parts: int, coord: int) -> tuple[int, int]:
    """Half-open range of ``n`` items owned by ``coord`` of ``parts``.

    The first ``n % parts`` coordinates get one extra item.

    Examples
    --------
    >>> [block_range(10, 4, c) for c in range(4)]
    [(0, 3), (3, 6), (6, 8), (8, 10)]
    """
    q, r = divmod(n, parts)
    lo = coord * q + min(coord, r)
    return lo, lo + q + (1 if coord < r else 0)


def new_state(comm) -> dict:
    """Fresh per-rank state with zeroed send counters."""
    return {"comm": comm, "sent": [0, 0], "coll": 0}


def exchange_ghosts(state: dict, a: numpy.ndarray) -> None:
    """Fill ghost rows ``a[0]`` and ``a[-1]`` from the neighbouring ranks.

    ``a`` holds this rank's rows with one ghost row above and below (along
    axis 0, any number of further axes).  Rank ``r`` sends its first owned
    row to ``r - 1`` and its last to ``r + 1``; the first and last ranks have
    no neighbour on their outer side.  Collective over neighbours.
    """
    comm = state["comm"]
    rank, size = comm.Get_rank(), comm.Get_size()
    reqs = []
    if rank > 0:
        reqs.append(comm.Irecv(a[0], source=rank - 1))
        reqs.append(comm.Isend(a[1], dest=rank - 1))
        state["sent"][0] += a[1].nbytes
        state["sent"][1] += 1
    if rank < size - 1:
        reqs.append(comm.Irecv(a[-1], source=rank + 1))
        reqs.append(comm.Isend(a[-2], dest=rank + 1))
        state["sent"][0] += a[-2].nbytes
        state["sent"][1] += 1
    if reqs:
        from mpi4py import MPI

        MPI.Request.Waitall(reqs)


def rng(comm, seed: int) -> numpy.random.Generator:
    """NumPy generator of this rank, from ``seed`` and the rank."""
    return numpy.random.default_rng([seed, comm.Get_rank()])


def interior_slab(comm, shape: tuple[int, ...], seed: int) -> numpy.ndarray:
    """This rank's slab of a random grid of global ``shape`` with one boundary layer.

    The interior rows ``1 .. shape[0] - 2`` are split over the ranks; the slab
    holds the owned rows plus one row above and below (a ghost row, or the
    global boundary on the first and last ranks).
    """
    lo, hi = block_range(shape[0] - 2, comm.Get_size(), comm.Get_rank())
    return rng(comm, seed).random((hi - lo + 2, *shape[1:]))
