"""A replicated array overwritten whole by a split array takes the split array's layout.

``data_col[:] = dcol[:, :, k]`` in a loop over ``k`` (npbench's ``vadv``), on
a small ``data_col`` (replicated: below ``config.replicate_below``) and a
split slab of the same shape, gathered the slab onto every rank at every
step: one all-gather of the whole array per iteration, for a value the
next statements read only where the slab's own blocks are
(``dcol[:, :, k] - ccol[:, :, k] * data_col``).  Instead the replicated array
becomes a split copy of the value, in the value's layout: each rank copies
its own block, with no message, and the statements that follow read aligned
blocks.  The values are the same either way; a later read that needs all of
it (an element, a reduction) is a collective, as for any split array, and a
loop of such reads gathers it whole again after a few
(:mod:`spmdarray.core.rereads`).

Only an array that holds its storage alone changes layout (no other view
could see its storage change), and only when every rank agrees (one small
collective, the first time), so that no rank changes its layout alone.
"""

from __future__ import annotations

import sys

from spmdarray.comm import allreduce_max
from spmdarray.core.placement import is_whole
from spmdarray.core.refs import LOCAL
from spmdarray.core.storage import Storage
from spmdarray.core.thunk import READERS

__all__ = ["takes_layout"]


def _covers_all(key, ndim: int) -> bool:
    """Whether basic ``key`` selects every element of an ``ndim``-d array as it is (``[:]``, ``[...]``)."""
    keys = key if type(key) is tuple else (key,)
    if len(keys) > ndim + (Ellipsis in keys):
        return False
    for k in keys:
        if k is Ellipsis:
            continue
        if type(k) is not slice or k.start is not None or k.stop is not None or k.step is not None:
            return False
    return True


def _spread(lay) -> bool:
    """Whether layout ``lay`` gives every rank a part of the array's axes (a slab of an array split
    along its other axes, not a row that one rank owns, nor a slab that some ranks hold).  Not collective."""
    return any(n > 1 for n in lay.dims) and all(a is not None or n == 1 for n, a in zip(lay.dims, lay.gaxis))


def takes_layout(x, key, value) -> bool:
    """``x[key] = value`` by giving ``x`` a copy of ``value`` in ``value``'s layout, where ``key``
    covers all of ``x``, ``x`` is a replicated base array that holds its storage alone, and
    ``value`` a split array of ``x``'s shape and dtype on the same ranks, of which every rank
    holds a part; False (nothing done) otherwise.

    Collective: every rank decides alike from the layouts, then agrees (one
    ``allreduce`` of one integer) that no rank has another holder of ``x``'s
    storage or of its memory, or a message in flight into it.
    """
    s = x._s
    if (
        type(s) is not Storage
        or s.ctx.size == 1
        or s.be.is_device
        or x._pend is not None
        or not x._map.is_identity
        or not x._map.shape
        or not is_whole(s.layout)
        or not _covers_all(key, len(x._map.shape))
    ):
        return False
    if (
        value._s.ctx is not s.ctx
        or value.dtype != s.dtype
        or value.shape != x._map.shape
        or value._map.broadcast_axes
        or not _spread(value._layout)
        or value._st.be.is_device  # (``_st``: a deferred value is computed, on its own layout: no message)
    ):
        return False
    # Holders of the storage besides the local ``s``: ``x`` alone is one.  An exposed storage
    # shares its memory (``view(dtype)``, ``.real``, an in-place reshape, ``x.local`` held by the
    # program): a new allocation would leave the other holder of the memory behind.  (Agreed
    # below with the rest: a rank may have exposed it alone, ``x.local`` on one rank.)
    alone = sys.getrefcount(s) - LOCAL <= 1 and not s.flights and not (READERS and id(s) in READERS) and not s.exposed
    if allreduce_max(s.ctx, (0 if alone else 1,))[0]:
        return False  # another array holds the storage on some rank: assigned in place, as before
    y = value.copy()  # this rank's block of the value, in its layout (no message)
    x._st = y._s  # (resets the lane's cached copy)
    x._map = y._map
    x._lay = None
    return True
