"""5-point Jacobi stencil with aliasing views: the project's main job.

The numerical part is plain NumPy code; only the import differs.  Run::

    mpiexec -n 4 python -m mpi4py examples/stencil.py  # spmdarray (-m mpi4py: an error aborts the job)
    python examples/stencil.py --numpy                  # NumPy, for comparison
    mpiexec -n 3 python examples/stencil.py --check     # compare with NumPy

It prints the result (checksum), the time per iteration, the throughput, and
the halo bytes and messages each rank sent per iteration.
"""

import argparse
import contextlib
import resource
import sys
import time

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("-N", type=int, default=4000, help="interior grid size (default 4000)")
parser.add_argument("--iters", type=int, default=20, help="timed iterations (default 20)")
parser.add_argument("--numpy", action="store_true", help="run with plain NumPy instead")
parser.add_argument("--check", action="store_true", help="verify against NumPy from the same initial grid")
parser.add_argument("--trace", action="store_true", help="print the communication by source line (comm_trace)")
args = parser.parse_args()

if args.numpy:
    import numpy as np
else:
    import spmdarray as np


def jacobi(grid, iters):
    center = grid[1:-1, 1:-1]
    north = grid[0:-2, 1:-1]
    east = grid[1:-1, 2:]
    west = grid[1:-1, 0:-2]
    south = grid[2:, 1:-1]
    for _ in range(iters):
        average = (center + north + east + west + south) * 0.2
        center[:] = average
    return grid


N = args.N
np.random.seed(42)
grid = np.random.rand(N + 2, N + 2)

if args.numpy:
    rank, size = 0, 1
else:
    rank, size = grid.comm.Get_rank(), grid.comm.Get_size()

initial = None
if args.check:
    import numpy

    initial = numpy.asarray(grid)  # gathers: only for the small --check runs

# spmdarray defers and fuses elementwise work: sync() computes everything pending, so
# the timer measures the iterations, not work queued before or computed after them.
sync = getattr(np, "sync", lambda: None)  # plain NumPy computes eagerly

jacobi(grid, 1)  # warm-up: plans are built and cached here
sync()
if args.numpy:
    t0 = time.perf_counter()
    jacobi(grid, args.iters)
    elapsed = time.perf_counter() - t0
    sent = msgs = 0
else:
    grid.comm.Barrier()
    with np.comm_stats() as stats, np.comm_trace() if args.trace else contextlib.nullcontext() as trace:
        t0 = time.perf_counter()
        jacobi(grid, args.iters)
        sync()
        grid.comm.Barrier()
        elapsed = time.perf_counter() - t0
    sent, msgs = stats.bytes_sent, stats.messages_sent
    allsent = grid.comm.allgather(sent)

checksum = float(grid.sum())
peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
peaks = [peak_mib] if args.numpy else grid.comm.allgather(peak_mib)

if args.check:
    import numpy

    ref = jacobi(initial, args.iters + 1)
    err = float(numpy.max(numpy.abs(numpy.asarray(grid) - ref)))
    ok = err <= 1e-12
if rank == 0:
    mode = "numpy" if args.numpy else f"spmdarray on {size} rank(s)"
    print(f"stencil N={N} iters={args.iters} ({mode})")
    print(f"  checksum       {checksum:.12e}")
    print(f"  time/iter      {elapsed / args.iters * 1e3:.3f} ms")
    print(f"  throughput     {N * N * args.iters / elapsed / 1e6:.1f} Mcells/s")
    if not args.numpy:
        per_iter = [s / args.iters for s in allsent]
        print(f"  halo bytes/iter per rank  {', '.join(f'{b:.0f}' for b in per_iter)}")
        print(f"  halo msgs/iter (rank 0)   {msgs / args.iters:.1f}")
    print(f"  peak RSS per rank (MiB)   {', '.join(f'{p:.0f}' for p in peaks)}")
    if args.trace:
        print(trace.table())
    if args.check:
        print(f"  max |spmdarray - numpy|   {err:.3e}  {'OK' if ok else 'MISMATCH'}")
if args.check and not ok:
    sys.exit(1)
