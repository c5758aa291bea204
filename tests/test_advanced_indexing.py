"""Advanced indexing (integer arrays, boolean masks, mixed with basic indices) and
the functions built on it (take, put, nonzero, searchsorted ...) against NumPy.

Index arrays are NumPy arrays (the same on every rank) or distributed arrays;
results must match NumPy's at every rank count, for getitem and for setitem.
"""

from __future__ import annotations

import numpy
import pytest
from helpers import assert_eq, ref
from hypothesis import given, settings
from hypothesis import strategies as st

import spmdarray as sp

DTYPES = [bool, numpy.int32, numpy.int64, numpy.float32, numpy.float64, numpy.complex128]


def _keys(shape):
    """Advanced keys valid for ``shape`` (NumPy arrays; a list of tuples)."""
    nd = len(shape)
    n0 = shape[0]
    keys = [
        ([0, n0 - 1, -1, 0],),
        (numpy.array([[0], [n0 - 1]]),),
        ([],),
        (numpy.zeros(0, int), Ellipsis),
        (Ellipsis, [0, -1]) if shape[-1] else (Ellipsis, []),
        ref(shape, bool, seed=3),
        (True,),
        (False,),
        (None, [0, -1]),
    ]
    if nd >= 2:
        n1 = shape[1]
        keys += [
            ([0, -1], [n1 - 1, 0]),
            (slice(None), [n1 - 1, 0, 0]),
            (slice(None, None, -2), numpy.array([[0], [n1 - 1]])),
            ([n0 - 1], slice(1, None)),
            (slice(None), ref((n1,), bool, seed=4)),
            (ref((n0,), bool, seed=5), slice(None, None, -1)),
            (0, slice(None), [0, 0]) if nd == 3 else (0, [0, n1 - 1]),
            (ref(shape[:2], bool, seed=6),),
            ([0, -1], None, [0, n1 - 1]),
        ]
    if nd >= 3:
        n2 = shape[2]
        keys += [
            (slice(None), [0, -1], [n2 - 1, 0]),
            ([0], slice(None), [0, n2 - 1]),
            (slice(None), 0, ..., [n2 - 1]),
            (slice(None), ref(shape[1:], bool, seed=7)),
        ]
    return keys


SHAPES = [(7,), (5, 6), (3, 4, 5), (1, 3, 1), (9, 2)]


def _dist(k):
    """The key with its arrays (not lists) as distributed arrays."""
    if isinstance(k, tuple):
        return tuple(_dist(i) for i in k)
    if isinstance(k, numpy.ndarray):
        return sp.array(k)
    return k


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_getitem_matches_numpy(shape):
    a = ref(shape)
    x = sp.array(a)
    for key in _keys(shape):
        assert_eq(x[key], a[key], exact=True)
        assert_eq(x[_dist(key)], a[key], exact=True)
    # A view with negative steps as the source.
    v, w = x[::-1], a[::-1]
    for key in _keys(shape):
        assert_eq(v[key], w[key], exact=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: numpy.dtype(d).name)
def test_getitem_dtypes(dtype):
    a = ref((5, 6), dtype)
    x = sp.array(a)
    assert_eq(x[[4, 0, 2]], a[[4, 0, 2]], exact=True)
    assert_eq(x[:, sp.array(numpy.array([5, -6]))], a[:, [5, -6]], exact=True)
    m = ref((5, 6), bool, seed=9)
    assert_eq(x[sp.array(m)], a[m], exact=True)
    assert_eq(x[m[:, 0], 1:-1], a[m[:, 0], 1:-1], exact=True)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_setitem_matches_numpy(shape):
    for key in _keys(shape):
        a = ref(shape)
        x = sp.array(a)
        r = a[key].shape
        val = numpy.arange(numpy.prod(r), dtype=float).reshape(r) + 100
        a[key] = val
        x[key] = val
        assert_eq(x, a, exact=True)
        # Distributed index arrays and a distributed value; a scalar value.
        x[_dist(key)] = sp.array(val) - 50
        a[key] = val - 50
        assert_eq(x, a, exact=True)
        x[_dist(key)] = -1.5
        a[key] = -1.5
        assert_eq(x, a, exact=True)
    # Through a view with a negative step.
    a = ref(shape)
    x = sp.array(a)
    x[::-1][[0, -1]] = 7.0
    a[::-1][[0, -1]] = 7.0
    assert_eq(x, a, exact=True)


