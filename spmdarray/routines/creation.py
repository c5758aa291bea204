"""Array creation: every function is collective and moves no data.

Each rank builds only its own block from the global description (a fill
value, a formula, or a global NumPy array that every rank passes).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from spmdarray.backend.backends import backend_of, context
from spmdarray.comm import allgather_object
from spmdarray.core import fetch as _fetch
from spmdarray.core.array import ndarray
from spmdarray.core.placement import default_layout, is_small, is_whole
from spmdarray.core.registry import HANDLED, provides
from spmdarray.core.storage import Storage
from spmdarray.core.whole import wrap
from spmdarray.decomposition import Layout, box_size, unravel
from spmdarray.engine import elementwise as _engine
from spmdarray.settings import config

__all__ = [
    "arange",
    "array",
    "asarray",
    "asanyarray",
    "ascontiguousarray",
    "copy",
    "empty",
    "empty_like",
    "eye",
    "from_local",
    "full",
    "full_like",
    "identity",
    "linspace",
    "ones",
    "ones_like",
    "zeros",
    "zeros_like",
]


def _shape(shape, what: str = "shape") -> tuple[int, ...]:
    """A shape (or random ``size``) as a tuple of ints, with NumPy's errors."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        out = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"{what} must be an integer or a tuple of integers, got {shape!r}") from None
    for n in out:
        if n < 0:
            raise ValueError("negative dimensions are not allowed")
    return out


def _order(order) -> None:
    if order not in ("C", "K", "A", None):
        raise NotImplementedError(f"order={order!r}: spmdarray stores blocks in C order only")


def _new(shape, dtype, comm, fill=None, layout: Layout | None = None, backend=None):
    ctx = context(comm, backend)
    shape = _shape(shape)
    if (layout is None or is_whole(layout)) and shape and is_small(shape) and config.whole_lane:
        be = backend_of(ctx)
        if not be.is_device:  # replicated: NumPy's own array, adopted as the allocation
            dtype = np.dtype(dtype)
            if dtype.hasobject:
                Storage(ctx, default_layout(shape, ctx.size), dtype)  # raises the object-dtype error
            if fill is None:
                res = np.empty(shape, dtype)
            elif fill == 0:
                res = np.zeros(shape, dtype)
            else:
                res = np.full(shape, fill, dtype)
            return wrap(ctx, be, res)
    layout = layout or default_layout(shape, ctx.size)
    return ndarray._new(Storage(ctx, layout, np.dtype(dtype), fill=fill), None)


