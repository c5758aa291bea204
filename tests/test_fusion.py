"""Deferred, fused elementwise evaluation (spmdarray.fusion.record) against eager NumPy.

Fused results must equal NumPy's bit for bit, and the deferral must never be
observable: values, printing, conversions and errors behave as in eager mode.
"""

from __future__ import annotations

import numpy
import pytest
from helpers import assert_eq, fuse_everything, ref
from hypothesis import given, settings
from hypothesis import strategies as st

import spmdarray as sp
from spmdarray.core.storage import Storage
from spmdarray.fusion import run as _fusion_run
from spmdarray.settings import config as _config

ON_DEVICE = sp.empty(0)._st.be.is_device


@pytest.fixture(params=["numba", "numpy"])
def compiler(request, monkeypatch):
    """Fusion on, compiling every kernel at once (or evaluating with NumPy)."""
    fuse_everything(monkeypatch, request.param)
    monkeypatch.setattr(_config, "fuse_overlap", True)  # also when ranks outnumber cores
    return request.param


def deferred(x) -> bool:
    return x._s.deferred


# ----------------------------------------------------------- expression trees
SHAPE = (5, 6)
DTYPES = ["bool", "int8", "int32", "int64", "uint8", "float32", "float64"]
BINARY = [
    numpy.add,
    numpy.subtract,
    numpy.multiply,
    numpy.true_divide,
    numpy.less,
    numpy.greater_equal,
    numpy.equal,
    numpy.not_equal,
    numpy.logical_and,
    numpy.logical_xor,
    numpy.bitwise_and,
    numpy.bitwise_xor,
    numpy.maximum,
]
UNARY = [numpy.negative, numpy.sqrt, numpy.square, numpy.absolute, numpy.logical_not, numpy.positive]
# leaf views of a (7, 8) base array: shapes broadcast to SHAPE
VIEWS = [
    (slice(1, 6), slice(1, 7)),
    (slice(0, 5), slice(1, 7)),
    (slice(2, 7), slice(2, 8)),
    (slice(5, 0, -1), slice(6, 0, -1)),
    (slice(6, 1, -1), slice(1, 7)),
    (3, slice(0, 6)),
    (slice(1, 6), slice(4, 5)),
]


def _leaf():
    arrays = st.tuples(st.just("a"), st.integers(0, len(DTYPES) - 1), st.integers(0, len(VIEWS) - 1))
    scalars = st.tuples(
        st.just("s"),
        st.one_of(
            st.integers(-3, 3),
            st.sampled_from([0.5, -1.25, 3.0, 1e300]),
            st.booleans(),
            st.sampled_from([numpy.float32(0.2), numpy.int16(-2), numpy.float64(2.5)]),
        ),
    )
    return st.one_of(arrays, arrays, scalars)


def _tree():
    return st.recursive(
        _leaf(),
        lambda kids: st.one_of(
            st.tuples(st.just("u"), st.integers(0, len(UNARY) - 1), kids),
            st.tuples(st.just("b"), st.integers(0, len(BINARY) - 1), kids, kids),
        ),
        max_leaves=6,
    )


def _bases(mod):
    out = []
    for k, dt in enumerate(DTYPES):
        r = ref((7, 8), dt, seed=k)
        if numpy.dtype(dt).kind == "f":
            r[0, 0] = 0.0
            r[3, 4] = -0.0
        out.append(r if mod is numpy else sp.array(r))
    return out


def _build(t, bases):
    kind = t[0]
    if kind == "a":
        return bases[t[1]][VIEWS[t[2]]]
    if kind == "s":
        return t[1]
    if kind == "u":
        return UNARY[t[1]](_build(t[2], bases))
    return BINARY[t[1]](_build(t[2], bases), _build(t[3], bases))


def _outcome(t, mod):
    with numpy.errstate(all="ignore"):
        try:
            return _build(t, _bases(mod)), None
        except Exception as e:  # noqa: BLE001 - the exception type is compared
            return None, type(e)


