"""The methods that write the whole distributed ``ndarray`` as bytes, a pickle or a file
(a mixin).  Each gathers the array: use :func:`spmdarray.save_hdf5` for parallel output
of large arrays.
"""

from __future__ import annotations

import pickle

import numpy as np

__all__ = ["SerialMixin"]


class SerialMixin:
    """``tobytes``, ``dumps``, ``dump`` and ``tofile``, as NumPy's, of the gathered array."""

    __slots__ = ()

    def tobytes(self, order: str = "C") -> bytes:
        """The raw bytes of the whole array, on every rank.  Collective: gathers the array."""
        return np.asarray(self).tobytes(order)

    def dumps(self) -> bytes:
        """A pickle of the whole array as a NumPy array, on every rank.  Collective: gathers the array."""
        return pickle.dumps(np.asarray(self), protocol=2)

    def dump(self, file) -> None:
        """Pickle the whole array (as a NumPy array) to ``file``, written by rank 0.  Collective: gathers."""
        data = np.asarray(self)
        if self._st.ctx.rank == 0:
            if isinstance(file, (str, bytes)) or hasattr(file, "__fspath__"):
                with open(file, "wb") as f:
                    pickle.dump(data, f, protocol=2)
            else:
                pickle.dump(data, file, protocol=2)

    def tofile(self, fid, sep: str = "", format: str = "%s") -> None:  # noqa: A002
        """Write the whole array to ``fid`` (NumPy's ``tofile``), written by rank 0.

        Collective: gathers the array (use :func:`spmdarray.save_hdf5` for
        parallel output of large arrays).
        """
        data = np.asarray(self)
        if self._st.ctx.rank == 0:
            data.tofile(fid, sep=sep, format=format)
