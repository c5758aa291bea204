"""BLAS and OpenMP threads per rank (``spmdarray.backend.threads``, ``config.blas_threads``).

Several ranks on one node, each with NumPy's BLAS starting a thread per core,
oversubscribe the cores.  At import, where the MPI launcher says how many ranks
share the node and the program set no thread count itself, each rank's BLAS
gets the node's cores divided by its ranks.  The decision is a pure function
(checked here over its whole input space); the jobs run ``mpiexec -n 2``
themselves (the serial pass runs them) and read what each rank's BLAS got.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from io_helpers import run_mpi

from spmdarray.backend.threads import LAUNCHER_LOCAL_SIZE, USER_THREADS, ranks_on_node, threads_per_rank


@pytest.mark.parametrize(
    "setting, env, cores, usable, expected",
    [
        (-1, {"MPI_LOCALNRANKS": "2"}, 2, 2, 1),
        (-1, {"MPI_LOCALNRANKS": "4"}, 16, 16, 4),
        (-1, {"OMPI_COMM_WORLD_LOCAL_SIZE": "3"}, 16, 16, 5),
        (-1, {"MV2_COMM_WORLD_LOCAL_SIZE": "32"}, 16, 16, 1),  # more ranks than cores: one thread each
        (-1, {"MPI_LOCALNRANKS": "4"}, 16, 1, 1),  # bound to one core by the launcher
        (-1, {"MPI_LOCALNRANKS": "1"}, 16, 16, None),  # alone on its node: NumPy's own choice
        (-1, {}, 16, 16, None),  # no launcher (``python prog.py``)
        (-1, {"MPI_LOCALNRANKS": "4", "OMP_NUM_THREADS": "2"}, 16, 16, None),  # the program's own count
        (-1, {"MPI_LOCALNRANKS": "4", "OPENBLAS_NUM_THREADS": "8"}, 16, 16, None),
        (-1, {"MPI_LOCALNRANKS": "x"}, 16, 16, None),
        (0, {"MPI_LOCALNRANKS": "4"}, 16, 16, None),  # 0: left alone
        (3, {}, 16, 16, 3),
        (6, {"OMP_NUM_THREADS": "2"}, 16, 16, 6),  # the setting wins
    ],
)
def test_threads_per_rank_table(setting, env, cores, usable, expected):
    assert threads_per_rank(setting, env, cores, usable) == expected


@given(
    local=st.integers(1, 300),
    cores=st.integers(1, 512),
    usable=st.integers(1, 512),
    var=st.sampled_from(LAUNCHER_LOCAL_SIZE),
    user=st.sampled_from((None, *USER_THREADS)),
)
def test_auto_never_oversubscribes_and_never_starves(local, cores, usable, var, user):
    env = {var: str(local)}
    if user is not None:
        env[user] = "1"
    n = threads_per_rank(-1, env, cores, usable)
    assert ranks_on_node(env) == local
    if user is not None or local == 1:
        assert n is None
        return
    assert n is not None and 1 <= n <= max(1, usable)
    assert n == 1 or n * local <= cores  # the ranks of the node fit its cores
    assert n == max(1, min(cores // local, usable))


_REPORT = """
import json, os
import spmdarray as sp
from mpi4py import MPI
info = sp.backend_info()["blas_threads"]
usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
row = {"rank": MPI.COMM_WORLD.rank, "cores": os.cpu_count(), "usable": usable, "omp": os.environ.get("OMP_NUM_THREADS")}
rows = MPI.COMM_WORLD.gather({**row, **info})
if rows is not None:
    print(chr(10).join("INFO " + json.dumps(r) for r in rows), flush=True)
"""


def _job(monkeypatch, **env) -> list[dict]:
    for name in USER_THREADS + ("SPMDARRAY_BLAS_THREADS",):
        monkeypatch.delenv(name, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    _, out = run_mpi(2, _REPORT, timeout=60.0)
    rows = [json.loads(line.split("INFO ", 1)[1]) for line in out.splitlines() if line.startswith("INFO ")]
    assert sorted(r["rank"] for r in rows) == [0, 1], out
    return rows


@pytest.fixture
def serial(comm):
    if comm.size > 1:
        pytest.skip("launches mpiexec itself: runs in the serial pass")


def test_two_ranks_on_a_node_share_its_cores(serial, monkeypatch):
    for r in _job(monkeypatch):
        n = max(1, min(r["cores"] // 2, r["usable"]))
        assert r["set_at_import"] == n, r
        assert r["omp"] == str(n)  # for libraries loaded later and child processes
        assert r["libraries"] and all(lib["num_threads"] == n for lib in r["libraries"]), r


@pytest.mark.parametrize("env", [{"OPENBLAS_NUM_THREADS": "2"}, {"SPMDARRAY_BLAS_THREADS": "0"}], ids=repr)
def test_a_thread_count_of_the_program_is_left_alone(serial, monkeypatch, env):
    for r in _job(monkeypatch, **env):
        assert r["set_at_import"] is None, r
        if "OPENBLAS_NUM_THREADS" in env:
            assert all(lib["num_threads"] == 2 for lib in r["libraries"] if lib["internal_api"] == "openblas"), r


def test_the_setting_gives_each_rank_its_count(serial, monkeypatch):
    for r in _job(monkeypatch, SPMDARRAY_BLAS_THREADS="3"):
        assert r["set_at_import"] == 3 and r["omp"] == "3", r
        assert all(lib["num_threads"] == 3 for lib in r["libraries"]), r
