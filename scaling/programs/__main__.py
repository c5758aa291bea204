"""Time the whole programs of :mod:`scaling.programs` against NumPy, at several rank counts.

::

    python -m scaling.programs [--ranks 1,2] [--sizes 200,1000] [--steps 20] [--repeats 3] [--json]

Each rank count is one ``mpiexec`` job (one BLAS thread per process, as the
other runners).  In it every rank runs the NumPy program on the whole grid and
the spmdarray program on its share, from the same initial state, alternating
``repeats`` times; a repeat's time per step is the slowest rank's, and the
figure is the fastest repeat (noise on a shared machine only adds time).
Both programs then take the same number of steps, and the spmdarray fields,
gathered, must match NumPy's (``numpy.allclose``, rtol 1e-9, atol 1e-12) and
be identical on every rank.  Messages, bytes and collectives per spmdarray
step are counted exactly on rank 0.  ``--worker`` is the measurement inside
one job.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

MARKER = "PROGRAMS "


def _timed(np, mod, s, steps: int, comm) -> float:
    comm.Barrier()
    t0 = time.perf_counter()
    for _ in range(steps):
        mod.step(np, s)
    if np.__name__ == "spmdarray":
        np.sync()
    t = (time.perf_counter() - t0) / steps
    return comm.allreduce(t, op=_max())


def _max():
    from mpi4py import MPI

    return MPI.MAX


def worker(names: list[str], sizes: list[int], steps: int, repeats: int) -> list[dict]:
    """The rows of this job (every rank returns them; rank 0's are printed).  Collective."""
    import hashlib

    import numpy
    from mpi4py import MPI
    from spmdarray.comm.stats import COUNTERS

    import spmdarray

    from . import PROGRAMS

    comm = MPI.COMM_WORLD
    rows = []
    for name in names:
        mod = PROGRAMS[name]
        for n in sizes:
            ref = mod.setup(numpy, n)
            got = mod.setup(spmdarray, n)
            mod.step(numpy, ref)  # (warm-up: plans, kernels and halo buffers made here)
            mod.step(spmdarray, got)
            best = {"numpy": float("inf"), "spmdarray": float("inf")}
            comm_per_step = None
            for _ in range(repeats):
                best["numpy"] = min(best["numpy"], _timed(numpy, mod, ref, steps, comm))
                before = dict(COUNTERS)
                best["spmdarray"] = min(best["spmdarray"], _timed(spmdarray, mod, got, steps, comm))
                comm_per_step = {
                    k: (COUNTERS[k] - before[k]) / steps for k in ("messages_sent", "bytes_sent", "collectives")
                }
            a, b = mod.result(numpy, ref), mod.result(spmdarray, got)
            ok = all(numpy.allclose(a[k], b[k], rtol=1e-9, atol=1e-12) for k in a)
            digest = hashlib.sha256(b"".join(numpy.ascontiguousarray(b[k]).tobytes() for k in sorted(b))).hexdigest()
            same = len(set(comm.allgather(digest))) == 1
            rows.append(
                {
                    "program": name,
                    "n": n,
                    "ranks": comm.size,
                    "steps": steps * repeats + 1,
                    "numpy_ms": best["numpy"] * 1e3,
                    "spmdarray_ms": best["spmdarray"] * 1e3,
                    "ratio": best["spmdarray"] / best["numpy"],
                    "correct": bool(ok and same),
                    **{k + "_per_step": v for k, v in comm_per_step.items()},
                }
            )
    return rows


def main(argv: list[str] | None = None) -> None:
    """Command line.  Not collective (``--worker`` is)."""
    from . import PROGRAMS

    p = argparse.ArgumentParser(prog="python -m scaling.programs", description=__doc__.split("\n\n")[0])
    p.add_argument("--programs", default=",".join(PROGRAMS))
    p.add_argument("--ranks", default="1,2")
    p.add_argument("--sizes", default="200,1000")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--json", action="store_true")
    p.add_argument("--worker", action="store_true")
    a = p.parse_args(argv)
    names = [x for x in a.programs.split(",") if x]
    sizes = [int(x) for x in a.sizes.split(",") if x]
    if a.worker:
        rows = worker(names, sizes, a.steps, a.repeats)
        from mpi4py import MPI

        if MPI.COMM_WORLD.rank == 0:
            print(MARKER + json.dumps(rows), flush=True)
        return
    from ..driver import _mpiexec, run_json

    rows = []
    for r in [int(x) for x in a.ranks.split(",") if x]:
        cmd = [
            _mpiexec(),
            "-n",
            str(r),
            sys.executable,
            "-m",
            "scaling.programs",
            "--worker",
            "--programs",
            ",".join(names),
            "--sizes",
            ",".join(map(str, sizes)),
            "--steps",
            str(a.steps),
            "--repeats",
            str(a.repeats),
        ]
        rows += run_json(cmd, r, a.timeout, marker=MARKER)
    if a.json:
        print(json.dumps(rows, indent=1))
        return
    print(
        "| program | grid | ranks | correct | NumPy ms/step | spmdarray ms/step | ratio "
        "| messages/step | bytes/step | collectives/step |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for w in rows:
        print(
            f"| {w['program']} | {w['n']} x {w['n']} | {w['ranks']} | {'yes' if w['correct'] else 'NO'} "
            f"| {w['numpy_ms']:.2f} | {w['spmdarray_ms']:.2f} | {w['ratio']:.2f} | {w['messages_sent_per_step']:g} "
            f"| {w['bytes_sent_per_step']:,.0f} | {w['collectives_per_step']:g} |"
        )


if __name__ == "__main__":
    main()
