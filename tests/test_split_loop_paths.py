"""Loops over slices of split arrays that move nothing, or only halo rows, against NumPy.

- Assignments ``y[:, j] = expr`` whose value lies where the destination does (a
  result computed on the slice's own layout, a replicated array, a number) copy
  each rank's own part through a cached plan (``engine.fastpath.fast_assign``):
  no message, no collective, NumPy's result and errors.
- An array one element longer along an axis (a staggered grid, ``w`` of shape
  ``(n + 1, m, k)`` next to ``(n, m, k)`` arrays) is split along the same axis
  (``decomposition.process_grid``), and its shifted slabs ``w[1:, :, k]`` and
  ``w[:-1, :, k]`` anchor small results where they live
  (``core.placement._loop_slice``): each step exchanges one halo row instead
  of redistributing or gathering.
- An operation whose operand holds each rank's block of the result without
  having its layout (a replicated vector, or one split as a column is) takes
  the cached plan too, and pure functions on replicated arrays with plain
  keywords (``np.sum(x, axis=(1, 2, 3))``) are NumPy's call on the copies.

Every test runs with the default ``replicate_below`` and with every array split.
Run at 1, 2, 3 and 4 ranks::

    mpiexec -n 3 python -m pytest -q tests/test_split_loop_paths.py
"""

from __future__ import annotations

import numpy
import pytest
from helpers import assert_eq, ref
from spmdarray.decomposition import process_grid

import spmdarray as sp
from spmdarray.engine import dispatch, fastpath
from spmdarray.settings import FIELDS

DEFAULT = FIELDS["replicate_below"].default


@pytest.fixture(autouse=True, params=[DEFAULT, 0], ids=["small-replicated", "all-split"])
def below(request):
    """Every test with the default threshold (small results replicated) and with every array split."""
    with sp.config.set(replicate_below=request.param):
        yield request.param


def _counts(fn):
    """(result, messages, collectives) of this rank while running ``fn``."""
    with sp.comm_stats() as st:
        res = fn()
    return res, st.messages_sent, st.collectives


def _size() -> int:
    return sp.arange(1.0).comm.Get_size()


def _recurrence(xp, img):
    # deriche's column and row sweeps: slices of row-split arrays, results of their shape.
    y = xp.empty_like(img)
    y[:, 0] = 0.5 * img[:, 0]
    y[:, 1] = 0.5 * img[:, 1] + 0.25 * img[:, 0]
    for j in range(2, img.shape[1]):
        y[:, j] = 0.5 * img[:, j] + 0.25 * img[:, j - 1] - 0.125 * y[:, j - 1] + 0.0625 * y[:, j - 2]
    z = xp.empty_like(img)
    z[0, :] = 0.5 * y[0, :]
    z[1, :] = 0.0
    for i in range(2, img.shape[0]):
        z[i, :] = 0.5 * y[i, :] - 0.25 * z[i - 1, :]
    return z


@pytest.mark.parametrize("shape", [(2800, 130), (1201, 257)])
def test_row_and_column_recurrences_match_numpy(shape):
    a = ref(shape, seed=3)
    x = sp.asarray(a)
    # (A device allocation of a large block agrees with one all-reduce: not what is counted here.)
    with sp.config.set(agree_allocation_bytes=None):
        got, msgs, colls = _counts(lambda: _recurrence(sp, x))
    assert_eq(got, _recurrence(numpy, a.copy()))
    assert colls == 0
    if _size() == 1:
        assert msgs == 0


def test_slice_assignments_move_nothing():
    a = ref((2400, 120), seed=1)
    x, y = sp.asarray(a), sp.zeros((2400, 120))
    yn = numpy.zeros((2400, 120))
    small = ref((2400,), seed=2)  # replicated (small): each rank copies its rows of it
    s = sp.asarray(small)
    x[:, 0]  # the view maps are cached before counting

    def sweep(xp, x, y, s):
        for j in range(1, 120):
            y[:, j] = 2.0 * x[:, j - 1]  # a result on the column's layout
            y[j, :] = x[j, :] - 1.0  # a row: its owner's
        y[:, 0] = s  # a replicated array
        y[:, 5] = 7  # numbers
        y[3, :] = numpy.float32(0.5)
        y[:, 6] = True
        return y

    fastpath._ASSIGNS.clear()
    got, msgs, colls = _counts(lambda: sweep(sp, x, y, s))
    assert (msgs, colls) == (0, 0)
    assert_eq(got, sweep(numpy, a, yn, small))
    if _size() > 1 and not x._st.be.is_device:  # (one rank: the lane; device blocks: no host plans)
        assert fastpath._ASSIGNS and all(p is not None for p in fastpath._ASSIGNS.values())


