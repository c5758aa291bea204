"""spmdarray: NumPy semantics on distributed memory.

Change ``import numpy as np`` to ``import spmdarray as np`` and run the same
program with ``mpiexec -n K python prog.py`` (or plain ``python``).  Every
rank runs the same program; each array is split into blocks over a process
grid chosen from its shape, and shifted views exchange only their edge cells.

Functions that create or combine arrays are collective: every rank of the
array's communicator must call them in the same order.
"""

# Modules that register NumPy functions with the dispatch table; each layer is
# imported before the ones above it.
from spmdarray import array_api, fft, io, linalg, random  # noqa: F401
from spmdarray.backend.backends import backend_info
from spmdarray.comm import CommStats, comm_stats, set_default_comm
from spmdarray.core.array import ndarray
from spmdarray.core.storage import config
from spmdarray.fusion.record import sync
from spmdarray.io import checkpoint, load_hdf5, restore, save_hdf5
from spmdarray.routines import scans as _scans  # noqa: F401
from spmdarray.routines import sorting as _sorting  # noqa: F401
from spmdarray.routines.creation import *  # noqa: F401,F403
from spmdarray.routines.creation import __all__ as _creation_all
from spmdarray.routines.grids import *  # noqa: F401,F403
from spmdarray.routines.grids import __all__ as _grids_all
from spmdarray.routines.indexing import advanced as _advanced  # noqa: F401
from spmdarray.routines.indexing import selection as _selection  # noqa: F401
from spmdarray.routines.logic import asarray_chkfinite, from_dlpack, isfortran
from spmdarray.routines.manipulation import axes as _axes  # noqa: F401
from spmdarray.routines.manipulation import broadcasting as _broadcasting  # noqa: F401
from spmdarray.routines.manipulation import diagonals as _diagonals  # noqa: F401
from spmdarray.routines.manipulation import editing as _editing  # noqa: F401
from spmdarray.routines.manipulation import padding as _padding  # noqa: F401
from spmdarray.routines.manipulation import splitting as _splitting  # noqa: F401
from spmdarray.routines.manipulation.joining import row_stack
from spmdarray.routines.namespace import *  # noqa: F401,F403
from spmdarray.routines.namespace import __all__ as _ns_all
from spmdarray.routines.namespace import __getattr__  # noqa: F401
from spmdarray.routines.numeric_misc import __all__ as _misc_all
from spmdarray.routines.numeric_misc import bartlett, blackman, hamming, hanning, kaiser, poly, roots, vander  # noqa: F401
from spmdarray.routines.readers import *  # noqa: F401,F403
from spmdarray.routines.readers import __all__ as _readers_all
from spmdarray.routines.stats import statistics as _statistics  # noqa: F401

__version__ = "0.1.0"

__all__ = [
    "CommStats",
    "backend_info",
    "checkpoint",
    "comm_stats",
    "asarray_chkfinite",
    "config",
    "from_dlpack",
    "isfortran",
    "row_stack",
    "fft",
    "io",
    "linalg",
    "load_hdf5",
    "ndarray",
    "random",
    "restore",
    "save_hdf5",
    "set_default_comm",
    "sync",
    *_creation_all,
    *_grids_all,
    *_readers_all,
    *_ns_all,
    *_misc_all,
]
