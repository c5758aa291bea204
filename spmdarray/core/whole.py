"""The lane of arrays every rank holds whole: NumPy's own call on the local copy, wrapped.

Small arrays are replicated (:mod:`spmdarray.core.placement`): every rank
holds all of a replicated array and computes on it redundantly.  An
operation whose array operands are all replicated therefore needs no layout
arithmetic, no plan and no message: it is NumPy's call on each rank's copy,
with NumPy's result, errors and warnings, identical on every rank.  This
module is that lane, for the operations unmodified NumPy programs repeat in
Python loops (``x[i, j]``, ``A[i, :j]``, ``a + b``, ``a += b``, ``a @ b``,
``np.sqrt(a)``); it costs about a microsecond over NumPy's own call.

:func:`local` gives an array's copy (a NumPy view of its allocation), cached
on the array together with the storage it was taken from, or None where the
lane does not apply: a split array on several ranks (or on one rank, one
whose block the program holds: ``from_local``), a deferred value, a device
block, a 0-d array, a split array the fuser would defer (``config.fuse`` and
at least ``config.fuse_min_size`` elements), a replicated array of at least
``config.fuse_replicated_min`` elements as well (below it NumPy's own calls
beat a fused kernel's overhead; :func:`fuses`), whose copy is kept for
indexing only, and everything while ``config.whole_lane`` is off.  On one rank every array is
whole, so the lane takes the small arrays of a one-rank run too.
:func:`wrap` makes the spmdarray array of NumPy's new result.  Nothing here
is collective: every rank holds the same copies and makes the same calls.
"""

from __future__ import annotations

import math

import numpy as np

from spmdarray.core.element import RUNS, copy_of, direct_access, held_copy
from spmdarray.core.placement import is_small, is_whole
from spmdarray.core.rows import SNAP
from spmdarray.core.storage import Storage, _geometry, adopt
from spmdarray.core.thunk import READERS
from spmdarray.core.viewcache import cached_view, hashable_key, remember_view, view_of_key
from spmdarray.decomposition import Layout, ViewMap, view_layout
from spmdarray.settings import config

__all__ = [
    "NUMBERS",
    "SLOW",
    "getitem",
    "fancy_key",
    "index",
    "local",
    "operand",
    "reduce_whole",
    "register",
    "resolve",
    "setitem",
    "stores_back",
    "ufunc_call",
    "wrap",
    "writable",
    "whole_copy",
    "written",
]

#: Returned by a lane that does not apply; nothing was done.
SLOW = object()

#: Ufuncs whose ``reduce`` and ``accumulate`` spmdarray computes (as ``engine.dispatch``).
_ASSOCIATIVE = frozenset((np.add, np.multiply, np.minimum, np.maximum, np.logical_and, np.logical_or))
_SCANS = ("reduce", "accumulate")

#: NumPy's scalar types (``type(x) in``: cheaper than ``isinstance(x, np.generic)``)
NUMPY_SCALARS = frozenset(t for t in set(np.sctypeDict.values()) if issubclass(t, np.generic))

_ARRAY = None  # the ndarray class (core.array registers it: it imports this module)
#: shape -> (context, dtype, small, layout, view map, view layout, geometry, direct) of a replicated result
_KINDS: dict = {}
#: (shape, dtype) -> the same, for the shapes whose results come in several dtypes
_BY_DTYPE: dict = {}
#: Entries of each before it is cleared (the compiled lane's ``MAX_KINDS`` too): a loop over
#: ``y[:k]`` for k up to N makes N shapes, each kind about 1 KB.
MAX_KINDS = 16384


def register(cls, min_elide_bytes: int) -> None:
    """Record the ``ndarray`` class the lane makes, and the size from which the operators
    try NumPy's temporary elision (their own lane, not the compiled one, then decides).
    Not collective."""
    global _ARRAY
    _ARRAY = cls
    if LANE is not None:
        LANE.register(cls, min_elide_bytes)


