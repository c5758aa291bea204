"""Array API device names of the backends (``"cpu"`` for NumPy blocks, ``"gpu"`` for CuPy)."""

from __future__ import annotations

from spmdarray.backend.backends import backend_info

__all__ = ["DEVICES", "device_of", "default_backend", "backend_for"]

#: Array API device name for each spmdarray backend.
DEVICES = {"numpy": "cpu", "cupy": "gpu"}
_BACKENDS = {v: k for k, v in DEVICES.items()}


def device_of(x) -> str:
    """``"cpu"`` for arrays with NumPy blocks, ``"gpu"`` for CuPy blocks.  Not collective."""
    return DEVICES[x._st.be.name]


def default_backend() -> str:
    """Name of the backend new arrays use (collective the first time a backend is resolved)."""
    return backend_info()["backend"]


def backend_for(device) -> str:
    """Backend name for an Array API ``device`` (None: the default backend).  Not collective."""
    if device is None:
        return default_backend()
    if device not in _BACKENDS:
        raise ValueError(f"unsupported device {device!r}: spmdarray arrays live on 'cpu' (NumPy) or 'gpu' (CuPy)")
    return _BACKENDS[device]
