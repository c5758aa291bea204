"""Shape changes: views where the layout allows, redistributions otherwise."""

from __future__ import annotations

import gc
import sys
from functools import lru_cache

import numpy as np

from spmdarray.comm import allgather_object, start_exchange
from spmdarray.core.array import ndarray
from spmdarray.core.placement import default_layout, is_whole
from spmdarray.core.registry import implements, provides
from spmdarray.core.storage import Storage
from spmdarray.core.whole import whole_copy, wrap
from spmdarray.decomposition import Layout, box_size, normalize_key, unravel
from spmdarray.decomposition.runs import box_runs, flat_span, segment_index, shared_segments
from spmdarray.engine import elementwise as _engine

__all__ = ["reshape", "ravel", "redistribute", "set_shape"]


def redistribute(x, layout: Layout):
    """Copy of ``x`` laid out as ``layout`` (same shape).  Collective.

    Moves exactly the overlaps between the old and new blocks.
    """

    if x._layout == layout:
        return x
    out = ndarray._new(Storage(x._st.ctx, layout, x.dtype), None)
    _engine.assign(out, x)
    return out


def _numpy_shape(shape, newshape, order):
    probe = np.lib.stride_tricks.as_strided(np.empty(1, np.int8), shape, (0,) * len(shape))
    return probe.reshape(newshape, order=order).shape


_cached_shape = lru_cache(maxsize=4096)(_numpy_shape)


def _new_shape(shape, newshape, order):
    # NumPy's own answer, -1 resolved, and its errors (not cached); remembered per shapes, as
    # a loop reshapes to the same few shapes again and again.
    try:
        return _cached_shape(shape, newshape, order)
    except TypeError:  # (an entry that is not hashable, or NumPy's own TypeError: asked again)
        return _numpy_shape(shape, newshape, order)


@provides("reshape")
def reshape(x, newshape, order="C", copy=None):
    """NumPy's reshape.  Collective.

    Returns a view when only length-1 axes are added or removed (as NumPy
    would); otherwise a redistributed copy (NumPy may return a view there:
    writing through the result does not change ``x``).
    """
    if isinstance(newshape, (int, np.integer)):
        newshape = (int(newshape),)
    if order not in ("C", "F", "A"):
        raise ValueError(f"order must be one of 'C', 'F', 'A' (got {order!r})")
    if order == "A":
        order = "F" if _contiguity(x) == "F" else "C"
    shape = _new_shape(x.shape, tuple(newshape), "F" if order == "F" else "C")
    if order == "F":
        return reshape(x.T, shape[::-1], "C", copy).T
    if shape == x.shape and not copy:
        return x
    old_core = [n for n in x.shape if n != 1]
    new_core = [n for n in shape if n != 1]
    if old_core == new_core and not copy:
        squeeze = tuple(0 if n == 1 else slice(None) for n in x.shape)
        m = x._map.getitem(normalize_key(squeeze, x.shape))
        expand = tuple(None if n == 1 else slice(None) for n in shape)
        m = m.getitem(expand)
        return ndarray._new(x._st, m)
    v = whole_copy(x)
    if v is not None:
        # Every rank holds all of ``x`` (replicated, or one rank): NumPy's reshape of the
        # copy, copied (as the general path copies) into a new array of its own, in the
        # layout of a new array.
        st = x._s
        if type(v) is np.ndarray:
            out = np.empty(shape, v.dtype)
            out.reshape(v.shape)[...] = v  # (C order both ways: the reshape's elements, copied once)
            return wrap(st.ctx, st.be, out)
        return wrap(st.ctx, st.be, v.reshape(shape))
    return _reshape_copy(x, shape)


_IN_PLACE = "Incompatible shape for in-place modification. Use `.reshape()` to make a copy with the desired shape."


def _base_box(x) -> list[tuple[int, int]] | None:
    """Inclusive bounds, per base axis, of the base elements view ``x`` reads; None when empty."""
    m = x._map
    if 0 in m.shape:
        return None
    box = [[s, s] for s in m.start]
    for (b, step), n in zip(m.axes, m.shape):
        if b >= 0:
            end = m.start[b] + step * (n - 1)
            box[b] = [min(m.start[b], end), max(m.start[b], end)]
    return [tuple(r) for r in box]


class _Holder:
    __slots__ = ("_s",)


def _references(x) -> int:
    """References to ``x``'s storage, seen from here (:data:`_ALONE` when ``x`` holds it alone)."""
    return sys.getrefcount(x._s)


_probe = _Holder()
_probe._s = object()
#: What :func:`_references` counts for a storage one array holds alone: measured, not
#: assumed, since the count differs between Python versions.
_ALONE = _references(_probe)
del _probe


