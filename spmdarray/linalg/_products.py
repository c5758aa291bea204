"""Distributed products: N-D ``matmul``/``dot``, ``tensordot``, ``einsum``, ``kron``, ``cross`` ...

Every product is built from distributed pieces: transposes (views),
reshapes (redistributions), SUMMA ``matmul`` of 2-D operands (see
:mod:`spmdarray.linalg._summa`), batch-parallel ``matmul`` of stacks, elementwise
broadcasting products and reductions.  No operand is gathered whole, except
small slices in loops (region copies, :mod:`spmdarray.core.element`) and split
arrays below ``config.gather_rereads_below`` elements that a loop reads in
several products, unwritten (:mod:`spmdarray.core.rereads`).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from spmdarray.core import fetch as _fetch
from spmdarray.core.array import ndarray
from spmdarray.core.element import copy_of, whole_read
from spmdarray.core.placement import is_small, is_whole
from spmdarray.core.registry import GUFUNCS, implements, provides
from spmdarray.core.storage import Storage
from spmdarray.core.whole import whole_copy, wrap
from spmdarray.engine import elementwise as _engine
from spmdarray.engine.replicas import call_on_replicas
from spmdarray.linalg._batch import gufunc, operand
from spmdarray.linalg._local import local_product
from spmdarray.linalg._summa import _summa, matmul_2d
from spmdarray.routines.creation import array, empty, eye
from spmdarray.settings import config

__all__ = [
    "matmul_nd",
    "dot",
    "vdot",
    "inner",
    "outer",
    "tensordot",
    "kron",
    "cross",
    "multi_dot",
    "vecdot",
    "matvec",
    "vecmat",
    "diagonal",
    "trace",
]


def _ops(*xs):
    ctx = _fetch.context_of(*xs)
    return ctx, [operand(x, ctx) for x in xs]


def _probe(shape_dtype):
    """Zero-stride NumPy stand-ins (no memory) of the given shapes and dtypes."""
    return [np.broadcast_to(np.zeros((), dt), sh) for sh, dt in shape_dtype]


def _operand(x, ctx):
    if _fetch.is_distributed(x):
        return x

    return array(np.asarray(x), comm=ctx)


@provides("matmul")
def matmul(a, b, out=None, **kwargs):
    """``a @ b``: SUMMA for 1-D and 2-D operands, stacks in :func:`matmul_nd`.  Collective.

    Raises
    ------
    ValueError
        NumPy's message when the core dimensions differ.
    NotImplementedError
        For gufunc keyword arguments other than ``dtype`` (``axes=`` ...).
    """
    if out is None and not kwargs and type(a) is ndarray and type(b) is ndarray:
        va = whole_copy(a)
        vb = whole_copy(b) if va is not None else None
        if vb is not None and a._s.ctx is b._s.ctx:
            # Every rank holds both whole (replicated, or one rank, any size): NumPy's matmul on the
            # copies, its errors too, alike on every rank (``cov[i, i:] = d[:, i] @ d[:, i:]``).
            s = a._s
            return wrap(s.ctx, s.be, np.matmul(va, vb))
        # Replicated operands: NumPy's matmul on each rank's copies (its errors too, alike on every rank).
        sa, sb = a._st, b._st
        sha, shb = a.shape, b.shape
        if len(sha) == 1 == len(shb) and sa.ctx is sb.ctx and not sa.be.is_device and not sb.be.is_device:
            if is_whole(sa.layout) and is_whole(sb.layout) and is_whole(a._layout) and is_whole(b._layout):
                return np.matmul(a._block, b._block)  # vector @ vector: a NumPy scalar, nothing to wrap
            if is_small(sha) and is_small(shb):
                # Two small vectors, one of them split (``L[i, :i] @ x[:i]`` in a row loop): NumPy's
                # product of whole copies, as ``matmul_2d`` computes it, each split one served from
                # its region copy (one collective on a miss, then none along a read-only sweep).
                # (A copy the lane gave above is used as it is.)
                va = _whole_vector(a) if va is None else va
                vb = (_whole_vector(b) if vb is None else vb) if va is not None else None
                if vb is not None:
                    return np.matmul(va, vb)
        res = call_on_replicas(np.matmul, (a, b), kwargs)
        if res is not NotImplemented:
            return res
        if 0 < a.ndim <= 2 and 0 < b.ndim <= 2 and a._s.ctx is b._s.ctx and _small_work(a.shape, b.shape):
            # A split operand that a loop reads again and again, unwritten (``d[:, i] @ d[:, i:]``):
            # NumPy's product of whole copies, its operands gathered once (``core.rereads``).
            va = whole_read(a) if va is None else va
            if va is not None:
                vb = whole_copy(b) if vb is None else vb
                vb = whole_read(b) if vb is None else vb
            if vb is not None:
                s = a._s
                return wrap(s.ctx, s.be, np.matmul(va, vb))
    dtype = kwargs.pop("dtype", None)
    for k in ("casting", "order", "subok"):
        kwargs.pop(k, None)
    for k in ("axes", "axis", "keepdims", "signature"):
        if kwargs.get(k, None) in (None, False, np._NoValue):
            kwargs.pop(k, None)
    if kwargs:
        raise NotImplementedError(f"matmul keyword arguments {sorted(kwargs)}")
    ctx = _fetch.context_of(a, b, out)
    a, b = _operand(a, ctx), _operand(b, ctx)
    if dtype is not None or a.ndim > 2 or b.ndim > 2:
        return matmul_nd(a, b, out=out, dtype=dtype)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(
            f"matmul: Input operand {0 if a.ndim == 0 else 1} does not have enough dimensions "
            "(has 0, gufunc core with signature "
            "(n?,k),(k,m?)->(n?,m?) requires 1)"
        )
    ka = a.shape[-1]
    kb = b.shape[0]
    if ka != kb:
        raise ValueError(
            "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
            f"(n?,k),(k,m?)->(n?,m?) (size {kb} is different from {ka})"
        )
    return matmul_2d(ctx, a, b, out)


def _small_work(sa: tuple, sb: tuple) -> bool:
    """Whether ``a @ b`` of these shapes multiplies at most ``1 << 21`` pairs of elements (a
    product that one rank computes faster than the ranks sum their parts of it)."""
    k = sa[-1]
    return math.prod(sa[:-1]) * k * (sb[-1] if len(sb) == 2 else 1) <= 1 << 21 and k == sb[0]


def _whole_vector(x) -> np.ndarray | None:
    """All of the 1-D array ``x`` on this rank, in host memory (read only); None for a
    split broadcast view.  Collective when split (every rank asks alike)."""
    s = x._s
    if type(s) is not Storage or is_whole(s.layout) or s.ctx.size == 1:
        c = whole_copy(x)  # (the lane's copy of an array every rank holds: no view map made)
        if c is not None:
            return c
        if is_whole(x._layout) or (s.ctx.size == 1 and not s.be.is_device):
            # (one rank: its block, with NumPy's strides, which NumPy's own loop may depend on)
            return x._block
    if x._map.broadcast_axes:
        return None
    return copy_of(x._st, x._map)  # (a split one: its region copy, no view layout made)


def _dot_2d(a, b, out=None):
    """NumPy's ``dot`` for scalars, 1-D and 2-D operands (SUMMA).  Collective."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return _engine.elementwise(np.multiply, [a, b], out=None if out is None else (out,))
    if np.shape(a)[-1] != np.shape(b)[0]:
        sa, sb = np.shape(a), np.shape(b)
        ta, tb = _engine._shape_txt(sa), _engine._shape_txt(sb)
        raise ValueError(f"shapes {ta} and {tb} not aligned: {sa[-1]} (dim {len(sa) - 1}) != {sb[0]} (dim 0)")
    if out is not None:  # NumPy's dot wants exactly the result's dtype and shape
        da, db = (x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype for x in (a, b))
        if out.dtype != np.dot(np.ones((1,) * np.ndim(a), da), np.ones((1,) * np.ndim(b), db)).dtype:
            raise ValueError(
                "output array is not acceptable (must have the right datatype, number of dimensions, and be a C-Array)"
            )
        if out.shape != np.shape(a)[:-1] + np.shape(b)[1:]:
            raise ValueError("output array has wrong dimensions")
    return matmul(a, b, out=out)


