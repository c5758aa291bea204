"""Buffers of dropped copies reused for later copies (``spmdarray.core.buffers``).

A read-only sweep (``L[i, :i]`` row after row over a split matrix) gathers a
rectangle, drops it a few rectangles later, and gathers the next: the buffer of
a dropped copy takes a later one, so that no fresh pages are faulted in.  A
buffer is reused only while nothing else refers to it: an array the program
holds that shares its memory must keep its values.

Run at 1, 2, 3 and 4 ranks::

    mpiexec -n 3 python -m pytest -q --with-mpi tests/test_copy_buffers.py
"""

from __future__ import annotations

import numpy
import pytest
from helpers import ref, world

import spmdarray as sp
import spmdarray.core.buffers as buffers
import spmdarray.core.element as element
from spmdarray.settings import config


@pytest.fixture(autouse=True)
def _empty_pool(monkeypatch):
    monkeypatch.setattr(buffers, "_FREE", [])
    yield


def test_take_gives_the_shape_and_dtype_asked():
    for shape, dtype in [((300, 40), numpy.float64), ((50000,), numpy.int32), ((9, 9, 300), numpy.complex128)]:
        a = buffers.take(shape, numpy.dtype(dtype))
        assert a.shape == shape and a.dtype == dtype
        assert a.flags.c_contiguous and a.flags.writeable
        assert a.ctypes.data % 16 == 0


def test_small_and_object_arrays_are_not_pooled():
    assert buffers.take((10, 10), numpy.dtype(float)) is None
    assert buffers.take((100000,), numpy.dtype(object)) is None


def _entry_built(shape, fill=7.0):
    a = buffers.take(shape, numpy.dtype(numpy.float64))
    a[...] = fill
    return [0, a, False]


def _drop(e):
    """A temporary entry with ``e``'s contents (as ``copies.pop(key)`` hands one over)."""
    out = list(e)
    e.clear()
    return out


def test_a_dropped_entry_is_reused_for_the_next_copy():
    ok = buffers.give(_entry_built((64, 130)))  # (outside ``assert``: its rewriting keeps the argument)
    assert ok is True
    assert len(buffers._FREE) == 1
    reused = buffers._FREE[0]
    again = buffers.take((64, 128), numpy.dtype(numpy.float64))
    assert again.base is reused  # the smaller copy took the free buffer
    assert buffers._FREE == []


def test_an_entry_held_by_a_name_is_not_reused():
    e = _entry_built((64, 130))
    ok = buffers.give(e)  # (outside ``assert``: its rewriting keeps the argument)
    assert ok is False  # the caller's name holds the entry
    assert e[1] is not None and e[1].shape == (64, 130)
    assert buffers._FREE == []


def test_a_buffer_that_a_view_still_shares_is_not_reused():
    e = _entry_built((64, 130), fill=3.5)
    view = e[1][3, :50]  # what a program may hold: a part of the copy
    ok = buffers.give(_drop(e))  # (outside ``assert``: its rewriting keeps the argument)
    assert ok is False
    assert buffers._FREE == []
    fresh = buffers.take((64, 130), numpy.dtype(numpy.float64))
    fresh[...] = -1.0
    assert not numpy.shares_memory(fresh, view)
    assert (view == 3.5).all()


def test_a_buffer_whose_array_is_held_is_not_reused():
    e = _entry_built((64, 130), fill=2.0)
    arr = e[1]
    ok = buffers.give(_drop(e))  # (outside ``assert``: its rewriting keeps the argument)
    assert ok is False
    assert buffers._FREE == []
    assert (arr == 2.0).all()


def test_the_free_list_keeps_the_largest_buffers():
    for rows in (70, 80, 90, 100, 110, 65):
        buffers.give(_entry_built((rows, 130)))
    sizes = sorted(r.nbytes for r in buffers._FREE)
    assert sizes == sorted(r * 130 * 8 for r in (80, 90, 100, 110))


# ---------------------------------------------------------------- sweeps, every rank count
def _forward(L, x, b, keep=None):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
        if keep is not None and i % 37 == 5:
            keep.append((i, numpy.asarray(L[i, :i])))
    return x


@pytest.mark.parametrize("n", [300, 257])
@pytest.mark.parametrize("split_vectors", [False, True])
def test_sweeps_reuse_buffers_and_keep_what_the_program_holds(n, split_vectors, monkeypatch):
    # Small rectangles pooled too (at these sizes they are under MIN_BYTES), and rectangles
    # small enough that a sweep drops many of them.
    monkeypatch.setattr(buffers, "MIN_BYTES", 0)
    monkeypatch.setattr(element, "_BATCH", 2048)
    import spmdarray.core.rows as rows

    monkeypatch.setattr(rows, "BATCH", 2048)
    counts = {"pooled": 0, "fresh": 0}
    real_take = buffers.take

    def counting_take(shape, dtype):
        before = len(buffers._FREE)
        out = real_take(shape, dtype)
        counts["pooled" if len(buffers._FREE) < before else "fresh"] += out is not None
        return out

    monkeypatch.setattr(element, "take", counting_take)
    a = ref((n, n), float, 3) + n * numpy.eye(n)
    b0 = ref((n,), float, 4)
    with config.set(replicate_below=0, gather_rereads_below=0):
        L = sp.array(a)
    with config.set(replicate_below=0 if split_vectors else 1 << 16):
        b = sp.array(b0)
        x = sp.zeros(n)
    kept = []
    # Rectangles, not the matrix gathered whole after its reads; the library's default
    # threshold for small operands (this suite runs with every array split).
    with config.set(gather_rereads_below=0, replicate_below=1 << 16):
        for _ in range(3):  # the later sweeps find the buffers of the earlier ones
            _forward(L, x, b, kept)
    expected = numpy.zeros(n)
    for _ in range(3):
        _forward(a, expected, b0)
    got = numpy.asarray(x)
    if split_vectors:
        # A product of two split vectors that no copy holds (the program's own gathers of
        # rows between the products break the sweep's read-ahead) sums partial products:
        # NumPy's value to rounding, as any split product (tests/test_matmul.py).
        numpy.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)
    else:
        assert got.tobytes() == expected.tobytes()  # NumPy's products on the copies: its bits
    for i, part in kept:  # what the program held kept NumPy's values
        assert part.tobytes() == a[i, :i].tobytes(), i
    if world()[1] > 1 and len(L._st.layout.intervals[0] or ()) > 1:
        assert counts["pooled"] > 0, counts  # dropped rectangles were reused
        assert counts["pooled"] >= counts["fresh"], counts
