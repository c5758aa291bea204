"""Axis views (swapaxes, moveaxis, squeeze, expand_dims, flip, rot90) and scans
(cumsum, cumprod, nancumsum, diff, ediff1d, gradient) against NumPy.

Uneven shapes, empty and length-1 axes, negative steps and 0-d inputs; the
views must alias the array, and the scans must match at every rank count.
"""

from __future__ import annotations

import numpy
import pytest
from helpers import assert_eq, ref

import spmdarray as sp

SHAPES = [(7,), (5, 6), (3, 4, 5), (1, 7, 1), (4, 0, 3), (9, 2)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_axis_views_match_numpy_and_alias(shape):
    a = ref(shape)
    x = sp.array(a)
    nd = len(shape)
    for i in range(-nd, nd):
        for j in range(nd):
            assert_eq(numpy.swapaxes(x, i, j), numpy.swapaxes(a, i, j), exact=True)
    assert_eq(numpy.moveaxis(x, 0, -1), numpy.moveaxis(a, 0, -1), exact=True)
    if nd >= 2:
        assert_eq(numpy.moveaxis(x, (0, 1), (-1, 0)), numpy.moveaxis(a, (0, 1), (-1, 0)), exact=True)
        assert_eq(numpy.fliplr(x), numpy.fliplr(a), exact=True)
        for k in range(-1, 5):
            assert_eq(numpy.rot90(x, k), numpy.rot90(a, k), exact=True)
            assert_eq(numpy.rot90(x, k, axes=(1, 0)), numpy.rot90(a, k, axes=(1, 0)), exact=True)
    assert_eq(numpy.squeeze(x), numpy.squeeze(a), exact=True)
    assert_eq(x.squeeze(), a.squeeze(), exact=True)
    assert_eq(numpy.expand_dims(x, 0), numpy.expand_dims(a, 0), exact=True)
    assert_eq(numpy.expand_dims(x, (0, -1)), numpy.expand_dims(a, (0, -1)), exact=True)
    assert_eq(numpy.flip(x), numpy.flip(a), exact=True)
    assert_eq(numpy.flip(x, -1), numpy.flip(a, -1), exact=True)
    assert_eq(numpy.flipud(x), numpy.flipud(a), exact=True)
    assert_eq(sp.flip(x[::-2], 0), numpy.flip(a[::-2], 0), exact=True)
    # Views: writing through them changes the array, as in NumPy.
    v, w = numpy.flip(x, 0), numpy.flip(a, 0)
    v[...] = 3.0
    w[...] = 3.0
    assert_eq(x, a, exact=True)
    s, t = numpy.moveaxis(x, 0, -1), numpy.moveaxis(a, 0, -1)
    s *= 2.0
    t *= 2.0
    assert_eq(x, a, exact=True)


def test_axis_view_errors_are_numpys():
    x = sp.array(ref((3, 1, 4)))
    a = ref((3, 1, 4))
    for call in (
        lambda m: numpy.swapaxes(m, 0, 3),
        lambda m: numpy.moveaxis(m, 0, 5),
        lambda m: numpy.moveaxis(m, (0, 1), (2,)),
        lambda m: numpy.squeeze(m, 0),
        lambda m: numpy.expand_dims(m, 5),
        lambda m: numpy.flip(m, 3),
        lambda m: numpy.rot90(m, 1, (0, 0)),
        lambda m: numpy.rot90(m, 1, (0,)),
        lambda m: numpy.rot90(m, 1, (0, 4)),
        lambda m: numpy.fliplr(m[:, 0, 0]),
    ):
        with pytest.raises(Exception) as want:
            call(a)
        with pytest.raises(type(want.value)) as got:
            call(x)
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.int8, numpy.int32, numpy.uint16, numpy.bool_, numpy.complex128])
def test_cumsum_cumprod_match_numpy(dtype):
    a = ref((11, 6), dtype)
    if numpy.dtype(dtype).kind in "iu":
        a = a % 3 + 1  # keep products in range
    x = sp.array(a)
    for axis in (None, 0, 1, -1):
        assert_eq(numpy.cumsum(x, axis=axis), numpy.cumsum(a, axis=axis), rtol=1e-13)
        assert_eq(x.cumprod(axis=axis), a.cumprod(axis=axis), rtol=1e-13)
    assert_eq(numpy.cumsum(x, axis=0, dtype=numpy.float32), numpy.cumsum(a, axis=0, dtype=numpy.float32), rtol=1e-6)
    assert_eq(numpy.cumsum(x[::-1, 1:], axis=0), numpy.cumsum(a[::-1, 1:], axis=0), rtol=1e-13)
    out = sp.zeros((11, 6), numpy.complex128)
    assert numpy.cumsum(x, axis=1, out=out) is out
    assert_eq(out, numpy.cumsum(a, axis=1).astype(numpy.complex128), rtol=1e-13)


