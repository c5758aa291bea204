"""Helpers of the compiled lane's tests: both lanes side by side, and the objects they make.

``tests/test_lane_extension.py`` and ``tests/test_lane_views_and_functions.py``
compare the compiled lane (``spmdarray.core._lane``) with the Python lane,
which stays the reference, object by object and against NumPy.
"""

from __future__ import annotations

import sys

import numpy
import pytest
from helpers import python_lane_only

import spmdarray as sp
from spmdarray.core import whole
from spmdarray.core.storage import Storage

__all__ = ["both", "needs_lane", "python_calls", "python_only", "same_objects"]

needs_lane = pytest.mark.skipif(whole.LANE is None, reason="the compiled lane is not built or is off")

_STORAGE_SLOTS = [s for s in Storage.__slots__ if s != "__weakref__"]
_ARRAY_SLOTS = ["_s", "_map", "_lay", "_loc", "_pend"]


def _slots(obj, names) -> dict:
    return {n: getattr(obj, n) if hasattr(type(obj), n) and _has(obj, n) else "<unset>" for n in names}


def _has(obj, name) -> bool:
    try:
        object.__getattribute__(obj, name)
    except AttributeError:
        return False
    return True


def same_objects(a, b) -> None:
    """``a`` and ``b`` (one from each lane) alike: every slot of the arrays and storages."""
    assert type(a) is type(b) is sp.ndarray
    sa, sb = a._s, b._s
    assert type(sa) is type(sb) is Storage
    for n in _STORAGE_SLOTS:
        va, vb = _slots(sa, [n])[n], _slots(sb, [n])[n]
        if n == "alloc":
            assert type(va) is type(vb) is numpy.ndarray and va.flags.c_contiguous and vb.flags.c_contiguous
            assert va.dtype == vb.dtype and va.shape == vb.shape
            numpy.testing.assert_array_equal(va, vb)
        elif isinstance(va, (dict, list)):  # (caches: their own, holding the same keys)
            assert type(va) is type(vb) and va is not vb and len(va) == len(vb), n
            assert not isinstance(va, dict) or va.keys() == vb.keys(), n
        else:
            assert va == vb if n not in ("ctx", "be") else va is vb, n
    for n in _ARRAY_SLOTS:
        va, vb = _slots(a, [n])[n], _slots(b, [n])[n]
        if n == "_s":
            continue
        if n == "_loc":
            assert va[0] == id(sa) and vb[0] == id(sb)
            assert va[1] is sa.alloc and vb[1] is sb.alloc and va[3] is sa.alloc and vb[3] is sb.alloc
            assert va[2] is vb[2]
        else:
            assert va == vb, n


def python_only(f, *args):
    """``f(*args)`` with the Python lane alone (the compiled lane's entry points set aside)."""
    with pytest.MonkeyPatch.context() as mp:
        python_lane_only(mp)
        return f(*args)


def both(f, *args):
    """``f(*args)`` with the compiled lane and with the Python lane alone."""
    got = f(*args)
    return got, python_only(f, *args)


def python_calls(f, ignore=(), names=None) -> int:
    """spmdarray's Python functions called while ``f()`` runs (0: compiled all the way to NumPy),
    but for those named in ``ignore``; their names appended to the list ``names`` where given."""
    calls = []

    def prof(frame, event, arg):
        name = frame.f_code.co_name
        if event == "call" and frame.f_globals.get("__name__", "").startswith("spmdarray") and name not in ignore:
            calls.append(name)

    sys.setprofile(prof)
    try:
        f()
    finally:
        sys.setprofile(None)
    if names is not None:
        names.extend(calls)
    return len(calls)