def local(x) -> np.ndarray | None:
    """``x``'s whole copy on this rank (a NumPy view of its allocation), or None off the lane.

    Not collective.  Cached on ``x`` as ``x._loc = (id of the storage, copy
    on the lane or None, replicated (None where this rank does not hold all of
    it), copy for indexing or None)``: the id of
    the storage, not the storage itself, whose reference count tells whether
    other arrays share it; every assignment of ``x._s`` resets ``x._loc``.
    The settings are read at each call (a split array the fuser would defer
    now is off the lane), and the copy is kept only for an array on the lane
    when first seen: one seen off it stays off it.
    """
    c = x._loc
    if c is not None and c[0] == id(x._s):
        v = c[1]
    else:
        v = _held(x)
        rep = None if v is None else is_whole(x._s.layout)  # (None: not held, see whole_copy)
        if v is not None and not _on_lane(v.size, rep):
            v = None  # not kept: a copy held here would stop the engine reusing a temporary
        c = x._loc = (id(x._s), v, rep, v)
    if v is None or not config.whole_lane or not c[2] and config.fuse and v.size >= config.fuse_min_size:
        return None  # (``_on_lane``, inline: asked for every operand; a replicated copy kept is on the lane)
    return v


def whole_copy(x) -> np.ndarray | None:
    """:func:`local`, or for an array too large for the lane (the fuser's threshold), its
    copy all the same: for indexing, which is eager whatever the size.  None off the lane.

    Not collective.  The copy of a large array is cached for indexing only
    (``x._loc[3]``), once it is indexed: loops of element and row reads.
    """
    c = x._loc
    if c is not None and c[0] == id(x._s) and c[3] is not None:
        return c[3] if config.whole_lane else None
    v = local(x)
    if v is None and config.whole_lane and x._loc[2] is not None:  # (None: this rank does not hold it)
        v = _held(x)
        if v is not None:
            c = x._loc
            x._loc = (c[0], c[1], c[2], v)
    return v


def _held(x) -> np.ndarray | None:
    """``x``'s whole copy, whatever its size, or None where this rank does not hold all of it.

    On one rank a split array is whole too, unless the program holds its block
    (``from_local``: results then keep its layout, on the general path).
    """
    s = x._s
    if (
        type(s) is Storage
        and not s.be.is_device
        and x._map.shape
        and (is_whole(s.layout) or (s.ctx.size == 1 and not s.exposed))
    ):
        return s.view_of(x._map, x._layout.block(s.ctx.rank))
    return None


def _on_lane(size: int, replicated: bool) -> bool:
    """Whether an array of ``size`` elements takes the lane under the settings now: not while
    ``config.whole_lane`` is off, nor when the fuser defers operations on arrays that large
    (:func:`fuses`)."""
    return config.whole_lane and not fuses(size, replicated)


def fuses(size: int, replicated) -> bool:
    """Whether the fuser defers elementwise operations on an array of ``size`` elements: at
    least ``config.fuse_min_size`` elements, and for a replicated array also at least
    ``config.fuse_replicated_min`` (0: never), below which NumPy's own calls beat a fused
    kernel's overhead (about 45 us to record an operation).  Not collective."""
    if not config.fuse or size < config.fuse_min_size:
        return False
    if not replicated:
        return True
    m = config.fuse_replicated_min
    return 0 < m <= size


def reread(x) -> np.ndarray | None:
    """The copy of ``x``, a small split view (below ``config.replicate_below`` elements)
    that a current copy holds whole on every rank (:func:`~spmdarray.core.element.has_copy`:
    gathered by earlier reads, unwritten since), read only; else None.  Not collective.

    An operation on it then takes the lane, as on a replicated array: the windows of a
    convolution over a split input gathered whole (``input[:, i:i + K, j:j + K]``) cost
    NumPy's operation and no placement.  Every rank answers alike.
    """
    s = x._s
    if (
        type(s) is not Storage
        or not s.copies
        or s.flights
        or s.be.is_device
        or not config.whole_lane
        or x._map.broadcast_axes
        or math.prod(x._map.shape) >= config.replicate_below
    ):
        return None
    return held_copy(x)


