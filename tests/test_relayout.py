"""A replicated array overwritten whole by a split array takes its layout, against NumPy.

``data_col[:] = dcol[:, :, k]`` (npbench's ``vadv``) gathered the split slab
onto every rank at every step.  The replicated array now becomes a copy of
the value in the value's layout (``spmdarray.core.relayout``): one agreement
the first time, then nothing sent.  An array that shares its storage with
another, on any rank, is assigned in place as before.

Run at 1, 2, 3 and 4 ranks::

    mpiexec -n 3 python -m pytest -q tests/test_relayout.py
"""

from __future__ import annotations

import numpy
import pytest
from helpers import assert_eq, ref, world

import spmdarray as sp


def _split(x) -> bool:
    return world()[1] > 1 and not x._st.be.is_device


def _vadv_like(np, d, c, n):
    out = np.zeros(d.shape)
    col = np.empty(d.shape[:2])
    col[:] = d[:, :, n - 1]
    for k in range(n - 2, -1, -1):
        new = d[:, :, k] - c[:, :, k] * col[:, :]
        col[:] = new
        out[:, :, k] = 2.0 * (new - c[:, :, k])
    return out, col


@pytest.mark.parametrize("shape", [(12, 9, 6), (3, 5, 4), (7, 1, 5)])
def test_loop_equals_numpy_and_sends_nothing_after_the_first_step(shape):
    d, c = ref(shape, float, 1), ref(shape, float, 2)
    expected = _vadv_like(numpy, d, c, shape[2])
    with sp.config.set(replicate_below=4 * shape[0] * shape[1]):  # the slabs' shape is replicated
        sd, sc = sp.array(d), sp.array(c)
        sp.sync()
        with sp.comm_stats() as s:
            got = _vadv_like(sp, sd, sc, shape[2])
    for g, e in zip(got, expected):
        assert_eq(g, e, exact=True)
    if _split(sd) and sd._layout.grid_axis_of(2) is None:  # (every rank holds a part of every slab)
        assert s.collectives <= 1, s.collectives  # the agreement, once: no gather per step
        assert s.messages_sent == 0, s.messages_sent


def test_the_array_takes_the_values_layout():
    d = ref((10, 8, 3), float, 3)
    with sp.config.set(replicate_below=100):
        sd = sp.array(d)
        x = sp.empty((10, 8))
        assert x._layout.dims == (world()[1],)  # replicated
        v = sd[:, :, 1]
        x[:] = v
        assert_eq(x, d[:, :, 1], exact=True)
        if _split(sd):
            assert x._layout == v._layout
            assert x.global_slices == v.global_slices
        assert_eq(x[3, 4], d[3, 4, 1], exact=True)  # an element: read from its owner
        assert_eq(x.sum(), d[:, :, 1].sum(), rtol=1e-13)
        x[2, 2] = 5.0
        e = d[:, :, 1].copy()
        e[2, 2] = 5.0
        assert_eq(x, e, exact=True)


def test_a_deferred_value_takes_the_values_layout():
    """A split slab's fused value (deferred) overwriting a replicated array: computed on its own
    layout (no message), then taken as a stored one.  (It raised AttributeError at 2+ ranks.)"""
    d = ref((10, 8, 3), float, 4)
    with sp.config.set(replicate_below=100, fuse_min_size=0):
        sd = sp.array(d)
        x = sp.empty((10, 8))
        v = sd[:, :, 1] * 2.0 - sd[:, :, 2]
        x[:] = v
        x[...] = sd[:, :, 0] + 1.0
        e = d[:, :, 0] + 1.0
        assert_eq(x, e, exact=True)
        if _split(sd):
            assert x._layout == v._layout
        assert_eq(v, d[:, :, 1] * 2.0 - d[:, :, 2], exact=True)


