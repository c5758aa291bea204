"""Miscellaneous numerics: windows, special functions, polynomials, per-line application.

* Window functions (``bartlett``, ``blackman``, ``hamming``, ``hanning``,
  ``kaiser``) and ``vander`` create distributed arrays: each rank computes
  its own block with NumPy's formula (no communication).
* ``i0``, ``sinc``, ``angle``, ``real``, ``imag`` and ``interp`` (with small
  replicated sample points) work block by block.
* ``unwrap`` is a prefix sum across ranks; ``trim_zeros`` finds its bounds
  with distributed reductions and returns a view; ``real_if_close`` is one
  reduction.
* ``polyval`` and ``polyfit`` are distributed in ``x`` (``polyfit`` solves
  the least-squares problem by a tall-skinny QR: one small all-gather of
  triangular factors); the other polynomial functions take small coefficient
  arrays and are replicated.
* ``apply_along_axis`` moves the axis local (a pencil, as the FFT does) and
  applies the function line by line; ``apply_over_axes`` and ``piecewise``
  compose distributed operations.
"""

from __future__ import annotations

import math
import operator
import warnings

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from spmdarray.comm import agree_gathered, allgather_object
from spmdarray.core import fetch as _fetch
from spmdarray.core.array import ndarray
from spmdarray.core.registry import implements
from spmdarray.core.storage import Storage
from spmdarray.decomposition import Layout
from spmdarray.engine import elementwise as _engine
from spmdarray.routines.creation import array, generate, ones, zeros, zeros_like
from spmdarray.routines.elementwise_functions import copyto
from spmdarray.routines.manipulation.pencil import pencil_layout, to_pencil
from spmdarray.routines.manipulation.shape import redistribute
from spmdarray.routines.scans import cumsum, diff

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser", "poly", "roots", "vander"]


# ------------------------------------------------------------------ windows
def _window(M, formula, comm, backend):
    values = np.array([0.0, M])
    dt = values.dtype
    M = values[1]
    if M < 1:
        return zeros((0,), dt, comm=comm, backend=backend)
    if M == 1:
        return ones((1,), dt, comm=comm, backend=backend)
    start = 1 - M
    n_len = int(math.ceil((M - start) / 2))  # the length of numpy.arange(1 - M, M, 2)

    def fill(box, xp):
        lo, hi = box[0]
        n = start + xp.arange(lo, hi).astype(dt) * 2.0
        return formula(n, M, xp)

    return generate((n_len,), dt, fill, comm, backend)


def bartlett(M, *, comm=None, backend=None):
    """Distributed ``numpy.bartlett`` window (each rank computes its block).  Collective, no communication."""
    return _window(M, lambda n, M, xp: xp.where(n <= 0, 1 + n / (M - 1), 1 - n / (M - 1)), comm, backend)


def blackman(M, *, comm=None, backend=None):
    """Distributed ``numpy.blackman`` window.  Collective, no communication."""
    pi = np.pi
    return _window(
        M,
        lambda n, M, xp: 0.42 + 0.5 * xp.cos(pi * n / (M - 1)) + 0.08 * xp.cos(2.0 * pi * n / (M - 1)),
        comm,
        backend,
    )


def hamming(M, *, comm=None, backend=None):
    """Distributed ``numpy.hamming`` window.  Collective, no communication."""
    return _window(M, lambda n, M, xp: 0.54 + 0.46 * xp.cos(np.pi * n / (M - 1)), comm, backend)


def hanning(M, *, comm=None, backend=None):
    """Distributed ``numpy.hanning`` window.  Collective, no communication."""
    return _window(M, lambda n, M, xp: 0.5 + 0.5 * xp.cos(np.pi * n / (M - 1)), comm, backend)


def kaiser(M, beta, *, comm=None, backend=None):
    """Distributed ``numpy.kaiser`` window.  Collective, no communication."""

    values = np.array([0.0, M, beta])
    dt = values.dtype
    M, beta = values[1], values[2]
    if M == 1:
        return ones((1,), dt, comm=comm, backend=backend)
    n_len = max(0, int(math.ceil(M)))
    alpha = (M - 1) / 2.0
    i0_beta = np.i0(beta)

    def fill(box, xp):
        lo, hi = box[0]
        n = xp.arange(lo, hi).astype(dt)
        return xp.i0(beta * xp.sqrt(1 - ((n - alpha) / alpha) ** 2.0)) / i0_beta

    return generate((n_len,), dt, fill, comm, backend)