def operand(o, ctx):
    """The lane's form of operand ``o``: a Python or NumPy scalar as it is, the copy
    of a spmdarray array on context ``ctx`` (:func:`local`, or :func:`reread`), or
    :data:`SLOW`.  Not collective."""
    t = type(o)
    if t is _ARRAY:
        v = local(o)
        if v is None:
            v = reread(o)
        return SLOW if v is None or o._s.ctx is not ctx else v
    if t is float or t is int or t in NUMPY_SCALARS or t is complex or t is bool or isinstance(o, np.generic):
        return o
    return SLOW


def writable(x, region: bool = False) -> np.ndarray | None:
    """:func:`local`, after computing the deferred values that read ``x``'s storage and
    completing messages into it, so that the caller may write it; call :func:`written` after.

    ``region``: for an assignment into part of ``x``, which is eager whatever
    ``x``'s size (the fuser defers new results only): ``x``'s copy also where
    it is too large for the lane, uncached.  Not collective."""
    v = whole_copy(x) if region else local(x)
    if v is not None:
        s = x._s
        if READERS and id(s) in READERS or s.flights:
            s.stored(x)
    return v


def written(x) -> None:
    """Record a write through :func:`writable` (cached halos and copies become stale).  Not collective."""
    x._s.version += 1


def ufunc_call(x, ufunc, method: str, inputs, kwargs: dict):
    """``ufunc.<method>(*inputs, **kwargs)`` as NumPy's call on the copies, or :data:`SLOW`
    where an input, ``out=`` or a keyword array is off the lane.  Not collective.

    ``x``: the spmdarray argument NumPy dispatched to.  ``out=`` arrays on the
    lane are written in place (deferred readers computed first) and returned,
    as NumPy returns them.  Only what the general path computes takes the
    lane (calls, ``outer``, and ``reduce`` and ``accumulate`` of associative
    ufuncs), so that an unimplemented method raises at every size.
    """
    ctx = x._s.ctx
    call = method == "__call__"
    if not call and method != "outer" and (method not in _SCANS or ufunc not in _ASSOCIATIVE):
        return SLOW  # as the general path: the same functions at every size and rank count
    locs = []
    for i in inputs:
        o = operand(i, ctx)
        if o is SLOW:
            return SLOW
        locs.append(o)
    if call and not kwargs:  # the usual call: ``np.sqrt(a)``, ``2.0 * a``
        return wrap(ctx, x._s.be, ufunc(*locs))
    outs = None
    if kwargs:
        kw = {}
        for k, val in kwargs.items():
            if k == "out":
                outs = val if type(val) is tuple else (val,)
                val = []
                for o in outs:
                    w = None
                    if o is not None:
                        w = writable(o) if type(o) is _ARRAY and o._s.ctx is ctx else None
                        if w is None:
                            return SLOW
                    val.append(w)
                val = tuple(val)
            elif type(val) is _ARRAY:
                val = operand(val, ctx)
                if val is SLOW:
                    return SLOW
            kw[k] = val
        kwargs = kw
    res = (ufunc if method == "__call__" else getattr(ufunc, method))(*locs, **kwargs)
    s = x._s
    if outs is None:
        return wrap(s.ctx, s.be, res)
    for o in outs:
        if o is not None:
            written(o)
    res = res if type(res) is tuple else (res,)
    got = tuple(o if o is not None else wrap(s.ctx, s.be, r) for o, r in zip(outs, res))
    return got[0] if len(got) == 1 else got


def reduce_whole(name: str, x, axis, dtype, keepdims, kw: dict):
    """``x.<name>(axis=..., dtype=..., keepdims=..., **kw)`` as NumPy's reduction of the
    copy, or :data:`SLOW` off the lane.  Not collective.

    A split ``x`` that a current copy holds whole (``core.element``: gathered
    by earlier reads, unwritten since) is reduced from that copy too.
    """
    v = local(x)
    if v is None:
        s = x._s
        if type(s) is not Storage or s.be.is_device or not s.copies:
            return SLOW
        v = held_copy(x)  # a current copy holds all of it (a row read in a loop): no collective
        if v is None:
            return SLOW
    if axis is None and dtype is None and not keepdims and not kw:
        return getattr(v, name)()
    if dtype is not None:
        kw["dtype"] = dtype
    s = x._s
    return wrap(s.ctx, s.be, getattr(v, name)(axis=axis, keepdims=keepdims, **kw))


