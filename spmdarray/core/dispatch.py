"""NumPy protocol dispatch: ``__array_ufunc__`` and ``__array_function__``.

Every ufunc call lands in :func:`array_ufunc` and goes to the elementwise
engine; every other NumPy function called with a spmdarray argument lands in
:func:`array_function` and is looked up in the ``HANDLED`` registry.  A
function that is not registered raises ``NotImplementedError`` naming it: it
is never computed by silently gathering the array.
"""

from __future__ import annotations

import numpy as np

from spmdarray.core import elementwise as _engine
from spmdarray.routines.reductions import argreduce, normalize_axes, reduce

__all__ = ["HANDLED", "REPLICATED", "implements", "array_ufunc", "array_function", "round_"]

HANDLED: dict = {}
#: NumPy functions whose implementation replicates its (small) inputs or result on
#: every rank instead of distributing it; the API coverage table marks them so.
REPLICATED: set = set()

_REDUCE = {
    np.add: "sum",
    np.multiply: "prod",
    np.minimum: "min",
    np.maximum: "max",
    np.logical_and: "all",
    np.logical_or: "any",
}


def implements(*funcs, replicated: bool = False):
    """Register an implementation for NumPy functions (``__array_function__``).

    ``replicated=True`` marks an implementation that holds its inputs or its
    result whole on every rank (meant for small arrays only); the generated
    API coverage table lists it as replicated rather than distributed.
    """

    def deco(impl):
        for f in funcs:
            HANDLED[f] = impl
            if replicated:
                REPLICATED.add(f)
            else:
                REPLICATED.discard(f)
        return impl

    return deco


def _known(x) -> bool:
    return _engine.is_distributed(x) or isinstance(x, (np.ndarray, np.generic, int, float, complex, bool, list, tuple))


def array_ufunc(ufunc, method, inputs, kwargs):
    """Route a ufunc call to the engine.  Collective."""
    if not all(_known(x) or x is None for x in inputs):
        return NotImplemented
    out = kwargs.pop("out", None)
    if method == "__call__":
        if ufunc is np.matmul:
            from spmdarray.linalg._summa import matmul

            o = out[0] if out else None
            return matmul(*inputs, out=o, **kwargs)
        from spmdarray.linalg._products import GUFUNCS

        if ufunc in GUFUNCS:
            return GUFUNCS[ufunc](*inputs, out=out[0] if out else None, **kwargs)
        if ufunc.signature is not None:
            # A generalized ufunc has core dimensions: not elementwise.
            raise NotImplementedError(f"numpy.{ufunc.__name__} (generalized ufunc) on spmdarray arrays")
        where = kwargs.pop("where", True)
        return _engine.elementwise(ufunc, inputs, out=out, where=where, nout=ufunc.nout, **kwargs)
    if method == "reduce":
        (x,) = inputs
        name = _REDUCE.get(ufunc)
        if name is None:
            raise NotImplementedError(f"numpy.{ufunc.__name__}.reduce (only associative ufuncs reduce in spmdarray)")
        axis = kwargs.pop("axis", 0)
        o = out[0] if out else None
        if name in ("all", "any"):
            kwargs.pop("dtype", None)
            x = _engine.elementwise(np.not_equal, [x, 0]) if x.dtype != bool else x
        return reduce(name, x, axis=axis, out=o, **kwargs)
    if method == "accumulate":
        (x,) = inputs
        o = out[0] if out else None
        return accumulate(ufunc, x, axis=kwargs.pop("axis", 0), dtype=kwargs.pop("dtype", None), out=o)
    raise NotImplementedError(f"numpy.{ufunc.__name__}.{method} on spmdarray arrays")


