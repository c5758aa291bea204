"""The elementwise engine: every ufunc, operator and assignment runs here.

:func:`elementwise` checks shapes and dtypes with NumPy's own errors
(:mod:`spmdarray.core.dtypes`), records the operation for fusion when the
fuser takes it (:mod:`spmdarray.fusion.record`), and otherwise fetches the
operands onto the layout the result is computed on
(:mod:`spmdarray.core.fetch`) and calls the NumPy (or CuPy) function once on
this rank's blocks.  :mod:`spmdarray.engine.fastpath` serves the common case
(operands on one layout, dtypes already checked) through a cached plan.
:func:`assign` is ``dst[...] = value``.
"""

from __future__ import annotations

import numpy as np

from spmdarray.comm import agree, agreement, bcast_array, errors_may_raise, label_frames
from spmdarray.core.array import ndarray
from spmdarray.core.dtypes import _checked_dtypes, _dummy, _shape_of
from spmdarray.core.fetch import _as_operand, choose_layout, context_of, fetch, is_distributed
from spmdarray.core.placement import is_whole
from spmdarray.core.registry import provides
from spmdarray.core.storage import Storage
from spmdarray.decomposition import Layout
from spmdarray.engine.device_ufuncs import _on_device
from spmdarray.engine.fastpath import _DATA_ERRORS, SLOW, fast, fast_assign
from spmdarray.fusion.record import FUSABLE, record
from spmdarray.fusion.record import assign as fused_assign
from spmdarray.settings import config

__all__ = ["elementwise", "assign", "to_scalar", "check_writeable", "broadcast_error"]


def _shape_txt(s) -> str:
    """A shape as NumPy's error messages write it: ``(7,5)``, ``(3,)``, ``()``."""
    s = tuple(s)
    return "(" + ",".join(str(n) for n in s) + ("," if len(s) == 1 else "") + ")"


def broadcast_error(shapes) -> ValueError:
    txt = " ".join(_shape_txt(s) for s in shapes)
    return ValueError(f"operands could not be broadcast together with shapes {txt} ")


# Ufuncs whose integer loops raise on some *values* (``2 ** -1``): only the
# rank holding such a value would raise, so every rank agrees on the outcome
# (``_DATA_ERRORS``, from the fast path, which leaves them to this engine).


def _attempt(func, locs, lout, kw, power: bool = False, tuple_out: bool = True):
    """``func(*locs, out=lout)``; the exception it raised, or None.

    Ufuncs take the tuple of outputs; other kernels (``numpy.round``,
    ``tuple_out=False``) the one output array.
    """
    try:
        if power and len(locs) == 2:
            # Device kernels do not check: NumPy's error for negative integer exponents.
            e = locs[1]
            if (bool((e < 0).any()) if hasattr(e, "shape") else e < 0) and lout[0].dtype.kind in "iu":
                raise ValueError("Integers to negative integer powers are not allowed.")
        func(*locs, out=lout if tuple_out else lout[0], **kw)
    except Exception as e:  # noqa: BLE001 - re-raised on every rank by agree
        return e
    return None


@provides("elementwise")
def elementwise(func, args, out=None, where=True, nout: int = 1, **kwargs):
    """Apply an elementwise NumPy callable over distributed operands.

    Collective over the operands' communicator.

    Parameters
    ----------
    func : callable
        A ufunc or any NumPy function that works block by block and takes
        ``out=`` (``numpy.round`` for instance).
    args : sequence
        Operands: spmdarray arrays, NumPy arrays (the same on every rank),
        Python or NumPy scalars.
    out : tuple of (ndarray or None), optional
        Output arrays; NumPy's broadcasting and casting rules apply.
    where : array_like of bool, optional
        NumPy's ``where=``.
    nout : int
        Number of outputs of ``func``.
    **kwargs
        Passed to ``func`` (``dtype``, ``casting``, ...).

    Returns
    -------
    ndarray or tuple of ndarray
        NumPy scalars when the result is 0-d and no ``out`` was given.
    """
    if where is True and nout == 1 and not kwargs:
        res = fast(func, args, out)
        if res is not SLOW:
            return res
    for o in out or ():
        check_writeable(o)
    if config.fuse and func in FUSABLE:
        res = _deferred(func, args, out, where, nout, kwargs)
        if res is not NotImplemented:
            return res
    args = [_as_operand(a) for a in args]
    outs = _outputs(out, nout)
    where_op = None if where is True else _as_operand(where)
    ctx = context_of(*args, *outs, where_op)
    # 1. the shape, with NumPy's error messages
    given = [o for o in outs if o is not None]
    shape = _result_shape(args, given, where_op)
    # 2. dtypes and casting errors, by running NumPy on one-element dummies
    if where_op is not None and is_distributed(where_op) and where_op.dtype != bool:
        raise TypeError(f"where= must be a boolean array, got dtype {where_op.dtype}")
    dtypes = _checked_dtypes(func, args, outs, where_op, kwargs, nout)
    # 3. where to compute, and the local operands
    layout = outs[0]._layout if outs[0] is not None else choose_layout(ctx, args, shape)
    *locs, wloc = fetch(ctx, [*args, where_op], layout)
    results = _results(ctx, layout, outs, dtypes)
    # 4. the computation on this rank's block
    _compute(func, ctx, layout, locs, wloc, results, kwargs, nout, dtypes[0])
    for o in given:
        o._st.bump()
    if out is None and not shape:
        vals = tuple(r._scalar() for r in results)
        return vals if nout > 1 else vals[0]
    return tuple(results) if nout > 1 else results[0]