def _shares_elements(x) -> bool:
    """Whether another spmdarray array on ``x``'s storage may read an element ``x`` reads (bounding boxes)."""
    if _references(x) <= _ALONE:
        return False  # nothing else holds the storage (``C.shape = n`` of a fresh array): no heap walk
    st, mine = x._s, _base_box(x)
    if mine is None:
        return False
    for v in gc.get_referrers(st):
        if isinstance(v, ndarray) and v is not x and v._s is st:
            other = _base_box(v)
            if other is not None and all(lo <= oh and ol <= hi for (lo, hi), (ol, oh) in zip(mine, other)):
                return True
    return False


@provides("set_shape")
def set_shape(x, newshape):
    """The array that ``x.shape = newshape`` makes ``x`` (NumPy's in-place reshape).  Collective.

    As NumPy: a size mismatch raises ``ValueError``, and a shape NumPy could
    not give ``x`` without a copy (by its strides over a C-ordered base)
    raises ``AttributeError``.  Adding or removing length-1 axes keeps the
    storage.  An array every rank holds whole (replicated, or on one rank)
    becomes NumPy's reshaped view of the same memory: every other view still
    aliases it, and nothing is sent.  For a split array another shape moves the
    data to the balanced layout of the new shape; that is NumPy's in-place
    change only if no other array shares the elements, so when one does (on
    any rank), ``AttributeError`` says to use ``x = x.reshape(newshape)``.
    """
    if isinstance(newshape, (int, np.integer)):
        newshape = (int(newshape),)
    shape = _new_shape(x.shape, tuple(newshape), "C")
    probe = np.lib.stride_tricks.as_strided(np.empty(1, np.int8), x.shape, _strides(x))
    try:
        probe.shape = shape  # NumPy's own rule for a no-copy reshape
    except AttributeError:
        raise AttributeError(_IN_PLACE) from None
    if [n for n in shape if n != 1] == [n for n in x.shape if n != 1]:
        return reshape(x, shape)
    aliased = _aliased_reshape(x, shape)
    if aliased is not None:
        return aliased
    ctx = x._st.ctx  # evaluates a deferred value first
    if any(allgather_object(ctx, _shares_elements(x))):
        raise AttributeError(
            f"cannot set the shape of this array to {shape} in place: another spmdarray array shares its elements "
            "and the new shape moves data between ranks (NumPy would keep them aliased). "
            "Use x = x.reshape(newshape) (a copy), or drop the other views first"
        )
    return _reshape_copy(x, shape)


def _aliased_reshape(x, shape: tuple[int, ...]):
    """``x.shape = shape`` for an array every rank holds whole (replicated, or on one rank) on
    the host, read straight from its allocation: NumPy's own in-place reshape of this rank's
    copy, made the allocation of a new storage over the same memory.  Every other array on
    ``x``'s storage still aliases ``x``, as in NumPy: nothing is copied, nothing sent, and no
    other view needs finding.  None where this does not apply (the caller moves the data).

    Not collective: every rank holds the same copy and decides alike.  Deferred values that
    read the storage are computed first, and both storages are marked exposed (as
    ``x.real``'s is): a deferred value reading either is computed at once, since a write
    through one is not seen by the other's deferred readers.
    """
    st = x._st  # (evaluates a deferred ``x`` first)
    if (
        type(st) is not Storage
        or st.be.is_device
        or st.copies is not None  # (element copies kept by version: only one storage would see a write)
        or not (is_whole(st.layout) or st.ctx.size == 1)
    ):
        return None
    v = whole_copy(x)
    if v is None or not v.flags.c_contiguous:
        return None
    nv = v.view()
    try:
        nv.shape = shape  # NumPy's rule; a view of the same memory
    except AttributeError:
        return None
    st.stored(x)  # deferred readers computed, pending writes into it done
    ctx = st.ctx
    lay = Layout.replicated(shape, ctx.size) if is_whole(st.layout) else Layout.balanced(shape, ctx.size)
    new = Storage(ctx, lay, st.dtype, ghost=(0,) * len(shape), alloc=nv)
    if new.copies is not None:
        return None
    new.flights = st.flights  # one memory: what is in flight into one is in flight into both
    st.exposed = new.exposed = True
    return ndarray._new(new, None)


def _strides(x) -> list[int]:
    """Element strides of view ``x`` over a C-ordered global base array."""
    base = x._map.base_shape
    c = [1] * len(base)
    for b in range(len(base) - 2, -1, -1):
        c[b] = c[b + 1] * base[b + 1]
    return [0 if b < 0 else step * c[b] for b, step in x._map.axes]


def _contiguity(x) -> str:
    """'C', 'F' or '' as NumPy's flags would say for ``x`` over a C-ordered base."""
    st = _strides(x)
    big = [(n, s) for n, s in zip(x.shape, st) if n != 1]
    if x.size == 0 or not big:
        return "C"

    def ok(items):
        want = 1
        for n, s in items:
            if s != want:
                return False
            want *= n
        return True

    if ok(big[::-1]):
        return "C"
    if ok(big):
        return "F"
    return ""