def test_setitem_duplicates_last_wins_and_broadcast():
    a = numpy.zeros((4, 3))
    x = sp.zeros((4, 3))
    idx = numpy.array([0, 2, 0, 3, 2, 0])
    val = numpy.arange(6.0)[:, None] + numpy.zeros(3)
    a[idx] = val
    x[sp.array(idx)] = sp.array(val)
    assert_eq(x, a, exact=True)
    a[[1, 1], [2, 2]] = [5, 6]
    x[[1, 1], [2, 2]] = [5, 6]
    assert_eq(x, a, exact=True)
    a[[3, 0]] = [1.0, 2.0, 3.0]
    x[[3, 0]] = [1.0, 2.0, 3.0]
    assert_eq(x, a, exact=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: numpy.dtype(d).name)
def test_mask_setitem_in_place(dtype):
    a = ref((5, 6), dtype)
    x = sp.array(a)
    cond = ref((6,), bool, seed=2)
    a[:, cond] = 0
    x[:, sp.array(cond)] = 0
    assert_eq(x, a, exact=True)
    m = ref((5, 6), bool, seed=8)
    v = ref((int(m.sum()),), dtype, seed=1)
    a[m] = v
    x[sp.array(m)] = sp.array(v)
    assert_eq(x, a, exact=True)
    a[m[:, 1], 1:-1] = a[0, 0]
    x[sp.array(m[:, 1]), 1:-1] = a[0, 0]
    assert_eq(x, a, exact=True)


def test_empty_and_length_one():
    a = ref((4, 0, 3))
    x = sp.array(a)
    assert_eq(x[[0, 3]], a[[0, 3]], exact=True)
    assert_eq(x[:, :, [2, 0]], a[:, :, [2, 0]], exact=True)
    m = numpy.zeros((4, 0, 3), bool)
    assert_eq(x[m], a[m], exact=True)
    x[m] = 1.0
    b = ref((1,))
    y = sp.array(b)
    assert_eq(y[[0, 0, -1]], b[[0, 0, -1]], exact=True)
    assert_eq(y[sp.array(numpy.array([True]))], b[[True]], exact=True)


def test_zero_d_and_replicated_or_fixed_layouts():
    a0 = numpy.float64(2.5) * numpy.ones(())
    x0 = sp.array(a0)
    for key in (True, False, (None, True), numpy.array(True)):
        assert_eq(x0[key], a0[key], exact=True)
    # A reduction's result is replicated along grid axes; a row view lives on some ranks only.
    a = ref((4, 6))
    x = sp.array(a)
    s, t = x.sum(axis=0, keepdims=True), a.sum(axis=0, keepdims=True)
    assert_eq(s[:, [5, 0, 2]], t[:, [5, 0, 2]])
    s[0, [5, 0, 5]] = [1.0, 2.0, 3.0]
    t[0, [5, 0, 5]] = [1.0, 2.0, 3.0]
    assert_eq(s, t)
    assert_eq(s * 1.0, t)  # every replica was written
    r, b = x[2], a[2]
    assert_eq(r[[1, -1]], b[[1, -1]], exact=True)
    r[sp.array(numpy.array([4, 1]))] = -3.0
    b[[4, 1]] = -3.0
    assert_eq(x, a, exact=True)


def test_errors_raise_numpys_type():
    a = ref((3, 4))
    x = sp.array(a)
    bad = [
        ([3],),
        ([-4],),
        (slice(None), [4]),
        (numpy.zeros(4, bool),),
        (slice(None), numpy.zeros(3, bool)),
        ([0], [0], [0]),
        ([0, 1], [0, 1, 2]),
        (numpy.array([0.5]),),
    ]
    for key in bad:
        with pytest.raises(IndexError):
            a[key]
        with pytest.raises(IndexError):
            x[key]
        with pytest.raises(IndexError):
            x[_dist(key)]
        with pytest.raises(IndexError):
            x[key] = 1.0
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 3"):
        x[sp.array(numpy.array([0, 2, 7]))]
    with pytest.raises(ValueError):
        x[[0, 1]] = numpy.ones(3)


