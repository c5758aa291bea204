"""Launch measured runs, one process or one ``mpiexec`` per run, and collect CSV rows.

Each run is ``python -m scaling.bench`` (see ``bench.py``) under
``timeout --kill-after=10``; the MPI implementations run under
``mpiexec -n RANKS``.  Every process gets one BLAS/OpenMP thread, so NumPy on
one process uses one core, as each rank does.  With more ranks than cores,
``MPIR_CVAR_ENABLE_HEAVY_YIELD=1`` makes waiting MPICH ranks sleep instead of
spinning (as ``tests/run_all.sh`` does).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .machine import describe
from .workloads import WORKLOADS

ROOT = Path(__file__).resolve().parent.parent
MPI_IMPLS = ("spmdarray", "mpi4py", "baseline")
FIELDS = [
    "suite", "workload", "impl", "mode", "size", "dims", "ranks", "repeat", "iters",
    "s_per_iter", "throughput", "unit", "throughput_per_rank",
    "bytes_max", "bytes_per_rank", "min_bytes_max", "min_bytes_per_rank",
    "msgs_per_rank", "collectives_per_rank", "collective_bytes_per_rank",
    "peak_rss_max_mib", "peak_rss_mib", "checksum", "versions", "machine",
]  # fmt: skip


def _mpiexec() -> str:
    local = Path(sys.executable).parent / "mpiexec"
    return str(local) if local.exists() else (shutil.which("mpiexec") or "mpiexec")


def _env(ranks: int) -> dict[str, str]:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    if ranks > (os.cpu_count() or 1):
        env.setdefault("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def launch(
    workload: str, impl: str, dims: tuple[int, ...], ranks: int, iters: int, warmup: int, timeout: float
) -> dict:
    """Run one measurement in a fresh process (or ``mpiexec`` job) and return its figures.

    Raises
    ------
    RuntimeError
        As ``run_json``.
    """
    cmd = [
        sys.executable,
        "-m",
        "scaling.bench",
        workload,
        "--impl",
        impl,
        "--dims",
        ",".join(map(str, dims)),
        "--iters",
        str(iters),
        "--warmup",
        str(warmup),
        "--workers",
        str(ranks),
    ]
    if impl in MPI_IMPLS:
        cmd = [_mpiexec(), "-n", str(ranks), *cmd]
    return run_json(cmd, ranks, timeout, marker="RESULT ")


def run_json(cmd: list[str], ranks: int, timeout: float, marker: str = ""):
    """Run ``cmd`` under ``timeout --kill-after=10`` from the repository root; parse
    the JSON after ``marker`` on the last line of its output that starts with it.

    Raises
    ------
    RuntimeError
        If the command fails, times out (exit code 124 or 137) or prints no
        such line; the message holds the command and the end of its output.
    """
    cmd = ["timeout", "--kill-after=10", str(int(timeout)), *cmd]
    proc = subprocess.run(cmd, cwd=ROOT, env=_env(ranks), capture_output=True, text=True)
    found = [line for line in proc.stdout.splitlines() if line.startswith(marker)]
    if proc.returncode == 0 and found:
        return json.loads(found[-1][len(marker) :])
    why = "timed out" if proc.returncode in (124, 137) else f"exit code {proc.returncode}"
    tail = (proc.stdout + proc.stderr)[-2000:]
    raise RuntimeError(f"{' '.join(cmd)}: {why}\n{tail}")


def _per_iter(values: list, iters: int) -> list:
    return [None if v is None else v / iters for v in values]


def _fmt(values: list | None) -> str:
    return (
        ""
        if values is None
        else ";".join("" if v is None else f"{v:.0f}" if abs(v) >= 100 else f"{v:g}" for v in values)
    )


def make_row(
    res: dict,
    *,
    suite: str,
    workload: str,
    impl: str,
    mode: str,
    size: int,
    dims: tuple[int, ...],
    ranks: int,
    repeat: int,
    iters: int,
    machine: str,
) -> dict:
    """One CSV row from a run's figures; communication is per rank per iteration."""
    wl = WORKLOADS[workload]
    spi = res["seconds"] / iters
    thr = wl.work(dims) / spi
    nbytes = _per_iter(res["bytes"], iters)
    mins = res["min_bytes"]
    return {
        "suite": suite, "workload": workload, "impl": impl, "mode": mode, "size": size,
        "dims": "x".join(map(str, dims)), "ranks": ranks, "repeat": repeat, "iters": iters,
        "s_per_iter": f"{spi:.6g}", "throughput": f"{thr:.6g}", "unit": wl.UNIT,
        "throughput_per_rank": f"{thr / ranks:.6g}",
        "bytes_max": "" if impl in ("numpy", "dask") else f"{max(nbytes):g}",
        "bytes_per_rank": "" if impl in ("numpy", "dask") else _fmt(nbytes),
        "min_bytes_max": "" if mins is None else f"{max(mins):g}",
        "min_bytes_per_rank": _fmt(mins),
        "msgs_per_rank": "" if impl in ("numpy", "dask") else _fmt(_per_iter(res["msgs"], iters)),
        "collectives_per_rank": "" if impl in ("numpy", "dask") else _fmt(_per_iter(res["coll"], iters)),
        "collective_bytes_per_rank": "" if impl != "spmdarray" else _fmt(_per_iter(res["coll_bytes"], iters)),
        "peak_rss_max_mib": f"{max(res['rss']):.0f}", "peak_rss_mib": _fmt([round(r) for r in res["rss"]]),
        "checksum": f"{res['checksum']:.12g}",
        "versions": " ".join(f"{k}={v}" for k, v in res["versions"].items()),
        "machine": machine,
    }  # fmt: skip


