"""Command line of the scaling suite.

::

    python -m scaling run stencil --ranks 1,2,4 --mode weak --size 1000
    python -m scaling overhead
    python -m scaling fusion                   # fused-evaluation targets, docs section
    python -m scaling all                      # everything, then the docs and plots
    python -m scaling report                   # docs and plots again from the CSV
    python -m scaling npbench --npbench DIR --preset S --ranks 1,2,4   # npbench kernels
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from . import driver, suite
from .peers import available
from .workloads import WORKLOADS

RESULTS = driver.ROOT / "scaling" / "results"
BASE_IMPLS = ["numpy", "mpi4py", "spmdarray"]


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def _impls(requested: str | None) -> list[str]:
    peers, notes = available()
    for note in notes:
        print(f"note: {note}", flush=True)
    if requested is None:
        return BASE_IMPLS + peers
    names = [x for x in requested.split(",") if x]
    missing = [x for x in names if x not in BASE_IMPLS and x not in peers]
    for name in missing:
        print(f"note: {name} skipped: not installed", flush=True)
    return [x for x in names if x not in missing]


def cmd_run(a: argparse.Namespace) -> None:
    """``run``: one workload at several rank counts, appended to the CSV."""
    rows = driver.series(
        a.workload,
        ranks=_ints(a.ranks),
        mode=a.mode,
        size=a.size,
        impls=_impls(a.impls),
        iters=a.iters,
        warmup=a.warmup,
        repeats=a.repeats,
        timeout=a.timeout,
    )
    driver.write_csv(Path(a.csv), rows, append=True)
    print(f"{len(rows)} rows appended to {a.csv}")


def overhead_json(timeout: float = 300) -> list[dict]:
    """Run the overhead benchmark in a fresh single process; its figures."""
    return driver.run_json([sys.executable, "-m", "scaling.overhead", "--json"], 1, timeout)


def cmd_all(a: argparse.Namespace) -> None:
    """``all``: the whole suite, the memory and overhead benchmarks, the plots and the docs."""
    t0 = time.time()
    ranks, impls = _ints(a.ranks), _impls(a.impls)
    rows: list[dict] = []
    for workload, mode, size, iters, warmup in suite.SUITE:
        if a.only and workload not in a.only.split(","):
            continue
        rows += driver.series(
            workload,
            ranks=ranks,
            mode=mode,
            size=size,
            impls=[i for i in impls if mode == "weak" or i not in suite.STRONG_SKIPS],
            iters=iters,
            warmup=warmup,
            repeats=a.repeats,
            timeout=a.timeout,
        )
    workload, mode, size, iters, warmup = suite.MEMORY
    rows += driver.series(
        workload,
        ranks=ranks,
        mode=mode,
        size=size,
        impls=["numpy", "mpi4py", "spmdarray"],
        iters=iters,
        warmup=warmup,
        repeats=1,
        timeout=a.timeout,
        suite="memory",
    )
    out = Path(a.out)
    driver.write_csv(out / "results.csv", rows)
    print("overhead: x += 2*y at 1 rank ...", flush=True)
    (out / "overhead.json").write_text(json.dumps(overhead_json(), indent=1) + "\n")
    print(f"suite done in {time.time() - t0:.0f} s", flush=True)
    _report(out, Path(a.docs), Path(a.img))


def _report(out: Path, docs: Path, img: Path) -> None:
    from . import plots, report

    rows = driver.read_csv(out / "results.csv")
    overhead = json.loads((out / "overhead.json").read_text())
    pngs = plots.make_all(rows, img)
    _, notes = available()
    page = docs.read_text() if docs.exists() else None  # (its hand-written sections are kept)
    docs.write_text(report.render(rows, overhead, pngs, docs.parent, notes, page=page))
    print(f"wrote {docs} and {', '.join(str(p) for p in pngs)}")


def cmd_report(a: argparse.Namespace) -> None:
    """``report``: the plots and the docs again, from the saved results."""
    _report(Path(a.out), Path(a.docs), Path(a.img))


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and run the subcommand."""
    p = argparse.ArgumentParser(prog="python -m scaling", description="spmdarray scaling suite")
    sub = p.add_subparsers(dest="cmd", required=True)

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--ranks", default="1,2,4", help="rank counts, comma-separated (default 1,2,4)")
        sp.add_argument("--impls", default=None, help=f"comma-separated (default: {','.join(BASE_IMPLS)} + peers)")
        sp.add_argument("--repeats", type=int, default=2, help="alternating rounds (default 2)")
        sp.add_argument("--timeout", type=float, default=300, help="seconds per run before it is killed")

    r = sub.add_parser("run", help="one workload at several rank counts")
    r.add_argument("workload", choices=sorted(WORKLOADS))
    r.add_argument("--mode", choices=("weak", "strong"), default="weak")
    r.add_argument("--size", type=int, required=True, help="problem size (see the workload's dims)")
    r.add_argument("--iters", type=int, default=10, help="timed iterations")
    r.add_argument("--warmup", type=int, default=2, help="untimed iterations first")
    r.add_argument("--csv", default=str(RESULTS / "runs.csv"), help="CSV to append to")
    common(r)
    r.set_defaults(func=cmd_run)

    al = sub.add_parser("all", help="the whole suite, then plots and docs/performance.md")
    common(al)
    al.add_argument("--only", default=None, help="workloads to run, comma-separated (default: all)")
    for sp in (al, rp := sub.add_parser("report", help="plots and docs again from saved results")):
        sp.add_argument("--out", default=str(RESULTS), help="results folder")
        sp.add_argument("--docs", default=str(driver.ROOT / "docs" / "performance.md"))
        sp.add_argument("--img", default=str(driver.ROOT / "docs" / "img"))
    al.set_defaults(func=cmd_all)
    rp.set_defaults(func=cmd_report)

    sub.add_parser("overhead", help="per-operation overhead at 1 rank (options: python -m scaling.overhead -h)")
    sub.add_parser("fusion", help="fused-evaluation targets in one run (options: python -m scaling.fusion -h)")
    sub.add_parser("npbench", help="npbench's kernels against NumPy (options: python -m scaling npbench -h)")

    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["overhead"]:
        from . import overhead

        overhead.main(argv[1:])
        return
    if argv[:1] == ["fusion"]:
        from . import fusion

        fusion.main(argv[1:])
        return
    if argv[:1] == ["npbench"]:
        from . import npbench

        npbench.main(argv[1:])
        return
    a = p.parse_args(argv)
    a.func(a)


if __name__ == "__main__":
    main()
