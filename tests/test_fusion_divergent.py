"""Deferred values evaluated on some ranks only give the same results everywhere.

A deferred elementwise result posts its operands' messages when it is
recorded, on every rank, and evaluating it only waits for them.  So a
``t.local`` taken on one rank, a reference kept on some ranks only, or a
temporary dropped unevaluated never changes which messages any rank sends,
and never changes a result.  Run serially and under ``mpiexec -n 2/3/4``.
"""

import numpy
import pytest
from helpers import assert_eq, fuse_everything, ref, world
from hypothesis import given, settings
from hypothesis import strategies as st

import spmdarray as sp
from spmdarray.core import flights as _flights


@pytest.fixture(autouse=True, params=["numba", "numpy"])
def fused(request, monkeypatch):
    """Every elementwise chain deferred, whatever its size."""
    fuse_everything(monkeypatch, request.param)
    yield request.param
    sp.sync()
    assert _flights.open_flights() == 0


def deferred(x) -> bool:
    return x._s.deferred


def some(mask: int) -> bool:
    """Whether this rank is in the set of ranks ``mask`` (bit ``r``: rank ``r``)."""
    return bool((mask >> world()[0]) & 1)


# ------------------------------------------------------------------ stencils
@pytest.mark.parametrize("mask", [0b0001, 0b0110, 0b1010, 0b1111])
def test_stencil_with_the_value_evaluated_on_some_ranks(mask):
    g0 = ref((13, 11), "float64", 1)
    g = sp.array(g0)
    for _ in range(4):
        c, n, s = g[1:-1, 1:-1], g[:-2, 1:-1], g[2:, 1:-1]
        e, w = g[1:-1, 2:], g[1:-1, :-2]
        expr = (c + n + s + e + w) * 0.2
        if some(mask):
            expr.local  # noqa: B018 - evaluates here only
        assert deferred(expr) != some(mask)
        c[...] = expr
        c0 = g0[1:-1, 1:-1]
        c0[...] = (c0 + g0[:-2, 1:-1] + g0[2:, 1:-1] + g0[1:-1, 2:] + g0[1:-1, :-2]) * 0.2
    assert_eq(g, g0, exact=True)


@pytest.mark.parametrize("mask", [0b0001, 0b0101])
def test_references_kept_on_some_ranks_across_writes(mask):
    """A value kept on some ranks keeps its old value after the operands change."""
    g0 = ref((12, 9), "float64", 2)
    g = sp.array(g0)
    kept, kept0 = [], []
    for _ in range(3):
        t = g[1:-1] * 2.0 + g[:-2]
        if some(mask):
            kept.append(t)  # not evaluated: its operands are about to change
        kept0.append(g0[1:-1] * 2.0 + g0[:-2])
        g[1:-1] = t - 1.0
        g0[1:-1] = kept0[-1] - 1.0
        del t
    assert_eq(g, g0, exact=True)
    if some(mask):
        for got, exp in zip(kept, kept0):
            numpy.testing.assert_array_equal(got.local, exp[got.global_slices])


@pytest.mark.parametrize("mask", [0b0001, 0b0010, 0b1110])
def test_values_moved_to_another_layout_after_evaluation_on_some_ranks(mask):
    """An intermediate evaluated on some ranks, then read reversed and transposed (moved)."""
    a0, b0 = ref((9, 9), "float64", 3), ref((9, 9), "float64", 4)
    a, b = sp.array(a0), sp.array(b0)
    t = a * 3.0 - b
    if some(mask):
        t.local  # noqa: B018
    r = t[::-1] + b.T
    r0 = (a0 * 3.0 - b0)[::-1] + b0.T
    assert_eq(r, r0, exact=True)
    assert_eq(t.T * a, (a0 * 3.0 - b0).T * a0, exact=True)


@pytest.mark.parametrize("mask", [0b0001, 0b1011])
def test_fused_sum_after_evaluation_on_some_ranks(mask):
    x0 = ref((40, 30), "float64", 5)
    x = sp.array(x0)
    m = (x > 0.25) & (x < 1.5)
    if some(mask):
        m.local  # noqa: B018
    got = sp.sum(m)
    assert got == numpy.sum((x0 > 0.25) & (x0 < 1.5))
    assert type(got) is numpy.int64
    i0 = ref((17, 6), "int32", 6)
    i = sp.array(i0)
    v = i * 7 - i[::-1]
    if some(mask):
        v.local  # noqa: B018
    assert sp.sum(v) == numpy.sum(i0 * 7 - i0[::-1])