def _deferred(func, args, out, where, nout, kwargs):
    """``func(*args)`` recorded for fusion (NotImplemented: run it eagerly).  Collective."""
    res = record(func, args, out, where, nout, kwargs)
    if res is NotImplemented or out is None:
        return res
    # Recorded on ``out``'s layout: computed straight into it, or, where the
    # fused assignment does not apply, evaluated and then assigned.
    o = out[0]
    if not fused_assign(o, res):
        assign(o, ndarray._new(res._st, None))
    return o


def _outputs(out, nout: int) -> tuple:
    """The ``out=`` tuple checked: one entry per output, each a spmdarray array or None."""
    outs = tuple(out) if out is not None else (None,) * nout
    if len(outs) != nout:
        raise ValueError(f"The 'out' tuple must have exactly {nout} entries: one per ufunc output")
    for o in outs:
        if o is not None and not is_distributed(o):
            raise TypeError(
                "out= must be a spmdarray array when the inputs are distributed; "
                f"got {type(o).__name__}. Convert inputs with numpy.asarray(x) to work on NumPy arrays"
            )
    return outs


def _result_shape(args, given, where_op) -> tuple:
    """The broadcast shape of the operands, ``out=`` and ``where=``, with NumPy's errors."""
    shapes = [_shape_of(a) for a in args]
    full = [sh for sh in shapes if sh]
    if not full:
        shape = ()
    elif all(sh == full[0] for sh in full):
        shape = full[0]
    else:
        try:
            shape = np.broadcast_shapes(*shapes)
        except ValueError:
            raise broadcast_error(shapes) from None
    if given:
        for o in given:
            if o.shape == shape:
                continue
            try:
                ok = np.broadcast_shapes(o.shape, shape) == o.shape
            except ValueError:
                ok = False
            if not ok:
                raise ValueError(
                    f"non-broadcastable output operand with shape {_shape_txt(o.shape)} doesn't match the broadcast "
                    f"shape {_shape_txt(shape)}"
                )
        shape = given[0].shape
    if where_op is not None:
        try:
            if np.broadcast_shapes(_shape_of(where_op), shape) != shape:
                raise ValueError
        except ValueError:
            raise broadcast_error([*shapes, *(o.shape for o in given), _shape_of(where_op)]) from None
    return shape


def _results(ctx, layout: Layout, outs, dtypes) -> list:
    """The output arrays: those given in ``out=``, new ones on ``layout`` for the rest."""
    results = []
    for o, dt in zip(outs, dtypes):
        if o is not None:
            if o._layout is not layout and o._layout != layout:
                raise NotImplementedError(
                    "elementwise with several out= arrays of different layouts; use separate assignments"
                )
            results.append(o)
        else:
            results.append(ndarray._new(Storage(ctx, layout, dt), None))
    return results


def _compute(func, ctx, layout: Layout, locs, wloc, results, kwargs, nout: int, dtype) -> None:
    """Run ``func`` on this rank's blocks into the results' blocks.

    Errors that depend on values (integer powers, floating-point errors under
    ``errstate(...='raise')``, warnings turned into errors) would strike only
    some ranks: then every rank agrees on the first one (collective, one
    4-byte all-reduce); otherwise nothing is sent.
    """
    agreeing = (func in _DATA_ERRORS and dtype.kind in "iu") or errors_may_raise()
    if not layout.owned_size(ctx.rank):
        if agreeing:
            agree(ctx, None)
        return
    block = layout.block(ctx.rank)
    lout = tuple(r._st.view_of(r._map, block) for r in results)
    kw = dict(kwargs)
    is_ufunc = isinstance(func, np.ufunc)
    if wloc is not None:
        kw["where"] = wloc
    be = results[0]._st.be
    power = be.is_device and func is np.power
    if be.is_device and is_ufunc:
        func, kw = _on_device(func, be, nout, kw), {}
    if agreeing:
        agree(ctx, _attempt(func, locs, lout, kw, power, is_ufunc))
    elif is_ufunc:
        func(*locs, out=lout, **kw)
    else:
        func(*locs, out=lout[0], **kw)


def check_writeable(dst) -> None:
    """ValueError on every rank when ``dst`` is a read-only broadcast view.  Not collective."""
    if is_distributed(dst) and dst._map.broadcast_axes:
        raise ValueError("assignment destination is read-only")


