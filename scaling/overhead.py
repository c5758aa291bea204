"""Per-operation overhead of spmdarray against NumPy, on one rank.

Times ``x += 2 * y`` (two elementwise operations) on arrays of 1,000 and
10**6 float64 elements, alternating NumPy and spmdarray runs, and reports the
median time per statement and the fixed cost spmdarray adds per operation.

    python scaling/overhead.py [--reps 2000]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy

import spmdarray


def _time(mod, n: int, reps: int) -> float:
    x = mod.ones(n)
    y = mod.ones(n)
    x += 2 * y  # warm-up: plans and dtype checks are cached here
    t0 = time.perf_counter()
    for _ in range(reps):
        x += 2 * y
    return (time.perf_counter() - t0) / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"{'elements':>10} {'numpy us':>10} {'spmdarray us':>13} {'added us/op':>12}")
    for n in (1000, 10**6):
        reps = args.reps if n <= 10**4 else max(20, args.reps // 100)
        a, b = [], []
        for _ in range(args.rounds):
            a.append(_time(numpy, n, reps))
            b.append(_time(spmdarray, n, reps))
        tn, ts = statistics.median(a) * 1e6, statistics.median(b) * 1e6
        print(f"{n:>10} {tn:>10.1f} {ts:>13.1f} {(ts - tn) / 2:>12.1f}")


if __name__ == "__main__":
    main()
