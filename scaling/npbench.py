"""npbench's NumPy kernels, unmodified, with ``np`` rebound to spmdarray.

::

    python -m scaling npbench --npbench DIR --preset S --ranks 1,2,3 --time-ranks 1,2

``DIR`` is an npbench checkout (github.com/spcl/npbench), fetched by whoever
runs this; it is not part of this repository.  Every kernel runs in its own
``mpiexec -n R python -m scaling.npbench_kernel`` under a timeout, at each rank
count (see ``npbench_kernel.py`` for the validation and the timing).  The
records are kept in ``scaling/results/npbench_<preset>.json`` (a later run
with ``--only`` replaces only its kernels), and the table of every kernel,
whether it is correct at each rank count and its time ratio spmdarray / NumPy
at each timed rank count, with the geometric means, replaces the part of
``docs/performance.md`` between the npbench markers.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy

from .driver import ROOT, _env, _mpiexec
from .machine import describe

RESULTS = ROOT / "scaling" / "results"
DOCS = ROOT / "docs" / "performance.md"
BEGIN = "<!-- npbench: begin (python -m scaling npbench) -->"
END = "<!-- npbench: end -->"
MARKER = "NPBENCH "


def kernels(root: Path) -> list[str]:
    """Short names of the benchmarks of an npbench checkout (``bench_info/*.json``), sorted."""
    names = sorted(p.stem for p in (root / "bench_info").glob("*.json"))
    if not names:
        raise FileNotFoundError(f"no bench_info/*.json under {root}: pass the root of an npbench checkout")
    return names


def parse_output(text: str) -> dict | None:
    """The record in a run's output: rank 0's ``NPBENCH`` line, else the first other rank's."""
    recs = []
    for line in text.splitlines():
        at = line.find(MARKER)
        if at < 0:
            continue
        try:  # ranks print concurrently: a line may hold more than one record
            recs.append(json.JSONDecoder().raw_decode(line, at + len(MARKER))[0])
        except ValueError:
            continue
    if not recs:
        return None
    return next((r for r in recs if r.get("rank") == 0), recs[0])


def launch(root: Path, bench: str, preset: str, ranks: int, timed: bool, repeats: int, timeout: float) -> dict:
    """Run one kernel at ``ranks`` in its own ``mpiexec`` and return its record (never raises)."""
    cmd = [_mpiexec(), "-n", str(ranks), sys.executable, "-m", "scaling.npbench_kernel"]
    cmd += ["--npbench", str(root), "--bench", bench, "--preset", preset, "--repeats", str(repeats)]
    if not timed:
        cmd.append("--no-time")
    cmd = ["timeout", "--kill-after=10", str(int(timeout)), *cmd]
    t0 = time.time()
    proc = subprocess.run(cmd, cwd=ROOT, env=_env(ranks), capture_output=True, text=True)
    rec = parse_output(proc.stdout)
    if rec is None:
        timed_out = proc.returncode in (124, 137)
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-1:] or [""]
        rec = {
            "status": "timeout" if timed_out else "error",
            "etype": "timeout" if timed_out else f"exit {proc.returncode}",
            "emsg": f"no result after {timeout:.0f} s" if timed_out else tail[0][:300],
        }
    rec.update(bench=bench, preset=preset, ranks=ranks, wall=round(time.time() - t0, 1))
    return rec


def geomean(values: list[float]) -> float | None:
    """Geometric mean of positive numbers; None for an empty list."""
    vals = [v for v in values if v is not None and v > 0]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def _correct(rec: dict | None) -> str:
    if rec is None:
        return "-"
    status = rec.get("status")
    if status == "pass":
        return "yes"
    if status == "wrong":
        return "WRONG"
    return rec.get("etype") or status


def _ratio(rec: dict | None) -> float | None:
    if rec is None or rec.get("status") != "pass":
        return None
    return rec.get("ratio")


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def table(records: list[dict], ranks: list[int], time_ranks: list[int]) -> str:
    """The Markdown table: one row per kernel, then the geometric means.

    ``correct`` lists, per rank count, ``yes``, ``WRONG`` or the error; a ratio
    is spmdarray's time over NumPy's (higher is slower), shown only for a
    correct run.  Two geometric-mean rows: over the kernels correct and timed
    at that rank count, and over those correct and timed at every timed rank
    count (the same kernels in every column).
    """
    by = {(r["bench"], r["ranks"]): r for r in records}
    benches = sorted({r["bench"] for r in records})
    head = ["kernel", "correct (" + ", ".join(map(str, ranks)) + " ranks)"]
    head += [f"ratio {p} rank{'s' if p > 1 else ''}" for p in time_ranks]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for b in benches:
        cells = [b, ", ".join(_correct(by.get((b, p))) for p in ranks)]
        cells += [_fmt(_ratio(by.get((b, p)))) for p in time_ranks]
        lines.append("| " + " | ".join(cells) + " |")
    passing = [sum(_correct(by.get((b, p))) == "yes" for b in benches) for p in ranks]
    common = [b for b in benches if all(_ratio(by.get((b, p))) for p in time_ranks)]
    per = [[_ratio(by.get((b, p))) for b in benches] for p in time_ranks]
    row = ["**geomean** (kernels timed at that rank count)", ", ".join(f"{n}/{len(benches)}" for n in passing)]
    row += [f"{_fmt(geomean(v))} (n={sum(x is not None for x in v)})" for v in per]
    lines.append("| " + " | ".join(row) + " |")
    row = [f"**geomean** (the {len(common)} kernels timed at every rank count)", ""]
    row += [_fmt(geomean([by[(b, p)]["ratio"] for b in common])) for p in time_ranks]
    lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def section(records: list[dict], ranks: list[int], time_ranks: list[int], meta: dict) -> str:
    """The generated text between the markers: how it was measured, the table, the failures."""
    preset = meta.get("preset", "?")
    text = (
        f"Measured by `python -m scaling npbench --preset {preset} --ranks {','.join(map(str, ranks))} "
        f"--time-ranks {','.join(map(str, time_ranks))}` on {meta.get('date', '?')} "
        f"({meta.get('machine', '?')}, load average {meta.get('load', 0):.1f}; NumPy {meta.get('numpy', '?')}). "
        "Each kernel is npbench's unmodified `<name>_numpy.py` with `np` rebound to spmdarray, in its own "
        "`mpiexec`; correct means npbench's rule (`numpy.allclose` with the benchmark's rtol, default 1e-5, "
        "or a relative 2-norm error under its `norm_error`) on the gathered results, identical on every rank. "
        "A ratio is spmdarray's time over NumPy's in the same processes (minimum over repeats, each run the "
        "maximum over ranks); higher is slower. With more ranks than cores the runs are oversubscribed.\n\n"
    )
    text += table(records, ranks, time_ranks)
    failed = [r for r in records if r.get("status") != "pass"]
    if failed:
        text += "\nNot correct, or not finished within the timeout:\n\n"
        for r in sorted(failed, key=lambda r: (r["bench"], r["ranks"])):
            why = r.get("emsg", "")
            if r.get("status") == "wrong":
                err = r.get("rel_err", float("nan"))
                why = f"relative error {err:.3g}, same on every rank: {r.get('rank_consistent')}"
            text += f"- `{r['bench']}` at {r['ranks']} rank(s): {r.get('etype', r.get('status'))}: "
            text += why.replace("|", "/").strip() + "\n"
    return text


def current_block(docs: Path = DOCS) -> str:
    """The npbench section of ``docs``, markers included (a placeholder when it has none)."""
    text = docs.read_text() if docs.exists() else ""
    if BEGIN in text and END in text:
        return BEGIN + text.split(BEGIN, 1)[1].split(END, 1)[0] + END
    return f"{BEGIN}\nNot measured: see `python -m scaling npbench`.\n{END}"


def write_docs(text: str, docs: Path = DOCS) -> None:
    """Replace the npbench section of ``docs`` (appended, with a heading, if missing)."""
    old = docs.read_text() if docs.exists() else "# Performance\n"
    block = f"{BEGIN}\n{text}{END}"
    if BEGIN in old and END in old:
        pre, rest = old.split(BEGIN, 1)
        new = pre + block + rest.split(END, 1)[1]
    else:
        new = old.rstrip("\n") + "\n\n## npbench\n\n" + block + "\n"
    docs.write_text(new)


def merge(old: list[dict], new: list[dict]) -> list[dict]:
    """Records of ``old`` not rerun in ``new``, then ``new``."""
    keys = {(r["bench"], r["ranks"]) for r in new}
    return [r for r in old if (r["bench"], r["ranks"]) not in keys] + new


def main(argv: list[str] | None = None) -> None:
    """Run the kernels, save the records, update the docs."""
    p = argparse.ArgumentParser(prog="python -m scaling npbench", description=__doc__.splitlines()[0])
    p.add_argument("--npbench", required=True, type=Path, help="root of an npbench checkout")
    p.add_argument("--preset", default="S", choices=("S", "M", "L", "paper"))
    p.add_argument("--ranks", default="1,2,4", help="rank counts checked for correctness (default 1,2,4)")
    p.add_argument("--time-ranks", default=None, help="rank counts also timed (default: those <= cores)")
    p.add_argument("--only", default=None, help="kernels, comma-separated (default: all)")
    p.add_argument("--repeats", type=int, default=3, help="timed repeats (default 3; the first is validated)")
    p.add_argument("--timeout", type=float, default=300, help="seconds per kernel run (default 300)")
    p.add_argument("--docs", type=Path, default=DOCS)
    p.add_argument(
        "--records", type=Path, default=None, help="records file (default scaling/results/npbench_<preset>.json)"
    )
    p.add_argument("--report-only", action="store_true", help="only render the docs from the saved records")
    a = p.parse_args(argv)
    ranks = [int(x) for x in a.ranks.split(",") if x]
    cores = os.cpu_count() or 1
    time_ranks = [int(x) for x in a.time_ranks.split(",") if x] if a.time_ranks else [r for r in ranks if r <= cores]
    root = a.npbench.resolve()
    path = a.records or RESULTS / f"npbench_{a.preset}.json"
    saved = json.loads(path.read_text()) if path.exists() else {"records": []}
    if not a.report_only:
        names = a.only.split(",") if a.only else kernels(root)
        path.parent.mkdir(parents=True, exist_ok=True)
        for bench in names:
            for r in ranks:
                rec = launch(root, bench, a.preset, r, r in time_ranks, a.repeats, a.timeout)
                print(f"{bench:24s} {r} rank(s): {_correct(rec):12s} ratio {_fmt(_ratio(rec))} ({rec['wall']} s)",
                      flush=True)  # fmt: skip
                saved["records"] = merge(saved["records"], [rec])
                saved["meta"] = {
                    "preset": a.preset, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                    "machine": describe(), "load": os.getloadavg()[0], "numpy": numpy.__version__,
                }  # fmt: skip
                path.write_text(json.dumps(saved, indent=1) + "\n")  # after each run: a killed run keeps its records
    text = section(saved["records"], ranks, time_ranks, saved.get("meta", {}))
    write_docs(text, a.docs)
    print(text)
    print(f"wrote {path} and {a.docs}")


if __name__ == "__main__":
    main()
