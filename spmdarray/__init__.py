"""spmdarray: NumPy semantics on distributed memory.

Change ``import numpy as np`` to ``import spmdarray as np`` and run the same
program with ``mpiexec -n K python prog.py`` (or plain ``python``).  Every
rank runs the same program; each array is split into blocks over a process
grid chosen from its shape, and shifted views exchange only their edge cells.

Functions that create or combine arrays are collective: every rank of the
array's communicator must call them in the same order.
"""

# Imported last: the Array API namespace builds on ``spmdarray.api``.
from spmdarray import (
    api,  # noqa: F401 - spmdarray.api, the namespace module
    array_api,  # noqa: E402
)
from spmdarray.api import *  # noqa: F403
from spmdarray.api import __all__ as _api_all
from spmdarray.api import __getattr__  # noqa: F401
from spmdarray.backend.threads import apply_at_import as _apply_threads

_apply_threads()  # BLAS threads per rank where several ranks share a node (config.blas_threads)

__version__ = "0.1.0"

__all__ = [*_api_all, "array_api"]
