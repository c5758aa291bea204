"""Exact communication figures of the scaling suite (counts, not timing).

Each test here launches its own ``mpiexec -n P`` (P = 1 to 16, oversubscribed)
of ``python -m scaling.commcheck`` and asserts the counters of every rank, so it
runs only in the serial pass of the suite and is skipped under ``mpiexec``.
"""

from __future__ import annotations

import csv
import itertools
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy
import pytest
from spmdarray.decomposition.layout import Layout

from scaling.theory import halo_min_bytes

ROOT = Path(__file__).resolve().parent.parent
RANKS = (1, 2, 3, 4, 8, 16)
N = 8  # block edge per rank under weak scaling
LAUNCH_TIMEOUT_S = 120


def _env(ranks: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "PMIX_", "HYDRA_", "MPIR_CVAR"))}
    # tests/ too: runs on the emulated device backend import its CuPy stand-in from there.
    paths = (str(ROOT), str(ROOT / "tests"), env.get("PYTHONPATH", ""))
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    env["OMP_NUM_THREADS"] = "1"
    if ranks > (os.cpu_count() or 1):
        env["MPIR_CVAR_ENABLE_HEAVY_YIELD"] = "1"
    return env


def _run(cmd: list[str], ranks: int, timeout: float = LAUNCH_TIMEOUT_S) -> str:
    """Run ``cmd`` in its own process group; kill the group and fail loudly on timeout."""
    proc = subprocess.Popen(cmd, cwd=ROOT, env=_env(ranks), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)  # fmt: skip
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"{' '.join(cmd)} did not finish in {timeout} s (deadlock?)\n{out[-3000:]}")
    assert proc.returncode == 0, f"{' '.join(cmd)} exited with {proc.returncode}\n{out[-3000:]}"
    return out


def _mpiexec() -> str:
    local = Path(sys.executable).parent / "mpiexec"
    return str(local) if local.exists() else "mpiexec"


@pytest.fixture(scope="module")
def figures(nprocs) -> dict[int, dict]:
    """``{P: figures}`` of ``scaling.commcheck`` at every rank count of ``RANKS``."""
    if nprocs > 1:
        pytest.skip("launches its own mpiexec: runs in the serial pass only")
    out = {}
    for p in RANKS:
        text = _run([_mpiexec(), "-n", str(p), sys.executable, "-m", "scaling.commcheck", "--n", str(N)], p)
        line = next(x for x in text.splitlines() if x.startswith("RESULT "))
        out[p] = json.loads(line[len("RESULT ") :])
    return out


def _owner_map(shape: list[int], blocks: list) -> numpy.ndarray:
    own = numpy.full(shape, -1)
    for r, box in enumerate(blocks):
        own[tuple(slice(lo, hi) for lo, hi in box)] = r
    assert (own >= 0).all(), "the blocks do not cover the grid"
    return own


def _needed(own: numpy.ndarray) -> tuple[numpy.ndarray, list[set]]:
    """Per rank: cells its neighbours read through the four shifted views and do
    not own, and the set of ranks that read them."""
    n0, n1 = own.shape
    cells = numpy.zeros(own.max() + 1, numpy.int64)
    readers: list[set] = [set() for _ in range(own.max() + 1)]
    center = own[1:-1, 1:-1]
    for di, dj in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        src = own[1 + di : n0 - 1 + di, 1 + dj : n1 - 1 + dj]
        diff = src != center
        numpy.add.at(cells, src[diff], 1)
        for s, c in zip(src[diff], center[diff]):
            readers[s].add(int(c))
    return cells, readers


def test_stencil_sends_exactly_the_edge_cells_at_1_to_16_ranks(figures):
    for p, f in figures.items():
        own = _owner_map(f["shape"], f["block"])
        cells, readers = _needed(own)
        expected = (cells * 8).tolist()
        got = [s["bytes"] for s in f["stencil"]]
        assert got == expected, f"{p} ranks: bytes sent per rank {got}, edge cells x 8 = {expected}"
        assert halo_min_bytes([tuple(map(tuple, b)) for b in f["block"]], tuple(f["shape"])) == expected
        assert [s["msgs"] for s in f["stencil"]] == [len(r) for r in readers], f"{p} ranks: one message per reader"
        assert all(s["coll"] == 0 for s in f["stencil"]), f"{p} ranks: a stencil sweep calls no collective"
        if p > 1:
            assert all(b > 0 for b in got), f"{p} ranks: every rank has a neighbour"


