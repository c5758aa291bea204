"""The distributed ``ndarray``: a slotted wrapper, not a NumPy subclass.

An instance is a *view*: a :class:`~spmdarray.core.storage.Storage` (the base
array's per-rank allocation) plus a :class:`~spmdarray.decomposition.ViewMap`
from view coordinates to base coordinates.  Basic indexing, ``.T`` and
``transpose`` make new views of the same storage, so writes through any view
are seen by all of them.
"""

from __future__ import annotations

import builtins
import math
import operator
import warnings

import numpy as np

from spmdarray.core.compiled import install
from spmdarray.core.conversion import gather, text
from spmdarray.core.element import NOT_ELEMENT, read_at, write_at
from spmdarray.core.interop import InteropMixin
from spmdarray.core.methods import _field_error, _mirror_method, _MissingMethod, _perm, resized
from spmdarray.core.operators import MIN_ELIDE_BYTES, OperatorsMixin, calibrate
from spmdarray.core.registry import ops
from spmdarray.core.relayout import takes_layout
from spmdarray.core.serial import SerialMixin
from spmdarray.core.storage import Storage
from spmdarray.core.thunk import READERS
from spmdarray.core.values import ValuesMixin
from spmdarray.core.viewcache import view_of_key
from spmdarray.core.whole import (
    LANE,
    NUMBERS,
    NUMPY_SCALARS,
    SLOW,
    fuses,
    getitem,
    index_by,
    lazy_view,
    reduce_whole,
    register,
    resolve,
    setitem,
    stores_back,
    transposed,
    ufunc_call,
    whole_copy,
    wrap,
)
from spmdarray.decomposition import Layout, ViewMap, view_layout
from spmdarray.settings import config

__all__ = ["ndarray"]

_NDARRAY = np.ndarray
_new_object = object.__new__
#: The compiled lane's full reductions (None: the Python lane alone; ``__getitem__``,
#: ``__setitem__`` and ``__array_ufunc__`` are replaced at the end of this module).
_REDUCE_C = None if LANE is None else LANE.reduce


