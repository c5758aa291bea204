"""Logic, comparison, dtype utilities and small main-namespace functions.

Everything elementwise runs through the engine (no communication beyond
what the operands' layouts need).  Dtype utilities read dtypes only (not
collective).  ``may_share_memory``/``shares_memory`` compare storages and
view maps (pure layout math, not collective).  ``array2string`` and friends
gather the array: the user asked for its text (large arrays fetch only the
edge items NumPy prints).
"""

from __future__ import annotations

import math

import numpy as np

from spmdarray.backend import backends as _backends
from spmdarray.core import fetch as _fetch
from spmdarray.core.array import ndarray
from spmdarray.core.conversion import text
from spmdarray.core.registry import implements, provides
from spmdarray.core.storage import Storage
from spmdarray.decomposition import Layout, block_bounds
from spmdarray.engine import elementwise as _engine
from spmdarray.routines.creation import _new, asarray, from_local, ones_like, zeros_like
from spmdarray.routines.manipulation.shape import redistribute
from spmdarray.routines.reductions import normalize_axes

__all__ = ["part_view", "Flags", "flags_of", "from_dlpack", "asarray_chkfinite", "isfortran"]


# ------------------------------------------------------------ elementwise
def _local(fn, **kw):
    """Block function ``f(a, ..., out=)`` for the engine from a NumPy function without ``out=``."""

    def f(*args, out=None):
        r = fn(*args, **kw)
        if out is None:
            return r
        out[...] = r
        return out

    f.__name__ = getattr(fn, "__name__", "f")
    return f


@implements(np.nan_to_num)
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """Distributed ``numpy.nan_to_num``; ``copy=False`` replaces in place.  Collective."""
    f = _local(np.nan_to_num, nan=nan, posinf=posinf, neginf=neginf)
    if not _fetch.is_distributed(x):
        return np.nan_to_num(x, copy=copy, nan=nan, posinf=posinf, neginf=neginf)
    if not copy:
        if x.dtype.kind in "fc":
            _engine.elementwise(f, [x], out=(x,))
        return x
    return _engine.elementwise(f, [x])


@implements(np.fix)
def fix(x, out=None):
    """Distributed ``numpy.fix`` (round towards zero).  Collective."""
    return _engine.elementwise(np.trunc, [x], out=None if out is None else (out,))


@implements(np.iscomplex)
def iscomplex(x):
    """Distributed ``numpy.iscomplex`` (nonzero imaginary part).  Collective."""
    if _fetch.is_distributed(x) and x.dtype.kind != "c":
        return zeros_like(x, dtype=bool)
    return _engine.elementwise(np.not_equal, [imag(x), 0])


@implements(np.isreal)
def isreal(x):
    """Distributed ``numpy.isreal`` (zero imaginary part).  Collective."""
    if _fetch.is_distributed(x) and x.dtype.kind != "c":
        return ones_like(x, dtype=bool)
    return _engine.elementwise(np.equal, [imag(x), 0])


def _check_inf_dtype(name, x) -> None:
    if np.dtype(x.dtype).kind == "c":
        raise TypeError(f"This operation is not supported for complex values because it would be ambiguous. ({name})")


@implements(np.isneginf)
def isneginf(x, out=None):
    """Distributed ``numpy.isneginf``.  Collective."""
    _check_inf_dtype("isneginf", x)
    return _engine.elementwise(
        np.logical_and,
        [_engine.elementwise(np.isinf, [x]), _engine.elementwise(np.signbit, [x])],
        out=None if out is None else (out,),
    )


@implements(np.isposinf)
def isposinf(x, out=None):
    """Distributed ``numpy.isposinf``.  Collective."""
    _check_inf_dtype("isposinf", x)
    neg = _engine.elementwise(np.signbit, [x])
    return _engine.elementwise(
        np.logical_and,
        [_engine.elementwise(np.isinf, [x]), _engine.elementwise(np.logical_not, [neg])],
        out=None if out is None else (out,),
    )


@implements(np.real)
def real(val):
    """``val.real``: a view for complex arrays.  Not collective."""
    return val.real


