"""Backends: the NumPy/CuPy choice, device binding, staging, errors and interop.

The decisions are pure functions, tested everywhere.  The backend-parametrised
tests run one body on ``numpy``, on ``cupy`` (skipped without a GPU) and on
``cupy-emulated``: CuPy's interface over NumPy (``tests/fake_cupy.py``), which
refuses implicit host conversion as CuPy does, so the device code paths
(staging through pinned buffers included) run in CI.
"""

from __future__ import annotations

import importlib
import os
import sys
import types
import warnings

import numpy
import pytest
from helpers import assert_eq, ref, world
from hypothesis import given
from hypothesis import strategies as st

import spmdarray as sp
from spmdarray.backend import backends as _backend
from spmdarray.backend.backends import BackendWarning, decide_backend, decide_gpu_aware, device_for_rank
from spmdarray.settings import config as _config

# ------------------------------------------------------------------ pure decisions


def test_decide_backend_probes_only_when_needed():
    calls = []

    def probe():
        calls.append(1)
        return True, ""

    assert decide_backend("numpy", probe) == ("numpy", "")
    assert calls == []
    assert decide_backend(None, probe) == ("cupy", "")
    assert decide_backend(" AUTO ", probe) == ("cupy", "")
    assert decide_backend("cupy", probe) == ("cupy", "")
    assert len(calls) == 3


def test_decide_backend_falls_back_or_refuses():
    def no_gpu():
        return False, "CUDARuntimeError: cudaErrorInsufficientDriver"

    assert decide_backend("auto", no_gpu) == ("numpy", "CUDARuntimeError: cudaErrorInsufficientDriver")
    with pytest.raises(RuntimeError, match="cudaErrorInsufficientDriver.*SPMDARRAY_BACKEND=auto or numpy"):
        decide_backend("cupy", no_gpu)
    with pytest.raises(ValueError, match="one of auto, numpy, cupy; got 'gpu'"):
        decide_backend("gpu", no_gpu)


@given(st.integers(0, 10_000), st.integers(1, 16))
def test_device_for_rank_is_local_rank_mod_count(local_rank, count):
    assert device_for_rank(local_rank, count) == local_rank % count


@given(st.integers(1, 64), st.integers(1, 16))
def test_devices_are_shared_evenly_by_a_node(nranks, count):
    used = [device_for_rank(r, count) for r in range(nranks)]
    per = [used.count(d) for d in range(count)]
    assert max(per) - min(per) <= 1
    assert all(0 <= d < count for d in used)


def test_device_override():
    assert [device_for_rank(r, 4, "3") for r in range(3)] == [3, 3, 3]
    assert [device_for_rank(r, 4, "0, 2") for r in range(4)] == [0, 2, 0, 2]
    assert device_for_rank(5, 4, "") == 1
    with pytest.raises(ValueError, match=r"names devices \[7\] but this node has 4"):
        device_for_rank(0, 4, "1,7")
    with pytest.raises(ValueError, match="device number or a comma-separated list; got 'x'"):
        device_for_rank(0, 4, "x")
    with pytest.raises(ValueError, match="no CUDA device to bind local rank 2"):
        device_for_rank(2, 0)


def test_decide_gpu_aware():
    def never():
        raise AssertionError("the library must not be asked when the switch is set")

    assert decide_gpu_aware("1", never) is True
    assert decide_gpu_aware("0", never) is False
    assert decide_gpu_aware(None, lambda: True) is True
    assert decide_gpu_aware("", lambda: False) is False
    assert decide_gpu_aware(None, lambda: None) is False  # cannot tell: stage through the host
    with pytest.raises(ValueError, match="must be 0 or 1; got 'maybe'"):
        decide_gpu_aware("maybe", never)


def test_mpich_wheel_is_not_gpu_aware_or_cannot_say():
    assert _backend._query_mpi_cuda() in (None, False)


# ------------------------------------------------------------ probing and fallback