def generate(shape, dtype, fill, comm=None, backend=None):
    """Array whose block is ``fill(box, xp)`` on each rank.  Collective.

    Parameters
    ----------
    shape : int or tuple of int
        Global shape.
    dtype : dtype
        Element type.
    fill : callable
        ``fill(box, xp) -> array`` with ``box`` a tuple of global
        ``(lo, hi)`` ranges and ``xp`` the array module of the block (NumPy
        or CuPy); it must return an array of the box's shape, made with
        ``xp`` (or a NumPy array, which is copied to the device).
    comm : mpi4py communicator, optional
    backend : str, optional
        ``"numpy"``, ``"cupy"`` or ``"auto"`` (default: ``SPMDARRAY_BACKEND``).
    """
    x = _new(shape, dtype, comm, backend=backend)
    lay = x._layout
    be = x._st.be
    if lay.owned_size(x._st.ctx.rank):
        box = lay.block(x._st.ctx.rank)
        local = x._block
        if not box:
            local[...] = be.asarray(fill(box, be.xp))
            return x
        # Fill in slabs (2**18 elements on the host, 2**24 on a GPU) so that
        # ``fill``'s temporaries stay small whatever the block size.
        (lo, hi), rest = box[0], box[1:]
        step = max(1, be.fill_chunk // max(1, box_size(rest)))
        for s in range(lo, hi, step):
            e = min(hi, s + step)
            local[s - lo : e - lo] = be.asarray(fill(((s, e), *rest), be.xp))
    return x


@provides("empty")
def empty(shape, dtype=float, order="C", *, comm=None, like=None, backend=None):
    """Uninitialised array.  Collective (no communication)."""
    _order(order)
    return _new(shape, dtype, comm, backend=backend)


@provides("zeros")
def zeros(shape, dtype=float, order="C", *, comm=None, like=None, backend=None):
    """Array of zeros.  Collective (no communication)."""
    _order(order)
    return _new(shape, dtype, comm, fill=0, backend=backend)


def ones(shape, dtype=None, order="C", *, comm=None, like=None, backend=None):
    """Array of ones.  Collective (no communication)."""
    _order(order)
    return _new(shape, dtype or float, comm, fill=1, backend=backend)


def full(shape, fill_value, dtype=None, order="C", *, comm=None, like=None, backend=None):
    """Array filled with ``fill_value``.  Collective (no communication)."""
    _order(order)
    if _fetch.is_distributed(fill_value):
        fill_value = fill_value._scalar() if fill_value.ndim == 0 else fill_value
    if dtype is None:
        dtype = np.array(fill_value).dtype
    if np.ndim(fill_value):
        x = _new(shape, dtype, comm, backend=backend)
        _engine.assign(x, fill_value)
        return x
    np.full((1,), fill_value, dtype)  # NumPy's conversion errors
    return _new(shape, dtype, comm, fill=fill_value, backend=backend)


def _like(a, dtype, shape, comm):
    if shape is not None and _shape(shape) != tuple(np.shape(a)):
        ctx = a._st.ctx if _fetch.is_distributed(a) else comm
        return _shape(shape), None, ctx
    if _fetch.is_distributed(a):
        return a.shape, a._layout, a._st.ctx
    return tuple(np.shape(a)), None, comm


@provides("empty_like")
def empty_like(a, dtype=None, order="K", subok=True, shape=None, *, comm=None, device=None):
    """Uninitialised array laid out like ``a``.  Collective (no communication)."""
    shp, lay, ctx = _like(a, dtype, shape, comm)
    return _new(shp, dtype or _dtype(a), ctx, layout=lay)


@provides("zeros_like")
def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, comm=None, device=None):
    """Zeros laid out like ``a``.  Collective (no communication)."""
    shp, lay, ctx = _like(a, dtype, shape, comm)
    return _new(shp, dtype or _dtype(a), ctx, fill=0, layout=lay)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, comm=None, device=None):
    """Ones laid out like ``a``.  Collective (no communication)."""
    shp, lay, ctx = _like(a, dtype, shape, comm)
    return _new(shp, dtype or _dtype(a), ctx, fill=1, layout=lay)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, comm=None, device=None):
    """``fill_value`` laid out like ``a``.  Collective (no communication)."""
    shp, lay, ctx = _like(a, dtype, shape, comm)
    dt = np.dtype(dtype or _dtype(a))
    x = _new(shp, dt, ctx, layout=lay)
    _engine.assign(x, fill_value)
    return x


def _dtype(a):
    return a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype


def array(obj, dtype=None, *, copy=True, order="K", subok=True, ndmin=0, like=None, comm=None, backend=None):
    """Distributed array from a global value that every rank passes.

    Collective.  With a NumPy array or nested list, each rank keeps only its
    own block (no communication).  With a spmdarray array it copies (or,
    with ``copy=False``, returns it unchanged when the dtype matches).
    """
    if _fetch.is_distributed(obj):
        if backend is not None and context(obj._st.ctx.user_comm, backend).backend is not obj._st.be:
            return _to_backend(obj, backend, dtype)
        if comm is not None and context(comm, obj._st.be.name).comm is not obj._st.ctx.comm:
            raise NotImplementedError("array(x, comm=other): moving an array to another communicator")
        if dtype is None or np.dtype(dtype) == obj.dtype:
            return obj.copy() if copy else obj
        return obj.astype(dtype)
    if hasattr(obj, "__cuda_array_interface__") and not isinstance(obj, np.ndarray):
        # A device array that every rank passes: its host copy is the global value.
        obj = obj.get() if hasattr(obj, "get") else obj
    arr = np.array(obj, dtype=dtype, copy=None if copy is False else True, ndmin=ndmin)
    x = _new(arr.shape, arr.dtype, comm, backend=backend)
    box = x._layout.block(x._st.ctx.rank)
    if box_size(box):
        x._block[...] = x._st.be.asarray(arr[tuple(slice(lo, hi) for lo, hi in box)])
    return x


@provides("to_backend")
def _to_backend(x, backend: str, dtype):
    """Copy of ``x`` with the same layout on another backend.  Collective, no communication."""

    ctx = context(x._st.ctx.user_comm, backend)
    out = ndarray._new(Storage(ctx, x._layout, np.dtype(dtype or x.dtype)), None)
    if x._layout.owned_size(ctx.rank):
        out._block[...] = out._st.be.asarray(x._st.be.to_host(x._block))
    return out


