"""One element of an array by its integer indices, and small regions of split arrays copied whole.

``x[i, j]`` and ``x[i, j] = v`` in a Python loop are the hot path of
unmodified NumPy programs (``lu``, ``seidel_2d``, ``durbin``).  Here the
element's base index and owner come straight from the view map and the
layout (the base index is cached per view and key), and an element that
every rank holds is read and written as NumPy would, with no view.

Reads from a split array go through *copies*: small regions of the storage
gathered whole onto every rank with one collective (``Storage.copies``).  A
copy is stamped with the storage's ``version`` as halos are, so it serves
every later read, of an element or of a small slice in an operation, until
the array is written.  A scalar written with ``x[i, j] = v`` is written into
the copies too (every rank writes the same value), so a loop of scalar reads
and writes along a row makes one collective per row, not one per read.
"""

from __future__ import annotations

import math
import weakref
from functools import lru_cache

import numpy as np

from spmdarray.comm import bcast_array
from spmdarray.core.buffers import give, take
from spmdarray.core.placement import gather_view
from spmdarray.core.rereads import PRODUCT, due, eligible, index_copy, served
from spmdarray.core.rows import BATCH, held_part, next_rectangle, row_part
from spmdarray.decomposition import ViewMap, find_coord, ravel, unravel, view_layout

__all__ = [
    "NOT_ELEMENT",
    "RUNS",
    "copy_of",
    "direct_access",
    "element_index",
    "has_copy",
    "read_at",
    "read_element",
    "whole_read",
    "write_at",
    "write_element",
]

_SCALAR = (int, float, complex, bool, np.generic)
_REGION = 4096  # elements: the most an element read gathers, and the floor of a slice's widening
_MAX_COPIES = 16  # copies kept per storage (and at most 2 * _BATCH elements in all)
_BATCH = BATCH  # elements: the most a block of whole rows gathered in a read-only sweep holds
_BASES: dict = {}  # (view map, key) -> base index
NOT_ELEMENT = object()  # what :func:`read_at` returns when the key is not one element


def _plain(key) -> bool:
    """Whether ``key`` is integers only (no bool, which equals 0 or 1, and no float)."""
    if type(key) is tuple:
        for k in key:
            if type(k) is not int and not isinstance(k, np.integer):
                return False
        return True
    return type(key) is int or isinstance(key, np.integer)


def element_index(vmap, key) -> tuple[int, ...] | None:
    """Base index of element ``key`` of the view ``vmap``, or None.  Not collective.

    None when ``key`` is not one in-range integer per axis (the general
    indexing path then handles it, with NumPy's errors).  Cached per
    ``(vmap, key)``.
    """
    if not _plain(key):
        return None
    base = _BASES.get((vmap, key))
    if base is None:
        base = _element_index(vmap, key)
        if base is not None:
            if len(_BASES) >= 16384:
                _BASES.clear()
            _BASES[vmap, key] = base
    return base


def _element_index(vmap, key) -> tuple[int, ...] | None:
    shape = vmap.shape
    if type(key) is not tuple:
        key = (key,)
    if len(key) != len(shape) or not shape:
        return None
    base = list(vmap.start)
    for k, n, (b, step) in zip(key, shape, vmap.axes):
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


@lru_cache(maxsize=1024)
def _every_rank_holds(layout) -> bool:
    return all(d == 1 or (a is None and f is None) for d, a, f in zip(layout.dims, layout.gaxis, layout.gfixed))


def _local(st, base) -> tuple[int, ...]:
    o = st.origin
    return base if not any(o) else tuple(i - g for i, g in zip(base, o))


# ------------------------------------------------------------------ copies
def _copy(st, vmap: ViewMap) -> list:
    """The entry ``[version, host array, handed out]`` of the copy of ``vmap``, gathered if
    missing or stale.  Collective: one collective on a miss; every rank misses alike,
    because copies change only in collective operations."""
    copies = st.copies
    e = copies.get(vmap) if copies is not None else None
    if e is not None and e[0] == st.version:
        return e
    if copies is None:  # every rank holds it all: nothing to keep
        return [st.version, gather_view(st, vmap, view_layout(st.layout, vmap)), False]
    e = None  # (a stale entry of this region is dropped below: no name may hold it)
    # Dropped copies first, so that the gather can reuse their buffers (``core.buffers``).
    for k in [k for k, v in copies.items() if v[0] != st.version]:
        give(copies.pop(k))
    if len(copies) >= _MAX_COPIES:
        give(copies.pop(next(iter(copies))))  # the oldest
    size = math.prod(vmap.shape)
    while copies and sum(v[1].size for v in copies.values()) + size > 2 * _BATCH:
        give(copies.pop(next(iter(copies))))  # the oldest, past the elements a storage keeps
    arr = gather_view(st, vmap, view_layout(st.layout, vmap), take(vmap.shape, st.dtype))  # (None under MIN_BYTES)
    e = copies[vmap] = [st.version, arr, False]
    return e


