"""Batch-parallel execution of NumPy's stacked linear-algebra routines.

NumPy's ``linalg`` functions work on stacks of matrices ``(..., M, N)``.
:func:`gufunc` lays every operand out with only the *batch* axes partitioned
(each matrix whole on one rank), runs the NumPy routine on this rank's
matrices, and returns results laid out the same way: no rank ever holds
more than its own matrices.  A single matrix (no batch axes) is gathered onto
one rank, computed there and scattered back to a balanced layout: this is the
"replicated" path, limited to ``config.linalg_max_elements`` elements per
matrix.

Errors (``LinAlgError`` for a singular matrix, say) are agreed by every rank,
so all raise the same exception and none waits in a collective.
"""

from __future__ import annotations

import math

import numpy as np

from spmdarray.comm import agree_gathered
from spmdarray.core import fetch as _fetch
from spmdarray.core.array import ndarray
from spmdarray.core.storage import Storage
from spmdarray.core.whole import SLOW, whole_copy, wrap
from spmdarray.decomposition import Layout
from spmdarray.engine import elementwise as _engine
from spmdarray.routines.creation import array
from spmdarray.routines.manipulation.shape import redistribute
from spmdarray.settings import config

__all__ = ["gufunc", "on_lane", "on_root", "operand", "check_size", "batch_layout", "finish", "new_array"]


def operand(x, ctx):
    """``x`` as a distributed array of ``ctx`` (a global NumPy value is split, not sent)."""
    if _fetch.is_distributed(x):
        return x

    return array(np.asarray(x), comm=ctx)


def check_size(name: str, core: tuple[int, ...]) -> None:
    """NotImplementedError when one matrix exceeds ``config.linalg_max_elements``.  Not collective."""
    n = math.prod(core)
    if n > config.linalg_max_elements:
        raise NotImplementedError(
            f"numpy.linalg.{name}: a {'x'.join(map(str, core))} matrix ({n} elements) is above "
            f"spmdarray.config.linalg_max_elements={config.linalg_max_elements}; this routine holds each matrix "
            "whole on one rank (no distributed algorithm). Raise the limit on every rank if one rank's memory "
            "allows it"
        )


def batch_layout(batch: tuple[int, ...], core: tuple[int, ...], nprocs: int) -> Layout:
    """Layout of ``batch + core`` with only the batch axes partitioned.  Not collective."""
    b = Layout.balanced(batch, nprocs)
    return Layout(batch + core, b.dims, b.gaxis, b.gfixed, b.intervals + (None,) * len(core))


def new_array(ctx, layout: Layout, dtype):
    return ndarray._new(Storage(ctx, layout, np.dtype(dtype)), None)


def _laid_out(x, batch, ncore, ctx):
    core = x.shape[x.ndim - ncore :]
    lay = batch_layout(batch, core, ctx.size)
    if x._map.is_identity and x._layout == lay:
        return x
    dst = new_array(ctx, lay, x.dtype)
    _engine.assign(dst, x)
    return dst


def agree(ctx, err, payload=None):
    """Raise the first rank's error on every rank; else return every rank's payload.  Collective."""
    return agree_gathered(ctx, err, payload)


def on_root(ctx, func):
    """``func()`` computed on rank 0 only and shared: the same bits on every rank.  Collective.

    A tuple result (a namedtuple too) comes back as a plain tuple; an
    exception raised on rank 0 is raised on every rank.
    """
    err, pay = None, None
    if ctx.rank == 0:
        try:
            pay = func()
            pay = tuple(pay) if isinstance(pay, tuple) else pay
        except Exception as e:
            err = (type(e), str(e))
    return agree(ctx, err, pay)[0]


