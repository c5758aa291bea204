"""The three PNG plots of the report (matplotlib, Agg backend)."""

from __future__ import annotations

from pathlib import Path

from .stats import IMPL_ORDER, median, points

WORKLOAD_ORDER = ("stencil", "heat3d", "pi", "matmul", "reductions")
STYLE = {"spmdarray": "o-", "mpi4py": "s--", "numpy": "^:", "dask": "d-."}


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _workloads(rows: list[dict], suite: str) -> list[str]:
    present = {r["workload"] for r in rows if r["suite"] == suite}
    return [w for w in WORKLOAD_ORDER if w in present]


def _weak_panel(ax, rows: list[dict], w: str) -> None:
    pts = points(rows, "weak", w)
    unit = next(r["unit"] for r in rows if r["workload"] == w)
    for impl in IMPL_ORDER:
        if impl in pts:
            ranks = sorted(pts[impl])
            per = [1 if impl == "numpy" else p for p in ranks]
            ys = [median([float(r["throughput"]) for r in pts[impl][p]]) / k for p, k in zip(ranks, per)]
            ax.plot(ranks, ys, STYLE[impl], label="numpy (1 process, same problem)" if impl == "numpy" else impl)
    ax.set_ylabel(f"{unit}/s per rank")


def _strong_panel(ax, rows: list[dict], w: str) -> None:
    pts = points(rows, "strong", w)
    base = median([float(r["s_per_iter"]) for rs in pts.get("numpy", {}).values() for r in rs])
    ranks_all = sorted({p for d in pts.values() for p in d})
    for impl in IMPL_ORDER:
        if impl in pts and impl != "numpy":
            ranks = sorted(pts[impl])
            ys = [base / median([float(r["s_per_iter"]) for r in pts[impl][p]]) for p in ranks]
            ax.plot(ranks, ys, STYLE[impl], label=impl)
    ax.plot(ranks_all, ranks_all, "k:", lw=0.8, label="ideal")
    ax.axhline(1.0, color="grey", lw=0.5)
    ax.set_ylabel("speed-up over NumPy")


def _panels(rows: list[dict], suite: str, panel, path: Path) -> Path:
    """One panel per workload of ``suite``, drawn by ``panel(ax, rows, workload)``."""
    plt = _plt()
    names = _workloads(rows, suite)
    fig, axes = plt.subplots(1, max(1, len(names)), figsize=(3.2 * max(1, len(names)), 3.2), squeeze=False)
    if not names:
        axes[0][0].text(0.5, 0.5, "no runs", ha="center")
    for ax, w in zip(axes[0], names):
        panel(ax, rows, w)
        ax.set_title(f"{w} ({suite})")
        ax.set_xlabel("ranks (dask: threads)")
        ax.set_xticks(sorted({int(r["ranks"]) for r in rows if r["suite"] == suite and r["workload"] == w}))
        ax.set_ylim(bottom=0)
    if names:
        axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def weak(rows: list[dict], path: Path) -> Path:
    """Weak scaling: median throughput per rank against ranks, one panel per workload."""
    return _panels(rows, "weak", _weak_panel, path)


def strong(rows: list[dict], path: Path) -> Path:
    """Strong scaling: speed-up over NumPy on one process against ranks."""
    return _panels(rows, "strong", _strong_panel, path)


def comm_bars(rows: list[dict], path: Path) -> Path:
    """Halo bytes per rank per iteration (largest rank) against the theoretical minimum."""
    plt = _plt()
    labels, spmd, hand, mins = [], [], [], []
    for suite in ("weak", "strong"):
        for w in ("stencil", "heat3d"):
            pts = points(rows, suite, w)
            for p in sorted(pts.get("spmdarray", {})):
                if p == 1:
                    continue
                labels.append(f"{w}\n{suite} P={p}")
                spmd.append(float(pts["spmdarray"][p][0]["bytes_max"]) / 1e3)
                mins.append(float(pts["spmdarray"][p][0]["min_bytes_max"]) / 1e3)
                hw = pts.get("mpi4py", {}).get(p)
                hand.append(float(hw[0]["bytes_max"]) / 1e3 if hw else 0.0)
    fig, ax = plt.subplots(figsize=(1.3 * max(len(labels), 4) + 1, 3.6))
    xs = range(len(labels))
    width = 0.27
    ax.bar([x - width for x in xs], mins, width, label="theoretical minimum (spmdarray's layout)", color="0.7")
    ax.bar(list(xs), spmd, width, label="spmdarray (measured)")
    ax.bar([x + width for x in xs], hand, width, label="hand-written mpi4py (1-D rows)")
    ax.set_xticks(list(xs), labels, fontsize=7)
    ax.set_ylabel("kB sent per rank per iteration (largest rank)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def make_all(rows: list[dict], folder: Path) -> list[Path]:
    """Write the three plots into ``folder``; their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    return [
        weak(rows, folder / "scaling_weak.png"),
        strong(rows, folder / "scaling_strong.png"),
        comm_bars(rows, folder / "scaling_comm.png"),
    ]
