"""The cached per-operation fast path (``spmdarray.engine.fastpath``) and full reductions.

Every result is compared with NumPy, bit for bit, at any rank count (uneven
shapes, empty blocks, layouts with idle ranks); the decisions that send an
operation to the general engine (errstate, fusion, broadcasting, halos,
``where=``) are checked to still hold once a plan is cached.
"""

from __future__ import annotations

import warnings

import numpy
import pytest
from helpers import assert_eq, ref, world

import spmdarray as sp
from spmdarray.engine import fastpath
from spmdarray.fusion.record import is_deferred
from spmdarray.settings import config

SHAPES = [(1,), (3,), (10,), (7, 5), (2, 3, 4)]


def _fresh_plans(monkeypatch):
    monkeypatch.setattr(fastpath, "_PLANS", {})


@pytest.fixture(autouse=True)
def _engine_paths():
    """These tests are about the engine's plans: the whole-array lane (which takes
    every small array on one rank) is off unless a test turns it on."""
    with config.set(whole_lane=False):
        yield


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(
    "op",
    [
        lambda x, y: x + y,
        lambda x, y: x - 2 * y,
        lambda x, y: x * 2.5,
        lambda x, y: 3 / x,
        lambda x, y: x**2,
        lambda x, y: numpy.maximum(x, y),
        lambda x, y: numpy.sin(x),
        lambda x, y: x < y,
        lambda x, y: -x,
        lambda x, y: numpy.hypot(x, numpy.float32(2)),
    ],
)
def test_same_as_numpy_twice(monkeypatch, shape, op):
    """The first call builds the plan, the second runs it: both are NumPy's values."""
    _fresh_plans(monkeypatch)
    a, b = ref(shape, seed=1), ref(shape, seed=2)
    x, y = sp.array(a), sp.array(b)
    for _ in range(2):
        assert_eq(op(x, y), op(a, b), exact=True)
    assert fastpath.plan_count() >= 1


@pytest.mark.parametrize("dtype", [numpy.int8, numpy.uint8, numpy.int64, numpy.float32, numpy.complex64, bool])
def test_scalar_promotion_nep50(monkeypatch, dtype):
    """Python scalars are weak (NEP 50); NumPy scalars are not; plans keep them apart."""
    _fresh_plans(monkeypatch)
    a = ref((9,), dtype)
    x = sp.array(a)
    for s in (1, 2.5, 1j, True, numpy.float64(2), numpy.int16(3)):
        for _ in range(2):
            try:
                e = a + s
            except Exception as err:  # noqa: BLE001 - spmdarray must raise the same
                with pytest.raises(type(err)):
                    x + s
                continue
            assert_eq(x + s, e, exact=True)


def test_python_int_overflow_is_not_cached_away(monkeypatch):
    """int8 + 127 runs; int8 + 128 raises NumPy's OverflowError on every rank, after 127 made a plan."""
    _fresh_plans(monkeypatch)
    a = numpy.arange(-4, 5, dtype=numpy.int8)
    x = sp.array(a)
    for _ in range(2):
        assert_eq(x + 127, a + 127, exact=True)
        assert_eq(x + (-128), a + (-128), exact=True)
    with pytest.raises(OverflowError):
        x + 128
    with pytest.raises(OverflowError):
        x + (-129)
    u = sp.array(numpy.arange(5, dtype=numpy.uint8))
    u + 1
    with pytest.raises(OverflowError):
        u + (-1)


def test_errstate_raise_after_a_plan(monkeypatch):
    """A cached plan does not hide errstate: the error is raised on every rank alike."""
    _fresh_plans(monkeypatch)
    rank, size = world()
    a = numpy.ones(8)
    a[-1] = 0.0  # only the last rank's block holds the zero
    x = sp.array(a)
    with numpy.errstate(divide="ignore"):
        for _ in range(2):
            assert_eq(1.0 / x, 1.0 / a, exact=True)
    with numpy.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            1.0 / x
        y = sp.ones(8)
        assert_eq(1.0 / y, numpy.ones(8), exact=True)  # no error anywhere: no raise
    with numpy.errstate(divide="ignore"):
        assert_eq(1.0 / x, 1.0 / a, exact=True)
    # A warnings filter that turns the RuntimeWarning into an error: raised on every rank too.
    with numpy.errstate(divide="warn"), warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(RuntimeWarning):
            1.0 / x
    with numpy.errstate(divide="ignore"):
        assert_eq(1.0 / x, 1.0 / a, exact=True)