@pytest.mark.parametrize("mask", [0b0001, 0b0110])
def test_out_deferred_on_some_ranks(mask):
    x0, y0 = ref((10, 7), "float64", 7), ref((10, 7), "float64", 8)
    x, y = sp.array(x0), sp.array(y0)
    t = x + 1.0
    if some(mask):
        t.local  # noqa: B018
    numpy.multiply(y[::-1], 2.0, out=t)
    assert_eq(t, y0[::-1] * 2.0, exact=True)
    t2 = x - y
    if some(mask):
        t2.local  # noqa: B018
    t2[2:5] = x[:3] * y[7:]
    e = x0 - y0
    e[2:5] = x0[:3] * y0[7:]
    assert_eq(t2, e, exact=True)


@pytest.mark.parametrize("mask", [0b0001, 0b0011])
def test_random_draws_evaluated_on_some_ranks(mask):
    u = sp.random.default_rng(11).random((30, 20))
    ref_u = numpy.asarray(sp.random.default_rng(11).random((30, 20)))
    if some(mask):
        u.local  # noqa: B018
    assert_eq(u[::-1] * 2.0 + u, ref_u[::-1] * 2.0 + ref_u, exact=True)


def test_dropped_values_leave_no_message_behind():
    """Hundreds of halo-reading temporaries dropped unevaluated: no hang, flights bounded."""
    x0 = ref((64, 5), "float64", 9)
    x = sp.array(x0)
    for k in range(600):
        x[1:] + x[:-1]  # noqa: B018 - posts a halo (the first time), never evaluated
        if k % 97 == 0:
            x[0, 0] = float(k)  # a write: the halo is sent again
            x0[0, 0] = float(k)
        assert _flights.open_flights() <= _flights.MAX_OPEN
    assert_eq(x[1:] + x[:-1], x0[1:] + x0[:-1], exact=True)


@pytest.mark.parametrize("mask", [0b0001, 0b0110])
def test_same_messages_whether_or_not_evaluated_early(mask):
    """The bytes and messages each rank sends do not depend on where values were evaluated."""

    def run(early: int):
        g = sp.array(ref((16, 10), "float64", 10))
        with sp.comm_stats() as s:
            for _ in range(3):
                expr = (g[1:-1, 1:-1] + g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2]) * 0.25
                t = expr[::-1] - g[1:-1, 2:]
                if (early >> world()[0]) & 1:
                    expr.local  # noqa: B018
                    t.local  # noqa: B018
                g[1:-1, 1:-1] = t
            total = float(sp.sum(g))
        return (s.messages_sent, s.bytes_sent, s.messages_received, s.bytes_received), total

    assert run(0) == run(mask)


# ------------------------------------------------- hypothesis: random subsets
BINARY = [numpy.add, numpy.subtract, numpy.multiply, numpy.maximum, numpy.less]
VIEWS = [
    (slice(1, 7), slice(0, 5)),
    (slice(0, 6), slice(0, 5)),
    (slice(2, 8), slice(1, 6)),
    (slice(7, 1, -1), slice(5, 0, -1)),
]


def _tree():
    leaf = st.one_of(
        st.tuples(st.just("a"), st.integers(0, 1), st.integers(0, len(VIEWS) - 1)),
        st.tuples(st.just("s"), st.sampled_from([2, -1.5, 0.25])),
    )
    return st.recursive(
        leaf,
        lambda kids: st.one_of(
            st.tuples(st.just("b"), st.integers(0, len(BINARY) - 1), kids, kids),
            st.tuples(st.just("e"), st.integers(0, 15), kids),  # evaluate on a subset of ranks
            st.tuples(st.just("r"), kids),  # read reversed: moves data
        ),
        max_leaves=6,
    )


def _build(t, bases, mod, held):
    kind = t[0]
    if kind == "a":
        return bases[t[1]][VIEWS[t[2]]]
    if kind == "s":
        return t[1]
    if kind == "b":
        return BINARY[t[1]](_build(t[2], bases, mod, held), _build(t[3], bases, mod, held))
    v = _build(t[-1], bases, mod, held)
    if kind == "r":
        return v[::-1] if numpy.ndim(v) else v
    if mod is sp and isinstance(v, sp.ndarray) and some(t[1]):
        v.local  # noqa: B018
        held.append(v)
    return v


@settings(max_examples=40, deadline=None, database=None, derandomize=True)
@given(_tree(), st.integers(0, 15))
def test_random_trees_evaluated_on_random_subsets_equal_numpy(t, write_mask):
    b0 = [ref((8, 6), "float64", 20), ref((8, 6), "int32", 21)]
    bs = [sp.array(b) for b in b0]
    held: list = []
    with numpy.errstate(all="ignore"):
        exp = _build(t, b0, numpy, held)
        got = _build(t, bs, sp, held)
        if not isinstance(exp, numpy.ndarray):
            return
        # Then change an operand: values computed from it keep their old values
        # (views of it see the new ones, as in NumPy).
        bs[0][2:5] = -7.0
        b0[0][2:5] = -7.0
        if some(write_mask):
            got.local  # noqa: B018
    assert_eq(got, exp, exact=True)
