"""Host buffers reused for the copies that reads gather (:mod:`spmdarray.core.element`).

A read-only sweep (``L[i, :i]`` row by row over a row-split matrix) gathers
rectangles of up to :data:`spmdarray.core.rows.BATCH` elements one after the
other and drops each a few rectangles later.  A fresh allocation of that
size is a fresh mapping from the operating system, and its first touch costs
a page fault per page: on the receiving rank and on the sending one, a
quarter of a 2-rank ``trisolv`` sweep.  The buffer of a dropped copy that
nothing else refers to comes back here (:func:`give`) and takes a later copy
(:func:`take`).

"Nothing else refers to it" is decided from reference counts measured
against baselines taken at import in the same code shapes
(:mod:`spmdarray.core.refs`), never against fixed numbers: a copy's entry,
its array and the raw buffer under it must each be held only by the chain
that leads here.  A view handed out (the operand of ``L[i, :i] @ x[:i]``,
an array wrapping a part of the copy) holds the raw buffer, since NumPy
points every view at the array that owns the memory, so such a buffer is
never reused while the view lives.  Nothing here is collective.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from spmdarray.core.refs import LOCAL

__all__ = ["MAX_FREE", "MIN_BYTES", "give", "take"]

#: Buffers kept for reuse (the smallest goes when a larger one comes back to a full list).
MAX_FREE = 4
#: Copies smaller than this come from the allocator's heap anyway: not pooled.
MIN_BYTES = 1 << 16

#: Raw ``uint8`` buffers that own their memory and that nothing else refers to.
_FREE: list[np.ndarray] = []


def _probe(entry) -> int:
    return sys.getrefcount(entry)


#: ``sys.getrefcount`` of a parameter that the caller passed as a temporary (``give(d.pop(k))``).
_PARAM = _probe(object())


def take(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray | None:
    """A C-ordered host array of ``shape`` and ``dtype`` (contents undefined), from a free
    buffer where one is large enough; None for arrays under :data:`MIN_BYTES` (the caller
    allocates as usual) and for dtypes holding objects.  Not collective."""
    n = math.prod(shape) * dtype.itemsize
    if n < MIN_BYTES or dtype.hasobject:
        return None
    best = -1
    for k, raw in enumerate(_FREE):
        if raw.nbytes >= n and (best < 0 or raw.nbytes < _FREE[best].nbytes):
            best = k
    raw = _FREE.pop(best) if best >= 0 else np.empty(n, np.uint8)
    return raw[:n].view(dtype).reshape(shape)


def give(entry) -> bool:
    """Take back the buffer of a copy's dropped ``entry`` (``[version, array, handed out]``),
    passed as a temporary (``give(copies.pop(key))``), when nothing else refers to the
    entry, its array or the memory under it; True when it was taken.  Not collective."""
    if sys.getrefcount(entry) != _PARAM or type(entry) is not list or len(entry) < 2:
        return False
    arr = entry[1]
    if type(arr) is not np.ndarray or sys.getrefcount(arr) - LOCAL != 1:
        return False  # (the entry's slot and this local are not its only holders)
    raw = arr.base
    if (
        type(raw) is not np.ndarray
        or raw.base is not None
        or raw.dtype != np.uint8
        or raw.ndim != 1
        or raw.nbytes < MIN_BYTES
        or not raw.flags.writeable
        or sys.getrefcount(raw) - LOCAL != 1  # (``arr.base`` and this local only: no view of it lives)
    ):
        return False
    entry[1] = None
    del arr
    if len(_FREE) >= MAX_FREE:
        k = min(range(len(_FREE)), key=lambda i: _FREE[i].nbytes)
        if _FREE[k].nbytes >= raw.nbytes:
            return False
        _FREE[k] = raw
    else:
        _FREE.append(raw)
    return True
