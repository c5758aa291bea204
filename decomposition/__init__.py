"""Pure layout and overlap math for spmdarray.  No MPI is imported here.

Index spaces: *global* indices address the whole array; a *box* is a tuple of
half-open global ``(lo, hi)`` ranges; *view* coordinates address a view,
*base* coordinates the array it aliases.
"""

from .blocks import block_bounds, block_of, find_coord
from .grid import factorisations, process_grid
from .layout import (
    Box,
    Layout,
    box_contains,
    box_intersect,
    box_size,
    cells_to_receive,
    cheapest_layout,
    ravel,
    unravel,
)
from .plan import FetchPlan, fetch_plan, ghost_box, need_box, plan_mode
from .view import ViewMap, normalize_key, strided_range, view_layout

__all__ = [
    "Box",
    "FetchPlan",
    "Layout",
    "ViewMap",
    "block_bounds",
    "block_of",
    "box_contains",
    "box_intersect",
    "box_size",
    "cells_to_receive",
    "cheapest_layout",
    "factorisations",
    "fetch_plan",
    "find_coord",
    "ghost_box",
    "need_box",
    "normalize_key",
    "plan_mode",
    "process_grid",
    "ravel",
    "strided_range",
    "unravel",
    "view_layout",
]