def test_scans_of_0d_empty_and_nan():
    assert_eq(numpy.cumsum(sp.array(2.5)), numpy.cumsum(numpy.array(2.5)))
    assert_eq(numpy.cumsum(sp.zeros((0, 3)), axis=0), numpy.cumsum(numpy.zeros((0, 3)), axis=0))
    a = ref((9, 4))
    a[2, 1] = a[7, 3] = a[0, 0] = numpy.nan
    x = sp.array(a)
    for axis in (None, 0, 1):
        assert_eq(numpy.nancumsum(x, axis=axis), numpy.nancumsum(a, axis=axis), rtol=1e-13)
        assert_eq(numpy.nancumprod(x, axis=axis), numpy.nancumprod(a, axis=axis), rtol=1e-13)
        assert_eq(numpy.cumsum(x, axis=axis), numpy.cumsum(a, axis=axis), rtol=1e-13)
    i = ref((5, 3), numpy.int16)
    assert_eq(numpy.nancumsum(sp.array(i), axis=0), numpy.nancumsum(i, axis=0))


@pytest.mark.parametrize("shape", [(13,), (6, 7), (3, 4, 5), (2, 9)], ids=str)
def test_diff_and_ediff1d_match_numpy(shape):
    a = ref(shape)
    x = sp.array(a)
    for axis in range(-len(shape), len(shape)):
        for n in range(0, min(4, shape[axis] + 2)):
            assert_eq(numpy.diff(x, n=n, axis=axis), numpy.diff(a, n=n, axis=axis), exact=True)
    assert_eq(numpy.diff(x[::-1]), numpy.diff(a[::-1]), exact=True)
    b = a > 0
    assert_eq(numpy.diff(sp.array(b)), numpy.diff(b), exact=True)
    i = ref(shape, numpy.int32)
    assert_eq(numpy.diff(sp.array(i), 2), numpy.diff(i, 2), exact=True)
    assert_eq(numpy.ediff1d(x), numpy.ediff1d(a), exact=True)
    with pytest.raises(ValueError, match="order must be non-negative but got -1"):
        numpy.diff(x, -1)
    with pytest.raises(ValueError, match="at least one dimensional"):
        numpy.diff(sp.array(1.0))
    assert_eq(numpy.diff(x, prepend=0.5), numpy.diff(a, prepend=0.5), exact=True)
    assert_eq(numpy.diff(x, n=2, axis=0, append=x[:1]), numpy.diff(a, n=2, axis=0, append=a[:1]), exact=True)
    assert_eq(
        numpy.diff(x, prepend=a[..., :2], append=x[..., -1:]), numpy.diff(a, prepend=a[..., :2], append=a[..., -1:])
    )
    assert_eq(numpy.ediff1d(x, to_begin=[1, 2], to_end=9), numpy.ediff1d(a, to_begin=[1, 2], to_end=9), exact=True)
    assert_eq(numpy.ediff1d(x, to_end=x[:2]), numpy.ediff1d(a, to_end=a[:2]), exact=True)
    with pytest.raises(TypeError, match="dtype of `to_begin` must be compatible"):
        numpy.ediff1d(sp.array(i), to_begin=1.5)


