"""Reductions (sum ... argmax) against NumPy, at any rank count.

Run serially and under ``mpiexec -n 2/3/4 python -m pytest tests/test_reductions.py``.
Every test body is SPMD.  Each reduction is called three ways: as NumPy's function
(``numpy.sum(x)``, through ``__array_function__``), through the ``spmdarray``
namespace and as a method.  Partial sums combine in a different order than NumPy's
pairwise summation, so inexact sums compare with a relative tolerance; min, max,
arg-reductions, integer and boolean results compare exactly.
"""

import warnings

import numpy
import pytest
from helpers import assert_eq, ref, world

import spmdarray as sp

NAMES = ["sum", "prod", "min", "max", "mean", "std", "var", "any", "all", "argmin", "argmax"]
ARG = {"argmin", "argmax"}
DTYPES = [numpy.int32, numpy.bool_, numpy.float32, numpy.float64, numpy.complex128]
SHAPES = [(7, 5), (3,), (2, 9, 4), (2, 9), (1, 7), (5, 1)]


def _axes(shape):
    nd = len(shape)
    out = [None, 0, -1]
    if nd >= 2:
        out += [1, (0, 1), (-1, 0)]
    if nd == 3:
        out += [(0, 2), (0, 1, 2), -2]
    return out


def _data(shape, dtype, seed=0):
    a = ref(shape, dtype, seed=seed)
    if numpy.dtype(dtype).kind in "fc":
        a = (1 + a / 8).astype(dtype)  # keeps long products away from under/overflow
    return a


def _tol(name, dtype):
    kind = numpy.dtype(dtype).kind
    if name in ("min", "max", "any", "all") or name in ARG:
        return {"exact": True}
    if numpy.dtype(dtype) in (numpy.float32, numpy.complex64):
        return {"rtol": 2e-5, "atol": 1e-6}
    if kind in "fc" or name in ("mean", "std", "var"):
        return {"rtol": 1e-12, "atol": 1e-14}
    return {"exact": True}


def _call(form, name, x, **kw):
    if form == 0:
        return getattr(numpy, name)(x, **kw)
    if form == 1:
        return getattr(sp, name)(x, **kw)
    return getattr(x, name)(**kw)


def _np(name, a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with numpy.errstate(all="ignore"):
            return getattr(numpy, name)(a, **kw)


def _same_on_every_rank(value):
    from mpi4py import MPI

    got = MPI.COMM_WORLD.allgather((type(value).__name__, numpy.asarray(value).tobytes()))
    assert all(g == got[0] for g in got), got


def _check(got, exp, **tol):
    if not isinstance(exp, numpy.ndarray):
        assert isinstance(got, numpy.generic), f"{type(got).__name__} instead of a NumPy scalar"
        assert type(got) is type(exp), f"{type(got).__name__} != NumPy's {type(exp).__name__}"
        _same_on_every_rank(got)
    assert_eq(got, exp, **tol)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: numpy.dtype(d).name)
@pytest.mark.parametrize("name", NAMES)
def test_reduction_matches_numpy(name, dtype, shape):
    a = _data(shape, dtype)
    x = sp.array(a)
    tol = _tol(name, dtype)
    for i, axis in enumerate(_axes(shape)):
        if name in ARG and isinstance(axis, tuple):
            continue
        for keepdims in (False, True):
            form = (2 * i + keepdims) % 3  # numpy.<name>, spmdarray.<name> and the method, in turn
            exp = _np(name, a, axis=axis, keepdims=keepdims)
            with numpy.errstate(all="ignore"):
                got = _call(form, name, x, axis=axis, keepdims=keepdims)
            _check(got, exp, **tol)


@pytest.mark.parametrize("name", NAMES)
def test_full_reduction_is_a_numpy_scalar_identical_on_every_rank(name):
    a = _data((13, 11), numpy.float64, seed=3)
    x = sp.array(a)
    for form in range(3):
        got = _call(form, name, x)
        exp = _np(name, a)
        assert isinstance(got, numpy.generic) and type(got) is type(exp)
        _same_on_every_rank(got)
        assert_eq(got, exp, **_tol(name, numpy.float64))


# ------------------------------------------------------------------ dtype=


