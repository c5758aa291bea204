"""scaling.halo_waits on a toy npbench tree: exact waits and messages per time step."""

from __future__ import annotations

import json

import pytest
from helpers import world

from spmdarray.settings import config

halo_waits = pytest.importorskip("scaling.halo_waits")

KERNEL = """
def kernel(TSTEPS, A, B):
    for t in range(1, TSTEPS):
        B[1:-1, :] = 0.5 * (A[2:, :] + A[:-2, :])
        A[1:-1, :] = 0.5 * (B[2:, :] + B[:-2, :])
"""
INIT = """
import numpy as np

def initialize(N):
    A = np.fromfunction(lambda i, j: (i * (j + 2) + 2) / N, (N, N - 7))
    return A, A.copy() * 0.5
"""
INFO = {
    "benchmark": {
        "relative_path": "toy",
        "module_name": "toy",
        "func_name": "kernel",
        "parameters": {"S": {"TSTEPS": 4, "N": 45}},
        "init": {"func_name": "initialize", "input_args": ["N"], "output_args": ["A", "B"]},
        "input_args": ["TSTEPS", "A", "B"],
        "array_args": ["A", "B"],
        "output_args": ["A", "B"],
    }
}


def test_two_dependent_statements_wait_twice_per_step(tmp_path):
    rank, size = world()
    (tmp_path / "bench_info").mkdir()
    (tmp_path / "bench_info" / "toy.json").write_text(json.dumps(INFO))
    d = tmp_path / "npbench" / "benchmarks" / "toy"
    d.mkdir(parents=True)
    (d / "toy_numpy.py").write_text(KERNEL)
    (d / "toy.py").write_text(INIT)
    with config.set(fuse=True, fuse_min_size=16, replicate_below=0):
        rec = halo_waits.measure(str(tmp_path), "toy", "S", 2, 3, step_param="TSTEPS")
    if rank != 0:
        assert rec == {}
    elif size == 1:
        assert rec["waits"] == rec["messages_sent"] == rec["collectives"] == 0
    elif size == 2:
        # B reads A's neighbour row, then A reads B's: a chain of two, one row each way.
        assert rec == {
            "messages_sent": 2.0,
            "bytes_sent": 2 * 38 * 8.0,
            "waits": 2.0,
            "collectives": 0.0,
            "sync_points": 2.0,
        }, rec
