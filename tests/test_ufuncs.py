"""Ufunc calls against NumPy at any rank count: broadcasting, scalars, ``out=``, ``where=``,
``dtype=``, views and 0-d results.

Run serially and under ``mpiexec -n 2/3/4``; every test body is SPMD and compares
the gathered result with NumPy's, dtype included.
"""

import numpy
import pytest
from helpers import assert_eq, ref

import spmdarray as sp

# ------------------------------------------------------------------ broadcasting


def test_broadcast_column_plus_row():
    a, b = ref((5, 1)), ref((1, 7), seed=1)
    x, y = sp.array(a), sp.array(b)
    assert_eq(x + y, a + b, exact=True)
    assert_eq(numpy.multiply(y, x), b * a, exact=True)


def test_broadcast_vector_against_matrix():
    a, b = ref((7,)), ref((5, 7), seed=1)
    x, y = sp.array(a), sp.array(b)
    assert_eq(x + y, a + b, exact=True)
    assert_eq(y - x, b - a, exact=True)
    assert_eq(numpy.maximum(x, y), numpy.maximum(a, b), exact=True)


def test_broadcast_zero_d_array_and_matrix():
    a, b = numpy.array(2.5), ref((5, 7))
    x, y = sp.array(a), sp.array(b)
    assert x.shape == ()
    assert_eq(x * y, a * b, exact=True)
    assert_eq(y / x, b / a, exact=True)


def test_broadcast_3d_against_2d_and_1d():
    a, b, c = ref((2, 3, 4)), ref((3, 4), seed=1), ref((4,), seed=2)
    x, y, z = sp.array(a), sp.array(b), sp.array(c)
    assert_eq(x + y * z, a + b * c, exact=True)


@pytest.mark.parametrize(
    "dtype,scalar",
    [
        (numpy.float32, 1.0),
        (numpy.float32, 3),
        (numpy.int8, 100),
        (numpy.int8, -128),
        (numpy.uint8, 255),
        (numpy.int16, 2.5),
        (numpy.float16, 1e3),
        (numpy.int32, 1j),
        (numpy.bool_, 1),
        (numpy.bool_, True),
        (numpy.float32, True),
    ],
)
def test_python_scalars_promote_weakly(dtype, scalar):
    a = ref((7, 5), dtype)
    x = sp.array(a)
    with numpy.errstate(all="ignore"):
        for op in (numpy.add, numpy.multiply, numpy.maximum, numpy.less):
            assert_eq(op(x, scalar), op(a, scalar), exact=True)
            assert_eq(op(scalar, x), op(scalar, a), exact=True)
        assert_eq(x + scalar, a + scalar, exact=True)
        if a.dtype != bool:  # NumPy has no boolean subtract
            assert_eq(scalar - x, scalar - a, exact=True)


def test_float32_plus_python_float_stays_float32():
    x = sp.ones((7, 5), numpy.float32)
    assert (x + 1.0).dtype == numpy.float32
    assert (2.0 * x).dtype == numpy.float32
    assert (x + numpy.float64(1.0)).dtype == numpy.float64


@pytest.mark.parametrize("value", [300, -129, 2**70])
def test_int8_plus_out_of_range_python_int_raises_overflow(value):
    a = ref((7, 5), numpy.int8)
    x = sp.array(a)
    with pytest.raises(OverflowError) as np_err:
        a + value
    with pytest.raises(OverflowError) as sp_err:
        x + value
    assert str(sp_err.value) == str(np_err.value)
    with pytest.raises(OverflowError):
        numpy.add(x, value)


def _int_bounds(dtype):
    info = numpy.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    # valid values first (they fill any cache), then the first invalid ones
    return [hi, lo, 0, -1, 1, hi + 1, lo - 1, -(hi + 1), -(hi + 2), 2 * hi + 1, 2 * hi + 2, -2 * hi]


