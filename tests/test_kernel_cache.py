"""The on-disk kernel cache shared by many processes: one compiles, the others load.

Serially: three processes started at once on an empty cache folder compile
a new kernel once between them (numba's cache statistics), and leave no
temporary file.  Under mpiexec: the ranks of a node compile it once, in the
ranks' own cache folder (``spmdarray.fusion.kernels_cpu``, "Cache").
"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy
import pytest
from helpers import backend, fuse_everything, world

import spmdarray as sp
from spmdarray.fusion import kernels_cpu

pytest.importorskip("numba")
pytestmark = pytest.mark.skipif(backend().is_device, reason="numba kernels: the host backend only")

_CHILD = textwrap.dedent(
    """
    import json, os, sys, time
    import numpy
    import spmdarray as sp
    from spmdarray.fusion import kernels_cpu as kc

    folder, me, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    open(os.path.join(folder, "ready." + me), "w").close()
    deadline = time.monotonic() + 120
    while sum(f.startswith("ready.") for f in os.listdir(folder)) < n and time.monotonic() < deadline:
        time.sleep(0.01)
    x = sp.arange(40000.0)
    y = numpy.asarray((x * 2.5 + 1.0) * x - 3.0)
    stats = [k[0].stats for k in kc._CACHE.values()]
    print(json.dumps({
        "misses": sum(sum(s.cache_misses.values()) for s in stats),
        "hits": sum(sum(s.cache_hits.values()) for s in stats),
        "kernels": len(stats),
        "sum": float(y.sum()),
    }))
    """
)


def test_processes_starting_together_compile_a_kernel_once(tmp_path):
    if world()[1] > 1:
        pytest.skip("starts its own processes: serial run only")
    cache = tmp_path / "cache"
    sync = tmp_path / "sync"
    sync.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "OMPI_", "PMIX_", "HYDRA_", "MPI"))}
    env.update(
        SPMDARRAY_FUSE_CACHE=str(cache),
        SPMDARRAY_FUSE="1",
        SPMDARRAY_FUSE_COMPILER="numba",
        SPMDARRAY_FUSE_MIN_SIZE="0",
        SPMDARRAY_FUSE_JIT_MIN_SIZE="0",
        SPMDARRAY_BACKEND="numpy",
    )
    n = 3
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(sync), str(i), str(n)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(n)
    ]
    results = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=300)
            assert p.returncode == 0, err[-2000:]
            results.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    want = float(((numpy.arange(40000.0) * 2.5 + 1.0) * numpy.arange(40000.0) - 3.0).sum())
    assert all(r["sum"] == want for r in results)
    assert all(r["kernels"] >= 1 for r in results)
    misses = sum(r["misses"] for r in results)
    hits = sum(r["hits"] for r in results)
    kernels = results[0]["kernels"]
    assert misses == kernels and hits == (n - 1) * kernels, results  # one compiles, the others load
    left = [f for f in os.listdir(cache) if f.endswith(".tmp")]
    assert left == []


def test_ranks_of_a_node_compile_a_new_kernel_once(monkeypatch):
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    folder = comm.bcast(tempfile.mkdtemp(prefix="spmdarray-kcache-") if comm.rank == 0 else None)
    try:
        fuse_everything(monkeypatch, "numba")
        monkeypatch.setattr(kernels_cpu, "_CACHE", {})  # this process has not compiled it either
        with sp.config.set(fuse_cache=folder):
            x = sp.arange(30011.0)
            got = numpy.asarray((x * 0.75 - 2.0) * x + 5.0)
        stats = [k[0].stats for k in kernels_cpu._CACHE.values()]
        misses = comm.allreduce(sum(sum(s.cache_misses.values()) for s in stats))
        kernels = comm.allreduce(len(stats), op=MPI.MAX)
        nodes = len(set(comm.allgather(MPI.Get_processor_name())))
        ref = numpy.arange(30011.0)
        numpy.testing.assert_array_equal(got, (ref * 0.75 - 2.0) * ref + 5.0)
        assert kernels >= 1
        assert kernels <= misses <= nodes * kernels, (misses, kernels, nodes)
    finally:
        comm.Barrier()
        if comm.rank == 0:
            import shutil

            shutil.rmtree(folder, ignore_errors=True)


def test_cache_folder_follows_numba_cache_dir(monkeypatch, tmp_path):
    from numba.core import config as numba_config

    monkeypatch.setattr(numba_config, "CACHE_DIR", str(tmp_path))
    with sp.config.set(fuse_cache=None):
        assert kernels_cpu._cache_dir() == str(tmp_path / "spmdarray-fusion")
    with sp.config.set(fuse_cache=str(tmp_path / "mine")):
        assert kernels_cpu._cache_dir() == str(tmp_path / "mine")