class ndarray(OperatorsMixin, InteropMixin, SerialMixin, ValuesMixin):  # noqa: N801 - NumPy's name
    """A global array distributed over the ranks of a communicator.

    Create arrays with :func:`spmdarray.array`, :func:`spmdarray.zeros` and
    friends, or wrap existing blocks with :func:`spmdarray.from_local`.
    Not collective to hold or inspect (shape, dtype, layout, ``local``).
    Every method that needs data from other ranks is collective: all ranks
    of the array's communicator must call it in the same order.  Each
    method's docstring says which it is.
    """

    # ``_s`` holds a thunk (``spmdarray.core.thunk``): the Storage, or, for a deferred
    # result, the fusion Node that computes it; ``_st`` computes it first.
    # ``_loc``: (id of the thunk, this rank's whole copy or None, ...), see ``spmdarray.core.whole``.
    # ``_pend``: for a view the whole-array lane made, what composes its ``_map`` and ``_lay``
    # when first read (they are unset until then: ``__getattr__`` calls ``whole.resolve``).
    __slots__ = ("_s", "_map", "_lay", "_loc", "_pend", "__weakref__")
    __array_priority__ = 100

    def __new__(cls, shape, dtype=float, buffer=None, offset=0, strides=None, order=None) -> ndarray:
        """``ndarray(shape, dtype)`` as NumPy's: an uninitialised array, laid out as
        :func:`spmdarray.empty` lays it out.  Collective (no communication).

        ``buffer``, ``offset`` and ``strides`` describe one process's memory and
        have no distributed meaning: they raise ``NotImplementedError``; wrap
        existing blocks with :func:`spmdarray.from_local` instead.
        """
        if buffer is not None or strides is not None or offset:
            set_ = (("buffer", buffer is not None), ("offset", bool(offset)), ("strides", strides is not None))
            given = [n for n, v in set_ if v]
            raise NotImplementedError(
                f"spmdarray.ndarray({', '.join(f'{n}=...' for n in given)}): a distributed array is not made from one "
                "process's memory; use spmdarray.from_local(block) to wrap each rank's block, or "
                "spmdarray.asarray(numpy.ndarray(...)) to distribute a NumPy array"
            )
        return ops.empty(shape, dtype, order or "C")

    def __init__(self, *args, **kwargs) -> None:
        pass  # ``__new__`` built it

    @classmethod
    def _new(cls, storage, vmap: ViewMap | None) -> ndarray:
        self = object.__new__(cls)
        self._s = storage
        self._map = vmap if vmap is not None else ViewMap.identity(storage.layout.shape)
        self._lay = None
        self._loc = None
        self._pend = None
        return self

    @staticmethod
    def _elidable(a) -> bool:
        return type(a) is ndarray and not a._s.deferred and a._map.is_identity

    @property
    def _st(self) -> Storage:
        """The storage; a deferred value (or one a deferred value reads) is evaluated first,
        and messages still in flight from or into it are completed.  Not collective."""
        s = self._s
        if s.deferred or READERS or s.flights:
            s = s.stored(self)
        return s

    @_st.setter
    def _st(self, storage: Storage) -> None:
        self._s = storage
        self._loc = None

    def _view_st(self) -> Storage:
        # The storage for making a view: reading it needs no evaluation of others.
        s = self._s
        return self._st if s.deferred else s

    # ------------------------------------------------------------ metadata
    @property
    def shape(self) -> tuple[int, ...]:
        """Global shape.  Not collective to read; setting it is collective.

        ``x.shape = newshape`` reshapes in place as NumPy does: a length-1
        change keeps the storage; another shape moves the data to the layout
        of the new shape, which needs ``x`` to be the only array using its
        storage (else ``AttributeError``, as NumPy raises for a view it cannot
        reshape in place: use ``x = x.reshape(newshape)``).
        """
        c = self._loc
        if c is not None and c[3] is not None and c[0] == id(self._s):
            return c[3].shape  # the whole copy (a view the lane made need not make its map)
        return self._map.shape

    @shape.setter
    def shape(self, newshape) -> None:
        new = ops.set_shape(self, newshape)
        self._s, self._map, self._lay, self._loc, self._pend = new._s, new._map, None, None, None

    @property
    def ndim(self) -> int:
        """Number of dimensions of the global array.  Not collective."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of elements of the global array.  Not collective."""
        return math.prod(self.shape)

    @property
    def dtype(self) -> np.dtype:
        """Data type of the elements (the same on every rank).  Not collective."""
        return self._s.dtype

    @property
    def itemsize(self) -> int:
        """Bytes per element.  Not collective."""
        return self._s.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of the global array (summed over all ranks' blocks).  Not collective."""
        return self.size * self.itemsize

    @property
    def _layout(self) -> Layout:
        lay = self._lay
        if lay is None:
            lay = self._lay = view_layout(self._view_st().layout, self._map)
        return lay

    @property
    def layout(self) -> Layout:
        """Who owns what, in this array's global coordinates.  Not collective."""
        return self._layout

    @property
    def comm(self):
        """The (cloned) mpi4py communicator the array lives on.  Not collective."""
        return self._st.ctx.comm

    @property
    def base(self) -> ndarray | None:
        """The array this view aliases, or None for a base array.  Not collective."""
        if self._map.is_identity:
            return None
        return ndarray._new(self._st, None)

    # ------------------------------------------------------ mpi4py interop
    @property
    def local(self) -> np.ndarray:
        """This rank's owned block as a writable NumPy view.  Not collective.

        For a replicated array (a small one, see ``config.replicate_below``)
        this is the whole array on every rank: write it alike on every rank.
        After writing through it, call :meth:`mark_modified` (collective) so
        that cached halos of views of this array are refreshed.  From now on,
        operations reading this array are computed at once, never deferred,
        so that such a write cannot change a value computed before it.
        """
        st = self._st
        st.exposed = True
        return st.view_of(self._map, self._layout.block(st.ctx.rank))

    @property
    def _block(self) -> np.ndarray:
        """:attr:`local` for spmdarray's own code, which never keeps it past the operation."""
        st = self._st
        return st.view_of(self._map, self._layout.block(st.ctx.rank))

    @property
    def global_slices(self) -> tuple[slice, ...]:
        """Global index ranges of :attr:`local` in this array.  Not collective."""
        return tuple(slice(lo, hi) for lo, hi in self._layout.block(self._st.ctx.rank))

    def mark_modified(self) -> None:
        """Declare that blocks were written through :attr:`local`.  Collective."""
        self._st.bump()

    # ------------------------------------------------------------- numpy
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if len(inputs) == 2 and method == "__call__" and not kwargs:
            # A NumPy scalar (or the 0-d array NumPy's scalar comparisons make of it) and a
            # array on the lane (``alpha * A[i, k] * A[:i, k]``: NumPy's scalar operators call the
            # ufunc): NumPy's call on the copy (``ufunc_call``, inline; ``local`` too).
            c = self._loc
            a, b = inputs
            if (
                c is not None
                and c[0] == id(self._s)
                and (v := c[1]) is not None
                and config.whole_lane
                and (c[2] or not (config.fuse and v.size >= config.fuse_min_size))
            ):
                o = b if a is self else a
                t = type(o)
                if t in NUMPY_SCALARS or t is _NDARRAY and not o.ndim and o.dtype.kind in "biufc":
                    s = self._s
                    return wrap(s.ctx, s.be, ufunc(v, o) if a is self else ufunc(o, v))
        res = ufunc_call(self, ufunc, method, inputs, kwargs)
        if res is not SLOW:
            return res
        return ops.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return ops.array_function(func, types, args, kwargs)

    def __array__(self, dtype=None, copy=None):
        """Gather the whole array onto every rank.  Collective."""
        if copy is False:
            raise ValueError("spmdarray cannot give a NumPy array without a copy; use copy=None or True")

        out = gather(self)
        return out if dtype is None else out.astype(dtype, copy=False)

    # ----------------------------------------------------------- indexing
    def __getitem__(self, key):
        c = self._loc
        if c is not None and c[0] == id(self._s) and (c[3] is not None or c[2] is None):  # (``whole_copy``, inline)
            v = c[3] if config.whole_lane else None  # (None where this rank does not hold all of it)
        else:
            v = whole_copy(self)
        if v is not None:  # every rank holds all of it: NumPy's indexing of the copy
            tk = type(key)
            if tk is tuple:
                for k in key:
                    t = type(k)
                    if t is not int and t is not slice:
                        plain = False
                        break
                else:
                    plain = True
            else:
                plain = tk is int or tk is slice
            if plain:
                # Python integers and slices (loops read elements and rows one by one):
                # NumPy's scalar (or IndexError), or a view whose map is made when first
                # read (``whole.getitem``, inline).
                r = v[key]
                if type(r) is not _NDARRAY:
                    return r
                if r.ndim:
                    c = self._loc
                    if c[2] and c[0] == id(self._s):
                        # A replicated array (on the lane for indexing whatever its size): ``lazy_view``, inline.
                        out = _new_object(ndarray)
                        out._s = self._s
                        # (``_on_lane``: a view large enough for the fuser keeps its copy for indexing only)
                        m = config.fuse_replicated_min
                        lane = not m or r.size < m or not fuses(r.size, True)
                        out._loc = (c[0], r if lane else None, True, r)
                        p = self._pend  # (at most one unmade view between a view and a made map)
                        parent = self._map if p is None or p[3] or type(p[0]) is ndarray else self
                        out._pend = (parent, key, r.shape, False)
                        return out
                    return lazy_view(self, key, r)
            elif tk is ndarray and (r := index_by(self, v, key)) is not SLOW:
                return r  # an index array every rank holds: NumPy's advanced indexing
            r = getitem(self, v, key)
            if r is not SLOW:
                return r
        if isinstance(key, str) and self.dtype.names is not None:
            _field_error(self.dtype, key)
        v = read_at(self, key)
        if v is not NOT_ELEMENT:  # one element: a read from its owner, no view
            return v
        st = self._view_st()
        try:
            vmap, lay, scalar = view_of_key(st.layout, self._map, key)
        except NotImplementedError:  # integer arrays or boolean masks
            return ops.getitem(self, key)
        view = ndarray._new(st, vmap)
        view._lay = lay
        if c is not None and c[2] is None and c[0] == id(st) and self._map.shape:
            # This rank does not hold the (not 0-d) array whole, so neither the view: ``whole_copy`` asks nothing.
            view._loc = c
        return view._scalar() if scalar else view

    def __setitem__(self, key, value) -> None:
        tv = type(value)
        tk = type(key)
        if tv in NUMBERS and (tk is tuple or tk is int or tk is slice):
            # An element or a region set to a number, every rank holding all of it (loops write
            # them one by one): NumPy's assignment into the copy (``whole.setitem``, inline).
            c = self._loc
            s = self._s
            if (
                c is not None
                and c[0] == id(s)
                and (v := c[3]) is not None
                and config.whole_lane
                and not (READERS and id(s) in READERS or s.flights)
            ):
                if tk is not tuple:
                    v[key] = value
                    s.version += 1
                    return
                for k in key:
                    t = type(k)
                    if t is not int and t is not slice:
                        break
                else:
                    v[key] = value
                    s.version += 1
                    return
        elif tv is ndarray and value._s is self._s and stores_back(self, key, value):
            return  # ``x[key] op= y``: the view was updated in place (NumPy copies it onto itself)
        if setitem(self, key, value):
            return  # every rank holds all of it: NumPy's assignment into the copy
        if tv is ndarray and takes_layout(self, key, value):
            return  # a replicated array overwritten by a split one: a copy in its layout, no gather
        if write_at(self, key, value):
            return  # one element set to a scalar: written by its owner only
        st = self._view_st()
        try:
            vmap, lay, scalar = view_of_key(st.layout, self._map, key)
        except NotImplementedError:  # integer arrays or boolean masks
            return ops.setitem(self, key, value)
        if type(value) is ndarray and value._s is st and value._map == vmap and not vmap.broadcast_axes:
            # ``x[key] op= y`` stores back the view it just updated in place: NumPy's
            # copy of a view onto itself, which changes nothing (the update was recorded).
            return
        view = ndarray._new(st, vmap)
        view._lay = lay
        if scalar:
            # One element (NumPy's scalar assignment): the value must be 0-d too.
            if (value.ndim if hasattr(value, "ndim") else np.ndim(value)) > 0:
                raise ValueError("setting an array element with a sequence.")
        ops.assign(view, value)

    def __getattr__(self, name: str):
        # Only reached for names the class lacks, and for the unset slots of a view the
        # whole-array lane made.  A method that mirrors a NumPy function registered in
        # the dispatch table calls that function.
        if name == "_map" or name == "_lay":
            return resolve(self, name)
        if name == "_pend":
            raise AttributeError(name)
        mirror = _mirror_method(self, name)
        if mirror is not None:
            return mirror
        if name == "strides":
            raise _MissingMethod(
                "spmdarray.ndarray.strides: a distributed array has no global strides (its blocks are separate "
                "allocations); use x.local.strides for this rank's block, or x.flags for contiguity"
            )
        if not name.startswith("_") and hasattr(np.ndarray, name):
            raise _MissingMethod(
                f"spmdarray.ndarray.{name} is not implemented yet; it was not computed by gathering the "
                "array. Use the module function if one exists, or numpy.asarray(x) for small arrays"
            )
        raise AttributeError(f"'spmdarray.ndarray' object has no attribute {name!r}")

    def _scalar(self):
        return ops.to_scalar(self)

    # ---------------------------------------------------------- conversion
    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        if self.ndim > 1:
            for i in range(self.shape[0]):
                yield self[i]
            return
        chunk = 65536
        for lo in range(0, self.shape[0], chunk):
            yield from np.asarray(self[lo : lo + chunk])

    def _one(self, kind):
        if self.size != 1:
            return kind(np.zeros(self.shape, self.dtype))  # raises NumPy's own error
        return kind(np.asarray(self._scalar()).reshape(self.shape))

    def __float__(self) -> float:
        return self._one(float)

    def __int__(self) -> int:
        return self._one(int)

    def __complex__(self) -> complex:
        return self._one(complex)

    def __bool__(self) -> bool:
        return self._one(bool)

    def __index__(self) -> int:
        if self.ndim or not np.issubdtype(self.dtype, np.integer):
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self._scalar())

    def item(self, *args):
        """The element as a Python scalar on every rank.  Collective."""
        if len(args) == 1 and isinstance(args[0], tuple):
            args = args[0]
        if not args:
            if self.size != 1:
                raise ValueError("can only convert an array of size 1 to a Python scalar")
            return np.asarray(self._scalar()).item()
        # NumPy's rules: ndim indices address one element; a single one is a flat index.
        idx = tuple(operator.index(a) for a in args)
        if len(idx) != self.ndim:
            if len(idx) != 1:
                raise ValueError("incorrect number of indices for array")
            if not -self.size <= idx[0] < self.size:
                raise IndexError(f"index {idx[0]} is out of bounds for size {self.size}")
            idx = tuple(int(i) for i in np.unravel_index(idx[0] % self.size, self.shape))
        v = self[idx]
        return v.item() if isinstance(v, (np.generic, ndarray)) else v

    def tolist(self):
        """Nested Python lists on every rank (gathers the array).  Collective."""
        return np.asarray(self).tolist()

    def __repr__(self) -> str:
        return text(self, repr)

    def __str__(self) -> str:
        return text(self, str)

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return format(self._scalar(), spec)
        return format(str(self), spec)

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self):
        raise TypeError("spmdarray arrays cannot be pickled; pickle numpy.asarray(x) (collective) instead")

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    # ------------------------------------------------------- manipulation
    @property
    def T(self) -> ndarray:  # noqa: N802
        """Transposed view.  Not collective."""
        return self.transpose()

    @property
    def mT(self) -> ndarray:  # noqa: N802
        """View with the last two axes swapped (``numpy.linalg.matrix_transpose``).  Not collective."""
        if self.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return self.swapaxes(-1, -2)

    def transpose(self, *axes) -> ndarray:
        """View with axes permuted (reversed by default).  Not collective."""
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        if not axes:
            perm = tuple(reversed(range(self.ndim)))
        else:
            perm = _perm(axes, self.ndim)
        v = transposed(self, perm)  # the lane's view: NumPy's transpose of the copy
        if v is not None:
            return v
        return ndarray._new(self._view_st(), self._map.transpose(perm))

    def swapaxes(self, axis1: int, axis2: int) -> ndarray:
        """View with two axes interchanged.  Not collective."""

        return ops.swapaxes(self, axis1, axis2)

    def squeeze(self, axis=None) -> ndarray:
        """View without length-1 axes.  Not collective."""

        return ops.squeeze(self, axis)

    def cumsum(self, axis=None, dtype=None, out=None) -> ndarray:
        """Cumulative sum, a prefix scan across ranks.  Collective."""

        return ops.cumsum(self, axis, dtype, out)

    def cumprod(self, axis=None, dtype=None, out=None) -> ndarray:
        """Cumulative product, a prefix scan across ranks.  Collective."""

        return ops.cumprod(self, axis, dtype, out)

    def reshape(self, *shape, order: str = "C", copy=None) -> ndarray:
        """Same as ``numpy.reshape(a, shape, order=order, copy=copy)``.  Collective.

        A redistributed copy in the balanced layout of the new shape (each
        element moves at most once, between the ranks whose old and new
        blocks overlap), unless only length-1 axes change (then a view).
        NumPy may return a view where this returns a copy.
        """
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return ops.reshape(self, shape, order=order, copy=copy)

    def ravel(self, order: str = "C") -> ndarray:
        """Flattened array in ``order`` ('C', 'F', 'A' or 'K', as NumPy).  Collective.

        'A' and 'K' read the memory order a C-ordered global array would have.
        """

        return ops.ravel(self, order)

    def flatten(self, order: str = "C") -> ndarray:
        """Flattened copy in ``order`` ('C', 'F', 'A' or 'K').  Collective."""

        out = ops.ravel(self, order)
        return out.copy() if out._st is self._st else out

    def resize(self, *new_shape, refcheck: bool = True) -> None:
        """Change shape and size in place; new elements are zero (C order).  Collective.

        As NumPy: a view cannot be resized, and with ``refcheck`` an array
        that other views reference raises ``ValueError`` (every rank agrees).
        The data moves to a balanced layout of the new shape.
        """
        if len(new_shape) == 1 and (new_shape[0] is None or isinstance(new_shape[0], (tuple, list))):
            new_shape = () if new_shape[0] is None else tuple(new_shape[0])
        new = resized(self, tuple(operator.index(n) for n in new_shape), refcheck)
        if new is not None:
            self._st, self._map, self._lay = new._st, new._map, None

    def view(self, dtype=None, type=None) -> ndarray:  # noqa: A002
        """View of the same data, reinterpreted as ``dtype``.  Not collective.

        A dtype of the same itemsize reinterprets every block.  Another
        itemsize changes the last axis; it needs a base array (not a view)
        whose last axis no rank splits, else ``NotImplementedError``.
        """
        if type is not None or (isinstance(dtype, builtins.type) and issubclass(dtype, (np.ndarray, ndarray))):
            raise NotImplementedError("ndarray.view(type=...): spmdarray arrays have a single array type")

        if dtype is None:
            return ndarray._new(self._st, self._map)
        dt = np.dtype(dtype)
        st = self._st
        if dt.itemsize == self.itemsize:
            new = Storage(st.ctx, st.layout, dt, ghost=st.ghost, alloc=st.alloc.view(dt))
            # Two storages, one memory: neither sees the other's pending writes or deferred readers,
            # so operations touching either are computed at once (as for ``local``).
            st.exposed = new.exposed = True
            return ndarray._new(new, self._map)
        lay = st.layout
        if self.ndim == 0:
            raise ValueError("Changing the dtype of a 0d array is only supported if the itemsize is unchanged")
        last = self.ndim - 1
        split = lay.grid_axis_of(last) is not None and lay.intervals[last] != ((0, self.shape[-1]),)
        if not self._map.is_identity or split or st.ghost[last]:
            raise NotImplementedError(
                f"ndarray.view({dt}) changes the itemsize ({self.itemsize} -> {dt.itemsize}): supported only on a "
                "base array whose last axis no rank splits; redistribute or copy first (e.g. x.copy())"
            )
        nbytes = self.shape[-1] * self.itemsize
        if nbytes % dt.itemsize:
            raise ValueError(
                "When changing to a larger dtype, its size must be a divisor of the total size in bytes of the last "
                "axis of the array."
            )
        m = nbytes // dt.itemsize
        shape = self.shape[:-1] + (m,)
        iv = lay.intervals[:-1] + ((((0, m),) if lay.intervals[last] is not None else None),)
        new_lay = Layout(shape, lay.dims, lay.gaxis, lay.gfixed, iv)
        new = Storage(st.ctx, new_lay, dt, ghost=st.ghost, alloc=st.alloc.view(dt))
        st.exposed = new.exposed = True  # (as above)
        return ndarray._new(new, None)

    def getfield(self, dtype, offset: int = 0) -> ndarray:
        """A field of each element as an array of ``dtype`` (per block).  Collective (no communication)."""

        out = ops.empty_like(self, dtype=dtype)
        if self._layout.owned_size(self._st.ctx.rank):
            out._block[...] = self._block.getfield(dtype, offset)
        return out

    def setfield(self, val, dtype, offset: int = 0) -> None:
        """Store ``val`` into a field of each element (per block).  Collective."""

        v = ops.empty_like(self, dtype=dtype)
        ops.assign(v, val)
        if self._layout.owned_size(self._st.ctx.rank):
            self._block.setfield(v._block, dtype, offset)
        self._st.bump()

    def copy(self, order: str = "C") -> ndarray:
        """Copy with this array's layout.  Collective (no communication).

        A ``broadcast_to`` view is copied into a balanced layout instead (its
        repeated axes are not split, so its own layout would not spread them).
        """
        c = self._loc
        if c is not None and c[0] == id(self._s) and c[2] and (v := c[1]) is not None and config.whole_lane:
            if v.size < config.replicate_below:  # replicated: NumPy's copy of the copy, replicated
                s = self._s
                return wrap(s.ctx, s.be, v.copy())
        if self._map.broadcast_axes:
            out = ops.empty(self.shape, self.dtype, comm=self._st.ctx)
        else:
            out = ops.empty_like(self)
        ops.assign(out, self)
        return out

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True) -> ndarray:
        """Copy converted to ``dtype`` (NumPy's casting rules).  Collective."""
        dtype = np.dtype(dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the copy below warns as NumPy does, once
            try:
                np.ones(1, self.dtype).astype(dtype, casting=casting)  # NumPy's TypeError
            except (ValueError, OverflowError):
                pass  # depends on the values (strings that are not numbers): agreed in the copy
        if dtype == self.dtype and not copy:
            return self

        out = ops.empty_like(self, dtype=dtype)
        ops.assign(out, self)
        return out

    def fill(self, value) -> None:
        """Set every element to ``value``.  Collective."""
        ops.assign(self, value)

    # ---------------------------------------------------------- reductions
    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        if axis is None and dtype is None and out is None and not keepdims and not kw:
            return _full("sum", self)
        return _red("sum", self, axis, dtype, out, keepdims, **kw)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        if axis is None and dtype is None and out is None and not keepdims and not kw:
            return _full("prod", self)
        return _red("prod", self, axis, dtype, out, keepdims, **kw)

    def min(self, axis=None, out=None, keepdims=False, **kw):
        if axis is None and out is None and not keepdims and not kw:
            return _full("min", self)
        return _red("min", self, axis, None, out, keepdims, **kw)

    def max(self, axis=None, out=None, keepdims=False, **kw):
        if axis is None and out is None and not keepdims and not kw:
            return _full("max", self)
        return _red("max", self, axis, None, out, keepdims, **kw)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return _red("mean", self, axis, dtype, out, keepdims, **kw)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        return _red("var", self, axis, dtype, out, keepdims, ddof=ddof, **kw)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        return _red("std", self, axis, dtype, out, keepdims, ddof=ddof, **kw)

    def any(self, axis=None, out=None, keepdims=False, **kw):
        if axis is None and out is None and not keepdims and not kw:
            return _full("any", self)
        return _red("any", self, axis, None, out, keepdims, **kw)

    def all(self, axis=None, out=None, keepdims=False, **kw):
        if axis is None and out is None and not keepdims and not kw:
            return _full("all", self)
        return _red("all", self, axis, None, out, keepdims, **kw)

    def argmin(self, axis=None, out=None, keepdims=False):
        return ops.argreduce("argmin", self, axis, out, keepdims)

    def argmax(self, axis=None, out=None, keepdims=False):
        return ops.argreduce("argmax", self, axis, out, keepdims)

    def compress(self, condition, axis=None, out=None) -> ndarray:
        """Same as ``numpy.compress(condition, a, axis, out)``.  Collective."""

        return ops.compress(condition, self, axis=axis, out=out)

    # -------------------------------------------------------------- linalg
    def dot(self, other, out=None):
        """Dot product with ``other``: ``numpy.dot(a, other)``.  Collective.

        2-D operands use SUMMA (broadcasts of row and column panels along the
        process grid); no operand is gathered.
        """
        return ops.dot(self, other, out=out)


#: The reduction methods' docstrings (``numpy.<name>(a, ...)`` on the array).
_REDUCTIONS = {
    "sum": "Sum of the elements",
    "prod": "Product of the elements",
    "min": "Minimum",
    "max": "Maximum",
    "mean": "Arithmetic mean",
    "var": "Variance",
    "std": "Standard deviation",
    "any": "Whether any element is true",
    "all": "Whether every element is true",
    "argmin": "Index of the (first) minimum",
    "argmax": "Index of the (first) maximum",
}
for _name, _what in _REDUCTIONS.items():
    getattr(ndarray, _name).__doc__ = f"""{_what} over ``axis`` (all axes by default): ``numpy.{_name}(a, ...)``.

    Collective.  Each rank reduces its own block; the ranks along the reduced
    grid axes all-gather their partial results (the result's block per rank)
    and combine them in rank order, so the answer is the same at every rank
    count.  A full reduction is a 0-d array replicated on every rank; an axis
    reduction is replicated along the reduced grid axes.  Where NumPy takes
    ``where=``, it raises NotImplementedError.
    """


def _full(name, x):
    """``x.<name>()`` with NumPy's default arguments: NumPy's reduction of the lane's copy, else
    the cached plan of a split array (``ops.reduce_full``).  Collective."""
    c = x._loc
    if c is None or c[0] != id(x._s) or c[1] is not None or x._s.copies:
        res = reduce_whole(name, x, None, None, False, {})
        if res is not SLOW:
            return res
    return ops.reduce_full(name, x)  # (a split array no copy holds)


def _red(name, x, axis, dtype, out, keepdims, **kw):
    if _REDUCE_C is not None and axis is None and dtype is None and out is None and not keepdims and not kw:
        if (res := _REDUCE_C(x, name)) is not SLOW:
            return res  # (``reduce_whole``'s usual case, compiled)
    if out is None and (not kw or kw.keys() == {"ddof"}):
        res = reduce_whole(name, x, axis, dtype, keepdims, kw)
        if res is not SLOW:
            return res
    return ops.reduce(name, x, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)


calibrate(ndarray)
register(ndarray, MIN_ELIDE_BYTES)
install(ndarray)  # (the compiled lane's methods, where it is loaded: ``core.compiled``)