@pytest.mark.parametrize("shape", [(1, 1), (7, 5)], ids=str)
@pytest.mark.parametrize(
    "dtype", [numpy.int8, numpy.uint8, numpy.int16, numpy.uint16, numpy.int32, numpy.uint32, numpy.int64, numpy.uint64]
)
def test_python_int_bounds_match_numpy_on_every_rank(dtype, shape):
    # (1, 1): most ranks hold nothing, so an error must come from the
    # rank-independent checks, never from the local computation alone
    a = numpy.ones(shape, dtype)
    x = sp.array(a)
    for value in _int_bounds(dtype):
        for op in (numpy.add, numpy.multiply, numpy.maximum):
            try:
                with numpy.errstate(all="ignore"):
                    exp = op(a, value)
            except OverflowError as e:
                with pytest.raises(OverflowError) as sp_err:
                    op(x, value)
                assert str(sp_err.value) == str(e), value
            else:
                with numpy.errstate(all="ignore"):
                    assert_eq(op(x, value), exp)


def test_python_ints_with_float_arrays():
    for dtype in (numpy.float16, numpy.float32):
        a = ref((3, 4), dtype)
        x = sp.array(a)
        with numpy.errstate(all="ignore"):
            for value in (10**6, 2**200):
                assert_eq(x + value, a + value, exact=True)
        with pytest.raises(OverflowError):
            x + 2**1100


@pytest.mark.parametrize(
    "scalar",
    [numpy.float64(1.5), numpy.float32(1.5), numpy.int64(7), numpy.int8(3), numpy.uint16(9), numpy.complex64(1 + 2j)],
)
@pytest.mark.parametrize("dtype", [numpy.float32, numpy.int8, numpy.int64])
def test_numpy_scalars_promote_strongly(dtype, scalar):
    a = ref((7, 5), dtype)
    x = sp.array(a)
    with numpy.errstate(all="ignore"):
        assert_eq(x + scalar, a + scalar, exact=True)
        assert_eq(scalar * x, scalar * a, exact=True)
        assert_eq(numpy.subtract(scalar, x), numpy.subtract(scalar, a), exact=True)


def test_numpy_array_operands_each_rank_passes_the_same_global_array():
    a, b, c = ref((7, 5)), ref((7, 5), seed=1), ref((5,), numpy.int32, seed=2)
    x = sp.array(a)
    assert_eq(x + b, a + b, exact=True)
    assert_eq(b - x, b - a, exact=True)
    assert_eq(numpy.multiply(b, x), b * a, exact=True)
    assert_eq(x * c, a * c, exact=True)
    assert_eq(c[:, None, None] + x, c[:, None, None] + a, exact=True)
    assert_eq(numpy.arctan2(b, x), numpy.arctan2(b, a), exact=True)


def test_lists_as_operands():
    a = ref((3, 4), numpy.int64)
    x = sp.array(a)
    row = [1, 2, 3, 4]
    col = [[1.5], [2.5], [-1.0]]
    assert_eq(x + row, a + row, exact=True)
    assert_eq(x * col, a * col, exact=True)
    assert_eq(numpy.add(row, x), numpy.add(row, a), exact=True)
    assert_eq(row == x, row == a)


def _np_broadcast_message(*shapes):
    with pytest.raises(ValueError) as e:
        numpy.add(*[numpy.ones(s) for s in shapes])
    return str(e.value)


@pytest.mark.parametrize("sa,sb", [((7, 5), (4, 5)), ((7,), (5,)), ((3, 4), (4, 3)), ((2, 3, 4), (2, 4))])
def test_shape_mismatch_raises_numpys_value_error(sa, sb):
    x, y = sp.ones(sa), sp.ones(sb)
    msg = _np_broadcast_message(sa, sb)
    assert msg.startswith("operands could not be broadcast together with shapes")
    with pytest.raises(ValueError) as e:
        x + y
    assert str(e.value) == msg
    with pytest.raises(ValueError) as e:
        numpy.multiply(x, numpy.ones(sb))
    assert str(e.value) == msg


# ---------------------------------------------------------------- out= / casting


def test_out_distributed_same_dtype():
    a, b = ref((7, 5)), ref((7, 5), seed=1)
    x, y = sp.array(a), sp.array(b)
    o = sp.zeros((7, 5))
    r = numpy.add(x, y, out=o)
    assert r is o
    assert_eq(o, a + b, exact=True)
    r = numpy.multiply(x, 2.0, out=(o,))
    assert r is o
    assert_eq(o, a * 2.0, exact=True)