def test_minimum_per_rank_is_constant_under_weak_scaling(figures):
    face = N * 8  # one row of the N x N block, in bytes
    for p, f in figures.items():
        assert f["dims"] == [p, 1], f"tall weak-scaling grid splits by rows, got {f['dims']}"
        got = [s["bytes"] for s in f["stencil"]]
        if p == 1:
            assert got == [0]
        else:
            assert got[0] == got[-1] == face, f"{p} ranks: an edge rank sends one face"
            assert got[1:-1] == [2 * face] * (p - 2), f"{p} ranks: an inner rank sends two faces"


def test_aligned_elementwise_work_sends_nothing(figures):
    for p, f in figures.items():
        assert f["aligned"] == [{"bytes": 0, "msgs": 0, "coll": 0, "coll_bytes": 0}] * p, f"{p} ranks"


@pytest.mark.parametrize("op, partial_bytes", [("sum", 8), ("max", 8), ("mean0", (N + 2) * 8)])
def test_reduction_cost_per_rank_does_not_grow_with_ranks(figures, op, partial_bytes):
    # A reduction is one collective call per rank (an all-gather, log P steps
    # inside MPI) and no point-to-point message: the same at 2 and at 16 ranks.
    for p, f in figures.items():
        for s in f[op]:
            assert s["msgs"] == 0 and s["bytes"] == 0, f"{op} at {p} ranks sent point-to-point: {s}"
            if p > 1:
                assert s["coll"] == 1, f"{op} at {p} ranks: {s['coll']} collective calls per rank"
                assert s["coll_bytes"] == partial_bytes, f"{op} at {p} ranks contributes {s['coll_bytes']} B"


@pytest.mark.parametrize("shape, nprocs", [((12, 12), 4), ((20, 7), 3), ((9, 9, 9), 8), ((30, 6, 6), 5)])
def test_theory_matches_an_owner_map(shape, nprocs):
    lay = Layout.balanced(shape, nprocs)
    blocks = [lay.block(r) for r in range(nprocs)]
    own = _owner_map(list(shape), blocks)
    expected = numpy.zeros(nprocs, numpy.int64)
    center = own[(slice(1, -1),) * len(shape)]
    for axis, d in itertools.product(range(len(shape)), (-1, 1)):
        sl = [slice(1, -1)] * len(shape)
        sl[axis] = slice(1 + d, shape[axis] - 1 + d)
        src = own[tuple(sl)]
        numpy.add.at(expected, src[src != center], 1)
    assert halo_min_bytes(blocks, shape, 8) == (expected * 8).tolist()


def test_driver_writes_exact_rows(nprocs, tmp_path):
    if nprocs > 1:
        pytest.skip("launches its own mpiexec: runs in the serial pass only")
    out = tmp_path / "runs.csv"
    cmd = [
        sys.executable,
        "-m",
        "scaling",
        "run",
        "stencil",
        "--ranks",
        "1,2",
        "--mode",
        "weak",
        "--size",
        "16",
        "--iters",
        "2",
        "--warmup",
        "1",
        "--repeats",
        "1",
        "--impls",
        "numpy,mpi4py,spmdarray",
        "--csv",
        str(out),
    ]
    text = _run(cmd, 2)
    assert text.count(" ranks=") == 6, text  # NumPy on 16 and 32 rows, mpi4py and spmdarray at 1 and 2 ranks
    rows = {(r["impl"], r["ranks"], r["dims"]): r for r in csv.DictReader(open(out))}
    assert set(rows) == {
        ("numpy", "1", "16x16"),
        ("numpy", "1", "32x16"),
        ("mpi4py", "1", "16x16"),
        ("mpi4py", "2", "32x16"),
        ("spmdarray", "1", "16x16"),
        ("spmdarray", "2", "32x16"),
    }
    spmd = rows[("spmdarray", "2", "32x16")]
    assert spmd["bytes_per_rank"] == spmd["min_bytes_per_rank"] == "128;128"  # one face of 16 cells each
    assert spmd["msgs_per_rank"] == "1;1" and spmd["collectives_per_rank"] == "0;0"
    assert rows[("mpi4py", "2", "32x16")]["bytes_per_rank"] == "144;144"  # whole rows: 18 cells
    assert rows[("spmdarray", "1", "16x16")]["bytes_per_rank"] == "0"
    for r in rows.values():
        assert float(r["s_per_iter"]) > 0 and float(r["peak_rss_max_mib"]) > 0
        assert r["unit"] == "cells" and r["machine"]
