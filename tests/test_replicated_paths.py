"""The short paths of basic indexing and assignment, against NumPy.

``A[1:-1, j]`` looks its view map up in a cache per (view map, key)
(``core.viewcache``), and ``dst[...] = value`` between arrays every
rank holds whole, of one shape and dtype, copies block to block
(``engine.elementwise._assign_whole``).  Each case runs with small arrays
replicated (the default ``replicate_below``) and with every array split (0),
and is compared with NumPy bit for bit.

Run at 1, 2, 3 and 4 ranks::

    mpiexec -n 3 python -m pytest -q tests/test_replicated_paths.py
"""

from __future__ import annotations

import numpy
import pytest
from helpers import assert_eq, ref

import spmdarray as sp
from spmdarray.settings import FIELDS, config

DEFAULT = FIELDS["replicate_below"].default
BELOW = [DEFAULT, 0, 50]  # 50: 9 x 9 arrays split, their rows and columns replicated


def _sweep(xp, u, p, q):
    # adi's and deriche's pattern: column and row slices read and written in loops.
    n = u.shape[0]
    for _ in range(2):
        p[1 : n - 1, 0] = 0.0
        q[1 : n - 1, 0] = u[0, 1 : n - 1]
        for j in range(1, n - 1):
            p[1 : n - 1, j] = -0.5 / (0.25 * p[1 : n - 1, j - 1] + 2.0)
            q[1 : n - 1, j] = (u[j, 0 : n - 2] - 0.25 * q[1 : n - 1, j - 1]) / (p[1 : n - 1, j - 1] + 3.0)
        for j in range(n - 2, 0, -1):
            u[j, 1 : n - 1] = p[1 : n - 1, j] * u[j + 1, 1 : n - 1] + q[1 : n - 1, j]
        u[1:-1, -1] = u[1:-1, 0]
        u[::-1][2] = u[3, ::-1]
    return u


@pytest.mark.parametrize("below", BELOW)
def test_slice_loops_match_numpy(below):
    a, b, c = ref((9, 9), seed=1), ref((9, 9), seed=2), ref((9, 9), seed=3)
    expected = _sweep(numpy, a.copy(), b.copy(), c.copy())
    with config.set(replicate_below=below):
        got = _sweep(sp, sp.array(a), sp.array(b), sp.array(c))
    assert_eq(got, expected, exact=True)


@pytest.mark.parametrize("below", BELOW)
def test_cached_keys_on_other_shapes_and_kinds(below):
    a = ref((6, 7), seed=4)
    with config.set(replicate_below=below):
        x = sp.array(a)
        for key in [
            (1, slice(None, -1)),
            (1, slice(None, -1)),
            (-1, slice(None, None, -2)),
            (Ellipsis, 2),
            (None, 3),
            (slice(2, 4), None, slice(1, 2)),
            5,
            (numpy.int64(2), slice(1, 3)),
        ]:
            assert_eq(x[key], a[key], exact=True)
            assert_eq(x.T[key], a.T[key], exact=True)
        # The same key on a shorter axis: NumPy's IndexError, not a cached view.
        assert_eq(x[2, 6], a[2, 6], exact=True)
        assert_eq(x[(5, slice(None))], a[5, :], exact=True)
        with pytest.raises(IndexError):
            x.T[(5, slice(None))][6]
        with pytest.raises(IndexError):
            x[1:3][(5, slice(None))]
        with pytest.raises(TypeError):
            x[1.0:3]
        # A 0-d result: a scalar unless the key holds ... or None.
        assert_eq(x[2, 3], a[2, 3], exact=True)
        assert_eq(x[2, 3, ...], a[2, 3, ...], exact=True)
        assert_eq(x[2, 3, None], a[2, 3, None], exact=True)


