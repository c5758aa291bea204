"""Products that a loop reads from one unwritten split array again and again, against NumPy.

``cov[i, i:] = d[:, i] @ d[:, i:]`` on a split ``d`` made one all-reduce per
iteration.  After a few products read one version of a split array of at most
``config.gather_rereads_below`` elements, it is gathered whole once
and the products are NumPy's own on the copy: NumPy's bits, and no collective
until the array is written (``spmdarray.core.rereads``).

Run at 1, 2, 3 and 4 ranks::

    mpiexec -n 3 python -m pytest -q tests/test_rereads.py
"""

from __future__ import annotations

import numpy
import pytest
from helpers import ref, world

import spmdarray as sp
from spmdarray.core import rereads
from spmdarray.settings import config


def _covariance(np, data):
    m = data.shape[1]
    data -= np.mean(data, axis=0)
    cov = np.zeros((m, m), dtype=data.dtype)
    for i in range(m):
        cov[i:m, i] = cov[i, i:m] = data[:, i] @ data[:, i:m] / (data.shape[0] - 1.0)
    return cov


@pytest.mark.parametrize("shape", [(61, 23), (7, 40), (130, 5), (3, 3)])
def test_covariance_loop_equals_numpy(shape):
    # (The mean and the first products are sums of the ranks' parts: NumPy's value, not its bits.)
    a = ref(shape, float, 3)
    expected = _covariance(numpy, a.copy())
    with config.set(replicate_below=16):
        got = numpy.asarray(_covariance(sp, sp.array(a)))
    numpy.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


def test_unwritten_loop_gathers_once():
    n, m = 90, 40
    a = ref((n, m), float, 5)
    k = rereads.REREADS
    with config.set(replicate_below=16):
        d = sp.array(a)
        got = [d[:, i] @ d[:, i:] for i in range(k - 1)]  # the general path
        sp.sync()
        with sp.comm_stats() as gather:
            got.append(d[:, k - 1] @ d[:, k - 1 :])
        with sp.comm_stats() as after:
            got += [d[:, i] @ d[:, i:] for i in range(k, m)]
    for i, g in enumerate(got):
        e = a[:, i] @ a[:, i:]
        if i >= k - 1 and not d._st.be.is_device:  # NumPy's own product on the copy: its bits
            assert numpy.asarray(g).tobytes() == e.tobytes()
        numpy.testing.assert_allclose(numpy.asarray(g), e, rtol=1e-13)
    if d._st.be.is_device:  # (device arrays take the general path)
        return
    assert (after.collectives, after.messages_sent) == (0, 0)
    size = world()[1]
    assert gather.messages_sent == 0
    assert gather.collectives == (1 if size > 1 else 0)
    assert gather.collective_bytes <= n * m * 8 * size, gather.collective_bytes


def test_writes_between_products_are_seen():
    n, m = 50, 12
    a = ref((n, m), float, 7)

    def loop(np, d):
        out = []
        for i in range(m):
            out.append(d[:, i] @ d[:, i:])
            if i % 4 == 3:
                d[i, i] = -1.5  # a scalar write: the copy is kept current
            if i % 5 == 4:
                d[:, i:] *= 0.5  # a slice write: the copy is stale
            out.append(d[:, : i + 1].T @ d[:, i])
        return out

    expected = loop(numpy, a.copy())
    with config.set(replicate_below=16):
        got = loop(sp, sp.array(a))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        numpy.testing.assert_allclose(numpy.asarray(g), e, rtol=1e-13)


@pytest.mark.parametrize("dtype", [numpy.int32, numpy.complex64, numpy.float32])
def test_dtypes_views_and_steps(dtype):
    a = (ref((33, 17), float, 9) * 10).astype(dtype)
    v = (ref((33,), float, 2) * 10).astype(dtype)

    def loop(np, d, x):
        out = []
        for i in range(6):
            out.append(d[::-1, i] @ x[::-1])
            out.append(x[::3] @ d[::3, i:])
            out.append(d[5:, :].T @ x[5:])
            out.append(d[:, i : i + 3].T @ d[:, 2 * i % 17])
        return out

    expected = loop(numpy, a, v)
    with config.set(replicate_below=16):
        d = sp.array(a)
        got = loop(sp, d, sp.array(v))
    copied = not d._st.be.is_device  # (device arrays take the general path)
    for k, (g, e) in enumerate(zip(got, expected)):
        g, e = numpy.asarray(g), numpy.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape
        if k >= 4 * rereads.REREADS and copied or dtype is numpy.int32:  # on the copy (or exact integers): NumPy's bits
            assert g.tobytes() == e.tobytes()
        numpy.testing.assert_allclose(g, e, rtol=1e-5)


def test_mismatched_shapes_raise_numpy_error():
    a = ref((20, 8), float, 1)
    with config.set(replicate_below=16):
        d = sp.array(a)
        for i in range(4):
            d[:, i] @ d[:, i:]
        with pytest.raises(ValueError, match="mismatch in its core dimension"):
            d[:10, 0] @ d[:, 1:]


@pytest.mark.parametrize("limit", [0, 400])
def test_large_arrays_are_not_gathered(limit):
    # At the limit (or with the setting 0) the products stay on the general path: one collective each.
    a = ref((40, 10), float, 4)
    with config.set(replicate_below=16, gather_rereads_below=limit):
        d = sp.array(a)
        sp.sync()
        with sp.comm_stats() as s:
            got = [d[:, i] @ d[:, i:] for i in range(10)]
    for i, g in enumerate(got):
        numpy.testing.assert_allclose(numpy.asarray(g), a[:, i] @ a[:, i:], rtol=1e-13)
    if world()[1] > 1 and not d._st.be.is_device:
        assert s.collectives >= 10


def test_counts_keep_no_array_alive():
    import gc
    import weakref

    with config.set(replicate_below=16):
        d = sp.array(ref((30, 6), float, 8))
        [d[:, i] @ d[:, i:] for i in range(6)]
        st = weakref.ref(d._st)
        del d
    gc.collect()
    assert st() is None
