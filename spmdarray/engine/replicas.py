"""NumPy functions on replicated arrays: NumPy's own call on each rank's copy.

When every spmdarray argument of a registered NumPy function is replicated
(every rank holds all of it, see :mod:`spmdarray.core.placement`), each rank
calls the NumPy function on its copies, with no message, as cuPyNumeric runs
small arrays eagerly on one processor.  The results are NumPy's, bit for bit,
identical on every rank; array results come back replicated, or split when
they grew past ``config.replicate_below``.
"""

from __future__ import annotations

import numpy as np

from spmdarray.backend.backends import backend_of
from spmdarray.core.array import ndarray
from spmdarray.core.placement import default_layout, is_whole
from spmdarray.core.storage import Storage
from spmdarray.core.thunk import READERS
from spmdarray.core.whole import SLOW, local, wrap

__all__ = ["GIVE_VIEWS", "PURE", "adopt", "call_on_replicas", "direct", "plain_arguments"]

#: Functions left to their distributed implementation even on replicas: where
#: NumPy's default algorithm is not stable, spmdarray's always is (ties keep their order).
KEEP_DISTRIBUTED = {np.sort, np.argsort, np.partition, np.argpartition}

#: Functions whose NumPy result is always a view of an argument, which the
#: distributed implementation gives as a spmdarray view, and ``reshape`` and ``ravel``,
#: whose NumPy result may be one (the implementation copies, as on split arrays): NumPy's
#: call is skipped.
GIVE_VIEWS = {
    np.flip, np.fliplr, np.flipud, np.transpose, np.swapaxes, np.moveaxis, np.diagonal, np.expand_dims,
    np.reshape, np.ravel,
}  # fmt: skip


#: Functions that never write an argument nor return a view of one: on replicas,
#: :func:`direct` calls them with no aliasing check and no write recorded.
PURE = {
    np.dot, np.vdot, np.inner, np.outer, np.tensordot, np.kron, np.cross, np.trace,
    np.sum, np.prod, np.mean, np.std, np.var, np.min, np.max, np.amin, np.amax, np.any, np.all,
    np.argmin, np.argmax, np.cumsum, np.cumprod, np.where, np.clip, np.copy,
    np.zeros_like, np.ones_like, np.empty_like, np.full_like,
    np.triu, np.tril, np.concatenate, np.stack, np.hstack, np.vstack, np.column_stack,
}  # fmt: skip
_PLAIN = (int, float, complex, bool, str, type(None))


def plain_arguments(args, kwargs) -> bool:
    """Whether ``args[0]`` is a spmdarray array and every other argument a Python scalar,
    string, None or tuple of ints: no other array type could take NumPy's dispatch.  Not collective."""
    if not args or type(args[0]) is not ndarray:
        return False
    if len(args) == 1 and not kwargs:
        return True  # (``np.flip(r[:k])`` in a loop: nothing more to scan)
    return all(_plain(a) for a in (*args[1:], *kwargs.values()))


def _plain(a) -> bool:
    """Whether ``a`` is a Python scalar, a string, None or a tuple of ints.  Not collective."""
    t = type(a)
    return t in _PLAIN or (t is tuple and all(type(e) is int for e in a))


def direct(func, args, kwargs=None):
    """``func(*args, **kwargs)`` by NumPy on the copies, for a :data:`PURE` function whose
    positional arguments are each a spmdarray array on the whole-array lane, a tuple or
    list of such arrays, a Python scalar, a string or None, and whose keywords (not
    ``out``) are each a Python scalar, a string, None or a tuple of ints (``axis=(1,
    2)``); else
    :data:`~spmdarray.core.whole.SLOW` (nothing done).

    Not collective: every rank holds the same copies (it sends nothing).
    """
    ctx = None
    locs = []
    for a in args:
        t = type(a)
        if t is ndarray:
            v = local(a)
            if v is None or (ctx is not None and a._s.ctx is not ctx):
                return SLOW
            ctx = a._s.ctx
            locs.append(v)
        elif t in _PLAIN:
            locs.append(a)
        elif (t is tuple or t is list) and a and type(a[0]) is ndarray:
            # A sequence of arrays on the lane (``np.hstack((a, b))``): a sequence of their copies.
            seq = []
            for e in a:
                v = local(e) if type(e) is ndarray else None
                if v is None or (ctx is not None and e._s.ctx is not ctx):
                    return SLOW
                ctx = e._s.ctx
                seq.append(v)
            locs.append(t(seq))
        else:
            return SLOW
    if ctx is None:
        return SLOW
    if kwargs:
        if "out" in kwargs or not all(_plain(v) for v in kwargs.values()):
            return SLOW
        return wrap(ctx, backend_of(ctx), func(*locs, **kwargs))
    return wrap(ctx, backend_of(ctx), func(*locs))


class _Split(Exception):
    """An argument is a split (not replicated) spmdarray array."""


def _copies(obj, found: list):
    """``obj`` with each replicated spmdarray array replaced by its local copy
    (appended to ``found`` with the array, as ``(array, copy)``)."""
    if isinstance(obj, ndarray):
        c = obj._loc
        s = obj._s
        if (
            c is not None
            and c[0] == id(s)
            and c[2]
            and c[1] is not None
            and not (READERS and id(s) in READERS or s.flights)
        ):
            block = c[1]  # (the lane's cached copy of a replicated array: nothing deferred reads it)
        else:
            if not is_whole(obj._layout):
                raise _Split
            block = obj._block
        found.append((obj, block))
        return block
    if type(obj) is list or type(obj) is tuple:
        return type(obj)(_copies(o, found) for o in obj)
    return obj


