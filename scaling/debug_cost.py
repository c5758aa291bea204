"""Cost per collective of the hang watchdog and of the debug mode (``SPMDARRAY_DEBUG=1``).

Times, in alternating rounds on every rank, and reports the fastest round (noise
on a shared machine only adds time)::

    mpiexec -n 2 python -m scaling.debug_cost [--reps 2000] [--rounds 5]

- ``guard``: the watchdog's hook alone around nothing (what every wait pays);
- ``fingerprint``: the debug mode's CPU work per collective without its
  ``Allreduce`` (stack walk, description, settings hash, blake2b);
- ``mpi``: a bare ``comm.Allreduce`` of two int64 (mpi4py, no spmdarray);
- ``comm``: the same through ``spmdarray.comm.allreduce_max`` (watchdog armed);
- ``comm+debug``: the same with the debug mode's check before it;
- ``sum`` / ``sum+debug``: ``float(x.sum())`` of a 1000-element array.

Collective: run it on every rank; rank 0 prints.
"""

from __future__ import annotations

import argparse
import time

import numpy
from spmdarray.comm import MPI, allreduce_max, get_context, guard
from spmdarray.comm import debug as _debug

import spmdarray as sp
from spmdarray.settings import config


def _bench(fn, reps: int) -> float:
    ctx = get_context()
    ctx.comm.Barrier()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps * 1e6


def measure(reps: int = 2000, rounds: int = 5) -> dict[str, float]:
    """Microseconds per call of each case (fastest round).  Collective."""
    ctx = get_context()
    x = sp.arange(1000.0)
    send, recv = numpy.array([1, -1], numpy.int64), numpy.empty(2, numpy.int64)
    op = MPI().MAX

    def hook() -> None:
        with guard("bench", ctx.comm):
            pass

    def fingerprint() -> None:
        call, site = _debug._call(1)
        _debug._hash(repr((call, site, "bench", 1, _debug._settings_hash(config))))

    cases = {
        "guard": hook,
        "fingerprint": fingerprint,
        "mpi": lambda: ctx.comm.Allreduce(send, recv, op=op),
        "comm": lambda: allreduce_max(ctx, (1, -1)),
        "sum": lambda: float(x.sum()),
    }
    best: dict[str, float] = {}
    for _ in range(rounds):
        for on in (False, True):
            with config.set(debug=on):
                for name, fn in cases.items():
                    if on and name in ("mpi", "guard", "fingerprint"):
                        continue
                    key = name + ("+debug" if on else "")
                    fn()  # warm-up
                    t = _bench(fn, reps)
                    best[key] = min(best.get(key, t), t)
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args()
    best = measure(a.reps, a.rounds)
    ctx = get_context()
    if ctx.rank == 0:
        print(f"ranks {ctx.size}, {a.reps} calls x {a.rounds} rounds, fastest round, us per call:")
        for k, v in best.items():
            print(f"  {k:12s} {v:9.2f} us")
        print(f"  watchdog hook: {best['guard']:.3f} us = {best['guard'] / best['mpi']:.4f} of a bare Allreduce")
        print(f"  comm / mpi (hook, counters, tuple conversion): {best['comm'] / best['mpi']:.2f}x")
        print(f"  debug per collective (comm+debug / comm): {best['comm+debug'] / best['comm']:.2f}x")
        print(f"  debug on x.sum() (sum+debug / sum):       {best['sum+debug'] / best['sum']:.2f}x")


if __name__ == "__main__":
    main()