def test_out_with_a_wider_dtype():
    a, b = ref((7, 5), numpy.int16), ref((7, 5), numpy.int16, seed=1)
    x, y = sp.array(a), sp.array(b)
    o = sp.zeros((7, 5), numpy.float64)
    no = numpy.zeros((7, 5), numpy.float64)
    numpy.add(x, y, out=o)
    numpy.add(a, b, out=no)
    assert_eq(o, no, exact=True)
    o32 = sp.zeros((7, 5), numpy.int32)
    numpy.multiply(x, y, out=o32)
    assert_eq(o32, numpy.multiply(a, b, dtype=numpy.int32), exact=True)


def test_out_casting_errors_are_numpys():
    a = ref((7, 5))
    x = sp.array(a)
    o = sp.zeros((7, 5), numpy.int64)
    no = numpy.zeros((7, 5), numpy.int64)
    with pytest.raises(TypeError) as np_err:
        numpy.add(a, 1, out=no)
    with pytest.raises(TypeError) as sp_err:
        numpy.add(x, 1, out=o)
    assert type(sp_err.value) is type(np_err.value)  # NumPy's UFuncTypeError subclass
    assert str(sp_err.value) == str(np_err.value)
    # casting="unsafe" allows it, and truncates like NumPy
    numpy.add(x, 0.5, out=o, casting="unsafe")
    numpy.add(a, 0.5, out=no, casting="unsafe")
    assert_eq(o, no)
    # input casting errors with an explicit dtype
    i = sp.array(ref((7, 5), numpy.int64))
    with pytest.raises(TypeError) as np_err:
        numpy.add(ref((7, 5), numpy.int64), a, dtype=numpy.int64)
    with pytest.raises(TypeError) as sp_err:
        numpy.add(i, x, dtype=numpy.int64)
    assert type(sp_err.value) is type(np_err.value)
    assert str(sp_err.value) == str(np_err.value)
    # no loop for the requested dtype
    with pytest.raises(TypeError) as np_err:
        numpy.sqrt(a, dtype=numpy.int64)
    with pytest.raises(TypeError) as sp_err:
        numpy.sqrt(x, dtype=numpy.int64)
    assert str(sp_err.value) == str(np_err.value)


def test_out_non_broadcastable_shape_raises():
    x = sp.ones((7, 5))
    with pytest.raises(ValueError) as np_err:
        numpy.add(numpy.ones((7, 5)), 1, out=numpy.ones((1, 5)))
    with pytest.raises(ValueError) as sp_err:
        numpy.add(x, 1, out=sp.ones((1, 5)))
    assert str(sp_err.value) == str(np_err.value)


def test_out_larger_broadcasts_the_inputs():
    a = ref((5,))
    x = sp.array(a)
    o = sp.zeros((3, 5))
    no = numpy.zeros((3, 5))
    numpy.negative(x, out=o)
    numpy.negative(a, out=no)
    assert_eq(o, no, exact=True)


def test_out_is_a_view_of_another_array():
    a = ref((7, 5))
    x = sp.array(a)
    base = sp.zeros((9, 8))
    nbase = numpy.zeros((9, 8))
    numpy.sin(x, out=base[1:8, 2:7])
    numpy.sin(a, out=nbase[1:8, 2:7])
    assert_eq(base, nbase, exact=True)


def test_multi_output_out_tuple():
    a = ref((7, 5)) * 3
    x = sp.array(a)
    o1, o2 = sp.empty((7, 5)), sp.empty((7, 5))
    r = numpy.divmod(x, 1.25, out=(o1, o2))
    assert r[0] is o1 and r[1] is o2
    e1, e2 = numpy.divmod(a, 1.25)
    assert_eq(o1, e1, exact=True)
    assert_eq(o2, e2, exact=True)
    m, e = sp.empty((7, 5)), sp.empty((7, 5), numpy.int32)
    numpy.frexp(x, out=(m, e))
    em, ee = numpy.frexp(a)
    assert_eq(m, em, exact=True)
    assert_eq(e, ee)


