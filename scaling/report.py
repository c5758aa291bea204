"""Render ``docs/performance.md`` from the results of ``python -m scaling all``."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .stats import median, points, ratios, span

WORKLOADS = ("stencil", "heat3d", "pi", "matmul", "reductions")

#: Why spmdarray trails hand-written mpi4py on each workload, from profiling
#: the operations one by one at one rank (see the closing note).
CAUSES = {
    "stencil": "synchronisation: a sweep is six array operations, and each operation with a shifted "
    "operand exchanges its halo in its own round (post, wait), so a rank waits once per neighbour "
    "direction, where the hand-written loop exchanges its ghost rows once per sweep and waits once. "
    "Every extra round is a synchronisation between ranks, which costs most with more ranks than "
    "cores, and on a 2 x 2 grid the column halos are strided, so they are packed and received through "
    "staging buffers. The bytes are the minimum (see below); the wide ranges show how much of the gap "
    "is this machine's noise",
    "heat3d": "the engine's fixed cost on each of the twelve operations per step, and temporaries the "
    "hand-written loop avoids with an in-place update (`c += ALPHA * lap`)",
    "pi": "random numbers: `spmdarray.random` evaluates a counter-based SplitMix64 with NumPy integer "
    "operations on each block's flat indices (rank-count independent streams), about 2-4x slower "
    "per number than the PCG64 generator the hand-written version calls; the draws dominate the workload",
    "matmul": "SUMMA: per panel of k, a broadcast along grid rows and columns and an accumulation "
    "`C_local += A_panel @ B_panel`, so the product is several smaller GEMMs plus additions; the "
    "hand-written version gathers B once and runs one GEMM per rank",
    "reductions": "`std(axis=1)`: after squaring the deviations in place it takes about 2x NumPy's time "
    "at one rank (3.4-4.4 ms against 1.6-2.1 ms on 800 x 800, measured separately): the deviations "
    "`x - mean` are a second pass through the engine, with a freshly allocated input-sized temporary, "
    "plus two reductions; `mean`, `max` and `argmax` along an axis stay within 1-2x of NumPy",
}


#: At one rank no message moves, so the stencil's gap has another cause.
ONE_RANK_STENCIL = (
    "no messages move at one rank, so the gap is the engine's fixed cost on the six operations of each "
    "sweep and this shared machine's noise: spot runs of examples/stencil.py -N 800 at one rank give "
    "0.7-1.0 x NumPy, and the same runs before and after a change differ by as much"
)


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _ranks(pts: dict) -> list[int]:
    return sorted(pts.get("spmdarray", {}))


def _problem(pts: dict, p: int) -> str:
    return pts["spmdarray"][p][0]["dims"]


def ratio_table(rows: list[dict], has_dask: bool) -> str:
    """Throughput ratios of spmdarray to each baseline, per workload, mode and rank count."""
    out = []
    for w in WORKLOADS:
        for mode in ("weak", "strong"):
            pts = points(rows, mode, w)
            for p in _ranks(pts):
                line = [
                    w,
                    mode,
                    str(p),
                    _problem(pts, p),
                    span(ratios(pts, "spmdarray", "numpy", p)),
                    span(ratios(pts, "spmdarray", "mpi4py", p)),
                ]
                if has_dask:
                    line.append(span(ratios(pts, "spmdarray", "dask", p)))
                out.append(line)
    head = ["workload", "mode", "ranks", "global problem", "spmdarray / NumPy", "spmdarray / mpi4py"]
    return _table(head + (["spmdarray / dask"] if has_dask else []), out)


def absolute_table(rows: list[dict]) -> str:
    """Milliseconds per iteration (range over repeats) of every implementation."""
    out = []
    impls = [i for i in ("numpy", "mpi4py", "spmdarray", "dask") if any(r["impl"] == i for r in rows)]
    for w in WORKLOADS:
        for mode in ("weak", "strong"):
            pts = points(rows, mode, w)
            for p in _ranks(pts):
                cells = [
                    span([float(r["s_per_iter"]) * 1e3 for r in pts.get(i, {}).get(p, [])], "{:.3g}") for i in impls
                ]
                out.append([w, mode, str(p), _problem(pts, p), *cells])
    return _table(["workload", "mode", "ranks", "global problem", *[f"{i} ms/iter" for i in impls]], out)


def comm_table(rows: list[dict]) -> str:
    """Per rank per iteration: spmdarray's point-to-point bytes and messages, the minimum, collectives."""
    out = []
    for w in WORKLOADS:
        for mode in ("weak", "strong"):
            pts = points(rows, mode, w)
            for p in _ranks(pts):
                s = pts["spmdarray"][p][0]
                hw = pts.get("mpi4py", {}).get(p)
                out.append([
                    w, mode, str(p), s["dims"], s["bytes_per_rank"].replace(";", ", "),
                    s["min_bytes_per_rank"].replace(";", ", ") or "n/a",
                    s["msgs_per_rank"].replace(";", ", "), s["collectives_per_rank"].replace(";", ", "),
                    s["collective_bytes_per_rank"].replace(";", ", "),
                    hw[0]["bytes_per_rank"].replace(";", ", ") if hw else "n/a",
                ])  # fmt: skip
    head = [
        "workload",
        "mode",
        "ranks",
        "problem",
        "spmdarray p2p bytes",
        "minimum",
        "p2p msgs",
        "collective calls",
        "collective bytes",
        "mpi4py p2p bytes",
    ]
    return _table(head, out)


