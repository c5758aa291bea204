"""``ufunc.reduce``/``accumulate`` and the engine's communication, temporaries and halo caches.

Run serially and under ``mpiexec -n 2/3/4``; every test body is SPMD and compares
the gathered result with NumPy's, dtype included.
"""

import re

import numpy
import pytest
from helpers import assert_eq, host, ref, world

import spmdarray as sp

# ------------------------------------------------------------- reduce / accumulate

REDUCE_UFUNCS = ["add", "multiply", "minimum", "maximum", "logical_and", "logical_or"]


@pytest.mark.parametrize("name", REDUCE_UFUNCS)
@pytest.mark.parametrize("axis", [0, 1, None, (0, 1), -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_ufunc_reduce(name, axis, keepdims):
    ufunc = getattr(numpy, name)
    a = ref((7, 5)) if name not in ("logical_and", "logical_or") else ref((7, 5), bool)
    if name == "multiply":
        a = 1 + a / 10
    x = sp.array(a)
    exp = ufunc.reduce(a, axis=axis, keepdims=keepdims)
    got = ufunc.reduce(x, axis=axis, keepdims=keepdims)
    if numpy.ndim(exp) == 0 and not keepdims:
        assert isinstance(got, numpy.generic)
    assert_eq(got, exp)


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "logical_or"])
def test_ufunc_reduce_int_and_3d(name):
    ufunc = getattr(numpy, name)
    a = ref((2, 9, 4), numpy.int32) % 5
    x = sp.array(a)
    for axis in (0, 1, 2, (0, 2), None):
        assert_eq(ufunc.reduce(x, axis=axis), ufunc.reduce(a, axis=axis))


def test_ufunc_reduce_default_axis_is_zero_and_dtype():
    a = ref((7, 5), numpy.int8)
    x = sp.array(a)
    assert_eq(numpy.add.reduce(x), numpy.add.reduce(a))
    assert_eq(numpy.add.reduce(x, axis=1, dtype=numpy.int64), numpy.add.reduce(a, axis=1, dtype=numpy.int64))
    o = sp.zeros((5,), numpy.int8)
    r = numpy.add.reduce(x, axis=0, out=o)
    assert r is o
    assert_eq(o, numpy.add.reduce(a, axis=0, out=numpy.zeros((5,), numpy.int8)))


def test_non_associative_reduce_raises_not_implemented():
    x = sp.array(ref((7, 5)))
    for ufunc in (numpy.subtract, numpy.divide, numpy.power, numpy.arctan2):
        with pytest.raises(NotImplementedError, match=ufunc.__name__):
            ufunc.reduce(x, axis=0)


@pytest.mark.parametrize("name", ["add", "multiply", "maximum"])
@pytest.mark.parametrize("shape", [(7, 5), (2, 9), (13,), (3, 4, 5)])
def test_ufunc_accumulate(name, shape):
    ufunc = getattr(numpy, name)
    a = 1 + ref(shape) / 10
    x = sp.array(a)
    for axis in range(len(shape)):
        assert_eq(ufunc.accumulate(x, axis=axis), ufunc.accumulate(a, axis=axis))
    ai = ref(shape, numpy.int16) % 4
    assert_eq(ufunc.accumulate(sp.array(ai), axis=0), ufunc.accumulate(ai, axis=0))


def test_accumulate_on_a_view_and_with_dtype():
    a = ref((8, 6), numpy.int8)
    x = sp.array(a)
    assert_eq(numpy.add.accumulate(x.T, axis=1), numpy.add.accumulate(a.T, axis=1))
    assert_eq(numpy.add.accumulate(x[::-1, 1:], axis=0), numpy.add.accumulate(a[::-1, 1:], axis=0))
    assert_eq(numpy.add.accumulate(x, axis=0, dtype=numpy.int64), numpy.add.accumulate(a, axis=0, dtype=numpy.int64))


def test_non_associative_accumulate_raises_not_implemented():
    x = sp.array(ref((7, 5)))
    with pytest.raises(NotImplementedError, match="subtract"):
        numpy.subtract.accumulate(x, axis=0)


@pytest.mark.parametrize("method", ["at", "reduceat"])
def test_at_reduceat_raise_not_implemented(method):
    x = sp.array(ref((4, 3)))
    with pytest.raises(NotImplementedError, match=method):
        if method == "at":
            numpy.add.at(x, [0, 1], 1.0)
        else:
            numpy.add.reduceat(x, [0, 2])
    # the failed call did not change x
    assert_eq(x, ref((4, 3)), exact=True)


# --------------------------------------------------------------- communication


def test_aligned_elementwise_sends_nothing():
    a, b = ref((13, 11)), ref((13, 11), seed=1)
    x, y = sp.array(a), sp.array(b)
    o = sp.empty((13, 11))
    with sp.comm_stats() as s:
        z = x * y + 2.0
        numpy.sin(z, out=o)
        w = numpy.hypot(x, o)
        x += w
    assert s.bytes_sent == 0
    assert s.messages_sent == 0
    assert s.collectives == 0
    assert_eq(x, a + numpy.hypot(a, numpy.sin(a * b + 2.0)), exact=True)


