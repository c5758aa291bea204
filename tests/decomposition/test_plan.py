"""Property tests of fetch plans (``decomposition.plan``): every rank is simulated.  No MPI.

Each plan is checked against brute force: the elements a rank needs come from
NumPy broadcasting, who owns them from painting the base layout and mapping
every view element to its base coordinates.
"""

import importlib
import pathlib
import sys

D = importlib.import_module("spmdarray.decomposition")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
H = importlib.import_module("_decomp_helpers")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SLOW = settings(max_examples=150, deadline=None)

GHOSTS = st.sampled_from([0, 1, 2])


# ------------------------------------------------------------ generators


@st.composite
def same_shape_views(draw, vshape, nprocs):
    """Layout of a view of another (balanced) array whose shape is ``vshape``.

    The view may be shifted, strided, reversed, transposed and may drop an
    extra integer-indexed axis, so its owners differ from a balanced split.
    """
    nd = len(vshape)
    perm = tuple(draw(st.permutations(range(nd))))
    lengths, keys = [], []
    for j in perm:
        m = vshape[j]
        step = draw(st.sampled_from([1, 2, -1, -2, -3]))
        pad = draw(st.integers(0, 2))
        off = draw(st.integers(0, pad))
        span = (m - 1) * abs(step) + 1 if m else 0
        length = span + pad
        if m == 0:
            key = slice(off, off, step)
        elif step > 0:
            key = slice(off, off + span, step)
        else:
            start = length - 1 - off
            stop = start - span
            key = slice(start, None if stop < 0 else stop, step)
        lengths.append(length)
        keys.append(key)
    if draw(st.booleans()):
        pos = draw(st.integers(0, nd))
        extent = draw(st.integers(1, 3))
        lengths.insert(pos, extent)
        keys.insert(pos, draw(st.integers(-extent, extent - 1)))
    base2 = tuple(lengths)
    vmap2 = D.ViewMap.identity(base2).getitem(D.normalize_key(tuple(keys), base2))
    vmap2 = vmap2.transpose(tuple(np.argsort(perm).tolist()))
    assert vmap2.shape == tuple(vshape)
    return D.view_layout(D.Layout.balanced(base2, nprocs), vmap2)


@st.composite
def broadcast_shapes(draw, vshape):
    """An output shape ``vshape`` broadcasts to: extra leading axes, stretched size-1 axes."""
    lead = tuple(draw(st.lists(st.integers(1, 4), max_size=2)))
    body = tuple(draw(st.integers(1, 4)) if m == 1 and draw(st.booleans()) else m for m in vshape)
    return lead + body


@st.composite
def plan_cases(draw):
    nprocs = draw(st.integers(1, 6))
    shape = draw(H.shapes(min_dims=1, max_dims=3, max_side=9))
    if draw(st.integers(0, 4)) == 0:
        # A reduction result: one grid axis holds replicas.
        extra = draw(st.integers(1, 3))
        base = D.Layout.balanced((*shape, extra), nprocs).reduce((len(shape),), keepdims=False)
    else:
        base = D.Layout.balanced(shape, nprocs)
    vmap = H.apply_vmap(D.ViewMap.identity(shape), draw(H.view_ops(shape)))
    kind = draw(st.sampled_from(["balanced", "view", "broadcast"]))
    if kind == "balanced":
        out = D.Layout.balanced(vmap.shape, nprocs)
    elif kind == "view":
        out = draw(same_shape_views(vmap.shape, nprocs))
    else:
        out = D.Layout.balanced(draw(broadcast_shapes(vmap.shape)), nprocs)
    ghost = tuple(draw(GHOSTS) for _ in shape)
    return base, ghost, vmap, out