@settings(max_examples=25, deadline=None, database=None, derandomize=True)
@given(_tree())
def test_fused_trees_equal_numpy_bit_for_bit(t):
    for comp in ("numba", "numpy"):
        _config.fuse_compiler = comp
        _config.fuse_jit_min_size = 0
        _config.fuse_min_size = 0
        try:
            exp, exp_err = _outcome(t, numpy)
            got, got_err = _outcome(t, sp)
            assert got_err is exp_err, (got_err, exp_err)
            if exp_err is not None:
                continue
            if not isinstance(exp, numpy.ndarray) or exp.ndim == 0:
                assert numpy.asarray(got).tolist() == numpy.asarray(exp).tolist() or numpy.isnan(exp).all()
                continue
            assert_eq(got, exp, exact=True)
        finally:
            _config.fuse_compiler = "numba"
            _config.fuse_jit_min_size = 1 << 14
            _config.fuse_min_size = 1 << 14


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "float32", "float64"])
def test_mixed_dtypes_broadcasting_and_scalars(compiler, dtype):
    a0, b0 = ref((4, 7), dtype, 1), ref((7,), "float32", 2)
    c0 = ref((4, 1), "int64", 3)
    a, b, c = sp.array(a0), sp.array(b0), sp.array(c0)
    got = (a * 3 + b) / 2 - c * a + (a > 1) * numpy.float32(0.5)
    assert deferred(got)
    with numpy.errstate(all="ignore"):
        exp = (a0 * 3 + b0) / 2 - c0 * a0 + (a0 > 1) * numpy.float32(0.5)
    assert_eq(got, exp, exact=True)


# ------------------------------------------------------------------- aliasing
def _jacobi(shape, seed: int, iters: int):
    """``iters`` in-place stencil sweeps on spmdarray and on NumPy: (grid, NumPy's grid)."""
    g0 = ref(shape, "float64", seed)
    g = sp.array(g0)
    c, n, s, w, e = g[1:-1, 1:-1], g[:-2, 1:-1], g[2:, 1:-1], g[1:-1, :-2], g[1:-1, 2:]
    c0, n0, s0, w0, e0 = g0[1:-1, 1:-1], g0[:-2, 1:-1], g0[2:, 1:-1], g0[1:-1, :-2], g0[1:-1, 2:]
    for _ in range(iters):
        c[:] = (c + n + e + w + s) * 0.2
        c0[:] = (c0 + n0 + e0 + w0 + s0) * 0.2
    return g, g0


@pytest.mark.parametrize("shape", [(9, 8), (4, 30), (12, 3)])
def test_jacobi_keeps_old_values(compiler, shape):
    g, g0 = _jacobi(shape, 5, 4)
    assert_eq(g, g0, exact=True)


def test_jacobi_with_small_chunks(compiler, monkeypatch):
    """Chunked write-back: rows are written only when no later row reads them."""
    monkeypatch.setattr(_config, "fuse_chunk_bytes", 8)
    g0 = ref((11, 9), "float64", 6)
    g = sp.array(g0)
    g[1:-1, 1:-1] = (g[1:-1, 1:-1] + g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:]) * 0.2
    g0[1:-1, 1:-1] = (g0[1:-1, 1:-1] + g0[:-2, 1:-1] + g0[2:, 1:-1] + g0[1:-1, :-2] + g0[1:-1, 2:]) * 0.2
    assert_eq(g, g0, exact=True)


@pytest.mark.parametrize(
    "case",
    ["reverse", "shift_down", "shift_up", "transpose", "inplace", "same_view", "reversed_2d"],
)
def test_aliasing_outputs(compiler, case, monkeypatch):
    monkeypatch.setattr(_config, "fuse_chunk_bytes", 16)
    x0 = ref((8, 8), "float64", 7)
    x = sp.array(x0)
    if case == "reverse":
        x[:] = x[::-1] * 2 + x
        x0[:] = x0[::-1] * 2 + x0
    elif case == "shift_down":
        x[1:] = x[:-1] + 1.0
        x0[1:] = x0[:-1] + 1.0
    elif case == "shift_up":
        x[:-1] = x[1:] * x[:-1]
        x0[:-1] = x0[1:] * x0[:-1]
    elif case == "transpose":
        x[...] = x.T - x
        x0[...] = x0.T - x0
    elif case == "inplace":
        x += x[::-1, ::-1] * 3
        x0 += x0[::-1, ::-1] * 3
    elif case == "same_view":
        x[2:5] = x[2:5] * x[2:5] + 1
        x0[2:5] = x0[2:5] * x0[2:5] + 1
    else:
        x[::-1, 1:] = x[:, :-1] - x[::-1, 1:]
        x0[::-1, 1:] = x0[:, :-1] - x0[::-1, 1:]
    assert_eq(x, x0, exact=True)


