"""The NumPy-compatible namespace that ``import spmdarray`` gives (re-exported by ``spmdarray/__init__.py``).

It is a module of its own so that :mod:`spmdarray.array_api`, which builds on
it, sits below the package's ``__init__`` instead of importing it back.
"""

# Modules that register NumPy functions with the dispatch table; each layer is
# imported before the ones above it.
from spmdarray import fft, io, linalg, random  # noqa: F401
from spmdarray.backend.backends import backend_info
from spmdarray.comm import CommStats, CommTrace, comm_stats, comm_trace, set_default_comm
from spmdarray.core.array import ndarray
from spmdarray.core.thunk import sync
from spmdarray.engine import dispatch as _dispatch  # noqa: F401
from spmdarray.io import checkpoint, load_hdf5, restore, save_hdf5
from spmdarray.routines import attributes as _attributes  # noqa: F401
from spmdarray.routines import docstrings as _docstrings
from spmdarray.routines import elementwise_functions as _elementwise_functions  # noqa: F401
from spmdarray.routines import scans as _scans  # noqa: F401
from spmdarray.routines import sorting as _sorting  # noqa: F401
from spmdarray.routines.creation import *  # noqa: F401,F403
from spmdarray.routines.creation import __all__ as _creation_all
from spmdarray.routines.grids import *  # noqa: F401,F403
from spmdarray.routines.grids import __all__ as _grids_all
from spmdarray.routines.indexing import advanced as _advanced  # noqa: F401
from spmdarray.routines.indexing import functions as _index_functions  # noqa: F401
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
from spmdarray.settings import config

__all__ = [
    "CommStats",
    "backend_info",
    "checkpoint",
    "comm_stats",
    "comm_trace",
    "CommTrace",
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

# Every implementation is registered now: the wrapped NumPy functions' docstrings
# take their final category (spmdarray.routines.docstrings).
_docstrings.refresh()
# spmdarray's own creation functions: what they communicate and replicate, from the same table.
for _name in (*_creation_all, *_grids_all, *_readers_all):
    if callable(globals()[_name]) and not isinstance(globals()[_name], type):
        _docstrings.annotate(globals()[_name], "creation")