def getitem(x, v, key):
    """``x[key]`` as NumPy's indexing of ``x``'s copy ``v`` (:func:`local`), or :data:`SLOW`.

    A view for a basic key, sharing ``x``'s storage; NumPy's scalar for one
    element; a new array for an integer or boolean array index.  Not collective.
    """
    tk = type(key)
    if tk is tuple:  # (a key of one integer per axis was read by ``ndarray.__getitem__``)
        keys = key
    elif tk is int or tk is slice:
        keys = (key,)
    else:
        keys = ()
    if keys:
        if keys[-1] is Ellipsis:  # ``(..., Ellipsis)``, as the view functions index (``flip``)
            keys = keys[:-1]
        for k in keys:
            t = type(k)
            if t is not slice and t is not int and k is not None and not isinstance(k, np.integer):
                break
        else:  # integers, slices and None: NumPy's view, its view map made when first asked for
            r = v[key]
            if type(r) is not np.ndarray:
                return r  # one element
            if r.ndim:
                return lazy_view(x, key if keys is key or type(key) is not tuple else keys, r)
    hk = hashable_key(key)
    if hk is None:
        return index(x, v, key)
    r = v[key]
    if type(r) is not np.ndarray:
        return r  # one element
    s = x._s
    hit = cached_view(s.layout, x._map, hk)
    if hit is None and Ellipsis not in hk:
        # A key not seen yet (``r[:k]`` for a new ``k``): composed here, cheaper than the
        # general normalisation, and remembered for the next time.
        vmap, lay = _compose(s, x._map, key if type(key) is tuple else (key,), r.shape)
        remember_view(s.layout, x._map, hk, (vmap, lay, False))
        return _view(s, vmap, lay, r)
    vmap, lay, _ = hit if hit is not None else view_of_key(s.layout, x._map, key, hk)
    return _view(s, vmap, lay, r)


def lazy_view(x, key, r):
    """The view ``x[key]`` (a basic key of integers, Python or NumPy, slices and None) whose copy is
    NumPy's view ``r``; its view map and layout are composed when first read (:func:`resolve`).

    Loops of short slices (``A[i, 1:-1]``, ``A[i, :j] @ A[:j, j]``) use most
    views on the lane only, where the copy is all they need.  Not collective.
    """
    s = x._s
    c = x._loc
    rep = c[2] if c is not None and c[0] == id(s) else is_whole(s.layout)
    out = object.__new__(_ARRAY)
    out._s = s
    # (``_on_lane``, inline; a view too large for the lane keeps its copy for indexing)
    lane = rep and not config.fuse_replicated_min or not fuses(r.size, rep)
    out._loc = (id(s), r if lane else None, rep, r)
    p = x._pend
    if p is None or p[3]:
        parent = x._map  # a base array, or a view whose map is made
    elif type(p[0]) is _ARRAY:
        parent = x._map  # (at most one unmade view between a view and a made map)
    else:
        parent = x  # ``np.flip(r[:k])``: its map is made when first read, with this view's
    out._pend = (parent, key, r.shape, False)
    return out


class _Perm(tuple):
    """The axis permutation of a transposed view :func:`transposed` made (its "key")."""

    __slots__ = ()


def transposed(x, perm: tuple):
    """The view ``x.transpose(perm)`` whose copy is NumPy's transpose of ``x``'s, its view map
    composed when first read (:func:`resolve`); None off the lane.  Not collective.

    ``nbody``'s ``x.T - x`` of a column ``x = pos[:, 0:1]`` then needs no view map at all.
    """
    c = x._loc
    s = x._s
    if c is None or c[0] != id(s) or c[3] is None:
        if whole_copy(x) is None:
            return None
        c = x._loc
    elif not config.whole_lane:
        return None
    r = c[3].transpose(perm)
    out = object.__new__(_ARRAY)
    out._s = s
    out._loc = (id(s), r if c[1] is not None else None, c[2], r)
    p = x._pend
    # (as ``lazy_view``: at most one unmade view between a view and a made map)
    out._pend = (x._map if p is None or p[3] or type(p[0]) is _ARRAY else x, _Perm(perm), r.shape, False)
    return out


