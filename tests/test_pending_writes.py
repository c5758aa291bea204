"""Pending writes: a fused assignment that waits for messages is computed when its destination is next used.

Consecutive statements that do not read each other's results wait once for all
their halos (``comm_stats().waits``); every way of touching a destination,
its value or an operand gives NumPy's result.
"""

from __future__ import annotations

import numpy
import pytest
from helpers import assert_eq, world

import spmdarray as sp
from spmdarray.settings import config

SHAPES = [(37, 23), (9, 40)]


def _split(**kw):
    return config.set(fuse=True, fuse_min_size=8, replicate_below=0, **kw)


def _two(xp, a, b, x, y):
    """Two statements, each reading a neighbour row of another array: independent."""
    x[1:-1, :] = a[2:, :] + a[:-2, :]
    y[1:-1, :] = 0.5 * (b[2:, :] - b[:-2, :])


@pytest.mark.parametrize("defer", [True, False])
def test_independent_statements_wait_once(defer):
    if sp.empty(1)._st.be.is_device:
        pytest.skip("pending writes are host-only: waits differ on a device")
    rank, size = world()
    rng = numpy.random.default_rng(0)
    a0, b0 = rng.random((41, 29)), rng.random((41, 29))
    x0, y0 = numpy.zeros_like(a0), numpy.zeros_like(a0)
    with _split(fuse_defer_writes=defer):
        a, b, x, y = (sp.array(v) for v in (a0, b0, x0, y0))
        _two(sp, a, b, x, y)
        sp.sync()
        with sp.comm_stats() as s:
            a *= 2.0  # fresh halos
            b *= 2.0
            _two(sp, a, b, x, y)
            sp.sync()
        t = x[0, 0] + y[0, 0]
    _two(numpy, a0, b0, x0, y0)
    a0 *= 2.0
    b0 *= 2.0
    _two(numpy, a0, b0, x0, y0)
    assert t == x0[0, 0] + y0[0, 0]
    assert_eq(x, x0, exact=True)
    assert_eq(y, y0, exact=True)
    if size == 2:
        assert a.layout.dims == (2, 1)
        assert s.waits == (1 if defer else 2), s.waits


def _chained(xp, a, b):
    for _ in range(3):
        b[1:-1, 1:-1] = 0.25 * (a[2:, 1:-1] + a[:-2, 1:-1] + a[1:-1, 2:] + a[1:-1, :-2])
        a[1:-1, 1:-1] = 0.25 * (b[2:, 1:-1] + b[:-2, 1:-1] + b[1:-1, 2:] + b[1:-1, :-2])


def _overlapping(xp, a, x):
    x[1:-1, :] = a[2:, :] + a[:-2, :]
    x[1:-1, 1:] = a[2:, :-1] * a[:-2, 1:]
    x[:-2, :] = a[2:, :] - a[1:-1, :]
    return x.sum()


def _in_place_then_overwritten(xp, a, b):
    b[1:-1, :] = a[2:, :] - a[:-2, :]  # pending
    t = b[1:-1, :] * 3.0 + a[2:, :]  # reads b's pending block in place, a's halo
    b[...] = 0.0  # t must still see the first write, not this one
    c = a + 1.0
    b[1:-1, :] = c[2:, :] - c[:-2, :]  # pending again (not reading a)
    a[1:-1, :] = b[1:-1, :] * 2.0 + a[1:-1, :]  # reads b in place and its own destination
    return t.sum()


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(
    "body",
    [_chained, _overlapping, _in_place_then_overwritten],
    ids=[
        "a statement fetches the pending result of the one before",
        "overlapping writes keep their order",
        "a pending result read in place, then overwritten",
    ],
)
def test_pending_results_as_numpy(shape, body):
    rng = numpy.random.default_rng(1)
    a0, b0 = rng.random(shape), numpy.zeros(shape)
    with _split():
        a, b = sp.array(a0), sp.array(b0)
        res = body(sp, a, b)
    ref = body(numpy, a0, b0)
    assert_eq(a, a0, exact=True)
    assert_eq(b, b0, exact=True)
    if ref is not None:
        numpy.testing.assert_allclose(res, ref, rtol=1e-12)


@pytest.mark.parametrize("shape", SHAPES)
def test_value_named_and_changed_after_the_assignment(shape):
    """``t = expr; x[...] = t; t += 1``: ``x`` holds ``expr``, not ``expr + 1``."""
    a0 = numpy.random.default_rng(3).random(shape)
    x0 = numpy.zeros_like(a0)
    with _split():
        a, x = sp.array(a0), sp.array(x0)
        t = a[2:, :] + a[:-2, :]
        x[1:-1, :] = t
        t += 1.0
        u = a[2:, :] * 3.0
        x[:-2, :] *= 0.0
        x[:-2, :] += u  # an in-place statement reading its pending destination
        a[...] = 0.0  # a write to the operand after the assignment was recorded
    tr = a0[2:, :] + a0[:-2, :]
    x0[1:-1, :] = tr
    x0[:-2, :] *= 0.0
    x0[:-2, :] += a0[2:, :] * 3.0
    assert_eq(x, x0, exact=True)
    assert_eq(t, tr + 1.0, exact=True)
    assert_eq(a, numpy.zeros_like(a0), exact=True)


@pytest.mark.parametrize("shape", SHAPES)
def test_every_read_of_a_pending_destination(shape):
    """Element reads, ``.local``, slices, reductions, NumPy conversion and views see the write."""
    rank, size = world()
    a0 = numpy.random.default_rng(4).random(shape)
    with _split():
        a = sp.array(a0)
        ref = numpy.zeros_like(a0)
        ref[1:-1, :] = a0[2:, :] - a0[:-2, :]
        outs = []
        for read in (
            lambda x: x[shape[0] // 2, 3],
            lambda x: x.local.sum() if size == 1 else None,
            lambda x: numpy.asarray(x[1:-1, 2]),
            lambda x: x.max(),
            lambda x: numpy.asarray(x),
            lambda x: numpy.asarray(x.T[3]),
        ):
            x = sp.zeros_like(a)
            x[1:-1, :] = a[2:, :] - a[:-2, :]
            outs.append(read(x))
        assert outs[0] == ref[shape[0] // 2, 3]
        if size == 1:
            assert outs[1] == ref.sum()
        numpy.testing.assert_array_equal(outs[2], ref[1:-1, 2])
        assert outs[3] == ref.max()
        numpy.testing.assert_array_equal(outs[4], ref)
        numpy.testing.assert_array_equal(outs[5], ref.T[3])


def test_local_block_is_never_left_pending():
    """An array whose block the program holds (``x.local``) is written at once."""
    rank, size = world()
    a0 = numpy.random.default_rng(5).random((30, 12))
    with _split():
        a, x = sp.array(a0), sp.zeros((30, 12))
        loc = x.local
        x[1:-1, :] = a[2:, :] + a[:-2, :]
        ref = numpy.zeros_like(a0)
        ref[1:-1, :] = a0[2:, :] + a0[:-2, :]
        box = tuple(slice(lo, hi) for lo, hi in x.layout.block(rank))
        numpy.testing.assert_array_equal(loc, ref[box])


def test_dropped_destination_is_written_by_sync():
    a0 = numpy.random.default_rng(6).random((33, 10))
    with _split():
        a = sp.array(a0)
        x = sp.zeros_like(a)
        v = x[1:-1, :]
        v[...] = a[2:, :] * a[:-2, :]
        del v
        sp.sync()
        ref = numpy.zeros_like(a0)
        ref[1:-1, :] = a0[2:, :] * a0[:-2, :]
        assert_eq(x, ref, exact=True)