@pytest.mark.parametrize("shape", [(13,), (6, 7), (3, 4, 5), (3, 2)], ids=str)
@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_matches_numpy(shape, edge_order):
    if min(shape) < edge_order + 1:
        pytest.skip("too short for this edge order")
    a = ref(shape)
    x = sp.array(a)
    got, want = numpy.gradient(x, edge_order=edge_order), numpy.gradient(a, edge_order=edge_order)
    if len(shape) == 1:
        got, want = (got,), (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_eq(g, w, exact=True)
    spacing = [0.5 + k for k in range(len(shape))]
    got = numpy.gradient(x, *spacing, edge_order=edge_order)
    want = numpy.gradient(a, *spacing, edge_order=edge_order)
    for g, w in zip(got if len(shape) > 1 else (got,), want if len(shape) > 1 else (want,)):
        assert_eq(g, w, exact=True)
    assert_eq(numpy.gradient(x, 2.0, axis=-1), numpy.gradient(a, 2.0, axis=-1), exact=True)
    ai = ref(shape, numpy.int32)
    assert_eq(numpy.gradient(sp.array(ai), axis=0), numpy.gradient(ai, axis=0), exact=True)
    f32 = a.astype(numpy.float32)
    assert_eq(numpy.gradient(sp.array(f32), axis=0), numpy.gradient(f32, axis=0), exact=True)


def test_gradient_errors():
    x = sp.array(ref((2, 5)))
    with pytest.raises(ValueError, match="too small to calculate a numerical gradient"):
        numpy.gradient(x, edge_order=2)
    with pytest.raises(TypeError, match="invalid number of arguments"):
        numpy.gradient(x, 1.0, 2.0, 3.0)
    with pytest.raises(NotImplementedError, match="coordinate arrays"):
        numpy.gradient(x[0], numpy.arange(5.0))


def test_diff_moves_only_edge_cells():
    n = 40
    x = sp.array(ref((n, n)))
    numpy.diff(x, axis=0)  # plans built
    with sp.comm_stats() as s:
        numpy.diff(x, axis=0)
    lay = x.layout
    # Each rank with a lower neighbour along axis 0 receives one row of its block's width.
    rank = x.comm.Get_rank()
    (r0, r1), (c0, c1) = lay.block(rank) if lay.holds(rank) else ((0, 0), (0, 0))
    assert s.collectives == 0
    assert s.bytes_received <= (c1 - c0) * 8


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_more_axis_views(shape):
    a = ref(shape)
    x = sp.array(a)
    nd = len(shape)
    for axis in range(-nd, nd):
        for start in range(-nd, nd + 1):
            assert_eq(numpy.rollaxis(x, axis, start), numpy.rollaxis(a, axis, start), exact=True)
    if nd >= 2:
        assert_eq(numpy.matrix_transpose(x), numpy.matrix_transpose(a), exact=True)
    for fn in (numpy.atleast_1d, numpy.atleast_2d, numpy.atleast_3d):
        assert_eq(fn(x), fn(a), exact=True)
        got, want = fn(x, sp.array(2.0)), fn(a, numpy.array(2.0))
        assert_eq(got[0], want[0], exact=True)
        assert_eq(got[1], want[1], exact=True)
    with pytest.raises(numpy.exceptions.AxisError, match="'start' arg requires"):
        numpy.rollaxis(x, 0, nd + 2)
    with pytest.raises(ValueError, match="at least 2-dimensional"):
        numpy.matrix_transpose(x.ravel())


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.int8, numpy.int64])
def test_cumulative_sum_prod_and_trapezoid(dtype):
    a = ref((10, 4), dtype)
    if numpy.dtype(dtype).kind in "iu":
        a = a % 3 + 1
    x = sp.array(a)
    for axis in (0, 1, -1):
        assert_eq(numpy.cumulative_sum(x, axis=axis), numpy.cumulative_sum(a, axis=axis), rtol=1e-13)
        assert_eq(numpy.cumulative_prod(x, axis=axis), numpy.cumulative_prod(a, axis=axis), rtol=1e-13)
        assert_eq(numpy.trapezoid(x, axis=axis), numpy.trapezoid(a, axis=axis), rtol=1e-13)
        assert_eq(numpy.trapezoid(x, dx=0.25, axis=axis), numpy.trapezoid(a, dx=0.25, axis=axis), rtol=1e-13)
    assert_eq(numpy.cumulative_sum(x[:, 0]), numpy.cumulative_sum(a[:, 0]), rtol=1e-13)
    assert_eq(numpy.cumulative_sum(sp.array(a[0, 0])), numpy.cumulative_sum(a[0, 0]))
    assert_eq(numpy.trapezoid(x[:, 1]), numpy.trapezoid(a[:, 1]), rtol=1e-13)
    with pytest.raises(ValueError, match="``axis`` argument is required"):
        numpy.cumulative_sum(x)


