"""NumPy scalars and region assignments on the whole-array lane, against NumPy bit for bit.

``alpha * A[i, k] * A[:i, k]`` (a NumPy scalar on the left reaches
``__array_ufunc__``) and ``A[i, :j] = A[i - 1, :j]`` are decided inline on the
lane.  Each case runs with small arrays replicated (the lane) and with every
array split (``replicate_below=0``: the general path).  Run at 1, 2, 3 and 4
ranks::

    mpiexec -n 3 python -m pytest -q --with-mpi tests/test_lane_scalars.py
"""

from __future__ import annotations

import numpy
import pytest
from helpers import assert_eq, ref

import spmdarray as sp
from spmdarray.core import whole
from spmdarray.settings import FIELDS, config


@pytest.fixture(params=[FIELDS["replicate_below"].default, 0], ids=["replicated", "split"])
def below(request):
    with config.set(replicate_below=request.param):
        yield request.param


SCALARS = [numpy.float64(1.5), numpy.float32(-2.25), numpy.int64(3), numpy.int8(-2), numpy.complex64(1 - 2j)]


@pytest.mark.parametrize("dtype", ["f8", "f4", "i2", "u1"])
@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
def test_numpy_scalars_on_either_side_match_numpy(below, monkeypatch, dtype, scalar):
    """``alpha * A[i, k] * A[:i, k]``: a NumPy scalar on the left reaches ``__array_ufunc__``
    (NumPy's scalar operators call the ufunc); on the lane it is NumPy's call on the copy,
    NumPy's promotion (a NumPy scalar keeps its dtype), no general path."""
    from spmdarray.core.registry import ops

    a = (numpy.abs(ref((4, 5))) * 10 + 1).astype(dtype)
    x = sp.array(a)
    lane = whole.local(x) is not None
    calls = []
    general = ops.array_ufunc
    monkeypatch.setattr(ops, "array_ufunc", lambda *args: calls.append(args[0]) or general(*args))
    with numpy.errstate(all="ignore"):
        for f in (lambda u, v: u * v, lambda u, v: u - v, lambda u, v: u / v, lambda u, v: u < v):
            assert_eq(f(scalar, x[1:, 2]), f(scalar, a[1:, 2]), exact=True)
            assert_eq(f(x[:, ::-2], scalar), f(a[:, ::-2], scalar), exact=True)
        assert_eq(numpy.add(scalar, x), numpy.add(scalar, a), exact=True)
    if lane:
        assert calls == []


@pytest.mark.parametrize(
    "key, src",
    [
        ((3, slice(None, 4)), (slice(2, 6), 1)),
        ((slice(1, None), 0), (slice(None, -1), 0)),  # overlapping, same storage: NumPy copies first
        ((slice(None), slice(1, None)), (slice(None), slice(None, -1))),
        (2, 4),
        ((slice(None, None, -1), 1), (slice(None), 1)),
        ((0, slice(4, None, -1)), (1, slice(None))),
    ],
    ids=repr,
)
@pytest.mark.parametrize("other", ["self", "other", "other-i4"])
def test_region_assignment_of_arrays_matches_numpy(below, key, src, other):
    a = ref((6, 5))
    b = a if other == "self" else ref((6, 5), seed=9)
    if other == "other-i4":
        a = (a * 100).astype(numpy.int32)  # a float value cast into an integer array, as NumPy
    x = sp.array(a)
    y = x if other == "self" else sp.array(b)
    x[key] = y[src]
    a[key] = b[src]
    assert_eq(x, a, exact=True)
    assert_eq(y, b, exact=True)
    with pytest.raises(ValueError):
        a[key] = numpy.ones(7)
    with pytest.raises(ValueError):
        x[key] = sp.ones(7)
    assert_eq(x, a, exact=True)  # nothing written by the failed assignment
