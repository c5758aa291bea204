"""Scans and differences: prefix sums across ranks, and shifted-view arithmetic.

``cumsum``/``cumprod`` are the distributed ``ufunc.accumulate`` (each rank
scans its block; the ranks along the scanned axis exchange their last slices
and add the carry of the ranks before them), so no rank ever holds more than
its block.  ``diff`` and ``gradient`` are differences of shifted views of the
array, so they move only the edge cells, through the ordinary halo exchange.
"""

from __future__ import annotations

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from spmdarray.comm import agreement, allgather_blocks, errors_may_raise
from spmdarray.core import fetch as _fetch
from spmdarray.core.registry import implements, provides
from spmdarray.decomposition import box_size
from spmdarray.engine import elementwise as _engine
from spmdarray.engine.dispatch import REDUCE_NAMES
from spmdarray.engine.elementwise import assign
from spmdarray.routines.creation import empty_like, full
from spmdarray.routines.elementwise_functions import copyto
from spmdarray.routines.manipulation.joining import concatenate
from spmdarray.routines.reduction_axes import _group, normalize_axes

__all__ = [
    "cumsum",
    "cumprod",
    "cumulative_sum",
    "cumulative_prod",
    "nancumsum",
    "nancumprod",
    "diff",
    "ediff1d",
    "gradient",
    "trapezoid",
]


def _scan_dtype(a, dtype):
    """NumPy's rule: small integers and bools accumulate in the default integer."""
    if dtype is not None:
        return np.dtype(dtype)
    if a.dtype.kind in "bi" and a.dtype.itemsize < np.dtype(np.int_).itemsize:
        return np.dtype(np.int_)
    if a.dtype.kind == "u" and a.dtype.itemsize < np.dtype(np.uint).itemsize:
        return np.dtype(np.uint)
    return None


def _scan(ufunc, a, axis, dtype, out):
    if axis is None:
        a = a.ravel()
        axis = 0
    if a.ndim == 0:
        a = a.reshape(1)
    return accumulate(ufunc, a, axis=axis, dtype=_scan_dtype(a, dtype), out=out)


@implements(np.cumsum)
@provides("cumsum")
def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum, a prefix scan across ranks.  Collective."""
    return _scan(np.add, a, axis, dtype, out)


@implements(np.cumprod)
@provides("cumprod")
def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product, a prefix scan across ranks.  Collective."""
    return _scan(np.multiply, a, axis, dtype, out)


def _without_nan(a, fill):
    if a.dtype.kind not in "fc":
        return a
    b = _engine.elementwise(np.positive, [a])
    copyto(b, fill, where=_engine.elementwise(np.isnan, [a]))
    return b


@implements(np.nancumsum)
def nancumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum with NaN counted as zero.  Collective."""
    return _scan(np.add, _without_nan(a, 0), axis, dtype, out)


@implements(np.nancumprod)
def nancumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product with NaN counted as one.  Collective."""
    return _scan(np.multiply, _without_nan(a, 1), axis, dtype, out)


@implements(np.diff)
def diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    """``n``-th discrete difference along ``axis``.  Collective (edge cells only move)."""
    n = operator.index(n)
    if n == 0:
        return a
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = normalize_axis_index(axis, a.ndim)
    if prepend is not np._NoValue or append is not np._NoValue:
        parts = []
        for extra in (prepend, None, append):
            if extra is None:
                parts.append(a)
            elif extra is not np._NoValue:
                if np.ndim(extra) == 0:  # a scalar becomes one slice, as in NumPy
                    shape = tuple(1 if k == axis else m for k, m in enumerate(a.shape))
                    extra = np.broadcast_to(np.asarray(extra), shape)
                parts.append(extra)
        a = concatenate(parts, axis=axis)
    hi = tuple(slice(1, None) if k == axis else slice(None) for k in range(a.ndim))
    lo = tuple(slice(None, -1) if k == axis else slice(None) for k in range(a.ndim))
    op = np.not_equal if a.dtype == np.bool_ else np.subtract
    for _ in range(n):
        a = _engine.elementwise(op, [a[hi], a[lo]])
    return a


