"""Run one test suite serially or under ``mpiexec``.

::

    python -m pytest tests                                # one process
    mpiexec -n 3 python -m pytest -q -x tests             # every rank runs every test

Under ``mpiexec`` every rank collects and runs the same tests in the same order,
so a test body is SPMD code; use the ``comm`` fixture to learn rank and size.

- Only rank 0 writes the pytest report; the other ranks' reporters write to /dev/null.
- A failure on any rank is written to stderr as ``[rank R] FAILED <nodeid>`` with its
  traceback, then the job is ended with ``MPI.COMM_WORLD.Abort(1)``: the other ranks
  may be blocked in a collective that will never complete, so abort is the only safe way.
- A watchdog per test (``SPMDARRAY_TEST_TIMEOUT`` seconds, default 120, 0 turns it off)
  turns a deadlock into a ``TIMEOUT`` line, a dump of every thread's stack and exit code 3.
  It works serially too.
- Under ``mpiexec`` hypothesis is derandomized (same examples on every rank) with no
  example database and no deadline.
- ``SPMDARRAY_EXPECT_INSTALLED=<site-packages folder>`` (tests/run_all.sh sets it when it
  runs the suite against the built wheel): the run stops before the first test unless
  ``spmdarray``, ``spmdarray.comm`` and ``spmdarray.decomposition`` come from that folder
  and the checkout's root is not on ``sys.path``; it fails at the end if any ``spmdarray``
  module loaded during the run came from elsewhere.

mpi4py is imported inside hooks and fixtures only, never when this file is imported.
"""

import faulthandler
import importlib
import os
import sys
import tempfile
import threading
import time

import pytest

DEFAULT_TIMEOUT_S = 120.0
CHECKOUT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

# The suite runs on NumPy unless a backend is named (SPMDARRAY_BACKEND=cupy runs it
# on a GPU; add SPMDARRAY_CUPY_MODULE=fake_cupy for the CPU stand-in): "auto" would
# warn on every machine without a GPU.  tests/test_backend.py tests "auto" itself.
os.environ.setdefault("SPMDARRAY_BACKEND", "numpy")
# The suite tests the distributed paths on small arrays, so by default it splits every
# array however small; tests/test_replicated.py tests small replicated arrays with the
# library's own default (and sets the threshold itself).
os.environ.setdefault("SPMDARRAY_REPLICATE_BELOW", "0")


class _SPMDHarness:
    """Per-process plugin state: rank, size, watchdog timeout and a private stderr."""

    def __init__(self, rank, size, timeout_s):
        self.rank, self.size, self.timeout_s = rank, size, timeout_s
        # pytest redirects fd 2 while a test runs; a duplicate of the real stderr, taken
        # now (capture is suspended during configure), reaches the terminal anyway.
        self.err = os.fdopen(os.dup(2), "w")

    def _say(self, text):
        self.err.write(text if text.endswith("\n") else text + "\n")
        self.err.flush()

    def _abort(self, nodeid, longreprtext):
        from mpi4py import MPI

        self._say(f"[rank {self.rank}] FAILED {nodeid}\n{longreprtext}")
        time.sleep(0.3)  # let mpiexec forward the message before it tears the job down
        MPI.COMM_WORLD.Abort(1)
        os._exit(1)  # MPICH 5's MPI_Abort can return once mpiexec is told; never run on

    def _on_timeout(self, nodeid):
        # Collect the stacks first and write them with the message in one go, so that
        # ranks timing out together do not interleave their output line by line.
        with tempfile.TemporaryFile("w+") as stacks:
            faulthandler.dump_traceback(file=stacks, all_threads=True)
            stacks.seek(0)
            where = stacks.read()
        self._say(f"[rank {self.rank}] TIMEOUT: {nodeid} did not finish in {self.timeout_s:g} s (deadlock?)\n{where}")
        os._exit(3)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        # One timer spans setup, call and teardown of the test.
        timer = None
        if self.timeout_s > 0:
            timer = threading.Timer(self.timeout_s, self._on_timeout, args=(item.nodeid,))
            timer.daemon = True
            timer.start()
        try:
            return (yield)
        finally:
            if timer is not None:
                timer.cancel()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        # Outermost wrapper: sees the final report, after xfail has been applied.
        report = yield
        if report.failed and self.size > 1:
            self._abort(item.nodeid, report.longreprtext)
        return report

    def pytest_collectreport(self, report):
        # A collection error on some ranks only would leave the others hanging later.
        if report.failed and self.size > 1:
            self._abort(report.nodeid, report.longreprtext)


