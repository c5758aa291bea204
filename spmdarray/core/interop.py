"""The Array API and DLPack methods of the distributed ``ndarray`` (a mixin).

``device``, ``to_device`` and ``__array_namespace__`` are the Array API's;
``__dlpack__`` gives this rank's block, not the global array.
"""

from __future__ import annotations

from spmdarray.backend.devices import backend_for, device_of
from spmdarray.core.registry import ops

__all__ = ["InteropMixin"]


class InteropMixin:
    """Array API device and namespace methods, and DLPack export of this rank's block."""

    __slots__ = ()

    @property
    def device(self):
        """Array API device: ``"cpu"`` (NumPy blocks) or ``"gpu"`` (CuPy blocks).  Not collective."""

        return device_of(self)

    def to_device(self, device, /, *, stream=None) -> InteropMixin:
        """This array on another Array API device (same layout).  Collective, no communication."""

        if stream is not None:
            raise NotImplementedError("spmdarray.ndarray.to_device(stream=...) is not supported")
        name = backend_for(device)
        if name == self._st.be.name:
            return self

        return ops.to_backend(self, name, self.dtype)

    def __array_namespace__(self, /, *, api_version=None):
        """The Array API namespace :mod:`spmdarray.array_api`.  Not collective."""

        return ops.array_namespace(api_version)

    def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack capsule of THIS RANK'S BLOCK (not of the global array).  Not collective.

        ``spmdarray.from_dlpack`` on every rank wraps the blocks back into a
        distributed array (stacked along axis 0, like ``from_local``).
        """
        kw = {"stream": stream} if stream is not None else {}
        if max_version is not None:
            kw["max_version"] = max_version
        if dl_device is not None:
            kw["dl_device"] = dl_device
        if copy is not None:
            kw["copy"] = copy
        return self.local.__dlpack__(**kw)  # the program may write through it: exposed

    def __dlpack_device__(self):
        """DLPack device of this rank's block.  Not collective."""
        return self._block.__dlpack_device__()