def test_integer_power_errors_agree(monkeypatch):
    _fresh_plans(monkeypatch)
    a = numpy.array([2, 3, 4, -1, 5], dtype=numpy.int64)
    x = sp.array(a)
    assert_eq(x**2, a**2, exact=True)
    with pytest.raises(ValueError, match="negative integer powers"):
        sp.array(numpy.array([2, 2, 2, 2, 2])) ** x


def test_out_dtype_and_casting(monkeypatch):
    _fresh_plans(monkeypatch)
    a, b = ref((11,), seed=3), ref((11,), seed=4)
    x, y = sp.array(a), sp.array(b)
    z = sp.zeros(11, dtype=numpy.float32)
    ez = numpy.zeros(11, dtype=numpy.float32)
    for _ in range(2):
        r = numpy.add(x, y, out=z)
        assert r is z
        numpy.add(a, b, out=ez)
        assert_eq(z, ez, exact=True)
    i = sp.zeros(11, dtype=numpy.int64)
    with pytest.raises(numpy._core._exceptions._UFuncOutputCastingError):
        numpy.add(x, y, out=i)
    xi = sp.array(numpy.arange(11))
    for _ in range(2):
        xi += 3
    assert_eq(xi, numpy.arange(11) + 6, exact=True)
    with pytest.raises(numpy._core._exceptions._UFuncOutputCastingError):
        xi += 1.5


def test_where_goes_to_the_general_engine(monkeypatch):
    _fresh_plans(monkeypatch)
    a, b = ref((13,), seed=5), ref((13,), seed=6)
    x, y = sp.array(a), sp.array(b)
    z, ez = sp.zeros(13), numpy.zeros(13)
    mask = a > 0
    x + y  # a plan for the same operands
    numpy.add(x, y, out=z, where=sp.array(mask))
    numpy.add(a, b, out=ez, where=mask)
    assert_eq(z, ez, exact=True)


def test_writes_make_halos_stale(monkeypatch):
    """An in-place fast operation records the write: a halo read afterwards is sent again."""
    _fresh_plans(monkeypatch)
    rank, size = world()
    a = ref((12,), seed=7)
    x = sp.array(a)
    with config.set(fuse=False):
        assert_eq(x[1:] + x[:-1], a[1:] + a[:-1], exact=True)
        with sp.comm_stats() as again:
            x[1:] + x[:-1]
        for _ in range(2):
            x += 1.0
            a += 1.0
        with sp.comm_stats() as after:
            assert_eq(x[1:] + x[:-1], a[1:] + a[:-1], exact=True)
    if size > 1:
        assert again.messages_sent == 0  # cached halo, unchanged data
        assert after.messages_sent + after.messages_received > 0


def test_aligned_operations_send_nothing(monkeypatch):
    _fresh_plans(monkeypatch)
    x, y = sp.ones((9, 4)), sp.ones((9, 4))
    x += 2 * y
    with sp.comm_stats() as s:
        for _ in range(3):
            x += 2 * y
            z = x * 2.0 - y
    assert (s.messages_sent, s.messages_received, s.collectives) == (0, 0, 0)
    assert_eq(z, numpy.full((9, 4), 17.0), exact=True)  # x: 1 + 4 * 2


def test_overlapping_views(monkeypatch):
    """``x[1:] += x[:-1]``: NumPy's result (the right-hand side read before the write)."""
    _fresh_plans(monkeypatch)
    for n in (5, 16):
        a = ref((n,), seed=n)
        x = sp.array(a)
        for _ in range(2):
            x[1:] += x[:-1]
            a[1:] += a[:-1]
            assert_eq(x, a, exact=True)
        numpy.multiply(x[::2], 2.0, out=x[::2])
        numpy.multiply(a[::2], 2.0, out=a[::2])
        assert_eq(x, a, exact=True)


