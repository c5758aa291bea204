"""Never a silent hang: abort on uncaught exceptions, the hang watchdog, the debug mode.

The jobs that must *end* (a rank raises, a collective on one rank only, a
halo message that never comes) run as ``mpiexec -n 2/3/4`` subprocesses
with a timeout (the serial pass runs them); the debug mode's checks raise on
every rank, so they run in-process at every rank count of the suite.
"""

from __future__ import annotations

import subprocess
import sys
import time

import numpy
import pytest
from helpers import assert_eq
from io_helpers import run_mpi
from spmdarray.comm import CollectiveMismatch, SeedMismatch

import spmdarray as sp
from spmdarray.settings import config as _config

RANKS = [2, 3, 4]


def _serial_only(comm) -> None:
    if comm.size > 1:
        pytest.skip("launches mpiexec itself: runs in the serial pass")


def _job(monkeypatch, n: int, script: str, **env) -> tuple[int, str, float]:
    """Run ``script`` at ``n`` ranks with extra environment; (exit code, output, seconds)."""
    monkeypatch.setenv("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")  # 2 cores shared by up to 4 ranks
    monkeypatch.setenv("SPMDARRAY_BACKEND", "numpy")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    t0 = time.monotonic()
    rc, out = run_mpi(n, script, timeout=90.0, expect_rc=None)
    return rc, out, time.monotonic() - t0


# ------------------------------------------------- 1. uncaught exceptions abort

_RAISES = """
import spmdarray as sp
from mpi4py import MPI
rank, size = MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()
x = sp.arange(100.0)
if rank == size - 1:
    raise ValueError(f"bad input on rank {rank}")
print("SUM", float(x.sum()))
"""


@pytest.mark.parametrize("n", RANKS)
def test_an_uncaught_exception_on_one_rank_aborts_the_job(comm, monkeypatch, n):
    _serial_only(comm)
    # No watchdog: the excepthook alone must end the job.
    rc, out, secs = _job(monkeypatch, n, _RAISES, SPMDARRAY_HANG_TIMEOUT="0")
    assert rc != 0, out
    assert f"uncaught exception on rank {n - 1} of {n}" in out, out
    assert f"ValueError: bad input on rank {n - 1}" in out and "Traceback" in out, out
    assert f"aborting the job (MPI_Abort) because rank {n - 1} raised ValueError" in out, out
    assert "SUM" not in out, out
    assert secs < 60, secs


def test_abort_on_error_off_leaves_the_watchdog_to_end_the_job(comm, monkeypatch):
    _serial_only(comm)
    rc, out, _ = _job(monkeypatch, 2, _RAISES, SPMDARRAY_ABORT_ON_ERROR="0", SPMDARRAY_HANG_TIMEOUT="2")
    assert rc != 0, out
    assert "ValueError: bad input on rank 1" in out, out
    assert "because rank 1 raised" not in out, out
    assert "rank 0 of 2 waited" in out and "because rank 0 hung" in out, out


# ------------------------------------------------------------ 2. the watchdog

_ONE_RANK = """
import spmdarray as sp
from mpi4py import MPI
rank = MPI.COMM_WORLD.Get_rank()
x = sp.arange(100.0)
print("ALL", float(x.sum()))
if rank == 0:
    print("ONE", float(x.max()))
MPI.COMM_WORLD.Barrier()  # the other ranks wait here, in plain mpi4py
"""


@pytest.mark.parametrize("n", RANKS)
@pytest.mark.parametrize("debug", ["0", "1"])
def test_a_collective_on_one_rank_ends_with_the_programs_line(comm, monkeypatch, n, debug):
    _serial_only(comm)
    rc, out, secs = _job(monkeypatch, n, _ONE_RANK, SPMDARRAY_HANG_TIMEOUT="2", SPMDARRAY_DEBUG=debug)
    assert rc != 0, out
    assert out.count("ALL") == n and "4950.0" in out, out  # lines of different ranks may interleave
    assert f"spmdarray: rank 0 of {n} waited" in out, out
    assert "called at <string>:8 in <module>" in out, out  # the line of x.max()
    assert 'File "<string>", line 8' in out, out  # its stack
    assert "because rank 0 hung" in out and "ONE 99.0" not in out, out
    if debug == "1":  # the other ranks' watchdog threads say where they are
        assert "(debug check of the call)" in out, out
        for r in range(1, n):
            assert (
                f"  rank {r}: runs <string>:9 in <module>, outside any spmdarray collective; its last checked "
                "collective here: array(shape=(100,), float64).sum(" in out
            ), out
    assert secs < 60, secs


_HALO = """
import numpy
from mpi4py import MPI
from spmdarray.comm import get_context, start_exchange
ctx = get_context(MPI.COMM_WORLD)
if ctx.rank == 0:  # waits for a message rank 1 never sends
    start_exchange(ctx, [], [(1, numpy.empty(4))]).wait()
"""


def test_a_halo_wait_names_the_peer_that_never_sent(comm, monkeypatch):
    _serial_only(comm)
    rc, out, _ = _job(monkeypatch, 2, _HALO, SPMDARRAY_HANG_TIMEOUT="1")
    assert rc != 0, out
    assert "in halo exchange (point-to-point)" in out, out
    assert "ranks [1] have not sent or received their messages yet" in out, out


