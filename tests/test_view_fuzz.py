"""Randomised aliasing-view arithmetic against NumPy at any rank count.

Each example takes three same-shape views (any offsets, steps of either sign,
optionally transposed together) of one or two base arrays, evaluates
``C[...] = A + 2 * B`` and ``A += C`` and compares the bases with NumPy's.
Hypothesis draws the same examples on every rank (the suite's conftest
derandomises it), so the collective calls match.
"""

from __future__ import annotations

import numpy
from helpers import assert_eq
from hypothesis import given, settings
from hypothesis import strategies as st

import spmdarray as sp


@st.composite
def _axis_slice(draw, n: int, count: int):
    if count == 0:
        return slice(0, 0)
    step = draw(st.sampled_from([1, 2, 3, -1, -2]))
    span = (count - 1) * abs(step)
    if span >= n:
        step = 1 if step > 0 else -1
        span = count - 1
    if step > 0:
        start = draw(st.integers(0, n - 1 - span))
    else:
        start = draw(st.integers(span, n - 1))
    stop = start + count * step
    return slice(start, None if stop < 0 else stop, step)


@st.composite
def _case(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 7), min_size=ndim, max_size=ndim)))
    counts = [draw(st.integers(0, n)) for n in shape]
    keys = [tuple(draw(_axis_slice(n, c)) for n, c in zip(shape, counts)) for _ in range(3)]
    same_base = draw(st.booleans())
    transpose = draw(st.booleans())
    return shape, keys, same_base, transpose


@settings(max_examples=60, deadline=None, database=None, derandomize=True)
@given(_case())
def test_views_combine_and_assign_like_numpy(case):
    shape, (ka, kb, kc), same_base, transpose = case
    n = int(numpy.prod(shape))
    b1 = numpy.arange(n, dtype=float).reshape(shape)
    b2 = -numpy.arange(n, dtype=float).reshape(shape) - 0.5
    s1, s2 = sp.array(b1), sp.array(b2)

    def views(x1, x2):
        a, b = x1[ka], x1[kb]
        c = (x1 if same_base else x2)[kc]
        if transpose:
            a, b, c = a.T, b.T, c.T
        return a, b, c

    na, nb, nc = views(b1, b2)
    sa, sb, sc = views(s1, s2)
    nc[...] = na + 2 * nb
    sc[...] = sa + 2 * sb
    assert_eq(s1, b1, exact=True)
    assert_eq(s2, b2, exact=True)
    rhs = nc.copy()  # NumPy's in-place add with overlap behaves as if the input were copied
    na += rhs
    sa += sc
    assert_eq(s1, b1, exact=True)
    assert_eq(s2, b2, exact=True)
    assert_eq(sa.sum(), na.sum())


@settings(max_examples=60, deadline=None, database=None, derandomize=True)
@given(_case(), st.data())
def test_reductions_of_views_broadcast_back_like_numpy(case, data):
    shape, (ka, _, _), _, transpose = case
    n = int(numpy.prod(shape))
    base = numpy.cos(numpy.arange(n, dtype=float)).reshape(shape)
    na = base[ka].T if transpose else base[ka]
    sa = sp.array(base)[ka]
    sa = sa.T if transpose else sa
    axis = data.draw(st.integers(0, na.ndim - 1))
    if na.size:
        assert_eq(sa - sa.mean(axis=axis, keepdims=True), na - na.mean(axis=axis, keepdims=True))
        if na.shape[axis]:
            assert_eq(sa.argmax(axis=axis), na.argmax(axis=axis))
            assert_eq(
                sa.max(axis=axis)[..., None] * sa[(0,) * (na.ndim - 1)],
                na.max(axis=axis)[..., None] * na[(0,) * (na.ndim - 1)],
            )
    assert_eq(sa.sum(axis=axis), na.sum(axis=axis))
