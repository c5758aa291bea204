"""Utilities of the HDF5 tests: a directory every rank shares, serial h5py reads
as the reference, and a launcher for tests that run a script under ``mpiexec``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import numpy

TESTS = os.path.dirname(os.path.abspath(__file__))


@contextlib.contextmanager
def shared_dir():
    """A fresh directory made by rank 0 and known to every rank.  Collective.

    Not pytest's ``tmp_path``: that differs per rank, and other runs by the
    same user prune its folders.
    """
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    path = tempfile.mkdtemp(prefix="spmdarray-io-test-") if world.rank == 0 else None
    path = world.bcast(path, root=0)
    try:
        yield path
    finally:
        world.Barrier()
        if world.rank == 0:
            shutil.rmtree(path, ignore_errors=True)


def on_rank0(fn):
    """Run ``fn()`` on rank 0 (writing a file with plain h5py, say), then barrier."""
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    err = None
    if world.rank == 0:
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - reported on every rank below
            err = repr(e)
    err = world.bcast(err, root=0)
    assert err is None, f"rank 0 failed: {err}"


def h5_read(path: str, name: str, key=()):
    """The dataset read by plain h5py in this process (the reference)."""
    import h5py

    with h5py.File(path, "r") as f:
        return f[name][key]


def same_on_every_rank(text: str) -> None:
    from mpi4py import MPI

    texts = MPI.COMM_WORLD.allgather(text)
    assert len(set(texts)) == 1, texts


def leftovers(directory: str) -> list[str]:
    """Temporary files of interrupted writes in ``directory``."""
    return sorted(n for n in os.listdir(directory) if n.endswith(".spmdarray-tmp"))


def mpiexec() -> str:
    """The launcher matching this Python's MPI (``SPMDARRAY_MPIEXEC`` overrides)."""
    exe = os.environ.get("SPMDARRAY_MPIEXEC")
    if exe:
        return exe
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return beside if os.path.exists(beside) else (shutil.which("mpiexec") or "mpiexec")


def run_mpi(nprocs: int, script: str, *args: str, timeout: float = 100.0, expect_rc: int | None = 0):
    """Run ``python -c script args`` under ``mpiexec -n nprocs``; return the result.

    The whole process group is killed if it runs past ``timeout`` seconds,
    and the test fails saying so (before the 120 s per-test watchdog of
    conftest.py would end this process and leave the job running).
    """
    # tests/ only, for the emulated device backend's CuPy stand-in: spmdarray comes from
    # the installed package (pip install -e . in a checkout, or the built wheel), and the
    # checkout's root on the path would shadow an installed wheel with the source tree.
    paths = os.pathsep.join(p for p in (TESTS, os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, PYTHONPATH=paths)
    env.pop("SPMDARRAY_TEST_TIMEOUT", None)
    cmd = [mpiexec(), "-n", str(nprocs), sys.executable, "-c", script, *args]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        raise AssertionError(
            f"{' '.join(cmd[:4])} ... timed out after {timeout:g} s (killed); output:\n{out}"
        ) from None
    if expect_rc is not None:
        assert proc.returncode == expect_rc, f"{' '.join(cmd[:4])} ... exited {proc.returncode}; output:\n{out}"
    return proc.returncode, out


def reference(shape, dtype, seed: int = 0) -> numpy.ndarray:
    """Deterministic data of any dtype h5py maps to NumPy."""
    dtype = numpy.dtype(dtype)
    rng = numpy.random.default_rng(seed)
    n = int(numpy.prod(shape, dtype=numpy.int64))
    if dtype.names:
        out = numpy.zeros(n, dtype)
        for i, f in enumerate(dtype.names):
            out[f] = reference((n,), dtype.fields[f][0], seed + i + 1)
        return out.reshape(shape)
    if dtype.kind == "S":
        return numpy.array([f"s{i}".encode()[: dtype.itemsize] for i in range(n)], dtype).reshape(shape)
    if dtype.kind == "b":
        return (rng.random(shape) > 0.5).astype(dtype)
    if dtype.kind in "iu":
        info = numpy.iinfo(dtype)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape, endpoint=True).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)