def test_sum_of_int8_with_dtype_int64_does_not_overflow():
    a = numpy.full((9, 7), 100, numpy.int8)
    x = sp.array(a)
    for axis in (None, 0, 1):
        assert_eq(numpy.sum(x, axis=axis, dtype=numpy.int64), numpy.sum(a, axis=axis, dtype=numpy.int64))
        assert_eq(x.sum(axis=axis, dtype=numpy.int8), a.sum(axis=axis, dtype=numpy.int8))  # wraps like NumPy
    # default accumulator for small ints is the platform int
    assert_eq(x.sum(axis=0), a.sum(axis=0))
    assert x.sum().dtype == numpy.int64
    assert_eq(x.prod(axis=1, dtype=numpy.float64), a.prod(axis=1, dtype=numpy.float64))


def test_sum_of_bool_and_uint():
    b = ref((7, 5), bool)
    assert_eq(sp.array(b).sum(axis=0), b.sum(axis=0))
    assert sp.array(b).sum() == b.sum()
    u = numpy.arange(35, dtype=numpy.uint8).reshape(7, 5)
    assert_eq(sp.array(u).sum(axis=1), u.sum(axis=1))
    assert_eq(sp.array(u).prod(axis=0), u.prod(axis=0))


def test_mean_of_int_is_float64():
    a = ref((7, 5), numpy.int16)
    x = sp.array(a)
    for axis in (None, 0, 1):
        got, exp = x.mean(axis=axis), a.mean(axis=axis)
        assert numpy.asarray(got).dtype == numpy.float64
        assert_eq(got, exp)
    assert_eq(x.mean(axis=0, dtype=numpy.float32), a.mean(axis=0, dtype=numpy.float32), rtol=1e-6)
    assert_eq(x.var(axis=1, dtype=numpy.float32), a.var(axis=1, dtype=numpy.float32), rtol=1e-5)
    assert_eq(numpy.std(x, dtype=numpy.float64), numpy.std(a, dtype=numpy.float64))


def test_float32_accumulations_stay_float32():
    a = ref((31, 17), numpy.float32)
    x = sp.array(a)
    for name in ("sum", "prod", "mean", "std", "var"):
        got = getattr(x, name)(axis=0)
        assert got.dtype == numpy.float32, name
        assert_eq(got, _np(name, a, axis=0), rtol=2e-5, atol=1e-5)
        got = getattr(x, name)()
        assert type(got) is numpy.float32, name
        _same_on_every_rank(got)
    assert_eq(x.sum(dtype=numpy.float64), a.sum(dtype=numpy.float64), rtol=1e-12)
    assert_eq(x.mean(axis=1, dtype=numpy.float64), a.mean(axis=1, dtype=numpy.float64), rtol=1e-12)


def test_float16_mean_keeps_float16():
    a = ref((9, 4), numpy.float16)
    x = sp.array(a)
    assert x.mean().dtype == numpy.float16
    assert_eq(x.mean(axis=0), a.mean(axis=0), rtol=2e-3, atol=2e-3)


def test_complex_var_and_std_are_real():
    a = ref((7, 5), numpy.complex128)
    x = sp.array(a)
    for name in ("var", "std"):
        for axis in (None, 0, 1):
            with warnings.catch_warnings():
                warnings.simplefilter("error", numpy.exceptions.ComplexWarning)  # NumPy warns of nothing
                got = getattr(x, name)(axis=axis)
            assert_eq(got, _np(name, a, axis=axis))
    c64 = a.astype(numpy.complex64)
    assert_eq(sp.array(c64).var(axis=0), c64.var(axis=0), rtol=1e-5)


# ------------------------------------------------------------------ ddof / initial


@pytest.mark.parametrize("name", ["std", "var"])
@pytest.mark.parametrize("ddof", [0, 1, 2])
def test_ddof(name, ddof):
    a = ref((7, 5))
    x = sp.array(a)
    for axis in (None, 0, 1, (1, 0)):
        for form in range(3):
            _check(_call(form, name, x, axis=axis, ddof=ddof), _np(name, a, axis=axis, ddof=ddof), rtol=1e-12)


def test_ddof_at_least_the_count_gives_nan_or_inf_like_numpy():
    a = ref((3, 4))
    x = sp.array(a)
    with numpy.errstate(all="ignore"):
        assert_eq(x.var(axis=0, ddof=3), _np("var", a, axis=0, ddof=3))
        assert_eq(x.std(axis=1, ddof=5), _np("std", a, axis=1, ddof=5))


