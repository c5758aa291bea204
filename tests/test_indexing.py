"""Basic indexing, assignment and reshaping against NumPy, at any rank count.

Run serially and under ``mpiexec -n 2/3/4 python -m pytest tests/test_indexing.py``.
Every test body is SPMD: all ranks index the same global arrays with the same keys
and compare the gathered result with NumPy's.  Views alias one allocation per rank,
so each write is checked through the base array and through the other views.

The randomised tests use hypothesis with ``derandomize=True`` and no database, so
every rank draws the same examples: a collective needs every rank to take part.
"""

import re

import numpy
import pytest
from helpers import assert_eq, block, world
from helpers import ref as _ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spmdarray as sp


def ref(shape, dtype=float, seed=0):
    """``helpers.ref`` as an array also for 0-d bool (it gives a NumPy scalar there)."""
    return numpy.asarray(_ref(shape, dtype, seed))


def _arange(shape, dtype=float):
    return numpy.arange(int(numpy.prod(shape)), dtype=dtype).reshape(shape)


def _check_unchanged_and_usable(x, a):
    """After an error: the array still equals NumPy's and the next collective works."""
    assert_eq(x, a)
    assert_eq(x * 2, a * 2)


# ---------------------------------------------------------------------- views


def test_write_through_a_view_is_seen_by_the_base_and_other_views():
    a = _arange((8, 6))
    x = sp.array(a)
    v = x[2:6, 1:5]
    w = x[1:7, ::-1]
    v[0, 0] = 100.0
    a[2:6, 1:5][0, 0] = 100.0
    assert_eq(x, a)
    assert_eq(w, a[1:7, ::-1])
    w[1:3, 2] = -1.0
    a[1:7, ::-1][1:3, 2] = -1.0
    assert_eq(x, a)
    assert_eq(v, a[2:6, 1:5])
    x[...] = 7.0  # a write through the base is seen by every view
    assert_eq(v, numpy.full((4, 4), 7.0))
    assert_eq(w, numpy.full((6, 6), 7.0))


def test_views_of_views():
    a = _arange((9, 7))
    x = sp.array(a)
    v = x[1:8, ::2][::-1, 1:][1:, None, ::-1]
    e = a[1:8, ::2][::-1, 1:][1:, None, ::-1]
    assert_eq(v, e)
    v[0, 0, 0] = -5.0
    e[0, 0, 0] = -5.0
    assert_eq(x, a)
    v[...] = numpy.arange(3.0)
    e[...] = numpy.arange(3.0)
    assert_eq(x, a)
    assert_eq(v, e)
    assert v.base is not None and x.base is None


def test_shifted_views_see_writes():
    a = _arange((10, 4))
    x = sp.array(a)
    assert_eq(x[1:] + x[:-1], a[1:] + a[:-1])  # exchanges (and caches) halo cells
    x[3:7] = -1.0
    a[3:7] = -1.0
    assert_eq(x[1:] + x[:-1], a[1:] + a[:-1])  # stale halo cells would show the old values
    x[:, ::-1][2] = 50.0
    a[:, ::-1][2] = 50.0
    assert_eq(x[2:] - x[:-2], a[2:] - a[:-2])


@pytest.mark.parametrize("shape", [(7, 5), (2, 9), (1, 4), (0, 3)], ids=str)
def test_transpose_views(shape):
    a = _arange(shape)
    x = sp.array(a)
    assert_eq(x.T, a.T)
    assert_eq(x.transpose(), a.transpose())
    assert_eq(x.transpose(1, 0), a.transpose(1, 0))
    assert_eq(x.transpose((1, 0)), a.transpose((1, 0)))
    assert_eq(x.transpose([-1, 0]), a.transpose([-1, 0]))
    assert_eq(x.transpose(None), a.transpose(None))
    assert_eq(x.T.T, a)
    if a.size:
        x.T[-1, 0] = 1000.0
        a.T[-1, 0] = 1000.0
        assert_eq(x, a)
        x[::-1].T[0, 1:] = -3.0
        a[::-1].T[0, 1:] = -3.0
        assert_eq(x, a)