def test_the_timeout_is_a_setting():
    assert _config.fields["hang_timeout"].env == "SPMDARRAY_HANG_TIMEOUT"
    with _config.set(hang_timeout=8.0):  # short, with room for a loaded machine
        assert _config.hang_timeout == 8.0
        x = sp.arange(10.0)
        assert float(x.sum()) == 45.0
        time.sleep(2.5)  # the thread ticks (every 1 s) and finds no wait armed
        assert float(x.max()) == 9.0
    with pytest.raises(ValueError, match="SPMDARRAY_HANG_TIMEOUT='-1' is not a valid value"):
        type(_config)({"SPMDARRAY_HANG_TIMEOUT": "-1"})


# -------------------------------------------------------------- 3. debug mode


@pytest.fixture
def debug():
    with _config.set(debug=True):
        yield


def test_debug_mode_gives_numpys_answers(debug):
    a = numpy.arange(45.0).reshape(9, 5)
    x = sp.asarray(a)
    assert_eq(x.sum(axis=0), a.sum(axis=0))
    assert_eq(x[3], a[3])
    assert_eq(x[::2, 1:] * 2 - x[::2, :-1], a[::2, 1:] * 2 - a[::2, :-1])
    assert float(x.max()) == 44.0
    assert_eq(sp.sort(x[:, 0])[::-1], numpy.sort(a[:, 0])[::-1])


def test_sum_on_one_rank_and_max_on_the_others_raises_everywhere(debug, comm):
    if comm.size == 1:
        pytest.skip("needs two ranks")
    x = sp.arange(10.0)
    with pytest.raises(CollectiveMismatch) as info:
        _ = x.sum() if comm.rank == 0 else x.max()
    msg = str(info.value)
    line = info.traceback[0].lineno + 1  # the test's own line of the call (1-based)
    assert "rank 0 called array(shape=(10,), float64).sum(" in msg, msg
    others = "rank 1" if comm.size == 2 else "ranks " + ",".join(map(str, range(1, comm.size)))
    assert f"{others} called array(shape=(10,), float64).max(" in msg, msg
    assert f"test_hang.py:{line}" in msg, msg


def test_an_index_that_depends_on_the_rank_raises_everywhere(debug, comm):
    if comm.size == 1:
        pytest.skip("needs two ranks")
    x = sp.arange(100.0)
    with pytest.raises(
        CollectiveMismatch, match=r"rank 0 called .*__getitem__\(key=\(?0,?\)?\).*rank 1 called .*key=\(?30,?\)?\)"
    ):
        x[comm.rank * 30]
    assert float(x[30]) == 30.0  # the same key everywhere still works afterwards


def test_a_setting_changed_on_one_rank_is_named(debug, comm):
    if comm.size == 1:
        pytest.skip("needs two ranks")
    x = sp.arange(10.0)
    with _config.set(reduce_gather_bytes=1 << 20 if comm.rank else 1 << 21):
        with pytest.raises(CollectiveMismatch, match="the agreed settings differ between the ranks"):
            x.sum()


@pytest.mark.parametrize("how", ["seed", "default_rng", "Generator", "RandomState"])
def test_a_seed_that_depends_on_the_rank_raises_everywhere(debug, comm, how):
    if comm.size == 1:
        pytest.skip("needs two ranks")
    make = {
        "seed": sp.random.seed,
        "default_rng": sp.random.default_rng,
        "Generator": sp.random.Generator,
        "RandomState": sp.random.RandomState,
    }[how]
    with pytest.raises(SeedMismatch, match=r"random seed differs between ranks \(rank 0: 1234; rank 1: 1235"):
        make(1234 + comm.rank)
    make(1234)  # the same seed everywhere is fine


def test_without_debug_mode_nothing_is_compared(comm):
    x = sp.arange(10.0)
    sp.random.seed(1234 + comm.rank)  # not checked: no collective
    assert float(x.sum()) == 45.0


def test_a_process_whose_abort_blocks_still_ends(comm):
    # ``MPI_Abort`` that never returns (seen once: the launcher did not end the job): the
    # alarm armed just before it ends the process, and the launcher then ends the others.
    _serial_only(comm)
    code = "import time\nfrom spmdarray.comm import watchdog\nwatchdog.end_within(1)\ntime.sleep(60)\n"
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code], timeout=50, capture_output=True)
    assert proc.returncode == -14, proc  # SIGALRM, the default action
    assert time.monotonic() - t0 < 30
    handled = (
        "import signal, time\nfrom spmdarray.comm import watchdog\n"
        "signal.signal(signal.SIGALRM, lambda *a: print('mine'))\n"
        "watchdog.end_within(1)\nprint('armed', signal.alarm(0))\n"
    )
    proc = subprocess.run([sys.executable, "-c", handled], timeout=50, capture_output=True, text=True)
    assert proc.returncode == 0 and "armed 0" in proc.stdout, proc  # the program's own alarm is left alone
