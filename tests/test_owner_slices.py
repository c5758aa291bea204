"""Owner computes: small results of slices that lie on one rank stay on that rank, against NumPy.

- A small result whose split operands all lie on one rank (every other rank's
  block of the view is empty) is computed there, on that operand's layout
  stretched to the result's shape (``core.placement.stretch``), instead of
  being replicated by a ``Bcast`` of the operand.
- A reduction over such a layout, whose data along the reduced split grid axes
  lies at one coordinate, leaves its result fixed at that coordinate
  (``routines.reduction_axes._lone_layout``): no collective, NumPy's bits.
- Assigning it into a destination held by the same rank moves nothing; into
  one held by another rank the general path sends it.

Run at 1, 2, 3 and 4 ranks::

    mpiexec -n 3 python -m pytest -q tests/test_owner_slices.py
"""

from __future__ import annotations

import numpy
import pytest
from helpers import assert_eq, backend, fuse_everything, ref, world
from spmdarray.decomposition import Layout

import spmdarray as sp
from spmdarray.core.placement import sole_holder, stretch
from spmdarray.engine import fastpath
from spmdarray.routines import reduction_plans
from spmdarray.settings import FIELDS


@pytest.fixture(autouse=True)
def small_replicated():
    """The library's default threshold (the suite splits every array unless told)."""
    with sp.config.set(replicate_below=FIELDS["replicate_below"].default):
        yield


def _counts(fn):
    """(result, messages, collectives) of this rank while running ``fn``."""
    with sp.comm_stats() as st:
        res = fn()
    return res, st.messages_sent, st.collectives