def test_transpose_3d_and_writes():
    a = _arange((3, 4, 5))
    x = sp.array(a)
    for axes in [(2, 0, 1), (1, 2, 0), (0, 2, 1), (2, 1, 0), (-1, 0, -2)]:
        assert_eq(x.transpose(axes), a.transpose(axes))
        assert_eq(x.transpose(*axes)[::-1, 1:], a.transpose(*axes)[::-1, 1:])
    t = x.transpose(1, 2, 0)
    t[1, :, 2] = -1.0
    a.transpose(1, 2, 0)[1, :, 2] = -1.0
    assert_eq(x, a)
    assert_eq(x.T, a.T)
    assert_eq(sp.array(numpy.arange(5)).T, numpy.arange(5).T)


@pytest.mark.parametrize("axes", [(0, 0), (0, 2), (0,), (0, 1, 2), (1, -3)], ids=str)
def test_transpose_errors_match_numpy(axes):
    a = _arange((3, 4))
    x = sp.array(a)
    with pytest.raises(Exception) as expected:
        a.transpose(axes)
    with pytest.raises(expected.type, match=re.escape(str(expected.value))):
        x.transpose(axes)
    _check_unchanged_and_usable(x, a)


NEG_STEP_KEYS = [
    (slice(None, None, -1),),
    (slice(5, 1, -2), slice(None, None, -3)),
    (slice(None, None, -2), slice(-1, 0, -1)),
    (slice(-2, None, -3), 3),
    (slice(None), slice(None, None, -1)),
    (slice(100, -100, -1), slice(4, -100, -2)),
    (slice(1, 5, -1),),
]


@pytest.mark.parametrize("key", NEG_STEP_KEYS, ids=str)
def test_negative_steps(key):
    a = _arange((8, 6))
    x = sp.array(a)
    assert_eq(x[key], a[key])
    assert_eq(x[key][::-1], a[key][::-1])
    x[key] = -x[key]
    a[key] = -a[key]
    assert_eq(x, a)


ELLIPSIS_NONE_KEYS = [
    (Ellipsis, 1),
    (1, Ellipsis),
    (None, Ellipsis, None, 2),
    (slice(None), None, 1),
    (None,),
    (None, None),
    (Ellipsis, None),
    (1, None, slice(1, 3), Ellipsis),
    (Ellipsis,),
    (Ellipsis, slice(None, None, -1), None),
]


@pytest.mark.parametrize("key", ELLIPSIS_NONE_KEYS, ids=str)
def test_ellipsis_and_newaxis(key):
    a = _arange((2, 3, 4))
    x = sp.array(a)
    assert_eq(x[key], a[key])
    x[key] = 99.0
    a[key] = 99.0
    assert_eq(x, a)


@pytest.mark.parametrize(
    "key",
    [2, -1, (slice(None), 0), (slice(None), -1), (1, slice(None), 2), (0, 0), (slice(1, 3), 3), (-2, -3)],
    ids=str,
)
def test_integer_indexing_drops_axes(key):
    a = _arange((4, 5, 6))
    x = sp.array(a)
    v = x[key]
    assert isinstance(v, sp.ndarray)
    assert v.shape == a[key].shape
    assert_eq(v, a[key])
    v[...] = -7.0  # still a view of the base
    a[key] = -7.0
    assert_eq(x, a)


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.int64, numpy.bool_, numpy.complex128, numpy.uint8])
@pytest.mark.parametrize("key", [(0, 0), (6, 4), (-1, -1), (3, 2), (numpy.int32(5), numpy.int64(-2))], ids=str)
def test_full_integer_index_gives_the_numpy_scalar_on_every_rank(key, dtype):
    from mpi4py import MPI

    a = ref((7, 5), dtype)
    x = sp.array(a)
    got = x[key]
    exp = a[key]
    assert type(got) is type(exp)
    assert got == exp
    assert MPI.COMM_WORLD.allgather(got) == [exp] * MPI.COMM_WORLD.Get_size()
    assert type(x.T[key[::-1]]) is type(exp) and x.T[key[::-1]] == exp
    assert x[key[0]][key[1]] == exp


