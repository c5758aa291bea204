"""``numpy.pad`` with every mode NumPy has, and ``along_axis`` (a helper that
makes one axis local to each rank and applies a NumPy function per block).

The padded result is a fresh balanced array; the input is assigned into its
centre, and the pad areas are filled axis by axis from slices of the result
itself, exactly as NumPy's algorithm does (NumPy's own slice helpers are used):
each fill is an assignment between views, which moves only the cells a rank
needs from its neighbours.  Statistics (``maximum``, ``mean`` ...) are
distributed reductions over the edge slabs; ``median`` makes the padded axis
local first (one redistribution of the edge slab).
"""

from __future__ import annotations

import typing

import numpy as np
from numpy.lib._arraypad_impl import (
    _as_pairs,
    _get_edges,
    _round_if_needed,
    _set_pad_area,
    _set_reflect_both,
    _set_wrap_both,
    _slice_at_axis,
    _view_roi,
)

from spmdarray.core.array import ndarray
from spmdarray.core.registry import implements
from spmdarray.core.storage import Storage
from spmdarray.decomposition import Layout, box_size
from spmdarray.routines.creation import empty, full
from spmdarray.routines.manipulation.shape import redistribute

__all__ = ["pad", "along_axis"]


def _axis_local_layout(shape: tuple[int, ...], axis: int, nprocs: int) -> Layout:
    """Balanced layout of ``shape`` whose ``axis`` no rank splits."""
    probe = Layout.balanced(tuple(1 if a == axis else n for a, n in enumerate(shape)), nprocs)
    k = probe.grid_axis_of(axis)
    gaxis, gfixed = list(probe.gaxis), list(probe.gfixed)
    if k is not None and probe.dims[k] > 1:
        # The grid axis would split ``axis``: its first row of ranks holds all of it.
        gaxis[k], gfixed[k] = None, 0
    intervals = tuple(
        (((0, shape[a]),) if gaxis.count(a) else None) if a == axis else iv for a, iv in enumerate(probe.intervals)
    )
    return Layout(tuple(shape), probe.dims, tuple(gaxis), tuple(gfixed), intervals)


def along_axis(x, axis: int, func, out_len: int, dtype):
    """``func(block, axis)`` on blocks that hold the whole of ``axis``.  Collective.

    ``x`` is redistributed so that no rank splits ``axis`` (the other axes
    stay split); ``func`` maps each block to one whose ``axis`` has length
    ``out_len``.  The result keeps that layout (no further communication).
    """

    ctx = x._st.ctx
    lay = _axis_local_layout(x.shape, axis, ctx.size)
    xr = redistribute(x, lay)
    shape = tuple(out_len if a == axis else n for a, n in enumerate(x.shape))
    new_lay = Layout(
        shape,
        lay.dims,
        lay.gaxis,
        lay.gfixed,
        tuple(((0, out_len),) if a == axis and iv is not None else iv for a, iv in enumerate(lay.intervals)),
    )
    be = x._st.be
    box = new_lay.block(ctx.rank)
    if box_size(box) and box_size(lay.block(ctx.rank)):
        loc = be.xp.ascontiguousarray(be.asarray(func(xr._block, axis)).astype(dtype, copy=False))
    else:
        loc = be.empty(tuple(hi - lo for lo, hi in box), dtype)
    return ndarray._new(Storage(ctx, new_lay, np.dtype(dtype), ghost=(0,) * x.ndim, alloc=loc), None)


def _median(chunk, axis, keepdims=True):
    dt = np.median(np.zeros(1, chunk.dtype)).dtype
    with np.errstate(invalid="ignore"):
        return along_axis(chunk, axis, lambda b, ax: np.median(b, axis=ax, keepdims=True), 1, dt)


def _amax(chunk, axis, keepdims=True):
    return np.amax(chunk, axis=axis, keepdims=keepdims)


def _amin(chunk, axis, keepdims=True):
    return np.amin(chunk, axis=axis, keepdims=keepdims)


