"""The user's source line that led to a communication call.

Debugging aids (collective fingerprints, the hang watchdog, communication
traces) name the first frame of the user's program: the innermost frame
whose file lies outside spmdarray and outside NumPy's own dispatch code.
"""

from __future__ import annotations

import os
import sys

__all__ = ["user_call_site"]

# Where spmdarray's own files lie.  Installed, comm/ sits inside the package
# (site-packages/spmdarray/comm): the whole package folder is spmdarray's.  In a
# checkout, comm/ and decomposition/ sit beside spmdarray/ (package_dir), and the
# checkout's other folders (tests/, scaling/, examples/) hold user code.
_COMM = os.path.dirname(os.path.abspath(__file__))
_PARENT = os.path.dirname(_COMM)
if os.path.basename(_PARENT) == "spmdarray" and not os.path.isdir(os.path.join(_PARENT, "spmdarray")):
    _OWN: tuple[str, ...] = (os.path.join(_PARENT, ""),)
else:
    _OWN = tuple(os.path.join(_PARENT, d, "") for d in ("spmdarray", "comm", "decomposition"))


def _internal(filename: str) -> bool:
    if filename.startswith(_OWN):
        return True
    return filename.startswith("<__array_function__") or os.sep + "numpy" + os.sep in filename


def user_call_site(skip: int = 1) -> tuple[str, int, str]:
    """``(file, line, function)`` of the innermost frame outside spmdarray.  Not collective.

    Parameters
    ----------
    skip : int
        Frames to skip before the search starts (1 skips this function's caller's
        own frame lookup overhead; the search itself skips spmdarray's frames).

    Returns
    -------
    tuple of (str, int, str)
        The file name, the line number and the function name; ``("?", 0, "?")``
        when every frame belongs to spmdarray.
    """
    f = sys._getframe(skip)
    while f is not None:
        co = f.f_code
        if not _internal(co.co_filename):
            return co.co_filename, f.f_lineno, co.co_name
        f = f.f_back
    return "?", 0, "?"