@st.composite
def stencil_cases(draw):
    """Two views of the same base with equal shapes: the operand and the output.

    Both walk every axis with the same step and count at independent offsets
    (``u[1:-1]`` against ``u[:-2]``, ``u[::-1]`` against ``u[1:]``...) and may
    drop the same axis at different rows, so the needed data sits near each
    rank's block and the ghost frame decides between halo and temp.
    """
    nprocs = draw(st.integers(2, 6))
    shape = draw(st.lists(st.integers(1, 9), min_size=1, max_size=3).map(tuple))
    drop = draw(st.one_of(st.none(), st.integers(0, len(shape) - 1)))
    key1, key2 = [], []
    for a, n in enumerate(shape):
        if a == drop:
            key1.append(draw(st.integers(-n, n - 1)))
            key2.append(draw(st.integers(-n, n - 1)))
            continue
        step = draw(st.sampled_from([1, 1, 2, -1, -2]))
        most = (n - 1) // abs(step) + 1
        count = draw(st.integers(max(1, most - 2), most))
        span = (count - 1) * abs(step) + 1
        for key in (key1, key2):
            off = draw(st.integers(0, n - span))
            if step > 0:
                key.append(slice(off, off + span, step))
            else:
                start = n - 1 - off
                key.append(slice(start, None if start - span < 0 else start - span, step))
    base = D.Layout.balanced(shape, nprocs)
    vmap = D.ViewMap.identity(shape).getitem(D.normalize_key(tuple(key1), shape))
    omap = D.ViewMap.identity(shape).getitem(D.normalize_key(tuple(key2), shape))
    assert vmap.shape == omap.shape
    ghost = tuple(draw(GHOSTS) for _ in shape)
    return base, ghost, vmap, D.view_layout(base, omap)


# ------------------------------------------------------- the brute force


def _empty(box):
    return D.box_size(box) == 0


def _computes(out, r):
    return out.holds(r) and not _empty(out.block(r))


def _inside_ghost_frame(base, ghost, coords, rank, box):
    """Whether every element of view ``box`` lies in ``rank``'s ghost-expanded base block."""
    bb = base.block(rank)
    for b, c in enumerate(coords):
        sub = c[H.sl(box)]
        lo, hi = bb[b]
        if sub.size and not (sub.min() >= lo - ghost[b] and sub.max() < hi + ghost[b]):
            return False
    return True


