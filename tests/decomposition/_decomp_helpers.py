"""Shared strategies and NumPy reference helpers for the decomposition tests.

Loaded by the test modules by file path; not a test module itself.  No MPI.
"""

import importlib
import math

import numpy as np
from hypothesis import strategies as st

D = importlib.import_module("spmdarray.decomposition")

# ------------------------------------------------------------------ shapes

small_extent = st.integers(min_value=0, max_value=7)


def shapes(min_dims=1, max_dims=3, max_side=7):
    return st.lists(st.integers(0, max_side), min_size=min_dims, max_size=max_dims).map(tuple)


# -------------------------------------------------------------------- keys

_step = st.integers(-4, 4).filter(bool)


def slices_for(n):
    """Slices with any start/stop (also past the ends) and any step sign."""
    bound = st.one_of(st.none(), st.integers(-n - 3, n + 3))
    return st.builds(slice, bound, bound, st.one_of(st.none(), _step))


def ints_for(n, lo=None, hi=None):
    lo = -n if lo is None else lo
    hi = n - 1 if hi is None else hi
    ints = st.integers(lo, hi)
    return st.one_of(ints, ints.map(np.int64))


@st.composite
def basic_keys(draw, shape, invalid=False):
    """A basic index for ``shape``: ints (incl. negative), slices, None, ``...``.

    With ``invalid``, integers may fall out of bounds and there may be one
    index too many.
    """
    nd = len(shape)
    use_ell = draw(st.booleans())
    consumed = draw(st.integers(0, nd + (1 if invalid else 0)))
    prefix = draw(st.integers(0, consumed)) if use_ell else consumed
    axes = list(range(prefix)) + list(range(nd - (consumed - prefix), nd))
    comps = []
    for a in axes:
        n = shape[a] if 0 <= a < nd else 0
        if invalid:
            comps.append(draw(st.one_of(ints_for(n, -n - 3, n + 2), slices_for(n))))
        elif n > 0:
            comps.append(draw(st.one_of(ints_for(n), slices_for(n))))
        else:
            comps.append(draw(slices_for(n)))
    if use_ell:
        comps.insert(prefix, Ellipsis)
    for _ in range(draw(st.integers(0, 2))):
        comps.insert(draw(st.integers(0, len(comps))), None)
    if len(comps) == 1 and draw(st.booleans()):
        return comps[0]
    return tuple(comps)


def view_shape(shape, key):
    """Shape NumPy gives ``x[key]`` for ``x`` of ``shape`` (no allocation)."""
    return np.broadcast_to(np.int8(0), shape)[key].shape


@st.composite
def view_ops(draw, shape, max_ops=3):
    """A chain of ``('key', key)`` and ``('T', perm)`` operations on ``shape``."""
    ops = []
    cur = tuple(shape)
    for _ in range(draw(st.integers(0, max_ops))):
        if cur and draw(st.integers(0, 3)) == 0:
            perm = tuple(draw(st.permutations(range(len(cur)))))
            ops.append(("T", perm))
            cur = tuple(cur[p] for p in perm)
        else:
            key = draw(basic_keys(cur))
            ops.append(("key", key))
            cur = view_shape(cur, key)
    return ops


def apply_np(arr, ops):
    for kind, arg in ops:
        arr = arr[arg] if kind == "key" else arr.transpose(arg)
    return arr


def apply_vmap(vmap, ops):
    for kind, arg in ops:
        vmap = vmap.getitem(D.normalize_key(arg, vmap.shape)) if kind == "key" else vmap.transpose(arg)
    return vmap


# ------------------------------------------------------ ViewMap reference


def base_coords(vmap):
    """Per base axis, an int array of ``vmap.shape``: the base coordinate of
    every view element (``start[b] + i*step`` on walked axes, ``start[b]`` on
    dropped ones)."""
    nd = len(vmap.shape)
    coords = [np.full(vmap.shape, s, dtype=np.int64) for s in vmap.start]
    for v, (b, step) in enumerate(vmap.axes):
        if b >= 0:
            shp = [1] * nd
            shp[v] = vmap.shape[v]
            coords[b] = coords[b] + step * np.arange(vmap.shape[v], dtype=np.int64).reshape(shp)
    return coords


def base_flat(vmap):
    """Flat C-order base index of every view element; checks they are in bounds."""
    coords = base_coords(vmap)
    flat = np.zeros(vmap.shape, dtype=np.int64)
    stride = 1
    for b in reversed(range(len(vmap.base_shape))):
        c = coords[b]
        if c.size:
            assert c.min() >= 0 and c.max() < vmap.base_shape[b], (vmap, b)
        flat += c * stride
        stride *= vmap.base_shape[b]
    return flat


# ------------------------------------------------------------ box helpers


def sl(box):
    return tuple(slice(lo, hi) for lo, hi in box)


def paint(shape, boxes):
    """Count, per element of ``shape``, how many of ``boxes`` hold it."""
    count = np.zeros(shape, dtype=np.int64)
    for box in boxes:
        count[sl(box)] += 1
    return count


def owner_map(layout):
    """Rank holding the primary copy of every element; asserts uniqueness."""
    owner = np.full(layout.shape, -1, dtype=np.int64)
    count = np.zeros(layout.shape, dtype=np.int64)
    for r in layout.owners():
        owner[sl(layout.block(r))] = r
        count[sl(layout.block(r))] += 1
    assert (count == 1).all(), layout
    return owner


def held_boxes(layout):
    return [layout.block(r) for r in range(layout.nprocs) if layout.holds(r)]


@st.composite
def boxes_in(draw, shape):
    """A box inside ``shape`` (possibly empty)."""
    out = []
    for n in shape:
        lo = draw(st.integers(0, n))
        hi = draw(st.integers(lo, n))
        out.append((lo, hi))
    return tuple(out)


def size(shape):
    return math.prod(shape)
