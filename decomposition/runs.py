"""Boxes as runs of C-order flat indices, and what two boxes of different shapes share.

A C-order reshape keeps each element's flat index.  The elements of a box
(half-open ``(lo, hi)`` per axis) of an array of shape ``shape`` are, in
C order, a sequence of *runs*: stretches of consecutive flat indices of one
length.  What a source box (in the old shape) and a destination box (in the
new shape) have in common is the intersection of their runs, a list of
*segments* in increasing flat order, each an offset into the source box's
C-order data, an offset into the destination box's, and a length.  The
sender and the receiver of a redistribution compute the same segments, in
the same order, from the two boxes alone.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["box_runs", "flat_span", "segment_index", "shared_segments"]


def box_runs(box, shape) -> tuple[np.ndarray, int]:
    """``(starts, length)``: the flat C-order indices of ``box`` in an array of ``shape``
    are ``starts[k] + t`` for ``t < length``, run after run, in increasing order.

    An empty box has no runs; a 0-d array one run of length 1.
    """
    n = len(shape)
    if any(hi <= lo for lo, hi in box):
        return np.zeros(0, np.int64), 0
    if not n:
        return np.zeros(1, np.int64), 1
    j = n - 1  # the axes after ``j`` are whole in the box: each run spans them
    while j > 0 and box[j] == (0, shape[j]):
        j -= 1
    inner = math.prod(shape[j + 1 :])
    length = (box[j][1] - box[j][0]) * inner
    stride = inner
    starts = np.array([box[j][0] * inner], np.int64)
    for a in range(j - 1, -1, -1):  # the outer axes, last first: their combinations in C order
        stride *= shape[a + 1]
        lo, hi = box[a]
        starts = (np.arange(lo, hi, dtype=np.int64) * stride)[:, None] + starts[None, :]
        starts = starts.reshape(-1)
    return starts, length


def flat_span(box, shape) -> tuple[int, int]:
    """``(first, last + 1)``: the flat indices that ``box``'s elements lie between ((0, 0) when empty)."""
    if any(hi <= lo for lo, hi in box):
        return 0, 0
    first = last = 0
    for (lo, hi), n in zip(box, shape):
        first = first * n + lo
        last = last * n + hi - 1
    return first, last + 1


def shared_segments(
    a_starts: np.ndarray, a_len: int, b_starts: np.ndarray, b_len: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The flat indices that two run lists (see :func:`box_runs`) share, as segments.

    Returns ``(off_a, off_b, lengths)``: segment ``s`` is the ``lengths[s]``
    elements from offset ``off_a[s]`` of A's C-order data and from
    ``off_b[s]`` of B's, in increasing flat order.  Runs within each list are
    sorted and disjoint, so each run of A meets a contiguous range of B's.
    """
    if not a_len or not b_len or not a_starts.size or not b_starts.size:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty
    a_ends = a_starts + a_len
    b_ends = b_starts + b_len
    lo = np.searchsorted(b_ends, a_starts, side="right")  # first B run ending after the A run starts
    hi = np.searchsorted(b_starts, a_ends, side="left")  # first B run starting at or after its end
    cnt = np.maximum(hi - lo, 0)
    total = int(cnt.sum())
    if not total:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty
    k = np.repeat(np.arange(a_starts.size, dtype=np.int64), cnt)
    first = np.cumsum(cnt) - cnt  # where each A run's segments begin
    j = np.arange(total, dtype=np.int64) - np.repeat(first - lo, cnt)
    s = np.maximum(a_starts[k], b_starts[j])
    e = np.minimum(a_ends[k], b_ends[j])
    return k * a_len + (s - a_starts[k]), j * b_len + (s - b_starts[j]), e - s


def segment_index(offsets: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The positions ``offsets[s] + t`` for ``t < lengths[s]``, segment after segment."""
    total = int(lengths.sum())
    first = np.cumsum(lengths) - lengths
    return np.arange(total, dtype=np.int64) + np.repeat(offsets - first, lengths)
