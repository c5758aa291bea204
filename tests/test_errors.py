"""Bad input raises NumPy's exception on every rank, changes nothing, and never hangs."""

from __future__ import annotations

import numpy
import pytest
from helpers import assert_eq, real_gpu, world

import spmdarray as sp


def _same_everywhere(exc: BaseException) -> None:
    from mpi4py import MPI

    texts = MPI.COMM_WORLD.allgather(f"{type(exc).__name__}: {exc}")
    assert len(set(texts)) == 1, texts


def _numpy_error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - we want NumPy's exact class
        return type(e), str(e)
    raise AssertionError("NumPy did not raise")


A0 = numpy.arange(7 * 5.0).reshape(7, 5)
B0 = numpy.arange(4 * 3.0).reshape(4, 3)
I0 = numpy.arange(7 * 5).reshape(7, 5)

CASES = {
    "ufunc shape mismatch": (lambda m, a, b, i: a + b, ValueError),
    "setitem shape mismatch": (lambda m, a, b, i: a.__setitem__(slice(None), b), ValueError),
    "matmul core mismatch": (lambda m, a, b, i: a @ a, ValueError),
    "index out of bounds": (lambda m, a, b, i: a[7], IndexError),
    "negative index out of bounds": (lambda m, a, b, i: a[0, -6], IndexError),
    "too many indices": (lambda m, a, b, i: a[1, 2, 3], IndexError),
    "setitem out of bounds": (lambda m, a, b, i: a.__setitem__((2, 9), 1.0), IndexError),
    "astype safe cast": (lambda m, a, b, i: a.astype(numpy.int32, casting="safe"), TypeError),
    "ufunc out cast": (lambda m, a, b, i: numpy.add(a, 1.5, out=i), TypeError),
    "in-place true divide on int": (lambda m, a, b, i: i.__itruediv__(2), TypeError),
    "bad axis": (lambda m, a, b, i: a.sum(axis=2), numpy.exceptions.AxisError),
    "min of empty": (lambda m, a, b, i: a[3:3].min(), ValueError),
    "reshape size": (lambda m, a, b, i: a.reshape(6, 6), ValueError),
}


def _run_case(fn, ns):
    a, b, i = ns
    return fn(sp, a, b, i)


@pytest.mark.parametrize("name", sorted(CASES))
def test_error_class_and_message_match_numpy_on_every_rank(name):
    fn, cls = CASES[name]
    a, b, i = sp.array(A0), sp.array(B0), sp.array(I0)
    ncls, nmsg = _numpy_error(lambda: fn(numpy, A0.copy(), B0.copy(), I0.copy()))
    assert issubclass(ncls, cls)
    with pytest.raises(cls) as info:
        fn(sp, a, b, i)
    assert isinstance(info.value, ncls), (type(info.value), ncls)
    _same_everywhere(info.value)
    # nothing changed, and the next (communicating) operation works
    assert_eq(a, A0, exact=True)
    assert_eq(i, I0, exact=True)
    assert_eq(a[1:, :] + a[:-1, :], A0[1:] + A0[:-1], exact=True)


MESSAGES_LIKE_NUMPY = [
    "index out of bounds",
    "too many indices",
    "ufunc out cast",
    "astype safe cast",
    "bad axis",
    "min of empty",
    "reshape size",
]


@pytest.mark.parametrize("name", MESSAGES_LIKE_NUMPY)
def test_error_message_is_numpys(name):
    fn, cls = CASES[name]
    a, b, i = sp.array(A0), sp.array(B0), sp.array(I0)
    _, nmsg = _numpy_error(lambda: fn(numpy, A0.copy(), B0.copy(), I0.copy()))
    with pytest.raises(cls) as info:
        fn(sp, a, b, i)
    assert str(info.value) == nmsg