def test_fixed_and_empty_blocks(monkeypatch):
    """Rows of a 2-D array (idle ranks along the fixed grid axis) and blocks with no element."""
    _fresh_plans(monkeypatch)
    rank, size = world()
    a, b = ref((5, 7), seed=8), ref((5, 7), seed=9)
    x, y = sp.array(a), sp.array(b)
    for _ in range(2):
        assert_eq(x[2] * y[2], a[2] * b[2], exact=True)
        assert_eq(x[:, 1] + y[:, 1], a[:, 1] + b[:, 1], exact=True)
    one = sp.ones(1)
    for _ in range(2):
        one += 1
    assert_eq(one, numpy.full(1, 3.0), exact=True)


def test_fusion_still_takes_large_arrays(monkeypatch):
    """A plan made while the array was below ``fuse_min_size`` does not stop deferral above it."""
    _fresh_plans(monkeypatch)
    x, y = sp.ones(50), sp.ones(50)
    with config.set(fuse=True, fuse_min_size=10**6):
        z = x + y
        assert not is_deferred(z)
    with config.set(fuse=True, fuse_min_size=10):
        z = x + y
        assert is_deferred(z)
        w = z * 2.0  # a deferred operand: recorded too
        assert is_deferred(w)
        assert_eq(w, numpy.full(50, 4.0), exact=True)
    with config.set(fuse=False):
        assert not is_deferred(x + y)


def test_deferred_operand_and_readers(monkeypatch):
    """A small eager write to an array that a deferred value reads computes that value first."""
    _fresh_plans(monkeypatch)
    with config.set(fuse=True, fuse_min_size=20):
        big = sp.ones(40)
        d = big * 3.0  # deferred, reads big
        assert is_deferred(d)
        small = sp.ones(10)
        small += 1  # fast path, unrelated storage
        numpy.multiply(big, 0.0, out=big)  # a write to what d reads
        assert_eq(d, numpy.full(40, 3.0), exact=True)
        assert_eq(small, numpy.full(10, 2.0), exact=True)


def test_broadcasting_and_mixed_shapes(monkeypatch):
    _fresh_plans(monkeypatch)
    a, b = ref((6, 5), seed=10), ref((5,), seed=11)
    x, y = sp.array(a), sp.array(b)
    for _ in range(2):
        assert_eq(x + y, a + b, exact=True)
        assert_eq(x + b, a + b, exact=True)
    with pytest.raises(ValueError, match="could not be broadcast"):
        x + sp.ones(4)


@pytest.mark.parametrize("shape", [(1,), (3,), (10,), (7, 5), (2, 1, 3)])
@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32, numpy.int32, numpy.uint8, bool, numpy.complex128])
@pytest.mark.parametrize("name", ["sum", "prod", "min", "max", "any", "all"])
def test_full_reductions_bit_identical(shape, dtype, name):
    """``x.sum()`` (fast) equals the general path (``axis=`` all axes) bit for bit, and NumPy."""
    a = ref(shape, dtype, seed=12)
    if name == "prod" and numpy.dtype(dtype).kind in "fc":
        a = (a / 4 + 1).astype(dtype)
    x = sp.array(a)
    if name in ("min", "max") and numpy.dtype(dtype).kind == "c":
        return
    for _ in range(2):
        got = getattr(x, name)()
        general = getattr(x, name)(axis=tuple(range(len(shape))))
        assert type(got) is type(general)
        assert_eq(got, general, exact=True)
        # Against NumPy's serial sum: the partials are added in another order.
        assert_eq(got, getattr(a, name)(), rtol=1e-5 if a.dtype.itemsize <= 8 else 1e-12)
        assert_eq(getattr(numpy, name)(x), got, exact=True)


def test_full_reductions_of_views_and_idle_ranks():
    a = ref((5, 7), seed=13)
    x = sp.array(a)
    for v, e in ((x[3], a[3]), (x[:, 2], a[:, 2]), (x[1:, ::2], a[1:, ::2]), (x.T, a.T)):
        axes = tuple(range(v.ndim))
        for _ in range(2):
            assert_eq(v.sum(), v.sum(axis=axes), exact=True)
            assert_eq(v.sum(), e.sum())
            assert_eq(v.max(), e.max(), exact=True)
    with pytest.raises(ValueError, match="zero-size array"):
        sp.ones(0).max()
    assert_eq(sp.ones(0).sum(), numpy.ones(0).sum(), exact=True)


