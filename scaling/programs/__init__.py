"""Whole NumPy programs beyond npbench's kernels, run unmodified on spmdarray.

Each module holds one program written against an array namespace passed as
the first argument (``numpy`` or ``spmdarray``): ``setup(np, n)`` makes its
state for an ``n x n`` grid, ``step(np, state)`` advances it one time step in
place, ``result(np, state)`` gives its fields as NumPy arrays (a gather on
spmdarray, for the check only).  ``python -m scaling.programs`` times them
(see its ``__main__``).
"""

from __future__ import annotations

from types import ModuleType

from . import advection, shallow_water

PROGRAMS: dict[str, ModuleType] = {"shallow_water": shallow_water, "advection": advection}

__all__ = ["PROGRAMS"]