def series(
    workload: str,
    *,
    ranks: list[int],
    mode: str,
    size: int,
    impls: list[str],
    iters: int,
    warmup: int,
    repeats: int,
    timeout: float,
    suite: str | None = None,
) -> list[dict]:
    """Measure ``workload`` at every rank count with every implementation, alternating.

    Each repeat visits the rank counts in order and, at each, runs the
    implementations one after another (in reverse order on odd repeats).
    NumPy runs once per distinct global problem per repeat, on one process.
    Prints one progress line per run.

    Returns
    -------
    list of dict
        One row per run (see ``FIELDS``).
    """
    wl = WORKLOADS[workload]
    machine = describe()
    rows: list[dict] = []
    for rep in range(repeats):
        done_numpy: set = set()
        for p in ranks:
            dims = wl.dims(size, p, mode)
            order = impls if rep % 2 == 0 else impls[::-1]
            for impl in order:
                if impl == "numpy":
                    if dims in done_numpy:
                        continue
                    done_numpy.add(dims)
                n = 1 if impl == "numpy" else p
                res = launch(workload, impl, dims, n, iters, warmup, timeout)
                row = make_row(
                    res,
                    suite=suite or mode,
                    workload=workload,
                    impl=impl,
                    mode=mode,
                    size=size,
                    dims=dims,
                    ranks=n,
                    repeat=rep,
                    iters=iters,
                    machine=machine,
                )
                rows.append(row)
                print(progress(row), flush=True)
    return rows


def progress(row: dict) -> str:
    """One line: what ran and its headline figures."""
    comm = f"  {float(row['bytes_max']):>9.0f} B/rank/iter" if row["bytes_max"] else ""
    thr = float(row["throughput_per_rank"])
    return (
        f"{row['workload']:>10} {row['mode']:>6} {row['impl']:>9} ranks={row['ranks']} dims={row['dims']:<12}"
        f" {float(row['s_per_iter']) * 1e3:9.3f} ms/iter  {thr:10.4g} {row['unit']}/s/rank"
        f"  rss {row['peak_rss_max_mib']:>5} MiB{comm}"
    )


def write_csv(path: Path, rows: list[dict], append: bool = False) -> None:
    """Write (or append) rows with the ``FIELDS`` header."""
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not (append and path.exists())
    with open(path, "w" if new else "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        if new:
            w.writeheader()
        w.writerows(rows)


def read_csv(path: Path) -> list[dict]:
    """Rows of a CSV written by ``write_csv``."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))
