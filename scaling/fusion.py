"""The fused-evaluation benchmarks (issue 6), measured in one run.

::

    python -m scaling fusion [--repeats 3] [--size 4000] [--pi 100000000]

Runs, alternating in each repeat (reversed order on odd repeats):

* the aliasing-view stencil (``scaling/workloads/stencil.py``) at N x N:
  NumPy on one process, spmdarray with fusion off (``SPMDARRAY_FUSE=0``) at
  1 rank, spmdarray (fused) at 1 and 2 ranks, and the hand-written numba
  kernel with mpi4py halos (``scaling/baselines/stencil.py``) at 1 and 2 ranks;
* Monte-Carlo pi (``scaling/workloads/pi.py``) at n samples: NumPy and
  spmdarray at 1 rank;
* the per-operation overhead (``scaling/overhead.py``);
* the compile cache: the first stencil iteration in a fresh process with an
  empty kernel cache, again with the cache on disk, and the steady state;
* the memory-bandwidth bound: ``numpy.copyto`` of each rank's share of the
  grid (16 bytes moved per element, as the fused stencil moves per cell) at
  1 and 2 processes, so the stencil's distance to the bandwidth limit is a
  ratio measured in the same run.

It writes ``scaling/results/fusion.json`` and the "Fused evaluation" section
of ``docs/performance.md`` (between its generated markers; the same text
``python -m scaling report`` renders from ``report_template.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from . import driver

RESULTS = driver.ROOT / "scaling" / "results"
DOCS = driver.ROOT / "docs" / "performance.md"
BEGIN = "<!-- fusion: begin (python -m scaling fusion) -->"
END = "<!-- fusion: end -->"

#: (label, workload, impl, ranks, environment)
CONFIGS = [
    ("numpy", "stencil", "numpy", 1, {}),
    ("eager1", "stencil", "spmdarray", 1, {"SPMDARRAY_FUSE": "0"}),
    ("fused1", "stencil", "spmdarray", 1, {}),
    ("fused2", "stencil", "spmdarray", 2, {}),
    ("base1", "stencil", "baseline", 1, {}),
    ("base2", "stencil", "baseline", 2, {}),
    ("pi_numpy", "pi", "numpy", 1, {}),
    ("pi_fused", "pi", "spmdarray", 1, {}),
]


def _launch(workload, impl, dims, ranks, iters, warmup, env, timeout):
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return driver.launch(workload, impl, dims, ranks, iters, warmup, timeout)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def measure(repeats: int, size: int, pi_n: int, iters: int, timeout: float) -> dict:
    """Throughputs (work units per second) per configuration and repeat."""
    runs: dict = {c[0]: [] for c in CONFIGS}
    rss: dict = {c[0]: [] for c in CONFIGS}
    for rep in range(repeats):
        order = CONFIGS if rep % 2 == 0 else CONFIGS[::-1]
        for label, wl, impl, ranks, env in order:
            dims = (size, size) if wl == "stencil" else (pi_n,)
            it = iters if wl == "stencil" else 2
            res = _launch(wl, impl, dims, ranks, it, 2 if wl == "stencil" else 1, env, timeout)
            work = size * size if wl == "stencil" else pi_n
            runs[label].append(work * it / res["seconds"])
            rss[label].append(max(res["rss"]))
            print(f"{label:>9} rep {rep}: {runs[label][-1] / 1e6:9.1f} M/s  rss {rss[label][-1]:.0f} MiB", flush=True)
        for procs in (1, 2):
            runs.setdefault(f"copy{procs}", []).append(copy_rate(size * size, procs, iters, timeout))
            print(f"    copy{procs} rep {rep}: {runs[f'copy{procs}'][-1] / 1e6:9.1f} M/s", flush=True)
    return {"throughput": runs, "rss_mib": rss}


_COPY_SCRIPT = (
    "import json, time, numpy as np\n"
    "from mpi4py import MPI\n"
    "c = MPI.COMM_WORLD\n"
    "n = {n} // c.Get_size()\n"
    "a = np.random.rand(n); b = np.empty_like(a); ts = []\n"
    "for _ in range({iters} + 2):\n"
    "    c.Barrier(); t = time.perf_counter(); np.copyto(b, a); c.Barrier(); ts.append(time.perf_counter() - t)\n"
    "t = sorted(ts[2:])[len(ts[2:]) // 2]\n"
    "if c.Get_rank() == 0: print('RESULT ' + json.dumps({{'seconds': t, 'rss': [0]}}))\n"
)


def copy_rate(cells: int, procs: int, iters: int, timeout: float) -> float:
    """Elements per second that ``procs`` processes copy together (the stencil's bandwidth bound, cells/s)."""
    cmd = [driver._mpiexec(), "-n", str(procs), sys.executable, "-c", _COPY_SCRIPT.format(n=cells, iters=iters)]
    res = driver.run_json(cmd, procs, timeout, marker="RESULT ")
    return cells / res["seconds"]


def _probe_script(n: int) -> str:
    return (
        "import json, time, spmdarray as sp\n"
        "from spmdarray.fusion import kernels_cpu as _kernels\n"
        "from scaling.workloads import stencil as wl\n"
        f"s = wl.setup(sp, ({n}, {n}))\n"
        "ts = []\n"
        "for _ in range(12):\n"
        "    t = time.perf_counter(); wl.step(sp, s); ts.append(time.perf_counter() - t)\n"
        "import tracemalloc\n"
        "tracemalloc.start(); wl.step(sp, s); extra = tracemalloc.get_traced_memory()[1]; tracemalloc.stop()\n"
        "print('RESULT ' + json.dumps({'first': ts[0], 'second': ts[1], 'steady': sorted(ts[2:])[len(ts[2:]) // 2],"
        " 'stats': _kernels.compile_stats(), 'extra_bytes': extra, 'grid_bytes': s['grid'].nbytes}))\n"
    )


def compile_cache(n: int = 2000, timeout: float = 600) -> dict:
    """First iteration with an empty kernel cache, with the cache on disk, and steady state (seconds)."""
    with tempfile.TemporaryDirectory() as d:
        env = {"SPMDARRAY_FUSE_CACHE": d}
        out = {}
        for label in ("cold", "warm_disk"):
            saved = os.environ.get("SPMDARRAY_FUSE_CACHE")
            os.environ.update(env)
            try:
                out[label] = driver.run_json([sys.executable, "-c", _probe_script(n)], 1, timeout, marker="RESULT ")
            finally:
                if saved is None:
                    os.environ.pop("SPMDARRAY_FUSE_CACHE", None)
                else:
                    os.environ["SPMDARRAY_FUSE_CACHE"] = saved
    out["n"] = n
    return out


def _ratios(a: list, b: list) -> list:
    return [x / y for x, y in zip(a, b)]


def _rng(v: list) -> str:
    return f"{statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})"


def section(res: dict) -> str:
    """Markdown of the fused-evaluation results (``res``: the saved fusion.json)."""
    t = res["throughput"]
    size, pi_n = res["size"], res["pi_n"]
    rows = [
        ("stencil 1 rank fused / NumPy", _ratios(t["fused1"], t["numpy"]), ">= 3"),
        ("stencil 2 ranks fused / 1 rank fused", _ratios(t["fused2"], t["fused1"]), ">= 1.8"),
        ("stencil 1 rank fused / hand-written numba", _ratios(t["fused1"], t["base1"]), ">= 0.8"),
        ("stencil 2 ranks fused / hand-written numba + mpi4py", _ratios(t["fused2"], t["base2"]), ">= 0.8"),
        ("stencil 1 rank unfused (SPMDARRAY_FUSE=0) / NumPy", _ratios(t["eager1"], t["numpy"]), "-"),
        (f"pi n={pi_n:.0e} 1 rank fused / NumPy", _ratios(t["pi_fused"], t["pi_numpy"]), ">= 2"),
    ]
    lines = [
        f"Measured by `python -m scaling fusion` ({res['repeats']} alternating repeats, {res['machine']}, "
        f"load average {res['load']:.1f}). Stencil at N = {size}; ratio of throughputs per repeat, median (range). "
        "The machine's two cores are shared: a 2-rank run scales only when no other process holds the second core.",
        "",
        "| ratio | measured | target |",
        "|---|---|---|",
    ]
    lines += [f"| {name} | {_rng(v)} | {target} |" for name, v, target in rows]
    lines += ["", "| configuration | median throughput | peak RSS per rank |", "|---|---|---|"]
    for c in CONFIGS:
        unit = "Mcells/s" if c[1] == "stencil" else "Msamples/s"
        lines.append(
            f"| {c[0]} ({c[2]}, {c[3]} rank{'s' if c[3] > 1 else ''}) | "
            f"{statistics.median(t[c[0]]) / 1e6:.0f} {unit} | {max(res['rss_mib'][c[0]]):.0f} MiB |"
        )
    if "copy1" in t:
        f1, f2 = _ratios(t["fused1"], t["copy1"]), _ratios(t["fused2"], t["copy2"])
        lines += [
            "",
            "Bandwidth bound: `numpy.copyto` of each rank's share of the grid moves 16 bytes per element, as the "
            f"fused stencil does per cell (read the grid, write the centre): {statistics.median(t['copy1']) / 1e6:.0f} "
            f"M elements/s on 1 process and {statistics.median(t['copy2']) / 1e6:.0f} on 2 processes together "
            f"({_rng(_ratios(t['copy2'], t['copy1']))} times 1 process). The fused stencil reaches {_rng(f1)} of it "
            f"at 1 rank and {_rng(f2)} at 2 ranks; the hand-written kernel "
            f"{_rng(_ratios(t['base1'], t['copy1']))} and {_rng(_ratios(t['base2'], t['copy2']))}.",
        ]
    o = res.get("overhead")
    if o:
        small = o[0]
        lines += [
            "",
            f"Per-operation overhead at {small['elements']} elements, 1 rank (`x += 2 * y`; arrays under "
            "`min_size` run eagerly, see docs/fusion.md): "
            f"{small['added_us_per_op']:.1f} us added per operation (target < 30 us); "
            f"statement {small['spmdarray_us']:.1f} us against NumPy's {small['numpy_us']:.1f} us.",
        ]
    c = res.get("compile")
    if c:
        lines += [
            "",
            f"Compile cache (stencil N = {c['n']}, 1 rank, fresh processes): first iteration "
            f"{c['cold']['first']:.2f} s with an empty kernel cache ({c['cold']['stats']['compiled']} kernels, "
            f"{c['cold']['stats']['compile_s']:.2f} s compiling), {c['warm_disk']['first']:.2f} s with the "
            f"kernels in numba's disk cache ({c['warm_disk']['stats']['compile_s']:.2f} s loading), "
            f"steady state {c['cold']['steady'] * 1e3:.1f} ms per iteration.",
            "",
            f"Memory: one steady-state stencil iteration at N = {c['n']} allocates at its peak "
            f"{c['cold']['extra_bytes'] / 1024:.0f} KiB beyond the grid ({c['cold']['grid_bytes'] / 2**20:.0f} MiB), "
            f"{100 * c['cold']['extra_bytes'] / c['cold']['grid_bytes']:.2f}% of it (tracemalloc: NumPy "
            "allocations). The peak RSS above also holds numba and LLVM (about 100 MiB per process).",
        ]
    return "\n".join(lines) + "\n"


def write_docs(res: dict, docs: Path = DOCS) -> None:
    """Replace the fused-evaluation section of ``docs`` (appended if missing)."""
    text = docs.read_text() if docs.exists() else "# Performance\n"
    block = f"{BEGIN}\n{section(res)}{END}"
    if BEGIN in text and END in text:
        pre, rest = text.split(BEGIN, 1)
        post = rest.split(END, 1)[1]
        text = pre + block + post
    else:
        text = text.rstrip("\n") + "\n\n## Fused evaluation\n\n" + block + "\n"
    docs.write_text(text)


def main(argv: list[str] | None = None) -> None:
    """Measure, save ``fusion.json`` and update the docs."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--size", type=int, default=4000, help="stencil N (default 4000)")
    p.add_argument("--pi", type=int, default=100_000_000, help="Monte-Carlo samples (default 1e8)")
    p.add_argument("--iters", type=int, default=10, help="timed stencil iterations")
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--report-only", action="store_true", help="only render the docs from fusion.json")
    a = p.parse_args(argv)
    path = RESULTS / "fusion.json"
    if not a.report_only:
        from .machine import describe

        res = measure(a.repeats, a.size, a.pi, a.iters, a.timeout)
        res.update(size=a.size, pi_n=a.pi, repeats=a.repeats, machine=describe(), load=os.getloadavg()[0])
        from .__main__ import overhead_json

        res["overhead"] = overhead_json()
        res["compile"] = compile_cache()
        RESULTS.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(res, indent=1) + "\n")
    res = json.loads(path.read_text())
    write_docs(res)
    print(section(res))
    print(f"wrote {path} and {DOCS} ({time.strftime('%H:%M:%S')})")


if __name__ == "__main__":
    main()