@lru_cache(maxsize=4096)
def _widen(vmap: ViewMap) -> tuple[ViewMap, tuple]:
    """The region a slice is copied with, and the slice's index into it.

    Each axis, last first, is widened to the whole base axis (step 1) while
    the region stays within ``4 * max(size, 1024)`` elements, so the slices
    ``A[i, :-2]``, ``A[i, 1:-1]`` and ``A[i, 2:]`` share one copy of row ``i``.
    """
    size = math.prod(vmap.shape)
    limit = 4 * max(size, 1024)
    start, axes, shape = list(vmap.start), list(vmap.axes), list(vmap.shape)
    idx: list = [slice(None)] * len(shape)
    total = size
    for k in reversed(range(len(axes))):
        b, s = axes[k]
        n = shape[k]
        if b < 0 or n == 0 or total // n * vmap.base_shape[b] > limit:
            continue
        total = total // n * vmap.base_shape[b]
        first = vmap.start[b]
        stop = first + n * s
        idx[k] = slice(first, stop if stop >= 0 else None, s)
        start[b], axes[k], shape[k] = 0, (b, 1), vmap.base_shape[b]
    return ViewMap(vmap.base_shape, tuple(start), tuple(axes), tuple(shape)), tuple(idx)


@lru_cache(maxsize=4096)
def _row_of(wide: ViewMap) -> tuple[int, int] | None:
    """``(row axis, row)`` when ``wide`` is one whole row (the last base axis, at fixed
    indices of the others) of a base of 2 or more axes; else None."""
    shape = wide.base_shape
    b = len(shape) - 1
    if b < 1 or wide.axes != ((b, 1),) or wide.shape != (shape[b],) or wide.start[b] != 0:
        return None
    return b - 1, wide.start[b - 1]


def _in_block(vm: ViewMap, wide: ViewMap, a: int, r: int) -> int | None:
    """Index of row ``r`` (of row axis ``a``) in the block of whole rows ``vm``, or None."""
    if len(vm.axes) != 2 or vm.axes[0] != (a, 1) or vm.axes[1] != wide.axes[0] or vm.shape[1] != wide.shape[0]:
        return None
    if vm.base_shape != wide.base_shape:
        return None
    lo = vm.start[a]
    if not lo <= r < lo + vm.shape[0] or vm.start[:a] != wide.start[:a]:
        return None
    return r - lo


@lru_cache(maxsize=4096)
def _span_of(wide: ViewMap) -> tuple[int, int] | None:
    """``(lo, hi)`` when ``wide`` is the contiguous stretch ``[lo, hi)`` of a 1-D base; else None."""
    if len(wide.base_shape) != 1 or wide.axes != ((0, 1),) or not wide.shape[0]:
        return None
    return wide.start[0], wide.start[0] + wide.shape[0]


def _current(st, wide: ViewMap):
    """The current copy holding region ``wide`` as ``(entry, index prefix)``, or None.
    Not collective.  The prefix is a tuple of integers (a row of a block of rows) or
    one slice (a stretch of a longer 1-D copy): read the region with :func:`_pick`."""
    copies = st.copies
    if not copies:
        return None
    e = copies.get(wide)
    if e is not None and e[0] == st.version:
        return e, ()
    row = _row_of(wide)
    if row is not None:
        for vm, e in reversed(copies.items()):  # the newest first: a sweep reads its last block
            if e[0] == st.version:
                k = _in_block(vm, wide, *row)
                if k is not None:
                    return e, (k,)
        return None
    span = _span_of(wide)
    if span is not None:
        lo, hi = span
        for vm, e in reversed(copies.items()):
            if e[0] == st.version and vm.axes == ((0, 1),) and vm.start[0] <= lo and hi <= vm.start[0] + vm.shape[0]:
                return e, (slice(lo - vm.start[0], hi - vm.start[0]),)
    return None