def resolve(x, name: str):
    """Compose the view map and layout of a view :func:`lazy_view` made and return the
    attribute ``name`` ("_map" or "_lay").  Not collective.

    Raises ``AttributeError`` for an array that is not such a view (the
    attribute is missing: a defect, never a user's error).
    """
    pend = x._pend
    if pend is None or pend[3]:
        raise AttributeError(f"'spmdarray.ndarray' object has no attribute {name!r}")
    m, key, shape, _ = pend
    if type(m) is _ARRAY:
        m = m._map  # its parent's view map (made now if not yet)
    if type(key) is _Perm:
        vmap = m.transpose(key)
        lay = view_layout(x._s.layout, vmap)
    else:
        vmap, lay = _compose(x._s, m, key if type(key) is tuple else (key,), shape)
    x._map = vmap
    x._lay = lay
    x._pend = (m, key, shape, True)
    return vmap if name == "_map" else lay


def stores_back(x, key, value) -> bool:
    """Whether ``x[key] = value`` stores back the view ``value = x[key]`` made with the same
    key object: the last step of ``x[key] op= y``, whose update was in place.  Not collective.

    NumPy copies the view onto itself, which changes nothing.
    """
    if type(value) is not _ARRAY or value._s is not x._s:
        return False
    p = value._pend
    return p is not None and p[1] is key and (p[0] is x or p[0] is x._map)


#: Scalar types written into one element by NumPy's own assignment (strings are not:
#: their conversion error must leave the array unchanged, as the general path does).
NUMBERS = frozenset(
    (float, int, bool, complex, np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8)
    + (np.uint64, np.uint32, np.uint16, np.uint8, np.bool_, np.complex128, np.complex64)
)


def plain_key(key) -> bool:
    """Whether ``key`` is a Python integer, a slice, or a tuple of them (a basic key that
    loops use).  Not collective."""
    tk = type(key)
    if tk is tuple:
        for k in key:
            t = type(k)
            if t is not int and t is not slice:
                return False
        return True
    return tk is int or tk is slice


def setitem(x, key, value) -> bool:
    """``x[key] = value`` as NumPy's assignment into ``x``'s copy; False (nothing done)
    off the lane.  Not collective.

    The value is a scalar, a NumPy array or a spmdarray array on the lane.
    An overlapping value is copied first, and a string array converted whole
    first, so that the result is as if the value had been copied, and a value
    that fails to convert leaves ``x`` unchanged.
    """
    if type(value) is _ARRAY and value._s.deferred:
        # A deferred value (a fused chain over large arrays, ``center[:] = (center + north
        # + ...) * 0.2``): the engine's assignment computes it in one kernel.  Taken here, the
        # destination's pending readers (the chain's own nodes) would each be computed alone.
        return False
    c = x._loc
    s = x._s
    if c is not None and c[0] == id(s) and (v := c[3]) is not None and config.whole_lane:
        if READERS and id(s) in READERS or s.flights:
            s.stored(x)  # (``writable``, inline)
    else:
        v = writable(x, region=True)
        if v is None:
            return False
    if not plain_key(key) and hashable_key(key) is None:
        key = fancy_key(key, x._s.ctx)  # integer and boolean arrays: NumPy's advanced assignment
        if key is None or key is SLOW:
            return False
    if type(value) is _ARRAY:  # (any size: the assignment is eager)
        d = value._loc
        if d is not None and d[0] == id(value._s) and d[3] is not None:
            val = d[3]  # (``whole_copy``, inline; ``config.whole_lane`` was read above)
        else:
            val = whole_copy(value)
        if val is None or value._s.ctx is not s.ctx:
            return False
    else:
        val = operand(value, x._s.ctx)
    if val is SLOW:
        if type(value) is not np.ndarray:
            return False
        val = value
    if type(val) is np.ndarray:
        if val.dtype.kind in "USV" and val.dtype != v.dtype:
            val = val.astype(v.dtype)  # converted whole first: no partial write on a bad value
        elif np.may_share_memory(v, val):
            val = val.copy()  # NumPy's 1-d copy loop may read what it wrote
    v[key] = val
    written(x)
    return True


