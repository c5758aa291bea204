"""The workloads in Dask array: one process, threaded scheduler, row chunks.

``setup(dims, workers)`` chunks the first axis into ``workers`` pieces and
selects the threaded scheduler with ``workers`` threads; each ``step``
computes (``persist``) one iteration, so the task graph never grows.
Stencils use ``map_overlap`` with depth 1 and ``boundary="none"`` (the
global boundary layer is the fixed boundary of the problem).
"""

from __future__ import annotations

import dask
import dask.array as da
import numpy


def _jacobi_block(b: numpy.ndarray) -> numpy.ndarray:
    out = b.copy()
    out[1:-1, 1:-1] = (b[1:-1, 1:-1] + b[:-2, 1:-1] + b[1:-1, 2:] + b[1:-1, :-2] + b[2:, 1:-1]) * 0.2
    return out


def _heat_block(u: numpy.ndarray) -> numpy.ndarray:
    out = u.copy()
    i = slice(1, -1)
    c = u[i, i, i]
    lap = (u[:-2, i, i] + u[2:, i, i]) + (u[i, :-2, i] + u[i, 2:, i]) + (u[i, i, :-2] + u[i, i, 2:]) - 6.0 * c
    out[i, i, i] = c + 0.1 * lap
    return out


def _rows(n: int, workers: int) -> int:
    return max(1, -(-n // workers))


def setup(workload: str, d: tuple[int, ...], workers: int) -> dict:
    """Random input of ``workload`` in ``workers`` row chunks."""
    dask.config.set(scheduler="threads", num_workers=workers)
    rng = da.random.default_rng(1)
    s: dict = {"workload": workload, "workers": workers, "out": 0.0}
    if workload == "stencil":
        shape = (d[0] + 2, d[1] + 2)
        s["x"] = rng.random(shape, chunks=(_rows(shape[0], workers), shape[1])).persist()
    elif workload == "heat3d":
        s["x"] = rng.random(d, chunks=(_rows(d[0], workers), d[1], d[2])).persist()
    elif workload == "pi":
        s["n"] = d[0]
        s["rng"] = rng
    elif workload == "matmul":
        chunks = (_rows(d[0], workers), d[1])
        s["A"] = rng.random(d, chunks=chunks).persist()
        s["B"] = rng.random(d, chunks=chunks).persist()
    elif workload == "reductions":
        s["x"] = rng.random(d, chunks=(_rows(d[0], workers), d[1])).persist()
    else:
        raise ValueError(f"unknown workload {workload!r}")
    return s


def step(s: dict) -> None:
    """One iteration of the workload, computed."""
    w = s["workload"]
    if w == "stencil":
        s["x"] = da.map_overlap(_jacobi_block, s["x"], depth=1, boundary="none").persist()
    elif w == "heat3d":
        s["x"] = da.map_overlap(_heat_block, s["x"], depth=1, boundary="none").persist()
    elif w == "pi":
        chunks = _rows(s["n"], s["workers"])
        x = s["rng"].random(s["n"], chunks=chunks)
        y = s["rng"].random(s["n"], chunks=chunks)
        s["out"] = 4.0 * float((x * x + y * y < 1.0).sum().compute()) / s["n"]
    elif w == "matmul":
        s["C"] = (s["A"] @ s["B"]).persist()
    else:
        x = s["x"]
        m, sd, am, mx = dask.compute(x.mean(axis=0), x.std(axis=1), x.argmax(axis=0), x.max())
        s["out"] = float(m[0]) + float(sd[-1]) + float(am[-1]) + float(mx)


def result(s: dict) -> float:
    """A checksum of the last iteration."""
    w = s["workload"]
    if w in ("stencil", "heat3d"):
        return float(s["x"].sum().compute())
    if w == "matmul":
        return float(s["C"].sum().compute())
    return s["out"]
