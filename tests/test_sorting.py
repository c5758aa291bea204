"""sort, argsort, lexsort, partition, unique and the set operations against NumPy.

The sort axis is split over ranks in most cases below (the distributed sample
sort) and local in others; uneven shapes, empty and length-1 axes, NaNs,
duplicates, negative-step views and the usual dtypes.
"""

from __future__ import annotations

import numpy
import pytest
from helpers import assert_eq, ref

import spmdarray as sp

SHAPES = [(7,), (5, 6), (3, 4, 5), (4, 0, 3), (40,)]
DTYPES = [numpy.bool_, numpy.int32, numpy.int64, numpy.float32, numpy.float64, numpy.complex128]


def _data(shape, dtype, seed=0):
    a = ref(shape, dtype, seed)
    if numpy.dtype(dtype).kind in "iu":
        a = a % 5  # many duplicates
    elif numpy.dtype(dtype).kind == "f" and a.size:
        a = numpy.round(a, 0)  # duplicates
        a.reshape(-1)[:: max(1, a.size // 3)] = numpy.nan
    elif numpy.dtype(dtype).kind == "c" and a.size:
        a = numpy.round(a.real, 0) + 1j * numpy.round(a.imag, 0)
        a.reshape(-1)[1 :: max(2, a.size // 2)] = complex(numpy.nan, 0)
    return a


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: numpy.dtype(d).name)
def test_sort_and_stable_argsort_match_numpy(shape, dtype):
    a = _data(shape, dtype)
    x = sp.array(a)
    for axis in [*range(-len(shape), len(shape)), None]:
        assert_eq(numpy.sort(x, axis=axis), numpy.sort(a, axis=axis), exact=True)
        assert_eq(numpy.argsort(x, axis=axis, kind="stable"), numpy.argsort(a, axis=axis, kind="stable"), exact=True)
    # Default kind: our answer is the stable one, which is one of NumPy's valid answers.
    want = numpy.argsort(a, axis=-1, kind="stable") if a.ndim else None
    if a.ndim:
        assert_eq(x.argsort(), want, exact=True)


def test_sort_views_methods_and_in_place():
    a = _data((9, 6), numpy.float64, seed=3)
    x = sp.array(a)
    assert_eq(numpy.sort(x[::-2], axis=0), numpy.sort(a[::-2], axis=0), exact=True)
    c = _data((1, 7, 1), numpy.int32)
    for axis in (0, 1, 2, None):
        assert_eq(numpy.argsort(sp.array(c), axis=axis), numpy.argsort(c, axis=axis, kind="stable"), exact=True)
    assert_eq(numpy.sort(sp.array(a[:1, 0])), numpy.sort(a[:1, 0]), exact=True)
    assert_eq(numpy.sort(x[1:, ::-3], axis=1), numpy.sort(a[1:, ::-3], axis=1), exact=True)
    assert_eq(numpy.argsort(x.T[::-1], kind="mergesort"), numpy.argsort(a.T[::-1], kind="mergesort"), exact=True)
    y, b = x.copy(), a.copy()
    y.sort(axis=0)
    b.sort(axis=0)
    assert_eq(y, b, exact=True)
    v, w = x[::-1], a[::-1]
    v.sort()
    w.sort()
    assert_eq(x, a, exact=True)
    for kind in ("quicksort", "heapsort", "stable", "mergesort", None):
        assert_eq(numpy.sort(x, kind=kind), numpy.sort(a, kind=kind), exact=True)


def test_sort_complex_lexsort_partition():
    a = _data((11,), numpy.float64, seed=1)
    x = sp.array(a)
    assert_eq(numpy.sort_complex(x), numpy.sort_complex(a), exact=True)
    i = ref((13,), numpy.int32) % 4
    assert_eq(numpy.sort_complex(sp.array(i)), numpy.sort_complex(i), exact=True)
    k1, k2 = ref((17,), numpy.int64, 2) % 3, ref((17,), numpy.float64, 3).round()
    assert_eq(numpy.lexsort((sp.array(k1), sp.array(k2))), numpy.lexsort((k1, k2)), exact=True)
    assert_eq(numpy.lexsort((k1, sp.array(k2))), numpy.lexsort((k1, k2)), exact=True)
    b = _data((6, 7), numpy.float64, seed=5)
    y = sp.array(b)
    for kth in (0, 3, -1, [1, 4]):
        for axis in (0, 1, -1):
            got = numpy.partition(y, kth, axis=axis)
            want = numpy.partition(b, kth, axis=axis)
            # Our partition is a full sort: the kth entries agree with NumPy's, every other entry
            # is on the right side of them.
            assert_eq(got, numpy.sort(b, axis=axis), exact=True)
            kk = numpy.atleast_1d(kth)
            assert_eq(numpy.take(numpy.asarray(got), kk, axis=axis), numpy.take(want, kk, axis=axis), exact=True)
            idx = numpy.argpartition(y, kth, axis=axis)
            assert_eq(idx, numpy.argsort(b, axis=axis, kind="stable"), exact=True)
    z, c = y.copy(), b.copy()
    z.partition(2)
    c.sort()
    assert_eq(z, c, exact=True)
    assert_eq(y.argpartition(1, axis=0), numpy.argsort(b, axis=0, kind="stable"), exact=True)


def test_sort_errors_are_numpys():
    a = ref((4, 5))
    x = sp.array(a)
    for call in (
        lambda m: numpy.sort(m, axis=2),
        lambda m: numpy.argsort(m, axis=-3),
        lambda m: numpy.sort(m, kind="bogus"),
        lambda m: numpy.argsort(m, kind="fast"),
        lambda m: numpy.partition(m, 7),
        lambda m: numpy.partition(m, 2, axis=5),
        lambda m: numpy.argpartition(m, -9, axis=0),
        lambda m: numpy.partition(m, 1.5),
        lambda m: numpy.lexsort((m[0], m[1, :3])),
    ):
        with pytest.raises(Exception) as want:
            call(a)
        with pytest.raises(type(want.value)):
            call(x)
    with pytest.raises(numpy.exceptions.AxisError):
        numpy.sort(sp.array(1.0), axis=0)


@pytest.mark.parametrize("shape", [(23,), (3, 4, 5), (0,), (1,)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: numpy.dtype(d).name)
def test_unique_matches_numpy(shape, dtype):
    a = _data(shape, dtype, seed=7)
    x = sp.array(a)
    got = numpy.unique(x, return_index=True, return_inverse=True, return_counts=True)
    want = numpy.unique(a, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        assert_eq(g, w, exact=True)
    assert_eq(numpy.unique(x), numpy.unique(a), exact=True)
    assert_eq(numpy.unique(x, equal_nan=False), numpy.unique(a, equal_nan=False), exact=True)
    assert_eq(numpy.unique(x[::-2]), numpy.unique(a[::-2]), exact=True)
    u, c = numpy.unique_counts(x)
    uw, cw = numpy.unique_counts(a)
    order = numpy.argsort(uw, kind="stable")
    assert_eq(u, uw[order], exact=True)
    assert_eq(c, cw[order], exact=True)
    r = numpy.unique_all(x)
    assert_eq(r.values, numpy.unique(a, equal_nan=False), exact=True)
    assert_eq(numpy.asarray(r.values)[numpy.asarray(r.inverse_indices)], a, exact=True)
    assert_eq(sp.unique_values(x), numpy.sort(numpy.unique_values(a)), exact=True)
    v, inv = numpy.unique_inverse(x)
    assert_eq(numpy.asarray(v)[numpy.asarray(inv)], a, exact=True)


@pytest.mark.parametrize("dtype", [numpy.int32, numpy.float64, numpy.bool_], ids=str)
def test_unique_along_an_axis_matches_numpy(dtype):
    a = ref((9, 3, 4), dtype) % 2 if numpy.dtype(dtype).kind != "b" else ref((9, 3, 4), dtype)
    a[4] = a[1]
    a[:, 2] = a[:, 0]
    x = sp.array(a)
    for axis in (0, 1, -1):
        got = numpy.unique(x, axis=axis, return_index=True, return_inverse=True, return_counts=True)
        want = numpy.unique(a, axis=axis, return_index=True, return_inverse=True, return_counts=True)
        for g, w in zip(got, want):
            assert_eq(g, w, exact=True)
    assert_eq(numpy.unique(x[::-2], axis=0), numpy.unique(a[::-2], axis=0), exact=True)
    with pytest.raises(numpy.exceptions.AxisError):
        numpy.unique(x, axis=3)


@pytest.mark.parametrize("dtype", [numpy.int32, numpy.float64, numpy.float32], ids=str)
def test_set_operations_match_numpy(dtype):
    a = _data((19,), dtype, seed=11)
    b = _data((8,), dtype, seed=12)
    x, y = sp.array(a), sp.array(b)
    for yy in (y, b):
        assert_eq(numpy.isin(x, yy), numpy.isin(a, b), exact=True)
        assert_eq(numpy.isin(x, yy, invert=True), numpy.isin(a, b, invert=True), exact=True)
        assert_eq(numpy.intersect1d(x, yy), numpy.intersect1d(a, b), exact=True)
        got = numpy.intersect1d(x, yy, return_indices=True)
        for g, w in zip(got, numpy.intersect1d(a, b, return_indices=True)):
            assert_eq(g, w, exact=True)
        assert_eq(numpy.union1d(x, yy), numpy.union1d(a, b), exact=True)
        assert_eq(numpy.setdiff1d(x, yy), numpy.setdiff1d(a, b), exact=True)
        assert_eq(numpy.setxor1d(x, yy), numpy.setxor1d(a, b), exact=True)
    m = _data((4, 5), dtype, seed=13)
    assert_eq(numpy.isin(sp.array(m), y), numpy.isin(m, b), exact=True)
    assert_eq(numpy.isin(sp.array(m)[::-1], y[::-2]), numpy.isin(m[::-1], b[::-2]), exact=True)
    e = numpy.zeros(0, dtype)
    assert_eq(numpy.isin(sp.array(e), y), numpy.isin(e, b), exact=True)
    assert_eq(numpy.intersect1d(sp.array(e), y), numpy.intersect1d(e, b), exact=True)
    ua, ub = numpy.unique(a), numpy.unique(b)
    assert_eq(
        numpy.setdiff1d(sp.array(ua), ub, assume_unique=True), numpy.setdiff1d(ua, ub, assume_unique=True), exact=True
    )
    want = numpy.intersect1d(ua, ub, assume_unique=True)
    assert_eq(numpy.intersect1d(sp.array(ua), ub, assume_unique=True), want, exact=True)
    with pytest.raises(ValueError):
        numpy.isin(x, y, kind="fast")


def test_sort_along_an_unsplit_axis_moves_no_data():
    a = ref((6, 5, 4))
    x = sp.array(a)
    lay = x.layout
    for axis in range(3):
        k = lay.grid_axis_of(axis)
        if k is None or lay.dims[k] == 1:
            with sp.comm_stats() as s:
                y = numpy.sort(x, axis=axis)
            assert s.bytes_sent == 0 and s.collectives == 0
            assert_eq(y, numpy.sort(a, axis=axis), exact=True)


def test_sort_and_unique_of_0d():
    x, a = sp.array(2.5), numpy.array(2.5)
    assert_eq(numpy.sort(x, axis=None), numpy.sort(a, axis=None), exact=True)
    assert_eq(numpy.argsort(x, axis=None), numpy.argsort(a, axis=None), exact=True)
    assert_eq(numpy.unique(x), numpy.unique(a), exact=True)
    assert_eq(numpy.isin(x, [2.5, 3.0]), numpy.isin(a, [2.5, 3.0]), exact=True)


@pytest.mark.parametrize("seed", range(6))
def test_random_shapes_sort_unique_and_quantile(seed):
    rng = numpy.random.default_rng(100 + seed)
    nd = int(rng.integers(1, 4))
    shape = tuple(int(n) for n in rng.integers(1, 9, nd))
    a = rng.integers(0, 4, shape).astype(numpy.float64)  # heavy ties
    a[rng.random(shape) < 0.1] = numpy.nan
    x = sp.array(a)
    axis = int(rng.integers(-nd, nd))
    assert_eq(numpy.sort(x, axis=axis), numpy.sort(a, axis=axis), exact=True)
    assert_eq(numpy.argsort(x, axis=axis), numpy.argsort(a, axis=axis, kind="stable"), exact=True)
    got = numpy.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, numpy.unique(a, return_index=True, return_inverse=True, return_counts=True)):
        assert_eq(g, w, exact=True)
    assert_eq(numpy.quantile(x, 0.3, axis=axis), numpy.quantile(a, 0.3, axis=axis))


def test_comm_helpers_alltoallv_and_allgather_counts():
    from spmdarray.comm import allgather_counts, alltoallv

    comm = sp.zeros(1).comm
    r, p = comm.Get_rank(), comm.Get_size()
    assert allgather_counts(comm, 10 * r + 1).tolist() == [10 * q + 1 for q in range(p)]
    # Rank r sends (r + d) copies of the value 100*r + d to rank d.
    counts = [r + d for d in range(p)]
    send = numpy.concatenate([numpy.full(c, 100 * r + d, numpy.int32) for d, c in enumerate(counts)])
    (recv,), rcounts = alltoallv(comm, [send], counts)
    assert rcounts.tolist() == [q + r for q in range(p)]
    want = numpy.concatenate([numpy.full(q + r, 100 * q + r, numpy.int32) for q in range(p)])
    assert recv.dtype == numpy.int32 and recv.tolist() == want.tolist()