def on_lane(func, inputs):
    """NumPy's ``func`` on the copies of operands that every rank holds whole (replicated
    arrays, or any array on one rank), its results wrapped as the whole-array lane wraps
    them; :data:`~spmdarray.core.whole.SLOW` where an operand is off the lane.

    Not collective: every rank computes the same from the same bits, and raises
    NumPy's error (``LinAlgError``) alike, so nothing is gathered, scattered or
    agreed.  A 0-d result comes back as NumPy's scalar, as the general path
    gives it; a named tuple keeps its type.
    """
    copies = []
    ctx = None
    for x in inputs:
        c = whole_copy(x) if type(x) is ndarray else None
        if c is None or (ctx is not None and x._s.ctx is not ctx):
            return SLOW
        ctx, be = x._s.ctx, x._s.be
        copies.append(c)
    with np.errstate(all="ignore"):  # (as the general path computes)
        res = func(*copies)
    outs = list(res) if isinstance(res, tuple) else [res]
    outs = [o[()] if type(o) is np.ndarray and not o.ndim else wrap(ctx, be, o) for o in outs]
    if not isinstance(res, tuple):
        return outs[0]
    return tuple(outs) if type(res) is tuple else type(res)(*outs)


def gufunc(name: str, func, inputs, ncores, *, limit: bool = True):
    """Run ``func`` (NumPy's stacked routine) batch-parallel.  Collective.

    Parameters
    ----------
    name : str
        Name for messages.
    func : callable
        Called with this rank's host blocks ``(b..., core...)``; returns an
        array or a tuple (namedtuple) of arrays whose leading axes are the
        batch axes.
    inputs : sequence
        Operands (at least one distributed).
    ncores : sequence of int
        Core dimensions of each operand; the rest broadcast as batch axes.
    limit : bool
        Apply ``config.linalg_max_elements`` to each matrix.

    Returns
    -------
    The results, laid out with the batch axes partitioned; for unbatched
    inputs balanced arrays, and NumPy scalars for 0-d results.
    """
    ctx = _fetch.context_of(*inputs)
    xs = [operand(x, ctx) for x in inputs]
    for x, nc in zip(xs, ncores):
        if limit:
            check_size(name, x.shape[x.ndim - nc :])
    try:
        batch = np.broadcast_shapes(*(x.shape[: x.ndim - nc] for x, nc in zip(xs, ncores)))
    except ValueError:
        shapes = ", ".join(str(x.shape) for x in xs)
        raise ValueError(f"{name}: the stacked (batch) dimensions of the operands do not broadcast: {shapes}") from None
    single = batch == ()
    if (res := on_lane(func, xs)) is not SLOW:
        return res  # every rank holds every operand whole: NumPy's routine on the copies
    b = (1,) if single else batch
    if single or ctx.size > 1:
        laid = [_laid_out(x, b, nc, ctx) for x, nc in zip(xs, ncores)]
    else:  # one rank holds every block whole: NumPy broadcasts the batch axes itself
        laid = xs
    be = laid[0]._st.be
    err, res = None, None
    try:
        with np.errstate(all="ignore"):
            res = func(*(be.to_host(x._block) for x in laid))
    except Exception as e:  # agreed below, so that every rank raises it
        err = (type(e), str(e))
    kind = None
    if res is not None:
        multi = isinstance(res, tuple)
        outs = list(res) if multi else [res]
        kind = (type(res) if multi else None, [(np.asarray(o).dtype, np.shape(o)[len(b) :]) for o in outs])
    kinds = agree(ctx, err, kind)
    rtype, metas = kinds[0]
    dtypes = [np.result_type(*(k[1][i][0] for k in kinds)) for i in range(len(metas))]
    results = []
    for i, (_, core) in enumerate(metas):
        r = new_array(ctx, batch_layout(b, core, ctx.size), dtypes[i])
        if r._block.size:
            r._block[...] = be.asarray(np.asarray(outs[i]).astype(dtypes[i], copy=False))
        r._st.bump()
        results.append(finish(r, ctx) if single else r)
    if rtype is None:
        return results[0]
    return tuple(results) if rtype is tuple else rtype(*results)


def finish(r, ctx):
    """Drop the length-1 batch axis of an unbatched result and rebalance it.  Collective."""

    if r.ndim == 1:
        return _engine.to_scalar(r)
    v = r[0]
    return redistribute(v, Layout.balanced(v.shape, ctx.size))


def _abs2(v, out=None):
    r = (v.conj() * v).real if v.dtype.kind == "c" else v * v
    if out is None:
        return r
    out[...] = r
    return out