def test_0d_indexing_matches_numpy():
    a = numpy.array(2.5)
    x = sp.array(a)
    assert type(x[()]) is type(a[()]) and x[()] == a[()]
    assert_eq(x[...], a[...])  # ``...`` gives a 0-d array, not a scalar
    assert_eq(x[None], a[None])
    b = _arange((3, 4))
    y = sp.array(b)
    assert_eq(y[1, 2, ...], b[1, 2, ...])
    assert_eq(y[..., 1, 2], b[..., 1, 2])
    assert_eq(y[1, 2, None], b[1, 2, None])
    v = y[1, 2, ...]
    v[...] = 50.0  # a 0-d view writes through
    b[1, 2] = 50.0
    assert_eq(y, b)
    x[...] = 4.0
    assert x[()] == 4.0
    x[()] = -1.0
    assert_eq(x, numpy.array(-1.0))


# ------------------------------------------------------------------ __setitem__


def test_setitem_scalars_with_numpy_casting():
    a = _arange((7, 5), numpy.int64)
    x = sp.array(a)
    cases = [((1, 2), 5), ((slice(2, 4),), 2.7), ((Ellipsis, 0), -3.9), ((slice(None), slice(None, None, 2)), True)]
    for key, value in cases:
        x[key] = value
        a[key] = value
        assert_eq(x, a)
    b = numpy.zeros((6,), bool)
    y = sp.array(b)
    y[::2] = 5
    b[::2] = 5
    assert_eq(y, b)
    c = numpy.zeros((6,), numpy.complex128)
    z = sp.array(c)
    z[1:3] = 1 - 2j
    c[1:3] = 1 - 2j
    assert_eq(z, c)
    x[2] = numpy.float32(1.5)
    a[2] = numpy.float32(1.5)
    assert_eq(x, a)
    x[1:3] = sp.array(6.0)  # a 0-d distributed value
    a[1:3] = 6.0
    assert_eq(x, a)


def test_setitem_numpy_arrays():
    a = _arange((7, 5))
    x = sp.array(a)
    cases = [
        ((slice(1, 4),), ref((3, 5), seed=1)),
        ((slice(None, None, -2), slice(1, None)), ref((4, 4), seed=2)),
        ((slice(None), 3), ref((7,), seed=3)),
        ((Ellipsis,), ref((7, 5), numpy.int64, seed=4)),
        ((2,), ref((5,), numpy.float32, seed=5)),
    ]
    for key, value in cases:
        x[key] = value
        a[key] = value
        assert_eq(x, a)
    x[1:3, 1:3] = [[1, 2], [3, 4]]  # nested lists too
    a[1:3, 1:3] = [[1, 2], [3, 4]]
    assert_eq(x, a)