@pytest.mark.parametrize("name", ["divmod", "modf", "frexp"])
def test_multi_output_ufuncs(name):
    ufunc = getattr(numpy, name)
    a = ref((7, 5)) * 4
    x = sp.array(a)
    args_np = (a, 1.5) if ufunc.nin == 2 else (a,)
    args_sp = (x, 1.5) if ufunc.nin == 2 else (x,)
    exp = ufunc(*args_np)
    got = ufunc(*args_sp)
    assert isinstance(got, tuple) and len(got) == 2
    for g, e in zip(got, exp):
        assert isinstance(g, sp.ndarray)
        assert_eq(g, e, exact=True)
    ai = ref((7, 5), numpy.int16)
    if name == "divmod":
        assert_eq(divmod(sp.array(ai), 7)[0], divmod(ai, 7)[0])
        assert_eq(divmod(sp.array(ai), 7)[1], divmod(ai, 7)[1])


def test_wrong_out_tuple_length_raises():
    x = sp.ones((4, 3))
    with pytest.raises(ValueError):
        numpy.divmod(x, 2.0, out=(sp.empty((4, 3)),))


def test_numpy_out_with_distributed_inputs_raises_type_error():
    x = sp.ones((4, 3))
    with pytest.raises(TypeError, match="out="):
        numpy.add(x, 1.0, out=numpy.empty((4, 3)))


# --------------------------------------------------------------------- where=


def test_where_with_a_distributed_mask():
    a, b = ref((7, 5)), ref((7, 5), seed=1)
    m = ref((7, 5), bool, seed=2)
    x, y, mask = sp.array(a), sp.array(b), sp.array(m)
    o = sp.full((7, 5), -1.0)
    no = numpy.full((7, 5), -1.0)
    numpy.add(x, y, out=o, where=mask)
    numpy.add(a, b, out=no, where=m)
    assert_eq(o, no, exact=True)


def test_where_with_a_numpy_mask_and_broadcast_mask():
    a = ref((7, 5))
    x = sp.array(a)
    m = ref((7, 5), bool, seed=2)
    o, no = sp.zeros((7, 5)), numpy.zeros((7, 5))
    numpy.exp(x, out=o, where=m)
    numpy.exp(a, out=no, where=m)
    assert_eq(o, no, exact=True)
    row = numpy.array([True, False, True, False, True])
    numpy.negative(x, out=o, where=row)
    numpy.negative(a, out=no, where=row)
    assert_eq(o, no, exact=True)
    dm = sp.array(row)
    numpy.multiply(x, 3.0, out=o, where=dm)
    numpy.multiply(a, 3.0, out=no, where=row)
    assert_eq(o, no, exact=True)


def test_where_with_a_mask_of_a_different_layout():
    a = ref((6, 6))
    m = ref((6, 6), bool, seed=5)
    x = sp.array(a)
    mask = sp.array(m).T  # transposed view: lives elsewhere
    o, no = sp.zeros((6, 6)), numpy.zeros((6, 6))
    numpy.sqrt(x * x, out=o, where=mask)
    numpy.sqrt(a * a, out=no, where=m.T)
    assert_eq(o, no, exact=True)


def test_where_mask_shape_mismatch_raises():
    x = sp.ones((7, 5))
    o = sp.zeros((7, 5))
    with pytest.raises(ValueError) as np_err:
        numpy.add(numpy.ones((7, 5)), 1, out=numpy.zeros((7, 5)), where=numpy.ones((4, 5), bool))
    with pytest.raises(ValueError) as sp_err:
        numpy.add(x, 1, out=o, where=sp.ones((4, 5), bool))
    assert str(sp_err.value) == str(np_err.value)


# --------------------------------------------------------------------- dtype=


def test_dtype_keyword():
    a, b = ref((7, 5), numpy.int16), ref((7, 5), numpy.int16, seed=1)
    x, y = sp.array(a), sp.array(b)
    for dt in (numpy.float64, numpy.float32, numpy.int64, numpy.complex128):
        assert_eq(numpy.add(x, y, dtype=dt), numpy.add(a, b, dtype=dt), exact=True)
    f = ref((7, 5))
    assert_eq(numpy.sqrt(sp.array(f) ** 2, dtype=numpy.float32), numpy.sqrt(f**2, dtype=numpy.float32), exact=True)
    assert_eq(numpy.true_divide(x, y, dtype=numpy.float32), numpy.true_divide(a, b, dtype=numpy.float32), exact=True)


