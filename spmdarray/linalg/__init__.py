"""``spmdarray.linalg``: NumPy's linear algebra, distributed.

Every name is NumPy's own ``numpy.linalg`` function: with spmdarray arrays it
dispatches through ``__array_function__`` to the implementations registered
by this package's private modules (SUMMA products in ``_summa``, N-D products
in ``_products``, decompositions and solvers in ``_decomp``, norms in
``_norms``, stacked routines in ``_batch``); with NumPy arrays it computes as
NumPy does.  Each function is collective when given spmdarray arrays.
"""

from numpy.linalg import *  # noqa: F401,F403
from numpy.linalg import __all__  # noqa: F401  (the same public names as numpy.linalg)

from spmdarray.linalg import _decomp, _einsum, _norms, _products  # noqa: F401  (they register functions)