@pytest.mark.parametrize("name,initial", [("sum", 10), ("sum", 0.5), ("prod", 2), ("min", -1.5), ("max", 7)])
def test_initial(name, initial):
    a = ref((7, 5))
    x = sp.array(a)
    for axis in (None, 0, 1):
        for form in range(3):
            _check(_call(form, name, x, axis=axis, initial=initial), _np(name, a, axis=axis, initial=initial))
    ai = ref((7, 5), numpy.int32)
    assert_eq(sp.array(ai).max(axis=0, initial=40), ai.max(axis=0, initial=40))
    assert_eq(sp.array(ai).min(axis=1, initial=-40), ai.min(axis=1, initial=-40))


def test_initial_on_empty_arrays():
    a = numpy.ones((0, 3))
    x = sp.array(a)
    assert_eq(x.max(initial=-5.0), a.max(initial=-5.0))
    assert_eq(x.min(axis=0, initial=3.0), a.min(axis=0, initial=3.0))
    assert_eq(x.sum(axis=0, initial=2.0), a.sum(axis=0, initial=2.0))


def test_initial_is_rejected_where_numpy_rejects_it():
    x = sp.ones((3, 4))
    for name in ("mean", "any"):
        with pytest.raises(TypeError):
            getattr(x, name)(initial=1)


# --------------------------------------------------------------------- out=


def test_out_distributed():
    a = ref((7, 5))
    x = sp.array(a)
    o = sp.zeros((5,))
    r = numpy.sum(x, axis=0, out=o)
    assert r is o
    assert_eq(o, a.sum(axis=0))
    o2 = sp.zeros((7, 1))
    r = x.max(axis=1, keepdims=True, out=o2)
    assert r is o2
    assert_eq(o2, a.max(axis=1, keepdims=True), exact=True)
    o3 = sp.zeros((7,))
    numpy.std(x, axis=1, ddof=1, out=o3)
    assert_eq(o3, a.std(axis=1, ddof=1))
    o4 = sp.zeros((5,), numpy.int64)
    x.argmax(axis=0, out=o4)
    assert_eq(o4, a.argmax(axis=0))


def test_out_with_another_dtype():
    a = ref((7, 5), numpy.int32)
    x = sp.array(a)
    o = sp.zeros((5,), numpy.float32)
    no = numpy.zeros((5,), numpy.float32)
    x.sum(axis=0, out=o)
    a.sum(axis=0, out=no)
    assert_eq(o, no)
    o = sp.zeros((7,), numpy.float64)
    x.mean(axis=1, out=o)
    assert_eq(o, a.mean(axis=1))


def test_out_zero_d_for_a_full_reduction():
    a = ref((7, 5))
    x = sp.array(a)
    o = sp.zeros(())
    r = x.sum(out=o)
    assert r is o and o.shape == ()
    assert_eq(o[()], a.sum())


def test_out_is_a_view():
    a = ref((7, 5))
    x = sp.array(a)
    base = sp.zeros((3, 9))
    nbase = numpy.zeros((3, 9))
    x.min(axis=0, out=base[1, 2:7])
    a.min(axis=0, out=nbase[1, 2:7])
    assert_eq(base, nbase, exact=True)


def test_out_wrong_shape_raises():
    x = sp.array(ref((7, 5)))
    with pytest.raises(ValueError):
        x.sum(axis=0, out=sp.zeros((7,)))


# ------------------------------------------------------------------------ NaN


def _with_nans(shape, spots):
    a = ref(shape)
    for s in spots:
        a[s] = numpy.nan
    return a


NAN_SPOTS = [[(6, 4)], [(0, 0)], [(3, 1), (5, 2)], [(6, 0), (1, 3), (2, 3)]]


@pytest.mark.parametrize("spots", NAN_SPOTS, ids=str)
def test_nan_propagates_and_first_nan_wins(spots):
    a = _with_nans((7, 5), spots)
    x = sp.array(a)
    for name in ("min", "max", "sum", "mean", "argmin", "argmax"):
        for axis in (None, 0, 1):
            for form in range(3):
                _check(_call(form, name, x, axis=axis), _np(name, a, axis=axis), exact=name not in ("sum", "mean"))