@implements(np.imag)
def imag(val):
    """``val.imag``: a view for complex arrays (zeros otherwise: collective).  See :func:`part_view`."""
    return val.imag


@implements(np.angle)
def angle(z, deg=False):
    """Distributed ``numpy.angle``.  Collective."""
    return _engine.elementwise(_local(np.angle, deg=deg), [z])


@implements(np.real_if_close)
def real_if_close(a, tol=100):
    """Distributed ``numpy.real_if_close``.  Collective (one all-reduce for complex input)."""
    if a.dtype.kind != "c":
        return a
    t = tol * np.finfo(a.dtype).eps if tol > 1 else tol
    small = _engine.elementwise(np.less, [_engine.elementwise(np.absolute, [a.imag]), t])
    if bool(small.all()):
        return a.real  # a view, as in NumPy
    return a


@provides("byteswap")
def byteswap(x, inplace: bool = False):
    """``x.byteswap(inplace)``: each rank swaps its block (device blocks through the host).

    Collective (no communication).
    """
    be = x._st.be

    swap = _local(lambda a: a.byteswap() if hasattr(a, "byteswap") else be.asarray(be.to_host(a).byteswap()))

    if inplace:
        _engine.elementwise(swap, [x], out=(x,))
        return x
    return _engine.elementwise(swap, [x])


# ----------------------------------------------------------- dtype utilities
@implements(np.min_scalar_type)
def min_scalar_type(a):
    """``numpy.min_scalar_type``: the dtype of an array of any size > 0-d; value-based for 0-d.

    Not collective, except for a distributed 0-d array (its value is broadcast).
    """
    if a.ndim:
        return a.dtype
    return np.min_scalar_type(a._scalar())


@implements(np.common_type)
def common_type(*arrays):
    """``numpy.common_type`` (reads dtypes only).  Not collective."""
    return np.common_type(*(np.empty(0, x.dtype) if _fetch.is_distributed(x) else x for x in arrays))


@implements(np.astype)
def astype(x, dtype, /, *, copy=True, device=None):
    """``numpy.astype``: ``x.astype(dtype, copy=copy)``.  Collective (no communication)."""
    if device is not None:
        x = x.to_device(device)
    return x.astype(dtype, copy=copy)


# ---------------------------------------------------------------- memory
def _root(st):
    part = getattr(st, "part", None)
    return (st._parent, part) if part is not None else (st, None)


def _ranges(x):
    """Per base axis, the index set of ``x``'s view as ``(first, step, count)``."""
    m = x._map
    out = [(s, 1, 1) for s in m.start]
    for (b, step), n in zip(m.axes, m.shape):
        if b >= 0:
            out[b] = (m.start[b], step, n)
    return out