def test_unimplemented_function_names_itself_and_does_not_gather():
    a = sp.array(A0)
    with sp.comm_stats() as s:
        with pytest.raises(NotImplementedError, match="is_busday"):
            numpy.is_busday(a)
        with pytest.raises(NotImplementedError, match="asmatrix"):
            sp.asmatrix([[1.0]])
        with pytest.raises(NotImplementedError, match="subtract.reduce"):
            numpy.subtract.reduce(a)
    assert s.bytes_sent == 0 and s.collectives == 0
    _same_everywhere(NotImplementedError("ok"))


def test_mixed_communicators_are_rejected_everywhere():
    from mpi4py import MPI

    rank, size = world()
    a = sp.array(A0)
    b = sp.array(A0, comm=MPI.COMM_SELF)
    with pytest.raises(ValueError, match="different communicators"):
        a + b
    assert_eq(a + sp.array(A0), A0 + A0)


def test_value_dependent_error_is_raised_on_every_rank():
    x = sp.arange(-3, 9)  # only the rank holding the negatives would fail alone
    with pytest.raises(ValueError, match="negative integer powers") as info:
        2**x
    _same_everywhere(info.value)
    assert_eq((x + 1).sum(), numpy.arange(-3, 9).sum() + 12)


def test_overflowing_python_int_is_checked_for_every_value():
    u = sp.array(numpy.arange(5, dtype=numpy.uint8))
    assert_eq(u + 0, numpy.arange(5, dtype=numpy.uint8))  # fills the dtype-check cache
    with pytest.raises(OverflowError) as info:
        u + (-1)
    _same_everywhere(info.value)
    with pytest.raises(OverflowError):
        numpy.add(u, 300, out=u)
    assert_eq(u, numpy.arange(5, dtype=numpy.uint8))


@pytest.mark.skipif(real_gpu(), reason="GPU kernels do not report floating-point errors (documented difference)")
def test_floating_point_errors_set_to_raise_are_raised_on_every_rank():
    x = sp.array(numpy.arange(12.0))  # the zero lives on one rank only
    with numpy.errstate(divide="raise"):
        with pytest.raises(FloatingPointError) as info:
            1.0 / x
    _same_everywhere(info.value)
    with numpy.errstate(divide="ignore"):
        assert_eq(1.0 / x, 1.0 / numpy.arange(12.0))


def test_missing_ndarray_method_names_itself():
    x = sp.ones(4)
    assert not hasattr(x, "setflags")
    with pytest.raises(NotImplementedError, match="ndarray.setflags"):
        x.setflags(write=False)
    with pytest.raises(NotImplementedError, match="random.get_bit_generator"):
        sp.random.get_bit_generator()
    with pytest.raises(NotImplementedError, match="nested_iters"):
        sp.nested_iters(x, [[0]])


def test_value_dependent_conversion_in_setitem_fails_on_every_rank():
    x = sp.zeros(6)
    bad = numpy.array(["1", "2", "3", "4", "5", "x"])  # only the last value fails
    with pytest.raises(ValueError) as info:
        x[:] = bad
    _same_everywhere(info.value)
    assert_eq(x, numpy.zeros(6), exact=True)
    x[:] = bad[:5].tolist() + ["6"]
    assert_eq(x, numpy.arange(1.0, 7.0), exact=True)


_V = numpy.linspace(0.5, 3.0, 11)
UNDER_ERRSTATE_RAISE = {
    "linalg.norm": lambda m, x: m.linalg.norm(x),
    "linalg.vector_norm": lambda m, x: m.linalg.vector_norm(x),
    "linalg.matrix_norm": lambda m, x: m.linalg.matrix_norm(x.reshape(1, 11)),
    "isclose": lambda m, x: m.isclose(x, x + 1e-9),
    "allclose": lambda m, x: m.allclose(x, x + 1e-9),
    "round": lambda m, x: m.round(x, 1),
    "around": lambda m, x: m.around(x, 1),
    "ndarray.round": lambda m, x: x.round(1),
    "nan_to_num": lambda m, x: m.nan_to_num(x),
    "interp": lambda m, x: m.interp(x, numpy.arange(4.0), numpy.arange(4.0) ** 2),
    "sinc": lambda m, x: m.sinc(x),
    "i0": lambda m, x: m.i0(x),
}


