"""``nonzero``, ``flatnonzero`` and ``argwhere``: indices of the non-zero elements, distributed."""

from __future__ import annotations

import numpy as np

from spmdarray.core.registry import implements
from spmdarray.routines.indexing.routing import _INTP, _flat_nonzero, _wrap

__all__ = ["nonzero", "flatnonzero", "argwhere"]


@implements(np.nonzero)
def nonzero(a):
    """Indices of the non-zero elements, one distributed 1-D array per axis.  Collective.

    A prefix sum of per-rank counts places each rank's indices (no gather);
    the results are split over the ranks in C order (unevenly).
    """
    if a.ndim == 0:
        raise ValueError(
            "Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() instead. "
            "If the context of this error is of the form `arr[nonzero(cond)]`, just use `arr[cond]`."
        )
    flat, counts = _flat_nonzero(a)
    ctx = a._st.ctx
    return tuple(_wrap(ctx, c.astype(_INTP), counts) for c in np.unravel_index(flat, a.shape))


@implements(np.flatnonzero)
def flatnonzero(a):
    """Indices of the non-zero elements of ``ravel(a)``, distributed.  Collective."""
    if a.ndim == 0:
        return nonzero(a.reshape(1))[0]
    flat, counts = _flat_nonzero(a)
    return _wrap(a._st.ctx, flat, counts)


@implements(np.argwhere)
def argwhere(a):
    """``(N, a.ndim)`` indices of the non-zero elements, rows distributed.  Collective."""
    ctx = a._st.ctx
    if a.ndim == 0:
        flat, counts = _flat_nonzero(a.reshape(1))
        return _wrap(ctx, np.zeros((flat.size, 0), _INTP), counts)
    flat, counts = _flat_nonzero(a)
    block = np.stack(np.unravel_index(flat, a.shape), axis=1).astype(_INTP).reshape(flat.size, a.ndim)
    return _wrap(ctx, block, counts)


# ------------------------------------------------------------ functions