@pytest.mark.parametrize("key", [slice(None), Ellipsis, (slice(None), slice(None)), (Ellipsis, slice(None))])
def test_keys_that_cover_the_array(key):
    d = ref((6, 5, 2), float, 4)
    with sp.config.set(replicate_below=40):  # x replicated, the 6 x 5 x 2 value split
        sd = sp.array(d)
        x = sp.zeros((6, 5))
        x[key] = sd[::-1, :, 0]  # (a negative step)
        assert_eq(x, d[::-1, :, 0], exact=True)
        if _split(sd):
            assert x._layout.dims != (world()[1],)


def test_a_view_of_the_array_keeps_it_replicated_and_sees_the_values():
    d = ref((6, 5, 2), float, 5)
    with sp.config.set(replicate_below=40):  # x replicated, the 6 x 5 x 2 value split
        sd = sp.array(d)
        x = sp.zeros((6, 5))
        row = x[2]
        x[:] = sd[:, :, 0]
        assert x._layout.dims == (world()[1],)
        assert_eq(row, d[2, :, 0], exact=True)
        assert_eq(x, d[:, :, 0], exact=True)


def test_a_view_on_one_rank_only_keeps_it_replicated_on_every_rank():
    rank, size = world()
    d = ref((6, 5, 2), float, 6)
    with sp.config.set(replicate_below=40):  # x replicated, the 6 x 5 x 2 value split
        sd = sp.array(d)
        x = sp.zeros((6, 5))
        held = x[1:3] if rank == size - 1 else None  # noqa: F841 - a holder on one rank
        x[...] = sd[:, :, 1]
        assert x._layout.dims == (size,)  # every rank agreed: assigned in place
        assert_eq(x, d[:, :, 1], exact=True)


@pytest.mark.parametrize("share", ["view_dtype", "real", "reshaped", "local_on_one_rank"])
def test_memory_shared_with_another_storage_keeps_it_replicated(share):
    # Another storage over the same memory (``x.view(dtype)``, ``x.real``, an in-place
    # reshape), or the program holding the block on one rank (``x.local``): a new allocation
    # would leave it behind, so every rank agrees to assign in place and it sees the values.
    rank, size = world()
    d = ref((6, 5, 2), float, 8)
    with sp.config.set(replicate_below=40):  # x replicated, the 6 x 5 x 2 value split
        sd = sp.array(d)
        x = sp.zeros((6, 5), complex if share == "real" else float)
        if share == "view_dtype":
            other = x.view(numpy.float64)
        elif share == "real":
            other = x.real
        elif share == "reshaped":
            if x._st.be.is_device:
                pytest.skip("device blocks are not reshaped in place over their memory")
            other = x[...]
            other.shape = 30
        else:
            other = x.local if rank == size - 1 else None
        value = sd[:, :, 1] if share != "real" else sd[:, :, 1].astype(complex)
        x[...] = value
        assert x._layout.dims == (size,)  # assigned in place on every rank
        assert_eq(x, d[:, :, 1].astype(x.dtype), exact=True)
        if other is not None:
            expected = d[:, :, 1].reshape(30) if share == "reshaped" else d[:, :, 1]
            assert_eq(other if share != "local_on_one_rank" else numpy.asarray(other), expected, exact=True)


@pytest.mark.parametrize(
    "make, key",
    [
        (lambda sd: sd[:, :, 0].astype(numpy.float32), slice(None)),  # another dtype: cast in place
        (lambda sd: sd[:1, :, 0], slice(None)),  # broadcast
        (lambda sd: sd[1:, :, 0], slice(1, None)),  # part of the array
        (lambda sd: sd[:, :, 0][:, ::-1][3], slice(None)),  # a row that one rank owns
    ],
)
def test_other_assignments_keep_the_replicated_layout(make, key):
    d = ref((6, 5, 2), float, 7)
    with sp.config.set(replicate_below=40):  # x replicated, the 6 x 5 x 2 value split
        sd = sp.array(d)
        x = sp.zeros((6, 5)) if make(d).ndim == 2 else sp.zeros(5)
        e = numpy.zeros(x.shape)
        x[key] = make(sd)
        e[key] = make(d)
        assert x._layout.dims == (world()[1],)
        assert_eq(x, e, exact=True)