def _mean(chunk, axis, keepdims=True):
    if chunk.shape[axis] == 0:
        import warnings

        warnings.warn("Mean of empty slice.", RuntimeWarning, stacklevel=3)
        dt = np.mean(np.zeros(1, chunk.dtype)).dtype
        return full(tuple(1 if a == axis else n for a, n in enumerate(chunk.shape)), np.nan, dt, comm=chunk._st.ctx)
    return np.mean(chunk, axis=axis, keepdims=keepdims)


def _get_stats(padded, axis, width_pair, length_pair, stat_func):
    # NumPy's _get_stats, with distributed statistics.
    left_index = width_pair[0]
    right_index = padded.shape[axis] - width_pair[1]
    max_length = right_index - left_index
    left_length, right_length = length_pair
    if left_length is None or max_length < left_length:
        left_length = max_length
    if right_length is None or max_length < right_length:
        right_length = max_length
    if (left_length == 0 or right_length == 0) and stat_func in {_amax, _amin}:
        raise ValueError("stat_length of 0 yields no value for padding")
    left_chunk = padded[_slice_at_axis(slice(left_index, left_index + left_length), axis)]
    left_stat = stat_func(left_chunk, axis=axis, keepdims=True)
    _round_if_needed(left_stat, padded.dtype)
    if left_length == right_length == max_length:
        return left_stat, left_stat
    right_chunk = padded[_slice_at_axis(slice(right_index - right_length, right_index), axis)]
    right_stat = stat_func(right_chunk, axis=axis, keepdims=True)
    _round_if_needed(right_stat, padded.dtype)
    return left_stat, right_stat


def _ramp(end_value, edge, width: int, axis: int, dtype, reverse: bool):
    """NumPy's ``linspace(end_value, edge, width, endpoint=False, axis=axis)`` in ``dtype``."""

    shape = tuple(width if a == axis else n for a, n in enumerate(edge.shape))
    if width == 0:
        return empty(shape, dtype, comm=edge._st.ctx)
    dt = np.result_type(np.asarray(end_value), edge.dtype, 1.0)
    start = np.asarray(end_value, dtype=dt)
    delta = np.subtract(edge, start, dtype=dt)
    step = delta / width
    t = np.arange(0, width, dtype=dt)
    if reverse:
        t = t[::-1]
    t = t.reshape(tuple(-1 if a == axis else 1 for a in range(edge.ndim)))
    if bool(np.any(step == 0)):
        y = (t / width) * delta
    else:
        y = t * step
    y = y + start
    if np.issubdtype(dtype, np.integer):
        y = np.floor(y)
    return y.astype(dtype, copy=False)