@pytest.mark.parametrize("below", BELOW)
def test_whole_assignment_aliases_and_casts(below):
    a = ref((8, 5), seed=5)
    e = a.copy()
    with config.set(replicate_below=below):
        x = sp.array(a)
        row = x[2]  # a view: sees the writes below
        el = x[2, 1]  # element read: may keep a copy of the row
        assert el == a[2, 1]
        x[1:] = x[:-1]  # overlapping source and destination
        e[1:] = e[:-1].copy()
        x[2, :] = 1.5  # a float into float64
        e[2, :] = 1.5
        x[3] = numpy.float64(-2.0)
        e[3] = -2.0
        x[4] = sp.array(a[0].astype(numpy.float32))  # another dtype: the general path
        e[4] = a[0].astype(numpy.float32)
        x[5] = 7  # an int: the general path
        e[5] = 7
        x[:, 0] = x[:, 4][::-1]
        e[:, 0] = e[:, 4][::-1].copy()
        assert_eq(row, e[2], exact=True)
        assert x[2, 1] == e[2, 1]  # the element read after the write sees it
        assert_eq(x, e, exact=True)
        z = sp.zeros((4,), dtype=complex)
        z[1:3] = 2.5
        assert_eq(z, numpy.array([0, 2.5, 2.5, 0], dtype=complex), exact=True)
        with pytest.raises(ValueError, match="could not broadcast"):
            x[1] = x[2:4]


def test_replicated_writes_send_nothing():
    a = ref((8, 5), seed=6)
    with config.set(replicate_below=DEFAULT):
        x, y = sp.array(a), sp.array(a * 2)
        with sp.comm_stats() as st:
            for j in range(5):
                x[1:-1, j] = y[1:-1, 4 - j]
                x[0, j] = 0.5
        assert (st.messages_sent, st.messages_received, st.collectives) == (0, 0, 0), st
    e = a.copy()
    for j in range(5):
        e[1:-1, j] = 2 * a[1:-1, 4 - j]
        e[0, j] = 0.5
    assert_eq(x, e, exact=True)


def _broadcasts(xp, a, v, c, i8):
    r = [a - v, v * a, c * v[None, :], a[:, :1] + v, xp.hypot(c, a[:, 2:3]), a[:, None, :] * v[:, None]]
    r.append(xp.add(v, a, out=xp.empty_like(a)))
    r.append(i8[:, None] + i8[None, :3])  # int8 wraps as in NumPy
    r.append(xp.greater(a, v))
    t = a.copy()
    t[1:-1] += v  # out= of the broadcast shape
    t[:, 1] *= c[:, 0]
    r.append(t)
    return r


@pytest.mark.parametrize("below", [DEFAULT, 0, 30])
def test_broadcasting_operands_match_numpy(below):
    a, v, c = ref((7, 5), seed=7), ref((5,), seed=8), ref((7, 1), seed=9)
    i8 = numpy.array([100, 120, -128, 5], dtype=numpy.int8)
    expected = _broadcasts(numpy, a, v, c, i8)
    with config.set(replicate_below=below):
        xs = [sp.array(x) for x in (a, v, c, i8)]
        for _ in range(2):  # the second time through cached plans
            got = _broadcasts(sp, *xs)
            assert len(got) == len(expected)
            for g, e in zip(got, expected):
                assert_eq(g, e, exact=True)
        x, y = xs[0], xs[1]
        with pytest.raises(ValueError):
            x[:2] += x  # the output is smaller than the broadcast shape
        with pytest.raises(ValueError):
            x + y[:3]
        with numpy.errstate(divide="raise"), pytest.raises(FloatingPointError):
            x / (y * 0.0)


def _reductions(xp, a, i):
    return [
        a.sum(axis=1),
        xp.sum(a, axis=(0, 2)),
        a.mean(axis=-1, keepdims=True),
        a.std(axis=0, ddof=1),
        a.var(axis=(1, 2)),
        a.max(axis=2),
        a.min(axis=0, initial=0.25),
        a.prod(axis=1, dtype=numpy.float32),
        i.sum(axis=0),
        i.mean(axis=1),
        (a > 0.5).any(axis=1),
        (a > 0.5).all(axis=(0, 1)),
        a.sum(axis=(0, 1, 2)),
        a[:, :0].sum(axis=1),
    ]


@pytest.mark.parametrize("below", BELOW)
def test_axis_reductions_match_numpy(below):
    a, i = ref((4, 5, 6), seed=10), ref((6, 7), numpy.int64, seed=11)
    expected = _reductions(numpy, a, i)
    with config.set(replicate_below=below):
        x, y = sp.array(a), sp.array(i)
        got = _reductions(sp, x, y)
        for g, e in zip(got, expected):
            # Replicated: NumPy's own reduction; split: partial sums round differently.
            assert_eq(g, e, exact=below == DEFAULT, rtol=1e-12)
        with pytest.raises(numpy.exceptions.AxisError):
            x.sum(axis=3)
        with pytest.raises(TypeError):
            x.any(axis=0, initial=1)
        with numpy.errstate(over="raise"), pytest.raises(FloatingPointError):
            xs = sp.full((3, 2), 1e308)
            xs.sum(axis=0)


