"""What every reduction path shares: axis normalisation, the grid axes a reduction
combines over and their ranks, NumPy's result dtype (probed on a tiny array), and the
layout of a reduction one holder computes alone.  Nothing here is collective.
"""

from __future__ import annotations

import itertools
import operator
import warnings
from functools import lru_cache

import numpy as np

from spmdarray.core.registry import provides
from spmdarray.decomposition import Layout, ravel, unravel

__all__ = ["normalize_axes"]

_COMBINE = {
    "sum": np.sum,
    "prod": np.prod,
    "min": np.min,
    "max": np.max,
    "any": np.any,
    "all": np.all,
}


@provides("normalize_axes")
def normalize_axes(axis, ndim: int) -> tuple[int, ...]:
    """NumPy's axis normalisation, with NumPy's ``AxisError``.  Not collective."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        a = operator.index(a)  # NumPy's TypeError for axis=0.5 or axis="1"
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(a, ndim)
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError("duplicate value in 'axis'")
    return tuple(out)


def _group(lay: Layout, gaxes: tuple[int, ...], rank: int) -> list[int]:
    """Global ranks of ``rank``'s sub-communicator over grid axes ``gaxes``, in its order."""
    me = unravel(rank, lay.dims)
    out = []
    for cs in itertools.product(*(range(lay.dims[k]) for k in gaxes)):
        c = list(me)
        for k, v in zip(gaxes, cs):
            c[k] = v
        out.append(ravel(tuple(c), lay.dims))
    return out


def _combine_axes(lay: Layout, axes) -> tuple[int, ...]:
    return tuple(
        k
        for k in range(len(lay.dims))
        if (lay.gaxis[k] is not None and lay.gaxis[k] in axes) or lay.gfixed[k] is not None
    )


#: (function, dtype, probe shape, axes, keywords) -> NumPy's result of the probe
_PROBES: dict = {}


def _probe(fn, x, axes, **kw):
    """NumPy's ``fn`` on a small array of ``x``'s dtype and dimensions: its result's dtype,
    or NumPy's error.  Not collective.  Results are cached (a loop reducing arrays of a new
    shape at each step probes once); errors are raised again each time."""
    shape = tuple(min(n, 1) for n in x.shape)
    try:
        key = (fn, x.dtype, shape, axes, tuple(sorted(kw.items())))
        hit = _PROBES.get(key)
    except TypeError:  # an unhashable keyword value (an array ``initial``)
        key = hit = None
    if hit is not None:
        return hit
    res = _run_probe(fn, x.dtype, shape, axes, kw)
    if key is not None:
        if len(_PROBES) >= 1024:
            _PROBES.clear()
        _PROBES[key] = res
    return res


def _run_probe(fn, dtype, shape, axes, kw: dict):
    dummy = np.ones(shape, dtype)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(fn(dummy, axis=axes, **kw))


@lru_cache(maxsize=4096)
def _lone_layout(lay: Layout, axes: tuple[int, ...]) -> Layout | None:
    """The layout of a reduction over ``axes`` that its one holder computes alone, or None.  Not collective.

    Where every grid axis the reduction would combine over holds data at one
    coordinate only (a fixed grid axis, or one splitting a reduced axis whose
    other intervals are empty: a window inside one rank's rows), that
    coordinate's ranks hold the whole of the data reduced and the result stays
    there, fixed at it: nothing is combined and nothing moves.  None when some
    combine axis has data at several coordinates, or there is none.
    """
    gaxes = _combine_axes(lay, axes)
    if not gaxes:
        return None
    fixed = {}
    for k in gaxes:
        if lay.gfixed[k] is not None:
            fixed[k] = lay.gfixed[k]
            continue
        full = [c for c, (lo, hi) in enumerate(lay.intervals[lay.gaxis[k]]) if hi > lo]
        if len(full) != 1:
            return None
        fixed[k] = full[0]
    rlay = lay.reduce(axes, keepdims=True)
    gfixed = tuple(fixed.get(k, f) for k, f in enumerate(rlay.gfixed))
    return Layout(rlay.shape, rlay.dims, rlay.gaxis, gfixed, rlay.intervals)


def _cast(local, dtype):
    """``local`` (a host or device array) as ``dtype``."""
    return local.astype(dtype, copy=False) if hasattr(local, "astype") else np.asarray(local, dtype)