# ------------------------------------------------------------------ joining

JOIN_CASES = [
    [(3, 4), (5, 4), (0, 4), (1, 4)],
    [(7,), (2,), (9,)],
    [(2, 3, 4), (2, 3, 1)],
]


@pytest.mark.parametrize("shapes", JOIN_CASES, ids=str)
def test_concatenate_matches_numpy(shapes):
    parts = [ref(s, seed=k) for k, s in enumerate(shapes)]
    xs = [sp.array(p) for p in parts]
    axis = 2 if len(shapes[0]) == 3 else 0
    assert_eq(numpy.concatenate(xs, axis=axis), numpy.concatenate(parts, axis=axis), exact=True)
    assert_eq(numpy.concatenate(xs, axis=None), numpy.concatenate(parts, axis=None), exact=True)
    # views with negative steps, a NumPy array among the inputs, and dtype promotion
    mixed = [xs[0][::-1], parts[1], sp.array(parts[-1].astype(numpy.float32))]
    want = [parts[0][::-1], parts[1], parts[-1].astype(numpy.float32)]
    assert_eq(numpy.concatenate(mixed, axis=axis), numpy.concatenate(want, axis=axis), exact=True)
    assert_eq(sp.concat(xs, axis=axis), numpy.concat(parts, axis=axis), exact=True)


def test_stack_family_matches_numpy():
    a, b = ref((4, 3)), ref((4, 3), seed=1)
    x, y = sp.array(a), sp.array(b)
    for axis in (0, 1, 2, -1):
        assert_eq(numpy.stack([x, y], axis=axis), numpy.stack([a, b], axis=axis), exact=True)
    assert_eq(numpy.vstack([x, y]), numpy.vstack([a, b]), exact=True)
    assert_eq(numpy.hstack([x, y]), numpy.hstack([a, b]), exact=True)
    assert_eq(numpy.dstack([x, y]), numpy.dstack([a, b]), exact=True)
    u, v = ref((5,)), ref((5,), seed=2)
    xu, xv = sp.array(u), sp.array(v)
    assert_eq(numpy.vstack([xu, xv]), numpy.vstack([u, v]), exact=True)
    assert_eq(numpy.hstack([xu, xv]), numpy.hstack([u, v]), exact=True)
    assert_eq(numpy.column_stack([xu, xv]), numpy.column_stack([u, v]), exact=True)
    assert_eq(numpy.column_stack([x, y[:, 0]]), numpy.column_stack([a, b[:, 0]]), exact=True)
    assert_eq(numpy.stack([x, y], dtype=numpy.float32), numpy.stack([a, b], dtype=numpy.float32), exact=True)


