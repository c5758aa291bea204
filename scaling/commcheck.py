"""Exact communication figures of one weak-scaling step, for the tests.

Run under ``mpiexec -n P python -m scaling.commcheck --n N``.  Builds the
stencil workload's grid for a block of ``N x N`` cells per rank, runs one
warm-up sweep, then measures with ``spmdarray.comm_stats()``:

- one stencil sweep (``scaling.workloads.stencil.step``);
- aligned elementwise work on the grid (must send nothing);
- three reductions: ``sum()``, ``mean(axis=0)`` and ``max()``.

Rank 0 prints ``RESULT {json}`` with per-rank lists of every counter and the
block box each rank owns, so that the caller can compute the minimum itself.
"""

from __future__ import annotations

import argparse
import json


def main(argv: list[str] | None = None) -> None:
    """Measure and print the figures (collective over ``COMM_WORLD``)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=8, help="block edge per rank (default 8)")
    a = p.parse_args(argv)

    from mpi4py import MPI

    import spmdarray as sp

    from .workloads import stencil

    comm = MPI.COMM_WORLD
    state = stencil.setup(sp, stencil.dims(a.n, comm.Get_size(), "weak"))
    grid = state["grid"]
    stencil.step(sp, state)  # warm-up: plans are built here

    def counters(block) -> dict:
        with sp.comm_stats() as s:
            block()
        return {"bytes": s.bytes_sent, "msgs": s.messages_sent, "coll": s.collectives,
                "coll_bytes": s.collective_bytes}  # fmt: skip

    def aligned() -> None:
        x = grid * 2.0
        x += grid
        sp.sqrt(x, out=x)
        grid[...] = x - grid

    mine = {
        "stencil": counters(lambda: stencil.step(sp, state)),
        "aligned": counters(aligned),
        "sum": counters(lambda: grid.sum()),
        "mean0": counters(lambda: grid.mean(axis=0)),
        "max": counters(lambda: grid.max()),
        "block": [list(b) for b in grid.layout.block(comm.Get_rank())],
    }
    every = comm.gather(mine, root=0)
    if comm.Get_rank() == 0:
        out = {"shape": list(grid.shape), "dims": list(grid.layout.dims)}
        for key in mine:
            out[key] = [e[key] for e in every]
        print("RESULT " + json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
