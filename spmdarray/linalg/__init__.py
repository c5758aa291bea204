"""``spmdarray.linalg``: NumPy's linear algebra, distributed.

Every name calls NumPy's own ``numpy.linalg`` function (under spmdarray's
docstring, from :mod:`spmdarray.routines.docstrings`): with spmdarray arrays it
dispatches through ``__array_function__`` to the implementations registered
by this package's private modules (SUMMA products in ``_summa``, N-D products
in ``_products``, decompositions and solvers in ``_decomp``, norms in
``_norms``, stacked routines in ``_batch``); with NumPy arrays it computes as
NumPy does.  Each function is collective when given spmdarray arrays.
"""

import numpy.linalg as _np_linalg
from numpy.linalg import __all__  # noqa: F401  (the same public names as numpy.linalg)

from spmdarray.linalg import _decomp, _einsum, _norms, _products  # noqa: F401  (they register functions)
from spmdarray.routines.docstrings import wrap_all as _wrap_all

# NumPy's functions under spmdarray's docstrings; LinAlgError is NumPy's class.
globals().update(_wrap_all(_np_linalg, __all__, "spmdarray.linalg", "linalg."))