def test_out_and_inplace_operators(compiler):
    a0, b0 = ref((6, 5), "float64", 8), ref((6, 5), "float64", 9)
    a, b = sp.array(a0), sp.array(b0)
    a += 2 * b
    a0 += 2 * b0
    numpy.multiply(a, b - 1, out=a)
    numpy.multiply(a0, b0 - 1, out=a0)
    i0 = ref((6, 5), "int32", 10)
    i = sp.array(i0)
    i *= 3
    i0 *= 3
    assert_eq(a, a0, exact=True)
    assert_eq(i, i0, exact=True)


def test_assignment_casts_safely(compiler):
    f0 = numpy.zeros((5, 4))
    f = sp.array(f0)
    i0 = ref((5, 4), "int32", 11)
    i = sp.array(i0)
    f[...] = i * 2 + 1  # int32 expression into float64: a safe cast, fused
    f0[...] = i0 * 2 + 1
    i[...] = f * 0.5 - 3  # float into int: NumPy's unsafe cast, done eagerly
    i0[...] = f0 * 0.5 - 3
    assert_eq(f, f0, exact=True)
    assert_eq(i, i0, exact=True)


# ---------------------------------------------------------- never observable
def test_deferred_values_are_snapshots(compiler):
    a0 = ref((7, 5), "float64", 12)
    a = sp.array(a0)
    b = a + 1
    c = b * a
    assert deferred(b) and deferred(c)
    a[...] = 0.0  # b and c must still see the old a
    a[1:3] += 5.0
    assert_eq(b, a0 + 1, exact=True)
    assert_eq(c, (a0 + 1) * a0, exact=True)


def test_named_value_assigned_over_its_operand(compiler):
    g0 = ref((8, 7), "float64", 13)
    g = sp.array(g0)
    c = g[1:-1, 1:-1]
    avg = (c + g[:-2, 1:-1] + g[2:, 1:-1]) * 0.2
    c[:] = avg
    ref_avg = (g0[1:-1, 1:-1] + g0[:-2, 1:-1] + g0[2:, 1:-1]) * 0.2
    g0[1:-1, 1:-1] = ref_avg
    t = c + g[:-2, 1:-1]  # a named operand of the next assignment keeps its value too
    t0 = g0[1:-1, 1:-1] + g0[:-2, 1:-1]
    c[:] = t * 0.5
    g0[1:-1, 1:-1] = t0 * 0.5
    assert_eq(t, t0, exact=True)
    c[:] = c * 3  # writes the grid again: avg keeps its value
    g0[1:-1, 1:-1] *= 3
    assert_eq(avg, ref_avg, exact=True)
    assert_eq(g, g0, exact=True)


def test_printing_and_conversion_match_eager(compiler):
    a0 = ref((4, 3), "float64", 14)
    a = sp.array(a0)
    x = a * 2 - 1
    assert deferred(x)
    assert x.shape == (4, 3) and x.dtype == numpy.float64 and x.ndim == 2 and x.size == 12
    assert deferred(x)  # metadata does not evaluate
    text = str(x)
    assert text == str(a0 * 2 - 1)
    y = a * 2 - 1
    assert repr(y) == repr(sp.array(a0 * 2 - 1))
    z = a * 2 - 1
    assert numpy.asarray(z).tolist() == (a0 * 2 - 1).tolist()
    w = a + 1
    assert sp.empty(0)._st.be.is_block(w.local) and not deferred(w)
    assert type(w._st) is Storage


def test_errors_are_raised_at_the_operation(compiler):
    a = sp.array(ref((4, 3), "float64", 15))
    x = a + 1
    with pytest.raises(ValueError, match="could not be broadcast"):
        x + sp.ones((5, 3))
    b = sp.array(ref((4, 3), "bool", 16))
    with pytest.raises(TypeError):
        (b & b) - b  # NumPy: boolean subtract is not supported
    i = sp.array(ref((4, 3), "uint8", 17))
    with pytest.raises(OverflowError):
        (i + 1) + 1000
    with pytest.raises(ValueError):
        x[...] = sp.ones((2, 3)) + 1