def check_plans(base, ghost, vmap, out):
    """Simulate every rank and check the whole exchange; returns the plans."""
    nprocs = base.nprocs
    assert out.nprocs == nprocs
    vl = D.view_layout(base, vmap)
    plans = [D.fetch_plan(base, ghost, vmap, out, r) for r in range(nprocs)]
    vshape, oshape = vmap.shape, out.shape
    off = len(oshape) - len(vshape)
    coords = H.base_coords(vmap)
    flat_view = np.arange(H.size(vshape)).reshape(vshape)
    operand = np.broadcast_to(flat_view, oshape)
    # Without replicas every view element has one owner (a 0-d base is replicated).
    balanced = not any(base.is_replicated_axis(k) for k in range(len(base.dims)))
    if balanced:
        # Owner of each view element, through its base coordinates.
        view_owner = H.owner_map(base)[tuple(coords)]

    for r, p in enumerate(plans):
        assert all(src != r for src, _, _ in p.recvs)
        assert all(dst != r for dst, _, _ in p.sends)
        if not _computes(out, r):
            assert (p.mode, p.need, p.recvs) == ("none", None, ())
            continue
        ob = out.block(r)
        need = p.need
        assert need == D.need_box(vmap, out, r)
        assert len(need) == len(vshape)
        # (5) Broadcasting: stretched axes need only (0, 1).
        for j, m in enumerate(vshape):
            assert need[j] == ((0, 1) if m == 1 and oshape[j + off] != 1 else ob[j + off])
        # The need box is exactly the operand elements of this rank's output block.
        assert set(flat_view[H.sl(need)].ravel().tolist()) == set(operand[H.sl(ob)].ravel().tolist())
        if _empty(need):
            assert (p.mode, p.recvs) == ("none", ())
            continue

        # The locally owned part (a list: a 0-d box cannot be empty).
        own = [D.box_intersect(need, vl.block(r))] if vl.holds(r) else []
        if balanced:
            assert all((view_owner[H.sl(b)] == r).all() for b in own)
            assert (view_owner[H.sl(need)] == r).all() == (p.mode == "local")
        if p.mode == "local":
            # (3) Nothing to receive.
            assert D.box_contains(vl.block(r), need)
            assert p.recvs == ()
            continue
        assert p.mode in ("halo", "temp")
        # Halo mode exactly when the base block plus ghost frame reaches every needed element.
        reachable = base.holds(r) and _inside_ghost_frame(base, ghost, coords, r, need)
        assert (p.mode == "halo") == reachable, (r, p)
        # (2) Received boxes plus the owned part cover the need box exactly once.
        got = H.paint(vshape, [box for _, box, _ in p.recvs] + own)
        assert got.tolist() == H.paint(vshape, [need]).tolist()
        assert sum(D.box_size(box) for _, box, _ in p.recvs) == D.box_size(need) - sum(map(D.box_size, own))
        for src, box, into_halo in p.recvs:
            assert into_halo == (p.mode == "halo")
            assert not _empty(box)
            assert vl.holds(src) and D.box_contains(vl.block(src), box)
            if balanced:
                assert (view_owner[H.sl(box)] == src).all()
            if into_halo:
                # (4) Halo receives land inside the ghost frame of the base allocation.
                assert _inside_ghost_frame(base, ghost, coords, r, box)

    # (1) Every send is matched by the receive, same box and flag, in the same order.
    for s in range(nprocs):
        for r in range(nprocs):
            sent = [(box, h) for dst, box, h in plans[s].sends if dst == r]
            received = [(box, h) for src, box, h in plans[r].recvs if src == s]
            assert sent == received, (s, r)
    halo_recv = sum(D.box_size(box) for p in plans for _, box, h in p.recvs if h)
    assert sum(p.halo_elements_sent for p in plans) == halo_recv
    return plans


# ----------------------------------------------------------------- tests


@SLOW
@given(case=plan_cases())
def test_fetch_plans_are_consistent(case):
    check_plans(*case)


@SLOW
@given(case=stencil_cases())
def test_stencil_plans_are_consistent(case):
    check_plans(*case)


@SLOW
@given(
    shape=H.shapes(min_dims=0, max_dims=3, max_side=4),
    nprocs=st.integers(1, 6),
    data=st.data(),
)
def test_broadcast_operands_need_one_element_on_stretched_axes(shape, nprocs, data):
    base = D.Layout.balanced(shape, nprocs)
    # Squeeze some axes to size 1 through the view so the operand broadcasts.
    key = tuple(slice(0, 1) if n and data.draw(st.booleans()) else slice(None) for n in shape)
    vmap = D.ViewMap.identity(shape).getitem(D.normalize_key(key, shape)) if shape else D.ViewMap.identity(())
    oshape = data.draw(broadcast_shapes(vmap.shape))
    out = D.Layout.balanced(oshape, nprocs)
    ghost = tuple(data.draw(GHOSTS) for _ in shape)
    check_plans(base, ghost, vmap, out)


SHIFTS = {
    "identity": (slice(None),),
    "interior": (slice(1, -1),),
    "head": (slice(None, -2),),
    "tail": (slice(2, None),),
    "reversed": (slice(None, None, -1),),
    "stride2": (slice(None, None, 2),),
    "row": (3,),
    "newaxis": (None, Ellipsis),
}


def _vmap(shape, key, transpose=False):
    vmap = D.ViewMap.identity(shape).getitem(D.normalize_key(key, shape))
    return vmap.transpose(tuple(reversed(range(len(vmap.shape))))) if transpose else vmap


