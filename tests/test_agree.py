"""Errors that depend on data are raised on every rank, with NumPy's exception type, and never hang.

Each case puts one bad value in the first or the last rank's block (anywhere
at one rank): a NaN cast to an integer, an overflow, a string that is not a
number, an invalid date, a warning turned into an error, a callback that
fails on one row.  Every rank must raise NumPy's exception, with the same
message, and the next collective operation must work.  The cases run with
fusion as configured and with every chain deferred (``fuse_min_size=0``).
The uncaught case (the program does not catch the error) runs as its own
``mpiexec`` job at 2, 3 and 4 ranks, from the serial pass.
"""

from __future__ import annotations

import warnings

import numpy
import pytest
from helpers import assert_eq, block, real_gpu, world
from io_helpers import run_mpi
from spmdarray.comm import agree, agreement, comm_stats, default_context, errors_may_raise

import spmdarray as sp
from spmdarray.settings import config

N = 13


def _same_everywhere(exc: BaseException) -> None:
    from mpi4py import MPI

    texts = MPI.COMM_WORLD.allgather(f"{type(exc).__name__}: {exc}")
    assert len(set(texts)) == 1, texts


def _index(pos: str) -> int:
    return 0 if pos == "first" else N - 1


def _astype_nan(xp, i):
    a = numpy.arange(float(N))
    a[i] = numpy.nan
    x = xp.array(a)
    with numpy.errstate(invalid="raise"):
        return x.astype(numpy.int64)


def _matmul_overflow(xp, i):
    a = numpy.ones((N, N))
    a[i, i] = 1e200
    x = xp.array(a)
    with numpy.errstate(over="raise"):
        return x @ x


def _setitem_strings(xp, i):
    s = numpy.array([str(k) for k in range(N)])
    s[i] = "x"
    x = xp.zeros(N)
    x[:] = xp.array(s)
    return x


def _astype_date(xp, i):
    s = numpy.array(["2020-01-01"] * N)
    s[i] = "2020-13-45"
    return xp.array(s).astype("M8[D]")