def test_errstate_raise_runs_eagerly(compiler):
    a = sp.ones((4, 3))
    with numpy.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            a / 0.0


def test_sync_and_size_limit(compiler, monkeypatch):
    a0 = ref((5, 5), "float64", 18)
    a = sp.array(a0)
    b = a * 2
    sp.sync()
    assert not deferred(b)
    monkeypatch.setattr(_config, "fuse_max_ops", 5)
    x, x0 = a, a0
    for k in range(12):
        x = x * 0.5 + k
        x0 = x0 * 0.5 + k
    assert_eq(x, x0, exact=True)


def test_small_arrays_run_eagerly(monkeypatch):
    monkeypatch.setattr(_config, "fuse", True)
    monkeypatch.setattr(_config, "fuse_min_size", 100)
    a = sp.arange(99.0)
    assert not deferred(a * 2)
    b = sp.arange(100.0)
    assert deferred(b * 2)


def test_fusion_off_is_eager(monkeypatch):
    monkeypatch.setattr(_config, "fuse", False)
    a0 = ref((5, 4), "float64", 19)
    a = sp.array(a0)
    x = a * 2 + 1
    assert not deferred(x)
    assert_eq(x, a0 * 2 + 1, exact=True)


# --------------------------------------------------- random draws and sums
def test_random_draws_fuse_with_identical_bits(compiler, monkeypatch):
    sp.random.seed(123)
    x = sp.random.random((6, 7))
    y = sp.random.random(11)
    assert deferred(x)
    monkeypatch.setattr(_config, "fuse", False)
    sp.random.seed(123)
    x0 = numpy.asarray(sp.random.random((6, 7)))
    y0 = numpy.asarray(sp.random.random(11))
    assert_eq(x * 2, x0 * 2, exact=True)
    assert_eq(y, y0, exact=True)


@pytest.mark.parametrize("n", [0, 1, 37, 1000])
def test_monte_carlo_count_is_fused_and_exact(compiler, n):
    rng = sp.random.default_rng(7)
    x = rng.random(n)
    y = rng.random(n)
    x0, y0 = numpy.asarray(x), numpy.asarray(y)
    rng = sp.random.default_rng(7)
    x, y = rng.random(n), rng.random(n)
    got = sp.sum(x * x + y * y < 1.0)
    exp = numpy.sum(x0 * x0 + y0 * y0 < 1.0)
    assert type(got) is type(exp) and got == exp


@pytest.mark.parametrize("dtype", ["bool", "int32", "uint8", "int64"])
def test_fused_integer_sums(compiler, dtype):
    a0 = ref((6, 7), dtype, 20)
    a = sp.array(a0)
    got = (a & a).sum() if dtype == "bool" else (a * 3 - 1).sum()
    exp = (a0 & a0).sum() if dtype == "bool" else (a0 * 3 - 1).sum()
    assert_eq(got, exp)


def test_heat_like_3d_and_1d(compiler):
    u0 = ref((6, 5, 7), "float64", 21)
    u = sp.array(u0)
    c = u[1:-1, 1:-1, 1:-1]
    c[...] = c + 0.1 * (u[:-2, 1:-1, 1:-1] + u[2:, 1:-1, 1:-1] + u[1:-1, :-2, 1:-1] - 3 * c)
    c0 = u0[1:-1, 1:-1, 1:-1]
    c0[...] = c0 + 0.1 * (u0[:-2, 1:-1, 1:-1] + u0[2:, 1:-1, 1:-1] + u0[1:-1, :-2, 1:-1] - 3 * c0)
    assert_eq(u, u0, exact=True)
    v0 = ref((23,), "float32", 22)
    v = sp.array(v0)
    v[1:-1] = (v[:-2] + v[2:]) * numpy.float32(0.5) - v[1:-1]
    v0[1:-1] = (v0[:-2] + v0[2:]) * numpy.float32(0.5) - v0[1:-1]
    assert_eq(v, v0, exact=True)