def _aliases(be, res, inputs: list) -> bool:
    """Whether an array in ``res`` is a view of an input's copy (NumPy returned a view)."""
    if isinstance(res, (tuple, list)):
        return any(_aliases(be, r, inputs) for r in res)
    if isinstance(res, np.ndarray) or be.is_block(res):
        return any(be.xp.may_share_memory(res, i) for i in inputs)
    return False


def adopt(ctx, be, res) -> ndarray:
    """A new array of NumPy's (or the device's) array ``res``, which every rank computed alike.

    Not collective (nothing is sent); every rank must call it with the same
    ``res``.  The array takes the default layout of its shape: replicated when
    small, else split, this rank keeping its block.
    """
    lay = default_layout(res.shape, ctx.size)
    out = ndarray._new(Storage(ctx, lay, res.dtype), None)
    if lay.owned_size(ctx.rank):
        out._block[...] = be.asarray(res[tuple(slice(lo, hi) for lo, hi in lay.block(ctx.rank))])
    return out


def _passed(res, args, kwargs) -> bool:
    """Whether ``res`` is one of the NumPy arrays the caller passed (to lists and tuples one deep)."""
    for a in (*args, *kwargs.values()):
        if a is res or ((type(a) is list or type(a) is tuple) and any(e is res for e in a)):
            return True
    return False


def _wrap(ctx, be, res, args, kwargs):
    if be.is_device and be.is_block(res) and not res.ndim:
        return np.asarray(be.to_host(res))[()]  # CuPy's 0-d result: NumPy's scalar
    if type(res) is np.ndarray and not be.is_device and not _passed(res, args, kwargs):
        return wrap(ctx, be, res)  # replicated (its allocation when NumPy's result is fresh), or split
    if isinstance(res, np.ndarray) or be.is_block(res):
        # A device block, or a NumPy array the caller passed in: copied into a new array.
        lay = default_layout(res.shape, ctx.size)
        out = ndarray._new(Storage(ctx, lay, res.dtype), None)
        if lay.owned_size(ctx.rank):
            out._block[...] = be.asarray(res[tuple(slice(lo, hi) for lo, hi in lay.block(ctx.rank))])
        return out
    if isinstance(res, tuple):
        items = [_wrap(ctx, be, r, args, kwargs) for r in res]
        return type(res)._make(items) if hasattr(res, "_fields") else tuple(items)
    if isinstance(res, list):
        return [_wrap(ctx, be, r, args, kwargs) for r in res]
    return res


def _host_arrays(largs, lkw) -> bool:
    """Whether a NumPy array or NumPy scalar sits among the call's arguments (lists and tuples one deep)."""
    for a in (*largs, *lkw.values()):
        if isinstance(a, (np.ndarray, np.generic)):
            return True
        if type(a) is list or type(a) is tuple:
            if any(isinstance(e, (np.ndarray, np.generic)) for e in a):
                return True
    return False


def call_on_replicas(func, args, kwargs):
    """``func(*args, **kwargs)`` computed by NumPy on each rank's copies, or NotImplemented.

    Collective in the sense that every rank must call it alike; it sends
    nothing.  NotImplemented (having changed nothing) when an argument is a
    split spmdarray array, when ``out=`` is given, for the functions in
    :data:`KEEP_DISTRIBUTED` and :data:`GIVE_VIEWS`, or when NumPy returns a view of an argument
    (the distributed implementation then returns a spmdarray view).
    In-place functions (``put``, ``fill_diagonal`` ...) write the copies.
    """
    if func in KEEP_DISTRIBUTED or func in GIVE_VIEWS or "out" in kwargs:
        return NotImplemented
    found: list = []
    try:
        # Top-level arguments in a plain loop: the common call, f(x, y), recurses no further.
        largs = []
        for a in args:
            if type(a) is ndarray:
                if not is_whole(a._layout):
                    return NotImplemented
                s = a._s
                # The cached copy (None for 0-d or deferred arrays), unless a deferred value
                # reads it or a message is in flight (``_block`` completes them first).
                block = None if s.deferred or READERS and id(s) in READERS or s.flights else local(a)
                if block is None:
                    block = a._block
                found.append((a, block))
                largs.append(block)
            else:
                largs.append(_copies(a, found))
        lkw = {k: _copies(v, found) for k, v in kwargs.items()} if kwargs else kwargs
    except _Split:
        return NotImplemented
    if not found:
        return NotImplemented
    st = found[0][0]._st
    ctx, be = st.ctx, st.be
    if any(x._st.ctx is not ctx for x, _ in found):
        return NotImplemented
    if be.is_device and _host_arrays(largs, lkw):
        # NumPy arrays beside device blocks in one call: the distributed implementation
        # converts them (CuPy refuses implicit host arrays).
        return NotImplemented
    res = func(*largs, **lkw)
    if _aliases(be, res, [block for _, block in found]):
        return NotImplemented
    for x, _ in found:  # an in-place function may have written a copy
        x._st.bump()
    return _wrap(ctx, be, res, args, kwargs)