def _rows(n: int, size: int) -> list[int]:
    """Uneven extents of ``n`` rows over ``size`` ranks: the first one row longer than balanced."""
    ext = [n // size + (1 if r < n % size else 0) for r in range(size)]
    if size > 1 and ext[-1] > 1:
        ext[0], ext[-1] = ext[0] + 1, ext[-1] - 1
    return ext


def _split(a: numpy.ndarray, axis: int = 0, even: bool = False):
    """``a`` split along ``axis`` (``from_local``): unevenly (see :func:`_rows`) unless ``even``."""
    rank, size = world()
    n = a.shape[axis]
    ext = [n // size] * size if even else _rows(n, size)
    lo = sum(ext[:rank])
    block = numpy.take(a, numpy.arange(lo, lo + ext[rank]), axis=axis)
    grid = tuple(size if d == axis else 1 for d in range(a.ndim))
    return sp.from_local(backend().asarray(block), grid=grid)


def _conv(xp, inp, w, out_dtype):
    k = w.shape[0]
    n, h, wd, _ = inp.shape
    out = xp.empty((n, h - k + 1, wd - k + 1, w.shape[3]), dtype=out_dtype)
    for i in range(h - k + 1):
        for j in range(wd - k + 1):
            out[:, i, j, :] = xp.sum(
                inp[:, i : i + k, j : j + k, :, xp.newaxis] * w[xp.newaxis, :, :, :], axis=(1, 2, 3)
            )
    return out


@pytest.mark.parametrize("h", [9, 14])
def test_conv_loop_matches_numpy(h):
    # Rows split unevenly along axis 1 (the input's and the output's): windows on one rank and straddling ones.
    inp = ref((3, h, 7, 2), dtype=numpy.float32, seed=1)
    w = ref((3, 3, 2, 4), dtype=numpy.float32, seed=2)
    with sp.config.set(replicate_below=300):  # the window products stay small
        x = _split(inp, axis=1)
        y = sp.asarray(w)
        got = _conv(sp, x, y, sp.float32)
    assert_eq(got, _conv(numpy, inp, w, numpy.float32), exact=True)


def test_one_holder_window_sends_nothing():
    # The window and its destination lie on one rank: no collective, no message, NumPy's bits.
    size = world()[1]
    inp = ref((4, 8 * size, 6, 2), dtype=numpy.float32, seed=3)
    w = ref((3, 3, 2, 5), dtype=numpy.float32, seed=4)
    with sp.config.set(replicate_below=1000):  # (the products, 360 elements, are small)
        x, y = _split(inp, axis=1, even=True), sp.asarray(w)
        out = _split(numpy.zeros((4, 8 * size, 4, 5), dtype=numpy.float32), axis=1, even=True)
        ref_out = numpy.zeros((4, 8 * size, 4, 5), dtype=numpy.float32)
        rows = [8 * r + d for r in range(size) for d in range(6)]  # windows i..i+2 inside rank r's rows

        def loop(xp, x, y, out):
            for i in rows:
                for j in range(4):
                    out[:, i, j, :] = xp.sum(x[:, i : i + 3, j : j + 3, :, None] * y[None], axis=(1, 2, 3))
            return out

        loop(sp, x, y, out)  # (plans and view maps made before counting)
        got, msgs, colls = _counts(lambda: loop(sp, x, y, out))
    assert_eq(got, loop(numpy, inp, w, ref_out), exact=True)
    assert (msgs, colls) == (0, 0)
    # The product takes a cached plan: rank 0 computes the window of rows 0-2, the others nothing.
    plan = fastpath._PLANS.get(fastpath._key(numpy.multiply, (x[:, 0:3, 0:3, :, None], y[None]), None))
    assert plan is not None and plan.owns == (world()[0] == 0 or size == 1)
    if size > 1 and not x._st.be.is_device:  # and so does the sum (host blocks)
        key = next(k for k in reduction_plans._LONE if k[0] == "sum" and k[5] == (1, 2, 3))
        assert reduction_plans._LONE[key] is not None


def test_stretched_layout_keeps_the_holder():
    lay = Layout.from_extents(((3,), (5, 0), (4,)))  # axis 1: all on the first grid coordinate
    assert sole_holder(lay) == 0
    assert sole_holder(Layout.from_extents(((3,), (2, 3), (4,)))) is None
    assert sole_holder(Layout.replicated((3, 4), 2)) is None
    one = Layout.from_extents(((3,), (1, 0), (4,)))
    st = stretch(one, (2, 3, 6, 4))  # a new leading axis, and a length-1 split axis made whole
    assert st.shape == (2, 3, 6, 4)
    assert [st.owned_size(r) for r in range(2)] == [2 * 3 * 6 * 4, 0]
    assert st.gfixed[1] == 0 and st.gaxis[1] is None
    st = stretch(lay, (2, 3, 5, 4))
    assert st.gaxis == (1, 2, 3) and st.intervals[2] == ((0, 5), (5, 5))


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize(
    "name, axis",
    [("sum", (1, 2)), ("max", 1), ("min", (0, 1, 3)), ("mean", (1, 3)), ("prod", 2), ("var", (1, 2)), ("std", 1)],
)
def test_reductions_of_one_holder_windows(name, axis, keepdims):
    a = ref((3, 12, 5, 2), seed=5)
    size = world()[1]
    x = _split(a, axis=1)
    ext = _rows(12, size)
    lo = sum(ext[:-1])  # the last rank's rows
    for sl in (slice(0, 2), slice(lo, 12), slice(1, 5), slice(0, 12)):  # on one rank, and across ranks
        got, msgs, colls = _counts(lambda sl=sl: getattr(sp, name)(x[:, sl], axis=axis, keepdims=keepdims))
        inside = sole_holder(x[:, sl]._layout) is not None
        # NumPy's bits where one rank reduces all the data (var and std: two passes, the mean broadcast back).
        exact = (inside or size == 1) and name not in ("var", "std")
        assert_eq(got, getattr(numpy, name)(a[:, sl], axis=axis, keepdims=keepdims), exact=exact)
        if inside and size > 1:
            assert (msgs, colls) == (0, 0)
            held = got._layout.owned_size(got.comm.Get_rank())
            assert (held > 0) == (got.comm.Get_rank() == sole_holder(x[:, sl]._layout))


def test_full_reduction_of_a_window_is_a_scalar_everywhere():
    a = ref((10, 4), seed=6)
    x = _split(a)
    got = sp.sum(x[0:1, :], axis=(0, 1))
    assert_eq(got, numpy.sum(a[0:1, :], axis=(0, 1)), exact=True)
    assert not isinstance(got, sp.ndarray)
    assert_eq(x[1:2].max(keepdims=True), a[1:2].max(keepdims=True), exact=True)


@pytest.mark.parametrize("fused", [True, False])  # (fused first: the plans are made for deferred operands)
def test_chain_of_one_holder_results(fused, monkeypatch):
    if fused:  # the products are deferred: the reductions evaluate them on the holder
        fuse_everything(monkeypatch, "numpy")
    a = ref((4, 16, 6), seed=7)
    v = ref((6, 3), seed=8)
    x = _split(a.transpose(1, 0, 2).copy())  # rows split along axis 0
    an = a.transpose(1, 0, 2)
    with sp.config.set(replicate_below=1000):
        y = sp.asarray(v)

        def chain(xp, x, y):
            p = (x * 1.0)[1:3, :, :, None] * y[None, None]  # (2, 4, 6, 3) on the first rank (deferred when fused)
            q = xp.max(p, axis=(0, 2)) + 1.0  # (4, 3)
            r = q * q - xp.sum(p, axis=0).mean(axis=1)
            return r, xp.abs(r).max(axis=0, keepdims=True)

        (r, m), msgs, colls = _counts(lambda: chain(sp, x, y))
    rn, mn = chain(numpy, an, v)
    assert_eq(r, rn, exact=True)
    assert_eq(m, mn, exact=True)
    if world()[1] > 1:
        assert colls == 0 and msgs == 0
        assert r._layout.owned_size(r.comm.Get_rank()) == (r.shape[0] * r.shape[1] if r.comm.Get_rank() == 0 else 0)


def test_assignment_into_same_and_other_rank():
    size = world()[1]
    a = ref((4 * size + 3, 5), seed=9)
    x = _split(a)
    dst = _split(numpy.zeros_like(a))
    dn = numpy.zeros_like(a)
    last = a.shape[0] - 1

    def same(xp, x, d):
        d[0, :] = xp.sum(x[0:2, :, None] * numpy.arange(3.0), axis=(0, 2))  # the first rank's rows into its own row
        return d

    got, msgs, colls = _counts(lambda: same(sp, x, dst))
    assert_eq(got, same(numpy, a, dn), exact=True)
    if size > 1:
        assert (msgs, colls) == (0, 0)

    def other(xp, x, d):
        d[last, :] = xp.sum(x[0:2, :, None] * numpy.arange(3.0), axis=(0, 2))  # into the last rank's row
        d[1:3, :] = xp.max(x[last - 1 : last + 1, :, None], axis=2)  # and back
        return d

    got, msgs, colls = _counts(lambda: other(sp, x, dst))
    assert_eq(got, other(numpy, a, dn), exact=True)
    if size > 1:
        assert colls == 0
        rank = x.comm.Get_rank()
        assert msgs == (1 if rank in (0, size - 1) else 0)


def test_copies_are_still_read_whole():
    # A row every rank already holds a copy of (after an element read of it) is read from the copy.
    a = ref((8, 300), seed=10)
    x = _split(a)
    float(x[1, 3])  # gathers row 1 onto every rank
    got, msgs, colls = _counts(lambda: x[1, :] * numpy.ones((2, 300)))
    assert_eq(got, a[1, :] * numpy.ones((2, 300)), exact=True)
    if world()[1] > 1:
        assert (msgs, colls) == (0, 0)
        assert got._layout.owned_size(got.comm.Get_rank()) == got.size  # replicated


def test_out_and_errstate_with_one_holder_reductions():
    a = ref((3, 12, 5), seed=5)
    x = _split(a, axis=1)
    o = sp.zeros((3, 5))  # replicated: every rank receives the holder's result
    assert sp.sum(x[:, 0:2], axis=1, out=o) is o
    assert_eq(o, a[:, 0:2].sum(axis=1), exact=True)
    o2 = _split(numpy.zeros((3, 12, 5)), axis=1)
    sp.max(x[:, 0:2], axis=1, keepdims=True, out=o2[:, 11:12])  # into the last rank's rows
    e = numpy.zeros((3, 12, 5))
    e[:, 11:12] = a[:, 0:2].max(axis=1, keepdims=True)
    assert_eq(o2, e, exact=True)
    with numpy.errstate(all="raise"):  # every rank joins the agreement, the idle ones too
        assert_eq(sp.mean(x[:, 0:2], axis=(1, 2)), a[:, 0:2].mean(axis=(1, 2)), exact=True)
    big = numpy.full((3, 12, 5), 1e308)
    y = _split(big, axis=1)
    for xp, v in ((numpy, big), (sp, y)):  # the holder's sum overflows: every rank raises NumPy's error
        with pytest.raises(FloatingPointError), numpy.errstate(all="raise"):
            xp.sum(v[:, 0:2], axis=1)