# ------------------------------------------------------------- matmul N-D
def matmul_nd(a, b, out=None, dtype=None):
    """``numpy.matmul`` for operands of any dimension, with batch broadcasting.  Collective.

    2-D (and 1-D) operands go to :func:`matmul`.  A stack times one matrix
    or vector is computed on each rank's own blocks when ``a``'s last axis is
    whole on every rank or split alone (:mod:`spmdarray.linalg._local`).
    Other stacks run batch-parallel (each product on one rank, batches split
    over ranks) when there are at least as many products as ranks or each
    matrix is small; otherwise each product of the stack is a SUMMA over all
    ranks in turn.
    """

    ctx, (a, b) = _ops(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(
            f"matmul: Input operand {0 if a.ndim == 0 else 1} does not have enough dimensions "
            "(has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)"
        )
    if a.ndim <= 2 and b.ndim <= 2 and dtype is None:
        return matmul(a, b, out=out)
    va, vb = a.ndim == 1, b.ndim == 1
    ka, kb = a.shape[-1], b.shape[0] if vb else b.shape[-2]
    if ka != kb:
        raise ValueError(
            "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
            f"(n?,k),(k,m?)->(n?,m?) (size {kb} is different from {ka})"
        )
    a2 = a.reshape((1, ka)) if va else a
    b2 = b.reshape((kb, 1)) if vb else b
    try:
        batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    except ValueError:
        raise ValueError(
            f"operands could not be broadcast together with remapped shapes [original->remapped]: "
            f"{a.shape} {b.shape} (batch dimensions {a2.shape[:-2]} and {b2.shape[:-2]})"
        ) from None
    dt = np.dtype(dtype) if dtype is not None else np.matmul(*_probe([((1, 1), a.dtype), ((1, 1), b.dtype)])).dtype
    n, m = a2.shape[-2], b2.shape[-1]
    nb = math.prod(batch)
    big = max(n * ka, ka * m, n * m)
    # A stack times one matrix or vector: products on each rank's own blocks when the layouts allow.
    c = local_product(ctx, a, b, dt) if dtype is None and b.ndim <= 2 and ctx.size > 1 else None
    if c is not None:
        va = vb = False  # already NumPy's result shape
    elif big <= config.linalg_max_elements and (nb >= ctx.size or big <= 1 << 16):
        c = gufunc("matmul", lambda x, y: np.matmul(x, y, dtype=dt), [a2, b2], [2, 2], limit=False)
    else:
        c = empty(batch + (n, m), dt, comm=ctx)
        ab, bb = a2.shape[:-2], b2.shape[:-2]
        for idx in np.ndindex(*batch):
            ia = tuple(0 if s == 1 else i for i, s in zip(idx[len(batch) - len(ab) :], ab))
            ib = tuple(0 if s == 1 else i for i, s in zip(idx[len(batch) - len(bb) :], bb))
            c[idx] = _summa(ctx, a2[ia] if ia else a2, b2[ib] if ib else b2, dt)
    if va:
        c = c.reshape(batch + (m,))
    elif vb:
        c = c.reshape(batch + (n,))
    if out is not None:
        if out.shape != c.shape:
            raise ValueError(f"matmul: output operand has shape {out.shape}, the result has shape {c.shape}")
        _engine.assign(out, c)
        return out
    return c


# ------------------------------------------------------------- tensordot
def _as_list(axes) -> list:
    try:
        return list(axes)
    except TypeError:
        return [axes]


def _tensordot_axes(a_shape, b_shape, axes):
    nda, ndb = len(a_shape), len(b_shape)
    try:
        iter(axes)
    except Exception:
        axes_a = list(range(-axes, 0))
        axes_b = list(range(0, axes))
    else:
        axes_a, axes_b = axes
    axes_a, axes_b = _as_list(axes_a), _as_list(axes_b)
    na, nb = len(axes_a), len(axes_b)
    equal = na == nb
    if equal:
        for k in range(na):
            if a_shape[axes_a[k]] != b_shape[axes_b[k]]:
                equal = False
                break
            if axes_a[k] < 0:
                axes_a[k] += nda
            if axes_b[k] < 0:
                axes_b[k] += ndb
    if not equal:
        raise ValueError("shape-mismatch for sum")
    return axes_a, axes_b


def _tensordot(a, b, axes_a, axes_b):
    notin_a = [k for k in range(a.ndim) if k not in axes_a]
    notin_b = [k for k in range(b.ndim) if k not in axes_b]
    k = math.prod(a.shape[ax] for ax in axes_a)
    pa = math.prod(a.shape[ax] for ax in notin_a)
    pb = math.prod(b.shape[ax] for ax in notin_b)
    at = a.transpose(notin_a + axes_a).reshape((pa, k))
    bt = b.transpose(axes_b + notin_b).reshape((k, pb))
    res = matmul(at, bt)
    return res.reshape(tuple(a.shape[ax] for ax in notin_a) + tuple(b.shape[ax] for ax in notin_b))


@implements(np.tensordot, np.linalg.tensordot)
def tensordot(a, b, axes=2):
    """Distributed ``numpy.tensordot``: transpose and reshape to 2-D, then SUMMA.  Collective."""
    _, (a, b) = _ops(a, b)
    axes_a, axes_b = _tensordot_axes(a.shape, b.shape, axes)
    return _tensordot(a, b, axes_a, axes_b)


@implements(np.dot)
@provides("dot")
def dot(a, b, out=None):
    """Distributed ``numpy.dot`` for every case NumPy has.  Collective.

    Scalars multiply elementwise, 1-D and 2-D operands use SUMMA and N-D
    operands contract the last axis of ``a`` with the second-to-last of ``b``
    (``tensordot``).
    """

    if np.ndim(a) <= 2 and np.ndim(b) <= 2:
        return _dot_2d(a, b, out=out)
    _, (a, b) = _ops(a, b)
    kb = 0 if b.ndim == 1 else b.ndim - 2
    if a.shape[-1] != b.shape[kb]:
        sa, sb = a.shape, b.shape
        ta, tb = _engine._shape_txt(sa), _engine._shape_txt(sb)
        raise ValueError(f"shapes {ta} and {tb} not aligned: {sa[-1]} (dim {a.ndim - 1}) != {sb[kb]} (dim {kb})")
    res = _tensordot(a, b, [a.ndim - 1], [kb])
    if out is not None:
        if out.dtype != res.dtype:
            raise ValueError(
                "output array is not acceptable (must have the right datatype, number of dimensions, and be a C-Array)"
            )
        if out.shape != res.shape:
            raise ValueError("output array has wrong dimensions")
        _engine.assign(out, res)
        return out
    return res


@implements(np.vdot)
def vdot(a, b, /):
    """Distributed ``numpy.vdot`` (conjugates ``a``, flattens both).  Collective."""

    _, (a, b) = _ops(a, b)
    if a.size != b.size:
        raise ValueError(f"cannot reshape array of size {b.size} into shape ({a.size},)")
    x = a.reshape((-1,)) if a.ndim != 1 else a
    y = b.reshape((-1,)) if b.ndim != 1 else b
    if x.dtype.kind == "c":
        x = np.conjugate(x)
    return matmul(x, y)


@implements(np.inner)
def inner(a, b, /):
    """Distributed ``numpy.inner``.  Collective."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return _engine.elementwise(np.multiply, [a, b])
    _, (a, b) = _ops(a, b)
    if a.shape[-1] != b.shape[-1]:
        ta, tb = _engine._shape_txt(a.shape), _engine._shape_txt(b.shape[::-1])
        raise ValueError(f"shapes {ta} and {tb} not aligned: {a.shape[-1]} (dim {a.ndim - 1}) != {b.shape[-1]} (dim 0)")
    res = _tensordot(a, b, [a.ndim - 1], [b.ndim - 1])
    return _engine.to_scalar(res) if res.ndim == 0 else res


@implements(np.outer)
def outer(a, b, out=None):
    """Distributed ``numpy.outer``: a broadcasting product, no communication but the alignment.  Collective."""
    _, (a, b) = _ops(a, b)
    x = a.reshape((a.size, 1))
    y = b.reshape((1, b.size))
    return _engine.elementwise(np.multiply, [x, y], out=None if out is None else (out,))


@implements(np.linalg.outer)
def linalg_outer(x1, x2, /):
    """Distributed ``numpy.linalg.outer`` (1-D operands only, as NumPy).  Collective."""
    if np.ndim(x1) != 1 or np.ndim(x2) != 1:
        raise ValueError(
            f"Input arrays must be one-dimensional, but they are x1.ndim={np.ndim(x1)} and x2.ndim={np.ndim(x2)}."
        )
    return outer(x1, x2)


@implements(np.kron)
def kron(a, b):
    """Distributed ``numpy.kron``: an interleaved broadcasting product, then a reshape.  Collective."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return _engine.elementwise(np.multiply, [a, b])
    _, (a, b) = _ops(a, b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + a.shape
    sb = (1,) * (nd - b.ndim) + b.shape
    x = a.reshape(tuple(v for n in sa for v in (n, 1)))
    y = b.reshape(tuple(v for n in sb for v in (1, n)))
    prod = _engine.elementwise(np.multiply, [x, y])
    return prod.reshape(tuple(p * q for p, q in zip(sa, sb)))


# ----------------------------------------------------------------- cross
def _numpy_cross_takes_2() -> bool:
    """Whether the installed NumPy's ``cross`` takes 2-vectors (deprecated in 2.0, an error from
    2.5 on): spmdarray follows it.  Not collective."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            np.cross(np.zeros(2), np.zeros(2))
        except ValueError:
            return False
    return True


_CROSS_TAKES_2 = _numpy_cross_takes_2()


def _comp(x, i):
    """Component ``i`` of the last axis: a view, or a NumPy scalar for a single vector."""
    v = x[..., i]
    return v._scalar() if v.ndim == 0 else v


def _arith(f, *xs):
    """``f`` on component views through the engine, or on NumPy scalars (single vectors) directly."""
    if any(_fetch.is_distributed(x) for x in xs):
        return _engine.elementwise(f, list(xs))
    return f(*xs)


@implements(np.cross)
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Distributed ``numpy.cross`` (elementwise on component views).  Collective."""
    if axis is not None:
        axisa, axisb, axisc = (axis,) * 3
    _, (a, b) = _ops(a, b)
    axisa = normalize_axis_index(axisa, a.ndim, msg_prefix="axisa")
    axisb = normalize_axis_index(axisb, b.ndim, msg_prefix="axisb")
    a = np.moveaxis(a, axisa, -1)
    b = np.moveaxis(b, axisb, -1)
    if not _CROSS_TAKES_2:  # (NumPy 2.5 on: 3-vectors only, as linalg.cross)
        _three_vectors(a.shape[-1], b.shape[-1])
    msg = "incompatible dimensions for cross product\n(dimension must be 2 or 3)"
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError(msg)
    if a.shape[-1] == 2 or b.shape[-1] == 2:
        warnings.warn(
            "Arrays of 2-dimensional vectors are deprecated. Use arrays of 3-dimensional vectors instead. "
            "(deprecated in NumPy 2.0)",
            DeprecationWarning,
            stacklevel=3,
        )
    shape = np.broadcast_shapes(a[..., 0].shape, b[..., 0].shape)
    if a.shape[-1] == 3 or b.shape[-1] == 3:
        shape += (3,)
        axisc = normalize_axis_index(axisc, len(shape), msg_prefix="axisc")
    dtype = np.promote_types(a.dtype, b.dtype)
    mul = lambda p, q: _arith(np.multiply, p, q)  # noqa: E731
    sub = lambda p, q: _arith(np.subtract, p, q)  # noqa: E731
    a0, a1, b0, b1 = _comp(a, 0), _comp(a, 1), _comp(b, 0), _comp(b, 1)
    c2 = sub(mul(a0, b1), mul(a1, b0))
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return c2

    cp = empty(shape, dtype, comm=a._st.ctx)
    if a.shape[-1] == 3 and b.shape[-1] == 3:
        a2, b2 = _comp(a, 2), _comp(b, 2)
        cp[..., 0] = sub(mul(a1, b2), mul(a2, b1))
        cp[..., 1] = sub(mul(a2, b0), mul(a0, b2))
    elif b.shape[-1] == 3:  # a2 = 0
        b2 = _comp(b, 2)
        cp[..., 0] = mul(a1, b2)
        cp[..., 1] = _arith(np.negative, mul(a0, b2))
    else:  # b2 = 0
        a2 = _comp(a, 2)
        cp[..., 0] = _arith(np.negative, mul(a2, b1))
        cp[..., 1] = mul(a2, b0)
    cp[..., 2] = c2
    return np.moveaxis(cp, -1, axisc)


@implements(np.linalg.cross)
def linalg_cross(x1, x2, /, *, axis=-1):
    """Distributed ``numpy.linalg.cross`` (3-vectors only, as NumPy).  Collective."""
    _three_vectors(np.shape(x1)[axis], np.shape(x2)[axis])
    return cross(x1, x2, axis=axis)


def _three_vectors(na: int, nb: int) -> None:
    """NumPy's ValueError unless both vector lengths are 3 (``linalg.cross``, and ``cross`` from
    NumPy 2.5 on).  Not collective."""
    if na != 3 or nb != 3:
        raise ValueError(
            f"Both input arrays must be (arrays of) 3-dimensional vectors, but they are {na} and {nb} "
            "dimensional instead."
        )


# ------------------------------------------------------ diagonal, trace
def _where_local(mask, x, zero, out=None):
    r = np.where(mask, x, zero)
    if out is None:
        return r
    out[...] = r
    return out


def diagonal(x, offset=0, axis1=0, axis2=1):
    """Diagonal of two axes, appended as the last axis (as ``numpy.diagonal``).  Collective.

    Masks the ``L x L`` square holding the diagonal with a distributed
    identity and sums it along ``axis2``: no gather, ``O(L*L)`` work.
    """

    a1 = normalize_axis_index(axis1, x.ndim, msg_prefix="axis1")
    a2 = normalize_axis_index(axis2, x.ndim, msg_prefix="axis2")
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    n1, n2 = x.shape[a1], x.shape[a2]
    perm = [k for k in range(x.ndim) if k not in (a1, a2)] + [a1, a2]
    y = x.transpose(perm)
    if offset >= 0:
        L = max(0, min(n1, n2 - offset))  # noqa: N806
        sq = y[..., :L, offset : offset + L]
    else:
        L = max(0, min(n1 + offset, n2))  # noqa: N806
        sq = y[..., -offset : -offset + L, :L]
    mask = eye(L, dtype=bool, comm=x._st.ctx)
    masked = _engine.elementwise(_where_local, [mask, sq, np.zeros((), x.dtype)])
    if x.dtype == bool:
        return masked.any(axis=-1)
    return masked.sum(axis=-1, dtype=x.dtype)


@implements(np.linalg.diagonal)
def linalg_diagonal(x, /, *, offset=0):
    """Distributed ``numpy.linalg.diagonal`` (last two axes).  Collective."""
    if np.ndim(x) < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    return diagonal(x, offset, -2, -1)


def trace(x, offset=0, axis1=0, axis2=1, dtype=None):
    """Sum along a diagonal (``numpy.trace``).  Collective."""
    d = diagonal(x, offset, axis1, axis2)
    return d.sum(axis=-1, dtype=dtype)


@implements(np.linalg.trace)
def linalg_trace(x, /, *, offset=0, dtype=None):
    """Distributed ``numpy.linalg.trace`` (last two axes).  Collective."""
    if np.ndim(x) < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    return trace(x, offset, -2, -1, dtype)


@implements(np.linalg.matrix_transpose)
def linalg_matrix_transpose(x, /):
    """View with the last two axes swapped.  Not collective."""
    if x.ndim < 2:
        raise ValueError("Input array must be at least 2-dimensional")
    return np.swapaxes(x, -1, -2)


@implements(np.linalg.matmul)
def linalg_matmul(x1, x2, /):
    """Distributed ``numpy.linalg.matmul``.  Collective."""
    return matmul_nd(x1, x2)


# ------------------------------------------------- vecdot, matvec, vecmat
def _gufunc_kwargs(name, kwargs):
    bad = set(kwargs) - {"dtype", "casting", "order", "subok"}
    for k in ("axes", "axis", "keepdims", "signature"):
        if k in kwargs and kwargs[k] in (np._NoValue, None, False):
            bad.discard(k)
    if bad:
        raise NotImplementedError(f"numpy.{name} on spmdarray arrays with keyword arguments {sorted(bad)}")
    return kwargs.get("dtype")


def _conj(x):
    return np.conjugate(x) if x.dtype.kind == "c" else x


def _sum_last(p, axis, dtype):
    if p.dtype == bool and dtype in (None, bool):
        return p.any(axis=axis)
    return p.sum(axis=axis, dtype=dtype or p.dtype)


def vecdot(x1, x2, out=None, axis=-1, **kwargs):
    """``numpy.vecdot``: ``sum(conj(x1) * x2, axis)`` (broadcasting).  Collective."""
    dtype = _gufunc_kwargs("vecdot", kwargs)
    _, (x1, x2) = _ops(x1, x2)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError(
            f"vecdot: Input operand {0 if x1.ndim == 0 else 1} does not have enough dimensions (has 0, gufunc core "
            "with signature (n),(n)->() requires 1)"
        )
    a = np.moveaxis(x1, axis, -1)
    b = np.moveaxis(x2, axis, -1)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(
            "vecdot: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n),(n)->() "
            f"(size {b.shape[-1]} is different from {a.shape[-1]})"
        )
    dt = np.dtype(dtype) if dtype is not None else np.vecdot(*_probe([((1,), a.dtype), ((1,), b.dtype)])).dtype
    p = _engine.elementwise(np.multiply, [_conj(a), b], dtype=dt)
    r = _sum_last(p, -1, dt)
    if out is not None:
        _engine.assign(out, r)
        return out
    return r


@implements(np.linalg.vecdot)
def linalg_vecdot(x1, x2, /, *, axis=-1):
    """Distributed ``numpy.linalg.vecdot``.  Collective."""
    return vecdot(x1, x2, axis=axis)


def _matrix_vector(name, x1, x2, out, kwargs):
    """``matvec`` (``(m,n),(n)->(m)``) or ``vecmat`` (``(n),(n,m)->(m)``): product and sum.  Collective."""
    dtype = _gufunc_kwargs(name, kwargs)
    _, (x1, x2) = _ops(x1, x2)
    mv = name == "matvec"
    sig = "(m,n),(n)->(m)" if mv else "(n),(n,m)->(m)"
    need = (2, 1) if mv else (1, 2)
    if x1.ndim < need[0] or x2.ndim < need[1]:
        raise ValueError(
            f"{name}: Input operand {0 if x1.ndim < need[0] else 1} does not have enough dimensions (gufunc core "
            f"with signature {sig})"
        )
    n1, n2 = x1.shape[-1], x2.shape[-1 if mv else -2]
    if n1 != n2:
        raise ValueError(
            f"{name}: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature {sig} "
            f"(size {n2} is different from {n1})"
        )
    probe = _probe([((1,) * need[0], x1.dtype), ((1,) * need[1], x2.dtype)])
    dt = np.dtype(dtype) if dtype is not None else getattr(np, name)(*probe).dtype
    if mv:
        ops, axis = [x1, x2.reshape(x2.shape[:-1] + (1, n2))], -1
    else:
        ops, axis = [_conj(x1).reshape(x1.shape + (1,)), x2], -2
    r = _sum_last(_engine.elementwise(np.multiply, ops, dtype=dt), axis, dt)
    if out is not None:
        _engine.assign(out, r)
        return out
    return r


def matvec(x1, x2, out=None, **kwargs):
    """``numpy.matvec``: ``(..., m, n) x (..., n) -> (..., m)`` as a broadcasting product and sum.  Collective."""
    return _matrix_vector("matvec", x1, x2, out, kwargs)


def vecmat(x1, x2, out=None, **kwargs):
    """``numpy.vecmat``: ``(..., n) x (..., n, m) -> (..., m)`` (conjugates ``x1``).  Collective."""
    return _matrix_vector("vecmat", x1, x2, out, kwargs)


GUFUNCS.update({np.vecdot: vecdot, np.matvec: matvec, np.vecmat: vecmat})


# ------------------------------------------------------------- multi_dot
@implements(np.linalg.multi_dot)
def multi_dot(arrays, *, out=None):
    """Distributed ``numpy.linalg.multi_dot`` (NumPy's cheapest order, SUMMA products).  Collective."""
    from numpy.linalg._linalg import _multi_dot_matrix_chain_order

    n = len(arrays)
    if n < 2:
        raise ValueError("Expecting at least two arrays.")
    ctx, arrays = _ops(*arrays)
    if n == 2:
        return _dot_2d(arrays[0], arrays[1], out=out)
    ndim_first, ndim_last = arrays[0].ndim, arrays[-1].ndim
    if ndim_first == 1:
        arrays[0] = arrays[0].reshape((1, arrays[0].shape[0]))
    if ndim_last == 1:
        arrays[-1] = arrays[-1].reshape((arrays[-1].shape[0], 1))
    for a in arrays:
        if a.ndim != 2:
            raise np.linalg.LinAlgError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    order = _multi_dot_matrix_chain_order(_probe([(a.shape, a.dtype) for a in arrays]), return_costs=False)

    def chain(i, j):
        if i == j:
            return arrays[i]
        return _dot_2d(chain(i, order[i, j]), chain(order[i, j] + 1, j))

    res = chain(0, n - 1)
    if ndim_first == 1 and ndim_last == 1:
        res = _engine.to_scalar(res) if res.size == 1 else res
        res = res if not _fetch.is_distributed(res) else res.reshape(())
    elif ndim_first == 1 or ndim_last == 1:
        res = res.reshape((-1,))
    if out is not None:
        _engine.assign(out, res)
        return out
    return res
