"""Dense matrix product C = A @ B (SUMMA under spmdarray); only the import differs.

mpiexec -n 4 python -m mpi4py examples/matmul.py [-n 2000] [--check]
"""

import argparse
import time

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("-n", type=int, default=2000, help="matrix size (default 2000)")
parser.add_argument("--numpy", action="store_true", help="run with plain NumPy instead")
parser.add_argument("--check", action="store_true", help="verify against NumPy (gathers A, B and C)")
args = parser.parse_args()

if args.numpy:
    import numpy as np
else:
    import spmdarray as np

# spmdarray defers and fuses work: sync() computes everything pending, so a timer
# read after it measures the lines in between and nothing before or after.
sync = getattr(np, "sync", lambda: None)  # plain NumPy computes eagerly

n = args.n
np.random.seed(7)
A = np.random.rand(n, n)
B = np.random.rand(n, n)
C = A @ B  # warm-up: plans, buffers and any JIT compilation, outside the timer
sync()
if not args.numpy:
    A.comm.Barrier()  # every rank starts the timer together
t0 = time.perf_counter()
C = A @ B
sync()
elapsed = time.perf_counter() - t0  # the product alone
trace_like = float(C.sum())
rank = 0 if args.numpy else C.comm.Get_rank()
if args.check:
    import numpy

    ref = numpy.asarray(A) @ numpy.asarray(B)
    err = float(numpy.max(numpy.abs(numpy.asarray(C) - ref)))
if rank == 0:
    print(f"matmul n={n}: sum(C) = {trace_like:.12e}  {elapsed:.3f} s  {2 * n**3 / elapsed / 1e9:.2f} GFLOP/s")
    if args.check:
        print(f"  max |spmdarray - numpy| = {err:.3e}  {'OK' if err <= 1e-12 * n else 'MISMATCH'}")
if args.check and err > 1e-12 * n:
    raise SystemExit(1)
