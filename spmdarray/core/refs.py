"""Reference counts measured against a baseline, never against fixed numbers.  Not collective.

``sys.getrefcount(x)`` counts ``x``'s holders plus the references the
interpreter makes on the way to the call: its own argument and, up to Python
3.13, the evaluation-stack entry of the variable read.  Python 3.14 borrows
such stack references (``LOAD_FAST_BORROW``), so the same line sees a count one
lower there, and a fixed threshold then takes a named object for an unnamed
one.  The baselines here are measured once, at import, with the code shapes
the callers use, ``sys.getrefcount(local)`` and ``sys.getrefcount(obj.attr)``,
so that ``count - LOCAL`` and ``count - ATTRIBUTE`` count holders only, on any
interpreter that implements ``sys.getrefcount``.

>>> import sys
>>> def holders_besides_the_local():
...     x = object()
...     kept = [x]
...     return sys.getrefcount(x) - LOCAL
>>> holders_besides_the_local()
1
"""

from __future__ import annotations

import sys

__all__ = ["ATTRIBUTE", "LOCAL"]


class _Holder:
    __slots__ = ("x",)


def _measure() -> tuple[int, int]:
    x = object()
    local = sys.getrefcount(x)  # held by the local ``x`` only
    h = _Holder()
    h.x = object()
    attribute = sys.getrefcount(h.x)  # held by the attribute only
    return local, attribute


#: ``sys.getrefcount(x)`` for an ``x`` that only the calling function's local variable holds.
#: ``ATTRIBUTE``: ``sys.getrefcount(h.x)`` for an object that only the attribute ``h.x`` holds.
LOCAL, ATTRIBUTE = _measure()
