"""Monte-Carlo estimate of pi; only the import differs from NumPy.

mpiexec -n 4 python -m mpi4py examples/pi.py [-n 100000000]
"""

import argparse
import time

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("-n", type=int, default=10**8, help="number of samples (default 10^8)")
parser.add_argument("--numpy", action="store_true", help="run with plain NumPy instead")
args = parser.parse_args()

if args.numpy:
    import numpy as np
else:
    import spmdarray as np

# spmdarray defers and fuses work: sync() before each timer read makes the
# timer measure the lines in between (plain NumPy computes eagerly).
sync = getattr(np, "sync", lambda: None)


def estimate(n):
    x = np.random.uniform(-1, 1, size=n)
    y = np.random.uniform(-1, 1, size=n)
    return np.sum((x**2 + y**2) < 1) / n * 4, x


n = args.n
estimate(min(n, 1 << 18))  # warm-up: any JIT compilation of the fused kernels, outside the timer
np.random.seed(2026)
sync()
t0 = time.perf_counter()
pi, x = estimate(n)
sync()
elapsed = time.perf_counter() - t0
err = abs(pi - 3.141592653589793)
sigma = 4 * (0.25 * 3.141592653589793 * (1 - 0.25 * 3.141592653589793) / n) ** 0.5
rank = 0 if args.numpy else x.comm.Get_rank()
if rank == 0:
    print(f"pi ~ {pi:.8f}  (|error| {err:.2e} = {err / sigma:.2f} sigma)  n={n}  {elapsed:.2f} s")
if err > 5 * sigma:
    raise SystemExit("Monte-Carlo estimate is more than 5 sigma from pi")