_ALL, _REV = slice(None), slice(None, None, -1)
SELF_ASSIGN = {  # name: (destination key, value made from the same array)
    "x[1:] = x[:-1]": (slice(1, None), lambda x: x[:-1]),
    "x[:-1] = x[1:]": (slice(None, -1), lambda x: x[1:]),
    "x[2:] = x[:-2]": (slice(2, None), lambda x: x[:-2]),
    "x[::-1] = x": (_REV, lambda x: x),
    "x[:, ::-1] = x": ((_ALL, _REV), lambda x: x),
    "x[:, 0] = x[2]": ((_ALL, 0), lambda x: x[2]),
    "x[1] = x[:, 3]": (1, lambda x: x[:, 3]),
    "x[...] = x.T": (Ellipsis, lambda x: x.T),
    "x[1:4, 1:4] = x[1:4, 1:4].T": ((slice(1, 4), slice(1, 4)), lambda x: x[1:4, 1:4].T),
    "x[::2] = x[1::2]": (slice(None, None, 2), lambda x: x[1::2]),
    "x[1:, 1:] = x[:-1, :-1]": ((slice(1, None), slice(1, None)), lambda x: x[:-1, :-1]),
    "x[...] = x[::-1, ::-1]": (Ellipsis, lambda x: x[::-1, ::-1]),
    "x[:3] = x[-1]": (slice(None, 3), lambda x: x[-1]),
}
SELF_ASSIGN_1D = {
    "x[1:] = x[:-1]": (slice(1, None), lambda x: x[:-1]),
    "x[:-1] = x[1:]": (slice(None, -1), lambda x: x[1:]),
    "x[::-1] = x": (_REV, lambda x: x),
    "x[1::2] = x[:-1:2]": (slice(1, None, 2), lambda x: x[:-1:2]),
    "x[1:] = x[:0:-1]": (slice(1, None), lambda x: x[:0:-1]),
    "x[:-3] = x[3:]": (slice(None, -3), lambda x: x[3:]),
}
# NumPy skips its overlap check when the destination is 1-D and the strides have the same
# sign, so an assignment whose operands cross (a row from a column of the same matrix)
# gives whatever its copy loop's order yields.  spmdarray gives the as-if-copied result.
NUMPY_ORDER_DEPENDENT = {"x[1] = x[:, 3]"}


def _check_self_assignment(cases, case, shape):
    key, value = cases[case]
    a = _arange(shape)
    x = sp.array(a)
    expected = a.copy()
    try:
        expected[key] = value(expected).copy()  # the value as if copied first
    except ValueError as e:
        with pytest.raises(ValueError, match=re.escape(str(e))):
            x[key] = value(x)
        _check_unchanged_and_usable(x, a)
        return
    if case not in NUMPY_ORDER_DEPENDENT:
        inplace = a.copy()
        inplace[key] = value(inplace)  # NumPy itself, overlapping operands
        numpy.testing.assert_array_equal(inplace, expected)
    x[key] = value(x)
    assert_eq(x, expected)


@pytest.mark.parametrize("shape", [(6, 6), (8, 8), (6, 7)], ids=str)
@pytest.mark.parametrize("case", list(SELF_ASSIGN))
def test_setitem_from_the_same_array_has_numpy_semantics(case, shape):
    _check_self_assignment(SELF_ASSIGN, case, shape)


@pytest.mark.parametrize("shape", [(7,), (12,), (100,)], ids=str)
@pytest.mark.parametrize("case", list(SELF_ASSIGN_1D))
def test_setitem_from_the_same_1d_array_has_numpy_semantics(case, shape):
    _check_self_assignment(SELF_ASSIGN_1D, case, shape)


def test_setitem_from_arrays_of_other_layouts():
    rank, size = world()
    a = _arange((7, 5))
    b = ref((5, 7), seed=1)
    x = sp.array(a)
    y = sp.array(b)
    x[:, 0] = y[2]  # a row of another array into a column
    a[:, 0] = b[2]
    assert_eq(x, a)
    x[...] = y.T
    a[...] = b.T
    assert_eq(x, a)
    x[1:4, ::-1] = y[:, :3].T
    a[1:4, ::-1] = b[:, :3].T
    assert_eq(x, a)
    # A from_local array with uneven blocks (one of them empty) as the value.
    rows = [(k + 2) % 3 for k in range(size)]
    full = ref((sum(rows), 5), seed=2)
    lo = sum(rows[:rank])
    z = sp.from_local(block(full[lo : lo + rows[rank]].copy()))
    n = min(7, full.shape[0])
    x[:n] = z[:n]
    a[:n] = full[:n]
    assert_eq(x, a)
    z[...] = x[-len(full) :][::-1]
    full[...] = a[-len(full) :][::-1]
    assert_eq(z, full)
    # A value from a transposed 3-D array.
    c = ref((5, 2, 7), seed=3)
    x[...] = sp.array(c)[:, 1, :].T[::-1, :5].T.T
    a[...] = c[:, 1, :].T[::-1, :5].T.T
    assert_eq(x, a)