def _pick(arr, pre: tuple, idx: tuple):
    """``idx`` of the region that index prefix ``pre`` (see :func:`_current`) selects in ``arr``."""
    if pre and type(pre[0]) is slice:
        return arr[pre[0]][idx]
    return arr[pre + idx]


def _next_span(st, lo: int, hi: int) -> tuple[ViewMap, tuple] | None:
    """The stretch of a 1-D storage to gather for ``[lo, hi)`` in a read-only sweep (a CSR
    row loop's ``A_col[A_row[i]:A_row[i + 1]]``), and the prefix selecting ``[lo, hi)`` in
    it; None when the storage was written since its last gather (no sweep), or when
    ``[lo, hi)`` spans two holders.

    Read-ahead as :func:`_next_block`: twice the length of the last stretch gathered (at
    most ``_BATCH`` elements), on from ``lo`` or back from ``hi``, within the holder's
    stretch of the axis (one holder: one ``Bcast``).
    """
    last = None
    for vm, e in st.copies.items():
        if e[0] == st.version and vm.axes == ((0, 1),):
            last = vm
    if last is None:
        return None
    n = st.layout.shape[0]
    iv = st.layout.intervals[0]
    olo, ohi = iv[find_coord(iv, lo)] if iv is not None else (0, n)
    if hi > ohi:
        return None
    length = max(hi - lo, min(2 * last.shape[0], _BATCH))
    if last.start[0] <= lo:
        a, b = lo, min(lo + length, ohi)
    else:
        a, b = max(hi - length, olo), hi
    return ViewMap((n,), (a,), ((0, 1),), (b - a,)), (slice(lo - a, hi - a),)


