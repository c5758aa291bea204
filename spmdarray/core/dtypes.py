"""Result dtypes and NumPy's casting errors, checked once per kind of operands.

Before any block is touched, an operation runs NumPy on one-element dummies
of its operands (:func:`_checked_dtypes`): that gives the result dtypes and
raises NumPy's own exception for a bad dtype, a forbidden cast or a Python
int that overflows, on every rank alike, since it reads no element.  The
outcome is cached by what decides it (:func:`_probe_key`).  Not collective.
"""

from __future__ import annotations

import numpy as np

from spmdarray.core.array import ndarray
from spmdarray.core.registry import provides

__all__ = ["cached_dtypes", "result_dtypes"]


def _dummy(x):
    if isinstance(x, (ndarray, np.ndarray)):
        return np.ones((1,) * x.ndim, x.dtype)
    return x


def _shape_of(x):
    if isinstance(x, (ndarray, np.ndarray)):
        return x.shape
    return ()


_PROBES: dict = {}

_UNKEYED = object()


def _arg_key(a):
    """What decides dtypes and casting errors for one operand (``_UNKEYED``: unknown)."""
    t = type(a)
    if t is ndarray or isinstance(a, (ndarray, np.ndarray)):
        return (a.dtype, a.ndim)
    if a is None or t is float or t is complex or t is bool:
        return None if a is None else t
    if isinstance(a, int) and not isinstance(a, bool):
        # what decides overflow errors: int8 holds -128 (~a == 127) but not -129
        return (int, a < 0, (~a if a < 0 else a).bit_length())
    if isinstance(a, np.generic):
        return (type(a), a.dtype)
    return _UNKEYED


def _operand_keys(func, args, outs, where_op) -> list | None:
    """``[func, key of each operand...]``, or None when an operand's key is unknown."""
    parts = [func]
    for a in (*args, *outs, where_op):
        k = _arg_key(a)
        if k is _UNKEYED:
            return None
        parts.append(k)
    return parts


def cached_dtypes(func, args, outs=(None,), where_op=None):
    """Result dtypes of ``func`` already checked for these operand kinds, else None."""
    parts = _operand_keys(func, args, outs, where_op)
    return None if parts is None else _PROBES.get(tuple(parts))


def _checked_dtypes(func, args, outs, where_op, kwargs, nout):
    """Result dtypes, by running ``func`` on one-element dummies (cached).

    Raises NumPy's own exception for bad dtypes, casting or Python-int
    overflow; it reads no element of any block, so every rank agrees.
    """
    pkey = _probe_key(func, args, outs, where_op, kwargs)
    dtypes = _PROBES.get(pkey) if pkey is not None else None
    if dtypes is not None:
        return dtypes
    dargs = [_dummy(a) for a in args]
    dkw = dict(kwargs)
    given = [o for o in outs if o is not None]
    if given:
        nd = given[0].ndim
        dkw["out"] = tuple(np.empty((1,) * nd, o.dtype) if o is not None else None for o in outs)
        if nout == 1 and not isinstance(func, np.ufunc):
            dkw["out"] = dkw["out"][0]
    if where_op is not None:
        dkw["where"] = np.ones((1,) * len(_shape_of(where_op)), bool) if _shape_of(where_op) else True
    with np.errstate(all="ignore"):
        probe = func(*dargs, **dkw)
    probes = probe if nout > 1 else (probe,)
    dtypes = [np.asarray(p).dtype for p in probes]
    if pkey is not None:
        if len(_PROBES) > 4096:
            _PROBES.clear()
        _PROBES[pkey] = dtypes
    return dtypes


@provides("result_dtypes")
def result_dtypes(func, args):
    """Checked result dtypes of ``func(*args)``, or None if NumPy rejects them."""
    try:
        return _checked_dtypes(func, args, (None,), None, {}, 1)
    except Exception:  # noqa: BLE001 - elementwise raises it properly later
        return None


def _probe_key(func, args, outs, where_op, kwargs):
    """Hashable description of everything that decides dtypes and casting errors."""
    parts = _operand_keys(func, args, outs, where_op)
    if parts is None:
        return None
    if kwargs:
        parts.append(tuple(sorted(kwargs.items())))
    key = tuple(parts)
    try:
        hash(key)
    except TypeError:
        return None
    return key
