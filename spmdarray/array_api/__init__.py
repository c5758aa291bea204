"""The Array API standard (2024.12) namespace of spmdarray.

``x.__array_namespace__()`` returns this module.  Its functions take and
return distributed :class:`spmdarray.ndarray` arrays and follow the
standard's names and signatures (``concat``, ``permute_dims``,
``astype(x, dtype, /, *, copy=True, device=None)``, ``unique_*``,
``sort(..., descending=, stable=)``, ``std(..., correction=)`` ...).

* Most names are NumPy's own functions and ufuncs, which dispatch to
  spmdarray's implementations; a function spmdarray does not implement yet
  raises ``NotImplementedError`` naming it (never a silent gather).
* Creation functions take ``device=``: ``"cpu"`` (NumPy blocks) or ``"gpu"``
  (CuPy blocks); ``None`` is the default backend.  They also take spmdarray's
  ``comm=``.
* Type promotion is NumPy's: mixed-kind operations the standard leaves
  undefined (``int32 array + float32 array``) are allowed and follow NumPy.
* ``__dlpack__`` exports this rank's block; :func:`from_dlpack` wraps each
  rank's block into a distributed array like :func:`spmdarray.from_local`.
"""

import sys

from spmdarray.array_api import fft, linalg
from spmdarray.array_api._main import *  # noqa: F403
from spmdarray.array_api._main import __all__ as _main_all
from spmdarray.array_api._main import __array_api_version__, __array_namespace_info__, _check_version  # noqa: F401
from spmdarray.core.registry import provides

__all__ = [*_main_all, "fft", "linalg"]


@provides("array_namespace")
def _namespace(api_version=None):
    """This module, for ``x.__array_namespace__(api_version)``.  Not collective."""
    _check_version(api_version)
    return sys.modules[__name__]
