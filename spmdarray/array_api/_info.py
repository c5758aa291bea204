"""Devices and ``__array_namespace_info__`` of the Array API namespace."""

from __future__ import annotations

import numpy as np

__all__ = ["Info", "backend_for", "device_of", "DEVICES"]

#: Array API device name for each spmdarray backend.
DEVICES = {"numpy": "cpu", "cupy": "gpu"}
_BACKENDS = {v: k for k, v in DEVICES.items()}


def device_of(x) -> str:
    """``"cpu"`` for arrays with NumPy blocks, ``"gpu"`` for CuPy blocks.  Not collective."""
    return DEVICES[x._st.be.name]


def default_backend() -> str:
    """Name of the backend new arrays use (collective the first time a backend is resolved)."""
    from spmdarray.backend.backends import backend_info

    return backend_info()["backend"]


def backend_for(device) -> str:
    """Backend name for an Array API ``device`` (None: the default backend).  Not collective."""
    if device is None:
        return default_backend()
    if device not in _BACKENDS:
        raise ValueError(f"unsupported device {device!r}: spmdarray arrays live on 'cpu' (NumPy) or 'gpu' (CuPy)")
    return _BACKENDS[device]


class Info:
    """The object ``__array_namespace_info__()`` returns (Array API 2024.12)."""

    __module__ = "spmdarray.array_api"

    def capabilities(self) -> dict:
        """Optional features.  Boolean masks and ``unique_*``/``nonzero`` give
        distributed results of data-dependent size once those functions are
        registered (they are reported from the dispatch table)."""
        from spmdarray.core.dispatch import HANDLED

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