def index_by(x, v, key):
    """``x[key]`` for a spmdarray integer or boolean array ``key`` on the lane (every rank holds
    all of it): NumPy's advanced indexing of ``x``'s copy ``v``, a new array; :data:`SLOW`
    otherwise.  Not collective.  (``x[cols]`` in a CSR row loop: :func:`index`, shortened.)"""
    d = key._loc
    s = key._s
    if d is None or d[0] != id(s) or not d[2] or (k := d[1]) is None or k.dtype.kind not in "iub":
        return SLOW
    xs = x._s
    if s.ctx is not xs.ctx:
        return SLOW
    return wrap(xs.ctx, xs.be, v[k])


def index(x, v, key):
    """``x[key]`` for a key with integer or boolean arrays, NumPy's or spmdarray arrays
    every rank holds whole (:func:`fancy_key`), as NumPy's advanced indexing of ``x``'s
    copy ``v`` (a new array); :data:`SLOW` for any other key.  Not collective.

    (Basic keys never reach here: :func:`getitem` makes their views.)
    """
    k = fancy_key(key, x._s.ctx)
    if k is None or k is SLOW:
        return SLOW
    s = x._s
    return wrap(s.ctx, s.be, v[k])


def fancy_key(key, ctx):
    """``key`` with its integer and boolean arrays as NumPy arrays (the copies of spmdarray
    arrays every rank holds whole), for NumPy's advanced indexing of a copy; None for a key
    without arrays; :data:`SLOW` for one the lane does not take.  Not collective.

    The other parts may be integers, slices, None and ``...``.  A deferred
    key on one rank is computed first (indexing is eager).
    """
    keys = key if type(key) is tuple else (key,)
    out = []
    arrays = False
    for k in keys:
        t = type(k)
        if t is _ARRAY:
            c = whole_copy(k)
            if c is None and k._s.deferred and k._s.ctx.size == 1 and config.whole_lane:
                k._st  # noqa: B018 - computed now (local on one rank), then held whole
                c = whole_copy(k)
            if c is None and config.whole_lane and _small_split(k, ctx):
                # A small slice of a split index array (``x[A_col[a:b]]`` in a CSR row loop): its
                # region copy, gathered once (every rank alike) and reused along a read-only sweep.
                c = copy_of(k._st, k._map)
            if c is None or k._s.ctx is not ctx or c.dtype.kind not in "iub":
                return SLOW
            out.append(c)
            arrays = True
        elif t is np.ndarray:
            if k.dtype.kind not in "iub":
                return SLOW
            out.append(k)
            arrays = True
        elif t is int or t is slice or k is None or k is Ellipsis or isinstance(k, np.integer):
            out.append(k)
        else:
            return SLOW
    if not arrays:
        return None
    return tuple(out) if type(key) is tuple else out[0]


def _small_split(k, ctx) -> bool:
    """Whether ``k`` is a small (below ``config.replicate_below``) integer or boolean array,
    split over ``ctx`` in host memory and not deferred: its whole copy costs one collective
    at most (every rank decides alike, from the layout).  Not collective."""
    s = k._s
    return (
        type(s) is Storage
        and s.ctx is ctx
        and not s.be.is_device
        and s.dtype.kind in "iub"
        and is_small(k.shape)
        and not k._map.broadcast_axes
    )


