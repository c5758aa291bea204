"""A first run of the installed wheel, made by tests/run_all.sh from a folder outside the checkout.

::

    python installed_check.py SITE_PACKAGES 1
    mpiexec -n 2 python -m mpi4py installed_check.py SITE_PACKAGES 2

Every rank checks that ``spmdarray``, ``spmdarray.comm`` and ``spmdarray.decomposition``
are imported from ``SITE_PACKAGES`` (the fresh venv the wheel went into, not the
checkout), that the job has the given number of ranks, and that a 5-point stencil on
aliasing views, and the sum of the grid, match NumPy.  At more than one rank the grid
must be split and the stencil must exchange halos, and a small
array is replicated and communicates nothing.  An error on any rank raises; under
``python -m mpi4py`` that aborts the whole job, so ``mpiexec`` exits nonzero.
"""

import importlib
import importlib.metadata
import os
import sys

import numpy

os.environ.setdefault("SPMDARRAY_BACKEND", "numpy")  # "auto" would warn without a GPU


def check(ok, message):
    if not ok:
        raise RuntimeError(f"installed_check.py: {message}")


def stencil(grid, iters):
    center = grid[1:-1, 1:-1]
    north, south = grid[:-2, 1:-1], grid[2:, 1:-1]
    west, east = grid[1:-1, :-2], grid[1:-1, 2:]
    for _ in range(iters):
        center[:] = (center + north + east + west + south) * 0.2
    return grid


def main(site, ranks):
    site = os.path.realpath(site)
    for name in ("spmdarray", "spmdarray.comm", "spmdarray.decomposition"):
        path = os.path.realpath(importlib.import_module(name).__file__)
        check(os.path.commonpath([site, path]) == site, f"{name} is imported from {path}, not from {site}")
    from mpi4py import MPI

    import spmdarray as sp

    world = MPI.COMM_WORLD
    check(world.size == ranks, f"expected {ranks} ranks, got {world.size} (an mpiexec of another MPI?)")
    version = importlib.metadata.version("spmdarray")
    check(sp.__version__ == version, f"spmdarray.__version__ is {sp.__version__}, its metadata says {version}")

    # Past config.replicate_below (262,144 elements): the grid is split over the ranks.
    n, iters = 600, 6
    ref = numpy.random.default_rng(7).random((n + 2, n + 2))
    grid = sp.asarray(ref)
    check(grid.comm.size == ranks, f"the grid is on {grid.comm.size} ranks, not {ranks}")
    if ranks > 1:
        check(grid.local.size < grid.size, f"rank {world.rank} holds the whole grid {grid.shape}")
    with sp.comm_stats() as stats:
        stencil(grid, iters)
    stencil(ref, iters)
    if ranks > 1:
        check(stats.messages_sent > 0, f"rank {world.rank} sent no halo during the stencil")
    err = float(numpy.max(numpy.abs(numpy.asarray(grid) - ref)))
    check(err <= 1e-12, f"stencil differs from NumPy by {err:.3e} on rank {world.rank}")
    total = float(grid.sum())
    check(abs(total - ref.sum()) <= 1e-12 * abs(ref.sum()), f"sum {total!r} differs from NumPy's {ref.sum()!r}")
    check(len(set(world.allgather(total))) == 1, "the sum differs between ranks")
    # Below it, a small array is whole on every rank and computes with no message.
    small = sp.asarray(ref[:45, :45])
    with sp.comm_stats() as small_stats:
        stencil(small, iters)
    check(small.local.size == small.size, f"rank {world.rank} holds part of the small array {small.shape}")
    check(small_stats.messages_sent + small_stats.collectives == 0, "the small stencil communicated")
    if world.rank == 0:
        print(
            f"installed_check.py: spmdarray {version} from {site} on {ranks} rank(s): stencil {n}x{n} "
            f"x{iters} matches NumPy (max error {err:.1e}), sum {total:.12g}, {stats.messages_sent} halo message(s)"
        )


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