@pytest.mark.parametrize("nprocs", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("ghost", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(SHIFTS))
def test_shifted_views_against_each_other(nprocs, ghost, name):
    shape = (12, 9)
    base = D.Layout.balanced(shape, nprocs)
    vmap = _vmap(shape, SHIFTS[name])
    g = (ghost, ghost)
    # Against a balanced output, against the same view, and against other views of the same shape.
    check_plans(base, g, vmap, D.Layout.balanced(vmap.shape, nprocs))
    check_plans(base, g, vmap, D.view_layout(base, vmap))
    for other in SHIFTS.values():
        omap = _vmap(shape, other)
        if omap.shape == vmap.shape:
            check_plans(base, g, vmap, D.view_layout(base, omap))
    # Transposes: the square case pairs x.T with x.
    sq = D.Layout.balanced((9, 9), nprocs)
    check_plans(sq, g, _vmap((9, 9), (), transpose=True), sq)


@pytest.mark.parametrize("nprocs", [1, 2, 3, 4, 5, 6, 7])
def test_aligned_operands_need_no_messages(nprocs):
    for shape in [(12,), (10, 7), (4, 5, 6), (2, 3)]:
        base = D.Layout.balanced(shape, nprocs)
        plans = check_plans(base, (1,) * len(shape), D.ViewMap.identity(shape), base)
        assert all(p.mode in ("local", "none") and not p.sends and not p.recvs for p in plans)
        assert not any(p.mode == "temp" for p in plans)


def test_one_sided_stencil_sends_exactly_the_edge_cells():
    # u[1:] computed where u[:-1] lives, 12 over 4 with ghost 1: each rank but
    # the last needs one cell from its right neighbour, received into its halo.
    base = D.Layout.balanced((12,), 4)
    plans = check_plans(
        base, (1,), _vmap((12,), (slice(1, None),)), D.view_layout(base, _vmap((12,), (slice(None, -1),)))
    )
    assert [p.mode for p in plans] == ["halo", "halo", "halo", "local"]
    assert [p.recvs for p in plans] == [((1, ((2, 3),), True),), ((2, ((5, 6),), True),), ((3, ((8, 9),), True),), ()]
    assert sum(p.halo_elements_sent for p in plans) == 3


def test_two_sided_stencil_on_a_2d_grid_halo_counts():
    # u[1:-1, 1:-1] + u[:-2, 1:-1] + ... on (10, 10) over 4 ranks, ghost 1.
    shape = (10, 10)
    base = D.Layout.balanced(shape, 4)
    assert base.dims == (2, 2)
    centre = _vmap(shape, (slice(1, -1), slice(1, -1)))
    out = D.view_layout(base, centre)
    total = 0
    for key in [
        (slice(None, -2), slice(1, -1)),
        (slice(2, None), slice(1, -1)),
        (slice(1, -1), slice(None, -2)),
        (slice(1, -1), slice(2, None)),
    ]:
        plans = check_plans(base, (1, 1), _vmap(shape, key), out)
        assert all(p.mode in ("halo", "local") for p in plans)
        total += sum(p.halo_elements_sent for p in plans)
    # Each of the 4 ranks exchanges one 4-cell edge per neighbour direction it has (2 each).
    assert total == 4 * 2 * 4


def test_reversed_view_is_temp_without_ghosts():
    base = D.Layout.balanced((12,), 4)
    plans = check_plans(base, (0,), _vmap((12,), (slice(None, None, -1),)), base)
    assert all(p.mode == "temp" for p in plans)


def test_zero_d_output_computes_only_where_it_lives():
    # x[0, 0] + y[5, 5]: the result lives with x[0, 0]; only that rank fetches y[5, 5].
    shape = (6, 6)
    base = D.Layout.balanced(shape, 4)
    out = D.view_layout(base, _vmap(shape, (0, 0)))
    plans = check_plans(base, (1, 1), _vmap(shape, (5, 5)), out)
    assert [p.mode for p in plans] == ["temp", "none", "none", "none"]
    assert [len(p.recvs) for p in plans] == [1, 0, 0, 0]