# ------------------------------------------------------- blockwise functions
def _blockwise(f):
    """An ``elementwise`` callable: ``f`` on each block, written into ``out``."""

    def run(a, out=None):
        r = f(a)
        if out is None:
            return r
        out[...] = r
        return out

    return run


@implements(np.i0)
def i0(x):
    """Modified Bessel function of order 0, block by block.  Collective (no communication)."""
    return _engine.elementwise(_blockwise(np.i0), [x])


@implements(np.sinc)
def sinc(x):
    """Normalized sinc, block by block.  Collective (no communication)."""
    return _engine.elementwise(_blockwise(np.sinc), [x])


def _small(v):
    """A small (replicated) argument as a NumPy array."""
    return np.asarray(v) if _fetch.is_distributed(v) else v


@implements(np.interp)
def interp(x, xp, fp, left=None, right=None, period=None):
    """Distributed ``x``, replicated sample points ``xp``/``fp``.

    Collective (no communication for a distributed ``x``).  ``xp`` and ``fp``
    are held whole on every rank (gathered if distributed): they must be
    small.
    """
    xp_h, fp_h = np.asarray(_small(xp)), np.asarray(_small(fp))
    if not _fetch.is_distributed(x):
        return np.interp(x, xp_h, fp_h, left, right, period)
    be = x._st.be
    dev = {}

    def f(b):
        if isinstance(b, np.ndarray) or not be.is_device:
            return np.interp(b, xp_h, fp_h, left, right, period)
        if not dev:
            dev["xp"], dev["fp"] = be.asarray(xp_h), be.asarray(fp_h)
        return np.interp(b, dev["xp"], dev["fp"], left, right, period)

    return _engine.elementwise(_blockwise(f), [x])


@implements(np.unwrap)
def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    """Unwrap by changing jumps above ``discont`` to their ``period`` complement.

    Collective: NumPy's algorithm on distributed arrays; the corrections are
    summed by a prefix scan across ranks (``cumsum``), and ``diff`` moves
    only edge cells.  The prefix sum adds per-rank partial sums, so results
    may differ from NumPy's in the last bits.
    """

    nd = p.ndim
    axis = normalize_axis_index(axis, nd)
    dd = diff(p, axis=axis)
    if discont is None:
        discont = period / 2
    slice1 = [slice(None, None)] * nd
    slice1[axis] = slice(1, None)
    slice1 = tuple(slice1)
    dtype = np.result_type(dd.dtype, period)
    if np.issubdtype(dtype, np.integer):
        interval_high, rem = divmod(period, 2)
        boundary_ambiguous = rem == 0
    else:
        interval_high = period / 2
        boundary_ambiguous = True
    interval_low = -interval_high
    ddmod = np.mod(dd - interval_low, period) + interval_low
    if boundary_ambiguous:
        copyto(ddmod, interval_high, where=(ddmod == interval_low) & (dd > 0))
    ph_correct = ddmod - dd
    copyto(ph_correct, 0, where=np.abs(dd) < discont)
    up = p.astype(dtype)
    if p.shape[axis] > 1:
        up[slice1] = p[slice1] + cumsum(ph_correct, axis)
    return up


@implements(np.trim_zeros)
def trim_zeros(filt, trim="fb", axis=None):
    """View without the leading/trailing zero hyperplanes.  Collective (a few reductions).

    The bounds along each axis come from a distributed ``any`` over the
    other axes and ``argmax`` of the result; the array itself never moves.
    """
    trim = trim.lower()
    if trim not in {"fb", "bf", "f", "b"}:
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    nd = filt.ndim
    axes = tuple(range(nd)) if axis is None else normalize_axis_tuple(axis, nd, argname="axis")
    if not axes:
        return filt
    nz = filt != 0 if filt.dtype != bool else filt
    start, stop = [0] * nd, [0] * nd
    found = filt.size > 0 and bool(np.any(nz))
    if found:
        for a in axes:
            others = tuple(k for k in range(nd) if k != a)
            line = np.any(nz, axis=others) if others else nz
            start[a] = int(np.argmax(line))
            stop[a] = filt.shape[a] - int(np.argmax(line[::-1]))
        if "f" not in trim:
            start = [None] * nd
        if "b" not in trim:
            stop = [None] * nd
    sl = tuple(slice(start[k], stop[k]) if k in axes else slice(None) for k in range(nd))
    return filt[sl]