def test_missing_compiler_falls_back_to_numpy(monkeypatch):
    """Without numba (the import failed) deferred values are computed by NumPy, identically."""
    monkeypatch.setattr(_config, "fuse_min_size", 0)
    monkeypatch.setattr(_config, "fuse_compiler", "numba")
    monkeypatch.setattr(_fusion_run, "_KERNELS", False)  # as after a failed import
    assert _fusion_run._kernels() is None
    g0 = ref((9, 7), "float64", 23)
    g = sp.array(g0)
    g[1:-1, 1:-1] = (g[1:-1, 1:-1] + g[:-2, 1:-1] + g[2:, 1:-1]) * 0.2
    g0[1:-1, 1:-1] = (g0[1:-1, 1:-1] + g0[:-2, 1:-1] + g0[2:, 1:-1]) * 0.2
    assert_eq(g, g0, exact=True)
    i0 = ref((9, 7), "int32", 24)
    i = sp.array(i0)
    assert sp.sum(i > 3) == numpy.sum(i0 > 3)


def _spy_overlap(monkeypatch) -> list:
    """Records what each call of the in-place halo overlap returned."""
    used = []
    original = _fusion_run._overlap_aliased

    def spy(*args):
        used.append(original(*args))
        return used[-1]

    monkeypatch.setattr(_fusion_run, "_overlap_aliased", spy)
    return used


@pytest.mark.parametrize("shape", [(42, 10), (30, 64), (16, 40)])
def test_jacobi_overlaps_halos_with_the_interior(compiler, shape, monkeypatch):
    """The interior is computed while the halos travel (row and column halos), Jacobi semantics kept."""
    used = _spy_overlap(monkeypatch)
    g, g0 = _jacobi(shape, 25, 3)
    assert_eq(g, g0, exact=True)
    if g.layout.nprocs > 1 and not ON_DEVICE:  # (device: scratch block, see fusion.md)
        assert any(used), g.layout.dims


@pytest.mark.parametrize("shape", [(14, 12, 10), (9, 30, 7)])
def test_3d_inplace_stencil_overlaps_halos(compiler, shape, monkeypatch):
    """A 7-point in-place update on 3-D blocks: core computed while the halos travel, Jacobi kept."""
    used = _spy_overlap(monkeypatch)
    u0 = ref(shape, "float64", 31)
    u = sp.array(u0)
    for a in (u, u0):
        c = a[1:-1, 1:-1, 1:-1]
        for _ in range(3):
            c[...] = c + 0.1 * (
                a[:-2, 1:-1, 1:-1]
                + a[2:, 1:-1, 1:-1]
                + a[1:-1, :-2, 1:-1]
                + a[1:-1, 2:, 1:-1]
                + a[1:-1, 1:-1, :-2]
                + a[1:-1, 1:-1, 2:]
                - 6.0 * c
            )
    assert_eq(u, u0, exact=True)
    if u.layout.nprocs > 1 and not ON_DEVICE:
        assert any(used), u.layout.dims


def test_integer_indexed_views_read_their_ghost_row(compiler):
    """``x[k]`` whose row sits in another rank's ghost frame: no interior before the wait."""
    a0, b0 = ref((6, 6), "float64", 26), ref((6,), "float64", 27)
    x, y = sp.array(a0), sp.array(b0)
    for k in range(6):
        assert_eq(x[k] * y, a0[k] * b0, exact=True)
        assert_eq((x[k] + 1.0) * y - x[:, k], (a0[k] + 1.0) * b0 - a0[:, k], exact=True)


def test_overlap_auto_follows_ranks_per_node(monkeypatch):
    """``auto`` overlaps blocks of 2**20 elements or more unless a node runs more ranks than cores; 1/0 force it."""
    import os

    class Ctx:
        _local = None

    ctx = Ctx()
    monkeypatch.setattr(_config, "fuse_overlap", "auto")
    assert _fusion_run._overlapping(ctx)  # not known yet: overlap
    assert not _fusion_run._overlapping(ctx, (64, 62, 62))  # a small block: the split costs more
    assert _fusion_run._overlapping(ctx, (2000, 4000))
    ctx._local = (0, os.cpu_count())
    assert _fusion_run._overlapping(ctx)
    ctx._local = (0, os.cpu_count() + 1)
    assert not _fusion_run._overlapping(ctx)
    monkeypatch.setattr(_config, "fuse_overlap", True)
    assert _fusion_run._overlapping(ctx)
    monkeypatch.setattr(_config, "fuse_overlap", False)
    ctx._local = (0, 1)
    assert not _fusion_run._overlapping(ctx)
