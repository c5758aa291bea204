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