@pytest.hookimpl(trylast=True)  # after the terminal plugin has made its reporter
def pytest_configure(config):
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    timeout_s = float(os.environ.get("SPMDARRAY_TEST_TIMEOUT", DEFAULT_TIMEOUT_S))
    config.pluginmanager.register(_SPMDHarness(world.rank, world.size, timeout_s), "spmdarray-harness")
    if world.size == 1:
        return
    if world.rank != 0:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            config.pluginmanager.unregister(reporter)
            devnull = open(os.devnull, "w")  # kept open for the whole run
            config.pluginmanager.register(pytest.TerminalReporter(config, devnull), "terminalreporter")
    _same_examples_on_every_rank()


def _same_examples_on_every_rank():
    """Make hypothesis draw identical examples on all ranks (a collective needs them)."""
    try:
        from hypothesis import settings
    except ImportError:
        return
    settings.register_profile("spmdarray-mpi", derandomize=True, database=None, deadline=None)
    settings.load_profile("spmdarray-mpi")


def _not_installed(site):
    """Why this process does not run the spmdarray installed in ``site`` (empty if it does)."""
    site = os.path.realpath(site)
    elsewhere = []
    for name, module in sorted(sys.modules.items()):
        if module is None or not (name == "spmdarray" or name.startswith("spmdarray.")):
            continue
        where = getattr(module, "__file__", None)
        places = [where] if where else list(getattr(module, "__path__", []))
        if not places or any(os.path.commonpath([site, os.path.realpath(p)]) != site for p in places):
            elsewhere.append(f"{name} is imported from {', '.join(places) or '(nowhere)'}")
    problems = elsewhere[:3]
    if len(elsewhere) > 3:
        problems.append(f"{len(elsewhere) - 3} more spmdarray modules are not imported from it")
    if any(os.path.realpath(p or os.curdir) == CHECKOUT for p in sys.path):
        problems.append(f"the checkout {CHECKOUT} is on sys.path")
    return problems


def pytest_sessionstart(session):
    site = os.environ.get("SPMDARRAY_EXPECT_INSTALLED")
    if not site:
        return
    for name in ("spmdarray", "spmdarray.comm", "spmdarray.decomposition"):
        importlib.import_module(name)
    problems = _not_installed(site)
    if problems:
        hint = "run pytest from a folder outside the checkout, without PYTHONPATH"
        message = f"SPMDARRAY_EXPECT_INSTALLED={site}, but {'; '.join(problems)} ({hint})"
        pytest.exit(message, returncode=pytest.ExitCode.USAGE_ERROR)


def pytest_sessionfinish(session, exitstatus):
    site = os.environ.get("SPMDARRAY_EXPECT_INSTALLED")
    problems = _not_installed(site) if site else []
    if problems:
        pytest.exit(f"SPMDARRAY_EXPECT_INSTALLED={site}, but after the tests " + "; ".join(problems), returncode=1)


@pytest.fixture
def comm():
    """``MPI.COMM_WORLD``: all ranks of this run (size 1 when run serially)."""
    from mpi4py import MPI

    return MPI.COMM_WORLD


@pytest.fixture
def rectangles_only():
    """Copies of row rectangles only, for the tests of row sweeps: arrays small enough to be
    gathered whole after their reads are (``gather_rereads_below``, test_rereads.py) are not."""
    from spmdarray.settings import config

    with config.set(gather_rereads_below=0):
        yield


@pytest.fixture(scope="session")
def nprocs():
    """Number of ranks in this run."""
    from mpi4py import MPI

    return MPI.COMM_WORLD.size