# --------------------------------------------------------------- polynomials
def _wrap_like(ref, res):
    """A NumPy result as a distributed array on ``ref``'s communicator (each rank keeps its block)."""

    if isinstance(res, np.ndarray):
        return array(res, comm=ref._st.ctx.user_comm, backend=ref._st.be.name)
    return res


def _replicated(func):
    """``func`` computed by NumPy on small arguments held whole on every rank."""

    def impl(*args, **kwargs):
        ref = next((v for v in (*args, *kwargs.values()) if _fetch.is_distributed(v)), None)
        res = func(*(_small(a) for a in args), **{k: _small(v) for k, v in kwargs.items()})
        if ref is None:
            return res
        if isinstance(res, tuple):
            return tuple(_wrap_like(ref, r) for r in res)
        return _wrap_like(ref, res)

    impl.__name__ = func.__name__
    impl.__doc__ = (
        f"``numpy.{func.__name__}`` on small coefficient arrays.  Collective.\n\n"
        "Replicated: distributed arguments are gathered whole onto every rank, NumPy computes the result, "
        "and array results come back as distributed arrays."
    )
    return impl


# NumPy's ``poly`` and ``roots`` do not dispatch a spmdarray argument (their
# dispatchers iterate over it), so spmdarray exports its own; they are
# registered too, so that the coverage table lists them (as replicated).
poly = implements(np.poly, replicated=True)(_replicated(np.poly))
roots = implements(np.roots, replicated=True)(_replicated(np.roots))

for _f in (np.polyadd, np.polysub, np.polymul, np.polyder, np.polyint, np.polydiv):
    implements(_f, replicated=True)(_replicated(_f))


@implements(np.polyval)
def polyval(p, x):
    """Polynomial ``p`` (small, replicated) at distributed points ``x``, by Horner's rule.

    Collective (no communication besides gathering a distributed ``p``).
    """
    p = np.asarray(_small(p))
    if not _fetch.is_distributed(x):
        return np.polyval(p, x)

    y = zeros_like(x)
    for pv in p:
        y = y * x + pv
    return y


def _local_rows(v, lay, ctx):
    """This rank's rows of ``v`` (distributed or NumPy) for the 1-D row layout ``lay``, on the host."""

    lo, hi = lay.block(ctx.rank)[0]
    if not _fetch.is_distributed(v):
        return np.asarray(v)[lo:hi]
    rl = Layout(v.shape, lay.dims, (0,), (None,), (lay.intervals[0],) + (None,) * (v.ndim - 1))
    r = redistribute(v, rl)
    return r._st.be.to_host(r._block)


