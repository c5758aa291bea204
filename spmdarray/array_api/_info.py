"""Devices and ``__array_namespace_info__`` of the Array API namespace."""

from __future__ import annotations

import numpy as np

from spmdarray.backend.devices import _BACKENDS, DEVICES, backend_for, default_backend, device_of
from spmdarray.core.registry import HANDLED

__all__ = ["Info", "backend_for", "device_of", "DEVICES"]


class Info:
    """The object ``__array_namespace_info__()`` returns (Array API 2024.12)."""

    __module__ = "spmdarray.array_api"

    def capabilities(self) -> dict:
        """Optional features.  Boolean masks and ``unique_*``/``nonzero`` give
        distributed results of data-dependent size once those functions are
        registered (they are reported from the dispatch table)."""

        data_dependent = np.nonzero in HANDLED
        return {
            "boolean indexing": data_dependent,
            "data-dependent shapes": data_dependent,
            "max dimensions": 64,
        }

    def default_device(self) -> str:
        return DEVICES[default_backend()]

    def devices(self) -> list:
        """Devices arrays can live on: ``"cpu"`` always, ``"gpu"`` when CuPy is the default backend."""
        out = ["cpu"]
        if default_backend() == "cupy":
            out.append("gpu")
        return out

    def default_dtypes(self, *, device=None) -> dict:
        _check_device(device)
        return {
            "real floating": np.dtype(np.float64),
            "complex floating": np.dtype(np.complex128),
            "integral": np.dtype(np.intp),
            "indexing": np.dtype(np.intp),
        }

    def dtypes(self, *, device=None, kind=None) -> dict:
        _check_device(device)
        return np.__array_namespace_info__().dtypes(kind=kind)


def _check_device(device) -> None:
    if device is not None and device not in _BACKENDS:
        raise ValueError(f"unsupported device {device!r}: spmdarray arrays live on 'cpu' (NumPy) or 'gpu' (CuPy)")