def _compose(s, m, keys, shape):
    """The view map and layout of basic ``keys`` (integers, slices, None) into the view ``m``
    of storage ``s``, whose NumPy result has ``shape``.  Not collective."""
    start = list(m.start)
    axes = []
    i = 0  # view axis of ``x`` consumed
    for k in keys:
        if k is None:
            axes.append((-1, 0))
            continue
        b, step = m.axes[i]
        n = m.shape[i]
        i += 1
        if type(k) is slice:
            s0, stop, st = k.indices(n)
            if b < 0:
                axes.append((-1, 0))
                continue
            if len(range(s0, stop, st)):
                start[b] += s0 * step
            axes.append((b, step * st))
        elif b >= 0:
            k = int(k)
            start[b] += (k + n if k < 0 else k) * step
    axes.extend(m.axes[i:])
    vmap = ViewMap(m.base_shape, tuple(start), tuple(axes), shape)
    lay = s.layout
    if not is_whole(lay):  # (one rank): the view's layout depends on which axes it keeps
        return vmap, view_layout(lay, vmap)
    vkey = (shape, lay.dims, lay.gaxis, lay.gfixed)
    vlay = _VIEW_LAYOUTS.get(vkey)
    if vlay is None:
        # Replicated: the view's layout follows its shape (``view_layout``, written out).
        vlay = Layout(shape, lay.dims, lay.gaxis, lay.gfixed, (None,) * len(shape))
        if len(_VIEW_LAYOUTS) >= 4096:
            _VIEW_LAYOUTS.clear()
        _VIEW_LAYOUTS[vkey] = vlay
    return vmap, vlay


def _view(s, vmap, lay, r):
    """The array of view map ``vmap`` (layout ``lay``) of storage ``s``, whose copy is ``r``."""
    out = object.__new__(_ARRAY)
    out._s = s
    out._map = vmap
    out._lay = lay
    out._pend = None
    rep = is_whole(s.layout)
    out._loc = (id(s), r, rep, r) if _on_lane(r.size, rep) else None
    return out


#: (view shape, base grid) -> layout of a view of an array every rank holds whole
_VIEW_LAYOUTS: dict = {}


def wrap(ctx, be, res):
    """The spmdarray array of NumPy's result ``res``, computed alike on every rank.

    (:data:`LANE` ``.wrap`` replaces this function, its usual case compiled, where
    the extension is built and ``config.lane_extension`` is on at import; it calls
    this one for every other case.)

    ``ctx`` and ``be``: the communicator context and (host) backend of the
    operands.  A scalar (NumPy's result of a 0-d operation) comes back as it
    is.  An array takes the layout a new array of its shape gets: replicated
    below ``config.replicate_below`` elements, else split.  Its allocation is
    ``res`` itself (a copy where NumPy's result is not a C-contiguous array of
    its own) when every rank holds all of it, replicated or on one rank; a
    split array on several ranks copies its block.  Not collective.
    """
    if type(res) is not np.ndarray:
        if isinstance(res, tuple):
            return tuple(wrap(ctx, be, r) for r in res)
        return res
    shape = res.shape
    dtype = res.dtype
    kind = _KINDS.get(shape)
    if (
        kind is None
        or kind[0] is not ctx
        or kind[1] is not dtype
        and kind[1] != dtype  # (arrays unpickled, or received from another process, have dtypes of their own)
        or kind[9] != config.replicate_below
    ):
        if not shape or dtype.hasobject:
            return _split(ctx, res)
        small = res.size < config.replicate_below
        if not small and ctx.size > 1:
            return _split(ctx, res)
        # (A replicated layout, or any layout on one rank, partitions no axis over
        # several ranks: no ghost frame, whatever config.ghost_width says.)  Results of
        # one shape and two dtypes in turn (``r[r > 0] = ...``) find theirs by dtype.
        kind = _BY_DTYPE.get((shape, dtype))
        if kind is None or kind[0] is not ctx or kind[9] != config.replicate_below:
            kind = _kind(ctx, be, shape, dtype, small)
            if len(_BY_DTYPE) >= MAX_KINDS:
                _BY_DTYPE.clear()
            _BY_DTYPE[(shape, dtype)] = kind
        if len(_KINDS) >= MAX_KINDS:
            _KINDS.clear()
        _KINDS[shape] = kind
    f = res.flags
    if not (f.c_contiguous and f.owndata and f.writeable):
        res = res.copy()
    _, _, _, lay, vmap, vlay, geometry, direct, rep, _, size = kind
    st = adopt(ctx, be, lay, dtype, geometry, direct, res)
    out = object.__new__(_ARRAY)  # (``_view``, inline)
    out._s = st
    out._map = vmap
    out._lay = vlay
    out._pend = None
    m = config.fuse_replicated_min
    lane = rep and (not m or size < m) or not fuses(size, rep)
    out._loc = (id(st), res, rep, res) if lane else None  # (``_on_lane``: the usual case inline)
    return out