@pytest.mark.parametrize("name", sorted(UNDER_ERRSTATE_RAISE))
def test_kernels_that_are_not_ufuncs_work_under_errstate_raise(name):
    fn = UNDER_ERRSTATE_RAISE[name]
    with numpy.errstate(all="raise"):
        want = fn(numpy, _V.copy())
        got = fn(sp, sp.array(_V))
    assert_eq(got, want, rtol=1e-12)


def test_numeric_strings_convert_and_where_takes_strings():
    s0 = numpy.array(["1.5", "2", "-3", "4e2"] * 3)
    s = sp.array(s0)
    assert_eq(s.astype(float), s0.astype(float), exact=True)
    assert_eq(sp.array(numpy.array(["1", "-2", "3"] * 4)).astype(int), numpy.array([1, -2, 3] * 4))
    c0 = numpy.arange(12) % 3 == 0
    assert_eq(sp.where(sp.array(c0), s, sp.array(s0[::-1].copy())), numpy.where(c0, s0, s0[::-1]))


def test_object_dtype_is_rejected_at_creation_naming_the_fix():
    for make in (
        lambda: sp.array(numpy.array([1, "a", None] * 4, dtype=object)),
        lambda: sp.zeros(5, dtype=object),
        lambda: sp.ones(3).astype(object),
    ):
        with pytest.raises(TypeError, match="cannot hold Python objects.*Convert") as info:
            make()
        _same_everywhere(info.value)


@pytest.mark.parametrize("axis", [0.5, "1", (0, 1.0)])
def test_axis_must_be_an_integer(axis):
    x = sp.ones((3, 4))
    _, nmsg = _numpy_error(lambda: numpy.ones((3, 4)).sum(axis=axis))
    with pytest.raises(TypeError) as info:
        x.sum(axis=axis)
    assert str(info.value) == nmsg
    _same_everywhere(info.value)


def test_field_of_structured_array_says_it_is_not_supported():
    x = sp.zeros(6, dtype=[("x", float), ("y", numpy.int32)])
    with pytest.raises(NotImplementedError, match=r"x\['x'\].*structured") as info:
        x["x"]
    _same_everywhere(info.value)
    with pytest.raises(ValueError, match="no field of name z"):
        x["z"]


def test_adding_a_string_raises_numpys_no_loop_error():
    x = sp.ones(5)
    ncls, nmsg = _numpy_error(lambda: numpy.ones(5) + "abc")
    for f in (lambda: x + "abc", lambda: "abc" + x, lambda: x * "a"):
        with pytest.raises(numpy._core._exceptions.UFuncTypeError) as info:
            f()
        assert type(info.value) is ncls or isinstance(info.value, ncls)
        _same_everywhere(info.value)
    with pytest.raises(type(info.value), match="did not contain a loop"):
        x + "abc"
    assert str(_numpy_error(lambda: numpy.ones(5) + "abc")[1]) == nmsg
    assert x.__eq__("abc") is NotImplemented  # Python's == then gives False, as before


@pytest.mark.parametrize("value", [3.0, 3 + 1j, 7])
@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std", "min", "max"])
def test_reductions_of_0d_arrays_match_numpy(name, value):
    z0 = numpy.array(value)
    z = sp.array(z0)
    kws = ({}, {"axis": 0}, {"axis": -1}, {"axis": (0,)}, {"axis": ()}, {"axis": 1}, {"keepdims": True})
    for kw in kws:
        try:
            want = getattr(z0, name)(**kw)
        except Exception as e:  # noqa: BLE001 - NumPy's class is the reference
            with pytest.raises(type(e)) as info:
                getattr(z, name)(**kw)
            _same_everywhere(info.value)
            continue
        assert_eq(getattr(z, name)(**kw), want)