def test_nan_in_a_transposed_and_reversed_view():
    a = _with_nans((8, 6), [(2, 5), (7, 1), (7, 4)])
    x = sp.array(a)
    for v, av in ((x.T, a.T), (x[::-1, ::-1], a[::-1, ::-1]), (x[1:, ::2], a[1:, ::2])):
        for name in ("argmax", "argmin", "max"):
            for axis in (None, 0, 1):
                _check(getattr(v, name)(axis=axis), _np(name, av, axis=axis), exact=True)


def test_complex_nan():
    a = ref((5, 4), numpy.complex128)
    a[3, 2] = complex(1.0, numpy.nan)
    x = sp.array(a)
    for name in ("max", "min", "argmax", "argmin"):
        for axis in (None, 0, 1):
            _check(getattr(x, name)(axis=axis), _np(name, a, axis=axis), exact=True)


def test_signed_zero_and_inf():
    a = numpy.array([[0.0, -0.0, 1.0], [-numpy.inf, 2.0, numpy.inf], [-0.0, 0.0, -1.0]])
    x = sp.array(a)
    for name in ("min", "max", "argmin", "argmax", "sum"):
        for axis in (None, 0, 1):
            with numpy.errstate(invalid="ignore"):  # inf - inf, as in NumPy
                got = getattr(x, name)(axis=axis)
            _check(got, _np(name, a, axis=axis), exact=True)


# ----------------------------------------------------------------------- ties


@pytest.mark.parametrize("shape", [(7, 5), (13,), (2, 9, 4), (2, 9)], ids=str)
def test_ties_first_occurrence_wins(shape):
    a = numpy.random.default_rng(1).integers(0, 3, shape).astype(numpy.int64)
    x = sp.array(a)
    for name in ("argmin", "argmax"):
        for axis in [None, *range(len(shape))]:
            for keepdims in (False, True):
                _check(
                    getattr(x, name)(axis=axis, keepdims=keepdims),
                    _np(name, a, axis=axis, keepdims=keepdims),
                    exact=True,
                )


def test_all_equal_argmin_is_zero():
    x = sp.full((9, 7), 3.0)
    assert x.argmin() == 0 and x.argmax() == 0
    assert_eq(x.argmax(axis=0), numpy.zeros(7, numpy.int64))
    assert_eq(x.argmin(axis=1), numpy.zeros(9, numpy.int64))


def test_arg_reductions_on_views():
    a = ref((8, 9), numpy.int16) % 5
    x = sp.array(a)
    for v, av in ((x.T, a.T), (x[::-1], a[::-1]), (x[2:, 1::3], a[2:, 1::3]), (x[3], a[3]), (x[:, 4], a[:, 4])):
        for name in ("argmin", "argmax"):
            for axis in range(av.ndim):
                _check(getattr(v, name)(axis=axis), _np(name, av, axis=axis), exact=True)
            _check(getattr(v, name)(), _np(name, av), exact=True)


# ----------------------------------------------------------- uneven and tiny


@pytest.mark.parametrize("shape", [(1,), (2,), (1, 1), (1, 3), (3, 1), (2, 2, 1), (1, 40)], ids=str)
def test_tiny_shapes(shape):
    a = ref(shape)
    x = sp.array(a)
    for name in NAMES:
        for axis in [None, *range(len(shape))]:
            _check(getattr(x, name)(axis=axis), _np(name, a, axis=axis), **_tol(name, numpy.float64))


def test_reductions_of_views():
    a = ref((9, 8))
    x = sp.array(a)
    views = [(x.T, a.T), (x[1:, ::-1], a[1:, ::-1]), (x[::2, 1:7:3], a[::2, 1:7:3]), (x[4], a[4])]
    for v, av in views:
        for name in ("sum", "max", "mean", "std"):
            for axis in [None, *range(av.ndim)]:
                _check(getattr(v, name)(axis=axis), _np(name, av, axis=axis), **_tol(name, numpy.float64))