def test_numpy_operands_and_scalars_send_nothing():
    a, b = ref((13, 11)), ref((11,), seed=1)
    x = sp.array(a)
    with sp.comm_stats() as s:
        z = x + b
        z = z * numpy.float32(2) - 1
    assert s.bytes_sent == 0 and s.messages_sent == 0
    assert_eq(z, (a + b) * numpy.float32(2) - 1, exact=True)


def test_shifted_view_sends_only_edges():
    _, size = world()
    a = ref((16, 16))
    x = sp.array(a)
    with sp.comm_stats() as s:
        z = x[1:, :] + x[:-1, :]
    assert_eq(z, a[1:, :] + a[:-1, :], exact=True)
    if size == 1:
        assert s.bytes_sent == 0
    from mpi4py import MPI

    total = MPI.COMM_WORLD.allreduce(s.bytes_sent)
    # never more than one row of the array per rank
    assert total <= size * 16 * 8


def test_error_message_text_is_numpys():
    # documented text of the broadcasting error; no spaces inside the shapes
    x, y = sp.ones((7, 5)), sp.ones((4, 5))
    with pytest.raises(ValueError, match=re.escape("shapes (7,5) (4,5)")):
        x * y


# ------------------------------------------------------------------ temporaries


def test_named_operands_are_never_overwritten():
    a, b = ref((7, 5)), ref((7, 5), seed=1)
    x, y = sp.array(a), sp.array(b)
    z = x + y
    w = z * 2.0
    v = 1.0 - z
    assert_eq(z, a + b, exact=True)
    assert_eq(w, (a + b) * 2.0, exact=True)
    assert_eq(v, 1.0 - (a + b), exact=True)
    assert_eq(x, a, exact=True)
    assert_eq(y, b, exact=True)