def memory_table(rows: list[dict]) -> str:
    """Peak RSS per rank of the N = 8000 stencil."""
    pts = points(rows, "memory", "stencil")
    out = []
    for p in _ranks(pts):
        cells = []
        for impl in ("spmdarray", "mpi4py", "numpy"):
            r = pts.get(impl, {}).get(p)
            cells.append(r[0]["peak_rss_mib"].replace(";", ", ") if r else "n/a")
        out.append([str(p), *cells])
    return _table(["ranks", "spmdarray MiB per rank", "mpi4py MiB per rank", "NumPy MiB (1 process)"], out)


def overhead_table(overhead: list[dict]) -> str:
    """The ``x += 2*y`` microbenchmark."""
    out = [
        [f"{o['elements']:,}", f"{o['numpy_us']:.1f}", f"{o['spmdarray_us']:.1f}", f"{o['added_us_per_op']:.1f}"]
        for o in overhead
    ]
    return _table(["elements", "NumPy us/statement", "spmdarray us/statement", "added per operation (us)"], out)


def _nranks(p: int) -> str:
    return f"{p} rank" if p == 1 else f"{p} ranks"


def closing(rows: list[dict]) -> str:
    """The measured summary: stencil ratios, memory and the largest gap to mpi4py (the
    per-operation overhead has its own block and section)."""
    lines = []
    for mode in ("weak", "strong"):
        pts = points(rows, mode, "stencil")
        parts = [
            f"{p} rank{'s' if p > 1 else ''}: {span(ratios(pts, 'spmdarray', 'numpy', p))} x NumPy, "
            f"{span(ratios(pts, 'spmdarray', 'mpi4py', p))} x mpi4py"
            for p in _ranks(pts)
        ]
        if parts:
            lines.append(f"- Stencil throughput, {mode} scaling: " + "; ".join(parts) + ".")
    mem = points(rows, "memory", "stencil")
    if mem.get("numpy") and mem.get("spmdarray"):
        np_mib = float(next(iter(mem["numpy"].values()))[0]["peak_rss_max_mib"])
        per = ", ".join(f"{float(mem['spmdarray'][p][0]['peak_rss_max_mib']):.0f} MiB at {p}" for p in _ranks(mem))
        lines.append(f"- Peak memory of the N = 8000 stencil per rank: {per}, against NumPy's {np_mib:.0f} MiB.")
    gaps = []
    for w in WORKLOADS:
        for mode in ("weak", "strong"):
            pts = points(rows, mode, w)
            for p in _ranks(pts):
                r = ratios(pts, "spmdarray", "mpi4py", p)
                if r:
                    gaps.append((median(r), w, mode, p, r))
    if gaps:
        g = min(gaps)
        lines.append(
            f"- Largest gap to hand-written mpi4py: {g[1]} ({g[2]} scaling, {_nranks(g[3])}), spmdarray at "
            f"{span(g[4])} x its throughput. Cause: {CAUSES[g[1]]}."
        )
        st = min((x for x in gaps if x[1] == "stencil"), default=None)
        if st is not None and st[0] >= 1:
            lines.append(
                "- Stencil against hand-written mpi4py: spmdarray is ahead at every rank count, weak and strong; "
                f"the closest is {st[2]} scaling, {_nranks(st[3])}, at {span(st[4])} x its throughput. The fused "
                "kernel reads the grid once and writes the centre once; the mpi4py baseline runs the same NumPy "
                "expression with its temporaries (the fused-evaluation section compares it with a hand-written "
                "numba kernel instead)."
            )
        elif st is not None and g[1] != "stencil":
            cause = CAUSES["stencil"] if st[3] > 1 else ONE_RANK_STENCIL
            lines.append(
                f"- Largest stencil gap to hand-written mpi4py: {st[2]} scaling, {_nranks(st[3])}, spmdarray at "
                f"{span(st[4])} x its throughput. Cause: {cause}."
            )
    return "\n".join(lines)


