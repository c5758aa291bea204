"""cells_to_receive: the elements a change of layout moves, as the fetch plans move them (no MPI)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from spmdarray.decomposition import Layout, ViewMap, box_size, cells_to_receive, fetch_plan, view_layout


def _received_by_plans(base: Layout, vmap: ViewMap, out: Layout) -> int:
    ghost = (0,) * len(base.shape)
    return sum(box_size(b) for r in range(out.nprocs) for _, b, _ in fetch_plan(base, ghost, vmap, out, r).recvs)


@st.composite
def _extents(draw, n_max=14, p_max=5):
    p = draw(st.integers(1, p_max))
    return tuple(draw(st.lists(st.integers(0, n_max // p + 2), min_size=p, max_size=p)))


@given(_extents(), st.data())
def test_matches_the_fetch_plans(ext, data):
    n, p = sum(ext), len(ext)
    src = Layout.from_extents((ext,))
    dst = data.draw(st.sampled_from([Layout.balanced((n,), p), Layout.from_extents((tuple(reversed(ext)),))]))
    vm = ViewMap.identity((n,))
    assert cells_to_receive(src, dst) == _received_by_plans(src, vm, dst)
    assert cells_to_receive(src, src) == 0


def test_shifted_views_and_2d():
    base = Layout.balanced((12,), 3)  # (0,4) (4,8) (8,12)
    s = view_layout(base, ViewMap.identity((12,)).getitem((slice(1, None),)))
    c = view_layout(base, ViewMap.identity((12,)).getitem((slice(None, -1),)))
    assert c == Layout.balanced((11,), 3)  # 12 % 3 == 0: dropping the last element stays balanced
    assert cells_to_receive(s, c) == cells_to_receive(c, s) == 2  # one element per inner boundary
    a = Layout.balanced((6, 8), 4)
    b = Layout.from_extents(((1, 5), (3, 5)))
    vm = ViewMap.identity((6, 8))
    assert cells_to_receive(a, b) == _received_by_plans(a, vm, b) > 0


@pytest.mark.parametrize("p", [1, 2, 3, 4])
def test_replicated_source_moves_nothing(p):
    rep = Layout.replicated((10,), p)
    bal = Layout.balanced((10,), p)
    assert cells_to_receive(rep, bal) == 0
    assert cells_to_receive(bal, rep) == (p - 1) * 10  # every rank needs the rest of the array
