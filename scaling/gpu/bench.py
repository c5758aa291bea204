"""GPU benchmarks: spmdarray on CuPy blocks against the same code in plain CuPy.

Run on a machine with a GPU (``SPMDARRAY_BACKEND=cupy``)::

    python scaling/gpu/bench.py stencil -N 16000 --iters 20     # 1 rank: also plain CuPy
    mpiexec -n 2 python scaling/gpu/bench.py stencil -N 16000   # ranks sharing the GPU
    python scaling/gpu/bench.py matmul -n 8192

Each prints one ``RESULT`` line per implementation (rank 0 only): the
workload, ranks, seconds per iteration, throughput, and for spmdarray the
halo bytes each rank sent per iteration.  Timings synchronise the device.
At one rank the spmdarray grid is compared with the plain CuPy one.
"""

from __future__ import annotations

import argparse
import time

import cupy

import spmdarray as sp


def _sync() -> None:
    cupy.cuda.get_current_stream().synchronize()


def jacobi(grid, iters: int):
    center = grid[1:-1, 1:-1]
    north = grid[0:-2, 1:-1]
    east = grid[1:-1, 2:]
    west = grid[1:-1, 0:-2]
    south = grid[2:, 1:-1]
    for _ in range(iters):
        center[:] = (center + north + east + west + south) * 0.2
    return grid


def _timed(fn, comm=None) -> float:
    _sync()
    if comm is not None:
        comm.Barrier()
    t0 = time.perf_counter()
    fn()
    _sync()
    if comm is not None:
        comm.Barrier()
    return time.perf_counter() - t0


def stencil(n: int, iters: int) -> None:
    sp.random.seed(42)
    grid = sp.random.rand(n + 2, n + 2)
    comm = grid.comm
    rank, size = comm.Get_rank(), comm.Get_size()
    assert sp.backend_info()["backend"] == "cupy", "run with SPMDARRAY_BACKEND=cupy"
    plain = grid.local.copy() if size == 1 else None
    jacobi(grid, 1)  # warm-up: plans, kernels
    with sp.comm_stats() as st:
        t_sp = _timed(lambda: jacobi(grid, iters), comm)
    sent = comm.allgather(st.bytes_sent // iters)
    cells = n * n * iters
    if rank == 0:
        print(
            f"RESULT stencil spmdarray ranks={size} N={n} s/iter={t_sp / iters:.6f} "
            f"Mcells/s={cells / t_sp / 1e6:.1f} halo_bytes/iter={sent}",
            flush=True,
        )
    if plain is not None:
        jacobi(plain, 1)
        t_cp = _timed(lambda: jacobi(plain, iters))
        diff = float(cupy.abs(plain - grid.local).max())
        print(
            f"RESULT stencil cupy ranks=1 N={n} s/iter={t_cp / iters:.6f} "
            f"Mcells/s={cells / t_cp / 1e6:.1f} max|spmdarray-cupy|={diff:.3e} "
            f"ratio_spmdarray_to_cupy={t_cp / t_sp:.3f}",
            flush=True,
        )


def matmul(n: int, reps: int) -> None:
    sp.random.seed(1)
    a = sp.random.rand(n, n)
    b = sp.random.rand(n, n)
    comm = a.comm
    rank, size = comm.Get_rank(), comm.Get_size()
    c = a @ b  # warm-up
    t_sp = _timed(lambda: [a @ b for _ in range(reps)], comm) / reps
    flops = 2.0 * n**3
    if rank == 0:
        print(f"RESULT matmul spmdarray ranks={size} n={n} s={t_sp:.5f} TFLOP/s={flops / t_sp / 1e12:.2f}", flush=True)
    if size == 1:
        ca, cb = a.local.copy(), b.local.copy()
        cc = ca @ cb
        t_cp = _timed(lambda: [ca @ cb for _ in range(reps)]) / reps
        diff = float(cupy.abs(cc - c.local).max())
        print(
            f"RESULT matmul cupy ranks=1 n={n} s={t_cp:.5f} TFLOP/s={flops / t_cp / 1e12:.2f} "
            f"max|spmdarray-cupy|={diff:.3e} ratio_spmdarray_to_cupy={t_cp / t_sp:.3f}",
            flush=True,
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workload", choices=["stencil", "matmul"])
    p.add_argument("-N", type=int, default=16000, help="stencil interior size")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("-n", type=int, default=8192, help="matmul size")
    p.add_argument("--reps", type=int, default=5)
    args = p.parse_args()
    if args.workload == "stencil":
        stencil(args.N, args.iters)
    else:
        matmul(args.n, args.reps)


if __name__ == "__main__":
    main()