@pytest.mark.parametrize(
    "dst_dtype, value",
    [
        (numpy.int64, 2.75),  # a Python float into integers: NumPy truncates (the general path)
        (numpy.float32, 1e300),  # overflows to inf
        (numpy.int8, 127),
        (numpy.uint8, True),
        (numpy.complex128, 1.5j),
        (numpy.float64, numpy.int16(-3)),
        (numpy.int32, numpy.float64(2.5)),  # a cast across kinds (the general path)
    ],
)
def test_scalar_assignments_cast_as_numpy(dst_dtype, value):
    shape = (1200, 250)
    yn = numpy.zeros(shape, dst_dtype)
    y = sp.zeros(shape, dst_dtype)
    with numpy.errstate(over="ignore"):
        yn[:, 3] = value
        yn[7, :] = value
        y[:, 3] = value
        y[7, :] = value
    assert_eq(y, yn)


@pytest.mark.parametrize("value", [128, -1, -129])
def test_out_of_range_python_int_raises_as_numpy(value):
    y = sp.zeros((1200, 250), numpy.uint8 if value == -1 else numpy.int8)
    yn = numpy.zeros((1200, 250), y.dtype)
    with pytest.raises(OverflowError) as want:
        yn[:, 3] = value
    with pytest.raises(OverflowError) as got:
        y[:, 3] = value
    assert str(got.value) == str(want.value)
    y[:, 3] = 5  # a fitting value of another bit length still takes the plan
    assert_eq(y[:, 3], numpy.full(1200, 5, y.dtype))


def test_nan_into_integers_raises_on_every_rank():
    y = sp.zeros((1200, 250), numpy.int64)
    with pytest.raises(ValueError, match="NaN"):
        y[:, 3] = float("nan")


def test_array_casts_and_overflow_errors():
    shape = (1600, 200)
    a = ref(shape, seed=4) * 1e300
    x = sp.asarray(a)
    y, yn = sp.zeros(shape, numpy.float32), numpy.zeros(shape, numpy.float32)
    with numpy.errstate(over="ignore"):
        y[:, 2] = x[:, 2] * 10.0
        yn[:, 2] = a[:, 2] * 10.0
    assert_eq(y, yn)
    with numpy.errstate(over="raise"), pytest.raises(FloatingPointError):
        y[:, 3] = x[:, 3] * 10.0  # agreed by every rank, also those whose rows fit
    i = sp.zeros(shape, numpy.int64)
    i[:, 4] = x[:, 4] > 0.5e300  # bools into integers
    assert_eq(i[:, 4], (a[:, 4] > 0.5e300).astype(numpy.int64))


def test_overlapping_assignments_copy_first():
    a = ref((2000, 140), seed=5)
    x, xn = sp.asarray(a), a.copy()
    for j in range(1, 140):
        x[1:, j] = x[:-1, j]  # the same storage: as if the value were copied first
        xn[1:, j] = xn[:-1, j]
    x[:, 0] = x.real[:, 1]
    xn[:, 0] = xn.real[:, 1]
    assert_eq(x, xn)


def test_assignment_plans_are_cached():
    x = sp.zeros((2000, 140))
    fastpath._ASSIGNS.clear()
    with sp.config.set(whole_lane=False):  # on one rank too
        for j in range(140):
            x[:, j] = 1.5
    assert_eq(x, numpy.full((2000, 140), 1.5))
    if x._st.be.is_device:  # (the assignment plans are for host blocks)
        return
    assert len(fastpath._ASSIGNS) == 140  # one view map per column, one plan each
    assert all(p is not None for p in fastpath._ASSIGNS.values())


@pytest.mark.parametrize(
    "shape, nprocs, expected",
    [
        ((61, 60, 40), 2, (2, 1, 1)),
        ((60, 60, 40), 2, (2, 1, 1)),
        ((61, 60, 40), 4, (2, 2, 1)),
        ((401, 200), 2, (2, 1)),
        ((31, 1000), 2, (1, 2)),  # splitting 31 rows would cost far more than rounding
    ],
)
def test_staggered_shapes_share_the_grid(shape, nprocs, expected):
    assert process_grid(shape, nprocs) == expected


def _staggered(xp, w, c, u):
    out = xp.zeros(c.shape[:2])
    for k in range(1, c.shape[2] - 1):
        g = 0.25 * (w[1:, :, k] + w[:-1, :, k])
        c[:, :, k] = g * 0.5 - c[:, :, k - 1]
        out = out + (u[:, :, k] - u[:, :, k - 1]) * g
    return out


