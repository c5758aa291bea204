"""The compiled lane (``spmdarray.core._lane``) against the Python lane and NumPy.

The extension computes the usual case of ``whole.wrap``, of the binary and
in-place operators, of ``__getitem__`` with integers and slices and of a NumPy
scalar's operator on arrays every rank holds whole; every other case goes to
the Python code, which stays the reference.  Each test here checks that the
two make the same objects (every slot of the array and of its storage), give
NumPy's values bit for bit, raise NumPy's errors, and hand the cases they do
not compute to Python.  The whole suite also runs with the extension off
(``SPMDARRAY_LANE_EXTENSION=0``, a step of ``tests/run_all.sh``).  Run at 1, 2,
3 and 4 ranks::

    mpiexec -n 3 python -m pytest -q --with-mpi tests/test_lane_extension.py
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import numpy
import pytest
from helpers import assert_eq, backend, ref, world
from lane_helpers import both as _both
from lane_helpers import needs_lane
from lane_helpers import python_calls as _python_calls
from lane_helpers import python_only as _python_only
from lane_helpers import same_objects as _same_objects

import spmdarray as sp
from spmdarray.core import array as array_mod
from spmdarray.core import operators, whole
from spmdarray.settings import config

# The lane holds host copies: on a device backend (CuPy, or its CPU stand-in) every array here
# takes the engine, whose own tests cover it.
pytestmark = pytest.mark.skipif(backend().is_device, reason="host arrays: the lane is NumPy's")

BUILT = importlib.util.find_spec("spmdarray.core._lane") is not None


@pytest.fixture
def replicated():
    """Arrays below the default ``replicate_below`` replicated, every view on the lane (the test
    suite splits every array otherwise: ``SPMDARRAY_REPLICATE_BELOW=0``)."""
    with config.set(replicate_below=1 << 18, fuse_replicated_min=0, whole_lane=True):
        yield


def test_the_lane_is_loaded_where_built():
    """Built (the wheel, an editable install): loaded unless switched off; not built: None."""
    if not BUILT:
        assert whole.LANE is None
    elif config.lane_extension:
        assert whole.LANE is not None and whole.wrap is whole.LANE.wrap
        assert array_mod._REDUCE_C is whole.LANE.reduce
        assert type(vars(operators.OperatorsMixin)["__matmul__"]).__name__ == "LaneMethod"
        assert type(sp.ndarray.__dict__["__getitem__"]).__name__ == "LaneMethod"
        for name in ("T", "shape", "ndim", "size", "dtype"):
            assert type(sp.ndarray.__dict__[name].fget).__name__ == "LaneMethod", name
        for name in ("sum", "prod", "min", "max", "any", "all"):
            assert type(sp.ndarray.__dict__[name]).__name__ == "LaneMethod", name
            assert sp.ndarray.__dict__[name].__wrapped__.__name__ == name
        assert whole.LANE.numpy_layout()  # (NumPy's array fields as wrap reads them: checked at init)
    else:
        assert whole.LANE is None and array_mod._REDUCE_C is None
        assert type(vars(operators.OperatorsMixin)["__matmul__"]).__name__ == "function"
        assert callable(sp.ndarray.__dict__["__getitem__"]) and sp.ndarray.__getitem__.__name__ == "__getitem__"


@needs_lane
@pytest.mark.parametrize("dtype", ["f8", "f4", "i8", "i2", "u1", "c16", "?"])
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 0, 3), (1,)])
def test_wrap_makes_what_the_python_wrap_makes(replicated, dtype, shape):
    x = sp.zeros(3)  # a context and a backend
    ctx, be = x._s.ctx, x._s.be
    res = (numpy.arange(int(numpy.prod(shape))) % 3).astype(dtype).reshape(shape)
    py = whole._py_wrap(ctx, be, res.copy())  # (also puts the shape's kind in the table)
    c = whole.LANE.wrap(ctx, be, res.copy())
    _same_objects(c, py)
    assert_eq(c, res, exact=True)
    c[...] = 1  # a result of its own: writing it leaves the other alone
    assert_eq(py, res, exact=True)


@needs_lane
def test_wrap_hands_other_results_to_python(replicated, monkeypatch):
    """An unseen shape, a non-contiguous or borrowed result, a tuple, a NumPy subclass, another
    ``replicate_below``, a replicated result the fuser takes: the Python wrap's.  A scalar comes
    back as it is, as the Python wrap gives it."""
    x = sp.zeros(3)
    ctx, be = x._s.ctx, x._s.be
    calls = []
    real = whole._py_wrap
    args = list(whole.LANE_INIT)
    assert args[4] is real
    args[4] = lambda *a: calls.append(a[2]) or real(*a)
    whole.LANE.init(*args)
    try:
        base = numpy.arange(12.0).reshape(3, 4)
        real(ctx, be, base.copy())
        real(ctx, be, numpy.ones(7))
        whole.LANE.wrap(ctx, be, base.copy())
        for scalar in (numpy.float64(2.5), 3, numpy.bool_(True), None):
            assert whole.LANE.wrap(ctx, be, scalar) is scalar
        assert calls == []  # the usual cases: C alone
        others = [
            numpy.zeros((5, 11, 14), [("a", "i4")]),  # a structured dtype (a new small shape of numbers: C's)
            numpy.asfortranarray(base),  # not C-contiguous
            base.copy()[:, :],  # a view: not its own data
            (numpy.ones(7), numpy.ones(7)),  # a tuple of results
            numpy.ones(7).view(numpy.matrix),  # a subclass
        ]
        ro = numpy.ones(7)
        ro.flags.writeable = False
        others.append(ro)
        for r in others:
            calls.clear()
            out = whole.LANE.wrap(ctx, be, r)
            assert len(calls) == 1
            if isinstance(r, tuple):
                assert type(out) is tuple and all(type(o) is sp.ndarray for o in out)
            elif isinstance(r, numpy.ndarray) and type(r) is numpy.ndarray:
                assert_eq(out, r, exact=True)
        with config.set(replicate_below=1 << 10):
            calls.clear()
            whole.LANE.wrap(ctx, be, numpy.ones(7))
            assert len(calls) == 1
            calls.clear()
            whole.LANE.wrap(ctx, be, numpy.ones((41, 43)))  # a new shape, not small
            assert len(calls) == 1
        with config.set(fuse_replicated_min=5):
            calls.clear()
            whole.LANE.wrap(ctx, be, numpy.ones(7))  # 7 >= 5: ``fuses`` decides, in Python
            assert len(calls) == 1
    finally:
        whole.LANE.init(*whole.LANE_INIT)


OPS = [
    lambda u, v: u + v,
    lambda u, v: u - v,
    lambda u, v: u * v,
    lambda u, v: u / v,
    lambda u, v: u // v,
    lambda u, v: u % v,
    lambda u, v: u**v,
    lambda u, v: u < v,
    lambda u, v: u == v,
    lambda u, v: u & v,
    lambda u, v: u @ v,
    lambda u, v: u >> v,
    lambda u, v: u << v,
    lambda u, v: u | v,
    lambda u, v: u ^ v,
]


@pytest.mark.parametrize("dtype", ["f8", "f4", "i8", "u1", "?", "c8"])
@pytest.mark.parametrize("k", range(len(OPS)))
def test_binary_operators_match_numpy_and_the_python_lane(replicated, dtype, k):
    """Arrays, views with negative steps, Python and NumPy scalars on either side, broadcasting,
    0-d arrays: NumPy's values and dtypes bit for bit, or NumPy's exception type."""
    f = OPS[k]
    a0 = (numpy.abs(ref((5, 4), seed=1)) * 7 + 1).astype(dtype)
    b0 = (numpy.abs(ref((5, 4), seed=2)) * 3 + 1).astype(dtype)
    a, b = sp.array(a0), sp.array(b0)
    cases = [
        (lambda a, b: (a, b)),
        (lambda a, b: (a[::-1, 1:], b[1:, ::-2][:, :1])),  # views, negative steps, broadcasting
        (lambda a, b: (a[2], 3)),
        (lambda a, b: (2.5, a[:, 1])),
        (lambda a, b: (a[1:3], numpy.float32(1.5))),
        (lambda a, b: (numpy.int64(2), a[::2])),
        (lambda a, b: (a[3, 1:2], True)),
        (lambda a, b: (a[0], b[0])),
    ]
    for case in cases:
        x, y = case(a, b)
        x0, y0 = case(a0, b0)
        with numpy.errstate(all="ignore"):
            try:
                want = f(x0, y0)
            except Exception as e:  # noqa: BLE001 - NumPy's exception type is the reference
                with pytest.raises(type(e)):
                    f(x, y)
                continue
            got, py = _both(f, x, y)
        assert_eq(got, want, exact=True)
        assert_eq(py, want, exact=True)
        if type(got) is sp.ndarray and type(py) is sp.ndarray and got.ndim:
            _same_objects(got, py)


@needs_lane
def test_binary_hands_other_operands_to_python(replicated, monkeypatch):
    a, b = sp.array(numpy.arange(6.0)), sp.array(numpy.ones(6))
    slow = whole.SLOW
    assert whole.LANE.binary(numpy.add, a, b, False) is not slow
    assert whole.LANE.binary(numpy.add, a, 2.0, True) is not slow
    for other in (True, 1j, [1.0] * 6, numpy.ones(6), "x", None):
        assert whole.LANE.binary(numpy.add, a, other, False) is slow
    assert whole.LANE.binary(numpy.add, a, b, True) is slow  # (a reflected array: Python's)
    with config.set(whole_lane=False):
        assert whole.LANE.binary(numpy.add, a, b, False) is slow
    with config.set(replicate_below=0):
        big = sp.array(numpy.arange(6.0))  # split (or whole on one rank: not replicated)
        assert whole.LANE.binary(numpy.add, big, 1.0, False) is slow
    large = sp.array(numpy.ones(40_000))  # a possible temporary: NumPy's elision, decided in Python
    assert whole.LANE.binary(numpy.add, large, 1.0, False) is slow


@pytest.mark.parametrize("dtype", ["f8", "i4", "c16"])
def test_inplace_operators_match_numpy(replicated, dtype):
    """NumPy's values, or NumPy's exception type with the array unchanged, on both lanes."""
    a0 = (ref((4, 6), seed=3) * 5).astype(dtype)
    for stmt in (
        "x += 2",
        "x *= y",
        "x[1:3] -= y[0]",
        "x[:, ::-2] *= numpy.float32(0.5)",
        "x[2] += x[1]",
        "x[1:] += x[:-1]",  # overlapping: NumPy's order
        "x **= 2",
    ):
        xn, yn = a0.copy(), a0 + 1
        err = None
        try:
            exec(stmt, {"x": xn, "y": yn, "numpy": numpy})
        except Exception as e:  # noqa: BLE001 - NumPy's exception type is the reference
            err = type(e)
        for use_c in (True, False):
            x, y = sp.array(a0), sp.array(a0 + 1)
            g = {"x": x, "y": y, "numpy": numpy}

            def run(g=g, stmt=stmt, err=err):
                if err is None:
                    exec(stmt, g)
                else:
                    with pytest.raises(err):
                        exec(stmt, g)

            if use_c:
                run()
            else:
                _python_only(run)
            assert_eq(g["x"], xn, exact=True)


def test_inplace_bumps_the_version_and_refuses_a_bad_cast(replicated):
    x = sp.array(numpy.arange(5))
    v = x._s.version
    x += 1
    assert x._s.version == v + 1
    with pytest.raises(numpy._core._exceptions._UFuncOutputCastingError):
        x += 0.5  # int64 += float64: NumPy's casting error, x unchanged
    assert_eq(x, numpy.arange(5) + 1, exact=True)
    assert x._s.version == v + 1


def test_inplace_computes_deferred_readers_first():
    """A deferred value reading the storage (``config.fuse_replicated_min``) is computed before the
    in-place write: the compiled lane hands that case to Python."""
    with config.set(replicate_below=1 << 18, fuse_replicated_min=1, fuse_min_size=0):
        x0 = numpy.arange(20.0)
        x = sp.array(x0)
        d = x * 2.0  # deferred where the fuser runs
        x += 1
        assert_eq(d, x0 * 2.0, exact=True)
        assert_eq(x, x0 + 1, exact=True)


KEYS = [0, -1, 3, slice(None), slice(1, None, 2), slice(None, None, -1), (2, 1), (1, slice(None, 2)),
        (slice(None), 0), (slice(3, 0, -1), slice(None, None, 2)), (), (-2, -3), (slice(5, 9),),
        (None, 1), (slice(None), None, slice(1, 3)), (None,), (2, None, 3, None)]  # fmt: skip


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_getitem_matches_numpy_and_the_python_lane(replicated, key):
    a0 = ref((4, 5), seed=4)
    a = sp.array(a0)
    got, py = _both(lambda: a[key])
    want = a0[key]
    assert type(got) is type(py)
    assert_eq(got, want, exact=True)
    if type(got) is sp.ndarray:
        assert got._pend[1] is key and py._pend[1] is key
        assert got.shape == py.shape == want.shape and got._map == py._map and got._lay == py._lay
        # A view of a view, and writes through both, as NumPy's.
        sub = got[..., ::-1] if got.ndim else got
        got2 = sub * 1
        assert_eq(got2, want[..., ::-1] * 1 if want.ndim else want, exact=True)


@pytest.mark.parametrize("key", [5, (0, 7), (4, 0), -6, (slice(None), 5)], ids=repr)
def test_getitem_raises_numpys_index_error(replicated, key):
    a0 = ref((4, 5), seed=5)
    a = sp.array(a0)
    with pytest.raises(IndexError) as want:
        a0[key]
    with pytest.raises(IndexError) as got:
        a[key]
    assert str(got.value) == str(want.value)


def test_views_of_views_and_writes_through_them(replicated):
    a0 = ref((6, 6), seed=6)
    a = sp.array(a0)
    v = a[1:5]
    w = v[::-1, 2]
    w2 = w[1:]
    assert_eq(w2, a0[1:5][::-1, 2][1:], exact=True)
    w2[...] = 7.0
    a0[1:5][::-1, 2][1:] = 7.0
    assert_eq(a, a0, exact=True)
    a[2, 1:4] += a[3, :3]
    a0[2, 1:4] += a0[3, :3]
    assert_eq(a, a0, exact=True)


def test_numpy_scalar_operators(replicated):
    a0 = ref((5,), seed=7)
    a = sp.array(a0)
    for s in (numpy.float64(1.5), numpy.float32(2.0), numpy.int8(-3), numpy.complex128(1j), numpy.bool_(True)):
        for f in (lambda u, v: u * v, lambda u, v: u - v, lambda u, v: u > v):
            got, py = _both(f, s, a[1:])
            assert_eq(got, f(s, a0[1:]), exact=True)
            assert_eq(py, f(s, a0[1:]), exact=True)
    with numpy.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            numpy.float64(1.0) / sp.array(numpy.zeros(3))


def test_split_arrays_match_the_python_lane():
    """Every array split (``replicate_below=0``): on one rank each is held whole, and the compiled
    lane computes the usual cases as the Python lane does (its views stay split, arrays as large
    as the fuser's stay off the lane); on several ranks the Python methods take them.  The same
    values, views and flags either way."""
    one = world()[1] == 1
    with config.set(replicate_below=0):
        a0 = ref((8, 3), seed=8)
        a = sp.array(a0)
        got, py = _both(lambda: a[2:, 1] * 2.0 + a[:-2, 0])
        assert_eq(got, a0[2:, 1] * 2.0 + a0[:-2, 0], exact=True)
        assert_eq(py, a0[2:, 1] * 2.0 + a0[:-2, 0], exact=True)
        for key in ((slice(2, None), 1), (1,), (slice(None, None, -1),)):
            v, pv = _both(lambda key=key: a[key])
            # (the same flags: on the lane or not, split or replicated, held or not)
            assert [e is None for e in v._loc] == [e is None for e in pv._loc] and v._loc[2] is pv._loc[2]
            assert_eq(v, a0[key], exact=True)
            t, pt = _both(lambda v=v: v.T)
            assert_eq(t, a0[key].T, exact=True)
        if one and whole.LANE is not None:
            assert a._loc[2] is False
            # (a split result caches its block's view, as ``Storage`` does: the key's hash is ViewMap's)
            assert _python_calls(lambda: a[2:, 1] * 2.0 + a[:-2, 0], ignore=("__hash__",)) == 0
            assert _python_calls(lambda: a.T) == 0
        with config.set(fuse_min_size=4):  # views of 4 elements or more: the fuser's, off the lane
            got, py = _both(lambda: a[2:, 1] * 2.0)
            assert_eq(got, a0[2:, 1] * 2.0, exact=True)
            assert_eq(py, a0[2:, 1] * 2.0, exact=True)
            if one:
                assert a[2:, 1]._loc[1] is None and a[2:4, 1]._loc[1] is not None
        a += 1
        a[3, 1] = 5.0
        a[1:3] = a[4:6]
        b0 = a0 + 1
        b0[3, 1] = 5.0
        b0[1:3] = b0[4:6]
        assert_eq(a, b0, exact=True)
        # (one rank: NumPy's sum of the copy; several: a distributed sum, in its own order)
        assert a.sum() == b0.sum() if one else numpy.isclose(a.sum(), b0.sum(), rtol=1e-13)


@pytest.mark.skipif(not BUILT, reason="the compiled lane is not built")
def test_switched_off_the_python_lane_runs_alone():
    if world()[1] > 1:
        pytest.skip("starts its own process: serial run only")
    code = (
        "import numpy, spmdarray as sp\n"
        "from spmdarray.core import whole, operators\n"
        "assert whole.LANE is None and type(vars(operators.OperatorsMixin)['__matmul__']).__name__ == 'function'\n"
        "a = sp.array(numpy.arange(6.0))\n"
        "b = (a[1:] * 2.0 + numpy.float64(1.0) * a[:-1])\n"
        "b += 1\n"
        "assert numpy.array_equal(numpy.asarray(b), numpy.arange(1.0, 6.0) * 2 + numpy.arange(5.0) + 1)\n"
        "print('ok')\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "OMPI_", "PMIX_", "HYDRA_", "MPI"))}
    env["SPMDARRAY_LANE_EXTENSION"] = "0"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


@pytest.mark.parametrize("dtype", ["f8", "f4", "i8", "u1", "?", "c16"])
def test_numbers_written_into_elements_and_regions(replicated, dtype):
    """``A[i, j] = x`` and ``A[i, :j] = x`` for Python and NumPy numbers: NumPy's values, NumPy's
    error with nothing written (a complex into a real array, an out-of-range index), the
    storage's version bumped once per write."""
    a0 = (numpy.abs(ref((4, 5), seed=9)) * 4).astype(dtype)
    values = [2, -1, 2.5, True, numpy.float32(1.25), numpy.int8(-3), numpy.uint8(7), 1j, numpy.complex64(2 - 1j),
              numpy.float64(numpy.nan), 300]  # fmt: skip
    keys = [(1, 2), (0, slice(None, 3)), 2, slice(1, None, 2), (slice(None), -1), (-1, -1), (9, 0), (0, slice(None))]
    for use_c in (True, False):
        x = sp.array(a0)
        xn = a0.copy()
        for key in keys:
            for val in values:
                err = None
                with numpy.errstate(all="ignore"):
                    try:
                        xn[key] = val
                    except Exception as e:  # noqa: BLE001 - NumPy's exception type is the reference
                        err = type(e)
                v0 = x._s.version

                def write(key=key, val=val, x=x):
                    with numpy.errstate(all="ignore"):
                        x[key] = val

                if err is None:
                    write() if use_c else _python_only(write)
                    assert x._s.version == v0 + 1
                else:
                    with pytest.raises(err):
                        write() if use_c else _python_only(write)
                    assert x._s.version == v0
                assert_eq(x, xn, exact=True)


@needs_lane
def test_setitem_hands_other_cases_to_python(replicated):
    x = sp.array(numpy.arange(6.0))
    slow = whole.SLOW
    assert whole.LANE.setitem(x, 1, 2.0) is True
    for key, value in ((1, "3"), (1, [1.0]), (1, numpy.ones(1)), (numpy.int64(1), 2.0), ([1], 2.0), (..., 1.0)):
        assert whole.LANE.setitem(x, key, value) is slow
    with config.set(whole_lane=False):
        assert whole.LANE.setitem(x, 1, 2.0) is slow
    with config.set(replicate_below=1 << 18, fuse_replicated_min=1, fuse_min_size=0):
        y0 = numpy.arange(30.0)
        y = sp.array(y0)
        d = y * 2.0  # deferred where the fuser runs: it reads y's storage
        assert d._s.deferred or not config.fuse  # (deferred wherever the fuser runs)
        if d._s.deferred:
            assert whole.LANE.setitem(y, 1, 5.0) is slow
        y[1] = 5.0
        assert_eq(d, y0 * 2.0, exact=True)


UFUNCS = [numpy.sqrt, numpy.negative, numpy.abs, numpy.exp, numpy.isnan, numpy.add, numpy.maximum, numpy.arctan2,
          numpy.divmod, numpy.modf, numpy.logical_and, numpy.floor_divide]  # fmt: skip


@pytest.mark.parametrize("ufunc", UFUNCS, ids=lambda u: u.__name__)
@pytest.mark.parametrize("dtype", ["f8", "f4", "i8", "?"])
def test_ufunc_calls_match_numpy_and_the_python_lane(replicated, ufunc, dtype):
    """``np.sqrt(a)``, ``np.maximum(a[::-1], 0.5)``, two outputs (``divmod``): NumPy's values and
    dtypes, or NumPy's exception type, on both lanes."""
    a0 = (ref((3, 4), seed=10) * 4).astype(dtype)
    a = sp.array(a0)
    argsets = [(a, a0), (a[::-1, 1:], a0[::-1, 1:]), (a[1], a0[1])]
    for x, x0 in argsets:
        ins = [x] if ufunc.nin == 1 else [x, numpy.float32(0.5)] if ufunc is numpy.maximum else [x, x]
        ins0 = [x0] if ufunc.nin == 1 else [x0, numpy.float32(0.5)] if ufunc is numpy.maximum else [x0, x0]
        with numpy.errstate(all="ignore"):
            try:
                want = ufunc(*ins0)
            except Exception as e:  # noqa: BLE001 - NumPy's exception type is the reference
                with pytest.raises(type(e)):
                    ufunc(*ins)
                continue
            got, py = _both(ufunc, *ins)
        if isinstance(want, tuple):
            for g, p, w in zip(got, py, want):
                assert_eq(g, w, exact=True)
                assert_eq(p, w, exact=True)
        else:
            assert_eq(got, want, exact=True)
            assert_eq(py, want, exact=True)
            if type(got) is sp.ndarray and got.ndim:
                _same_objects(got, py)


@needs_lane
def test_array_ufunc_hands_other_calls_to_python(replicated):
    a = sp.array(numpy.arange(4.0))
    slow = whole.SLOW
    assert whole.LANE.array_ufunc(a, numpy.sqrt, "__call__", a) is not slow
    assert whole.LANE.array_ufunc(a, numpy.add, "reduce", a) is slow  # methods
    assert whole.LANE.array_ufunc(a, numpy.add, "__call__", a, numpy.ones(4)) is slow  # a NumPy array
    assert whole.LANE.array_ufunc(a, numpy.add, "__call__", a, [1.0] * 4) is slow  # a list
    assert whole.LANE.array_ufunc(a, numpy.add, "__call__") is slow  # no input
    with config.set(replicate_below=0):
        b = sp.array(numpy.arange(4.0))
        assert whole.LANE.array_ufunc(b, numpy.sqrt, "__call__", b) is slow  # not replicated
    # Keywords (``out=``, ``where=``, ``dtype=``) reach the Python method: NumPy's values.
    out = sp.zeros(4)
    assert numpy.sqrt(a, out=out) is out
    assert_eq(out, numpy.sqrt(numpy.arange(4.0)), exact=True)
    assert_eq(numpy.add(a, 1, dtype="f4"), numpy.add(numpy.arange(4.0), 1, dtype="f4"), exact=True)
    assert_eq(numpy.add.reduce(a), numpy.add.reduce(numpy.arange(4.0)), exact=True)


@pytest.mark.parametrize(
    "expr",
    [
        "np.dot(a[1], b[:, 2])",
        "np.dot(a, b)",
        "np.sum(a)",
        "np.sum(a, 0)",
        "np.sum(a, axis=(0, 1), keepdims=True)",
        "np.sum(a[:, None, 1:] * b[None, :, 1:], axis=(1, 2))",
        "np.mean(a, axis=1, dtype='f4')",
        "np.where(a > 0.5, a, b)",
        "np.where(a > 0.5, a, 0.0)",
        "np.clip(a, 0.2, 0.7)",
        "np.outer(a[0], b[1])",
        "np.trace(a)",
        "np.flip(a[2])",
        "np.flip(a[2, ::-2])",
        "np.flip(a)",
        "a[1:, 2] @ b[1:, 0]",
        "a @ b",
        "a[0] @ b",
    ],
)
def test_functions_and_products_match_numpy(replicated, expr):
    """The registered pure functions (``direct``), ``flip`` and ``@``: NumPy's values on both lanes."""
    a0, b0 = ref((4, 4), seed=11), ref((4, 4), seed=12)
    a, b = sp.array(a0), sp.array(b0)
    got, py = _both(lambda: eval(expr, {"np": sp, "a": a, "b": b}))
    want = eval(expr, {"np": numpy, "a": a0, "b": b0})
    assert_eq(got, want, exact=True)
    assert_eq(py, want, exact=True)


def test_flip_is_a_view(replicated):
    r0 = ref((6,), seed=13)
    r = sp.array(r0)
    f = sp.flip(r[:4])
    f[0] = 9.0
    r0[:4][::-1][0] = 9.0
    assert_eq(r, r0, exact=True)


@needs_lane
def test_direct_hands_other_arguments_to_python(replicated):
    a = sp.array(numpy.arange(4.0))
    slow = whole.SLOW
    assert whole.LANE.direct(numpy.sum, (a,), {}) is not slow
    assert whole.LANE.direct(numpy.sum, (a,), {"axis": (0,), "keepdims": True}) is not slow
    for args in ((a, numpy.ones(4)), (a, [1, 2]), (numpy.ones(4),), (), (1.0, 2.0), (a, (1, 2))):
        assert whole.LANE.direct(numpy.dot, args, {}) is slow
    for kw in ({"out": None}, {"axis": [0]}, {"axis": numpy.int64(0)}, {"where": a}):
        assert whole.LANE.direct(numpy.sum, (a,), kw) is slow
    with config.set(replicate_below=0):
        b = sp.array(numpy.arange(4.0))
        assert whole.LANE.direct(numpy.sum, (b,), {}) is slow


def test_in_place_updates_of_views_store_nothing_back(replicated):
    """``C[:i, j] += v``: the view is updated in place and the store-back writes nothing more (the
    version moves once); a different view assigned is copied, as NumPy's."""
    c0 = ref((5, 5), seed=14)
    c = sp.array(c0)
    v0 = c._s.version
    c[:3, 1] += c[3, :3]
    c0[:3, 1] += c0[3, :3]
    assert c._s.version == v0 + 1
    assert_eq(c, c0, exact=True)
    w = c[1:4, 2]
    c[:3, 0] = w
    c0[:3, 0] = c0[1:4, 2]
    assert_eq(c, c0, exact=True)
    k = (slice(None, 3), 1)
    c[k] *= 2.0
    c0[k] *= 2.0
    assert_eq(c, c0, exact=True)


@pytest.mark.parametrize("dtype", ["f8", "i4", "c16", "U3"])
def test_regions_assigned_from_arrays_match_numpy(replicated, dtype):
    """``A[i, :j] = B[k, :j]``, overlapping views of one array (NumPy's copy first), another dtype,
    a broadcast value, strings (converted whole first), a shape mismatch (NumPy's error, nothing
    written): on both lanes."""
    a0 = (ref((5, 6), seed=15) * 9).astype(dtype)
    b0 = (ref((5, 6), seed=16) * 9).astype("f8" if dtype != "U3" else "U3")
    stmts = [
        "a[1, :4] = b[2, :4]",
        "a[1:, 0] = a[:-1, 0]",  # overlapping, same storage
        "a[:, ::-1] = a",
        "a[2] = a[3, ::-1]",
        "a[:2, 1:3] = b[0, 1:3]",  # broadcast
        "a[0, :3] = b[0, :4]",  # NumPy's ValueError
        "a[4, 5] = b[0, :1]",
    ]
    for stmt in stmts:
        an, bn = a0.copy(), b0.copy()
        err = None
        try:
            exec(stmt, {"a": an, "b": bn})
        except Exception as e:  # noqa: BLE001 - NumPy's exception type is the reference
            err = type(e)
        for use_c in (True, False):
            a, b = sp.array(a0), sp.array(b0)

            def run(a=a, b=b, stmt=stmt, err=err):
                if err is None:
                    exec(stmt, {"a": a, "b": b})
                else:
                    with pytest.raises(err):
                        exec(stmt, {"a": a, "b": b})

            run() if use_c else _python_only(run)
            assert_eq(a, an if err is None else a0, exact=True)


@needs_lane
def test_region_assignment_waits_for_deferred_readers():
    with config.set(replicate_below=1 << 18, fuse_replicated_min=1, fuse_min_size=0):
        y0, z0 = numpy.arange(30.0), numpy.ones(30)
        y, z = sp.array(y0), sp.array(z0)
        d = y * 2.0  # deferred where the fuser runs: it reads y's storage
        assert d._s.deferred or not config.fuse  # (deferred wherever the fuser runs)
        if d._s.deferred:
            assert whole.LANE.setitem(y, slice(0, 5), z[:5]) is whole.SLOW
        y[:5] = z[:5]
        assert_eq(d, y0 * 2.0, exact=True)
        y0[:5] = 1.0
        assert_eq(y, y0, exact=True)


@pytest.mark.parametrize("name", ["sum", "prod", "min", "max", "mean", "any", "all", "var", "std"])
@pytest.mark.parametrize("dtype", ["f8", "i8", "?", "c16"])
def test_full_reductions_match_numpy(replicated, name, dtype):
    a0 = (ref((4, 3), seed=17) * 3).astype(dtype)
    a = sp.array(a0)
    for x, x0 in ((a, a0), (a[1:, ::-1], a0[1:, ::-1]), (a[2], a0[2])):
        try:
            want = getattr(x0, name)()
        except Exception as e:  # noqa: BLE001 - NumPy's exception type is the reference
            with pytest.raises(type(e)):
                getattr(x, name)()
            continue
        got, py = _both(lambda x=x: getattr(x, name)())
        assert type(got) is type(want) and type(py) is type(want)
        assert_eq(got, want, exact=True)
        assert_eq(py, want, exact=True)


@pytest.mark.parametrize("dtype", ["f8", "f4", "i8", "c16"])
@pytest.mark.parametrize("e", [2, -1, 0.5, 3, 1.5, -2, 0, numpy.float64(2.0), numpy.int64(2), True, 2.0])
def test_powers_match_numpy(replicated, dtype, e):
    """``x ** e``, ``e ** x`` and ``x **= e``, NumPy's own exponents too (``x ** 2`` is
    ``square``, ``x ** -1`` ``reciprocal``, ``x ** 0.5`` ``sqrt``: compiled for ``**``, Python's
    for ``**=``): NumPy's values bit for bit, or NumPy's exception type, on both lanes."""
    a0 = (numpy.abs(ref((3, 4), seed=18)) * 3 + 1).astype(dtype)
    a = sp.array(a0)
    for f in (lambda u: u**e, lambda u: e**u, lambda u: u[1:, ::-1] ** e):
        with numpy.errstate(all="ignore"):
            try:
                want = f(a0)
            except Exception as err:  # noqa: BLE001 - NumPy's exception type is the reference
                with pytest.raises(type(err)):
                    f(a)
                continue
            got, py = _both(f, a)
        assert_eq(got, want, exact=True)
        assert_eq(py, want, exact=True)
    for use_c in (True, False):
        x, xn = sp.array(a0), a0.copy()
        err = None
        with numpy.errstate(all="ignore"):
            try:
                xn **= e
            except Exception as ex:  # noqa: BLE001
                err = type(ex)

            def ipow(x=x, err=err):
                with numpy.errstate(all="ignore"):
                    if err is None:
                        y = x
                        y **= e
                    else:
                        with pytest.raises(err):
                            y = x
                            y **= e

            ipow() if use_c else _python_only(ipow)
        assert_eq(x, xn if err is None else a0, exact=True)