@implements(np.ediff1d)
def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of the flattened array.  Collective."""
    flat = ary.ravel()
    d = _engine.elementwise(np.subtract, [flat[1:], flat[:-1]])
    if to_end is None and to_begin is None:
        return d

    parts = []
    for extra, name in ((to_begin, "to_begin"), (d, None), (to_end, "to_end")):
        if name is None:
            parts.append(d)
        elif extra is not None:
            extra = extra if _fetch.is_distributed(extra) else np.asanyarray(extra)
            if not np.can_cast(extra.dtype, ary.dtype, casting="same_kind"):
                raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under the `same_kind` rule.")
            parts.append(extra.ravel())
    return concatenate(parts).astype(d.dtype, copy=False)


@implements(np.gradient)
def gradient(f, *varargs, axis=None, edge_order=1):
    """Central differences inside, one-sided at the edges, as NumPy computes them.

    Collective.  Scalar sample distances only; coordinate arrays raise
    ``NotImplementedError``.
    """

    axes = tuple(range(f.ndim)) if axis is None else normalize_axis_tuple(axis, f.ndim)
    n = len(axes)
    if not varargs:
        dx = [1.0] * n
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        dx = [varargs[0]] * n
    elif len(varargs) == n and all(np.ndim(v) == 0 for v in varargs):
        dx = list(varargs)
    elif len(varargs) == n:
        raise NotImplementedError("numpy.gradient with coordinate arrays: give scalar sample distances")
    else:
        raise TypeError("invalid number of arguments")
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    if f.dtype.kind in "iu":
        f = f.astype(np.float64)
    elif f.dtype.kind not in "fcb":  # bool: NumPy's subtraction error, below
        raise NotImplementedError(f"numpy.gradient of dtype {f.dtype}")
    outs = []
    for ax, h in zip(axes, dx):
        if f.shape[ax] < edge_order + 1:
            raise ValueError(
                "Shape of array too small to calculate a numerical gradient, "
                "at least (edge_order + 1) elements are required."
            )

        def at(s, ax=ax):
            return tuple(s if k == ax else slice(None) for k in range(f.ndim))

        out = empty_like(f)
        out[at(slice(1, -1))] = (f[at(slice(2, None))] - f[at(slice(None, -2))]) / (2.0 * h)
        if edge_order == 1:
            out[at(slice(0, 1))] = (f[at(slice(1, 2))] - f[at(slice(0, 1))]) / h
            out[at(slice(-1, None))] = (f[at(slice(-1, None))] - f[at(slice(-2, -1))]) / h
        else:
            a, b, c = -1.5 / h, 2.0 / h, -0.5 / h
            out[at(slice(0, 1))] = a * f[at(slice(0, 1))] + b * f[at(slice(1, 2))] + c * f[at(slice(2, 3))]
            a, b, c = 0.5 / h, -2.0 / h, 1.5 / h
            out[at(slice(-1, None))] = a * f[at(slice(-3, -2))] + b * f[at(slice(-2, -1))] + c * f[at(slice(-1, None))]
        outs.append(out)
    return outs[0] if n == 1 else tuple(outs)


def _cumulative(ufunc, name, x, axis, dtype, out, include_initial):
    if axis is None:
        if x.ndim > 1:
            raise ValueError("For arrays which have more than one dimension ``axis`` argument is required.")
        axis = 0
    if x.ndim == 0:
        x = x.reshape(1)  # as NumPy: a 0-d input scans as one element
    if not include_initial:
        return accumulate(ufunc, x, axis=axis, dtype=_scan_dtype(x, dtype), out=out)
    # The identity (0 or 1) first along ``axis``, then the scan: one distributed
    # concatenate, which moves each rank's block at most to its neighbour.

    ax = normalize_axis_index(axis, x.ndim)
    scan = accumulate(ufunc, x, axis=ax, dtype=_scan_dtype(x, dtype))
    first = full(tuple(1 if k == ax else n for k, n in enumerate(x.shape)), ufunc.identity, scan.dtype, comm=x._st.ctx)
    res = concatenate([first, scan], axis=ax)
    if out is not None:
        if out.shape != res.shape:
            raise ValueError(f"{name}: out has shape {out.shape}, the result has shape {res.shape}")
        out[...] = res
        return out
    return res


@implements(np.cumulative_sum)
def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """The array API's cumulative sum (``axis`` required above 1-D).  Collective."""
    return _cumulative(np.add, "cumulative_sum", x, axis, dtype, out, include_initial)


@implements(np.cumulative_prod)
def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """The array API's cumulative product (``axis`` required above 1-D).  Collective."""
    return _cumulative(np.multiply, "cumulative_prod", x, axis, dtype, out, include_initial)


