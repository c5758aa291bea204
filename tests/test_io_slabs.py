"""The slab math of the HDF5 functions: pure, no MPI and no h5py needed."""

from __future__ import annotations

import numpy
from hypothesis import given, settings
from hypothesis import strategies as st
from spmdarray.decomposition import Layout, ViewMap, box_size

from spmdarray.io._slabs import file_selection, slab_boxes, transfers


@st.composite
def boxes(draw):
    nd = draw(st.integers(0, 4))
    out = []
    for _ in range(nd):
        lo = draw(st.integers(0, 5))
        out.append((lo, lo + draw(st.integers(0, 6))))
    return tuple(out)


@settings(max_examples=50)
@given(boxes(), st.sampled_from([1, 2, 8]), st.integers(1, 300))
def test_slabs_tile_the_box_in_c_order_within_the_limit(box, itemsize, limit):
    pieces = slab_boxes(box, itemsize, limit)
    if box_size(box) == 0:
        assert pieces == []
        return
    for p in pieces:
        assert box_size(p) * itemsize <= max(limit, itemsize)
    # Concatenated in order, the pieces' elements are the box's elements in C order.
    grid = numpy.arange(numpy.prod([hi for _, hi in box], dtype=int)).reshape([hi for _, hi in box])
    whole = grid[tuple(slice(lo, hi) for lo, hi in box)].reshape(-1)
    parts = [grid[tuple(slice(lo, hi) for lo, hi in p)].reshape(-1) for p in pieces]
    numpy.testing.assert_array_equal(numpy.concatenate(parts), whole)


def test_collective_transfers_make_the_same_number_of_calls_on_every_rank():
    lay = Layout.balanced((11, 3), 4)
    calls = [transfers(lay, r, 8, 48, True) for r in range(4)]
    assert len({len(c) for c in calls}) == 1
    assert [len([b for b in c if b is not None]) for c in calls] == [
        len(transfers(lay, r, 8, 48, False)) for r in range(4)
    ]
    assert all(b is None for b in transfers(lay, 2, 8, 48, True, movers={0, 1}))


@settings(max_examples=50)
@given(st.data())
def test_file_selection_picks_what_numpy_indexing_picks(data):
    shape = tuple(data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=3)))
    key = tuple(
        data.draw(
            st.one_of(
                st.integers(0, n - 1),
                st.builds(
                    slice,
                    st.none() | st.integers(-n, n),
                    st.none() | st.integers(-n, n),
                    st.sampled_from([None, 1, 2, -1, -3]),
                ),
            )
        )
        for n in shape
    )
    vmap = ViewMap.identity(shape).getitem(key)
    full = numpy.arange(numpy.prod(shape)).reshape(shape)
    expected = full[key]
    if 0 in vmap.shape:
        return
    box = tuple((0, n) for n in vmap.shape)
    start, count, stride, flip = file_selection(vmap, box)
    picked = full[tuple(slice(s, s + c * st_, st_) for s, c, st_ in zip(start, count, stride))]
    picked = picked.reshape(vmap.shape)
    for v in flip:
        picked = numpy.flip(picked, v)
    numpy.testing.assert_array_equal(picked, numpy.asarray(expected).reshape(vmap.shape))