def accumulate(ufunc, x, axis=0, dtype=None, out=None):
    """``ufunc.accumulate`` along one axis: a prefix scan across ranks.  Collective.

    Each rank scans its block, the ranks along the scanned grid axis
    all-gather their last slices, and each adds the carry of the ranks before
    it.  Only associative ufuncs are supported.
    """
    from spmdarray.comm import allgather_blocks
    from spmdarray.decomposition import box_size
    from spmdarray.routines.reductions import _group

    if ufunc not in _REDUCE:
        raise NotImplementedError(f"numpy.{ufunc.__name__}.accumulate (only associative ufuncs)")
    (ax,) = normalize_axes(axis, x.ndim)
    dt = ufunc.accumulate(np.ones((1,) * x.ndim, x.dtype), axis=ax, dtype=dtype).dtype
    from spmdarray.routines.creation import empty_like

    res = empty_like(x, dtype=dt)
    ctx = x._st.ctx
    lay = x._layout
    b = lay.block(ctx.rank)
    be = x._st.be
    loc = _local_accumulate(be, ufunc, x.local, ax, dt) if box_size(b) else be.empty(res.local.shape, dt)
    k = lay.grid_axis_of(ax)
    if k is not None and lay.dims[k] > 1:
        members = _group(lay, (k,), ctx.rank)
        tail_shape = lambda r: tuple(1 if a == ax else hi - lo for a, (lo, hi) in enumerate(lay.block(r)))  # noqa: E731
        has = lambda r: lay.owned_size(r) > 0  # noqa: E731
        shapes = [tail_shape(m) if has(m) else (0,) * x.ndim for m in members]
        mine = be.to_host(np.take(loc, [-1], axis=ax)) if has(ctx.rank) else np.empty((0,) * x.ndim, dt)
        tails = [be.asarray(t) for t in allgather_blocks(ctx.sub(lay.dims, (k,)), np.ascontiguousarray(mine), shapes)]
        if has(ctx.rank):
            before = sorted(
                (lay.block(m)[ax][0], i) for i, m in enumerate(members) if has(m) and lay.block(m)[ax][0] < b[ax][0]
            )
            carry = None
            for _, i in before:
                carry = tails[i] if carry is None else ufunc(carry, tails[i])
            if carry is not None:
                loc = ufunc(carry, loc).astype(dt, copy=False)
    if box_size(b):
        res.local[...] = loc
    if out is not None:
        _engine.assign(out, res)
        return out
    return res


def _local_accumulate(be, ufunc, block, axis: int, dtype):
    """``ufunc.accumulate`` of this rank's block, on its device.

    CuPy accumulates only ``add`` and ``multiply`` (``cumsum``/``cumprod``);
    other ufuncs scan a host copy of the block (this rank's block only, never
    a gather) and copy the result back.
    """
    if be.is_device and ufunc not in (np.add, np.multiply):
        return be.asarray(ufunc.accumulate(be.to_host(block), axis=axis, dtype=dtype))
    return ufunc.accumulate(block, axis=axis, dtype=dtype)


def array_function(func, types, args, kwargs):
    """Look ``func`` up in the registry.  Collective when the implementation is."""
    impl = HANDLED.get(func)
    if impl is None:
        name = getattr(func, "__module__", "numpy") or "numpy"
        raise NotImplementedError(
            f"spmdarray does not implement {name}.{func.__name__} yet; it was not computed by gathering the "
            "array. Call it on numpy.asarray(x) explicitly if the array is small"
        )
    return impl(*args, **kwargs)