# ------------------------------------------------------------- functions
@pytest.mark.parametrize("shape", [(7,), (5, 6), (3, 4, 5), (4, 0, 3)], ids=str)
def test_nonzero_family(shape):
    a = ref(shape, numpy.int64) * (ref(shape, bool, seed=1))
    x = sp.array(a)
    for got, exp in zip(sp.nonzero(x), numpy.nonzero(a)):
        assert_eq(got, exp, exact=True)
    for got, exp in zip(x.nonzero(), a.nonzero()):
        assert_eq(got, exp, exact=True)
    for got, exp in zip(sp.where(x), numpy.where(a)):
        assert_eq(got, exp, exact=True)
    assert_eq(sp.flatnonzero(x), numpy.flatnonzero(a), exact=True)
    assert_eq(sp.argwhere(x), numpy.argwhere(a), exact=True)
    assert_eq(sp.extract(x > 0, x), numpy.extract(a > 0, a), exact=True)
    assert_eq(sp.flatnonzero(x[::-1]), numpy.flatnonzero(a[::-1]), exact=True)
    with pytest.raises(ValueError):
        sp.nonzero(sp.array(numpy.float64(1.0)))


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_take_put(mode):
    a = ref((5, 6))
    x = sp.array(a)
    ind = numpy.array([[0, 4], [-1, 2]]) if mode == "raise" else numpy.array([[0, 9], [-7, 2]])
    for axis in (None, 0, 1, -1):
        assert_eq(sp.take(x, ind, axis=axis, mode=mode), numpy.take(a, ind, axis=axis, mode=mode), exact=True)
        assert_eq(x.take(sp.array(ind), axis=axis, mode=mode), a.take(ind, axis=axis, mode=mode), exact=True)
    assert_eq(sp.take(x, 3), numpy.take(a, 3))
    assert_eq(sp.take(x, 2, axis=1), numpy.take(a, 2, axis=1), exact=True)
    for v in (9.0, [1.0, 2.0, 3.0]):
        b, y = a.copy(), sp.array(a)
        flat = numpy.array([0, 7, 29, 7, -1]) if mode == "raise" else numpy.array([0, 70, -31, 7])
        numpy.put(b, flat, v, mode=mode)
        sp.put(y, sp.array(flat), v, mode=mode)
        assert_eq(y, b, exact=True)
        y.put(flat, sp.array(numpy.asarray(v)), mode=mode)
        assert_eq(y, b, exact=True)
    with pytest.raises(IndexError):
        sp.take(x, [30])
    with pytest.raises(IndexError):
        sp.take(x, sp.array(numpy.array([6])), axis=1)
    with pytest.raises(IndexError):
        sp.put(x, [30], 1.0)
    for call in (
        lambda m: numpy.put(m, [0], [1j]),
        lambda m: numpy.place(m, m == m, [1j]),
        lambda m: numpy.putmask(m, m == m, 1j),
        lambda m: m.__setitem__([0], 1j),
    ):
        with pytest.raises(TypeError):
            call(a.copy())
        with pytest.raises(TypeError):
            call(x)