@implements(np.pad)
def pad(array, pad_width, mode="constant", **kwargs):
    """Pad an array (NumPy's ``pad``, every string mode).  Collective.

    The result is a fresh balanced array.  Each fill moves only the cells a
    rank's pad area needs (edge slabs, reflected or wrapped slabs).  A
    callable ``mode`` raises ``NotImplementedError``.
    """

    if isinstance(pad_width, dict):
        seq = [(0, 0)] * array.ndim
        for axis, width in pad_width.items():
            match width:
                case int(both):
                    seq[axis] = both, both
                case tuple((int(before), int(after))):
                    seq[axis] = before, after
                case _ as invalid:
                    typing.assert_never(invalid)
        pad_width = seq
    pad_width = np.asarray(pad_width)
    if not pad_width.dtype.kind == "i":
        raise TypeError("`pad_width` must be of integral type.")
    pad_width = _as_pairs(pad_width, array.ndim, as_index=True)
    if callable(mode):
        raise NotImplementedError(
            "numpy.pad with a callable mode on spmdarray arrays: the function is applied to 1-D slices of a "
            "NumPy array in place; use a string mode, or numpy.pad(numpy.asarray(x), ...) for small arrays"
        )
    allowed_kwargs = {
        "empty": [],
        "edge": [],
        "wrap": [],
        "constant": ["constant_values"],
        "linear_ramp": ["end_values"],
        "maximum": ["stat_length"],
        "mean": ["stat_length"],
        "median": ["stat_length"],
        "minimum": ["stat_length"],
        "reflect": ["reflect_type"],
        "symmetric": ["reflect_type"],
    }
    try:
        unsupported_kwargs = set(kwargs) - set(allowed_kwargs[mode])
    except (KeyError, TypeError):
        raise ValueError(f"mode '{mode}' is not supported") from None
    if unsupported_kwargs:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported_kwargs}")
    stat_functions = {"maximum": _amax, "minimum": _amin, "mean": _mean, "median": _median}
    if mode == "constant":
        values = _as_pairs(kwargs.get("constant_values", 0), array.ndim)
    elif mode == "linear_ramp":
        values = _as_pairs(kwargs.get("end_values", 0), array.ndim)
    elif mode in stat_functions:
        values = _as_pairs(kwargs.get("stat_length"), array.ndim, as_index=True)
    elif mode in ("reflect", "symmetric"):
        method = kwargs.get("reflect_type", "even")
        if method not in ("even", "odd"):
            raise ValueError(f"reflect_type must be 'even' or 'odd', got {method!r}")
    if array.size == 0 and mode not in ("constant", "empty"):
        for axis, width_pair in enumerate(pad_width):
            if array.shape[axis] == 0 and any(width_pair):
                raise ValueError(f"can't extend empty axis {axis} using modes other than 'constant' or 'empty'")

    new_shape = tuple(int(lo) + n + int(hi) for n, (lo, hi) in zip(array.shape, pad_width))
    padded = empty(new_shape, array.dtype, comm=array._st.ctx)
    original_area_slice = tuple(slice(int(lo), int(lo) + n) for n, (lo, _) in zip(array.shape, pad_width))
    padded[original_area_slice] = array
    axes = range(padded.ndim)
    if mode == "constant":
        for axis, width_pair, value_pair in zip(axes, pad_width, values):
            roi = _view_roi(padded, original_area_slice, axis)
            _set_pad_area(roi, axis, width_pair, value_pair)
    elif mode == "empty" or array.size == 0:
        pass
    elif mode == "edge":
        for axis, width_pair in zip(axes, pad_width):
            roi = _view_roi(padded, original_area_slice, axis)
            _set_pad_area(roi, axis, width_pair, _get_edges(roi, axis, width_pair))
    elif mode == "linear_ramp":
        for axis, width_pair, value_pair in zip(axes, pad_width, values):
            roi = _view_roi(padded, original_area_slice, axis)
            left_edge, right_edge = _get_edges(roi, axis, width_pair)
            ramps = (
                _ramp(value_pair[0], left_edge, int(width_pair[0]), axis, padded.dtype, False),
                _ramp(value_pair[1], right_edge, int(width_pair[1]), axis, padded.dtype, True),
            )
            _set_pad_area(roi, axis, width_pair, ramps)
    elif mode in stat_functions:
        func = stat_functions[mode]
        for axis, width_pair, length_pair in zip(axes, pad_width, values):
            roi = _view_roi(padded, original_area_slice, axis)
            stat_pair = _get_stats(roi, axis, width_pair, length_pair, func)
            _set_pad_area(roi, axis, width_pair, stat_pair)
    elif mode in ("reflect", "symmetric"):
        include_edge = mode == "symmetric"
        for axis, (left_index, right_index) in zip(axes, pad_width):
            if array.shape[axis] == 1 and (left_index > 0 or right_index > 0):
                edge_pair = _get_edges(padded, axis, (left_index, right_index))
                _set_pad_area(padded, axis, (left_index, right_index), edge_pair)
                continue
            roi = _view_roi(padded, original_area_slice, axis)
            while left_index > 0 or right_index > 0:
                left_index, right_index = _set_reflect_both(
                    roi, axis, (left_index, right_index), method, array.shape[axis], include_edge
                )
    elif mode == "wrap":
        for axis, (left_index, right_index) in zip(axes, pad_width):
            roi = _view_roi(padded, original_area_slice, axis)
            original_period = padded.shape[axis] - right_index - left_index
            while left_index > 0 or right_index > 0:
                left_index, right_index = _set_wrap_both(roi, axis, (left_index, right_index), original_period)
    return padded
