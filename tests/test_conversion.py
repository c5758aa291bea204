"""Conversions to NumPy and Python objects against NumPy, at any rank count.

Run serially and under ``mpiexec -n 2/3/4 python -m pytest tests/test_conversion.py``.
Every conversion gathers (or broadcasts) the data, so every rank must get NumPy's
exact answer: the same values, types, warnings, error types and messages, and the
same ``repr``/``str`` text, including arrays above NumPy's print threshold.
"""

import copy
import operator
import pickle
import re
import warnings

import numpy
import pytest
from helpers import assert_eq, world
from helpers import ref as _ref

import spmdarray as sp


def ref(shape, dtype=float, seed=0):
    """``helpers.ref`` as an array also for 0-d bool (it gives a NumPy scalar there)."""
    return numpy.asarray(_ref(shape, dtype, seed))


def _outcome(fn, obj):
    """``(value, type, exception type, message, warning categories)`` of ``fn(obj)``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = fn(obj)
        except Exception as e:  # the exception is the outcome being compared
            return (None, None, type(e), str(e), [w.category for w in caught])
    return (value, type(value), None, None, [w.category for w in caught])


def _same_outcome(fn, x, a):
    got, exp = _outcome(fn, x), _outcome(fn, a)
    assert got[1:] == exp[1:], (got, exp)
    if exp[1] is not None:
        assert got[0] == exp[0] or (got[0] != got[0] and exp[0] != exp[0]), (got[0], exp[0])


# --------------------------------------------------------------- numpy.asarray

ASARRAY_CASES = [
    ((7, 5), numpy.float64),
    ((13,), numpy.int64),
    ((3, 4, 5), numpy.complex128),
    ((2, 9), numpy.bool_),
    ((1, 9), numpy.float32),
    ((0, 3), numpy.float64),
    ((5, 0), numpy.int64),
    ((), numpy.float64),
    ((1,), numpy.uint8),
]


@pytest.mark.parametrize("shape, dtype", ASARRAY_CASES, ids=str)
def test_asarray_gives_the_whole_array_on_every_rank(shape, dtype):
    from mpi4py import MPI

    a = ref(shape, dtype)
    x = sp.array(a)
    for g in (numpy.asarray(x), numpy.array(x), numpy.array(x, copy=True), x.__array__()):
        assert type(g) is numpy.ndarray
        assert g.shape == a.shape and g.dtype == a.dtype
        numpy.testing.assert_array_equal(g, a)
    g = numpy.asarray(x)
    assert MPI.COMM_WORLD.allgather(g.tobytes()) == [a.tobytes()] * MPI.COMM_WORLD.Get_size()
    if g.size:
        g.reshape(-1)[0] = not g.reshape(-1)[0]  # a private copy: the array is unchanged
        assert_eq(x, a)


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.int64, numpy.complex64, bool], ids=str)
def test_asarray_with_dtype(dtype):
    a = ref((6, 4))
    x = sp.array(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", numpy.exceptions.ComplexWarning)
        g = numpy.asarray(x, dtype=dtype)
    assert g.dtype == numpy.dtype(dtype)
    numpy.testing.assert_array_equal(g, a.astype(dtype))


@pytest.mark.parametrize(
    "key",
    [(slice(None, None, -1),), (slice(1, None, 2), slice(None, None, -3)), (2,), (None, Ellipsis, 1), (slice(4, 4),)],
    ids=str,
)
def test_asarray_of_views(key):
    a = ref((7, 5))
    x = sp.array(a)
    numpy.testing.assert_array_equal(numpy.asarray(x[key]), a[key])
    numpy.testing.assert_array_equal(numpy.asarray(x[key].T), a[key].T)
    numpy.testing.assert_array_equal(numpy.asarray(x.T[key]), a.T[key])


def test_array_without_copy_raises():
    x = sp.array(ref((4, 3)))
    with pytest.raises(ValueError, match="copy"):
        x.__array__(copy=False)
    with pytest.raises(ValueError, match="copy"):
        numpy.asarray(x, copy=False)
    with pytest.raises(ValueError, match="copy"):
        numpy.array(x, copy=False)
    assert_eq(x, ref((4, 3)))  # the next collective still works


# ------------------------------------------------------ float / int / bool / complex

SCALAR_LIKE = [
    numpy.array(2.5),
    numpy.array(-3.75),
    numpy.array([2.5]),
    numpy.array([[7.0]]),
    numpy.array(3),
    numpy.array([-4]),
    numpy.array(0),
    numpy.array(True),
    numpy.array([False]),
    numpy.array(1 + 2j),
    numpy.array([0j]),
    numpy.array([[[5]]], dtype=numpy.int8),
    numpy.array(numpy.nan),
    numpy.array(numpy.inf),
    numpy.array(2.5, dtype=numpy.float32),
]


def _scalar_id(a):
    return f"{a.dtype}{a.shape}={a.reshape(-1)[0]}"


CONVERSIONS = {
    "float": float,
    "int": int,
    "bool": bool,
    "complex": complex,
    "index": operator.index,
    "item": lambda v: v.item(),
    "tolist": lambda v: v.tolist(),
}


@pytest.mark.parametrize("conv", list(CONVERSIONS))
@pytest.mark.parametrize("a", SCALAR_LIKE, ids=[_scalar_id(a) for a in SCALAR_LIKE])
def test_scalar_conversions_of_size_1_arrays(a, conv):
    x = sp.array(a)
    _same_outcome(CONVERSIONS[conv], x, a)


NOT_SCALAR = [numpy.arange(3.0), numpy.zeros((2, 2)), numpy.zeros((0,)), numpy.zeros((0, 3)), numpy.arange(4)]


@pytest.mark.parametrize("conv", ["float", "int", "bool", "complex", "index", "item"])
@pytest.mark.parametrize("a", NOT_SCALAR, ids=[f"{a.dtype}{a.shape}" for a in NOT_SCALAR])
def test_scalar_conversions_of_other_arrays_raise_like_numpy(a, conv):
    x = sp.array(a)
    got, exp = _outcome(CONVERSIONS[conv], x), _outcome(CONVERSIONS[conv], a)
    assert exp[2] is not None
    assert got[2:4] == exp[2:4], (got, exp)
    assert_eq(x, a)


def test_format_of_0d_arrays():
    a = numpy.array(2.0 / 3.0)
    x = sp.array(a)
    assert format(x, ".3f") == format(a, ".3f")
    assert f"{x:>10.2e}" == f"{a:>10.2e}"
    assert f"{sp.arange(3)}" == f"{numpy.arange(3)}"


# --------------------------------------------------------------- len / iteration


@pytest.mark.parametrize("shape", [(7, 5), (3,), (1, 9), (0, 3), (5, 0), (2, 3, 4)], ids=str)
def test_len(shape):
    assert len(sp.zeros(shape)) == len(numpy.zeros(shape))


def test_len_and_iteration_of_0d_raise_like_numpy():
    x, a = sp.array(1.5), numpy.array(1.5)
    _same_outcome(len, x, a)
    _same_outcome(list, x, a)
    with pytest.raises(TypeError, match=re.escape("len() of unsized object")):
        len(x)
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        iter(x).__next__()


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.int32, numpy.bool_, numpy.complex128], ids=str)
@pytest.mark.parametrize("n", [0, 1, 3, 17], ids=str)
def test_iteration_1d_gives_numpy_scalars(n, dtype):
    a = ref((n,), dtype)
    x = sp.array(a)
    got, exp = list(x), list(a)
    assert len(got) == len(exp)
    for g, e in zip(got, exp):
        assert type(g) is type(e) and g == e
    assert [v for v in x[::-2]] == list(a[::-2])


def test_iteration_1d_across_chunks():
    # Iteration gathers 65536 elements at a time: cross a chunk boundary.
    n = 65536 + 7
    x = sp.arange(n, dtype=numpy.int32)
    total = 0
    for i, v in enumerate(x):
        assert type(v) is numpy.int32
        total += int(v) - i
    assert total == 0 and i == n - 1


@pytest.mark.parametrize("shape", [(7, 5), (3, 4, 2), (1, 9), (0, 3), (4, 0)], ids=str)
def test_iteration_2d_gives_row_views(shape):
    a = ref(shape)
    x = sp.array(a)
    rows = list(x)
    assert len(rows) == len(a)
    for r, e in zip(rows, a):
        assert isinstance(r, sp.ndarray)
        assert_eq(r, e)
    if rows and rows[0].size:
        rows[-1][...] = 42.0  # rows are views, as NumPy's
        a[-1] = 42.0
        assert_eq(x, a)
    assert [numpy.asarray(r).tolist() for r in x.T] == [r.tolist() for r in a.T]


# -------------------------------------------------------------------- repr / str

REPR_CASES = {
    "float 2x3": numpy.arange(6.0).reshape(2, 3) / 7,
    "int 13": numpy.arange(-6, 7),
    "bool": numpy.array([[True, False], [False, True]]),
    "complex": numpy.array([1 + 2j, 3 - 1j, -0.5j]),
    "float32": numpy.linspace(0, 1, 5, dtype=numpy.float32),
    "int8": numpy.arange(5, dtype=numpy.int8),
    "uint16 2d": numpy.arange(12, dtype=numpy.uint16).reshape(3, 4),
    "0-d float": numpy.array(3.5),
    "0-d int": numpy.array(-7),
    "empty 0x3": numpy.zeros((0, 3)),
    "empty int": numpy.zeros((0,), numpy.int64),
    "nan inf": numpy.array([numpy.nan, numpy.inf, -numpy.inf, 1.0]),
    "large exponents": numpy.array([1e-20, 1.0, 3e20]),
    "3-d": numpy.arange(24).reshape(2, 3, 4),
    "50x60 float": numpy.arange(50 * 60, dtype=float).reshape(50, 60) / 7 - 100,
    "2000 int": numpy.arange(2000) * 3 - 1000,
    "1001x3 int": numpy.arange(1001 * 3).reshape(1001, 3),
    "3x4x100": numpy.arange(3 * 4 * 100).reshape(3, 4, 100) / 3,
    "1001 bool": numpy.arange(1001) % 3 == 0,
    "1500 complex": numpy.arange(1500) * (1 - 1j),
    "2000 float32": numpy.linspace(-1, 1, 2000, dtype=numpy.float32),
}


@pytest.mark.parametrize("name", list(REPR_CASES))
def test_repr_and_str_equal_numpy_s(name):
    a = REPR_CASES[name]
    x = sp.array(a)
    assert repr(x) == repr(a)
    assert str(x) == str(a)
    if a.ndim:
        assert repr(x[::-1]) == repr(a[::-1])
        assert str(x.T) == str(a.T)


@pytest.mark.parametrize("name", ["float 2x3", "50x60 float", "2000 int", "3x4x100"])
def test_repr_follows_numpy_print_options(name):
    a = REPR_CASES[name]
    x = sp.array(a)
    with numpy.printoptions(threshold=10, edgeitems=2, precision=3):
        assert repr(x) == repr(a)
        assert str(x) == str(a)
    with numpy.printoptions(threshold=10**6, linewidth=200):
        if a.size <= 3000:
            assert str(x) == str(a)


def test_repr_of_a_distributed_0d_result_and_of_slices():
    a = numpy.arange(2000.0).reshape(40, 50)
    x = sp.array(a)
    assert repr(x[3, 4:9]) == repr(a[3, 4:9])
    assert repr(x[..., 7]) == repr(a[..., 7])
    assert repr(x[1:, None, ::7]) == repr(a[1:, None, ::7])
    assert repr(x[5, 5, ...]) == repr(a[5, 5, ...])


# ----------------------------------------------------------------- item / tolist

ITEM_ARGS = [(4,), (-1,), (0,), (1, 2), (-1, -3), ((1, 2),), ((5,),), (6,), (-7,), (2, 0), (1, 2, 3), (1.5,), ([1, 2],)]


@pytest.mark.parametrize("args", ITEM_ARGS, ids=str)
@pytest.mark.parametrize("dtype", [numpy.int64, numpy.float32, numpy.bool_, numpy.complex128], ids=str)
def test_item_matches_numpy(dtype, args):
    a = ref((2, 3), dtype)
    x = sp.array(a)
    _same_outcome(lambda v: v.item(*args), x, a)


@pytest.mark.parametrize("args", [(), ((),), (0,), (-1,), (1,), ((0,),)], ids=str)
def test_item_of_0d_and_1d_matches_numpy(args):
    for a in (numpy.array(7.5), numpy.array([4]), numpy.arange(3), numpy.zeros((0,))):
        _same_outcome(lambda v: v.item(*args), sp.array(a), a)


@pytest.mark.parametrize("shape, dtype", ASARRAY_CASES, ids=str)
def test_tolist_matches_numpy(shape, dtype):
    a = ref(shape, dtype)
    x = sp.array(a)
    got, exp = x.tolist(), a.tolist()
    assert got == exp

    def types(v):
        return [types(e) for e in v] if isinstance(v, list) else type(v)

    assert types(got) == types(exp)  # Python scalars, not NumPy ones
    assert x.T.tolist() == a.T.tolist()


# --------------------------------------------------------------- pickle / copy


def test_pickling_raises_type_error():
    x = sp.array(ref((5, 3)))
    with pytest.raises(TypeError, match="pickled"):
        pickle.dumps(x)
    with pytest.raises(TypeError, match="pickled"):
        pickle.dumps(x[1:], protocol=pickle.HIGHEST_PROTOCOL)
    with pytest.raises(TypeError):
        hash(x)
    assert_eq(x, ref((5, 3)))


def test_copy_module_makes_independent_copies():
    _, size = world()
    a = ref((5, 3))
    x = sp.array(a)
    for c in (copy.copy(x), copy.deepcopy(x)):
        assert isinstance(c, sp.ndarray) and c is not x
        assert_eq(c, a)
        c[...] = float(size)
        assert_eq(x, a)