def _kind(ctx, be, shape, dtype, small: bool) -> tuple:
    """What :func:`wrap` needs for a result of ``shape``: (context, dtype, small, layout, view
    map, view layout, geometry, direct element access, replicated, ``replicate_below``, size)."""
    if small:
        # What ``ViewMap.identity``, ``_geometry``, ``view_layout``, ``direct_access`` and
        # ``is_whole`` give for a replicated layout, written out (a loop over ``x[:k]``
        # makes a new shape at every step).
        zeros = (0,) * len(shape)
        vmap = ViewMap(shape, zeros, tuple((b, 1) for b in range(len(shape))), shape)
        lay = Layout.replicated(shape, ctx.size)
        # (No cached view of the owned block: its key's hash is a Python call per result;
        # ``Storage.view_of`` makes and caches it when first asked for.)
        geometry = (zeros, shape, zeros, None)
        direct = dtype.kind != "V"
        return ctx, dtype, small, lay, vmap, lay, geometry, direct, True, config.replicate_below, math.prod(shape)
    vmap = ViewMap.identity(shape)
    lay = Layout.balanced(shape, ctx.size)
    geometry = _geometry(lay, ctx.rank, config.ghost_width)
    direct = direct_access(lay, be, dtype, geometry[2])
    vlay = view_layout(lay, vmap)
    return ctx, dtype, small, lay, vmap, vlay, geometry, direct, is_whole(lay), config.replicate_below, math.prod(shape)


def _split(ctx, res):
    """A 0-d array (as the general path makes it), or a large result: split in the balanced layout."""
    lay = Layout.balanced(res.shape, ctx.size)
    st = Storage(ctx, lay, res.dtype)
    if lay.owned_size(ctx.rank):
        out = _ARRAY._new(st, None)
        out._block[...] = res[tuple(slice(lo, hi) for lo, hi in lay.block(ctx.rank))]
        return out
    return _ARRAY._new(st, None)


#: The compiled lane (``spmdarray.core._lane``): the usual cases of this lane in C (:func:`wrap`,
#: the operators, indexing and assignment, ufunc calls, full reductions, the pure functions;
#: see docs/design.md), exactly as the Python code here, in :mod:`spmdarray.core.operators`
#: and :mod:`spmdarray.core.array` computes them, which stays the reference and takes every
#: other case.  None where the extension was not built (a source tree without a C
#: compiler) or ``config.lane_extension`` was off when this module was imported.
LANE = None
_py_wrap = wrap  # (the Python wrap, whichever :func:`wrap` is below)
if config.lane_extension:
    try:
        from spmdarray.core import _lane as LANE  # noqa: N812 - a module used as a constant
    except ImportError:
        LANE = None
#: The arguments of ``LANE.init``: the classes, tables and functions the compiled lane uses.
LANE_INIT = (
    Storage,
    np.ndarray,
    _KINDS,
    config,
    wrap,
    NUMPY_SCALARS,
    SLOW,
    READERS,
    NUMBERS,
    getattr(np.may_share_memory, "_implementation", np.may_share_memory),  # (NumPy's C function, undispatched)
    _Perm,
    np.square,
    np.reciprocal,
    np.sqrt,
    frozenset(t for t in NUMPY_SCALARS if issubclass(t, np.integer)),
)
if LANE is not None:
    LANE.init(*LANE_INIT)
    LANE.init_rows(ViewMap, Layout, SNAP, RUNS)  # (split arrays' elements and row parts served from their copies)
    for _cls in (ViewMap, Layout):  # their cached hashes read with no Python frame (the engine's keys)
        if type(vars(_cls)["__hash__"]).__name__ != "LaneMethod":
            _cls.__hash__ = LANE.method("__hash__", vars(_cls)["__hash__"])
    wrap = LANE.wrap  # noqa: F811 - the compiled wrap (it calls the Python one above for the rest)
