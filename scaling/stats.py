"""Grouping and ratios of CSV rows, shared by the plots and the report."""

from __future__ import annotations

import statistics
from collections import defaultdict

IMPL_ORDER = ("spmdarray", "mpi4py", "numpy", "dask")


def by_key(rows: list[dict], suite: str) -> dict[tuple, list[dict]]:
    """Rows of ``suite`` grouped by ``(workload, mode, impl, ranks, dims)``."""
    out: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        if r["suite"] == suite:
            out[(r["workload"], r["mode"], r["impl"], int(r["ranks"]), r["dims"])].append(r)
    return out


def points(rows: list[dict], suite: str, workload: str) -> dict[str, dict[int, list[dict]]]:
    """``{impl: {ranks: [rows]}}`` for one workload of a suite; NumPy keyed by the
    rank count its problem size belongs to (``dims`` of the spmdarray run)."""
    out: dict[str, dict[int, list[dict]]] = defaultdict(lambda: defaultdict(list))
    spmd_dims = {}
    for r in rows:
        if r["suite"] == suite and r["workload"] == workload and r["impl"] == "spmdarray":
            spmd_dims.setdefault(int(r["ranks"]), r["dims"])
    for r in rows:
        if r["suite"] != suite or r["workload"] != workload:
            continue
        if r["impl"] == "numpy":
            for p, d in spmd_dims.items():
                if d == r["dims"]:
                    out["numpy"][p].append(r)
        else:
            out[r["impl"]][int(r["ranks"])].append(r)
    return out


def ratios(pts: dict[str, dict[int, list[dict]]], impl: str, base: str, ranks: int) -> list[float]:
    """Throughput of ``impl`` over ``base`` at ``ranks``, one ratio per repeat (same problem)."""
    a = {r["repeat"]: float(r["throughput"]) for r in pts.get(impl, {}).get(ranks, [])}
    b = {r["repeat"]: float(r["throughput"]) for r in pts.get(base, {}).get(ranks, [])}
    return [a[k] / b[k] for k in sorted(a) if k in b and b[k] > 0]


def span(values: list[float], fmt: str = "{:.2f}") -> str:
    """``"lo - hi"`` of values (one value alone; ``"n/a"`` for none)."""
    if not values:
        return "n/a"
    lo, hi = min(values), max(values)
    return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else f"{fmt.format(lo)} - {fmt.format(hi)}"


def median(values: list[float]) -> float:
    """Median, NaN for no values."""
    return statistics.median(values) if values else float("nan")
