"""One measured run of one workload by one implementation.

The driver launches this module, under ``mpiexec`` for the MPI
implementations::

    mpiexec -n 4 python -m scaling.bench stencil --impl spmdarray --dims 4000,1000
    python -m scaling.bench stencil --impl numpy --dims 4000,1000

It builds the input, runs ``--warmup`` untimed iterations (plans and caches
are built there), then times ``--iters`` iterations between two barriers.
Rank 0 prints one line ``RESULT {json}`` with the figures of every rank.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import time

IMPLS = ("numpy", "spmdarray", "mpi4py", "baseline", "dask")


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _versions(impl: str) -> dict[str, str]:
    import numpy

    v = {"python": platform.python_version(), "numpy": numpy.__version__}
    if impl in ("spmdarray", "mpi4py", "baseline"):
        import mpi4py
        from mpi4py import MPI

        v["mpi4py"] = mpi4py.__version__
        v["mpi"] = MPI.Get_library_version().splitlines()[0].strip()
    if impl == "spmdarray":
        import spmdarray

        v["spmdarray"] = spmdarray.__version__
    if impl == "dask":
        import dask

        v["dask"] = dask.__version__
    return v


def _timed(step, iters: int, barrier) -> float:
    barrier()
    t0 = time.perf_counter()
    for _ in range(iters):
        step()
    barrier()
    return time.perf_counter() - t0


def run(workload: str, impl: str, dims: tuple[int, ...], iters: int, warmup: int, workers: int) -> dict | None:
    """Measure one run; return the figures on rank 0 (``None`` elsewhere).

    Collective over ``COMM_WORLD`` for the MPI implementations.

    Returns
    -------
    dict or None
        ``seconds`` of the timed iterations, and per-rank lists of the bytes,
        messages, collective calls and collective bytes sent in them, the
        theoretical minimum bytes (halo workloads under spmdarray), peak RSS
        in MiB, plus the checksum and the versions.
    """
    from .workloads import WORKLOADS

    wl = WORKLOADS[workload]
    per_rank = {"bytes": 0, "msgs": 0, "coll": 0, "coll_bytes": 0}
    minimum = None
    comm = None
    if impl == "numpy":
        import numpy as np

        state = wl.setup(np, dims)
        for _ in range(warmup):
            wl.step(np, state)
        seconds = _timed(lambda: wl.step(np, state), iters, lambda: None)
        checksum = wl.result(np, state)
    elif impl == "dask":
        from .peers import dask_array

        state = dask_array.setup(workload, dims, workers)
        for _ in range(warmup):
            dask_array.step(state)
        seconds = _timed(lambda: dask_array.step(state), iters, lambda: None)
        checksum = dask_array.result(state)
    elif impl == "spmdarray":
        from mpi4py import MPI

        import spmdarray as sp

        comm = MPI.COMM_WORLD
        state = wl.setup(sp, dims)
        for _ in range(warmup):
            wl.step(sp, state)
        with sp.comm_stats() as st:
            seconds = _timed(lambda: wl.step(sp, state), iters, comm.Barrier)
        per_rank = {"bytes": st.bytes_sent, "msgs": st.messages_sent, "coll": st.collectives}
        per_rank["coll_bytes"] = st.collective_bytes
        checksum = wl.result(sp, state)
        if workload in ("stencil", "heat3d"):
            from .theory import halo_min_bytes

            base = state["grid"] if workload == "stencil" else state["u"]
            lay = base.layout
            minimum = halo_min_bytes([lay.block(r) for r in range(lay.nprocs)], base.shape)
    elif impl in ("mpi4py", "baseline"):
        from mpi4py import MPI

        if impl == "baseline":
            from .baselines import IMPLS as HAND
        else:
            from .handwritten import IMPLS as HAND

        comm = MPI.COMM_WORLD
        hw = HAND[workload]
        state = hw.setup(comm, dims)
        for _ in range(warmup):
            hw.step(state)
        (b0, m0), c0 = state["sent"], state["coll"]
        seconds = _timed(lambda: hw.step(state), iters, comm.Barrier)
        (b1, m1), c1 = state["sent"], state["coll"]
        per_rank = {"bytes": b1 - b0, "msgs": m1 - m0, "coll": c1 - c0, "coll_bytes": None}
        checksum = hw.result(state)
    else:
        raise ValueError(f"unknown implementation {impl!r}; expected one of {IMPLS}")
    mine = {**per_rank, "rss": _peak_rss_mib()}
    gathered = [mine] if comm is None else comm.gather(mine, root=0)
    if comm is not None and comm.Get_rank() != 0:
        return None
    out = {
        "seconds": seconds,
        "checksum": checksum,
        "min_bytes": minimum,
        "versions": _versions(impl),
        "ranks": 1 if comm is None else comm.Get_size(),
    }
    for key in ("bytes", "msgs", "coll", "coll_bytes", "rss"):
        out[key] = [g[key] for g in gathered]
    return out


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point: parse, run, print ``RESULT {json}`` on rank 0."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workload")
    p.add_argument("--impl", choices=IMPLS, required=True)
    p.add_argument("--dims", required=True, help="global problem, comma-separated")
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--workers", type=int, default=1, help="threads (dask)")
    a = p.parse_args(argv)
    dims = tuple(int(x) for x in a.dims.split(","))
    res = run(a.workload, a.impl, dims, a.iters, a.warmup, a.workers)
    if res is not None:
        print("RESULT " + json.dumps(res), flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
