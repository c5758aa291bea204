"""Replicated arrays large enough for the fuser (``config.fuse_replicated_min``) defer and
fuse their elementwise operations, each rank computing the whole result in one kernel,
with no message; element and slice reads stay NumPy's indexing of the copy.

Run serially and under ``mpiexec -n 2/3/4 python -m pytest tests/test_fused_replicated.py``.
Every result is compared with NumPy's bit for bit (the fused kernels compute each
element as NumPy does: same operations, same order).
"""

import numpy
import pytest
from helpers import assert_eq, real_gpu
from spmdarray.comm.stats import COUNTERS

import spmdarray as sp
from spmdarray.core.placement import is_whole

N = 331  # (a 331 x 331 grid: 109,561 elements, past the fuse_replicated_min of 100,000 set below)

pytestmark = pytest.mark.skipif(real_gpu(), reason="host arrays: the lane is NumPy's")


@pytest.fixture
def replicated():
    """Arrays of this size are created replicated, and the fuser takes them (an opt-in setting)."""
    with sp.config.set(replicate_below=1 << 20, fuse=True, fuse_min_size=1 << 14, fuse_replicated_min=100_000):
        yield


def _grid(seed: int, n: int = N, dtype=numpy.float64):
    ref = numpy.random.default_rng(seed).random((n, n)).astype(dtype)
    return ref, sp.asarray(ref.copy())


def _sent() -> tuple:
    return COUNTERS["bytes_sent"], COUNTERS["messages_sent"], COUNTERS["collectives"]


def test_stencil_sweeps_fused_match_numpy_and_send_nothing(replicated):
    ra, a = _grid(0)
    rb, b = _grid(1)
    assert is_whole(a._st.layout)
    sp.sync()
    before = _sent()
    for _ in range(3):
        b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])
        a[1:-1, 1:-1] = 0.2 * (b[1:-1, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] + b[2:, 1:-1] + b[:-2, 1:-1])
        rb[1:-1, 1:-1] = 0.2 * (ra[1:-1, 1:-1] + ra[1:-1, :-2] + ra[1:-1, 2:] + ra[2:, 1:-1] + ra[:-2, 1:-1])
        ra[1:-1, 1:-1] = 0.2 * (rb[1:-1, 1:-1] + rb[1:-1, :-2] + rb[1:-1, 2:] + rb[2:, 1:-1] + rb[:-2, 1:-1])
    sp.sync()
    assert _sent() == before  # every rank computes the whole grid: no message, no collective
    assert is_whole(a._st.layout) and is_whole(b._st.layout)
    assert_eq(a, ra, exact=True)
    assert_eq(b, rb, exact=True)


def test_operations_are_deferred_above_the_threshold_only(replicated):
    _, a = _grid(2)
    if a._st.be.is_device:
        pytest.skip("device blocks are off the lane: the engine (and the fuser) takes every operation")
    _, small = _grid(3, n=200)  # 40,000 elements: NumPy's own calls
    assert (a + 1.0)._s.deferred
    assert (a[1:-1, 1:-1] * a[:-2, 1:-1])._s.deferred
    assert not (small + 1.0)._s.deferred
    assert not (a[0, :] + 1.0)._s.deferred  # a row: the lane
    with sp.config.set(fuse_replicated_min=0):  # off (the default): every replicated array on the lane
        _, c = _grid(4)
        assert not (c + 1.0)._s.deferred
    with sp.config.set(fuse=False):
        _, d = _grid(5)
        assert not (d + 1.0)._s.deferred


def test_element_reads_and_writes_between_fused_statements(replicated):
    ra, a = _grid(6)
    y = a * 2.0 + 1.0  # deferred: reads a's current values
    ry = ra * 2.0 + 1.0
    a[3, 4] = -7.5  # written before y is computed: y keeps the old value, as in NumPy
    ra[3, 4] = -7.5
    a[5, :] = 0.25
    ra[5, :] = 0.25
    assert y[3, 4] == ry[3, 4] and y[5, 7] == ry[5, 7]
    z = a - y
    rz = ra - ry
    assert z[3, 4] == rz[3, 4]
    assert a[3, 4] == -7.5
    v = a[1:-1, 1:-1]
    v[:] = (v + a[:-2, 1:-1] + a[2:, 1:-1]) * 0.5  # in place, reading the view it writes
    rv = ra[1:-1, 1:-1]
    rv[:] = (rv + ra[:-2, 1:-1] + ra[2:, 1:-1]) * 0.5
    assert float(a[10, 10]) == float(ra[10, 10])
    assert_eq(a, ra, exact=True)
    assert_eq(y, ry, exact=True)
    assert_eq(z, rz, exact=True)


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32, numpy.int64, numpy.complex128])
def test_in_place_and_reductions_match_numpy(replicated, dtype):
    ra, a = _grid(7, dtype=dtype)
    rb, b = _grid(8, dtype=dtype)
    a += b
    ra += rb
    a *= 3
    ra *= 3
    c = (a - b)[::-1, ::2]  # a negative step and a stride over a fused value
    rc = (ra - rb)[::-1, ::2]
    m = a > b
    rm = ra > rb
    assert_eq(c, rc, exact=True)
    assert_eq(m, rm)
    assert_eq(a.sum(axis=0), ra.sum(axis=0))
    assert a.max() == ra.max()
    assert_eq(sp.where(m, a, b), numpy.where(rm, ra, rb))


def test_broadcast_and_mixed_sizes(replicated):
    ra, a = _grid(9)
    rr = numpy.arange(N, dtype=numpy.float64)
    r = sp.asarray(rr)  # a small replicated vector broadcast against the grid
    assert_eq(a * r + r[:, None], ra * rr + rr[:, None])
    assert_eq(sp.sqrt(a) + 1.0, numpy.sqrt(ra) + 1.0)
    assert_eq(2.0**a, 2.0**ra)


def test_split_operand_meets_a_fused_replicated_one(replicated):
    ra, a = _grid(10)
    with sp.config.set(replicate_below=0):
        rs = numpy.random.default_rng(11).random((N, N))
        s = sp.asarray(rs)
    assert_eq(a + s, ra + rs)
    assert_eq((a * 2.0) - s * 0.5, (ra * 2.0) - rs * 0.5)
    s[...] = a * 0.5  # a split destination of a fused replicated value
    rs[...] = ra * 0.5
    assert_eq(s, rs)


def test_shape_mismatch_raises_numpys_error(replicated):
    _, a = _grid(12)
    _, b = _grid(13, n=N - 1)
    with pytest.raises(ValueError, match="could not be broadcast"):
        a + b
    with pytest.raises(ValueError):
        a[1:, :] += a
