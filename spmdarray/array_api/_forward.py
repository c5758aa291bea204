"""Late-bound forwarding of extension functions to ``spmdarray.<module>``."""

from __future__ import annotations

import functools

import numpy as np

from spmdarray import api


def forward(module: str, name: str, creates: bool = False):
    """A function calling ``spmdarray.<module>.<name>`` at call time.

    The target is looked up on each call, so implementations that land in
    ``spmdarray.linalg``/``spmdarray.fft`` later are used as soon as they
    exist.  ``creates``: the function takes no arrays, so NumPy's own
    function would silently make a non-distributed array: while
    spmdarray's attribute is still NumPy's, it raises NotImplementedError.
    """
    ref = getattr(getattr(np, module), name)

    @functools.wraps(ref)
    def f(*args, **kwargs):
        target = getattr(getattr(api, module), name, None)
        if target is None or (creates and target is ref):
            raise NotImplementedError(f"spmdarray.array_api.{module}.{name} is not implemented yet")
        return target(*args, **kwargs)

    f.__module__ = f"spmdarray.array_api.{module}"
    f.__doc__ = f"Forwards to ``spmdarray.{module}.{name}`` (see ``numpy.{module}.{name}``)."
    return f
