"""Full reductions (``x.sum()`` ...) of split arrays through the cached plan's quick path.

Run serially and under ``mpiexec -n 2/3/4 python -m pytest tests/test_full_reduction_split.py``.
Every array here is split (``replicate_below=0``), small enough that some
ranks hold nothing at 3 and 4 ranks.  Each result is compared with NumPy's
(type, and value: exact where the reduction is exact), must be bit-identical
on every rank, and must be bit-identical to the plan's general partial path,
which the quick path replaces for host blocks.
"""

import numpy
import pytest
from helpers import assert_eq, world

import spmdarray as sp
from spmdarray.routines import reduction_plans as R

NAMES = ["sum", "prod", "min", "max", "any", "all", "mean"]
DTYPES = [
    numpy.bool_,
    numpy.int8,
    numpy.uint16,
    numpy.int32,
    numpy.float16,
    numpy.float32,
    numpy.float64,
    numpy.complex128,
]
SHAPES = [(1,), (3,), (7,), (2, 9), (5, 1), (1, 7), (13, 3)]


@pytest.fixture(autouse=True)
def _split():
    with sp.config.set(replicate_below=0):
        yield


def _data(shape, dtype, seed=0):
    rng = numpy.random.default_rng(seed)
    a = rng.random(shape) * 4 - 1
    if numpy.dtype(dtype).kind == "c":
        a = a + 1j * rng.random(shape)
    return a.astype(dtype) if numpy.dtype(dtype).kind != "b" else a > 0


def _bits(v):
    from mpi4py import MPI

    got = MPI.COMM_WORLD.allgather((type(v).__name__, numpy.asarray(v).tobytes()))
    assert all(g == got[0] for g in got), got
    return got[0]


def _general(monkeypatch, name, x):
    """``x.<name>()`` through the plan without its quick path."""
    with monkeypatch.context() as m:
        m.setattr(R, "_quick_full", lambda plan, ndim: None)
        m.setattr(R, "_FULL", {})
        m.setattr(R, "_LAST_FULL", [None] * 8)
        return getattr(x, name)()


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: numpy.dtype(d).name)
@pytest.mark.parametrize("name", NAMES)
def test_quick_full_reduction_matches_numpy_and_the_general_path(monkeypatch, name, dtype, shape):
    a = _data(shape, dtype)
    x = sp.asarray(a)
    assert x.ndim == 0 or sp.config.replicate_below == 0
    with numpy.errstate(all="ignore"):
        exp = getattr(numpy, name)(a)
        got = getattr(x, name)()
        again = getattr(x, name)()  # (the last plan, found by identity)
        plan = R._LAST_FULL[5]
        ref = _general(monkeypatch, name, x)
    assert type(got) is type(exp), (type(got), type(exp))
    dt = numpy.dtype(dtype)
    if world()[1] > 1 and not x._s.be.is_device and (name != "mean" or dt.kind in "fc" and dt.itemsize > 2):
        # The quick path ran (host blocks: one Allgather of the partials; a mean of other
        # dtypes is the general path's).
        assert plan is not None and plan.quick is not None
    exact = name in ("min", "max", "any", "all") or dt.kind in "biu"
    if exact:
        assert_eq(got, exp, exact=True)
    else:
        tol = 2e-3 if dt == numpy.float16 else 1e-5
        assert_eq(got, exp, rtol=tol, atol=tol)
    assert _bits(got) == _bits(again) == _bits(ref)


@pytest.mark.parametrize("key", [slice(None, None, -1), slice(1, None), slice(None, None, 2), slice(5, 2, -1)], ids=str)
def test_quick_path_on_views_and_alternating_arrays(key):
    a = _data((11,), numpy.float64)
    b = _data((11,), numpy.float64, seed=1)
    x, y = sp.asarray(a), sp.asarray(b)
    for _ in range(3):  # two plans in turn: the one-entry cache misses and hits alike on every rank
        for arr, ref in ((x[key], a[key]), (y, b), (x, a)):
            got = arr.sum()
            assert type(got) is numpy.float64
            assert_eq(got, ref.sum(), rtol=1e-12, atol=1e-14)
            _bits(got)


@pytest.mark.parametrize("spot", [0, 3, 6, 12], ids=str)
def test_quick_min_max_propagate_nan_from_any_rank(spot):
    a = numpy.arange(13.0)
    a[spot] = numpy.nan
    x = sp.asarray(a)
    for name in ("min", "max", "sum"):
        with numpy.errstate(invalid="ignore"):
            got = getattr(x, name)()
        assert numpy.isnan(got), (name, got)
        _bits(got)


def test_quick_path_sends_one_collective_of_one_partial():
    from spmdarray.comm.stats import COUNTERS

    x = sp.asarray(numpy.arange(40.0))
    x.sum()
    c0, b0 = COUNTERS["collectives"], COUNTERS["collective_bytes"]
    assert x.sum() == 780.0
    expected = (1, 8) if world()[1] > 1 else (0, 0)  # (one partial per rank, whatever the backend)
    assert (COUNTERS["collectives"] - c0, COUNTERS["collective_bytes"] - b0) == expected


def test_quick_path_is_traced_to_the_calling_line():
    x = sp.asarray(numpy.arange(40.0))
    x.sum()  # (the plan and its quick function made)
    with sp.comm_stats() as stats, sp.comm_trace() as tr:
        total = x.sum() + x.sum()
    assert total == 1560.0
    assert tr.totals()["collectives"] == stats.collectives
    if world()[1] == 1:
        assert stats.collectives == 0 and tr.records == []
        return
    assert stats.collectives == 2
    (r,) = tr.records
    assert r.collectives == 2 and r.file.endswith("test_full_reduction_split.py"), (r.file, r.line)