def test_putmask_place_compress_choose_select():
    a = ref((5, 6))
    m = ref((5, 6), bool, seed=3)
    for vals in (2.5, numpy.array([1.0, 2.0, 3.0]), ref((5, 6), seed=4)):
        b, y = a.copy(), sp.array(a)
        numpy.putmask(b, m, vals)
        sp.putmask(y, sp.array(m), vals if numpy.ndim(vals) != 2 else sp.array(vals))
        assert_eq(y, b, exact=True)
        b, y = a.copy(), sp.array(a)
        v = numpy.ravel(vals)[:7]
        numpy.place(b, m, v)
        sp.place(y, sp.array(m), sp.array(v) if v.size > 1 else v)
        assert_eq(y, b, exact=True)
    x = sp.array(a)
    c = numpy.array([True, False, True, True, False])
    for axis in (None, 0, 1):
        cc = c if axis != 1 else numpy.r_[c, True]
        assert_eq(sp.compress(cc, x, axis=axis), numpy.compress(cc, a, axis=axis), exact=True)
        assert_eq(x.compress(sp.array(cc), axis=axis), a.compress(cc, axis=axis), exact=True)
    assert_eq(sp.compress(c[:3], x, axis=0), numpy.compress(c[:3], a, axis=0), exact=True)
    ch = numpy.array([0, 2, 1, 1, 0, 2])
    choices = [ref((5, 6), seed=k) for k in range(3)]
    assert_eq(sp.choose(sp.array(ch), [sp.array(c_) for c_ in choices]), numpy.choose(ch, choices), exact=True)
    assert_eq(sp.array(ch).choose(choices), ch.choose(choices), exact=True)
    for mode in ("wrap", "clip"):
        ch2 = ch * 3 - 2
        assert_eq(sp.choose(sp.array(ch2), choices, mode=mode), numpy.choose(ch2, choices, mode=mode), exact=True)
    with pytest.raises(ValueError):
        sp.choose(sp.array(ch + 5), choices)
    conds = [a > 1, a < -1]
    assert_eq(sp.select([sp.array(c_) for c_ in conds], [x, 2 * x], -7.0), numpy.select(conds, [a, 2 * a], -7.0))
    with pytest.raises(ValueError):
        sp.select([sp.array(conds[0])], [x, x])


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("n", [0, 1, 7, 40])
def test_searchsorted(side, n):
    a = numpy.sort(ref((n,), numpy.int64))
    x = sp.array(a)
    v = numpy.array([-60, -3, 0, 0, 5, 49, 60, a[0] if n else 1])
    assert_eq(sp.searchsorted(x, v, side=side), numpy.searchsorted(a, v, side=side), exact=True)
    assert_eq(x.searchsorted(sp.array(v), side=side), a.searchsorted(v, side=side), exact=True)
    v2 = v.reshape(2, 4)[::-1]
    assert_eq(sp.searchsorted(x, sp.array(v.reshape(2, 4))[::-1], side), numpy.searchsorted(a, v2, side))
    assert sp.searchsorted(x, 3, side) == numpy.searchsorted(a, 3, side)
    u = ref((n,), numpy.float64)
    s = numpy.argsort(u)
    assert_eq(sp.searchsorted(sp.array(u), sp.array(v), side, sorter=sp.array(s)), numpy.searchsorted(u, v, side, s))


def test_along_axis_and_index_helpers():
    a = ref((4, 5, 3))
    x = sp.array(a)
    for axis in (0, 1, 2, -1):
        ind = numpy.argsort(a, axis=axis)
        assert_eq(sp.take_along_axis(x, sp.array(ind), axis=axis), numpy.take_along_axis(a, ind, axis=axis), exact=True)
        b, y = a.copy(), sp.array(a)
        numpy.put_along_axis(b, ind[:1] if axis == 0 else ind, -1.0, axis=axis)
        sp.put_along_axis(y, ind[:1] if axis == 0 else ind, -1.0, axis=axis)
        assert_eq(y, b, exact=True)
    ind = numpy.argsort(a, axis=1)[:, :2]
    vals = ref(ind.shape, seed=11)
    b, y = a.copy(), sp.array(a)
    numpy.put_along_axis(b, ind, vals, axis=1)
    sp.put_along_axis(y, sp.array(ind), sp.array(vals), axis=1)
    assert_eq(y, b, exact=True)
    out = sp.empty((2, 5, 3))
    assert sp.take(x, [3, 0], axis=0, out=out) is out
    assert_eq(out, numpy.take(a, [3, 0], axis=0), exact=True)
    ind = numpy.array([5, 0, 59])
    assert_eq(sp.take_along_axis(x, ind, axis=None), numpy.take_along_axis(a, ind, axis=None), exact=True)
    sq = ref((4, 4))
    s = sp.array(sq)
    di = sp.diag_indices_from(s)
    assert_eq(s[di], sq[numpy.diag_indices_from(sq)], exact=True)
    for got, exp in zip(sp.diag_indices(3, 3), numpy.diag_indices(3, 3)):
        assert_eq(got, exp, exact=True)
    rows, cols = sp.ix_(sp.array(numpy.array([0, 3])), numpy.array([True, False, True, True]))
    assert_eq(s[rows, cols], sq[numpy.ix_([0, 3], [True, False, True, True])], exact=True)
    flat = numpy.array([[0, 11], [7, 3]])
    for got, exp in zip(sp.unravel_index(sp.array(flat), (3, 4)), numpy.unravel_index(flat, (3, 4))):
        assert_eq(got, exp, exact=True)
    got_f = sp.unravel_index(sp.array(flat), (3, 4), order="F")
    for got, exp in zip(got_f, numpy.unravel_index(flat, (3, 4), order="F")):
        assert_eq(got, exp, exact=True)
    mi = (numpy.array([0, 2, 1]), numpy.array([[3], [0]]))
    assert_eq(sp.ravel_multi_index((sp.array(mi[0]), mi[1]), (3, 4)), numpy.ravel_multi_index(mi, (3, 4)), exact=True)
    with pytest.raises(ValueError):
        sp.unravel_index(sp.array(flat), (2, 4))
    with pytest.raises(ValueError):
        sp.ravel_multi_index((sp.array(mi[0]), mi[1] + 4), (3, 4))
    for shape, wrap in (((5, 5), False), ((7, 3), False), ((7, 3), True), ((3, 3, 3), False)):
        b = ref(shape)
        y = sp.array(b)
        numpy.fill_diagonal(b, [9.0, 8.0], wrap=wrap)
        sp.fill_diagonal(y, [9.0, 8.0], wrap=wrap)
        assert_eq(y, b, exact=True)