def test_chained_temporaries_give_numpys_values():
    a, b = ref((7, 5)), ref((7, 5), seed=1)
    x, y = sp.array(a), sp.array(b)
    assert_eq(((x + y) * 0.2 - x) / (y * y + 1.0), ((a + b) * 0.2 - a) / (b * b + 1.0), exact=True)
    assert_eq(2.0 ** (x * 0.5) % 0.3, 2.0 ** (a * 0.5) % 0.3, exact=True)
    assert_eq((x + y) * (x - y), (a + b) * (a - b), exact=True)
    i = ref((7, 5), numpy.int16)
    n = sp.array(i)
    assert_eq((n + 1) / 2, (i + 1) / 2, exact=True)  # dtype changes: no reuse
    assert_eq((n * 3) // 2 + (n > 0), (i * 3) // 2 + (i > 0))


def test_temporary_whose_storage_a_view_still_shares_is_not_reused():
    a = ref((6, 6))
    x = sp.array(a)
    kept = []

    def make():
        t = x + 1.0
        kept.append(t.T)
        return t

    r = make() * 3.0
    assert_eq(r, (a + 1.0) * 3.0, exact=True)
    assert_eq(kept[0], (a + 1.0).T, exact=True)


def test_temporary_whose_local_block_is_held_is_not_reused():
    a = ref((6, 6))
    x = sp.array(a)
    kept = []

    def make():
        t = x + 1.0
        kept.append(t.local.copy())
        kept.append(t.local)
        kept.append(t.local[::-1])
        return t

    r = make() * 3.0
    assert_eq(r, (a + 1.0) * 3.0, exact=True)
    numpy.testing.assert_array_equal(host(kept[1]), host(kept[0]))
    numpy.testing.assert_array_equal(host(kept[2]), host(kept[0][::-1]))


def test_from_local_block_is_not_overwritten_by_an_operator():
    rank, size = world()
    blk = numpy.arange(6.0).reshape(2, 3) + 10 * rank
    saved = blk.copy()
    r = sp.from_local(blk) * 2.0
    numpy.testing.assert_array_equal(blk, saved)
    numpy.testing.assert_array_equal(host(r.local), saved * 2.0)
    r2 = sp.from_local(blk[:, 1:]) + 1.0
    numpy.testing.assert_array_equal(blk, saved)
    numpy.testing.assert_array_equal(host(r2.local), saved[:, 1:] + 1.0)


def test_local_kept_on_some_ranks_only_gives_the_same_result_everywhere():
    rank, _ = world()
    a, b = ref((6, 6)), ref((6,), seed=1)
    x, y = sp.array(a), sp.array(b)
    kept = []

    def make(view):
        t = view + 1.0  # a temporary living where the view lives
        if rank == 0:
            kept.append(t.local)  # not collective: only rank 0 holds its block
        return t

    assert_eq(make(x[2]) * y, (a[2] + 1.0) * b, exact=True)
    assert_eq(make(x[:, 4]) - y, (a[:, 4] + 1.0) - b, exact=True)
    assert_eq(make(x.T) / x, (a.T + 1.0) / a, exact=True)
    assert_eq(make(x[::-1]) + x, (a[::-1] + 1.0) + a, exact=True)


# ------------------------------------------------------- cached halos after writes


def _writes():
    """Collective writes into the base ``x`` (and NumPy's ``a``), each through another path."""

    def setitem(x, a):
        x[2:5, 1:] = 7.0
        a[2:5, 1:] = 7.0

    def inplace_view(x, a):
        v = x[1:, :]
        v *= 2.0
        a[1:, :] *= 2.0

    def ufunc_out_view(x, a):
        numpy.negative(x[:, 2:], out=x[:, 2:])
        numpy.negative(a[:, 2:], out=a[:, 2:])

    def transposed_out(x, a):
        numpy.add(x.T, 1.0, out=x.T)
        a += 1.0

    def reduce_out(x, a):
        x.sum(axis=0, out=x[3])
        a[3] = a.sum(axis=0)

    def accumulate_out(x, a):
        numpy.add.accumulate(x, axis=1, out=x)
        numpy.add.accumulate(a, axis=1, out=a)

    def matmul_out(x, a):
        numpy.matmul(x[:, :7], numpy.eye(7) * 0.5, out=x[:, :7])
        a[:, :7] = a[:, :7] @ (numpy.eye(7) * 0.5)

    def fill(x, a):
        x[::2].fill(-3.0)
        a[::2] = -3.0

    def where_out(x, a):
        m = numpy.arange(8 * 9).reshape(8, 9) % 3 == 0
        numpy.multiply(x, 10.0, out=x, where=m)
        numpy.multiply(a, 10.0, out=a, where=m)

    return [
        setitem,
        inplace_view,
        ufunc_out_view,
        transposed_out,
        reduce_out,
        accumulate_out,
        matmul_out,
        fill,
        where_out,
    ]


@pytest.mark.parametrize("write", _writes(), ids=lambda f: f.__name__)
def test_cached_halos_see_every_write(write):
    a = ref((8, 9))
    x = sp.array(a)
    # fill halo caches of several shifted views
    assert_eq(x[1:, :] - x[:-1, :], a[1:, :] - a[:-1, :], exact=True)
    assert_eq(x[:, 1:] + x[:, :-1], a[:, 1:] + a[:, :-1], exact=True)
    assert_eq(x[1:, 1:] * x[:-1, :-1], a[1:, 1:] * a[:-1, :-1], exact=True)
    write(x, a)
    assert_eq(x, a, rtol=1e-12)
    assert_eq(x[1:, :] - x[:-1, :], a[1:, :] - a[:-1, :], rtol=1e-12, atol=1e-12)
    assert_eq(x[:, 1:] + x[:, :-1], a[:, 1:] + a[:, :-1], rtol=1e-12, atol=1e-12)
    assert_eq(x[1:, 1:] * x[:-1, :-1], a[1:, 1:] * a[:-1, :-1], rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------- layouts of operands


def test_operands_from_reductions_and_differently_laid_out_views():
    a, b = ref((9, 7)), ref((7, 9), seed=1)
    x, y = sp.array(a), sp.array(b)
    s0 = x.sum(axis=0)  # replicated along the reduced grid axis
    s1 = x.max(axis=1, keepdims=True)
    assert_eq(s0 + y.T, a.sum(axis=0) + b.T, rtol=1e-12, atol=1e-13)
    assert_eq(y[:, ::-1].T * s1, b[:, ::-1].T * a.max(axis=1, keepdims=True), exact=True)
    assert_eq(s0 * y[2, :7], a.sum(axis=0) * b[2, :7], rtol=1e-12)
    assert_eq(x[4] + y[:, 3], a[4] + b[:, 3], exact=True)  # two views living on different ranks
    o = sp.zeros((7, 9))
    numpy.add(x.T, y, out=o, where=sp.array(b > 0))
    no = numpy.zeros((7, 9))
    numpy.add(a.T, b, out=no, where=b > 0)
    assert_eq(o, no, exact=True)
    q = sp.zeros((9, 7))
    numpy.subtract(y.T, s0, out=q)  # out laid out like x, inputs transposed / replicated
    assert_eq(q, b.T - a.sum(axis=0), rtol=1e-12, atol=1e-13)


def test_arrays_on_different_communicators_raise():
    from mpi4py import MPI

    x = sp.ones((4, 3))
    y = sp.ones((4, 3), comm=MPI.COMM_SELF)  # a different communicator, even with one rank
    with pytest.raises(ValueError, match="communicator"):
        x + y
    assert_eq(y * 2, numpy.full((4, 3), 2.0))