# ---------------------------------------------------------------------- empty


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0,), (2, 0, 4)], ids=str)
def test_empty_arrays(shape):
    a = numpy.ones(shape)
    x = sp.array(a)
    for name in ("sum", "prod", "any", "all", "mean", "var", "std"):
        for axis in [None, *range(len(shape))]:
            _check(getattr(x, name)(axis=axis), _np(name, a, axis=axis))
    # sum over the empty axis is zeros of the other axes
    assert_eq(x.sum(axis=0), a.sum(axis=0))
    for name in ("min", "max"):
        with pytest.raises(ValueError) as np_err:
            getattr(a, name)()
        with pytest.raises(ValueError) as sp_err:
            getattr(x, name)()
        assert str(sp_err.value) == str(np_err.value)
        for axis in range(len(shape)):
            try:
                exp = getattr(a, name)(axis=axis)
            except ValueError as e:
                with pytest.raises(ValueError) as sp_err:
                    getattr(x, name)(axis=axis)
                assert str(sp_err.value) == str(e)
            else:
                assert_eq(getattr(x, name)(axis=axis), exp)
    for name in ("argmin", "argmax"):
        with pytest.raises(ValueError) as np_err:
            getattr(a, name)()
        with pytest.raises(ValueError) as sp_err:
            getattr(x, name)()
        assert str(sp_err.value) == str(np_err.value)


def test_sum_of_empty_rows():
    a = numpy.ones((0, 3), numpy.int32)
    x = sp.array(a)
    got = x.sum(axis=0)
    assert_eq(got, numpy.zeros(3, numpy.int64))
    assert x.sum() == 0 and type(x.sum()) is numpy.int64
    assert x.prod() == 1


# -------------------------------------------------------- communication figures


@pytest.mark.parametrize("shape", [(13, 11), (7, 5), (2, 9), (17,)], ids=str)
def test_axis_reduction_broadcasts_back_with_no_communication(shape):
    a = ref(shape)
    x = sp.array(a)
    m0 = x.mean(axis=0)
    with sp.comm_stats() as s:
        d = x - m0
    assert s.bytes_sent == 0 and s.messages_sent == 0
    assert_eq(d, a - a.mean(axis=0), rtol=1e-12, atol=1e-14)
    m1 = x.mean(axis=-1, keepdims=True)
    sd = x.std(axis=-1, keepdims=True)
    with sp.comm_stats() as s:
        z = (x - m1) / sd
    assert s.bytes_sent == 0 and s.messages_sent == 0
    assert_eq(z, (a - a.mean(axis=-1, keepdims=True)) / a.std(axis=-1, keepdims=True), rtol=1e-11, atol=1e-13)


def test_x_minus_x_mean_axis0_sends_nothing_beyond_the_reduction():
    a = ref((13, 11))
    x = sp.array(a)
    m = x.mean(axis=0)
    with sp.comm_stats() as s:
        y = x - m
        y = y * m
        y = numpy.maximum(y, m)
    assert s.bytes_sent == 0 and s.messages_sent == 0
    assert_eq(y, numpy.maximum((a - a.mean(axis=0)) * a.mean(axis=0), a.mean(axis=0)), rtol=1e-12, atol=1e-14)


def test_reductions_only_use_collectives_within_groups():
    _, size = world()
    a = ref((13, 11))
    x = sp.array(a)
    with sp.comm_stats() as s:
        v = x.sum(axis=0)
    assert s.messages_sent == 0
    if size == 1:
        assert s.collectives == 0
    assert_eq(v, a.sum(axis=0))


# ---------------------------------------------------------------------- errors


@pytest.mark.parametrize("name", NAMES)
def test_axis_out_of_range_raises_axis_error(name):
    a = ref((7, 5))
    x = sp.array(a)
    for axis in (2, -3, (0, 2)):
        if name in ARG and isinstance(axis, tuple):
            continue
        with pytest.raises(numpy.exceptions.AxisError) as np_err:
            getattr(numpy, name)(a, axis=axis)
        with pytest.raises(numpy.exceptions.AxisError) as sp_err:
            getattr(numpy, name)(x, axis=axis)
        assert str(sp_err.value) == str(np_err.value)
        with pytest.raises(numpy.exceptions.AxisError):
            getattr(x, name)(axis=axis)


def test_duplicate_axis_raises_value_error():
    a = ref((7, 5))
    x = sp.array(a)
    with pytest.raises(ValueError) as np_err:
        a.sum(axis=(0, 0))
    with pytest.raises(ValueError) as sp_err:
        x.sum(axis=(0, 0))
    assert str(sp_err.value) == str(np_err.value)
    with pytest.raises(ValueError):
        x.max(axis=(1, -1))


