"""Per-operation overhead of spmdarray against NumPy, at 1 and 2 ranks.

Times small statements on float64 arrays, alternating NumPy and spmdarray
runs, and reports the fastest round's time per statement (noise on a shared
machine only adds time) and the time spmdarray adds per operation above
NumPy's::

    x += 2 * y      two operations (a temporary, then an in-place add)
    z = x + y       one operation, a new array
    x * 2.0         one operation with a Python float
    x.sum()         a full reduction (a collective at 2 ranks)

Each statement runs on arrays of 1,000 elements as created by default
(replicated: below ``config.replicate_below``) and split over the ranks
(``replicate_below=0``: 500 elements each at 2 ranks).  At 2 ranks every
rank runs the same loops and the slower rank's time counts; NumPy
runs the same statement on the whole array in each process.  A bare 8-byte
``MPI_Allgather`` is timed too: the floor under any full reduction there.

    python -m scaling overhead [--reps 2000] [--rounds 5] [--json]
    python -m scaling overhead --ranks 1,2                  # the table of statements
    python -m scaling overhead --calls                      # Python calls per x += 2 * y

``--json`` prints the ``x += 2 * y`` figures at 1 rank (what ``python -m
scaling all`` stores in ``overhead.json``).  ``--worker`` is one measurement
under ``mpiexec`` (``--ranks`` launches it).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy

SIZES = (1000, 10**6)

#: name -> (operations per statement, the statement as a function of the module and two arrays)
STATEMENTS = {
    "x += 2*y": (2, None),
    "z = x + y": (1, lambda x, y: x + y),
    "x * 2.0": (1, lambda x, y: x * 2.0),
    "x.sum()": (1, lambda x, y: x.sum()),
}


def _loop(stmt: str, x, y, reps: int) -> float:
    """Seconds per statement, ``reps`` times after one warm-up (plans and dtype checks are cached there)."""
    f = STATEMENTS[stmt][1]
    if f is None:  # in place: not expressible as a function of x and y without a call more
        x += 2 * y
        t0 = time.perf_counter()
        for _ in range(reps):
            x += 2 * y
        return (time.perf_counter() - t0) / reps
    f(x, y)
    t0 = time.perf_counter()
    for _ in range(reps):
        f(x, y)
    return (time.perf_counter() - t0) / reps


def _time(mod, n: int, reps: int, stmt: str = "x += 2*y") -> float:
    x = mod.ones(n)
    y = mod.ones(n)
    return _loop(stmt, x, y, reps)


def measure(reps: int = 2000, rounds: int = 5) -> list[dict]:
    """Microseconds per ``x += 2 * y`` for NumPy and spmdarray at each size (fastest round).

    Not collective: run it on one process.

    Returns
    -------
    list of dict
        Per size: ``elements``, ``numpy_us``, ``spmdarray_us`` (fastest
        rounds), the ranges over rounds, and ``added_us_per_op`` (half the difference: the
        statement is two operations).
    """
    import spmdarray

    out = []
    for n in SIZES:
        r = reps if n <= 10**4 else max(20, reps // 100)
        a, b = [], []
        for _ in range(rounds):
            a.append(_time(numpy, n, r) * 1e6)
            b.append(_time(spmdarray, n, r) * 1e6)
        tn, ts = min(a), min(b)
        out.append({
            "elements": n, "numpy_us": tn, "spmdarray_us": ts, "added_us_per_op": (ts - tn) / 2,
            "numpy_range": [min(a), max(a)], "spmdarray_range": [min(b), max(b)],
        })  # fmt: skip
    return out


def measure_statements(n: int = 1000, reps: int = 2000, rounds: int = 5) -> list[dict]:
    """Each statement of :data:`STATEMENTS` at ``n`` elements on every rank of the job.

    Collective over ``COMM_WORLD`` (spmdarray's default communicator): every
    rank must call it.  Each rank times its own loops; the slower rank's
    fastest round counts.

    Returns
    -------
    list of dict
        Per statement: ``statement``, ``ranks``, ``elements``, ``numpy_us``
        and ``spmdarray_us`` per statement, and ``above_numpy_us_per_op``.
    """
    from spmdarray.comm import allgather_object, barrier

    import spmdarray

    rows = []
    for layout, below in (("replicated", None), ("split", 0)):
        # Arrays this small are replicated by default (config.replicate_below); split ones too.
        with spmdarray.config.set(**({} if below is None else {"replicate_below": below})):
            for stmt, (nops, _) in STATEMENTS.items():
                xs, ys = spmdarray.ones(n), spmdarray.ones(n)
                ctx = xs._st.ctx
                xn, yn = numpy.ones(n), numpy.ones(n)
                a, b = [], []
                for _ in range(rounds):
                    a.append(_loop(stmt, xn, yn, reps) * 1e6)
                    barrier(ctx)
                    b.append(_loop(stmt, xs, ys, reps) * 1e6)
                tn, ts = max(allgather_object(ctx, (min(a), min(b))))
                rows.append({
                    "statement": stmt, "ranks": ctx.size, "layout": layout, "elements": n, "numpy_us": tn,
                    "spmdarray_us": ts, "above_numpy_us_per_op": (ts - tn) / nops,
                })  # fmt: skip
    # For scale: one bare 8-byte MPI_Allgather, the floor of any full reduction at this rank count.
    comm, send, recv = ctx.comm, numpy.ones(1), numpy.empty(ctx.size)
    c = []
    for _ in range(rounds):
        barrier(ctx)
        t0 = time.perf_counter()
        for _ in range(reps):
            comm.Allgather(send, recv)
        c.append((time.perf_counter() - t0) / reps * 1e6)
    floor = max(allgather_object(ctx, min(c)))
    for r in rows:
        r["mpi_allgather_us"] = floor
    return rows


def calls_per_statement(n: int = 1000, iters: int = 1000) -> float:
    """Python function calls per ``x += 2 * y`` (cProfile's total over ``iters`` statements).  Not collective."""
    import cProfile
    import pstats

    import spmdarray

    x, y = spmdarray.ones(n), spmdarray.ones(n)
    x += 2 * y
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(iters):
        x += 2 * y
    prof.disable()
    return pstats.Stats(prof).total_calls / iters


def statements_at(ranks: list[int], reps: int, rounds: int, timeout: float = 600) -> list[dict]:
    """:func:`measure_statements` in one fresh ``mpiexec`` job per rank count."""
    from .driver import _mpiexec, run_json

    rows = []
    for p in ranks:
        cmd = [_mpiexec(), "-n", str(p), sys.executable, "-m", "scaling.overhead", "--worker"]
        rows += run_json([*cmd, "--reps", str(reps), "--rounds", str(rounds)], p, timeout, marker="OVERHEAD ")
    return rows


def main(argv: list[str] | None = None) -> None:
    """Print the table, or the figures as JSON with ``--json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    parser.add_argument("--ranks", default=None, help="rank counts for the statements table, e.g. 1,2")
    parser.add_argument("--worker", action="store_true", help="one statements measurement (under mpiexec)")
    parser.add_argument("--calls", action="store_true", help="Python function calls per x += 2*y (cProfile)")
    args = parser.parse_args(argv)
    if args.calls:
        print(f"{calls_per_statement():.1f} Python function calls per x += 2*y at 1,000 elements (cProfile)")
        return
    if args.worker:
        rows = measure_statements(1000, args.reps, args.rounds)
        from spmdarray.comm import default_context

        if default_context().rank == 0:
            print("OVERHEAD " + json.dumps(rows), flush=True)
        return
    if args.ranks:
        rows = statements_at([int(p) for p in args.ranks.split(",") if p], args.reps, args.rounds)
        if args.json:
            print(json.dumps(rows))
            return
        head = f"{'statement':>10} {'ranks':>5} {'layout':>10} {'numpy us':>9} {'spmdarray us':>13}"
        print(head + f" {'above NumPy us/op':>18}")
        for r in rows:
            print(
                f"{r['statement']:>10} {r['ranks']:>5} {r['layout']:>10} {r['numpy_us']:>9.1f} "
                f"{r['spmdarray_us']:>13.1f} {r['above_numpy_us_per_op']:>18.1f}"
            )
        for p in sorted({r["ranks"] for r in rows}):
            us = next(r["mpi_allgather_us"] for r in rows if r["ranks"] == p)
            print(f"bare 8-byte MPI_Allgather at {p} rank(s): {us:.1f} us")
        return
    rows = measure(args.reps, args.rounds)
    if args.json:
        print(json.dumps(rows))
        return
    print(f"{'elements':>10} {'numpy us':>10} {'spmdarray us':>13} {'added us/op':>12}")
    for r in rows:
        print(f"{r['elements']:>10} {r['numpy_us']:>10.1f} {r['spmdarray_us']:>13.1f} {r['added_us_per_op']:>12.1f}")


if __name__ == "__main__":
    main()
