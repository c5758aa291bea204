"""GPU check of the fused device kernels (spmdarray.fusion.kernels_cuda), in under 3 minutes.

::

    python scaling/device_fusion_check.py                 # a machine with CuPy and a GPU
    SPMDARRAY_CUPY_MODULE=fake_cupy python scaling/device_fusion_check.py --size 64 --seeds 2   # CPU

1. Exactness: every fusable ufunc for every operand dtype, the no-FMA,
   integer-wrap, float32 and stencil cases, then random programs (full block,
   sub-box, sums) for ``--seeds`` seeds or until ``--check-seconds`` have
   passed, all compared bit for bit with NumPy run step by step on the host
   (``tests/fusion_device_cases.py``; NaN payloads aside).
2. Speed: the Jacobi stencil ``center[:] = (c + n + s + e + w) * 0.2`` on a
   ``--size`` squared float64 interior: CuPy eager (temporaries) against the
   fused kernel into a scratch buffer plus the copy back, and the fused kernel
   alone; Mcells/s of each.

Lines starting with ``RESULT`` summarise; the exit status is 1 when a check
failed.  Needs NumPy and CuPy (or the stand-in named by
``SPMDARRAY_CUPY_MODULE``); no MPI, pytest or hypothesis.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]

import fusion_device_cases as cases  # noqa: E402
import numpy as np  # noqa: E402


def exactness(seeds: int, budget_s: float) -> tuple[int, list]:
    """(checks run, failures) of the fixed cases then up to ``seeds`` random seeds."""
    failures: list = []
    ran = 0
    t0 = time.perf_counter()
    fixed = [(f"ufunc {f.__name__}", cases.check_ufunc, (f,)) for f in cases.UFUNCS]
    fixed += [
        ("sum with random leaves", cases.check_sum_chunked, ()),
        ("no FMA", cases.check_no_fma, ()),
        ("integer wrap, float32", cases.check_integer_wrap_and_float32, ()),
        ("stencil, kernel cache", cases.check_stencil_and_kernel_cache, ()),
        ("in-place stencil (run_lag)", cases.check_in_place_stencil, ()),
        ("empty sub-box", cases.check_empty_sub_box, ()),
    ]
    fixed += [(f"random seed {s}", cases.check_random, (s,)) for s in range(seeds)]
    for name, fn, args in fixed:
        if name.startswith("random") and time.perf_counter() - t0 > budget_s:
            print(f"time budget reached after {ran} checks")
            break
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - reported, the run goes on
            failures.append(name)
            print(f"FAILED {name}\n{traceback.format_exc(limit=4)}")
        ran += 1
    return ran, failures


def stencil_program():
    d = np.dtype(np.float64)
    prog = cases.Program()
    prog.leaves = [("a", None)] * 5 + [("s", np.float64(0.2))]
    prog.steps = [(np.add, (d, d, d), (("l", 0), ("l", 1)))]
    prog.steps += [(np.add, (d, d, d), (("t", k - 2), ("l", k))) for k in range(2, 5)]
    prog.steps.append((np.multiply, (d, d, d), (("t", 3), ("l", 5))))
    return prog, ("t", 4)


def bench(n: int, iters: int) -> dict:
    """Mcells/s of the stencil: eager CuPy, fused + copy back, fused kernel alone."""
    xp = cases.xp()
    kd = cases.kd()
    rng = np.random.default_rng(0)
    u = xp.asarray(rng.random((n + 2, n + 2)))
    c, no, so, ea, we = cases.views(u)
    scratch = xp.empty((n, n))
    prog, root = stencil_program()
    vals = [c, no, so, ea, we, np.float64(0.2)]
    full = (slice(0, n), slice(0, n))
    sync = xp.cuda.get_current_stream().synchronize

    def eager():
        c[...] = (c + no + so + ea + we) * 0.2

    def fused():
        kd.run(prog, root, vals, scratch, full, (n, n), (0, 0), out_is_sub=True)
        c[...] = scratch

    def kernel():
        kd.run(prog, root, vals, scratch, full, (n, n), (0, 0), out_is_sub=True)

    # one iteration of each from the same grid gives the same bits
    u0 = u.copy()
    eager()
    e = u.get()
    u[...] = u0
    fused()
    if not np.array_equal(e, u.get()):
        raise AssertionError("fused stencil iteration differs from CuPy eager")
    res = {}
    for name, fn in (("eager", eager), ("fused", fused), ("kernel", kernel)):
        for _ in range(2):
            fn()
        sync()
        t = time.perf_counter()
        for _ in range(iters):
            fn()
        sync()
        res[name] = n * n * iters / (time.perf_counter() - t) / 1e6
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=8192, help="stencil interior is size x size (default 8192)")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--seeds", type=int, default=60, help="random-program seeds (3 programs each)")
    ap.add_argument("--check-seconds", type=float, default=90.0, help="stop starting random seeds after this")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    xp = cases.xp()
    print(f"numpy {np.__version__}, {xp.__name__} {getattr(xp, '__version__', '?')}")
    prog, root = stencil_program()
    kd = cases.kd()
    kd.check()
    sig = kd._signature(prog, root, [np.zeros((1, 1))] * 5 + [np.float64(0.2)], np.dtype(np.float64), 2)
    src = kd.source(sig, "store")
    print("stencil kernel:", {k: v for k, v in src.items() if k != "preamble"})
    print(src["preamble"])
    ran, failures = exactness(a.seeds, a.check_seconds)
    print(f"RESULT exactness: {ran - len(failures)} of {ran} checks bit for bit ({time.perf_counter() - t0:.1f} s)")
    try:
        r = bench(a.size, a.iters)
        print(
            f"RESULT stencil {a.size}x{a.size} float64, {a.iters} iterations: eager {r['eager']:.0f} Mcells/s, "
            f"fused+copy {r['fused']:.0f} Mcells/s, fused kernel alone {r['kernel']:.0f} Mcells/s"
        )
    except Exception:  # noqa: BLE001
        failures.append("stencil benchmark")
        print(f"FAILED stencil benchmark\n{traceback.format_exc(limit=4)}")
    print(f"RESULT total {time.perf_counter() - t0:.1f} s, failures: {failures or 'none'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