@implements(np.polyfit)
def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares polynomial fit of distributed samples.

    Collective.  NumPy's scaled Vandermonde least-squares problem, solved by
    a tall-skinny QR: each rank factors its rows of ``[lhs | y]``, the small
    triangular factors are all-gathered and factored again.  The
    coefficients (and ``cov``, ``s`` ...) are small and replicated: they come
    back as distributed arrays built from the same values on every rank.
    Results agree with NumPy's up to rounding.
    """

    ref = next(v for v in (x, y, w) if _fetch.is_distributed(v))
    ctx = ref._st.ctx
    if not _fetch.is_distributed(x):
        x = array(np.asarray(x), comm=ctx.user_comm, backend=ref._st.be.name)
    order = int(deg) + 1
    xdt = np.result_type(x.dtype, 0.0)
    ydt = np.result_type(y.dtype if hasattr(y, "dtype") else np.asarray(y).dtype, 0.0)
    ynd, yshape = np.ndim(y), np.shape(y)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.size == 0:
        raise TypeError("expected non-empty vector for x")
    if ynd < 1 or ynd > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != yshape[0]:
        raise TypeError("expected x and y to have same length")
    if w is not None:
        if np.ndim(w) != 1:
            raise TypeError("expected a 1-d array for weights")
        if np.shape(w)[0] != yshape[0]:
            raise TypeError("expected w and y to have the same length")
    if rcond is None:
        rcond = len(x) * np.finfo(xdt).eps
    lay = Layout.balanced(x.shape, ctx.size)
    xr = redistribute(x, lay)
    xl = xr._st.be.to_host(xr._block).astype(xdt)
    yl = _local_rows(y, lay, ctx).astype(np.result_type(xdt, ydt))
    lhs = np.vander(xl, order)
    rhs = yl
    if w is not None:
        wl = _local_rows(w, lay, ctx) + 0.0
        lhs = lhs * wl[:, np.newaxis]
        rhs = rhs * (wl[:, np.newaxis] if rhs.ndim == 2 else wl)
    colsq = allgather_object(ctx, (lhs * lhs).sum(axis=0))
    scale = np.sqrt(np.sum(np.stack(colsq), axis=0))
    lhs = lhs / scale
    rhs2 = rhs.reshape(len(rhs), yshape[1] if ynd == 2 else 1)
    k = rhs2.shape[1]
    both = np.concatenate([lhs, rhs2.astype(np.result_type(lhs, rhs2))], axis=1)
    r_loc = np.linalg.qr(both, mode="r") if len(both) else np.zeros((0, order + k), both.dtype)
    stack = np.concatenate(allgather_object(ctx, r_loc), axis=0)
    r = np.linalg.qr(stack, mode="r")
    R = np.zeros((order + k, order + k), r.dtype)
    R[: r.shape[0]] = r[: order + k]
    r11, r12, r22 = R[:order, :order], R[:order, order:], R[order:, order:]
    c, _, rank, s = np.linalg.lstsq(r11, r12 if ynd == 2 else r12[:, 0], rcond)
    if rank == order and len(x) > order:
        resids = (np.abs(r22) ** 2).sum(axis=0).real
    else:
        resids = np.empty(0, np.finfo(R.dtype).dtype)
    c = (c.T / scale).T
    if rank != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning, stacklevel=2)
    wrap = lambda v: _wrap_like(ref, v)  # noqa: E731
    if full:
        return wrap(c), wrap(resids), rank, wrap(s), rcond
    if cov:
        if R.dtype.kind == "c":
            raise NotImplementedError("numpy.polyfit(cov=True) with complex data on spmdarray arrays")
        vbase = np.linalg.inv(np.dot(r11.T, r11))
        vbase /= np.outer(scale, scale)
        if cov == "unscaled":
            fac = 1
        else:
            if len(x) <= order:
                raise ValueError("the number of data points must exceed order to scale the covariance matrix")
            fac = resids / (len(x) - order)
        if ynd == 1:
            return wrap(c), wrap(vbase * fac)
        return wrap(c), wrap(vbase[:, :, np.newaxis] * fac)
    return wrap(c)


def vander(x, N=None, increasing=False, *, comm=None, backend=None):
    """Distributed Vandermonde matrix of distributed (or replicated) ``x``.

    Collective.  The result is split by rows only (each row is whole on its
    rank), so the columns are NumPy's running products, bit for bit; ``x``
    is redistributed to the row blocks (a NumPy ``x`` is split with no
    communication).
    """

    if not _fetch.is_distributed(x):
        x = array(np.asarray(x), comm=comm, backend=backend)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = len(x) if N is None else operator.index(N)
    if n < 0:
        raise ValueError("negative dimensions are not allowed")
    ctx = x._st.ctx
    v = ndarray._new(Storage(ctx, pencil_layout((len(x), n), {1}, ctx.size), np.promote_types(x.dtype, int)), None)
    tmp = v[:, ::-1] if not increasing else v
    if n > 0:
        tmp[:, 0] = 1
    if n > 1:
        tmp[:, 1:] = x[:, None]
        np.multiply.accumulate(tmp[:, 1:], out=tmp[:, 1:], axis=1)
    return v


implements(np.vander)(vander)


# ------------------------------------------------------- per-line application
@implements(np.apply_along_axis)
def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` on every 1-D line along ``axis``.

    Collective.  The array is redistributed so that ``axis`` is whole on
    every rank (unless it already is), NumPy's ``apply_along_axis`` runs on
    each block, and the result comes back in the balanced layout of its
    shape: at most two redistributions.  ``func1d`` must give the same shape
    and dtype on every line (as NumPy requires).
    """

    nd = arr.ndim
    axis = normalize_axis_index(axis, nd)
    if any(n == 0 for k, n in enumerate(arr.shape) if k != axis):
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    p, _ = to_pencil(arr, (axis,))
    lay = p._layout
    ctx = p._st.ctx
    box = lay.block(ctx.rank)
    mine = lay.holds(ctx.rank) and all(hi > lo for k, (lo, hi) in enumerate(box) if k != axis)
    res = None
    info = None
    err = None
    if mine:
        try:
            res = np.apply_along_axis(func1d, axis, p._block, *args, **kwargs)
            info = (tuple(res.shape[axis : axis + res.ndim - nd + 1]), res.dtype.str)
        except Exception as e:  # noqa: BLE001 - func1d failed on a line of this block: raised on every rank
            err = e
    infos = [i for i in agree_gathered(ctx, err, info) if i is not None]
    if len(set(infos)) != 1:
        raise ValueError(f"apply_along_axis: func1d gave different result shapes or dtypes on different lines: {infos}")
    core, dt = infos[0]
    m = len(core)
    out_shape = arr.shape[:axis] + core + arr.shape[axis + 1 :]

    def newax(g):
        if g is None or g == axis:
            return None
        return g if g < axis else g + m - 1

    out_lay = Layout(
        out_shape,
        lay.dims,
        tuple(newax(g) for g in lay.gaxis),
        lay.gfixed,
        lay.intervals[:axis] + (None,) * m + lay.intervals[axis + 1 :],
    )
    out = ndarray._new(Storage(ctx, out_lay, np.dtype(dt)), None)
    if mine and out_lay.owned_size(ctx.rank):
        out._block[...] = res
    return redistribute(out, Layout.balanced(out_shape, ctx.size))


