"""Property tests of C-order runs of boxes (``decomposition.runs``), with NumPy as reference.  No MPI."""

import importlib
import math
import pathlib
import sys

R = importlib.import_module("spmdarray.decomposition.runs")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
H = importlib.import_module("_decomp_helpers")

import numpy as np  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FAST = settings(max_examples=150, deadline=None)


def _flat(box, shape) -> np.ndarray:
    """NumPy's C-order flat indices of the elements of ``box``, in C order."""
    return np.arange(math.prod(shape), dtype=np.int64).reshape(shape)[H.sl(box)].reshape(-1)


def _expand(starts, length) -> np.ndarray:
    return (starts[:, None] + np.arange(length, dtype=np.int64)[None, :]).reshape(-1)


@FAST
@given(shape=H.shapes(min_dims=0, max_dims=4), data=st.data())
def test_box_runs_are_numpys_flat_indices(shape, data):
    box = data.draw(H.boxes_in(shape)) if shape else ()
    starts, length = R.box_runs(box, shape)
    assert _expand(starts, length).tolist() == _flat(box, shape).tolist()
    first, stop = R.flat_span(box, shape)
    flat = _flat(box, shape)
    assert (first, stop) == ((int(flat[0]), int(flat[-1]) + 1) if flat.size else (0, 0))


@FAST
@given(size=st.integers(0, 60), data=st.data())
def test_shared_segments_of_two_shapes(size, data):
    # A box of one shape and a box of another shape of the same size (a reshape).
    def shape_of(n):
        divisors = [d for d in range(1, max(n, 1) + 1) if n % d == 0] or [1]
        dims = data.draw(st.lists(st.sampled_from(divisors), max_size=3))
        rest = n // math.prod(dims) if n and math.prod(dims) and n % math.prod(dims) == 0 else None
        return tuple(dims) + (rest,) if rest is not None else (n,)

    sa, sb = shape_of(size), shape_of(size)
    assert math.prod(sa) == math.prod(sb) == size
    ba = data.draw(H.boxes_in(sa))
    bb = data.draw(H.boxes_in(sb))
    fa, fb = _flat(ba, sa), _flat(bb, sb)
    oa, ob, ln = R.shared_segments(*R.box_runs(ba, sa), *R.box_runs(bb, sb))
    shared = np.intersect1d(fa, fb)  # sorted: the increasing flat order the segments keep
    assert fa[R.segment_index(oa, ln)].tolist() == shared.tolist()
    assert fb[R.segment_index(ob, ln)].tolist() == shared.tolist()
    assert (ln > 0).all()


def test_segment_index_empty_and_single():
    z = np.zeros(0, np.int64)
    assert R.segment_index(z, z).tolist() == []
    assert R.segment_index(np.array([5]), np.array([3])).tolist() == [5, 6, 7]
