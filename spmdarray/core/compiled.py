"""The compiled lane's methods, set on the array class over its Python methods.

``spmdarray.core._lane`` (see :mod:`spmdarray.core.whole`) computes the usual
case of some of ``ndarray``'s methods with no Python frame: indexing and
assignment, ``__array_ufunc__``, the full reductions without arguments, and the
getters of ``T``, ``shape``, ``ndim``, ``size`` and ``dtype``.  Each becomes a
compiled method (``LaneMethod``) that tries its case first, then calls the
Python method, which it keeps as ``__wrapped__`` and which stays the reference
for every other case.  The operators are set likewise where they are defined
(:mod:`spmdarray.core.operators`).
"""

from __future__ import annotations

from spmdarray.core.whole import LANE

__all__ = ["METHODS", "PROPERTIES", "install"]

#: Methods whose usual case is compiled: ``x[key]``, ``x[key] = v``, NumPy's ufuncs on arrays on
#: the lane and numbers called without keywords, and ``x.sum()`` and the like without arguments.
METHODS = ("__getitem__", "__setitem__", "__array_ufunc__", "sum", "prod", "min", "max", "any", "all")

#: Properties whose getter is compiled: ``x.T`` of a replicated array (the transposed view), and the
#: metadata read from the whole copy an array holds.  Their setters stay Python's.
PROPERTIES = ("T", "shape", "ndim", "size", "dtype")


def install(cls) -> None:
    """Set the compiled methods and property getters on the array class ``cls``, where the
    compiled lane is loaded (nothing otherwise).  Not collective."""
    if LANE is None:
        return
    for name in METHODS:
        setattr(cls, name, LANE.method(name, cls.__dict__[name]))
    for name in PROPERTIES:
        p = cls.__dict__[name]
        setattr(cls, name, property(LANE.method(name, p.fget), p.fset, doc=p.__doc__))