def _reg_reduction(name):
    def impl(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
        if not _engine.is_distributed(a):
            return getattr(np, name)(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)
        if name in ("min", "max", "any", "all"):
            if dtype is not None:
                raise TypeError(f"{name}() got an unexpected keyword argument 'dtype'")
            return reduce(name, a, axis=axis, out=out, keepdims=keepdims, **kw)
        return reduce(name, a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)

    impl.__name__ = name
    impl.__doc__ = f"Distributed ``numpy.{name}``.  Collective."
    return impl


def _minmax_sig(name):
    def impl(a, axis=None, out=None, keepdims=False, **kw):
        return reduce(name, a, axis=axis, out=out, keepdims=keepdims, **kw)

    impl.__name__ = name
    return impl


for _n in ("sum", "prod", "mean"):
    implements(getattr(np, _n))(_reg_reduction(_n))
for _n in ("min", "max", "any", "all"):
    implements(getattr(np, _n))(_minmax_sig(_n))
implements(np.amin)(_minmax_sig("min"))
implements(np.amax)(_minmax_sig("max"))


def _vs(name):
    def impl(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        return reduce(name, a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, **kw)

    impl.__name__ = name
    return impl


HANDLED[np.var] = _vs("var")
HANDLED[np.std] = _vs("std")


@implements(np.argmin)
def _argmin(a, axis=None, out=None, *, keepdims=False):
    return argreduce("argmin", a, axis, out, keepdims)


@implements(np.argmax)
def _argmax(a, axis=None, out=None, *, keepdims=False):
    return argreduce("argmax", a, axis, out, keepdims)


def _isclose_local(rtol, atol, equal_nan):
    def f(a, b, out=None):
        r = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
        if out is None:
            return r
        out[...] = r
        return out

    return f


@implements(np.isclose)
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Distributed ``numpy.isclose``.  Collective."""
    return _engine.elementwise(_isclose_local(rtol, atol, equal_nan), [a, b])


@implements(np.allclose)
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Distributed ``numpy.allclose`` (the same bool on every rank).  Collective."""
    r = isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return bool(r.all() if _engine.is_distributed(r) else np.all(r))


@implements(np.array_equal)
def array_equal(a1, a2, equal_nan=False):
    """Distributed ``numpy.array_equal``.  Collective."""
    if np.shape(a1) != np.shape(a2):
        return False
    if equal_nan:
        return allclose(a1, a2, rtol=0, atol=0, equal_nan=True)
    r = _engine.elementwise(np.equal, [a1, a2])
    return bool(r.all() if _engine.is_distributed(r) else np.all(r))


@implements(np.round, np.around)
def round_(a, decimals=0, out=None):
    """Distributed ``numpy.round``.  Collective."""
    return _engine.elementwise(np.round, [a], out=None if out is None else (out,), decimals=decimals)


@implements(np.clip)
def clip(a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue, max=np._NoValue, **kw):  # noqa: A002
    """Distributed ``numpy.clip``.  Collective."""
    lo = a_min if a_min is not np._NoValue else (None if min is np._NoValue else min)
    hi = a_max if a_max is not np._NoValue else (None if max is np._NoValue else max)
    o = None if out is None else (out,)
    if lo is None and hi is None:
        return _engine.elementwise(np.positive, [a], out=o, **kw)
    if lo is None:
        return _engine.elementwise(np.minimum, [a, hi], out=o, **kw)
    if hi is None:
        return _engine.elementwise(np.maximum, [a, lo], out=o, **kw)
    return _engine.elementwise(np._core.umath.clip, [a, lo, hi], out=o, **kw)


@implements(np.copyto)
def copyto(dst, src, casting="same_kind", where=True):
    """Distributed ``numpy.copyto``.  Collective."""
    # NumPy's own casting check (and NEP 50 rules for Python scalars) on a 0-d probe.
    if isinstance(src, (int, float, complex, np.generic)):
        probe = src
    else:
        probe = np.zeros((), src.dtype if hasattr(src, "dtype") else np.asarray(src).dtype)
    np.copyto(np.empty((), dst.dtype), probe, casting=casting)
    if where is True:
        _engine.assign(dst, src)
    else:
        # ``positive`` has no bool loop: bool destinations copy with ``numpy.copyto``.
        func = _copy_into if dst.dtype == bool else np.positive
        _engine.elementwise(func, [src], out=(dst,), where=where, casting="unsafe", dtype=dst.dtype)


def _copy_into(src, out=None, where=True, casting="unsafe", dtype=None):
    """``numpy.copyto(out, src, where=where)`` as an elementwise kernel (a block each)."""
    if out is None:
        return np.array(src, dtype=dtype)
    np.copyto(out, src, casting="unsafe", where=where)
    return out


@implements(np.transpose)
def transpose(a, axes=None):
    """View with axes permuted.  Not collective."""
    return a.transpose(axes)


@implements(np.reshape)
def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """Distributed ``numpy.reshape``.  Collective."""
    from spmdarray.routines.manipulation.shape import reshape as _r

    return _r(a, shape if shape is not None else newshape, order=order, copy=copy)


@implements(np.ravel)
def ravel(a, order="C"):
    """Distributed ``numpy.ravel``.  Collective."""
    return a.ravel(order)


@implements(np.shape)
def shape(a):
    return a.shape


@implements(np.ndim)
def ndim(a):
    return a.ndim


@implements(np.size)
def size(a, axis=None):
    return a.size if axis is None else a.shape[axis]


@implements(np.copy)
def _copy(a, order="K", subok=False):
    return a.copy()


def _reg_like():
    from spmdarray.routines import creation as _creation

    HANDLED[np.empty_like] = _creation.empty_like
    HANDLED[np.zeros_like] = _creation.zeros_like
    HANDLED[np.ones_like] = _creation.ones_like
    HANDLED[np.full_like] = _creation.full_like
    HANDLED[np.array_equiv] = _equiv


def _equiv(a1, a2):
    try:
        np.broadcast_shapes(np.shape(a1), np.shape(a2))
    except ValueError:
        return False
    r = _engine.elementwise(np.equal, [a1, a2])
    return bool(r.all() if _engine.is_distributed(r) else np.all(r))


_reg_like()


def _dtype_arg(x):
    return x.dtype if _engine.is_distributed(x) else x


@implements(np.result_type)
def result_type(*arrays_and_dtypes):
    """``numpy.result_type`` (reads dtypes only).  Not collective."""
    return np.result_type(*(_dtype_arg(x) for x in arrays_and_dtypes))


@implements(np.can_cast)
def can_cast(from_, to, casting="safe"):
    """``numpy.can_cast`` (reads dtypes only).  Not collective."""
    return np.can_cast(_dtype_arg(from_), to, casting=casting)


@implements(np.iscomplexobj)
def iscomplexobj(x):
    """Whether the dtype is complex.  Not collective."""
    return issubclass(x.dtype.type, np.complexfloating)


@implements(np.isrealobj)
def isrealobj(x):
    """Whether the dtype is not complex.  Not collective."""
    return not iscomplexobj(x)
