"""Creation functions: ``indices``, ``mgrid``, ``ogrid``, ``fromfunction``,
``logspace``, ``geomspace``, and the layout-only conversions
``asfortranarray``, ``require``, ``asarray_chkfinite``.

Grids are generated per block from their closed form: no communication.
Blocks are always stored in C order, so the order requests of
``asfortranarray`` and ``require`` change nothing (the values are the same).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from spmdarray.routines.creation import arange, asarray, generate, linspace
from spmdarray.routines.manipulation.diagonals import diag_indices, mask_indices, tri, tril_indices, triu_indices
from spmdarray.routines.manipulation.joining import stack

__all__ = [
    "indices",
    "mgrid",
    "ogrid",
    "fromfunction",
    "logspace",
    "geomspace",
    "asfortranarray",
    "require",
    "diag_indices",
    "tri",
    "tril_indices",
    "triu_indices",
    "mask_indices",
]


def _axis_values(n_axes: int, axis: int, dtype, shape):
    def fill(box, xp):
        lo, hi = box[axis]
        shp = [1] * n_axes
        shp[axis] = hi - lo
        v = xp.arange(lo, hi).astype(dtype).reshape(shp)
        return xp.broadcast_to(v, tuple(h - lo_ for lo_, h in box)).copy()

    return fill


def indices(dimensions, dtype=int, sparse=False, *, comm=None, backend=None):
    """Grid of indices (``sparse``: a tuple of broadcastable arrays).  Collective.

    Generated per block: no communication.
    """
    dimensions = tuple(operator.index(d) for d in dimensions)
    n = len(dimensions)
    if sparse:
        out = []
        for i, d in enumerate(dimensions):
            shp = (1,) * i + (d,) + (1,) * (n - i - 1)
            out.append(generate(shp, dtype, _axis_values(n, i, dtype, shp), comm, backend))
        return tuple(out)

    def fill(box, xp):
        (k0, k1), rest = box[0], box[1:]
        parts = []
        for k in range(k0, k1):
            shp = [1] * n
            lo, hi = rest[k]
            shp[k] = hi - lo
            v = xp.arange(lo, hi).astype(dtype).reshape(shp)
            parts.append(xp.broadcast_to(v, tuple(h - lo_ for lo_, h in rest)))
        if not parts:
            return xp.empty((0,) + tuple(h - lo_ for lo_, h in rest), dtype)
        return xp.stack(parts)

    return generate((n,) + dimensions, dtype, fill, comm, backend)


class _Grid:
    """``mgrid`` (dense) and ``ogrid`` (sparse): NumPy's ``nd_grid``, distributed.

    Index with slices (a complex step ``5j`` means that many points, end
    included).  Collective: every rank must index in the same order.  The
    arrays live on the default communicator.
    """

    def __init__(self, sparse: bool) -> None:
        self.sparse = sparse

    def __getitem__(self, key):
        if isinstance(key, slice):
            return self._one(key)
        size = []
        num_list = [0]
        for kk in key:
            step, start, stop = kk.step, kk.start, kk.stop
            start = 0 if start is None else start
            step = 1 if step is None else step
            if isinstance(step, (np.complexfloating, complex)):
                step = abs(step)
                size.append(int(step))
            else:
                size.append(math.ceil((stop - start) / step))
            num_list += [start, stop, step]
        typ = np.result_type(*num_list)
        if self.sparse:
            nn = [arange(n, dtype=typ) for n in size]
        else:
            nn = indices(size, typ)
        res = []
        for k, kk in enumerate(key):
            step, start = kk.step, kk.start
            start = 0 if start is None else start
            step = 1 if step is None else step
            if isinstance(step, (np.complexfloating, complex)):
                step = int(abs(step))
                if step != 1:
                    step = (kk.stop - start) / float(step - 1)
            res.append(nn[k] * step + start)
        if self.sparse:
            out = []
            for k in range(len(size)):
                slobj = [None] * len(size)
                slobj[k] = slice(None)
                out.append(res[k][tuple(slobj)])
            return tuple(out)
        if not res:
            return nn

        return stack(res)

    def _one(self, key):
        step, stop, start = key.step, key.stop, key.start
        start = 0 if start is None else start
        if isinstance(step, (np.complexfloating, complex)):
            step_float = abs(step)
            step = length = int(step_float)
            if step != 1:
                step = (key.stop - start) / float(step - 1)
            typ = np.result_type(start, stop, step_float)
            return arange(0, length, 1, dtype=typ) * step + start
        return arange(start, stop, step)

    def __len__(self) -> int:
        return 0


mgrid = _Grid(False)
ogrid = _Grid(True)


def fromfunction(function, shape, *, dtype=float, like=None, comm=None, **kwargs):
    """``function(*indices(shape))`` on distributed index arrays.  Collective.

    ``function`` receives spmdarray arrays, so it must use operations spmdarray
    distributes (arithmetic, ufuncs ...).
    """
    args = indices(shape, dtype=dtype, comm=comm)
    return function(*args, **kwargs)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0, *, comm=None):
    """``base ** linspace(start, stop, num)``.  Collective (no communication).

    Scalar ``start``, ``stop`` and ``base`` only (array arguments raise
    ``NotImplementedError``).
    """
    if np.ndim(base) or np.ndim(start) or np.ndim(stop):
        raise NotImplementedError("logspace with array start, stop or base: use scalars")
    if operator.index(axis) not in (0, -1):
        raise np.exceptions.AxisError(axis, 1)
    y = linspace(start, stop, num=num, endpoint=endpoint, comm=comm)
    p = np.power(base, y)
    return p if dtype is None else p.astype(dtype, copy=False)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0, *, comm=None):
    """Numbers spaced evenly on a log scale (NumPy's algorithm).  Collective.

    Scalar ``start`` and ``stop`` only.
    """
    if np.ndim(start) or np.ndim(stop):
        raise NotImplementedError("geomspace with array start or stop: use scalars")
    if operator.index(axis) not in (0, -1):
        raise np.exceptions.AxisError(axis, 1)
    start = np.asanyarray(start)
    stop = np.asanyarray(stop)
    if np.any(start == 0) or np.any(stop == 0):
        raise ValueError("Geometric sequence cannot include zero")
    dt = np.result_type(start, stop, float(num), np.zeros((), dtype))
    dtype = dt if dtype is None else np.dtype(dtype)
    start = start.astype(dt, copy=True)
    stop = stop.astype(dt, copy=True)
    out_sign = np.sign(start)
    start /= out_sign
    stop = stop / out_sign
    result = logspace(
        np.log10(start)[()], np.log10(stop)[()], num=num, endpoint=endpoint, base=10.0, dtype=dt, comm=comm
    )
    if num > 0:
        result[0] = start
        if num > 1 and endpoint:
            result[-1] = stop
    result = result * out_sign[()]
    return result.astype(dtype, copy=False)


def asfortranarray(a, dtype=None, *, like=None, comm=None):
    """``a`` itself (or a converted copy): blocks are laid out in C order only.  Collective.

    The values are NumPy's; only the memory order of blocks differs, which
    spmdarray does not expose.
    """
    return asarray(a, dtype=dtype, comm=comm)


_REQ = {
    "C": "C",
    "C_CONTIGUOUS": "C",
    "CONTIGUOUS": "C",
    "F": "F",
    "F_CONTIGUOUS": "F",
    "FORTRAN": "F",
    "A": "A",
    "ALIGNED": "A",
    "W": "W",
    "WRITEABLE": "W",
    "O": "O",
    "OWNDATA": "O",
    "E": "E",
    "ENSUREARRAY": "E",
}


def require(a, dtype=None, requirements=None, *, like=None, comm=None):
    """``a`` as a distributed array meeting ``requirements``.  Collective.

    Order and alignment requests are always met; ``'O'`` (own data) copies a
    view; ``'W'`` copies a read-only broadcast view.
    """
    if requirements is None:
        reqs = set()
    else:
        reqs = {_REQ[x.upper()] for x in requirements}
    if "C" in reqs and "F" in reqs:
        raise ValueError("Cannot specify both C and Fortran contiguous.")
    x = asarray(a, dtype=dtype, comm=comm)
    if ("O" in reqs and not x._map.is_identity) or ("W" in reqs and _read_only(x)):
        x = x.copy()
    return x


def _read_only(x) -> bool:
    return any(b < 0 and n > 1 for (b, _), n in zip(x._map.axes, x._map.shape))