def test_signature_and_casting_keywords():
    a = ref((7, 5))
    x = sp.array(a)
    got = numpy.add(x, 1, signature=(None, None, numpy.float32), casting="unsafe")
    assert_eq(got, numpy.add(a, 1, signature=(None, None, numpy.float32), casting="unsafe"), exact=True)


# ----------------------------------------------------------------------- views


def test_shifted_views():
    a = ref((9, 7))
    x = sp.array(a)
    assert_eq(x[1:, :-1] + x[:-1, 1:], a[1:, :-1] + a[:-1, 1:], exact=True)
    assert_eq(x[2:, 1:-1] - x[:-2, :-2] * x[1:-1, 2:], a[2:, 1:-1] - a[:-2, :-2] * a[1:-1, 2:], exact=True)


def test_transposed_and_reversed_views():
    a = ref((7, 7))
    x = sp.array(a)
    assert_eq(x + x.T, a + a.T, exact=True)
    assert_eq(x[::-1] * x, a[::-1] * a, exact=True)
    assert_eq(x[:, ::-2] - x[:, ::2], a[:, ::-2] - a[:, ::2], exact=True)
    assert_eq(numpy.arctan2(x.T[1:], x[:-1, ::-1]), numpy.arctan2(a.T[1:], a[:-1, ::-1]), exact=True)
    r = ref((7, 4), seed=1)
    y = sp.array(r)
    assert_eq(y.T[::-1] + x[1:5, :], r.T[::-1] + a[1:5, :], exact=True)


def test_strided_views_and_integer_index():
    a = ref((8, 9))
    x = sp.array(a)
    assert_eq(x[::3, 1::2] + x[1::3, 2::2], a[::3, 1::2] + a[1::3, 2::2], exact=True)
    assert_eq(x[3, :8] * x[:, 4], a[3, :8] * a[:, 4], exact=True)
    assert_eq(x[2:3] + x[:, 5:6], a[2:3] + a[:, 5:6], exact=True)


def test_result_written_into_overlapping_view():
    a = ref((7, 5))
    x = sp.array(a)
    numpy.add(x[1:], x[:-1], out=x[1:])
    numpy.add(a[1:], a[:-1], out=a[1:])
    assert_eq(x, a, exact=True)


def test_ops_on_views_do_not_change_the_base():
    a = ref((7, 5))
    x = sp.array(a)
    _ = x[1:5, ::-1] * 2 + x.T[:, :4].T
    assert_eq(x, a, exact=True)


# ------------------------------------------------------------- 0-d and scalars


def test_zero_d_results_are_numpy_scalars():
    for v in (numpy.float64(2.5), numpy.int16(-3), numpy.complex64(1 - 1j), numpy.bool_(True)):
        a = numpy.array(v)
        x = sp.array(a)
        got = numpy.negative(x) if a.dtype != bool else numpy.logical_not(x)
        exp = numpy.negative(a) if a.dtype != bool else numpy.logical_not(a)
        assert isinstance(got, numpy.generic) and not isinstance(got, sp.ndarray)
        assert type(got) is type(exp)
        assert got == exp
    x = sp.array(numpy.array(4.0))
    got = numpy.sqrt(x) + x
    assert type(got) is numpy.float64 and got == 6.0
    q, r = numpy.divmod(sp.array(numpy.array(7)), 3)
    assert type(q) is numpy.int64 and (q, r) == (2, 1)


def test_zero_d_result_is_identical_on_every_rank():
    from mpi4py import MPI

    got = numpy.exp(sp.array(numpy.array(0.3)))
    vals = MPI.COMM_WORLD.allgather(got.tobytes())
    assert all(v == vals[0] for v in vals)
    assert got == numpy.exp(0.3)


def test_empty_and_size_one_shapes():
    for shape in ((0, 5), (5, 0), (1, 1), (1, 9), (2, 1)):
        a = ref(shape)
        x = sp.array(a)
        assert_eq(x * 2 + 1, a * 2 + 1, exact=True)
        assert_eq(numpy.sin(x), numpy.sin(a), exact=True)