def _no_driver_module(name: str):
    """A module with CuPy's interface on a machine without a driver: it imports and
    counts a device, but every allocation fails."""

    class CUDARuntimeError(RuntimeError):
        pass

    def zeros(*args, **kwargs):
        raise CUDARuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime")

    mod = types.ModuleType(name)
    mod.zeros = zeros
    mod.cuda = types.SimpleNamespace(
        runtime=types.SimpleNamespace(getDeviceCount=lambda: 1),
        Device=lambda i: types.SimpleNamespace(use=lambda: None),
    )
    return mod


def _fresh_resolution(monkeypatch, mod: types.ModuleType) -> None:
    """Resolve backends anew (no cache, no warning yet) with ``mod`` as CuPy."""
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    monkeypatch.setattr(_config, "cupy_module", mod.__name__)
    monkeypatch.setattr(_backend, "_resolved", {})
    monkeypatch.setattr(_backend, "_warned", False)


def test_probe_without_driver(monkeypatch):
    monkeypatch.setitem(sys.modules, "nodriver_cupy", _no_driver_module("nodriver_cupy"))
    monkeypatch.setattr(_config, "cupy_module", "nodriver_cupy")
    ok, why, mod, dev = _backend._probe_cupy(0)
    assert not ok and mod is None
    assert "cudaErrorInsufficientDriver" in why and "one-element allocation" in why
    monkeypatch.setattr(_config, "cupy_module", "surely_not_a_module_here")
    ok, why, _, _ = _backend._probe_cupy(0)
    assert not ok and "does not import" in why


def test_auto_falls_back_to_numpy_and_warns_once_on_rank_0(monkeypatch):
    from spmdarray.comm import get_context

    rank, _ = world()
    _fresh_resolution(monkeypatch, _no_driver_module("nodriver_cupy"))
    ctx = get_context()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _backend.get_backend("auto", ctx) is _backend.HOST
        assert _backend.get_backend("auto", ctx) is _backend.HOST
    msgs = [str(w.message) for w in caught if issubclass(w.category, BackendWarning)]
    if rank == 0:
        assert len(msgs) == 1, msgs
        assert "cudaErrorInsufficientDriver" in msgs[0] and "SPMDARRAY_BACKEND=numpy" in msgs[0]
    else:
        assert msgs == []


def test_explicit_cupy_without_a_device_is_an_error_on_every_rank(monkeypatch):
    from spmdarray.comm import get_context

    monkeypatch.setitem(sys.modules, "nodriver_cupy", _no_driver_module("nodriver_cupy"))
    monkeypatch.setattr(_config, "cupy_module", "nodriver_cupy")
    monkeypatch.setattr(_backend, "_resolved", {})
    with pytest.raises(RuntimeError, match="backend 'cupy' was asked for but is not usable"):
        _backend.get_backend("cupy", get_context())
    with pytest.raises(ValueError, match="backend= must be one of auto, numpy, cupy; got 'cuda'"):
        sp.zeros(3, backend="cuda")


def _device_on_rank_0_module(name: str, rank: int) -> types.ModuleType:
    """A CuPy stand-in that finds a working device on rank 0 only."""
    mod = types.ModuleType(name)
    mod.zeros = numpy.zeros
    mod.cuda = types.SimpleNamespace(
        runtime=types.SimpleNamespace(getDeviceCount=lambda: 1 if rank == 0 else 0),
        Device=lambda i: types.SimpleNamespace(use=lambda: None),
    )
    return mod


def test_auto_is_decided_by_every_rank_together(monkeypatch):
    """A device on rank 0 only: every rank takes NumPy (no rank-0-only device context)."""
    from spmdarray.comm import get_context

    rank, size = world()
    if size == 1:
        pytest.skip("needs two ranks")
    _fresh_resolution(monkeypatch, _device_on_rank_0_module("rank0_cupy", rank))
    ctx = get_context()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _backend.get_backend("auto", ctx) is _backend.HOST
    msgs = [str(w.message) for w in caught if issubclass(w.category, BackendWarning)]
    if rank == 0:
        assert len(msgs) == 1 and "not every rank has a usable GPU (rank 1: CuPy sees no CUDA device" in msgs[0], msgs
    else:
        assert msgs == []
    monkeypatch.setattr(_backend, "_resolved", {})
    # Every rank raises: rank 0 (with a device) names the others, they give their own reason.
    why = "not every rank has a usable GPU \\(rank 1: CuPy sees no" if rank == 0 else "CuPy sees no CUDA device"
    with pytest.raises(RuntimeError, match=f"backend 'cupy' was asked for but is not usable: {why}"):
        _backend.get_backend("cupy", ctx)
    # The ranks still agree afterwards (on NumPy blocks: SPMDARRAY_BACKEND=cupy would ask this
    # test's rank-0-only device again).
    assert float(sp.asarray(numpy.arange(10.0), backend="numpy").sum()) == 45.0