def test_staggered_slabs_exchange_halo_rows(below):
    n, m, kk = 120, 60, 40
    wn, cn, un = ref((n + 1, m, kk), seed=6), ref((n, m, kk), seed=7), ref((n, m, kk), seed=8)
    w, c, u = sp.asarray(wn), sp.asarray(cn), sp.asarray(un)
    got, msgs, colls = _counts(lambda: _staggered(sp, w, c, u))
    assert_eq(got, _staggered(numpy, wn, cn, un), rtol=1e-12)
    assert_eq(c, cn)
    size = _size()
    comm = w.comm
    total = comm.allreduce(msgs)
    # Every result stays where the slabs live: no gather of w's slabs (one collective
    # per step had the result been replicated), and one halo row of w per slab crosses
    # each inner boundary of the row split.
    assert colls == 0
    assert total == (size - 1) * (kk - 2) if size <= 3 else total <= 2 * (size - 1) * (kk - 2)


def test_slices_with_replicated_operands_take_plans():
    a, v = ref((2400, 120), seed=9), ref((2400,), seed=10)
    x, vs = sp.asarray(a), sp.asarray(v)
    with sp.config.set(replicate_below=DEFAULT):
        small = sp.asarray(v)  # replicated: each rank reads its rows of its own copy

    def loop(xp, x, v, small):
        acc = 0.0 * x[:, 0]
        for k in range(1, 120, 7):
            acc = acc + x[:, k] * v - numpy.float64(0.5) * (small * x[:, k - 1])
        return acc

    fastpath.clear_plans()
    with sp.config.set(whole_lane=False):  # the engine's path on one rank too
        got, msgs, colls = _counts(lambda: loop(sp, x, vs, small))
    assert (msgs, colls) == (0, 0)
    assert_eq(got, loop(numpy, a, v, v))
    if x._st.be.is_device:  # (the operation plans are for host blocks)
        return
    multiplies = [p for k, p in fastpath._PLANS.items() if k[0] is numpy.multiply]
    assert multiplies and all(p is not None for p in multiplies)


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("sum", {"axis": (1, 2, 3)}),
        ("sum", {"axis": 0, "keepdims": True}),
        ("mean", {"axis": (0, 2)}),
        ("max", {"axis": -1}),
        ("std", {"axis": 1, "ddof": 1}),
        ("cumsum", {"axis": 2}),
    ],
)
def test_keyword_reductions_of_replicated_arrays(name, kwargs, monkeypatch):
    a = ref((4, 3, 2, 5), seed=11)
    dispatched = []
    real = dispatch.call_on_replicas
    monkeypatch.setattr(dispatch, "call_on_replicas", lambda *c: dispatched.append(c) or real(*c))
    with sp.config.set(replicate_below=DEFAULT):
        x = sp.asarray(a)
        got, msgs, colls = _counts(lambda: getattr(sp, name)(x, **kwargs))
    assert (msgs, colls) == (0, 0)  # NumPy's own call on each rank's copy
    if not x._st.be.is_device:  # (device copies take the registered implementations)
        assert not dispatched  # without the __array_function__ protocol
    assert_eq(got, getattr(numpy, name)(a, **kwargs))


def test_keyword_calls_on_replicas_raise_as_numpy():
    a = ref((4, 3), seed=12)
    with sp.config.set(replicate_below=DEFAULT):
        x = sp.asarray(a)
        with pytest.raises(numpy.exceptions.AxisError) as got:
            sp.sum(x, axis=(0, 5))
    with pytest.raises(numpy.exceptions.AxisError) as want:
        numpy.sum(a, axis=(0, 5))
    assert str(got.value) == str(want.value)
    out = sp.zeros(3)
    assert_eq(sp.sum(x, axis=0, out=out), a.sum(axis=0))  # out= takes the registered implementation
    assert_eq(out, a.sum(axis=0))


def test_row_loop_plans_are_made_once_per_block_of_rows(monkeypatch):
    """``y[i, :] = a * x[i, :] + b * y[i - 1, :]`` over the rows of a split matrix: the
    rows of one rank's block share their plans (one view layout), so the plans are made
    about once per block and operator, not once per row; NumPy's results."""
    a = ref((37, 23))
    x = sp.array(a)
    y = sp.zeros_like(x)
    e = numpy.zeros_like(a)
    made = []
    real = fastpath.plan_for
    monkeypatch.setattr(fastpath, "plan_for", lambda *args: made.append(1) or real(*args))
    fastpath.clear_plans()
    for i in range(1, 37):
        y[i, :] = 0.5 * x[i, :] + 0.25 * y[i - 1, :] - x[i - 1, :]
        e[i, :] = 0.5 * a[i, :] + 0.25 * e[i - 1, :] - a[i - 1, :]
    assert_eq(y, e)
    nblocks = len({iv for iv in x._layout.intervals[0] or [(0, 37)]})
    # (4 operators; a block boundary adds the plans of rows whose previous row lies
    # in the block before; replicated arrays never reach the plans)
    assert len(made) <= 3 * 4 * nblocks, (len(made), nblocks)
