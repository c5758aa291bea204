"""spmdarray: NumPy semantics on distributed memory.

Change ``import numpy as np`` to ``import spmdarray as np`` and run the same
program with ``mpiexec -n K python prog.py`` (or plain ``python``).  Every
rank runs the same program; each array is split into blocks over a process
grid chosen from its shape, and shifted views exchange only their edge cells.

Functions that create or combine arrays are collective: every rank of the
array's communicator must call them in the same order.
"""

import os as _os

# Running from a source checkout: ``spmdarray.decomposition`` and
# ``spmdarray.comm`` live in the sibling folders ``decomposition/`` and
# ``comm/`` (an installed package has them inside ``spmdarray/``).
_root = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if _os.path.isfile(_os.path.join(_root, "decomposition", "layout.py")) and not _os.path.isdir(
    _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "decomposition")
):
    __path__.append(_root)  # noqa: F821

from . import (  # noqa: E402,F401  (they register functions)
    _advanced,
    _axes,
    _broadcasting,
    _diagonals,
    _editing,
    _fft,
    _histograms,
    _index_functions,
    _index_routing,
    _joining,
    _linalg_decomp,
    _linalg_norms,
    _linalg_products,
    _logic,
    _numeric_misc,
    _order_statistics,
    _padding,
    _scans,
    _selection,
    _sorting,
    _splitting,
    _statistics,
    array_api,
    fft,
    random,
)
from ._array import ndarray  # noqa: E402
from ._backend import backend_info  # noqa: E402
from ._creation import *  # noqa: E402,F401,F403
from ._creation import __all__ as _creation_all  # noqa: E402
from ._fusion import sync  # noqa: E402
from ._grids import *  # noqa: E402,F401,F403
from ._grids import __all__ as _grids_all  # noqa: E402
from ._joining import row_stack  # noqa: E402
from ._logic import asarray_chkfinite, from_dlpack, isfortran  # noqa: E402
from ._namespace import *  # noqa: E402,F401,F403
from ._namespace import __all__ as _ns_all  # noqa: E402
from ._namespace import __getattr__  # noqa: E402,F401
from ._numeric_misc import __all__ as _misc_all  # noqa: E402
from ._numeric_misc import bartlett, blackman, hamming, hanning, kaiser, poly, roots, vander  # noqa: E402,F401
from ._readers import *  # noqa: E402,F401,F403
from ._readers import __all__ as _readers_all  # noqa: E402
from ._storage import config  # noqa: E402
from .comm import CommStats, comm_stats, set_default_comm  # noqa: E402
from .io import checkpoint, load_hdf5, restore, save_hdf5  # noqa: E402

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