# ------------------------------------------------------- backend-parametrised tests

_REAL: list = []


def _real_cupy_usable() -> bool:
    if not _REAL:
        ok = False
        if importlib.util.find_spec("cupy") is not None:
            try:
                import cupy

                ok = cupy.cuda.runtime.getDeviceCount() > 0
            except Exception:  # noqa: BLE001 - any failure means no GPU
                ok = False
        _REAL.append(ok)
    return _REAL[0]


@pytest.fixture(params=["numpy", "cupy", "cupy-emulated"])
def xb(request, monkeypatch):
    """Backend name for ``backend=``: the same test body on each backend."""
    kind = request.param
    if kind == "numpy":
        return "numpy"
    if kind == "cupy":
        if os.environ.get("SPMDARRAY_CUPY_MODULE"):
            pytest.skip("CuPy is replaced by its CPU stand-in in this run")
        if not _real_cupy_usable():
            pytest.skip("no GPU: CuPy does not import or sees no device")
        return "cupy"
    if _real_cupy_usable() and not os.environ.get("SPMDARRAY_CUPY_MODULE"):
        pytest.skip("a real GPU is present: the CPU stand-in is not used")
    monkeypatch.setattr(_config, "cupy_module", "fake_cupy")
    return "cupy"


def _be(x):
    return x._st.be


def test_blocks_live_on_the_backend_and_convert_to_host(xb):
    a = ref((9, 7))
    x = sp.array(a, backend=xb)
    be = _be(x)
    assert be.name == xb
    assert isinstance(x.local, be.ndarray)
    assert isinstance(x[1:, ::-1].local, be.ndarray)
    g = numpy.asarray(x)
    assert type(g) is numpy.ndarray
    numpy.testing.assert_array_equal(g, a)
    assert isinstance(float(x.sum()), float)
    assert type(x.sum()) is numpy.float64  # full reductions give host scalars on every backend


def test_stencil_matches_numpy(xb):
    n = 23
    g0 = numpy.random.default_rng(3).random((n, n + 3))
    grid = sp.array(g0, backend=xb)
    ref_ = g0.copy()
    for g in (grid, ref_):
        for _ in range(4):
            c = g[1:-1, 1:-1]
            c[...] = (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:] + c) * 0.2
    assert_eq(grid, ref_, exact=True)


def test_reductions_scans_and_matmul_match_numpy(xb):
    a = ref((11, 6))
    b = ref((6, 5), seed=1)
    x = sp.array(a, backend=xb)
    y = sp.array(b, backend=xb)
    assert_eq(x.sum(axis=0), a.sum(axis=0))
    assert_eq(x.mean(axis=1), a.mean(axis=1))
    assert_eq(x.std(), a.std())
    assert_eq(x.max(axis=0, initial=0.5), a.max(axis=0, initial=0.5))
    assert_eq(x.argmax(axis=0), a.argmax(axis=0))
    assert_eq(x.argmin(), a.argmin())
    assert_eq(numpy.add.accumulate(x, axis=0), numpy.add.accumulate(a, axis=0))
    assert_eq(x @ y, a @ b, rtol=1e-12)
    assert_eq(x.reshape(6, 11), a.reshape(6, 11))


