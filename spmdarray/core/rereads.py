"""Whole copies of moderately small split arrays that a loop reads again and again.

``cov[i, i:] = data[:, i] @ data[:, i:]`` in a loop over ``i``, on a split
``data`` that the loop never writes, makes one all-reduce per iteration on
the general path: each rank multiplies its rows, and the partial products
are summed.  On a few ranks the all-reduce costs more than the whole
product.  Here a split array of fewer than ``config.gather_rereads_below``
elements (a setting; 0 turns this off) whose
storage is read by :data:`REREADS` products at one version (no write in
between) is gathered whole onto every rank once (one ``Allgatherv``), as a
*copy* of the storage (``Storage.copies``, see :mod:`spmdarray.core.element`).
The products that follow are NumPy's own on the copy, with NumPy's bits, and
send nothing until the array is written; a scalar ``x[i, j] = v`` keeps the
copy current, any other write makes it stale.

A loop that writes the array between its products never gathers it (the
count starts again at each write), and the first products at each version
take the general path, so the gather is paid only where it is reused.
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from spmdarray.core.element import _copy
from spmdarray.core.storage import Storage
from spmdarray.decomposition import ViewMap
from spmdarray.settings import config

__all__ = ["REREADS", "index_copy", "reread"]

#: Products reading one version of a storage before it is gathered whole.
REREADS = 3
#: id(storage) -> [weak reference to the storage, version, products counted at it]
_COUNTS: dict = {}
_MAX_COUNTS = 16


def reread(x) -> np.ndarray | None:
    """The view ``x`` of a split host array, whole on this rank from a copy of its
    storage (read only), or None to compute on the general path.

    Collective: every rank counts the same reads (every rank runs the same
    products) and so gathers at the same call, in one collective; the other
    calls send nothing.  None for device arrays, structured and object
    dtypes, broadcast views, storages of ``config.gather_rereads_below``
    elements or more, and before the :data:`REREADS`-th read of a version.
    """
    s = x._s
    if type(s) is not Storage or s.copies is None or s.be.is_device:
        return None
    shape = s.layout.shape
    if math.prod(shape) >= config.gather_rereads_below or s.dtype.kind in "VO" or x._map.broadcast_axes:
        return None
    whole = ViewMap.identity(shape)
    e = s.copies.get(whole)
    if e is None or e[0] != s.version:
        h = _COUNTS.get(id(s))
        if h is None or h[0]() is not s or h[1] != s.version:
            if h is None and len(_COUNTS) >= _MAX_COUNTS:
                del _COUNTS[next(iter(_COUNTS))]
            h = _COUNTS[id(s)] = [weakref.ref(s), s.version, 0]
        h[2] += 1
        if h[2] < REREADS:
            return None
        e = _copy(s, whole)
    return index_copy(e[1], x._map)


def index_copy(whole: np.ndarray, vmap: ViewMap) -> np.ndarray:
    """The view ``vmap`` of ``whole``, a copy of its entire base array (NumPy's view, read
    only: the copy serves later reads).  Not collective."""
    idx: list = list(vmap.start)
    walked = []
    new = False
    for (b, step), n in zip(vmap.axes, vmap.shape):
        if b < 0:
            new = True
            continue
        walked.append(b)
        a0 = vmap.start[b]
        if n == 0:
            idx[b] = slice(0, 0)
            continue
        stop = a0 + (n - 1) * step + (1 if step > 0 else -1)
        idx[b] = slice(a0, None if stop < 0 else stop, step)
    arr = whole[tuple(idx)]
    order = sorted(walked)
    if walked != order:
        arr = arr.transpose([order.index(b) for b in walked])
    if new:
        arr = arr[tuple(None if b < 0 else slice(None) for b, _ in vmap.axes)]
    arr = arr.view()
    arr.flags.writeable = False
    return arr