def test_where_keyword_is_not_implemented():
    x = sp.ones((4, 3))
    with pytest.raises(NotImplementedError, match="where"):
        x.sum(where=sp.ones((4, 3), bool))


# ------------------------------------------------------- reducing reduced arrays


def test_reductions_of_reduction_results():
    a = ref((9, 7))
    x = sp.array(a)
    m0 = x.sum(axis=0)  # replicated along the reduced grid axis: no double counting
    _check(m0.sum(), a.sum(axis=0).sum(), rtol=1e-12)
    _check(m0.max(), a.sum(axis=0).max(), rtol=1e-12)
    _check(m0.argmax(), a.sum(axis=0).argmax(), exact=True)
    k = x.sum(axis=0, keepdims=True)
    assert_eq(k.sum(axis=1), a.sum(axis=0, keepdims=True).sum(axis=1), rtol=1e-12)
    assert_eq(k.sum(axis=0), a.sum(axis=0, keepdims=True).sum(axis=0), rtol=1e-12)
    _check(x.mean(axis=1).std(), a.mean(axis=1).std(), rtol=1e-12)
    _check(x.max(axis=1).argmin(), a.max(axis=1).argmin(), exact=True)
    assert_eq(x.min(axis=0, keepdims=True).argmax(axis=1), a.min(axis=0, keepdims=True).argmax(axis=1))


def test_any_all_of_numbers():
    a = numpy.zeros((7, 5))
    a[6, 4] = 0.5
    x = sp.array(a)
    for name in ("any", "all"):
        for axis in (None, 0, 1):
            _check(getattr(x, name)(axis=axis), _np(name, a, axis=axis), exact=True)
    n = numpy.array([[numpy.nan, 0.0], [1.0, 2.0]])
    _check(sp.array(n).all(axis=0), n.all(axis=0), exact=True)
    _check(sp.array(n).any(), n.any(), exact=True)


@pytest.mark.parametrize("axis", [0, 1, None, (0, 1)])
@pytest.mark.parametrize("name", ["sum", "prod", "min", "max", "any", "all", "mean", "std"])
def test_large_partials_use_reduce_bcast_with_numpys_results(monkeypatch, name, axis):
    """Above ``config.reduce_gather_bytes`` the combine is a rank-ordered
    Reduce + Bcast; forcing it for every size must still give NumPy's answers,
    identical on every rank, including a NaN and ranks without data."""
    from mpi4py import MPI

    monkeypatch.setattr(sp.config, "reduce_gather_bytes", 0)
    a0 = ref((11, 7), seed=3)
    a0[4, 2] = numpy.nan if name not in ("any", "all") else a0[4, 2]
    if name in ("any", "all"):
        a0 = a0 > (0.9 if name == "any" else -2.0)
    if name == "prod":
        a0 = a0 / 4 + 1
    a = sp.array(a0)
    got = getattr(a, name)(axis=axis)
    assert_eq(got, getattr(a0, name)(axis=axis))
    if axis is None or axis == (0, 1):
        texts = MPI.COMM_WORLD.allgather(numpy.asarray(got).tobytes())
        assert len(set(texts)) == 1


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32, numpy.complex128, numpy.complex64])
@pytest.mark.parametrize("n", [1, 7, 1000, 100_001])
def test_a_full_mean_is_the_sums_plan_then_the_general_paths_division(dtype, n):
    # ``x.mean()`` takes the full sum's cached plan; its bits are those of the general
    # path (``mean(axis=0)``), and NumPy's own where every rank holds the array whole.
    a = (numpy.random.default_rng(n).random(n) * 1e3).astype(dtype)
    if numpy.dtype(dtype).kind == "c":
        a = a + 1j * a[::-1]
    with sp.config.set(replicate_below=1 << 16):
        x = sp.asarray(a)
    for v, r in ((x, a), (x[1:], a[1:]), (x[::-3], a[::-3])):
        if not r.size:
            continue
        got = v.mean()
        general = v.mean(axis=0)
        assert type(got) is type(general) is type(r.mean())
        assert got == general
        if n < (1 << 16) and not x._st.be.is_device:  # (device reductions are the device's)
            assert got == r.mean()


def test_a_reduction_error_is_raised_every_time():
    x = sp.asarray(numpy.array(["a", "b", "c"]))
    for _ in range(2):  # the probe of its result dtype is cached only when it succeeds
        with pytest.raises(TypeError):
            x.sum()