@provides("assign")
def assign(dst, value) -> None:
    """``dst[...] = value`` with NumPy's broadcasting and casting.  Collective."""
    check_writeable(dst)
    if type(value) is ndarray and value._s.deferred and fused_assign(dst, value):
        return
    if _assign_replicated(dst, value) or fast_assign(dst, value):
        return
    value = _as_operand(value)
    vshape = _shape_of(value)
    # NumPy drops leading length-1 axes of the value before broadcasting.
    while len(vshape) > dst.ndim and vshape[0] == 1:
        vshape = vshape[1:]
        value = value[0]
    try:
        ok = len(vshape) <= dst.ndim and np.broadcast_shapes(vshape, dst.shape) == dst.shape
    except ValueError:
        ok = False
    if not ok:
        vs, ds = _shape_txt(_shape_of(value)), _shape_txt(dst.shape)
        raise ValueError(f"could not broadcast input array from shape {vs} into shape {ds}")
    probe = np.empty((1,) * dst.ndim, dst.dtype)
    probe[...] = _dummy(value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "OSU" and value.dtype != dst.dtype:
        # Converting strings or objects can fail on some values only; the value
        # is global (every rank passes it), so convert it all here, identically.
        value = value.astype(dst.dtype)
    ctx = dst._st.ctx
    context_of(dst, value)
    layout = dst._layout
    (loc,) = fetch(ctx, [value], layout)
    block = layout.block(ctx.rank)
    # A conversion that can fail on some values only (strings to numbers or dates,
    # a NaN cast to int under errstate, a float16 overflow with warnings as errors)
    # is agreed by every rank, also by those with nothing to convert.
    vdt = getattr(value, "dtype", None)
    agreeing = ctx.size > 1 and (
        (vdt is not None and vdt != dst.dtype and vdt.kind in "OSUMm" and is_distributed(value))
        or (vdt is not None and vdt != dst.dtype and errors_may_raise())
    )
    with agreement(ctx, agreeing):
        if layout.owned_size(ctx.rank):
            d = dst._st.view_of(dst._map, block)
            be = dst._st.be
            if (isinstance(loc, np.ndarray) or be.is_block(loc)) and be.xp.may_share_memory(loc, d):
                # As if the value were copied first, on any rank count: NumPy skips this
                # copy for 1-D destinations, where crossing strides then give order-dependent values.
                loc = loc.copy()
            d[...] = loc
    dst._st.bump()


_SCALARS = (float, int, complex, bool)


def _assign_replicated(dst, value) -> bool:
    """``dst[...] = value`` with no message when every rank holds all of ``value`` in host
    memory; False (nothing done) otherwise.  Collective in the sense of :func:`assign`.

    When every rank holds all of ``dst`` too, ``value`` may be a replicated array or a
    number: every rank does the same NumPy assignment on the same data, so NumPy's
    broadcasting, casting and errors (raised alike on every rank) need no check here.
    Into a split ``dst`` (``cov[i:, i] = row`` in a loop), a replicated array or a NumPy
    array of ``dst``'s exact shape and dtype is copied block by block, with no cast.
    """
    st = dst._s
    if st.deferred or st.be.is_device:
        return False
    whole = is_whole(dst._layout)
    t = type(value)
    if t is ndarray:
        vs = value._s
        if vs.deferred or vs.ctx is not st.ctx or vs.be.is_device or not is_whole(value._layout):
            return False
        loc = value._block
    elif t is np.ndarray and not whole:
        loc = value
    elif whole and (t in _SCALARS or (isinstance(value, np.generic) and value.dtype.kind in "biufc")):
        loc = value
    else:
        return False
    if not whole and (loc.dtype != st.dtype or loc.shape != dst.shape):
        return False
    st = dst._st  # deferred readers of it computed, messages into it completed
    lay = dst._layout
    box = lay.block(st.ctx.rank)
    if whole or lay.owned_size(st.ctx.rank):
        if not whole:
            loc = loc[tuple([slice(lo, hi) for lo, hi in box])]
        d = st.view_of(dst._map, box)
        if (t is ndarray or t is np.ndarray) and np.may_share_memory(loc, d):
            loc = loc.copy()  # as the general path: as if the value were copied first
        d[...] = loc
    st.bump()
    return True


def _op_label(frame) -> tuple[str, str]:
    """Trace label of an :func:`elementwise` frame: the ufunc's name."""
    func = frame.f_locals.get("func")
    return "op", getattr(func, "__name__", "elementwise")


label_frames(elementwise, _op_label)
label_frames(assign, lambda frame: ("op", "assignment"))


@provides("to_scalar")
def to_scalar(x):
    """The value of a size-1 array as a NumPy scalar on every rank.  Collective."""
    lay = x._layout
    ctx = x._st.ctx
    box = tuple((0, 1) for _ in x.shape)
    be = x._st.be
    if _replicated(lay):  # every rank holds the element
        return be.to_host(x._st.view_of(x._map, box)).reshape(()).copy()[()]
    root = next(r for r, _ in lay.sources(0, box))
    data = be.to_host(x._st.view_of(x._map, box)) if ctx.rank == root else None
    return bcast_array(ctx, data, root, (), x.dtype)[()]


def _replicated(lay: Layout) -> bool:
    return lay.nprocs == 1 or all(lay.is_replicated_axis(k) for k in range(len(lay.dims)))