def test_ufunc_where_and_numpy_operands(xb):
    a = ref((8, 5))
    x = sp.array(a, backend=xb)
    out = sp.zeros((8, 5), backend=xb)
    mask = a > 0
    numpy.sqrt(x, out=out, where=sp.array(mask, backend=xb))
    expect = numpy.zeros((8, 5))
    numpy.sqrt(a, out=expect, where=mask)
    assert_eq(out, expect)
    row = numpy.arange(5.0)
    assert_eq(x + row, a + row)  # a replicated NumPy operand is copied to the device
    assert_eq(x * numpy.float32(2), a * numpy.float32(2))
    assert_eq(x - numpy.array(1.5), a - numpy.array(1.5))


def test_random_is_the_same_on_every_backend(xb):
    r = sp.random.default_rng(7)
    h = sp.random.default_rng(7)
    x = r.random((13, 4), comm=None) if xb == "numpy" else _on(xb, r.random, (13, 4))
    assert_eq(x, numpy.asarray(h.random((13, 4))), exact=True)
    xi = _on(xb, r.integers, 0, 100, (40,))
    assert_eq(xi, numpy.asarray(h.integers(0, 100, (40,))), exact=True)
    xn = _on(xb, r.standard_normal, (50,))
    assert_eq(xn, numpy.asarray(h.standard_normal((50,))), rtol=1e-14)


def _on(xb, fn, *args):
    """Draw with the process's default backend switched to ``xb``."""
    with _config.set(backend=xb):
        x = fn(*args)
    assert _be(x).name == xb
    return x


def test_creation_functions_on_the_backend(xb):
    assert_eq(sp.arange(3, 40, 4, backend=xb), numpy.arange(3, 40, 4))
    assert_eq(sp.linspace(0, 1, 17, backend=xb), numpy.linspace(0, 1, 17))
    assert_eq(sp.eye(5, 7, k=1, backend=xb), numpy.eye(5, 7, k=1))
    assert_eq(sp.full((4, 3), 2.5, backend=xb), numpy.full((4, 3), 2.5))
    assert_eq(sp.ones((0, 3), backend=xb), numpy.ones((0, 3)))
    z = sp.zeros((3, 4), backend=xb)
    assert_eq(sp.zeros_like(z), numpy.zeros((3, 4)))
    assert _be(sp.zeros_like(z)).name == xb


def test_from_local_takes_device_blocks_without_copying(xb):
    rank, size = world()
    rows = [(k % 3) + 1 for k in range(size)]
    full = ref((sum(rows), 4))
    lo = sum(rows[:rank])
    be = _be(sp.empty(0, backend=xb))
    blk = be.asarray(full[lo : lo + rows[rank]].copy())
    x = sp.from_local(blk)
    assert _be(x) is be
    assert_eq(x, full)
    blk[...] = 1.0  # the array aliases the block
    x.mark_modified()
    assert_eq(x, numpy.ones_like(full))


def test_converting_between_backends(xb):
    a = ref((10, 3))
    h = sp.array(a, backend="numpy")
    d = sp.asarray(h, backend=xb)
    assert _be(d).name == xb
    assert d.layout == h.layout
    assert_eq(d, a)
    assert_eq(sp.asarray(d, backend="numpy") * 2, a * 2)
    if xb != "numpy":
        with pytest.raises(ValueError, match=r"different backends \(numpy and cupy\).*backend='numpy'"):
            h + d


def test_mixed_block_kinds_in_from_local_are_rejected(xb):
    rank, size = world()
    if xb == "numpy" or size == 1:
        pytest.skip("needs a device backend and two ranks")
    be = _be(sp.empty(0, backend=xb))
    blk = numpy.ones((2, 2)) if rank == 0 else be.asarray(numpy.ones((2, 2)))
    with pytest.raises(TypeError, match="same kind of block"):
        sp.from_local(blk)


# ------------------------------------------------- staging, errors (CPU stand-in)


@pytest.fixture
def emulated(monkeypatch):
    if _real_cupy_usable() and not os.environ.get("SPMDARRAY_CUPY_MODULE"):
        pytest.skip("a real GPU is present: the CPU stand-in is not used")
    monkeypatch.setattr(_config, "cupy_module", "fake_cupy")
    be = _be(sp.empty(0, backend="cupy"))
    if be.xp.__name__ != "fake_cupy":
        pytest.skip("this process's CuPy backend is a real one")
    return be


