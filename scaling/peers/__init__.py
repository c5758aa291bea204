"""Peer libraries, run on the same workloads when they are installed.

Install them with ``pip install -e ".[peers]"``.  ``available()`` names the
peers that can be imported here, and says why the others are skipped.

- **Dask array** (``dask_array.py``): one process, the threaded scheduler
  with one worker per "rank", chunks along the first axis; stencils use
  ``map_overlap``.
- **Heat** is not run: its current releases pin ``torch<2.11.1``, and the
  only release pip accepts next to the CPU build of torch 2.13 (heat 1.0.0)
  imports ``torchvision`` at start-up, whose PyPI wheels do not load against
  that build (``operator torchvision::nms does not exist``).
"""

from __future__ import annotations

HEAT_NOTE = (
    "heat skipped: current releases pin torch<2.11.1; heat 1.0.0, the only one that accepts "
    "torch 2.13 (CPU), fails at import (torchvision's operators do not load against torch+cpu)"
)


def available() -> tuple[list[str], list[str]]:
    """Peers that import here, and one note per peer that is skipped.

    Returns
    -------
    names : list of str
        Implementation names usable with ``python -m scaling run --impls``.
    notes : list of str
        Why each missing peer is skipped.
    """
    names, notes = [], [HEAT_NOTE]
    try:
        import dask.array  # noqa: F401

        names.append("dask")
    except ImportError as exc:
        notes.append(f"dask skipped: {exc} (pip install -e '.[peers]')")
    return names, notes