@implements(np.apply_over_axes)
def apply_over_axes(func, a, axes):
    """NumPy's ``apply_over_axes``: ``func(a, axis)`` repeatedly on the distributed array.

    Collective when ``func`` is (``func`` gets the whole distributed array).
    """
    val = a
    N = a.ndim
    if np.ndim(axes) == 0:
        axes = (axes,)
    for axis in axes:
        if axis < 0:
            axis = N + axis
        res = func(val, axis)
        if res.ndim == val.ndim:
            val = res
        else:
            res = np.expand_dims(res, axis)
            if res.ndim == val.ndim:
                val = res
            else:
                raise ValueError("function is not returning an array of the correct shape")
    return val


@implements(np.piecewise)
def piecewise(x, condlist, funclist, *args, **kw):
    """Distributed ``numpy.piecewise``.  Collective (no communication besides conditions' layouts).

    Deviation: a callable in ``funclist`` is called once with the whole
    distributed ``x`` (it must be elementwise) and its values are kept where
    its condition holds; NumPy calls it with only the selected elements.
    """

    n2 = len(funclist)
    if (
        _fetch.is_distributed(condlist)
        or np.isscalar(condlist)
        or (not isinstance(condlist[0], (list, np.ndarray)) and not _fetch.is_distributed(condlist[0]) and x.ndim != 0)
    ):
        condlist = [condlist]
    conds = []
    for c in condlist:
        if _fetch.is_distributed(c):
            conds.append(c if c.dtype == bool else c.astype(bool))
        else:
            conds.append(np.asarray(c, dtype=bool))
    n = len(conds)
    if n == n2 - 1:
        anyc = conds[0]
        for c in conds[1:]:
            anyc = np.logical_or(anyc, c)
        conds.append(np.logical_not(anyc))
        n += 1
    elif n != n2:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    y = zeros_like(x)
    for cond, func in zip(conds, funclist):
        if callable(func):
            val = func(x, *args, **kw)
        else:
            val = func
        _engine.elementwise(np.positive, [val], out=(y,), where=cond, casting="unsafe", dtype=y.dtype)
    return y