def test_halos_are_staged_through_reused_pinned_buffers(emulated):
    rank, size = world()
    be = emulated
    g0 = numpy.random.default_rng(5).random((30, 30))
    grid = sp.array(g0, backend="cupy")
    center = grid[1:-1, 1:-1]

    def step():
        center[...] = (grid[:-2, 1:-1] + grid[2:, 1:-1] + grid[1:-1, :-2] + grid[1:-1, 2:]) * 0.25

    step()
    allocs = be.stats["pinned_allocations"]
    staged = be.stats["staged_messages"]
    with sp.comm_stats() as s:
        for _ in range(5):
            step()
    assert be.stats["pinned_allocations"] == allocs  # reused, never allocated again
    sent_recv = s.messages_sent + s.messages_received
    assert be.stats["staged_messages"] - staged == sent_recv
    if size > 1:
        assert s.messages_sent > 0
    else:
        assert sent_recv == 0
    ref_ = g0.copy()
    for _ in range(6):
        ref_[1:-1, 1:-1] = (ref_[:-2, 1:-1] + ref_[2:, 1:-1] + ref_[1:-1, :-2] + ref_[1:-1, 2:]) * 0.25
    assert_eq(grid, ref_, exact=True)


def test_out_of_memory_is_a_memory_error_on_every_rank(emulated, monkeypatch):
    rank, size = world()
    monkeypatch.setenv("FAKE_CUPY_OOM_BYTES", str(1 << 20))
    monkeypatch.setenv("FAKE_CUPY_OOM_RANK", str(size - 1))  # only the last rank runs out
    with pytest.raises(MemoryError) as info:
        sp.zeros((4096, 256), backend="cupy")  # 8 MiB: every block is at least 2 MiB
    msg = str(info.value)
    assert f"rank {size - 1}" in msg
    if rank == size - 1:
        assert "requested" in msg and "bytes free of" in msg and "device 0" in msg
    else:
        assert "every rank raises" in msg
    # Nothing is left half-done: the next collective works on every rank.
    monkeypatch.delenv("FAKE_CUPY_OOM_BYTES")
    assert_eq(sp.ones(5, backend="cupy").sum(), 5.0)


def test_staging_pool_reuses_buffers_by_size_class(emulated):
    be = emulated
    a = be.pinned(1000)
    assert a.nbytes == 1000 and a.dtype == numpy.uint8
    n = be.stats["pinned_allocations"]
    be.release(a)
    b = be.pinned(700)  # same power-of-two class: the same memory
    assert be.stats["pinned_allocations"] == n
    assert numpy.shares_memory(a, b)
    be.release(b)
    c = be.pinned(5000)
    assert be.stats["pinned_allocations"] == n + 1
    be.release(c)


def test_backend_info(xb):
    info = sp.backend_info(backend=xb)
    assert info["backend"] == xb
    if xb == "numpy":
        assert info["device"] is None and info["gpu_aware_mpi"] is False
    else:
        assert isinstance(info["device"], int)


def test_auto_without_cupy_installed_is_silent_unless_a_gpu_was_asked_for(monkeypatch):
    from spmdarray.comm import get_context

    rank, _ = world()
    monkeypatch.setattr(_config, "cupy_module", "surely_not_a_module_here")
    for device, expect in ((None, 0), ("0", 1)):
        monkeypatch.setattr(_config, "device", device)
        monkeypatch.setattr(_backend, "_resolved", {})
        monkeypatch.setattr(_backend, "_warned", False)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert _backend.get_backend("auto", get_context()) is _backend.HOST
        msgs = [str(w.message) for w in caught if issubclass(w.category, BackendWarning)]
        assert len(msgs) == (expect if rank == 0 else 0), (device, msgs)
        if msgs:
            assert "cupy does not import" in msgs[0] and "SPMDARRAY_BACKEND=numpy" in msgs[0]
