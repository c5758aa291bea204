"""Per-rank storage of a base array: one allocation with a ghost frame.

Every view of a base array shares its :class:`Storage`.  The allocation holds
the owned block plus ``ghost[b]`` cells on each side of every partitioned
axis; halo exchanges write neighbour-owned values into that frame so that a
shifted view is a plain NumPy view of the allocation.

``version`` counts collective writes.  ``halo_valid`` maps each plan key to
the version at which its ghost cells were filled; they are current only while
that equals ``version``, so halos are re-sent only after the data changed.
``copies`` holds small regions gathered whole onto every rank, stamped with
a version in the same way (see :mod:`spmdarray.core.element`).
Both change only inside collective operations (a halo counts as filled when
its messages are posted), so they agree on every rank.  ``flights`` lists the
posted exchanges that still send from or receive into the allocation.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from spmdarray.backend.backends import backend_of
from spmdarray.comm import first_failure
from spmdarray.core.element import direct_access
from spmdarray.core.flights import complete
from spmdarray.core.thunk import READERS, Quiet, Thunk, flush
from spmdarray.decomposition import Box, Layout, ViewMap, box_size
from spmdarray.settings import config

__all__ = ["Storage"]


@lru_cache(maxsize=4096)
def _geometry(layout: Layout, rank: int, ghost):
    """(ghost widths, allocation shape, global index of alloc[0...], holds) for a rank."""
    nd = layout.ndim
    if not isinstance(ghost, tuple):
        ghost = tuple(
            ghost if (k := layout.grid_axis_of(b)) is not None and layout.dims[k] > 1 else 0 for b in range(nd)
        )
    if not layout.holds(rank):
        return ghost, (0,) * nd, (0,) * nd, None
    block = layout.block(rank)
    shape = tuple(hi - lo + 2 * g for (lo, hi), g in zip(block, ghost))
    origin = tuple(lo - g for (lo, _), g in zip(block, ghost))
    # Index of the owned block inside the allocation (None: the whole of it).
    owned = None if not any(ghost) else (*(slice(g, g + hi - lo) for g, (lo, hi) in zip(ghost, block)), Ellipsis)
    key = (ViewMap.identity(layout.shape), block)
    return ghost, shape, origin, (owned, key)


class Storage(Thunk):
    """The allocation behind a base array on one rank: a stored thunk.  Not collective."""

    __slots__ = (
        "ctx",
        "be",
        "layout",
        "dtype",
        "alloc",
        "origin",
        "ghost",
        "version",
        "halo_valid",
        "_views",
        "flights",
        "exposed",
        "copies",
        "__weakref__",
    )

    def __init__(self, ctx, layout: Layout, dtype, *, ghost=None, alloc=None, fill=None, agree: bool = True) -> None:
        self.ctx = ctx
        self.be = be = backend_of(ctx)
        self.layout = layout
        self.dtype = np.dtype(dtype)
        if self.dtype.hasobject:
            raise TypeError(
                f"spmdarray arrays cannot hold Python objects (dtype {self.dtype}): blocks of references cannot be "
                "sent between ranks. Convert the data to a numeric, string (astype(str)) or fixed-size structured "
                "dtype first, or keep it in a NumPy array"
            )
        self.version = 0
        self.halo_valid: dict = {}
        self._views: dict = {}
        self.flights: list = []  # posted exchanges touching the allocation (see ``_flights``)
        # The program holds the block itself (``from_local``, ``x.local``) and may write
        # it at any time: a deferred value reading it is computed at once (fusion.record).
        self.exposed = False
        g = config.ghost_width if ghost is None else tuple(ghost)
        self.ghost, shape, self.origin, holds = _geometry(layout, ctx.rank, g)
        if alloc is not None:
            self.alloc = alloc
        elif be.is_device:
            self.alloc = _device_alloc(ctx, be, layout, shape, self.dtype, fill, holds is not None, agree)
        elif fill is None:
            self.alloc = np.empty(shape, self.dtype)
        elif fill == 0 and holds is not None:
            self.alloc = np.zeros(shape, self.dtype)
        else:
            self.alloc = np.full(shape, fill, self.dtype)
        # Small regions gathered whole (``spmdarray.core.element``); None when elements
        # are read by indexing the allocation directly.
        self.copies = None if direct_access(layout, be, self.dtype, self.origin) else {}
        if holds is not None:
            # The base array's own block, asked for by nearly every operation.
            owned, key = holds
            self._views[key] = self.alloc if owned is None else self.alloc[owned]

    @classmethod
    def blank(
        cls, ctx, be, layout: Layout, dtype: np.dtype, geometry, direct: bool
    ) -> tuple[Storage, np.ndarray | None]:
        """A new uninitialised host storage, and its owned block (None where it holds none).

        What ``Storage(ctx, layout, dtype)`` makes on a host backend, from
        ``geometry = _geometry(layout, ctx.rank, ghost)`` and ``direct =
        direct_access(layout, be, dtype, origin)`` computed once (the
        elementwise fast path keeps them in its plans).  Not collective.
        """
        self = cls.adopting(ctx, be, layout, dtype, geometry, direct, np.empty(geometry[1], dtype))
        holds = geometry[3]
        if holds is None:
            return self, None
        return self, self._views[holds[1]]

    @classmethod
    def adopting(cls, ctx, be, layout: Layout, dtype: np.dtype, geometry, direct: bool, alloc) -> Storage:
        """A host storage whose allocation is ``alloc`` (of the shape ``geometry`` gives), as
        :meth:`blank` makes it (:func:`adopt`).  Not collective."""
        return adopt(ctx, be, layout, dtype, geometry, direct, alloc, cls)

    deferred = False

    def stored(self, x) -> Storage:
        """This storage, once the deferred arrays reading it are computed and its
        messages in flight completed (so that the caller may write it).  Not collective."""
        if Quiet.depth == 0:
            if id(self) in READERS:
                flush(self)
            if self.flights:
                complete(self)
        return self

    def bump(self) -> None:
        """Record a collective write: every cached halo becomes stale."""
        self.version += 1

    def view_of(self, vmap: ViewMap, box: Box) -> np.ndarray:
        """NumPy view of the allocation holding view-box ``box``.

        The box must lie inside this rank's allocation (owned block plus
        ghost frame); an empty box gives a fresh empty array.
        """
        key = (vmap, box)
        arr = self._views.get(key)
        if arr is not None:
            return arr
        arr = self._view_of(vmap, box)
        if len(self._views) > 512:
            self._views.clear()
        self._views[key] = arr
        return arr

    def _view_of(self, vmap: ViewMap, box: Box) -> np.ndarray:
        shape = tuple(hi - lo for lo, hi in box)
        if box_size(box) == 0:
            return self.be.empty(shape, self.dtype)
        idx: list = [int(s - o) for s, o in zip(vmap.start, self.origin)]
        walked = []
        has_new = False
        for (b, step), (lo, hi) in zip(vmap.axes, box):
            if b < 0:
                has_new = True
                continue
            walked.append(b)
            a0 = vmap.start[b] + lo * step - self.origin[b]
            stop = a0 + (hi - lo - 1) * step + (1 if step > 0 else -1)
            idx[b] = slice(a0, None if stop < 0 else stop, step)
        arr = self.alloc[(*idx, Ellipsis)]
        order = sorted(walked)
        if walked != order:
            arr = arr.transpose([order.index(b) for b in walked])
        if has_new:
            arr = arr[tuple(None if b < 0 else slice(None) for b, _ in vmap.axes)]
            if arr.shape != shape:
                # A broadcast axis (``broadcast_to``): read-only, as NumPy's.
                arr = self.be.xp.broadcast_to(arr, shape)
        return arr


def adopt(ctx, be, layout: Layout, dtype: np.dtype, geometry, direct: bool, alloc, cls=None) -> Storage:
    """``Storage.adopting``: a host storage whose allocation is ``alloc`` (of the shape
    ``geometry`` gives); a plain function, for the lane's every result.  Not collective."""
    self = _new(Storage if cls is None else cls)
    self.ctx = ctx
    self.be = be
    self.layout = layout
    self.dtype = dtype
    self.version = 0
    self.halo_valid = {}
    self._views = views = {}
    self.flights = []
    self.exposed = False
    self.ghost, _, self.origin, holds = geometry
    self.alloc = alloc
    self.copies = None if direct else {}
    if holds is not None:
        owned, key = holds
        views[key] = alloc if owned is None else alloc[owned]
    return self