def test_full_reduction_under_errstate_raise():
    a = numpy.full(6, 1e308)
    x = sp.array(a)
    with numpy.errstate(over="ignore"):
        assert_eq(x.sum(), a.sum(), exact=True)
    with numpy.errstate(over="raise"):
        with pytest.raises(FloatingPointError):
            x.sum()


@pytest.mark.parametrize("which", [0, 1])
def test_deferred_on_some_ranks_takes_one_path(monkeypatch, which):
    """A deferred operand evaluated on some ranks only: every rank still takes the same path."""
    _fresh_plans(monkeypatch)
    rank, size = world()
    a = ref((50,), seed=20)
    with config.set(fuse=True, fuse_min_size=10):
        x = sp.array(a)
        t = x * 3.0
        m = x > 0.5
        assert is_deferred(t) and is_deferred(m)
        if rank % 2 == which:
            t.local  # noqa: B018 - evaluated here only
            m.local  # noqa: B018
        assert_eq(m.sum(), (a > 0.5).sum(), exact=True)
        with config.set(fuse_min_size=10**6):
            for _ in range(2):
                assert_eq(t + 1.0, a * 3.0 + 1.0, exact=True)
                assert_eq(t.max(), (a * 3.0).max(), exact=True)


def test_replicated_small_arrays(monkeypatch):
    """Replicated operands (below ``config.replicate_below``) take the whole-array lane
    (NumPy's own call, no plan) and send nothing."""
    _fresh_plans(monkeypatch)
    a, b = ref((30,), seed=21), ref((30,), seed=22)
    with config.set(replicate_below=1000, whole_lane=True):
        x, y = sp.array(a), sp.array(b)
        x += 2 * y
        ea = a + 2 * b
        with sp.comm_stats() as s:
            for _ in range(3):
                x += 2 * y
                ea += 2 * b
            z = x * 2.0 - y
            total = x.sum()
        assert (s.messages_sent, s.collectives) == (0, 0)
        # (a device backend has no whole-array lane: the plans take it)
        assert (fastpath.plan_count() == 0) == (not x._st.be.is_device)
        assert_eq(z, ea * 2.0 - b, exact=True)
        assert_eq(total, ea.sum(), exact=True)


def test_blank_storage_is_a_storage():
    """``Storage.blank`` (the fast path's constructor) sets every slot ``Storage()`` sets, alike."""
    from spmdarray.core.element import direct_access
    from spmdarray.core.storage import Storage, _geometry

    for shape in [(7,), (6, 5)]:
        st = sp.ones(shape)._st
        geometry = _geometry(st.layout, st.ctx.rank, 1)
        direct = direct_access(st.layout, st.be, st.dtype, geometry[2])
        new, block = Storage.blank(st.ctx, st.be, st.layout, st.dtype, geometry, direct)
        with config.set(ghost_width=1):
            ref_st = Storage(st.ctx, st.layout, st.dtype)
        for name in Storage.__slots__:
            if name not in ("alloc", "_views", "halo_valid", "flights"):
                assert getattr(new, name) == getattr(ref_st, name), name
        assert new.alloc.shape == ref_st.alloc.shape and new._views.keys() == ref_st._views.keys()
        assert (new.halo_valid, new.flights) == ({}, [])
        if block is not None:
            assert block.shape == tuple(hi - lo for lo, hi in st.layout.block(st.ctx.rank))


def test_ghost_width_change_after_a_plan(monkeypatch):
    _fresh_plans(monkeypatch)
    a = ref((12,), seed=23)
    x = sp.array(a)
    x * 2.0
    with config.set(ghost_width=3):
        z = x * 2.0
        assert z._st.ghost == _ghost_now(z)
        assert_eq(z[3:] + z[:-3], a[3:] * 2.0 + a[:-3] * 2.0, exact=True)


def _ghost_now(z):
    """The ghost widths Storage() gives the layout of ``z`` under the current settings."""
    from spmdarray.core.storage import Storage

    return Storage(z._st.ctx, z._st.layout, z.dtype).ghost
