"""Property tests of the balanced block formula (``decomposition.blocks``).  No MPI."""

import importlib

D = importlib.import_module("spmdarray.decomposition")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FAST = settings(max_examples=100, deadline=None)

extents = st.integers(min_value=0, max_value=200)
parts_ = st.integers(min_value=1, max_value=40)


@FAST
@given(n=extents, parts=parts_)
def test_blocks_cover_axis_once_in_order(n, parts):
    bounds = D.block_bounds(n, parts)
    assert len(bounds) == parts
    # Contiguous and in order: each block starts where the previous one ends.
    assert bounds[0][0] == 0
    assert bounds[-1][1] == n
    for (_, hi), (lo, _) in zip(bounds, bounds[1:]):
        assert hi == lo
    # Cover [0, n) exactly once (NumPy paint as reference).
    count = np.zeros(n, dtype=int)
    for lo, hi in bounds:
        assert 0 <= lo <= hi <= n
        count[lo:hi] += 1
    assert (count == 1).all()


@FAST
@given(n=extents, parts=parts_)
def test_block_sizes_balanced_larger_first(n, parts):
    sizes = [hi - lo for lo, hi in D.block_bounds(n, parts)]
    assert sum(sizes) == n
    assert max(sizes) - min(sizes) <= 1
    # Leftovers go to the lowest coordinates: sizes never increase.
    assert sizes == sorted(sizes, reverse=True)
    q, r = divmod(n, parts)
    assert sizes == [q + 1] * r + [q] * (parts - r)
    # Matches NumPy's own balanced split.
    assert sizes == [len(c) for c in np.array_split(np.arange(n), parts)]


@FAST
@given(n=extents, parts=parts_, data=st.data())
def test_block_of_matches_block_bounds(n, parts, data):
    coord = data.draw(st.integers(0, parts - 1))
    assert D.block_of(n, parts, coord) == D.block_bounds(n, parts)[coord]


@FAST
@given(n=st.integers(0, 30), extra=st.integers(1, 20))
def test_more_parts_than_elements_gives_empty_tail_blocks(n, extra):
    parts = n + extra
    bounds = D.block_bounds(n, parts)
    assert all(hi - lo == 1 for lo, hi in bounds[:n])
    assert all(hi == lo == n for lo, hi in bounds[n:])


@FAST
@given(n=st.integers(1, 200), parts=parts_, data=st.data())
def test_find_coord_inverts_blocks(n, parts, data):
    bounds = D.block_bounds(n, parts)
    index = data.draw(st.integers(0, n - 1))
    c = D.find_coord(bounds, index)
    lo, hi = bounds[c]
    assert lo <= index < hi
    assert D.block_of(n, parts, c) == (lo, hi)
    # Intervals in any order (negative-step views list them reversed).
    rev = bounds[::-1]
    assert rev[D.find_coord(rev, index)] == (lo, hi)


@FAST
@given(n=st.integers(0, 100), parts=parts_)
def test_find_coord_every_index(n, parts):
    bounds = D.block_bounds(n, parts)
    owner = [D.find_coord(bounds, i) for i in range(n)]
    expected = np.concatenate([np.full(hi - lo, c) for c, (lo, hi) in enumerate(bounds)] + [np.zeros(0, int)])
    assert owner == expected.tolist()


@FAST
@given(n=st.integers(0, 100), parts=parts_, index=st.integers(-5, 300))
def test_find_coord_outside_raises(n, parts, index):
    if 0 <= index < n:
        return
    with pytest.raises(IndexError):
        D.find_coord(D.block_bounds(n, parts), index)


def test_uneven_12_over_5():
    assert D.block_bounds(12, 5) == ((0, 3), (3, 6), (6, 8), (8, 10), (10, 12))
    assert [D.find_coord(D.block_bounds(12, 5), i) for i in range(12)] == [0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 4, 4]


def test_uneven_10_over_4():
    assert D.block_bounds(10, 4) == ((0, 3), (3, 6), (6, 8), (8, 10))
    assert [D.block_of(10, 4, c) for c in range(4)] == list(D.block_bounds(10, 4))


def test_even_12_over_4_and_empty_blocks():
    assert D.block_bounds(12, 4) == ((0, 3), (3, 6), (6, 9), (9, 12))
    assert D.block_bounds(2, 4) == ((0, 1), (1, 2), (2, 2), (2, 2))
    assert D.block_bounds(0, 3) == ((0, 0), (0, 0), (0, 0))


@pytest.mark.parametrize("n, parts, coord", [(-1, 2, 0), (5, 0, 0), (5, 2, 2), (5, 2, -1)])
def test_block_of_rejects_bad_arguments(n, parts, coord):
    with pytest.raises(ValueError):
        D.block_of(n, parts, coord)