def test_setitem_broadcasts_values():
    a = _arange((7, 5))
    x = sp.array(a)
    x[...] = numpy.arange(5)
    a[...] = numpy.arange(5)
    assert_eq(x, a)
    x[:, 1:3] = numpy.arange(7.0)[:, None]
    a[:, 1:3] = numpy.arange(7.0)[:, None]
    assert_eq(x, a)
    x[...] = sp.arange(5.0) * 10  # a distributed row broadcast down the columns
    a[...] = numpy.arange(5.0) * 10
    assert_eq(x, a)
    x[::-1, ::2] = sp.array(numpy.arange(7.0)[:, None])
    a[::-1, ::2] = numpy.arange(7.0)[:, None]
    assert_eq(x, a)
    x.fill(3.0)
    a.fill(3.0)
    assert_eq(x, a)


def test_setitem_values_with_leading_length_1_axes():
    a = _arange((8, 6))
    x = sp.array(a)
    x[2:4] = numpy.ones((1, 1, 2, 6))
    a[2:4] = numpy.ones((1, 1, 2, 6))
    assert_eq(x, a)
    x[3] = numpy.full((1, 6), 5.0)
    a[3] = numpy.full((1, 6), 5.0)
    assert_eq(x, a)
    x[5] = sp.full((1, 1, 6), -2.0)
    a[5] = numpy.full((1, 1, 6), -2.0)
    assert_eq(x, a)
    x[1, 1, ...] = numpy.array([[9.0]])  # with ``...`` a view, so the value may have length-1 axes
    a[1, 1, ...] = numpy.array([[9.0]])
    assert_eq(x, a)
    x[1, 2] = numpy.array(4.0)  # a 0-d value into one element
    a[1, 2] = numpy.array(4.0)
    assert_eq(x, a)


@pytest.mark.parametrize(
    "value",
    [numpy.array([[9.0]]), numpy.array([9.0]), [9.0], (9.0,), numpy.ones(2), "distributed"],
    ids=["(1,1)", "(1,)", "list", "tuple", "(2,)", "distributed"],
)
def test_setitem_one_element_needs_a_0d_value(value):
    a = _arange((4, 3))
    x = sp.array(a)
    for key in [(1, 1), (-1, 0)]:
        v = sp.ones((1,)) if isinstance(value, str) else value
        with pytest.raises(ValueError, match=re.escape("setting an array element with a sequence.")):
            a[key] = numpy.ones((1,)) if isinstance(value, str) else value
        with pytest.raises(ValueError, match=re.escape("setting an array element with a sequence.")):
            x[key] = v
        _check_unchanged_and_usable(x, a)
    z = sp.array(2.0)
    with pytest.raises(ValueError, match=re.escape("setting an array element with a sequence.")):
        z[()] = sp.ones((1,)) if isinstance(value, str) else value
    assert_eq(z, numpy.array(2.0))


# ----------------------------------------------------------------------- errors

GET_ERRORS = [
    10,
    -9,
    (1, 6),
    (slice(None), -7),
    (1, 2, 3),
    (Ellipsis, 1, 2, 3),
    1.5,
    "a",
    (Ellipsis, Ellipsis),
    (0, slice(None), None, 0, 0),
]


@pytest.mark.parametrize("key", GET_ERRORS, ids=str)
def test_getitem_errors_match_numpy(key):
    a = _arange((8, 6))
    x = sp.array(a)
    with pytest.raises(IndexError) as expected:
        a[key]
    with pytest.raises(IndexError, match=re.escape(str(expected.value))):
        x[key]
    with pytest.raises(IndexError, match=re.escape(str(expected.value))):
        x[key] = 1.0
    _check_unchanged_and_usable(x, a)