def _progressions_meet(a, b, exact: bool) -> bool:
    (s1, d1, n1), (s2, d2, n2) = a, b
    if n1 == 0 or n2 == 0:
        return False
    lo1, hi1 = sorted((s1, s1 + (n1 - 1) * d1))
    lo2, hi2 = sorted((s2, s2 + (n2 - 1) * d2))
    lo, hi = max(lo1, lo2), min(hi1, hi2)
    if lo > hi:
        return False
    if not exact:
        return True
    d1, d2 = abs(d1) or 1, abs(d2) or 1
    # x = lo1 (mod d1), x = lo2 (mod d2), lo <= x <= hi
    g = math.gcd(d1, d2)
    if (lo2 - lo1) % g:
        return False
    lcm = d1 // g * d2
    # solve lo1 + d1*k = lo2 (mod d2)
    k = ((lo2 - lo1) // g * pow(d1 // g, -1, d2 // g)) % (d2 // g) if d2 // g > 1 else 0
    x0 = lo1 + d1 * k
    first = x0 + ((lo - x0 + lcm - 1) // lcm) * lcm
    return first <= hi


def _overlap(a, b, exact: bool) -> bool:
    if not (_fetch.is_distributed(a) and _fetch.is_distributed(b)):
        d = a if _fetch.is_distributed(a) else b
        other = b if d is a else a
        fn = np.shares_memory if exact else np.may_share_memory
        try:
            return bool(fn(d._st.alloc, np.asarray(other) if not hasattr(other, "__array_interface__") else other))
        except TypeError:
            return False
    (ra, pa), (rb, pb) = _root(a._st), _root(b._st)
    if ra is not rb or (pa is not None and pb is not None and pa != pb):
        return False
    if a.size == 0 or b.size == 0:
        return False
    return all(_progressions_meet(p, q, exact) for p, q in zip(_ranges(a), _ranges(b)))


@implements(np.may_share_memory)
def may_share_memory(a, b, /, max_work=None):
    """Whether two arrays are views of the same storage with overlapping bounds.  Not collective.

    Two distributed arrays are compared by storage and index bounds (pure
    layout math, the same answer on every rank).  A distributed array
    against a NumPy array answers for this rank's block only.
    """
    return _overlap(a, b, exact=False)


@implements(np.shares_memory)
def shares_memory(a, b, /, max_work=None):
    """Whether two arrays share an element (exact lattice test).  Not collective.

    See :func:`may_share_memory` for a NumPy operand.
    """
    return _overlap(a, b, exact=True)


# ---------------------------------------------------------- flags, views
class Flags:
    """``x.flags`` of a distributed array, computed from its global view.

    The contiguity flags describe the global array as if the base array
    were one C-ordered NumPy array (a fresh array is C-contiguous, its
    transpose F-contiguous, a strided slice neither); the local blocks are
    separate allocations.  Not collective.
    """

    __slots__ = ("c_contiguous", "f_contiguous", "owndata", "writeable", "aligned", "writebackifcopy")

    _KEYS = {
        "C_CONTIGUOUS": "c_contiguous",
        "C": "c_contiguous",
        "CONTIGUOUS": "c_contiguous",
        "F_CONTIGUOUS": "f_contiguous",
        "F": "f_contiguous",
        "FORTRAN": "f_contiguous",
        "OWNDATA": "owndata",
        "O": "owndata",
        "WRITEABLE": "writeable",
        "W": "writeable",
        "ALIGNED": "aligned",
        "A": "aligned",
        "WRITEBACKIFCOPY": "writebackifcopy",
        "X": "writebackifcopy",
        "FNC": "fnc",
        "FORC": "forc",
        "BEHAVED": "behaved",
        "B": "behaved",
        "CARRAY": "carray",
        "CA": "carray",
        "FARRAY": "farray",
        "FA": "farray",
    }

    def __init__(self, c: bool, f: bool, owndata: bool) -> None:
        self.c_contiguous = c
        self.f_contiguous = f
        self.owndata = owndata
        self.writeable = True
        self.aligned = True
        self.writebackifcopy = False

    contiguous = property(lambda self: self.c_contiguous)
    fortran = property(lambda self: self.f_contiguous)
    fnc = property(lambda self: self.f_contiguous and not self.c_contiguous)
    forc = property(lambda self: self.f_contiguous or self.c_contiguous)
    behaved = property(lambda self: self.aligned and self.writeable)
    carray = property(lambda self: self.behaved and self.c_contiguous)
    farray = property(lambda self: self.behaved and self.f_contiguous and not self.c_contiguous)

    def __getitem__(self, key: str) -> bool:
        try:
            return getattr(self, self._KEYS[key.upper()])
        except KeyError:
            raise KeyError(f"Unknown flag {key!r}") from None

    def __repr__(self) -> str:
        names = ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED", "WRITEBACKIFCOPY")
        return "\n".join(f"  {n} : {self[n]}" for n in names) + "\n"


@provides("flags_of")
def flags_of(x) -> Flags:
    """The :class:`Flags` of ``x``.  Not collective."""
    m = x._map
    base = m.base_shape
    st = x._st
    root, part = _root(st)
    unit = root.dtype.itemsize
    strides = []
    for b, step in m.axes:
        strides.append(0 if b < 0 else step * unit * math.prod(base[b + 1 :]))
    probe = np.lib.stride_tricks.as_strided(np.empty(1, np.dtype(x.dtype)), x.shape, tuple(strides))
    c, f = bool(probe.flags.c_contiguous), bool(probe.flags.f_contiguous)
    if part is not None and x.size > 1:
        c = f = False
    return Flags(c, f, m.is_identity and part is None)


def isfortran(a):
    """``numpy.isfortran``: F-contiguous and not C-contiguous (see :class:`Flags`).  Not collective.

    NumPy arrays and other objects go to ``numpy.isfortran`` (it does not dispatch).
    """
    if not _fetch.is_distributed(a):
        return np.isfortran(a)
    return flags_of(a).fnc


class _PartStorage(Storage):
    """The real or imaginary part of a complex storage: same memory, shared write count.

    Writes through either bump the parent's ``version``, so halos cached by
    the parent or by this part go stale together; both list the same messages
    in flight.
    """

    __slots__ = ("_parent", "part")

    @property
    def exposed(self) -> bool:
        return self._parent.exposed

    @exposed.setter
    def exposed(self, v: bool) -> None:
        self._parent.exposed = v

    @property
    def version(self):
        return self._parent.version

    @version.setter
    def version(self, v) -> None:
        self._parent.version = v


@provides("part_view")
def part_view(x, part: str):
    """``x.real``/``x.imag`` of a complex distributed array as a writable view.  Not collective."""

    parent, _ = _root(x._st)
    st = object.__new__(_PartStorage)
    st._parent = parent
    st.part = part
    st.ctx, st.be, st.layout = parent.ctx, parent.be, parent.layout
    st.dtype = np.empty(0, parent.dtype).real.dtype
    st.alloc = getattr(parent.alloc, part)
    st.origin, st.ghost = parent.origin, parent.ghost
    st.halo_valid = {}
    st.copies = None if parent.copies is None else {}
    st._views = {}
    st.flights = parent.flights  # one memory: messages in flight are the parent's too
    # Deferred values reading one storage are not seen by a write through the other:
    # operations reading either are computed at once (as for ``x.local``).
    parent.exposed = True
    return ndarray._new(st, x._map)


# ------------------------------------------------------------------- text
def _text(fn, a, opts: dict):
    given = {k: v for k, v in opts.items() if v is not None}
    with np.printoptions(**given):
        return text(a, fn)


@implements(np.array2string)
def array2string(a, max_line_width=None, precision=None, suppress_small=None, separator=" ", prefix="", **kw):
    """``numpy.array2string`` of the global array, the same on every rank.  Collective.

    Gathers the array (above the print threshold only the edge items that
    are printed).
    """
    opts = {k: kw.pop(k) for k in ("threshold", "edgeitems") if k in kw}
    return _text(
        lambda arr: np.array2string(
            arr, max_line_width, precision, suppress_small, separator=separator, prefix=prefix, **kw
        ),
        a,
        opts,
    )


@implements(np.array_repr)
def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """``numpy.array_repr`` of the global array.  Collective (see :func:`array2string`)."""
    return _text(lambda x: np.array_repr(x, max_line_width, precision, suppress_small), arr, {})


@implements(np.array_str)
def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """``numpy.array_str`` of the global array.  Collective (see :func:`array2string`)."""
    return _text(lambda x: np.array_str(x, max_line_width, precision, suppress_small), a, {})


# --------------------------------------------------------------- bit packs
def _regrid(x, axis: int, bounds_of):
    """``x`` redistributed so that the blocks along ``axis`` follow ``bounds_of(intervals)``."""

    lay = x._layout
    iv = lay.intervals[axis]
    if iv is None:
        return x
    new = list(lay.intervals)
    new[axis] = bounds_of(iv)
    return redistribute(x, Layout(lay.shape, lay.dims, lay.gaxis, lay.gfixed, tuple(new)))


def _bitwise_out(x, axis: int, n_out: int, out_bounds, local_fn, dtype):
    lay = x._layout
    new = list(lay.intervals)
    if new[axis] is not None:
        new[axis] = out_bounds
    shape = tuple(n_out if a == axis else n for a, n in enumerate(lay.shape))
    olay = Layout(shape, lay.dims, lay.gaxis, lay.gfixed, tuple(new))
    res = ndarray._new(Storage(x._st.ctx, olay, dtype), None)
    if olay.owned_size(x._st.ctx.rank):
        res._block[...] = local_fn(x._block)
    return res


def _on_host(x, fn, **kw):
    """``fn(block, **kw)`` computed on the host: CuPy's bit packing lacks some options.

    Only this rank's block is copied (never a gather).
    """
    be = x._st.be
    return lambda b: be.asarray(fn(be.to_host(b), **kw))


def _axis_arg(a, axis, name):
    if not np.issubdtype(a.dtype, np.integer) and a.dtype != bool:
        raise TypeError(f"Expected an input array of integer or boolean data type ({name})")
    if axis is None:
        return a.ravel(), 0
    (ax,) = normalize_axes(axis, a.ndim)
    return a, ax


@implements(np.packbits)
def packbits(a, /, axis=None, bitorder="big"):
    """Distributed ``numpy.packbits``.  Collective.

    The blocks along ``axis`` are first re-cut at multiples of 8 (moving
    at most 7 elements per block boundary), then each rank packs its block.
    """

    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    x, ax = _axis_arg(a, axis, "packbits")
    n = x.shape[ax]
    m = (n + 7) // 8

    def cut(iv):
        return tuple((min(8 * lo, n), min(8 * hi, n)) for lo, hi in block_bounds(m, len(iv)))

    x = _regrid(x, ax, cut)
    ob = x._layout.intervals[ax]
    ob = None if ob is None else block_bounds(m, len(ob))
    return _bitwise_out(x, ax, m, ob, _on_host(x, np.packbits, axis=ax, bitorder=bitorder), np.uint8)


@implements(np.unpackbits)
def unpackbits(a, /, axis=None, count=None, bitorder="big"):
    """Distributed ``numpy.unpackbits``.  Collective (no communication unless ``count`` pads)."""
    if a.dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    if count is not None:
        count = int(count)
    x, ax = _axis_arg(a, axis, "unpackbits")
    n = x.shape[ax]
    iv = x._layout.intervals[ax]
    ob = None if iv is None else tuple((8 * lo, 8 * hi) for lo, hi in iv)
    res = _bitwise_out(x, ax, 8 * n, ob, _on_host(x, np.unpackbits, axis=ax, bitorder=bitorder), np.uint8)
    if count is None:
        return res
    if count < 0 and -count > 8 * n:
        raise ValueError("-count larger than number of elements")
    keep = 8 * n + count if count < 0 else count
    key = tuple(slice(0, min(keep, 8 * n)) if d == ax else slice(None) for d in range(res.ndim))
    if keep <= 8 * n:
        return res[key].copy()

    shape = tuple(keep if d == ax else s for d, s in enumerate(res.shape))
    out = _new(shape, np.uint8, res._st.ctx, fill=0)
    out[key] = res
    return out


@implements(np.asarray_chkfinite)
def asarray_chkfinite(a, dtype=None, order=None, *, comm=None):
    """:func:`spmdarray.asarray`, raising ValueError on every rank if any element is NaN or infinite.

    Collective (one all-reduce of a bool for float and complex arrays).
    """

    x = asarray(a, dtype=dtype, comm=comm)
    if x.dtype.kind in "fc" and not bool(_engine.elementwise(np.isfinite, [x]).all()):
        raise ValueError("array must not contain infs or NaNs")
    return x


# ---------------------------------------------------------------- dlpack
def from_dlpack(x, /, *, device=None, copy=None):
    """A distributed array from each rank's DLPack-capable block.  Collective.

    Every rank passes its own block (any object with ``__dlpack__``); the
    blocks are wrapped like :func:`spmdarray.from_local` (stacked along
    axis 0 in rank order; no copy unless ``copy=True``).  A spmdarray array
    is returned as is (a copy with ``copy=True``).
    """

    if _fetch.is_distributed(x):
        out = x.copy() if copy else x
        return out if device is None else out.to_device(device)
    dev = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else 1
    if dev in (2, 3, 10, 13):  # CUDA, CUDA host, ROCm, CUDA managed
        block = _backends._cupy_module().from_dlpack(x)
        if copy:
            block = block.copy()
    else:
        block = np.from_dlpack(x, copy=copy)
    out = from_local(block)
    return out if device is None else out.to_device(device)