@implements(np.trapezoid)
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral by the trapezoidal rule, with spacing ``dx`` or sample points ``x``.  Collective."""
    axis = normalize_axis_index(axis, y.ndim)
    hi = tuple(slice(1, None) if k == axis else slice(None) for k in range(y.ndim))
    lo = tuple(slice(None, -1) if k == axis else slice(None) for k in range(y.ndim))
    if x is None:
        return np.add.reduce(dx * (y[hi] + y[lo]) / 2.0, axis)
    # Sample points: NumPy's ``d = diff(x)`` (shaped to broadcast along ``axis``
    # when x is 1-D), then the same expression; shifted views move edge cells only.
    if np.ndim(x) == 1:
        d = np.diff(x)
        d = d.reshape(tuple(-1 if k == axis else 1 for k in range(y.ndim)))
    else:
        d = np.diff(x, axis=axis)
    return np.add.reduce(d * (y[hi] + y[lo]) / 2.0, axis)


@provides("accumulate")
def accumulate(ufunc, x, axis=0, dtype=None, out=None):
    """``ufunc.accumulate`` along one axis: a prefix scan across ranks.  Collective.

    Each rank scans its block, the ranks along the scanned grid axis
    all-gather their last slices, and each adds the carry of the ranks before
    it.  Only associative ufuncs are supported.
    """

    if ufunc not in REDUCE_NAMES:
        raise NotImplementedError(f"numpy.{ufunc.__name__}.accumulate (only associative ufuncs)")
    (ax,) = normalize_axes(axis, x.ndim)
    dt = ufunc.accumulate(np.ones((1,) * x.ndim, x.dtype), axis=ax, dtype=dtype).dtype

    res = empty_like(x, dtype=dt)
    ctx = x._st.ctx
    lay = x._layout
    b = lay.block(ctx.rank)
    be = x._st.be
    # An overflow under errstate(over="raise") strikes the ranks holding it only:
    # agreed before the tails travel and after the carries are added.
    agreeing = errors_may_raise()
    with agreement(ctx, agreeing):
        loc = _local_accumulate(be, ufunc, x._block, ax, dt) if box_size(b) else be.empty(res._block.shape, dt)
    k = lay.grid_axis_of(ax)
    if k is not None and lay.dims[k] > 1:
        members = _group(lay, (k,), ctx.rank)
        tail_shape = lambda r: tuple(1 if a == ax else hi - lo for a, (lo, hi) in enumerate(lay.block(r)))  # noqa: E731
        has = lambda r: lay.owned_size(r) > 0  # noqa: E731
        shapes = [tail_shape(m) if has(m) else (0,) * x.ndim for m in members]
        mine = be.to_host(np.take(loc, [-1], axis=ax)) if has(ctx.rank) else np.empty((0,) * x.ndim, dt)
        tails = [be.asarray(t) for t in allgather_blocks(ctx.sub(lay.dims, (k,)), np.ascontiguousarray(mine), shapes)]
        with agreement(ctx, agreeing):
            if has(ctx.rank):
                loc = _add_carry(ufunc, lay, members, tails, ax, b, loc, dt)
    if box_size(b):
        res._block[...] = loc
    if out is not None:
        assign(out, res)
        return out
    return res


def _add_carry(ufunc, lay, members, tails, ax: int, b, loc, dt):
    """``loc`` combined with the tails of the ranks before this one along ``ax``.  Not collective."""
    has = lambda r: lay.owned_size(r) > 0  # noqa: E731
    before = sorted(
        (lay.block(m)[ax][0], i) for i, m in enumerate(members) if has(m) and lay.block(m)[ax][0] < b[ax][0]
    )
    carry = None
    for _, i in before:
        carry = tails[i] if carry is None else ufunc(carry, tails[i])
    if carry is not None:
        loc = ufunc(carry, loc).astype(dt, copy=False)
    return loc


def _local_accumulate(be, ufunc, block, axis: int, dtype):
    """``ufunc.accumulate`` of this rank's block, on its device.

    CuPy accumulates only ``add`` and ``multiply`` (``cumsum``/``cumprod``);
    other ufuncs scan a host copy of the block (this rank's block only, never
    a gather) and copy the result back.
    """
    if be.is_device and ufunc not in (np.add, np.multiply):
        return be.asarray(ufunc.accumulate(be.to_host(block), axis=axis, dtype=dtype))
    return ufunc.accumulate(block, axis=axis, dtype=dtype)