def test_out_of_bounds_messages_are_numpy_s():
    x = sp.zeros((4, 3))
    with pytest.raises(IndexError, match=re.escape("index 4 is out of bounds for axis 0 with size 4")):
        x[4]
    with pytest.raises(IndexError, match=re.escape("index -4 is out of bounds for axis 1 with size 3")):
        x[0, -4]
    with pytest.raises(IndexError, match=re.escape("too many indices for array: array is 2-dimensional, but 3 were")):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 0"):
        sp.zeros((0, 3))[0]
    with pytest.raises(IndexError, match="too many indices for array: array is 0-dimensional, but 1 were"):
        sp.array(1.0)[0]


SET_ERRORS = [
    ((slice(2, 4),), numpy.ones((3, 6))),
    ((slice(2, 4),), numpy.ones((2, 2, 6))),
    ((slice(2, 4),), numpy.ones(5)),
    ((slice(2, 4),), [1, 2, 3]),
    ((1,), numpy.ones((2, 6))),
    ((Ellipsis,), numpy.ones((8, 1, 6))),
    ((slice(None), 0), numpy.ones(6)),
    ((0, 0), numpy.ones(2)),
]


@pytest.mark.parametrize("key, value", SET_ERRORS, ids=[f"{k}={numpy.shape(v)}" for k, v in SET_ERRORS])
@pytest.mark.parametrize("distributed", [False, True], ids=["numpy-value", "spmdarray-value"])
def test_setitem_shape_mismatch_raises_numpy_s_value_error(key, value, distributed):
    a = _arange((8, 6))
    x = sp.array(a)
    with pytest.raises(ValueError) as expected:
        a[key] = value
    v = sp.array(value) if distributed else value
    with pytest.raises(ValueError, match=re.escape(str(expected.value))):
        x[key] = v
    _check_unchanged_and_usable(x, a)


@pytest.mark.parametrize(
    "key, value",
    [(1, "abc"), (2, 1 + 2j), (slice(None), None), (0, [1, 2, [3]]), (0, "1.5"), (slice(1, 3), numpy.nan)],
    ids=["str", "complex", "None", "ragged", "numeric-str", "nan"],
)
def test_setitem_unusual_values_behave_like_numpy(key, value):
    a = _arange((4, 3))
    x = sp.array(a)
    try:
        a[key] = value
    except (TypeError, ValueError) as e:
        with pytest.raises(type(e)):
            x[key] = value
        a = _arange((4, 3))
    else:
        x[key] = value
    _check_unchanged_and_usable(x, a)


ADVANCED = ["list", "int-array", "bool-array", "bool-mask", "distributed-mask", "True", "tuple-with-list", "0d-bool"]


def _advanced_key(name, x):
    return {
        "list": [1, 2],
        "int-array": numpy.array([0, 3]),
        "bool-array": numpy.ones(8, bool),
        "bool-mask": numpy.asarray(x) > 3,
        "distributed-mask": x > 3,
        "True": True,
        "tuple-with-list": (slice(None), [0, 1]),
        "0d-bool": numpy.array(True),
    }[name]


@pytest.mark.parametrize("name", ADVANCED)
def test_advanced_indexing_matches_numpy(name):
    # Full coverage is in test_advanced_indexing.py; here every kind of key once.
    a = _arange((8, 6))
    x = sp.array(a)
    key = _advanced_key(name, x)
    nkey = numpy.asarray(key) if isinstance(key, sp.ndarray) else key
    assert_eq(x[key], a[nkey], exact=True)
    x[key] = 0.0
    a[nkey] = 0.0
    assert_eq(x, a, exact=True)


# ------------------------------------------------------ reshape / ravel / flatten