#: The parts of ``performance.md`` this module writes, each between ``<!-- report:NAME -->``
#: and ``<!-- /report:NAME -->``; the rest of the page is written by hand and kept.
BLOCKS = ("header", "closing", "ratios", "overhead", "memory", "comm", "absolute", "plots", "peers")


def marked(name: str, body: str) -> str:
    """``body`` between the markers of block ``name``."""
    return f"<!-- report:{name} -->\n{body.strip()}\n<!-- /report:{name} -->"


def _has_blocks(page: str) -> bool:
    return all(f"<!-- report:{k} -->" in page and f"<!-- /report:{k} -->" in page for k in BLOCKS)


def blocks(rows: list[dict], overhead: list[dict], pngs: list[Path], docs_dir: Path, notes: list[str]) -> dict:
    """The text of each of :data:`BLOCKS` from the results."""
    has_dask = any(r["impl"] == "dask" for r in rows)
    machine = rows[0]["machine"] if rows else "unknown"
    versions = sorted(
        {r["versions"] for r in rows if r["impl"] == "spmdarray"} | {r["versions"] for r in rows if r["impl"] == "dask"}
    )
    repeats = len({r["repeat"] for r in rows if r["suite"] == "weak"})
    header = (
        "The tables between `report` markers were measured in one run of `python -m scaling all` on the\n"
        f"project's development machine: {machine}. The machine is shared with other\n"
        "work, so absolute times are noise. Read the **ratios**, each measured between\n"
        f"runs made one after another, and their ranges over {repeats} alternating\n"
        "repeats. Runs with more ranks than cores (4 ranks on 2 cores) are\n"
        "oversubscribed (`MPIR_CVAR_ENABLE_HEAVY_YIELD=1`): they show communication\n"
        "volume, memory and overhead, not speed-up.\n\n"
        "Versions:\n" + "\n".join(f"- {v}" for v in versions)
    )
    return {
        "header": header,
        "closing": closing(rows),
        "ratios": ratio_table(rows, has_dask),
        "overhead": overhead_table(overhead),
        "memory": memory_table(rows),
        "comm": comm_table(rows),
        "absolute": absolute_table(rows),
        "plots": "\n\n".join(f"![{p.stem}]({os.path.relpath(p, docs_dir)})" for p in pngs),
        "peers": "\n".join(f"- {n}" for n in notes) or "- none",
    }


def render(
    rows: list[dict], overhead: list[dict], pngs: list[Path], docs_dir: Path, notes: list[str], page: str | None = None
) -> str:
    """``performance.md`` with the measured blocks from these results.

    ``page``: the page as it is.  Where it holds every block's markers, only the
    blocks (and the fused-evaluation block between its own markers, where
    ``python -m scaling fusion`` left results) are replaced, and everything
    written by hand around them is kept; otherwise the page is made anew from
    ``report_template.md``.
    """
    b = blocks(rows, overhead, pngs, docs_dir, notes)
    if page is not None and _has_blocks(page):
        for name, body in b.items():
            pattern = re.compile(f"<!-- report:{name} -->.*?<!-- /report:{name} -->", re.S)
            page = pattern.sub(lambda _m, n=name, t=body: marked(n, t), page, count=1)
        from . import fusion

        if fusion.BEGIN in page and fusion.END in page and (fusion.RESULTS / "fusion.json").exists():
            # (without this run's fusion results the page's block is kept as it is)
            head, rest = page.split(fusion.BEGIN, 1)
            page = head + fusion_block() + rest.split(fusion.END, 1)[1]
        return page
    template = (Path(__file__).parent / "report_template.md").read_text()
    return template.format(**{k: marked(k, v) for k, v in b.items()}, fusion=fusion_block(), npbench=npbench_block())


def fusion_block() -> str:
    """The fused-evaluation section from ``scaling/results/fusion.json`` (``python -m scaling fusion``)."""
    from . import fusion

    path = fusion.RESULTS / "fusion.json"
    if not path.exists():
        body = "Not measured in this run: see `python -m scaling fusion`.\n"
    else:
        body = fusion.section(json.loads(path.read_text()))
    return f"{fusion.BEGIN}\n{body}{fusion.END}"


def npbench_block() -> str:
    """The npbench section as ``docs/performance.md`` has it (``python -m scaling npbench`` writes it)."""
    from . import npbench

    return npbench.current_block()