def test_concatenate_errors_and_out():
    a, b = ref((3, 4)), ref((3, 5))
    x, y = sp.array(a), sp.array(b)
    for call in (
        lambda p, q, m: m.concatenate([p, q], axis=0),
        lambda p, q, m: m.concatenate([p, q[0]], axis=1),
        lambda p, q, m: m.concatenate([p, q], axis=2),
        lambda p, q, m: m.stack([p, q]),
        lambda p, q, m: m.concatenate([p, q.astype(numpy.complex128)], axis=1, dtype=numpy.float64),
    ):
        with pytest.raises(Exception) as want:
            call(a, b, numpy)
        with pytest.raises(type(want.value)) as got:
            call(x, y, numpy)
        assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match="zero-dimensional arrays cannot be concatenated"):
        numpy.concatenate([sp.array(1.0), sp.array(2.0)])
    out = sp.zeros((3, 9))
    assert numpy.concatenate([x, y], axis=1, out=out) is out
    assert_eq(out, numpy.concatenate([a, b], axis=1), exact=True)


# ---------------------------------------------------- splitting, roll, where


@pytest.mark.parametrize("shape", [(10, 3), (7,), (4, 6, 5), (0, 3)], ids=str)
def test_split_family_and_roll_match_numpy(shape):
    a = ref(shape)
    x = sp.array(a)
    for sections in (1, 2, 3, 5, [1, 4], [3, 1, 8], []):
        got, want = numpy.array_split(x, sections), numpy.array_split(a, sections)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_eq(g, w, exact=True)
    if shape[0] % 2 == 0:
        for g, w in zip(numpy.split(x, 2), numpy.split(a, 2)):
            assert_eq(g, w, exact=True)
    if shape[0]:  # 10, 7 and 4 rows: 3 sections do not divide them
        with pytest.raises(ValueError, match="does not result in an equal division"):
            numpy.split(x, 3)
    if len(shape) >= 2:
        for g, w in zip(numpy.hsplit(x, [1]), numpy.hsplit(a, [1])):
            assert_eq(g, w, exact=True)
        for g, w in zip(numpy.vsplit(x, [2]), numpy.vsplit(a, [2])):
            assert_eq(g, w, exact=True)
    if len(shape) == 3:
        for g, w in zip(numpy.dsplit(x, [2, 3]), numpy.dsplit(a, [2, 3])):
            assert_eq(g, w, exact=True)
    parts = numpy.array_split(x, 2)
    parts[0][...] = 7.0  # views of x
    numpy.array_split(a, 2)[0][...] = 7.0
    assert_eq(x, a, exact=True)
    for shift in (0, 1, -3, 11, 25):
        assert_eq(numpy.roll(x, shift), numpy.roll(a, shift), exact=True)
        assert_eq(numpy.roll(x, shift, axis=0), numpy.roll(a, shift, axis=0), exact=True)
    if len(shape) >= 2:
        assert_eq(numpy.roll(x, (1, -2), (0, 1)), numpy.roll(a, (1, -2), (0, 1)), exact=True)
        assert_eq(numpy.roll(x, 2, (1, 1)), numpy.roll(a, 2, (1, 1)), exact=True)
    r = numpy.roll(x, 0)
    r[...] = 0.0  # roll returns a copy
    assert_eq(x, a, exact=True)