@provides("ravel")
def ravel(x, order="C"):
    """Flattened ``x`` in NumPy's ``order``.  Collective.

    'C' and 'F' are index orders; 'A' is 'F' when ``x`` would be Fortran-
    contiguous in NumPy (a transposed C array), and 'K' reads the axes in the
    memory order of a C-ordered global array (as NumPy, negative steps are
    not reversed).
    """
    if order not in ("C", "F", "A", "K"):
        raise ValueError("order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    if order == "K":
        st = _strides(x)
        perm = sorted(range(x.ndim), key=lambda a: -abs(st[a]))
        return reshape(x.transpose(perm), (-1,), "C")
    return reshape(x, (-1,), order)


def _primary(lay: Layout, rank: int) -> bool:
    """Whether ``rank`` holds the copy of its block that a redistribution sends from
    (coordinate 0 along the grid axes that replicate the array)."""
    if not lay.holds(rank):
        return False
    c = unravel(rank, lay.dims)
    return all(c[k] == 0 for k in range(len(lay.dims)) if lay.is_replicated_axis(k))


def _meet(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether two flat spans ``[first, stop)`` overlap."""
    return a[0] < b[1] and b[0] < a[1]


def _flat_of_box(box, shape) -> np.ndarray:
    if not shape:
        return np.zeros((1,), np.int64)
    strides = np.cumprod((1,) + tuple(shape[::-1]))[:-1][::-1]
    flat = np.zeros((1,) * len(shape), np.int64)
    for a, ((lo, hi), s) in enumerate(zip(box, strides)):
        shp = [1] * len(shape)
        shp[a] = hi - lo
        flat = flat + (np.arange(lo, hi, dtype=np.int64) * int(s)).reshape(shp)
    return flat.reshape(-1)


def _reshape_copy(x, shape, dst_lay: Layout | None = None):
    """C-order redistribution to ``dst_lay`` (default: the default layout of ``shape``).  Collective.

    A replicated ``x`` moves nothing: every rank reshapes its own copy.  A
    split ``x`` whose result is replicated (a small shape) is reshaped into
    balanced blocks first, then copied whole to every rank: the element
    moves below send each element to one rank only.
    """

    ctx = x._st.ctx
    me = ctx.rank
    src_lay = x._layout
    if dst_lay is None:
        dst_lay = default_layout(shape, ctx.size)
        if is_whole(dst_lay) and not is_whole(src_lay) and ctx.size > 1:
            return redistribute(_reshape_copy(x, shape, Layout.balanced(shape, ctx.size)), dst_lay)
    out = ndarray._new(Storage(ctx, dst_lay, x.dtype), None)
    if is_whole(src_lay):
        if dst_lay.owned_size(me):
            whole = x._block.reshape(shape)
            out._block[...] = whole[tuple(slice(lo, hi) for lo, hi in dst_lay.block(me))]
        return out
    dtype = x.dtype
    sends, places, recvs = [], [], []
    mine = None
    if _primary(src_lay, me) and src_lay.owned_size(me):
        # This rank's elements, in C order, to the ranks whose blocks of the new shape hold them.
        vals = x._st.be.to_host(x._block).reshape(-1)
        box = src_lay.block(me)
        runs, span = box_runs(box, x.shape), flat_span(box, x.shape)
        for r in range(ctx.size):
            dbox = dst_lay.block(r)
            if not dst_lay.owned_size(r) or not _meet(span, flat_span(dbox, shape)):
                continue
            oa, ob, ln = shared_segments(*runs, *box_runs(dbox, shape))
            if ln.size:
                part = vals[oa[0] : oa[0] + ln[0]] if ln.size == 1 else vals[segment_index(oa, ln)]
                if r == me:
                    mine = (ob, ln, part)
                else:
                    sends.append((r, part))
    dbox = dst_lay.block(me)
    if box_size(dbox):
        runs, span = box_runs(dbox, shape), flat_span(dbox, shape)
        for r in range(ctx.size):
            if r == me or not _primary(src_lay, r) or not src_lay.owned_size(r):
                continue
            box = src_lay.block(r)
            if not _meet(flat_span(box, x.shape), span):
                continue
            oa, ob, ln = shared_segments(*box_runs(box, x.shape), *runs)
            if ln.size:
                buf = np.empty(int(ln.sum()), dtype)
                recvs.append((r, buf))
                places.append((ob, ln, buf))
        if mine is not None:
            places.append(mine)
    if sends or recvs:
        start_exchange(ctx, sends, recvs).wait()
    if box_size(dbox):
        dst = np.empty(box_size(dbox), dtype)
        for ob, ln, buf in places:
            if ln.size == 1:
                dst[ob[0] : ob[0] + ln[0]] = buf
            else:
                dst[segment_index(ob, ln)] = buf
        out._block[...] = out._st.be.asarray(dst.reshape(out._block.shape))
    return out


@implements(np.reshape)
def reshape_function(a, shape=None, order="C", *, newshape=None, copy=None):
    """Distributed ``numpy.reshape``.  Collective."""
    return reshape(a, shape if shape is not None else newshape, order=order, copy=copy)
