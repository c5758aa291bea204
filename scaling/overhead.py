"""Per-operation overhead of spmdarray against NumPy, on one rank.

Times ``x += 2 * y`` (two elementwise operations) on arrays of 1,000 and
10**6 float64 elements, alternating NumPy and spmdarray runs, and reports the
fastest round's time per statement (noise on a shared machine only adds
time) and the fixed cost spmdarray adds per operation::

    python -m scaling overhead [--reps 2000] [--rounds 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy

SIZES = (1000, 10**6)


def _time(mod, n: int, reps: int) -> float:
    x = mod.ones(n)
    y = mod.ones(n)
    x += 2 * y  # warm-up: plans and dtype checks are cached here
    t0 = time.perf_counter()
    for _ in range(reps):
        x += 2 * y
    return (time.perf_counter() - t0) / reps


def measure(reps: int = 2000, rounds: int = 5) -> list[dict]:
    """Microseconds per statement for NumPy and spmdarray at each size (fastest round).

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


def main(argv: list[str] | None = None) -> None:
    """Print the table, or the figures as JSON with ``--json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    args = parser.parse_args(argv)
    rows = measure(args.reps, args.rounds)
    if args.json:
        print(json.dumps(rows))
        return
    print(f"{'elements':>10} {'numpy us':>10} {'spmdarray us':>13} {'added us/op':>12}")
    for r in rows:
        print(f"{r['elements']:>10} {r['numpy_us']:>10.1f} {r['spmdarray_us']:>13.1f} {r['added_us_per_op']:>12.1f}")


if __name__ == "__main__":
    main()