def test_where_count_nonzero_ptp_match_numpy():
    a, b = ref((9, 5)), ref((9, 5), seed=1)
    x, y = sp.array(a), sp.array(b)
    c = a > 0
    assert_eq(numpy.where(sp.array(c), x, y), numpy.where(c, a, b), exact=True)
    assert_eq(numpy.where(x > 0, x, 0.0), numpy.where(a > 0, a, 0.0), exact=True)
    assert_eq(numpy.where(x[:, :1] > 0, 1, y), numpy.where(a[:, :1] > 0, 1, b), exact=True)
    i = ref((9, 5), numpy.int16)
    assert_eq(numpy.where(sp.array(i), 2, numpy.float32(0.5)), numpy.where(i, 2, numpy.float32(0.5)), exact=True)
    assert_eq(numpy.where(c, sp.array(i), 7), numpy.where(c, i, 7), exact=True)
    with pytest.raises(ValueError, match="could not be broadcast"):
        numpy.where(x > 0, x, y[:3])
    for got, exp in zip(numpy.where(x > 0), numpy.where(a > 0)):  # one argument: nonzero
        assert_eq(got, exp, exact=True)
    for axis in (None, 0, 1):
        assert_eq(numpy.count_nonzero(sp.array(i % 3), axis=axis), numpy.count_nonzero(i % 3, axis=axis))
        assert_eq(numpy.ptp(x, axis=axis), numpy.ptp(a, axis=axis), exact=True)
    assert_eq(numpy.count_nonzero(sp.array(c), axis=0, keepdims=True), numpy.count_nonzero(c, axis=0, keepdims=True))
    assert_eq(numpy.ptp(sp.array(i), axis=1, keepdims=True), numpy.ptp(i, axis=1, keepdims=True), exact=True)


@pytest.mark.parametrize("shape", [(6, 6), (5, 8), (9, 3), (2, 4, 5), (7,)], ids=str)
def test_tril_triu_trace_match_numpy(shape):
    a = ref(shape)
    x = sp.array(a)
    for k in (-10, -2, -1, 0, 1, 3, 10):
        assert_eq(numpy.tril(x, k), numpy.tril(a, k), exact=True)
        assert_eq(numpy.triu(x, k), numpy.triu(a, k), exact=True)
        if len(shape) == 2:
            assert_eq(numpy.trace(x, k), numpy.trace(a, k), rtol=1e-13)
            i = ref(shape, numpy.int8)
            assert_eq(numpy.trace(sp.array(i), k), numpy.trace(i, k), exact=True)
            assert_eq(numpy.trace(x, k, axis1=1, axis2=0), numpy.trace(a, k, axis1=1, axis2=0), rtol=1e-13)
    assert_eq(numpy.tril(x[::-1]), numpy.tril(a[::-1]), exact=True)
    i = ref(shape, numpy.int32)
    assert_eq(numpy.triu(sp.array(i), 1), numpy.triu(i, 1), exact=True)
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        numpy.tril(sp.array(1.0))


@pytest.mark.parametrize(("shape", "ax"), [((7,), 0), ((5, 6), 1), ((5, 6), 0), ((3, 0, 4), 2)], ids=str)
def test_cumulative_include_initial_and_trapezoid_sample_points(shape, ax):
    # Scans and sums across ranks add partial results in another order: equal to rounding.
    a = ref(shape)
    x = sp.array(a)
    for f in (numpy.cumulative_sum, numpy.cumulative_prod):
        assert_eq(f(x, axis=ax, include_initial=True), f(a, axis=ax, include_initial=True))
    out = sp.empty(numpy.cumulative_sum(a, axis=ax, include_initial=True).shape)
    assert numpy.cumulative_sum(x, axis=ax, include_initial=True, out=out) is out
    assert_eq(out, numpy.cumulative_sum(a, axis=ax, include_initial=True))
    if shape[ax] == 0:
        return
    xs = numpy.cumsum(numpy.abs(ref((shape[ax],), seed=3)))
    assert_eq(numpy.trapezoid(x, sp.array(xs), axis=ax), numpy.trapezoid(a, xs, axis=ax))
    assert_eq(numpy.trapezoid(x, xs, axis=ax), numpy.trapezoid(a, xs, axis=ax))
    xx = numpy.cumsum(numpy.abs(ref(shape, seed=4)), axis=ax)
    assert_eq(numpy.trapezoid(x, sp.array(xx), axis=ax), numpy.trapezoid(a, xx, axis=ax))