def asarray(a, dtype=None, order=None, *, copy=None, like=None, comm=None, backend=None):
    """Like :func:`array` but returns ``a`` itself when no copy is needed.  Collective."""
    return array(a, dtype=dtype, copy=bool(copy), comm=comm, backend=backend)


asanyarray = asarray
ascontiguousarray = asarray


def copy(a, order="K", subok=False):
    """Copy of ``a``.  Collective (no communication)."""
    return array(a, copy=True)


def arange(start, stop=None, step=None, dtype=None, *, comm=None, like=None, backend=None):
    """Evenly spaced values, with NumPy's length and dtype rules.  Collective."""
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    if step == 0:
        raise ZeroDivisionError("division by zero")
    if dtype is None:
        dt = np.result_type(*(np.asarray(v) for v in (start, stop, step)))
    else:
        dt = np.dtype(dtype)
    np.arange(start, start, step, dtype=dt)  # NumPy's errors for bad arguments
    if all(isinstance(v, (int, np.integer)) for v in (start, stop, step)):
        n = len(range(int(start), int(stop), int(step)))
    else:
        n = max(0, math.ceil((stop - start) / step))
    # NumPy stores start and start + step into the result first: its casts and errors.
    head = np.zeros(2, dt)
    for i, v in enumerate((start, start + step)[: min(n, 2)]):
        head[i] = v
    if np.issubdtype(dt, np.integer) and all(isinstance(v, (int, np.integer)) for v in (start, stop, step)):

        def fill(box, xp):
            lo, hi = box[0]
            return (xp.arange(lo, hi, dtype=np.int64) * int(step) + int(start)).astype(dt)

    else:
        # NumPy's fill: element 0 is ``start`` and element 1 is ``start + step``, each
        # cast to dtype; element i >= 2 is ``first + i * (second - first)`` computed in
        # dtype itself (float16 in float32), so float32 and integer results match bit for bit.
        if dt == np.bool_ and n > 2:
            raise TypeError("arange() is only supported for booleans when the result has at most length 2.")
        ct = np.dtype(np.float32) if dt == np.float16 else dt
        first, second = head.astype(ct)
        delta = second - first if n > 2 else None

        def fill(box, xp):
            lo, hi = box[0]
            vals = first + xp.arange(lo, hi).astype(ct) * delta if n > 2 else xp.empty(hi - lo, ct)
            for i, v in ((0, first), (1, second)):
                if lo <= i < hi:
                    vals[i - lo] = v
            return vals.astype(dt)

    return generate((n,), dt, fill, comm, backend)


def linspace(
    start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, comm=None, device=None, backend=None
):
    """``num`` evenly spaced samples, computed as NumPy does.  Collective."""
    if np.ndim(start) or np.ndim(stop):
        raise NotImplementedError("linspace with array start/stop: use scalars")
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = (num - 1) if endpoint else num
    dt = np.result_type(start, stop, float(num))
    delta = stop - start
    step = delta / div if div > 0 else np.nan
    any_step_zero = step == 0 if div > 0 else False

    def fill(box, xp):
        lo, hi = box[0]
        y = xp.arange(lo, hi, dtype=dt)
        if div > 0:
            if any_step_zero:
                y = y / div * delta
            else:
                y = y * step
        else:
            y = y * delta
        y += start
        if endpoint and num > 1 and lo <= num - 1 < hi:
            y[num - 1 - lo] = stop
        if dtype is not None and np.issubdtype(dtype, np.integer):
            np.floor(y, out=y)
        return y.astype(dtype or dt, copy=False)

    x = generate((num,), np.dtype(dtype or dt), fill, comm, backend)
    return (x, step) if retstep else x


def eye(N, M=None, k=0, dtype=float, order="C", *, comm=None, like=None, backend=None):
    """2-D array with ones on diagonal ``k``.  Collective (no communication)."""
    M = N if M is None else M

    def fill(box, xp):
        (r0, r1), (c0, c1) = box
        rows = xp.arange(r0, r1)[:, None]
        cols = xp.arange(c0, c1)[None, :]
        return (cols - rows == k).astype(dtype)

    return generate((N, M), dtype, fill, comm, backend)


def identity(n, dtype=None, *, comm=None, like=None, backend=None):
    """Square identity matrix.  Collective (no communication)."""
    return eye(n, dtype=dtype or float, comm=comm, backend=backend)


