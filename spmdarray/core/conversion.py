"""Conversions to NumPy: explicit, collective, and only when asked for."""

from __future__ import annotations

import numpy as np

from spmdarray.comm import allgather_blocks, bcast_array
from spmdarray.core.placement import is_whole
from spmdarray.decomposition import box_size

__all__ = ["gather", "summary", "text"]


def gather(x) -> np.ndarray:
    """The whole global array on every rank (``numpy.asarray(x)``).  Collective.

    One ``Allgatherv`` of the primary copy of every block, or one ``Bcast``
    when a single rank holds it all; a replicated array is copied locally.
    """
    ctx = x._st.ctx
    lay = x._layout
    be = x._st.be
    if ctx.size == 1 or is_whole(lay):  # every rank holds it all: no message
        return np.array(be.to_host(x._block), copy=True)
    owners = set(lay.owners())
    holders = [r for r in sorted(owners) if box_size(lay.block(r))]
    if len(holders) == 1:  # one rank holds it all (a row of a row-split array): one Bcast
        root = holders[0]
        return bcast_array(ctx, be.to_host(x._block) if ctx.rank == root else None, root, x.shape, x.dtype)
    shapes = [tuple(hi - lo for lo, hi in lay.block(r)) if r in owners else (0,) for r in range(ctx.size)]
    mine = be.to_host(x._block) if ctx.rank in owners else np.empty((0,), x.dtype)
    parts = allgather_blocks(ctx.comm, mine, shapes)
    out = np.empty(x.shape, x.dtype)
    for r, part in enumerate(parts):
        if r in owners:
            box = lay.block(r)
            if box_size(box):
                out[tuple(slice(lo, hi) for lo, hi in box)] = part
    return out


def summary(x) -> np.ndarray:
    """A NumPy array that prints exactly like the global array.  Collective.

    Small arrays are gathered.  Above NumPy's print threshold only the edge
    items NumPy shows are fetched; they are placed in a lazily-zeroed
    full-shape array (untouched pages cost no memory), whose repr NumPy
    builds from those edges alone.
    """
    opts = np.get_printoptions()
    if x.size <= opts["threshold"]:
        return np.asarray(x)
    e = opts["edgeitems"]
    pieces = [[slice(0, n)] if n <= 2 * e else [slice(0, e), slice(n - e, n)] for n in x.shape]
    try:
        out = np.zeros(x.shape, x.dtype)
        where = pieces
    except MemoryError:
        # Too large even to reserve: keep the edges plus one hidden middle
        # element per long axis; ``text`` prints it with every axis summarised.
        out = np.zeros(tuple(n if n <= 2 * e else 2 * e + 1 for n in x.shape), x.dtype)
        where = [[slice(0, n)] if n <= 2 * e else [slice(0, e), slice(e + 1, 2 * e + 1)] for n in x.shape]
    import itertools

    for key, dst in zip(itertools.product(*pieces), itertools.product(*where)):
        out[dst] = np.asarray(x[key])
    return out


def text(x, fmt=repr) -> str:
    """``repr``/``str`` of the global array, the same on every rank.  Collective."""
    arr = summary(x)
    if arr.shape == x.shape:
        return fmt(arr)
    with np.printoptions(threshold=0):
        return fmt(arr).replace(f"shape={arr.shape}", f"shape={x.shape}")