@pytest.mark.parametrize(
    "src, dst",
    [
        ((4, 6), (1, 4, 6)),
        ((4, 6), (4, 1, 6, 1)),
        ((1, 24), (24,)),
        ((4, 1, 6), (4, 6)),
        ((3,), (1, 3, 1)),
        ((), (1, 1)),
    ],
    ids=str,
)
def test_reshape_of_length_1_axes_is_a_view(src, dst):
    a = _arange(src)
    x = sp.array(a)
    v = x.reshape(dst)
    assert_eq(v, a.reshape(dst))
    v[(0,) * len(dst)] = -100.0
    a.reshape(dst)[(0,) * len(dst)] = -100.0
    assert_eq(x, a)  # the write went through to the base
    v[...] = 3.0
    assert_eq(x, numpy.full(src, 3.0))


RESHAPES = [
    ((4, 6), (6, 4)),
    ((4, 6), (-1,)),
    ((4, 6), (2, 3, 4)),
    ((4, 6), (3, -1)),
    ((4, 6), (24, 1)),
    ((4, 6), (2, 12)),
    ((7, 5), (5, 7)),
    ((7, 5), (35,)),
    ((2, 3, 4), (4, -1)),
    ((2, 3, 4), (24,)),
    ((0, 3), (3, 0)),
    ((0, 4), (2, 0, 3)),
    ((1,), ()),
    ((6,), (2, 3)),
]


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("src, dst", RESHAPES, ids=str)
def test_reshape_values_match_numpy(src, dst, order):
    a = _arange(src)
    x = sp.array(a)
    assert_eq(x.reshape(dst, order=order), a.reshape(dst, order=order))
    assert_eq(sp.reshape(x, dst, order=order), numpy.reshape(a, dst, order=order))
    if len(dst) > 1:
        assert_eq(x.reshape(*dst, order=order), a.reshape(*dst, order=order))
    if a.ndim == 2:
        assert_eq(x.T.reshape(dst, order=order), a.T.reshape(dst, order=order))
        assert_eq(x[::-1, ::-1].reshape(dst, order=order), a[::-1, ::-1].reshape(dst, order=order))
    assert_eq(x, a)


@pytest.mark.parametrize("dst", [(5, 5), (-1, -1), (7,), (0, -1), (5, -1)], ids=str)
def test_reshape_errors_match_numpy(dst):
    a = _arange((4, 6))
    x = sp.array(a)
    with pytest.raises(ValueError) as expected:
        a.reshape(dst)
    with pytest.raises(ValueError, match=re.escape(str(expected.value))):
        x.reshape(dst)
    with pytest.raises(ValueError, match="order must be one of"):
        x.reshape(24, order="X")
    _check_unchanged_and_usable(x, a)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape", [(4, 6), (7, 5), (2, 3, 4), (5,), (0, 3), ()], ids=str)
def test_ravel_and_flatten(shape, order):
    a = _arange(shape)
    x = sp.array(a)
    assert_eq(x.ravel(order), a.ravel(order))
    assert_eq(sp.ravel(x, order=order), numpy.ravel(a, order=order))
    f = x.flatten(order)
    assert_eq(f, a.flatten(order))
    if f.size:
        f[0] = -1.0  # flatten always copies, as NumPy's
        assert_eq(x, a)
    if a.ndim >= 2:
        assert_eq(x.T.ravel(order), a.T.ravel(order))
        assert_eq(x[::-1].flatten(order), a[::-1].flatten(order))


# --------------------------------------------------------------- randomised keys

RANDOM = settings(
    derandomize=True, database=None, max_examples=40, deadline=None, suppress_health_check=list(HealthCheck)
)
STEPS = [None, 1, 2, 3, -1, -2, -3]


