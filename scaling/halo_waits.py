"""Exact communication per time step of npbench's stencil kernels.

::

    mpiexec -n 2 python -m scaling.halo_waits --npbench DIR --preset M [--bench heat_3d ...]

Each kernel file ``<module>_numpy.py`` is loaded with its global ``np``
rebound to :mod:`spmdarray` (as ``scaling.npbench_kernel`` does) and run twice
on the preset's inputs: with ``k`` and with ``k + d`` time steps (the
parameter that counts them: ``TSTEPS``, ``nt``, ``TMAX``).  The difference of
the counters of the two runs, divided by ``d``, is the exact figure of one
step in the steady state, without the set-up before the loop and the first
step's plan building.  ``channel_flow`` loops until its velocity converges; its
``while`` line is replaced by a loop of a given number of steps (the only
change to any kernel's text).

Per step and per rank: messages and bytes sent, ``waits`` (one per
``Waitall`` of point-to-point messages), ``collectives`` (every collective is
a blocking call) and ``sync_points`` (their sum: the points where the rank
blocks).  Rank 0 prints one line ``HALOWAITS {json}`` per kernel, with the
largest figure over the ranks.
"""

from __future__ import annotations

import argparse
import json
import os

import numpy

from .npbench_kernel import bench_info, get_data

MARKER = "HALOWAITS "
KERNELS = ("heat_3d", "cavity_flow", "adi", "jacobi_2d", "channel_flow", "fdtd_2d")
#: The parameter that counts time steps, per kernel (None: the loop is rewritten).
STEP_PARAM = {"heat_3d": "TSTEPS", "cavity_flow": "nt", "adi": "TSTEPS", "jacobi_2d": "TSTEPS", "fdtd_2d": "TMAX"}
_FIELDS = ("messages_sent", "bytes_sent", "waits", "collectives")


def load_kernel(root: str, info: dict, sp):
    """The kernel function with ``np`` rebound to ``sp`` (``channel_flow``: its loop runs ``__steps__`` times)."""
    path = os.path.join(root, "npbench", "benchmarks", info["relative_path"], info["module_name"] + "_numpy.py")
    with open(path) as f:
        src = f.read()
    if info["short_name"] == "channel_flow" or "while udiff" in src:
        src = src.replace("while udiff > .001:", "for _step in range(__steps__):")
    glb: dict = {"__name__": "halo_" + info["module_name"], "__file__": path}
    exec(compile(src, path, "exec"), glb)
    glb["np"] = sp
    return glb, glb[info["func_name"]]


def measure(root: str, name: str, preset: str, k: int, d: int, step_param: str | None = None) -> dict:
    """Counters of one step, from ``d`` steps (the run with ``k + d`` steps minus the run with ``k``).

    Collective.  ``step_param``: the kernel's argument that counts steps (default:
    :data:`STEP_PARAM`).  Rank 0 returns the largest figures over the ranks; the others ``{}``.
    """
    from mpi4py import MPI

    import spmdarray as sp

    comm = MPI.COMM_WORLD
    info = bench_info(root, name)
    info.setdefault("short_name", name)
    data = get_data(root, info, preset) if comm.rank == 0 else None
    data = comm.bcast(data, root=0)
    glb, kernel = load_kernel(root, info, sp)
    arrays = set(info["array_args"])
    counts = []
    for steps in (k, k, k + d):  # the first run builds plans and compiles kernels
        argv = []
        for n in info["input_args"]:
            v = data[n]
            if n == (step_param or STEP_PARAM.get(name)):
                v = steps
            argv.append(sp.asarray(numpy.copy(v)) if n in arrays else v)
        glb["__steps__"] = steps
        sp.sync()
        with sp.comm_stats() as s:
            kernel(*argv)
            sp.sync()
        counts.append({f: getattr(s, f) for f in _FIELDS})
    per = {f: (counts[2][f] - counts[1][f]) / d for f in _FIELDS}
    per["sync_points"] = per["waits"] + per["collectives"]
    every = comm.gather(per, root=0)
    if comm.rank != 0:
        return {}
    return {f: max(e[f] for e in every) for f in every[0]}


def main(argv: list[str] | None = None) -> None:
    """Measure each kernel and print its record on rank 0.  Collective."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--npbench", required=True)
    p.add_argument("--preset", default="M")
    p.add_argument("--bench", nargs="*", default=list(KERNELS))
    p.add_argument("--k", type=int, default=3, help="steps of the first run")
    p.add_argument("--d", type=int, default=2, help="extra steps of the second run")
    a = p.parse_args(argv)
    from mpi4py import MPI

    for name in a.bench:
        rec = measure(a.npbench, name, a.preset, a.k, a.d)
        if MPI.COMM_WORLD.rank == 0:
            rec.update(bench=name, preset=a.preset, ranks=MPI.COMM_WORLD.size)
            print(MARKER + json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