_new = object.__new__


def _largest_block_bytes(layout: Layout, dtype) -> int:
    """Bytes of the largest rank's block (the same on every rank), ghosts ignored."""
    return _largest_block(layout) * np.dtype(dtype).itemsize


@lru_cache(maxsize=1024)
def _largest_block(layout: Layout) -> int:
    big = 1
    for k, iv in enumerate(layout.intervals):
        big *= max((hi - lo for lo, hi in iv), default=0) if iv is not None else layout.shape[k]
    return big


def _device_alloc(ctx, be, layout: Layout, shape, dtype, fill, holds: bool, agree: bool = True):
    """A device allocation whose failure every rank sees.  Collective (not with ``agree=False``).

    An out-of-memory error on one rank becomes a MemoryError on every rank
    (one 4-byte all-reduce per allocation of at least
    ``config.agree_allocation_bytes`` on the largest block), so no rank is
    left waiting in the next collective.  Every rank takes the same decision
    because it is made from the global layout.
    """
    err = None
    out = None
    try:
        if fill is None:
            out = be.empty(shape, dtype)
        elif fill == 0 and holds:
            out = be.zeros(shape, dtype)
        else:
            out = be.full(shape, fill, dtype)
    except MemoryError as e:
        err = e
    limit = config.agree_allocation_bytes
    if agree and ctx.size > 1 and limit is not None and _largest_block_bytes(layout, dtype) >= limit:
        bad = first_failure(ctx, err is not None)
        if bad >= 0 and err is None:
            need = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
            raise MemoryError(
                f"out of GPU memory on rank {bad} (this is rank {ctx.rank}, which allocated its {need} bytes); "
                "every rank raises so that none waits"
            )
    if err is not None:
        raise err
    return out