def _next_block(st, wide: ViewMap, a: int, r: int) -> tuple[ViewMap, int] | None:
    """The block of whole rows to gather for row ``r`` in a read-only sweep, and the row's
    index in it; None when the storage was written since its last gather (no sweep).

    Read-ahead: twice the rows of the last block of the sweep (at most ``_BATCH``
    elements), on from the row after it or back from the row before it, and
    within the row owner's stretch of the row axis (one holder: one ``Bcast``).
    """
    last = None
    for vm, e in st.copies.items():
        if e[0] == st.version:
            last = vm
    if last is None:
        return None
    shape = wide.base_shape
    n, w = shape[a], max(shape[a + 1], 1)
    grown = 2 * (last.shape[0] if len(last.axes) == 2 and last.axes[0] == (a, 1) else 1)
    height = max(1, min(grown, _BATCH // w))
    if height < 2:
        return None
    lo = r if last.start[a] < r else r - height + 1
    iv = st.layout.intervals[a]
    olo, ohi = iv[find_coord(iv, r)] if iv is not None else (0, n)
    lo = max(lo, olo)
    hi = min(lo + height, ohi)
    start = wide.start[:a] + (lo,) + wide.start[a + 1 :]
    return ViewMap(shape, start, ((a, 1), wide.axes[0]), (hi - lo, shape[a + 1])), r - lo


def _region(st, wide: ViewMap):
    """``(entry, index prefix)`` of a current copy holding ``wide``, gathered if missing.

    Collective: one collective on a miss.  While the storage is only read (a
    current copy of another region exists: a read-only sweep such as the rows
    of ``L`` in a triangular solve), a missing whole row is gathered with the
    rows after it (or before it, sweeping backwards) in one block that doubles
    at each miss (:func:`_next_block`), so a sweep over ``n`` rows makes
    about ``log2`` of them collectives per owner.  After a write
    (Gauss-Seidel) only the row is gathered.
    """
    hit = _current(st, wide)
    if hit is not None:
        return hit
    row = _row_of(wide) if st.copies else None
    if row is not None:
        blk = _next_block(st, wide, *row)
        if blk is not None:
            return _copy(st, blk[0]), (blk[1],)
    span = _span_of(wide) if st.copies and row is None else None
    if span is not None:
        got = _next_span(st, *span)
        if got is not None:
            return _copy(st, got[0]), got[1]
    return _copy(st, wide), ()


def has_copy(x) -> bool:
    """Whether a current copy holds the view ``x`` whole on every rank (its reads then
    send nothing).  Not collective; every rank answers alike (copies change only in
    collective operations)."""
    st, vmap = x._st, x._map
    part = row_part(vmap) if st.copies else None
    if part is not None and held_part(st.copies, st.version, vmap, part) is not None:
        return True
    return _held_beyond_rows(st, vmap)


def _held_beyond_rows(st, vmap: ViewMap) -> bool:
    """:func:`has_copy` past its row-part look-up: a current copy of a region that holds the
    view, or a current copy of the whole storage.  Not collective."""
    if _current(st, _widen(vmap)[0]) is not None:
        return True
    if not st.copies or vmap.broadcast_axes:
        return False
    e = st.copies.get(_whole_map(st.layout.shape))  # (``_whole`` without counting a read: a question)
    return e is not None and e[0] == st.version


def held_copy(x) -> np.ndarray | None:
    """The view ``x`` from a current copy that holds it whole on every rank (read only), as
    :func:`copy_of` serves it; None where no copy holds it (:func:`has_copy`).

    Not collective; every rank answers alike.  A row part (``L[i, :i]`` along
    a sweep) is looked up once, not by :func:`has_copy` and again by
    :func:`copy_of`.
    """
    st, vmap = x._st, x._map
    copies = st.copies
    part = row_part(vmap) if copies else None
    if part is not None:
        hit = held_part(copies, st.version, vmap, part)
        if hit is not None:
            e, k = hit
            e[2] = True
            return e[1][k]
    return copy_of(st, vmap) if _held_beyond_rows(st, vmap) else None  # (the row part missed above)


def copy_of(st, vmap: ViewMap) -> np.ndarray:
    """The view ``vmap`` of storage ``st`` whole on this rank, in host memory (read only).

    Collective: served from a copy of a slightly wider region while the
    storage is unwritten, else one collective that gathers that region
    (see :func:`_region`).  A prefix or suffix of a row (``L[i, :i]``) that
    no copy holds is gathered, in a read-only sweep, with the parts of the
    rows after it (or before it) as one rectangle (:mod:`spmdarray.core.rows`).
    Nothing is sent for an empty view.
    """
    copies = st.copies
    if copies:
        part = row_part(vmap)
        if part is not None:
            hit = held_part(copies, st.version, vmap, part)
            if hit is None:
                w = _whole(st)
                if w is not None:  # (a moderately small array read again and again: gathered whole)
                    w[2] = True
                    return index_copy(w[1], vmap)
                rect = next_rectangle(st, vmap, part)
                if rect is not None:
                    hit = _copy(st, rect[0]), rect[1]
            if hit is not None:
                e, k = hit
                e[2] = True
                return e[1][k]
    if 0 in vmap.shape:
        return np.empty(vmap.shape, st.dtype)
    wide, idx = _widen(vmap)
    if st.copies is not None and _current(st, wide) is None:
        w = _whole(st)
        if w is not None:  # (a moderately small array read again and again: gathered whole)
            w[2] = True
            return index_copy(w[1], vmap)
    e, pre = _region(st, wide)
    e[2] = True
    return _pick(e[1], pre, idx)


@lru_cache(maxsize=1024)
def _whole_map(shape: tuple[int, ...]) -> ViewMap:
    return ViewMap.identity(shape)


def _whole(st, weight: int = 1):
    """The current entry of the copy of all of ``st`` (a read it serves, counted as ``weight``
    reads); else, for a read that needs a collective, the entry gathered now when
    :func:`~spmdarray.core.rereads.due` says so (one collective); else None.  Every rank
    takes the same branch."""
    e = st.copies.get(_whole_map(st.layout.shape))
    if e is not None and e[0] == st.version:
        served(st, weight)
        return e
    if eligible(st) and due(st, weight):
        return _copy(st, _whole_map(st.layout.shape))
    return None


def whole_read(x) -> np.ndarray | None:
    """The view ``x`` of a split host array from a whole copy of its storage (read only,
    for the caller's computation only), or None.  Collective in the sense of
    :func:`~spmdarray.core.rereads.due`: each call is a read that would need a
    collective, and the one that is due gathers the storage (one collective).

    For products that would otherwise combine partial sums at every call
    (``d[:, i] @ d[:, i:]``): NumPy's own product on the copy.
    """
    if x._map.broadcast_axes or not eligible(x._s):
        return None
    st = x._st  # (messages into it completed)
    e = _whole(st, PRODUCT)
    return None if e is None else index_copy(e[1], x._map)


@lru_cache(maxsize=4096)
def _row_region(layout, prefix: tuple[int, ...]) -> ViewMap:
    """The whole row along the last base axis at the indices ``prefix`` of the others."""
    return ViewMap(layout.shape, prefix + (0,), ((len(prefix), 1),), (layout.shape[-1],))


def _element_region(layout, base) -> tuple[ViewMap, tuple[int]] | None:
    """The region an element read gathers, and the element's index in it: the element's
    row along the last base axis (the copy that row slices share), or past ``_REGION``
    elements the owner's stretch of it (one holder: one ``Bcast``); None past that too."""
    b = len(base) - 1
    if layout.shape[b] <= _REGION:  # (the row: cached per row, not per element)
        return _row_region(layout, base[:b]), (base[b],)
    return _stretch_region(layout, base)


@lru_cache(maxsize=4096)
def _stretch_region(layout, base) -> tuple[ViewMap, tuple[int]] | None:
    """:func:`_element_region` for a row of more than ``_REGION`` elements."""
    b = len(base) - 1
    iv = layout.intervals[b]
    lo, hi = 0, layout.shape[b]
    if hi > _REGION and iv is not None:
        lo, hi = iv[find_coord(iv, base[b])]
    if hi - lo > _REGION:
        return None
    start = base[:b] + (lo,)
    return ViewMap(layout.shape, start, ((b, 1),), (hi - lo,)), (base[b] - lo,)


def _index_in(vmap: ViewMap, base) -> tuple[int, ...] | None:
    """Index of base element ``base`` in the view ``vmap``, or None outside it."""
    idx = []
    walked = set()
    for (b, s), n in zip(vmap.axes, vmap.shape):
        if b < 0:
            idx.append(0)
            continue
        d = base[b] - vmap.start[b]
        if d % s or not 0 <= d // s < n:
            return None
        idx.append(d // s)
        walked.add(b)
    if any(i != s0 for b, (i, s0) in enumerate(zip(base, vmap.start)) if b not in walked):
        return None
    return tuple(idx)


# ---------------------------------------------------------- read and write
def direct_access(layout, be, dtype, origin) -> bool:
    """Whether elements are read and written by indexing the allocation with their base
    index: every rank holds the whole array, in host memory, with no ghost frame, and the
    dtype is not structured (whose scalars are views).  ``Storage.copies`` is None then."""
    return _every_rank_holds(layout) and not be.is_device and not any(origin) and np.dtype(dtype).kind != "V"


def read_at(x, key):
    """``x[key]`` when ``key`` is one integer per axis, else :data:`NOT_ELEMENT`.

    Collective in the sense of :func:`read_element`.  The fast path of
    ``ndarray.__getitem__``: on an array every rank holds, a dictionary
    lookup and NumPy's own indexing.
    """
    # _plain(key), written out: a call costs a tenth of this path.
    if type(key) is tuple:
        for k in key:
            if type(k) is not int and not isinstance(k, np.integer):
                return NOT_ELEMENT
    elif type(key) is not int and not isinstance(key, np.integer):
        return NOT_ELEMENT
    vmap = x._map
    base = _BASES.get((vmap, key))
    if base is None:  # (``element_index``, inline: the key is plain, checked above)
        base = _element_index(vmap, key)
        if base is None:
            return NOT_ELEMENT
        if len(_BASES) >= 16384:
            _BASES.clear()
        _BASES[vmap, key] = base
    st = x._st
    if st.copies is None:
        return st.alloc[base]
    return read_element(st, base)


def write_at(x, key, value) -> bool:
    """``x[key] = value`` when ``key`` is one integer per axis and ``value`` a scalar;
    False, having done nothing, otherwise.  Collective in the sense of :func:`write_element`."""
    if not isinstance(value, _SCALAR) or x._map.broadcast_axes:
        return False
    base = element_index(x._map, key)
    if base is None:
        return False
    st = x._st
    if st.copies is None:
        st.alloc[base] = value  # NumPy's cast and errors, on every rank alike
        st.bump()
        return True
    return write_element(st, base, value)


def read_element(st, base):
    """The element at base index ``base`` of storage ``st``, a NumPy scalar on every rank.

    Collective.  Nothing is sent when every rank holds the element (a
    replicated array, or one rank) or when a current copy holds it (its row, a
    block of rows, a rectangle of row parts: ``L[i, i]`` after ``L[i, :i]``);
    else one collective gathers the element's row (or the owner's stretch of
    it, at most 4096 elements), kept as a copy for the reads that follow, or
    past that the element is broadcast by its owner.  Misses that walk a
    diagonal or a column are served by runs (:func:`_run_miss`).
    """
    lay = st.layout
    if _every_rank_holds(lay):
        v = st.alloc[_local(st, base)]
        if st.be.is_device or st.dtype.kind == "V":
            v = st.be.to_host(v).reshape(()).copy()[()]
        return v
    runs = st.copies is not None and len(base) > 1 and not st.be.is_device and st.dtype.kind != "V"
    if runs:
        h = RUNS.get(id(st))
        if h is not None and h[0]() is st:
            h[4] += 1  # (reads since the last miss)
            run = h[3]
            if run is not None and run[0] == st.version:
                t = _on_run(run, base)
                if t is not None:
                    return run[4][t]
    if st.copies:  # in a current copy: its row, a block of rows, a rectangle (``L[i, i]`` after ``L[i, :i]``)
        v = _in_copies(st, base)
        if v is not NOT_ELEMENT:
            return v
    if st.copies is not None and st.dtype.kind != "V" and not st.be.is_device:
        w = _whole(st)
        if w is not None:
            return w[1][base]
    if runs:
        v = _run_miss(st, base)
        if v is not NOT_ELEMENT:
            return v
    region = _element_region(lay, base) if st.dtype.kind != "V" else None
    if region is not None:
        e, pre = _region(st, region[0])
        return _pick(e[1], pre, region[1])
    ctx = st.ctx
    root, _ = _owner(lay, base, ctx.rank)
    data = st.be.to_host(st.alloc[_local(st, base)]) if ctx.rank == root else None
    return bcast_array(ctx, data, root, (), st.dtype)[()]


def _in_copies(st, base):
    """The element at ``base`` from the newest current copy holding it, or
    :data:`NOT_ELEMENT`.  Not collective."""
    version = st.version
    b = len(base) - 1
    a = b - 1
    for vm, e in reversed(st.copies.items()):  # the newest first: a sweep reads its last copy
        if e[0] != version:
            continue
        axes = vm.axes
        # (``_index_in``, inline for a stretch of a row and for a rectangle of rows)
        if b >= 0 and axes == ((b, 1),):
            j = base[b] - vm.start[b]
            if 0 <= j < vm.shape[0] and vm.start[:b] == base[:b]:
                return e[1][j]
            continue
        if a >= 0 and axes == ((a, 1), (b, 1)):
            k, j = base[a] - vm.start[a], base[b] - vm.start[b]
            if 0 <= k < vm.shape[0] and 0 <= j < vm.shape[1] and vm.start[:a] == base[:a]:
                return e[1][k, j]
            continue
        j = _index_in(vm, base)
        if j is not None:
            return e[1][j]
    return NOT_ELEMENT


#: id(storage) -> [weak reference to the storage, base index of the last missed read, unit
#: step from the miss before (None unless it was a sparse walk), run or None, reads since
#: the last miss] for the element reads of split arrays (:func:`_run_miss`).  The weak
#: reference tells a reused id apart without keeping a freed array's memory alive.
RUNS: dict = {}
_MAX_RUNS = 8
_FIRST_RUN = 4  # elements in a storage's first run (and in the first after a write)


def _run_miss(st, base):
    """The element at ``base``, missing from every current copy, from a new *run*; or
    :data:`NOT_ELEMENT` to read it otherwise.

    A run is the elements ``base + t * step`` for ``t`` below a length, broadcast
    by their owner in one ``Bcast``.  It is gathered when the last two misses
    stepped the same unit direction ``step`` (each component -1, 0 or 1) across
    rows, each with at most one read per row stepped: a diagonal ``a[i, i]``, a
    column ``a[i, j]`` or an anti-diagonal walked in a loop, where gathering
    each element's row (and the rows after it) moves the whole matrix for one
    element per row.  A loop that reads each row's copy many times (Gauss-Seidel
    along rows) keeps its row copies, and a walk along a row is left to them.
    A run stays within the owner's block and has twice the length of the last
    while the storage is unwritten, up to ``_REGION`` elements.  Collective:
    every rank misses alike and keeps the same record, so every rank takes the
    same branch.
    """
    h = RUNS.get(id(st))
    if h is None or h[0]() is not st:
        if len(RUNS) >= _MAX_RUNS:
            del RUNS[next(iter(RUNS))]
        RUNS[id(st)] = [weakref.ref(st), base, None, None, 0]
        return NOT_ELEMENT
    diff = [b - a for a, b in zip(h[1], base)]
    step = _unit(diff)
    if step is not None and h[4] > max(map(abs, diff)):
        step = None  # more reads than rows stepped: the row copies serve the loop
    known = step is not None and step == h[2]
    h[1], h[2], h[4] = base, step, 0
    if not known:
        return NOT_ELEMENT
    run = h[3]
    n = min(2 * run[3], _REGION) if run is not None and run[0] == st.version else _FIRST_RUN
    lay = st.layout
    root, _ = _owner(lay, base, st.ctx.rank)
    for (lo, hi), b, d in zip(lay.block(root), base, step):
        if d > 0:
            n = min(n, (hi - 1 - b) // d + 1)
        elif d < 0:
            n = min(n, (b - lo) // -d + 1)
    data = None
    if st.ctx.rank == root:
        t = np.arange(n)
        data = st.alloc[tuple(t * d + (b - o) for b, d, o in zip(base, step, st.origin))]
    vals = bcast_array(st.ctx, data, root, (n,), st.dtype)
    h[3] = (st.version, base, step, n, vals)
    return vals[0]


def _unit(step: list) -> tuple | None:
    """The unit direction of ``step`` (each component -1, 0 or 1) when its non-zero
    components all have one magnitude and one of them comes before the last (a step
    across rows: a diagonal, a column, an anti-diagonal); else None."""
    g = max(abs(d) for d in step)
    if not g or any(d and abs(d) != g for d in step):
        return None
    unit = tuple([d // g for d in step])
    return unit if any(unit[:-1]) else None


def _on_run(run, base) -> int | None:
    """The position of ``base`` on ``run`` (see :func:`_run_miss`), or None."""
    _, start, step, n, _ = run
    t = None
    for b, a, d in zip(base, start, step):
        if d:
            q, r = divmod(b - a, d)
            if r or not 0 <= q < n or (t is not None and q != t):
                return None
            t = q
        elif b != a:
            return None
    return t


_PROBES: dict = {}


def write_element(st, base, value) -> bool:
    """``x[i, j] = value`` for a scalar ``value``: only the ranks holding the
    element write it, and every rank writes it into its current copies.
    Collective (every rank checks the cast and bumps the storage), but sends
    nothing.  False, having done nothing, when ``value`` is not a scalar.

    Every rank must write the same element with the same value, as in every
    operation; the copies then stay equal to the owner's data.
    """
    if not isinstance(value, _SCALAR):
        return False
    lay = st.layout
    if _every_rank_holds(lay) and not st.be.is_device:
        st.alloc[_local(st, base)] = value  # NumPy's cast and errors, on every rank alike
        st.bump()
        return True
    probe = _PROBES.get(st.dtype)
    if probe is None:
        probe = _PROBES[st.dtype] = np.empty((), st.dtype)
    probe[()] = value  # NumPy's casting errors, on every rank alike
    _, holds = _owner(lay, base, st.ctx.rank)
    if holds and lay.holds(st.ctx.rank):
        st.alloc[_local(st, base)] = probe[()]
    current = st.version
    st.bump()
    whole = _whole_map(lay.shape)
    for wide, e in st.copies.items():
        if e[0] != current:
            continue
        j = _index_in(wide, base)
        if j is not None:
            if e[2]:  # handed out to an operation: write a fresh copy
                if wide == whole:
                    continue  # (not a copy of all of it: it goes stale, and is gathered again if due)
                e[1], e[2] = e[1].copy(), False
            e[1][j] = probe[()]
        e[0] = st.version
    return True
