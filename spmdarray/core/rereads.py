"""When a moderately small split array that a loop reads again and again is gathered whole.

``cov[i, i:] = data[:, i] @ data[:, i:]`` in a loop over ``i``, on a split
``data`` that the loop never writes, makes one all-reduce per iteration on
the general path; a convolution's windows of a split input, or a loop of row
and element reads, make one collective per window or row.  On a few ranks
each collective costs more than NumPy's whole statement.  A split array of
fewer than ``config.gather_rereads_below`` elements (a setting; 0 turns this
off) whose storage is read :func:`first_need` times at one version with a
collective each (at least :data:`REREADS`, one per 64 KiB) is instead gathered whole onto every rank once (one
``Allgatherv``), as a *copy* of the storage (``Storage.copies``, see
:mod:`spmdarray.core.element`, which asks :func:`due` and serves the reads).
The reads that follow send nothing until the array is written; a scalar
``x[i, j] = v`` keeps the copy current, any other write makes it stale.

A loop that writes the array between its reads never gathers it (the count
starts again at each write).  When a whole copy served fewer than
:data:`PAYBACK` times its count before it went stale, the count that
gathers the storage again is multiplied by 4: a loop that alternates a few
reads and a write cannot make every few statements a gather.
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from spmdarray.decomposition import ViewMap
from spmdarray.settings import config

__all__ = ["PAYBACK", "PRODUCT", "REREADS", "due", "eligible", "first_need", "index_copy", "served"]

#: Reads with a collective of one version of a storage before it is gathered whole.
REREADS = 3
#: A whole copy that served fewer than this many times its count raises the count.
PAYBACK = 4
#: What one product read counts for (``d[:, i] @ d[:, i:]`` on the general path: a local
#: product and an all-reduce of its partial sums).  Measured at 2 ranks (npbench
#: ``covariance``, preset S): about 4 times an element read's collective.
PRODUCT = 4
_MAX_NEED = 1 << 20
#: id(storage) -> [weak reference, version, reads counted at it (weighted), reads that gather,
#: whole copies gathered at that record and not yet judged, reads the last one served, reads
#: counted at it (one each)]
_COUNTS: dict = {}
_MAX_COUNTS = 64


def eligible(st) -> bool:
    """Whether storage ``st`` may be gathered whole for its rereads: a split host
    storage, not structured or of objects, below ``config.gather_rereads_below``
    elements.  Not collective (the same on every rank)."""
    return (
        not st.deferred
        and st.copies is not None
        and not st.be.is_device
        and st.dtype.kind not in "VO"
        and math.prod(st.layout.shape) < config.gather_rereads_below
    )


def first_need(st) -> int:
    """Reads with a collective of one version of ``st`` that gather it whole, at first:
    :data:`REREADS`, or one per 64 KiB of the array when more (the collectives those reads
    cost on a few ranks then add up to about the time of the gather: never much more than
    twice the best choice made knowing the loop in advance).  Not collective."""
    return max(REREADS, math.prod(st.layout.shape) * st.dtype.itemsize >> 16)


def due(st, weight: int = 1) -> bool:
    """Count a read of ``st`` that needs a collective (no copy holds it), as ``weight`` reads
    (:data:`PRODUCT` for a product); True when it is the read that gathers the storage whole
    instead.  Not collective: every rank counts the same reads (they run the same
    statements), so every rank answers alike."""
    h = _COUNTS.get(id(st))
    if h is None or h[0]() is not st:
        if len(_COUNTS) >= _MAX_COUNTS:
            del _COUNTS[next(iter(_COUNTS))]
        h = _COUNTS[id(st)] = [weakref.ref(st), st.version, 0, first_need(st), False, 0, 0]
    elif h[1] != st.version:
        if h[4] and h[5] < PAYBACK * h[3]:
            h[3] = min(4 * h[3], _MAX_NEED)  # the last copy did not pay for itself
        h[1], h[2], h[4], h[5], h[6] = st.version, 0, False, 0, 0
    h[2] += weight
    h[6] += 1
    if h[2] < h[3] or h[6] < REREADS:  # (and never before REREADS reads, whatever their weight)
        return False
    h[2], h[4], h[5], h[6] = 0, True, 0, 0
    return True


def served(st, weight: int = 1) -> None:
    """Count a read that a whole copy of ``st`` served, as ``weight`` reads.  Not collective."""
    h = _COUNTS.get(id(st))
    if h is not None and h[0]() is st:
        h[5] += weight
        h[1] = st.version  # (a scalar write kept the copy current: the same copy)


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
        if arr.shape != vmap.shape:
            arr = np.broadcast_to(arr, vmap.shape)
    arr = arr.view()
    arr.flags.writeable = False
    return arr
