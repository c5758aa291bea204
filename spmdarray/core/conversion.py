"""Conversions to NumPy: explicit, collective, and only when asked for."""

from __future__ import annotations

import numpy as np

from spmdarray.core.placement import gather_view

__all__ = ["gather", "summary", "text"]


def gather(x) -> np.ndarray:
    """The whole global array on every rank (``numpy.asarray(x)``).  Collective.

    One ``Allgatherv`` of the primary copy of every block, or one ``Bcast``
    when a single rank holds it all; a replicated array is copied locally.
    """
    return gather_view(x._st, x._map, x._layout)


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
