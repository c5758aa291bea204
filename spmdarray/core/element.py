"""One element of an array by its integer indices: owner lookup without views or plans.

``x[i, j]`` and ``x[i, j] = v`` in a Python loop are the hot path of
unmodified NumPy programs (``lu``, ``seidel_2d``, ``durbin``).  Here the
element's base index and owner come straight from the view map and the
layout: a read is one ``Bcast`` from the owner (none when every rank holds
the element), and a write of a scalar touches only the owner's allocation.
"""

from __future__ import annotations

import numpy as np

from spmdarray.comm import bcast_array
from spmdarray.decomposition import find_coord, ravel, unravel

__all__ = ["element_index", "read_element", "write_element"]

_INT = (int, np.integer)
_SCALAR = (int, float, complex, bool, np.generic)


def element_index(vmap, key) -> tuple[int, ...] | None:
    """Base index of element ``key`` of the view ``vmap``, or None.  Not collective.

    None when ``key`` is not one in-range integer per axis (the general
    indexing path then handles it, with NumPy's errors).
    """
    shape = vmap.shape
    if type(key) is not tuple:
        key = (key,)
    if len(key) != len(shape) or not shape:
        return None
    base = list(vmap.start)
    for k, n, (b, step) in zip(key, shape, vmap.axes):
        if not isinstance(k, _INT) or isinstance(k, (bool, np.bool_)):
            return None
        k = int(k)
        if k < 0:
            k += n
        if not 0 <= k < n:
            return None
        if b >= 0:
            base[b] += k * step
    return tuple(base)


def _owner(layout, base, rank: int) -> tuple[int, bool]:
    """(root, local): the rank that broadcasts the element at ``base`` (coordinate
    0 along replicated grid axes), and whether ``rank`` holds it itself."""
    mine = unravel(rank, layout.dims)
    root, holds = [], True
    for k in range(len(layout.dims)):
        a = layout.gaxis[k]
        if a is not None:
            c = find_coord(layout.intervals[a], base[a])
        elif layout.gfixed[k] is not None:
            c = layout.gfixed[k]
        else:
            root.append(0)
            continue
        root.append(c)
        holds = holds and c == mine[k]
    return ravel(tuple(root), layout.dims), holds


def _every_rank_holds(layout) -> bool:
    return all(d == 1 or (a is None and f is None) for d, a, f in zip(layout.dims, layout.gaxis, layout.gfixed))


def read_element(st, base):
    """The element at base index ``base`` of storage ``st``, a NumPy scalar on every rank.

    Collective: one ``Bcast`` of one element from its owner, or nothing when
    every rank holds it (a replicated array, or one rank).
    """
    ctx = st.ctx
    lay = st.layout
    idx = tuple(i - o for i, o in zip(base, st.origin))
    if _every_rank_holds(lay):
        return st.be.to_host(st.alloc[idx]).reshape(()).copy()[()]
    root, _ = _owner(lay, base, ctx.rank)
    data = st.be.to_host(st.alloc[idx]) if ctx.rank == root else None
    return bcast_array(ctx, data, root, (), st.dtype)[()]


_PROBES: dict = {}


def write_element(st, base, value) -> bool:
    """``x[i, j] = value`` for a scalar ``value``: only the ranks holding the
    element write it.  Collective (every rank checks the cast and bumps the
    storage), but sends nothing.  False, having done nothing, when ``value``
    is not a scalar.
    """
    if not isinstance(value, _SCALAR):
        return False
    probe = _PROBES.get(st.dtype)
    if probe is None:
        probe = _PROBES[st.dtype] = np.empty((), st.dtype)
    probe[()] = value  # NumPy's casting errors, on every rank alike
    lay = st.layout
    _, holds = _owner(lay, base, st.ctx.rank)
    if holds and lay.holds(st.ctx.rank):
        st.alloc[tuple(i - o for i, o in zip(base, st.origin))] = probe[()]
    st.bump()
    return True
