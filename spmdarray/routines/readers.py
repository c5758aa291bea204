"""Array creation from iterables, buffers and text that every rank passes.

These are ``numpy.fromiter``, ``frombuffer``, ``fromstring``, ``fromfile``, ``loadtxt``,
``genfromtxt`` and ``fromregex`` with a distributed result: every rank parses
the same (small) input with NumPy's own parser, then keeps only its block, as
:func:`spmdarray.array` does with a list.  The input is therefore *replicated*:
each rank reads the whole file or buffer.  That suits small inputs (parameter
tables, coordinates); large data belongs in HDF5 (:func:`spmdarray.load_hdf5`
reads only each rank's part).  All are collective over ``comm`` and move no
data between ranks.
"""

from __future__ import annotations

import numpy as np

from spmdarray.core.registry import REPLICATED
from spmdarray.routines.creation import array

__all__ = ["fromiter", "frombuffer", "fromstring", "fromfile", "loadtxt", "genfromtxt", "fromregex"]


def _distributed(parsed: np.ndarray, comm):
    return array(parsed, comm=comm)


def fromiter(iterable, dtype, count=-1, *, like=None, comm=None):
    """``numpy.fromiter`` with a distributed result.  Collective (no communication).

    Every rank must pass an iterable that yields the same values.
    """
    return _distributed(np.fromiter(iterable, dtype, count), comm)


def frombuffer(buffer, dtype=float, count=-1, offset=0, *, like=None, comm=None):
    """``numpy.frombuffer`` with a distributed result (a copy, not a view of ``buffer``).

    Collective (no communication); every rank passes the same bytes.
    """
    return _distributed(np.frombuffer(buffer, dtype, count, offset), comm)


def fromstring(string, dtype=float, count=-1, *, sep, like=None, comm=None):
    """``numpy.fromstring`` (text mode, ``sep`` required as in NumPy 2) with a distributed result.

    Collective (no communication); every rank passes the same string.
    """
    return _distributed(np.fromstring(string, dtype, count, sep=sep), comm)


def fromfile(file, dtype=float, count=-1, sep="", offset=0, *, like=None, comm=None):
    """``numpy.fromfile`` with a distributed result.  Collective (no communication).

    Every rank reads the whole file, then keeps its block: for small files only.
    """
    return _distributed(np.fromfile(file, dtype, count, sep, offset), comm)


def loadtxt(fname, *args, comm=None, **kwargs):
    """``numpy.loadtxt`` with a distributed result.  Collective (no communication).

    Every rank reads and parses the whole file (NumPy's parser, all of its
    options), then keeps its block: for small text files only.
    """
    return _distributed(np.loadtxt(fname, *args, **kwargs), comm)


def genfromtxt(fname, *args, comm=None, **kwargs):
    """``numpy.genfromtxt`` with a distributed result.  Collective (no communication).

    Every rank reads and parses the whole file; structured or masked results
    (``names=``, ``usemask=True``) raise ``NotImplementedError``.
    """
    parsed = np.genfromtxt(fname, *args, **kwargs)
    if parsed.dtype.names is not None or isinstance(parsed, np.ma.MaskedArray):
        raise NotImplementedError(
            "spmdarray.genfromtxt: structured (names=) or masked (usemask=True) results are not distributed; "
            "call numpy.genfromtxt for those"
        )
    return _distributed(parsed, comm)


def fromregex(file, regexp, dtype, encoding=None, *, comm=None):
    """``numpy.fromregex`` with a distributed result (plain dtypes only).  Collective (no communication)."""
    parsed = np.fromregex(file, regexp, dtype, encoding=encoding)
    if parsed.dtype.names is not None:
        if len(parsed.dtype.names) != 1:
            raise NotImplementedError(
                "spmdarray.fromregex: a structured dtype with several fields is not distributed; give one field"
            )
        parsed = parsed[parsed.dtype.names[0]]
    return _distributed(parsed, comm)


REPLICATED.update(getattr(np, n) for n in __all__)
