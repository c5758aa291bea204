"""Loops that read one unwritten split array again and again, against NumPy.

Element reads, slices, windows and products of a split array each needed a
collective (``cov[i, i:] = d[:, i] @ d[:, i:]`` one all-reduce per
iteration).  After as many such reads at one version as the array has
64 KiB (at least 3), an array of fewer than ``config.gather_rereads_below``
elements is gathered whole once, and the reads that follow are NumPy's own
on the copy: NumPy's bits, and no collective until the array is written
(``spmdarray.core.rereads``, ``spmdarray.core.element``).

Run at 1, 2, 3 and 4 ranks::

    mpiexec -n 3 python -m pytest -q tests/test_rereads.py
"""

from __future__ import annotations

import numpy
import pytest
from helpers import block, ref, world

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
    n, m = 600, 200  # (14 reads at first: 4 products, each counting as PRODUCT reads)
    a = ref((n, m), float, 5)
    with config.set(replicate_below=16):
        d = sp.array(a)
        k = max(rereads.REREADS, -(-rereads.first_need(d._st) // rereads.PRODUCT))
        assert k == 4
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
        numpy.testing.assert_allclose(numpy.asarray(g), e, rtol=1e-12, atol=1e-12)  # (sums of partials before)
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


def _whole_gathers(stats, nbytes) -> int:
    """Collectives of this run that could have been a whole gather (those of at least half its bytes)."""
    return stats.collective_bytes // max(nbytes // 2, 1)


def test_element_and_row_reads_gather_once():
    # A loop of element and row reads of an unwritten split array: after a few reads with a
    # collective each, one gather of all of it; then nothing.
    n, m = 120, 50
    a = ref((n, m), float, 12)
    with config.set(replicate_below=16):
        x = sp.array(a)
        sp.sync()
        with sp.comm_stats() as s:
            got = [x[i, (7 * i) % m] for i in range(n)] + [float(x[i, 3:9].sum()) for i in range(0, n, 5)]
        with sp.comm_stats() as after:
            again = [x[i, (7 * i + 1) % m] for i in range(n)]
    assert got[:n] == [a[i, (7 * i) % m] for i in range(n)]
    assert got[n:] == [float(a[i, 3:9].sum()) for i in range(0, n, 5)]
    assert again == [a[i, (7 * i + 1) % m] for i in range(n)]
    if world()[1] == 1 or x._st.be.is_device:
        return
    need = rereads.first_need(x._st)
    assert s.collectives <= need + 1, s.collectives
    assert (after.collectives, after.messages_sent) == (0, 0)


def test_scalar_writes_keep_the_copy_current():
    n, m = 60, 40
    a = ref((n, m), float, 13)
    with config.set(replicate_below=16):
        x = sp.array(a)
        for i in range(12):
            x[i, i]  # reads that gather it whole
        sp.sync()
        with sp.comm_stats() as s:
            for i in range(n):
                x[i, i % m] = -float(i)
                a[i, i % m] = -float(i)
                assert x[(i * 13) % n, (i * 7) % m] == a[(i * 13) % n, (i * 7) % m]
    assert_same = numpy.asarray(x)
    assert assert_same.tobytes() == a.tobytes()
    if world()[1] > 1 and not x._st.be.is_device:
        assert (s.collectives, s.messages_sent) == (0, 0)


def test_a_deferred_reader_keeps_the_values_it_read():
    # An operation that read the whole copy and runs later (fused, deferred) sees the values
    # of when it was written; a scalar write after it does not change them.
    n, m = 64, 32
    a = ref((n, m), float, 14)
    with config.set(replicate_below=16, fuse_min_size=0):
        x = sp.array(a)
        for i in range(12):
            x[i, 0]
        row = x[5, :] * 2.0 + 1.0
        x[5, 3] = 1e6
        col = x[:, 3] + 0.0
    e = a.copy()
    want_row = e[5, :] * 2.0 + 1.0
    e[5, 3] = 1e6
    assert numpy.asarray(row).tobytes() == want_row.tobytes()
    assert numpy.asarray(col).tobytes() == (e[:, 3] + 0.0).tobytes()


def test_a_loop_that_writes_between_reads_gathers_rarely():
    # Three reads, then a slice write: each whole copy would serve only a few reads, so the
    # count that gathers grows, and the bytes stay far below one gather per write.
    n, m = 80, 40
    a = ref((n, m), float, 15)
    steps = 40

    def loop(np, x):
        out = []
        for t in range(steps):
            out += [x[(t + k) % n, (3 * t + k) % m] for k in range(6)]
            x[t % n, :] += 1.0
        return out

    expected = loop(numpy, a.copy())
    with config.set(replicate_below=16):
        x = sp.array(a)
        sp.sync()
        with sp.comm_stats() as s:
            got = loop(sp, x)
    assert got == expected
    if world()[1] > 1 and not x._st.be.is_device:
        assert _whole_gathers(s, n * m * 8) <= 4, s.collective_bytes


def test_window_reads_of_a_split_input():
    # A convolution's windows of an input split along its channels (npbench's resnet): every
    # window needs every rank's channels.  Gathered whole after a few windows, read-only.
    rank, size = world()
    a = ref((4, 12, 12, 2 * size + 1), float, 16).astype(numpy.float32)
    w = ref((3, 3, a.shape[3], 5), float, 17).astype(numpy.float32)
    c = a.shape[3]
    lo, hi = rank * c // size, (rank + 1) * c // size

    def conv(np, x, w):
        out = np.empty((4, 10, 10, 5), dtype=np.float32)
        for i in range(10):
            for j in range(10):
                out[:, i, j, :] = np.sum(x[:, i : i + 3, j : j + 3, :, np.newaxis] * w[np.newaxis], axis=(1, 2, 3))
        return out

    expected = conv(numpy, a, w)
    with config.set(replicate_below=4000):
        x = sp.from_local(block(numpy.ascontiguousarray(a[..., lo:hi])), grid=(1, 1, 1, size))
        sp.sync()
        with sp.comm_stats() as s:
            got = conv(sp, x, sp.array(w))
    numpy.testing.assert_allclose(numpy.asarray(got), expected, rtol=1e-5, atol=1e-5)
    if size > 1 and not x._st.be.is_device:
        assert s.collectives <= rereads.first_need(x._st) + 1, s.collectives
        assert s.messages_sent == 0


def test_operations_on_a_gathered_view_take_numpy_on_the_copy(monkeypatch):
    # After the gather, an operation on a small view of the split array (a window, a column)
    # is NumPy's on the copy, as on a replicated array: no collective, no placement.
    from spmdarray.core import operators

    calls = []
    general = operators._apply
    monkeypatch.setattr(operators, "_apply", lambda *a: calls.append(1) or general(*a))
    n, m = 40, 9
    a = ref((n, m), float, 21)
    r = ref((n,), float, 22)
    with config.set(replicate_below=64):
        x = sp.array(a)
        y = sp.array(r[:8])  # replicated
        for i in range(rereads.first_need(x._st) + 1):
            x[:, i] @ x[:, i]  # noqa: B018 - the reads that gather it
        sp.sync()
        calls.clear()
        with sp.comm_stats() as s:
            got = [x[3:11, 2] * 2.5, 1.0 - x[::-3, 4][:8], x[5:13, 1] + y, y / x[-8:, 0], sp.exp(x[2:10, 3])]
        y0 = r[:8]
        expected = [a[3:11, 2] * 2.5, 1.0 - a[::-3, 4][:8], a[5:13, 1] + y0, y0 / a[-8:, 0], numpy.exp(a[2:10, 3])]
        split = not x._st.be.is_device and world()[1] > 1
        for g, e in zip(got, expected):
            assert numpy.asarray(g).tobytes() == e.tobytes()
        if split:
            assert (s.collectives, s.messages_sent) == (0, 0)
            assert not calls, len(calls)
        x[:, 2] = -1.0  # stale now: the general path reads the new values
        after = x[3:11, 2] * 2.5
        numpy.testing.assert_array_equal(numpy.asarray(after), numpy.full(8, -2.5))
        if split:
            assert calls
