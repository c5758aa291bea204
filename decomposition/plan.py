"""Communication plans, built without any communication.

An elementwise operation is computed where its *output* lives: rank ``r``
computes ``out.block(r)``.  For every input operand (a view of some base
array, possibly broadcast), :func:`fetch_plan` works out which box of the
operand each rank needs, who holds each part, and how the receiver will
store it:

``local``  the rank holds all it needs: no message at all;
``halo``   the missing cells fall inside the ghost frame of the rank's
           allocation, so they are received *into the base allocation* and
           the operand is a plain strided view of it (cacheable until the base
           is written);
``temp``   anything else (transposes, reversed views, other layouts): the
           parts are assembled in a temporary buffer.

Boxes in plans are in the operand's *view* coordinates.  Plans are cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .layout import Box, Layout, box_contains, box_intersect, box_size
from .view import ViewMap, strided_range, view_layout

__all__ = ["FetchPlan", "fetch_plan", "need_box", "ghost_box", "plan_mode"]


@dataclass(frozen=True, slots=True)
class FetchPlan:
    """One rank's part of an operand fetch.

    Attributes
    ----------
    mode : str
        ``'none'``, ``'local'``, ``'halo'`` or ``'temp'`` for this rank.
    need : Box or None
        Operand box (view coordinates) this rank needs; None for ``'none'``.
    recvs : tuple of (int, Box, bool)
        ``(source, box, into_halo)`` messages this rank receives.
    sends : tuple of (int, Box, bool)
        ``(dest, box, into_halo)`` messages this rank sends.
    """

    mode: str
    need: Box | None
    recvs: tuple
    sends: tuple

    @property
    def halo_elements_sent(self) -> int:
        return sum(box_size(b) for _, b, h in self.sends if h)


def need_box(vmap: ViewMap, out: Layout, rank: int) -> Box | None:
    """Operand box needed by ``rank`` to compute its block of ``out``.

    The operand (shape ``vmap.shape``) broadcasts against ``out.shape`` by
    NumPy's rules: trailing axes align, size-1 axes stretch.
    """
    # ``holds`` first: a 0-d layout's all-empty block ``()`` still has size 1.
    if not out.holds(rank):
        return None
    ob = out.block(rank)
    if box_size(ob) == 0:
        return None
    off = len(out.shape) - len(vmap.shape)
    box = []
    for j, n in enumerate(vmap.shape):
        a = j + off
        box.append((0, 1) if (n == 1 and out.shape[a] != 1) else ob[a])
    return tuple(box)


def ghost_box(base: Layout, ghost: tuple[int, ...], vmap: ViewMap, rank: int) -> Box | None:
    """View box reachable inside ``rank``'s allocation (owned block plus ghost frame)."""
    if not base.holds(rank):
        return None
    bb = base.block(rank)
    for b in vmap.dropped():
        lo, hi = bb[b]
        if not lo - ghost[b] <= vmap.start[b] < hi + ghost[b]:
            return None
    out = []
    for (b, step), n in zip(vmap.axes, vmap.shape):
        if b < 0:
            out.append((0, n))
        else:
            lo, hi = bb[b]
            out.append(strided_range(vmap.start[b], step, n, lo - ghost[b], hi + ghost[b]))
    return tuple(out)


def plan_mode(base: Layout, ghost: tuple[int, ...], vmap: ViewMap, out: Layout, rank: int) -> tuple[str, Box | None]:
    """Mode and needed box of ``rank`` (see the module docstring)."""
    need = need_box(vmap, out, rank)
    if need is None or box_size(need) == 0:
        return "none", None
    vl = view_layout(base, vmap)
    if vl.holds(rank) and box_contains(vl.block(rank), need):
        return "local", need
    gb = ghost_box(base, ghost, vmap, rank)
    if gb is not None and box_contains(gb, need):
        return "halo", need
    return "temp", need


@lru_cache(maxsize=4096)
def fetch_plan(base: Layout, ghost: tuple[int, ...], vmap: ViewMap, out: Layout, me: int) -> FetchPlan:
    """Build (and cache) rank ``me``'s part of fetching a view for ``out``.

    Not collective: every rank derives the same global plan from the same
    layouts, so senders and receivers agree without talking.

    Parameters
    ----------
    base : Layout
        Layout of the operand's base array.
    ghost : tuple of int
        Ghost width of the base allocation, per base axis.
    vmap : ViewMap
        The operand as a view of the base.
    out : Layout
        Layout where the result is computed.
    me : int
        This rank.
    """
    vl = view_layout(base, vmap)
    mode, need = plan_mode(base, ghost, vmap, out, me)
    recvs = []
    if mode in ("halo", "temp"):
        for src, sub in vl.sources(me, need):
            if src != me:
                recvs.append((src, sub, mode == "halo"))
    sends = []
    if vl.owned_size(me):
        for r in _receivers(vl.block(me), vmap.shape, out):
            if r == me:
                continue
            rmode, rneed = plan_mode(base, ghost, vmap, out, r)
            if rmode in ("halo", "temp") and box_size(box_intersect(rneed, vl.block(me))):
                for src, sub in vl.sources(r, rneed):
                    if src == me:
                        sends.append((r, sub, rmode == "halo"))
    return FetchPlan(mode, need, tuple(recvs), tuple(sends))


def _receivers(mine: Box, op_shape: tuple[int, ...], out: Layout) -> list[int]:
    """Ranks whose block of ``out`` may need part of the operand box ``mine``.

    A superset, found per grid axis (not by visiting every rank): along an
    output axis aligned with an operand axis, only the coordinates whose
    interval meets ``mine``; along broadcast or missing axes, all of them.
    """
    off = len(out.shape) - len(op_shape)
    want = []
    for a, n in enumerate(out.shape):
        j = a - off
        if j >= 0 and not (op_shape[j] == 1 and n != 1):
            want.append(mine[j])
        else:
            want.append((0, n))
    return out.ranks_meeting(tuple(want))