@st.composite
def basic_keys(draw, shape):
    """A random basic index for ``shape``: ints, slices (any step sign), ``None``, ``...``."""
    parts = []
    for n in shape:
        if n and draw(st.integers(0, 3)) == 0:
            parts.append(draw(st.integers(-n, n - 1)))
        else:
            bound = st.none() | st.integers(-n - 2, n + 2)
            parts.append(slice(draw(bound), draw(bound), draw(st.sampled_from(STEPS))))
    if draw(st.booleans()):
        i = draw(st.integers(0, len(parts)))
        j = draw(st.integers(i, len(parts)))
        parts[i:j] = [Ellipsis]
    elif parts and draw(st.booleans()):
        parts = parts[: draw(st.integers(0, len(parts)))]  # trailing axes left implicit
    for _ in range(draw(st.integers(0, 2))):
        parts.insert(draw(st.integers(0, len(parts))), None)
    if len(parts) == 1 and draw(st.booleans()):
        return parts[0]
    return tuple(parts)


@st.composite
def shapes_and_keys(draw):
    shape = tuple(draw(st.lists(st.integers(0, 7), max_size=3)))
    return shape, draw(basic_keys(shape))


def _same_as_numpy(got, exp):
    if isinstance(exp, numpy.generic):
        assert type(got) is type(exp), (type(got), type(exp))
        assert got == exp
    else:
        assert isinstance(got, sp.ndarray)
        assert_eq(got, exp)


@RANDOM
@given(case=shapes_and_keys())
def test_random_getitem_matches_numpy(case):
    shape, key = case
    a = _arange(shape)
    x = sp.array(a)
    _same_as_numpy(x[key], a[key])


@RANDOM
@given(data=st.data())
def test_random_views_of_transposed_views_match_numpy(data):
    shape, key1 = data.draw(shapes_and_keys())
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    a = _arange(shape).transpose(perm)
    x = sp.array(_arange(shape)).transpose(perm)
    e1 = a[key1]
    v = x[key1]
    if isinstance(e1, numpy.generic):
        _same_as_numpy(v, e1)
        return
    key2 = data.draw(basic_keys(e1.shape))
    _same_as_numpy(v[key2], e1[key2])


VALUE_KINDS = ["numpy", "scalar", "distributed", "reversed-self", "broadcast-row", "leading-1"]


@RANDOM
@given(case=shapes_and_keys(), kind=st.sampled_from(VALUE_KINDS))
def test_random_setitem_matches_numpy(case, kind):
    shape, key = case
    a = _arange(shape)
    x = sp.array(a)
    target = numpy.shape(a[key])
    new = -_arange(target) - 1.0
    if kind == "numpy":
        value, expected = new, new
    elif kind == "scalar":
        value, expected = -5.0, -5.0
    elif kind == "distributed":
        value, expected = sp.array(new), new
    elif kind == "reversed-self":
        rev = (slice(None, None, -1),) * len(target)
        value, expected = x[key][rev], a[key][rev].copy()
    elif kind == "broadcast-row":
        row = -numpy.arange(target[-1]) - 1.0 if target else new
        value, expected = sp.array(row), row
    else:
        value, expected = new.reshape((1,) + target), new.reshape((1,) + target)
    x[key] = value
    a[key] = expected
    assert_eq(x, a)


@pytest.mark.parametrize("shape", [(3,), (5,), (4, 3)], ids=str)
def test_zero_d_view_broadcasts_from_its_owner(shape):
    # A 0-d view owned by one rank, broadcast over an array of another layout:
    # every rank must receive the owner's element (a 0-d receive buffer).
    a = numpy.arange(numpy.prod(shape), dtype=float).reshape(shape) + 1.0
    x = sp.array(a)
    idx = (Ellipsis,) + tuple(n - 1 for n in shape)
    y = numpy.arange(7.0)
    assert_eq(numpy.multiply(sp.array(y), x[idx]), y * a[idx], exact=True)
    assert_eq(sp.zeros((2, 5)) + x[idx], numpy.zeros((2, 5)) + a[idx], exact=True)
