"""Replicated or split: the cost of whole-array statements at sizes around ``replicate_below``.

Run under ``mpiexec -n 2 python -m scaling.crossover``.  For each size, an
elementwise expression with a full sum and a 5-point stencil statement are
timed on arrays replicated on every rank and split over the ranks (fastest
of 7 rounds of 30, each round the slowest rank's time).  Collective.
"""

from __future__ import annotations

import time

from mpi4py import MPI

import spmdarray as sp

SIZES = (32768, 65536, 131072, 262144, 524288)


def _best(f, n: int = 30, rounds: int = 7) -> float:
    """Microseconds per call of ``f``: the fastest round, each the slowest rank's time."""
    comm = MPI.COMM_WORLD
    times = []
    for _ in range(rounds):
        comm.Barrier()
        t = time.perf_counter()
        for _ in range(n):
            f()
        sp.sync()
        times.append(comm.allreduce(time.perf_counter() - t, op=MPI.MAX) / n)
    return min(times) * 1e6


def measure(size: int) -> dict:
    """Per statement (us): ``(x * 2.0 + y).sum()`` and a 5-point stencil, replicated and split."""
    out = {}
    for layout, below in (("replicated", size + 1), ("split", 0)):
        with sp.config.set(replicate_below=below):
            x, y = sp.ones(size), sp.ones(size)
            out[f"elementwise+sum {layout}"] = _best(lambda x=x, y=y: (x * 2.0 + y).sum())
            g = sp.ones((int(size**0.5),) * 2)
            c = g[1:-1, 1:-1]

            def stencil(g=g, c=c):
                c[...] = (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:]) * 0.25

            out[f"stencil {layout}"] = _best(stencil)
    return out


def main() -> None:
    """Print one line per size.  Collective."""
    for size in SIZES:
        m = measure(size)
        if MPI.COMM_WORLD.rank == 0:
            print(f"{size:8d} " + "  ".join(f"{k} {v:8.1f} us" for k, v in m.items()), flush=True)


if __name__ == "__main__":
    main()