def _warning_log(xp, i):
    a = numpy.arange(1.0, N + 1.0)
    a[i] = 0.0
    x = xp.array(a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return xp.log(x)


def _warning_float16(xp, i):
    a = numpy.arange(float(N))
    a[i] = 1e6
    x = xp.array(a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return x.astype(numpy.float16)


def _apply_along_axis(xp, i):
    x = xp.array(numpy.arange(N * 3.0).reshape(N, 3))

    def f(row):
        if row[0] == 3 * i:
            raise ValueError(f"bad row starting with {row[0]}")
        return row.sum()

    return xp.apply_along_axis(f, 1, x)


def _two_huge(xp, i):
    """Ones with two values near the float64 maximum next to each other (same block)."""
    a = numpy.ones(N)
    a[i] = a[i - 1 if i else 1] = 1.7e308
    return xp.array(a)


def _cumsum_overflow(xp, i):
    x = _two_huge(xp, i)
    with numpy.errstate(over="raise"):
        return xp.cumsum(x)


def _sum_overflow(xp, i):
    x = _two_huge(xp, i)
    with numpy.errstate(over="raise"):
        return (x * 1.0).sum()


def _fft_invalid(xp, i):
    a = numpy.arange(float(N))
    a[i] = numpy.inf
    a[i - 1 if i else 1] = -numpy.inf
    x = xp.array(a)
    with numpy.errstate(all="raise"):
        return xp.fft.fft(x)


def _divide(xp, i):
    a = numpy.arange(1.0, N + 1.0)
    a[i] = 0.0
    x = xp.array(a)
    with numpy.errstate(divide="raise"):
        return 1.0 / (x + 0.0)


CASES = {
    "astype NaN to int64, errstate(invalid=raise)": _astype_nan,
    "A @ A overflows, errstate(over=raise)": _matmul_overflow,
    "x[:] = distributed strings, one not a number": _setitem_strings,
    "astype('M8[D]'), one invalid date": _astype_date,
    "log(0), warnings as errors": _warning_log,
    "float16 overflow, warnings as errors": _warning_float16,
    "apply_along_axis, func1d raises on one row": _apply_along_axis,
    "cumsum overflows, errstate(over=raise)": _cumsum_overflow,
    "sum overflows, errstate(over=raise)": _sum_overflow,
    "fft of inf, errstate(all=raise)": _fft_invalid,
    "1 / x, errstate(divide=raise)": _divide,
}
FLOATING_POINT = {"A @ A overflows, errstate(over=raise)", "cumsum overflows, errstate(over=raise)"}


def _numpy_error(fn, i):
    try:
        fn(numpy, i)
    except Exception as e:  # noqa: BLE001 - NumPy's exact class is the reference
        return type(e)
    raise AssertionError("NumPy did not raise")


@pytest.mark.parametrize("fused", ["as configured", "every chain deferred"])
@pytest.mark.parametrize("pos", ["first", "last"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_error_depending_on_data_is_raised_on_every_rank(name, pos, fused):
    fn = CASES[name]
    if real_gpu() and ("errstate" in name or "warnings" in name):
        pytest.skip("GPU kernels do not report floating-point errors (documented difference)")
    i = _index(pos)
    ncls = _numpy_error(fn, i)
    with config.set(**({"fuse_min_size": 0} if fused != "as configured" else {})):
        with pytest.raises(Exception) as info:  # noqa: B017,PT011 - the class is checked against NumPy's below
            fn(sp, i)
        assert type(info.value) is ncls or isinstance(info.value, ncls), (type(info.value), ncls)
        _same_everywhere(info.value)
        x = sp.arange(float(N))
        assert_eq(x[1:] + x[:-1], numpy.arange(1.0, N) + numpy.arange(N - 1.0), exact=True)


def test_every_rank_names_the_failing_rank():
    rank, size = world()
    a = numpy.arange(float(N))
    a[-1] = numpy.nan
    x = sp.array(a)
    with numpy.errstate(invalid="raise"), pytest.raises(FloatingPointError) as info:
        x.astype(numpy.int32)
    notes = getattr(info.value, "__notes__", [])
    if size > 1:
        assert len(notes) == 1 and f"of {size})" in notes[0], notes
    else:
        assert not notes


def test_fused_sum_after_early_evaluation_on_one_rank():
    # Rank 0 evaluates the deferred value early; the others sum it inside the fused kernel.
    rank, _ = world()
    with config.set(fuse_min_size=0):
        a = sp.arange(N)
        t = a + 1
        if rank == 0:
            t.local  # noqa: B018 - evaluates t on this rank only
        with numpy.errstate(over="raise"):
            got = t.sum()
    assert got == numpy.arange(1, N + 1).sum()


def test_fused_float_chain_recorded_before_errstate_is_agreed():
    rank, _ = world()
    with config.set(fuse_min_size=0):
        a = numpy.ones(N)
        a[-1] = 1e300
        t = sp.array(a) * 10.0  # deferred
        if rank == 0:
            t.local  # noqa: B018
        with numpy.errstate(over="raise"), pytest.raises(FloatingPointError) as info:
            (t * 1e10).sum()
        _same_everywhere(info.value)


def test_agree_happy_path_is_one_small_allreduce():
    ctx = default_context()
    with comm_stats() as s:
        agree(ctx, None)
    if ctx.size > 1:
        assert s.collectives == 1 and s.collective_bytes == 4, (s.collectives, s.collective_bytes)
    else:
        assert s.collectives == 0


def test_agree_raises_the_lowest_failing_ranks_error_everywhere():
    ctx = default_context()
    err = KeyError(f"rank {ctx.rank}") if ctx.rank >= ctx.size // 2 else None
    with pytest.raises(KeyError) as info:
        agree(ctx, err)
    assert info.value.args == (f"rank {ctx.size // 2}",)
    _same_everywhere(info.value)
    with pytest.raises(numpy.linalg.LinAlgError, match="Singular matrix"):
        with agreement(ctx):
            if ctx.rank == ctx.size - 1:
                raise numpy.linalg.LinAlgError("Singular matrix")


def test_agree_rebuilds_exceptions_that_take_other_arguments():
    ctx = default_context()
    err = None
    if ctx.rank == ctx.size - 1:
        try:
            numpy.add(numpy.ones(2), "abc")
        except TypeError as e:
            err = e
    with pytest.raises(numpy._core._exceptions._UFuncNoLoopError) as info:
        agree(ctx, err)
    _same_everywhere(info.value)


def test_errors_may_raise_follows_errstate_and_warning_filters():
    assert not errors_may_raise()
    with numpy.errstate(over="raise"):
        assert errors_may_raise()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert errors_may_raise()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        assert not errors_may_raise()


def test_from_local_write_then_mark_modified_keeps_values_computed_before():
    rank, _ = world()
    with config.set(fuse_min_size=0):
        blk = block(numpy.ones(2 + rank % 2))  # uneven blocks
        x = sp.from_local(blk)
        n = x.shape[0]
        t = x * 2
        stencil = x[1:] + x[:-1]
        blk[...] = 100
        x.mark_modified()
        assert_eq(t, numpy.full(n, 2.0), exact=True)
        assert_eq(stencil, numpy.full(n - 1, 2.0), exact=True)
        assert_eq(x * 2, numpy.full(n, 200.0), exact=True)


_UNCAUGHT = """
import sys, warnings
import numpy
import spmdarray as sp
from mpi4py import MPI
a = numpy.arange(1.0, 14.0)
a[int(sys.argv[2])] = numpy.nan if sys.argv[1] == "errstate" else 0.0
x = sp.array(a)
print("rank", MPI.COMM_WORLD.rank, "ready", flush=True)
try:
    if sys.argv[1] == "errstate":
        with numpy.errstate(invalid="raise"):
            x.astype(numpy.int64)
    else:
        warnings.simplefilter("error")
        sp.log(x)
except Exception as e:
    if sys.argv[3] == "0":
        # Each rank says what it got before any rank ends: mpiexec may kill the
        # others as soon as one exits with an error, cutting their output.
        print("RAISED", type(e).__name__, str(e).replace(chr(10), " "), flush=True)
        MPI.COMM_WORLD.Barrier()
    raise
print("NOT REACHED", flush=True)
"""


@pytest.mark.parametrize("abort", ["1", "0"])
@pytest.mark.parametrize("kind", ["errstate", "warnings"])
@pytest.mark.parametrize("nprocs", [2, 3, 4])
def test_uncaught_error_ends_the_job_with_the_error_on_every_rank(nprocs, kind, abort, monkeypatch):
    from mpi4py import MPI

    if MPI.COMM_WORLD.size > 1:
        pytest.skip("launches mpiexec itself: runs in the serial pass")
    if real_gpu():
        pytest.skip("GPU kernels do not report floating-point errors")
    # abort=1 (the default): the first rank to reach the excepthook aborts the job, so the
    # others may be killed before they print.  abort=0: every rank raises and ends by itself.
    monkeypatch.setenv("SPMDARRAY_ABORT_ON_ERROR", abort)
    monkeypatch.setenv("SPMDARRAY_HANG_TIMEOUT", "0")  # nothing but the error may end the job
    rc, out = run_mpi(nprocs, _UNCAUGHT, kind, "12", abort, timeout=90.0, expect_rc=None)
    assert rc != 0, out
    assert "NOT REACHED" not in out, out
    assert out.count("ready") == nprocs, out
    text = "FloatingPointError: invalid value encountered in cast" if kind == "errstate" else "RuntimeWarning: divide"
    note = f"it occurred on rank {nprocs - 1} of {nprocs})"
    if abort == "0":
        # Lines of different ranks may interleave: count the words.
        assert out.count("RAISED") == nprocs, out
        assert out.count(text.split(": ")[0]) >= nprocs and out.count(text.split(": ")[1]) >= nprocs, out
    else:
        assert out.count(text) >= 1 and out.count(note) >= 1, out
        assert "aborting the job (MPI_Abort) because rank" in out, out


def test_write_through_local_then_mark_modified_keeps_values_computed_before():
    # ``x.local`` taken on the first rank only: the others keep deferring, with the same messages.
    rank, _ = world()
    with config.set(fuse_min_size=0):
        x = sp.ones(4 * N)
        kept = x.local if rank == 0 else None
        t = x * 2
        stencil = x[1:] + x[:-1]
        later = t + stencil[0]  # mixes a value computed at once (rank 0) and deferred ones
        if kept is not None:
            kept[...] = 100
        x.mark_modified()
        assert_eq(t, numpy.full(4 * N, 2.0), exact=True)
        assert_eq(stencil, numpy.full(4 * N - 1, 2.0), exact=True)
        assert_eq(later, numpy.full(4 * N, 4.0), exact=True)
        want = numpy.ones(4 * N)
        want[: numpy.asarray(x).tolist().count(100.0)] = 100.0
        assert_eq(x + 0, want, exact=True)
