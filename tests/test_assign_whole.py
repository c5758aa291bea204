"""Assigning a value every rank holds whole into a split array (``engine.elementwise.assign``).

A replicated array or a NumPy array of the destination's exact shape and dtype
is copied block by block on each rank, with no message and no collective
(``cov[i:, i] = cov[i, i:] = row`` in covariance's loop).  Other values (another
dtype, broadcasting, a split value, a device) take the general path.  NumPy is
the reference.  Run serially and under ``mpiexec -n 2/3/4``.
"""

import contextlib

import numpy
import pytest
from helpers import assert_eq

import spmdarray as sp
from spmdarray.engine import elementwise as _ew
from spmdarray.settings import config

SHAPES = [(7, 5), (9, 4), (3, 11), (1, 6)]
KEYS = [
    (slice(None), 2),
    (2, slice(None)),
    (slice(1, None), 3),
    (0, slice(2, None)),
    (slice(None, None, -1), 1),
    (slice(None, None, -2), slice(None, None, 3)),
    (slice(2, 2), slice(None)),
    (slice(None), slice(None)),
]


@contextlib.contextmanager
def _no_fetch():
    """The general path's operand fetch fails inside: the value is copied block by block."""
    saved = _ew.fetch

    def fail(*args):
        raise AssertionError("the general assignment path ran")

    _ew.fetch = fail
    try:
        yield
    finally:
        _ew.fetch = saved


def _value(shape, dtype, kind):
    rng = numpy.random.default_rng(7)
    v = (rng.random(shape) * 100).astype(dtype)
    if kind == "numpy":
        return v, v
    with config.set(replicate_below=1 << 30):  # every rank holds it whole
        return sp.asarray(v), v


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("key", KEYS, ids=str)
@pytest.mark.parametrize("kind", ["numpy", "replicated"])
def test_a_whole_value_of_the_same_shape_and_dtype_moves_nothing(shape, key, kind):
    ref = numpy.arange(numpy.prod(shape), dtype=float).reshape(shape)
    x = sp.asarray(ref.copy())  # split (the suite's replicate_below is 0)
    try:
        vshape = ref[key].shape
    except IndexError:  # (2, :) of a single row: NumPy's error, on every rank
        with pytest.raises(IndexError):
            x[key] = _value(ref[0].shape, numpy.float64, kind)[0]
        return
    v, vn = _value(vshape, numpy.float64, kind)
    sp.sync()
    # (Device blocks take the general path: the value is copied to the device there.)
    host = not x._st.be.is_device
    with sp.comm_stats() as s, _no_fetch() if host else contextlib.nullcontext():
        x[key] = v
    ref[key] = vn
    assert_eq(x, ref, exact=True)
    if host:
        assert (s.messages_sent, s.collectives) == (0, 0)


@pytest.mark.parametrize("kind", ["numpy", "replicated"])
def test_other_values_take_the_general_path(kind):
    ref = numpy.zeros((6, 5), numpy.int32)
    x = sp.asarray(ref.copy())
    v, vn = _value((6,), numpy.float64, kind)
    x[:, 1] = v  # a cast to int32, as NumPy's
    ref[:, 1] = vn
    w, wn = _value((5,), numpy.int32, kind)
    x[1:4, :] = w  # broadcast along the rows
    ref[1:4, :] = wn
    assert_eq(x, ref, exact=True)
    with pytest.raises(ValueError, match="could not broadcast"):
        x[:, 2] = _value((5,), numpy.int32, kind)[0]


def test_a_value_sharing_memory_with_the_destination():
    ref = numpy.arange(30.0).reshape(6, 5)
    x = sp.asarray(ref.copy())
    with config.set(replicate_below=1 << 30):
        r = sp.asarray(ref[:, 0].copy())
    x[:, 4] = r
    ref[:, 4] = ref[:, 0]
    assert_eq(x, ref, exact=True)


def test_covariance_loop_matches_numpy():
    m, n = 13, 17
    rng = numpy.random.default_rng(3)
    data = rng.random((n, m))
    ref = numpy.zeros((m, m))
    for i in range(m):
        ref[i:m, i] = ref[i, i:m] = data[:, i] @ data[:, i:m] / (n - 1.0)
    d = sp.asarray(data)
    cov = sp.zeros((m, m))
    with config.set(replicate_below=m + 1):  # the rows are small, data and cov are not
        for i in range(m):
            cov[i:m, i] = cov[i, i:m] = d[:, i] @ d[:, i:m] / (n - 1.0)
    assert_eq(cov, ref, rtol=1e-12, atol=1e-12)