# -------------------------------------------------------------- property
@st.composite
def index_expr(draw):
    """A shape, and an index expression valid for it mixing int arrays, a mask,
    slices with any step, ints, None and ``...``; flags for distributed arrays."""
    shape = draw(st.sampled_from([(6,), (5, 4), (3, 4, 2), (2, 1, 5), (4, 3, 2, 2)]))
    length = draw(st.integers(0, 3))
    key, axis, has_ell, has_mask, has_arr = [], 0, False, False, False  # has_arr: one longer than 1
    while axis < len(shape):
        n = shape[axis]
        kind = draw(st.sampled_from(["slice", "int", "arr", "mask", "none", "ell", "stop"]))
        if kind == "stop":
            break
        if kind == "slice":
            start = draw(st.none() | st.integers(-n - 1, n + 1))
            stop = draw(st.none() | st.integers(-n - 1, n + 1))
            step = draw(st.sampled_from([None, 1, 2, -1, -2, 3]))
            key.append(slice(start, stop, step))
            axis += 1
        elif kind == "int":
            key.append(draw(st.integers(-n, n - 1)))
            axis += 1
        elif kind == "arr" and n:
            rows = 1 if has_mask else draw(st.sampled_from([length, 1]))
            vals = draw(st.lists(st.integers(-n, n - 1), min_size=rows, max_size=rows))
            key.append(numpy.array(vals, dtype=numpy.intp).reshape(len(vals)))
            has_arr = has_arr or rows != 1
            axis += 1
        elif kind == "mask" and not has_mask and not has_arr:
            k = draw(st.integers(1, len(shape) - axis))
            bits = draw(st.lists(st.booleans(), min_size=int(numpy.prod(shape[axis : axis + k])), max_size=64))
            size = int(numpy.prod(shape[axis : axis + k]))
            key.append(numpy.array(bits[:size], bool).reshape(shape[axis : axis + k]))
            has_mask = True
            axis += k
        elif kind == "none":
            key.append(None)
        elif kind == "ell" and not has_ell:
            key.append(Ellipsis)
            has_ell = True
            break
    distributed = draw(st.lists(st.booleans(), min_size=len(key), max_size=len(key)))
    flags = draw(st.tuples(st.booleans(), st.booleans()))  # source reversed; value distributed
    return shape, tuple(key), distributed, flags