def _products(xp, m, n, v, w, s, i):
    return [w @ w, m @ v, w @ m, v @ n, m @ n, s @ n, n.T @ s[1].T, i @ i.T, xp.dot(m, v), m[2] @ n[:, 1], (1j * m) @ n]


@pytest.mark.parametrize("below", BELOW)
def test_products_match_numpy(below):
    m, n, v, w = ref((6, 5), seed=12), ref((5, 4), seed=13), ref((5,), seed=14), ref((6,), seed=15)
    s, i = ref((3, 6, 5), seed=16), ref((4, 3), numpy.int64, seed=17)
    expected = _products(numpy, m, n, v, w, s, i)
    with config.set(replicate_below=below):
        xs = [sp.array(x) for x in (m, n, v, w, s, i)]
        got = _products(sp, *xs)
        for g, e in zip(got, expected):
            assert_eq(g, e, exact=below == DEFAULT, rtol=1e-12)
        with pytest.raises(ValueError):
            xs[0] @ xs[0]
        with pytest.raises(ValueError):
            xs[2] @ xs[3]


@pytest.mark.parametrize("below", BELOW)
def test_temporaries_reused_as_numpy(below):
    # A temporary takes the result where NumPy's would have its dtype; the decision is
    # cached per layout and operand kind, so each case runs twice.
    i8 = numpy.array([100, -7, 3, 120], dtype=numpy.int8)
    f = ref((4,), seed=18)
    with config.set(replicate_below=below):
        x, y = sp.array(i8), sp.array(f)
        for _ in range(2):
            assert_eq((x * 1) + 5, (i8 * 1) + 5, exact=True)
            assert_eq((x * 1) + 2.5, (i8 * 1) + 2.5, exact=True)  # float64: not into the int8 temporary
            assert_eq((x * 1) + numpy.int16(3), (i8 * 1) + numpy.int16(3), exact=True)
            assert_eq((y * 2.0) - y, (f * 2.0) - f, exact=True)
            assert_eq((y * 2.0) * x, (f * 2.0) * i8, exact=True)
            assert_eq(1.5 - (y + 0.0), 1.5 - (f + 0.0), exact=True)
            with pytest.raises(OverflowError):
                (x * 1) + 300


@pytest.mark.parametrize("below", BELOW)
def test_numpy_integer_keys(below):
    a = ref((5, 6, 4), seed=19)
    idx = numpy.array([[0, 3], [4, 1]], dtype=numpy.int32)
    with config.set(replicate_below=below):
        x = sp.array(a)
        for _ in range(2):
            for k in (idx[0, 1], numpy.int64(-1), numpy.uint8(2)):
                assert_eq(x[1, k], a[1, k], exact=True)
                assert_eq(x[k, 1:], a[k, 1:], exact=True)
            assert_eq(x[numpy.array(2), :2], a[numpy.array(2), :2], exact=True)
        with pytest.raises(IndexError):
            x[numpy.int32(5)]


def test_results_of_one_shape_in_two_dtypes_reuse_their_layouts(monkeypatch):
    # ``r = d * d + 0.1; r[r > 0] = r[r > 0] ** -1.5`` (npbench's nbody) makes boolean and
    # float results of one shape in turn: each dtype finds its cached layout, none is made again.
    from spmdarray.core import whole

    made = []
    kind = whole._kind

    def recording(*args):
        made.append(args[3])
        return kind(*args)

    d = ref((7, 5), float, 3)
    x = sp.array(d)
    for step in range(4):
        if step == 1:  # (the first step makes each shape and dtype once)
            monkeypatch.setattr(whole, "_kind", recording)
        r = x * x - 0.5
        m = r > 0
        r[m] = r[m] ** -1.5
        e = d * d - 0.5
        e[e > 0] = e[e > 0] ** -1.5
        assert_eq(r, e, exact=True)
    assert made == [], made