def from_local(block, comm=None, *, grid=None, ghost=0):
    """Wrap each rank's existing NumPy or CuPy block as one global array.

    Collective.  The blocks are not copied: the result aliases them (unless
    ``ghost`` is given).  CuPy
    blocks make an array on the ``cupy`` backend, NumPy blocks one on the
    ``numpy`` backend, whatever ``SPMDARRAY_BACKEND`` says; every rank must
    pass the same kind.

    Parameters
    ----------
    block : numpy.ndarray or cupy.ndarray
        This rank's block.  All ranks pass blocks of the same ``ndim`` and
        dtype.
    comm : mpi4py communicator, optional
    grid : tuple of int, optional
        Process grid (C order of ranks).  Default: blocks are stacked along
        axis 0 in rank order, so every other extent must agree.
    ghost : int, optional
        Width of the ghost frame around each block, along every axis split
        over more than one rank (default 0: none).  With a frame, shifted
        views (stencils) receive their halos into it and compute on plain
        views, as arrays made by spmdarray do; without one they go through a
        temporary buffer.  The block is then *copied* into the framed
        allocation: the result no longer aliases it (read it back with
        ``x.local``).  Every rank must pass the same value.

    Raises
    ------
    ValueError
        If the block extents do not tile a global array (same message on
        every rank).
    """

    device = not isinstance(block, (np.ndarray, np.generic, list, tuple, int, float, complex)) and hasattr(
        block, "__cuda_array_interface__"
    )
    if not device:
        block = np.asarray(block)
    ctx = context(comm, "numpy")
    kind = "cupy" if device else "numpy"
    infos = allgather_object(ctx, (tuple(block.shape), np.dtype(block.dtype).str, kind, ghost))
    if len({repr(g) for *_, g in infos}) != 1:
        raise ValueError(f"from_local: every rank must pass the same ghost=; got {[g for *_, g in infos]} by rank")
    if len({k for _, _, k, _ in infos}) != 1:
        raise TypeError(
            f"from_local: every rank must pass the same kind of block (NumPy or CuPy); got {[i[2] for i in infos]}"
        )
    shapes = [i[0] for i in infos]
    if len({len(s) for s in shapes}) != 1 or len({i[1] for i in infos}) != 1:
        raise ValueError(f"from_local: every rank must pass blocks of one ndim and dtype; got {[i[:2] for i in infos]}")
    if device:
        ctx = context(ctx.user_comm, "cupy")
        if not ctx.backend.is_block(block):
            raise TypeError(f"from_local: a {type(block).__name__} block is neither NumPy nor this process's CuPy")
    nd = len(shapes[0])
    if nd == 0:
        raise ValueError("from_local needs blocks with at least one dimension")
    if grid is None:
        grid = (ctx.size,) + (1,) * (nd - 1)
    grid = tuple(grid)
    if len(grid) != nd or math.prod(grid) != ctx.size:
        raise ValueError(f"from_local: grid {grid} must have {nd} entries whose product is {ctx.size}")

    extents = []
    for a in range(nd):
        ext = []
        for c in range(grid[a]):
            vals = {shapes[r][a] for r in range(ctx.size) if unravel(r, grid)[a] == c}
            if len(vals) != 1:
                raise ValueError(
                    f"from_local: blocks at grid coordinate {c} of axis {a} have different extents {sorted(vals)}; "
                    f"block shapes by rank: {shapes}"
                )
            ext.append(vals.pop())
        extents.append(tuple(ext))
    layout = Layout.from_extents(tuple(extents))
    if not isinstance(ghost, (int, np.integer)) or isinstance(ghost, bool) or ghost < 0:
        raise ValueError(f"from_local: ghost must be a non-negative int (the frame width), got {ghost!r}")
    if not ghost:
        st = Storage(ctx, layout, block.dtype, ghost=(0,) * nd, alloc=block)
        st.exposed = True  # the program writes ``block`` itself: no deferred value may read it later
        return ndarray._new(st, None)
    # A copy inside a ghost frame: the program's block is not aliased, so nothing is exposed.
    widths = tuple(int(ghost) if layout.dims[a] > 1 else 0 for a in range(nd))
    st = Storage(ctx, layout, block.dtype, ghost=widths)
    x = ndarray._new(st, None)
    if block.size:
        x._block[...] = block
    return x


HANDLED[np.empty_like] = empty_like
HANDLED[np.zeros_like] = zeros_like
HANDLED[np.ones_like] = ones_like
HANDLED[np.full_like] = full_like