@settings(max_examples=80)
@given(index_expr())
def test_random_index_expression_getitem_and_setitem(expr):
    shape, key, distributed, (reverse, dist_value) = expr
    base = numpy.arange(int(numpy.prod(shape)), dtype=numpy.float64).reshape(shape)
    dkey = tuple(sp.array(k) if isinstance(k, numpy.ndarray) and d else k for k, d in zip(key, distributed))
    xbase = sp.array(base)
    a, x = (base[::-1], xbase[::-1]) if reverse else (base, xbase)
    try:
        expected = a[key]
    except IndexError:
        with pytest.raises(IndexError):
            x[dkey]
        return
    got = x[dkey]
    if isinstance(got, sp.ndarray):
        assert_eq(got, expected, exact=True)
    else:
        assert got == expected
    val = -1.0 - numpy.arange(expected.size, dtype=numpy.float64).reshape(numpy.shape(expected))
    a[key] = val
    x[dkey] = sp.array(val) if dist_value and val.ndim else val
    assert_eq(xbase, base, exact=True)
    a[key] = 0.5
    x[dkey] = 0.5
    assert_eq(xbase, base, exact=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: numpy.dtype(d).name)
def test_functions_dtypes_and_view_inputs(dtype):
    a = ref((7, 5), dtype)
    x = sp.array(a)
    ind = numpy.array([6, 0, -1, 3, 3, 2, 5, 1])
    dind = sp.array(ind)[::-2]  # a distributed index that is a view with a negative step
    assert_eq(x[dind], a[ind[::-2]], exact=True)
    assert_eq(x[::-1, ::2][dind[:2], 1:], a[::-1, ::2][ind[::-2][:2], 1:], exact=True)
    assert_eq(sp.take(x.T, dind, axis=1), numpy.take(a.T, ind[::-2], axis=1), exact=True)
    for got, exp in zip(sp.nonzero(x[::-1]), numpy.nonzero(a[::-1])):
        assert_eq(got, exp, exact=True)
    assert_eq(sp.compress(a[:, 0] != a[0, 0], x, axis=0), numpy.compress(a[:, 0] != a[0, 0], a, axis=0), exact=True)
    b, y = a.copy(), sp.array(a)
    numpy.put(b, ind[::-2], a[0, :4])
    sp.put(y, dind, sp.array(a[0, :4]))
    assert_eq(y, b, exact=True)


def test_communication_is_an_all_to_all_of_what_is_needed():
    from helpers import world

    _, size = world()
    n = 4000
    x = sp.arange(float(n))
    idx = numpy.array([0, n - 1, 17, 2500])
    with sp.comm_stats() as s:
        y = x[idx]
    assert_eq(y, numpy.arange(float(n))[idx], exact=True)
    if size > 1:
        # Counts (one Alltoall), requests and replies (two Alltoallv); no gather of x.
        assert s.collectives == 3
        assert s.collective_bytes <= 2 * 8 * size + (8 + 8) * idx.size
    # A mask aligned with the array, set to a scalar, is elementwise: nothing moves.
    m = x > 1000.0
    with sp.comm_stats() as s:
        x[m] = 0.0
    assert s.bytes_sent == 0 and s.collectives == 0
    assert_eq(x, numpy.where(numpy.arange(float(n)) > 1000.0, 0.0, numpy.arange(float(n))), exact=True)


@pytest.mark.parametrize("dtype", [numpy.int8, numpy.uint16, numpy.int64, bool])
def test_replicated_index_arrays_on_the_lane(dtype):
    # ``x[cols]`` with a small index array every rank holds (npbench's CSR row loop):
    # NumPy's advanced indexing of the copy, a new array; NumPy's errors.
    a = ref((9, 4), float, 11)
    keys = numpy.array([3, 2, 0, 3, 8], dtype) if dtype is not bool else a[:, 0] > 0
    if dtype is numpy.int8:
        keys[1] = -1  # (a negative index)
    x, k = sp.array(a), sp.array(keys)
    got = x[k]
    assert_eq(got, a[keys], exact=True)
    got[...] = 0.0  # a copy: x is unchanged
    assert_eq(x, a, exact=True)
    assert_eq(x[:, 1][k], a[:, 1][keys], exact=True)
    bad = sp.array(numpy.array([9], dtype) if dtype is not bool else numpy.ones(4, bool))
    with pytest.raises(IndexError):
        a[numpy.asarray(bad)]
    with pytest.raises(IndexError):
        x[bad]
