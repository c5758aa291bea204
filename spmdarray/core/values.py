"""The methods of the distributed ``ndarray`` on its values: complex parts, ``conj``,
``byteswap``, ``flags``, ``clip`` and ``round`` (a mixin).
"""

from __future__ import annotations

import numpy as np

from spmdarray.core.registry import ops

__all__ = ["ValuesMixin"]


class ValuesMixin:
    """``real``, ``imag``, ``conj``, ``byteswap``, ``flags``, ``clip`` and ``round``, as NumPy's."""

    __slots__ = ()

    @property
    def real(self):
        """Real part: a writable view for complex arrays, ``self`` otherwise.  Not collective."""
        if self.dtype.kind != "c":
            return self

        return ops.part_view(self, "real")

    @real.setter
    def real(self, value) -> None:
        ops.assign(self.real, value)

    @property
    def imag(self):
        """Imaginary part: a writable view for complex arrays.

        Not collective for complex arrays.  For other dtypes a new array of
        zeros (collective, no communication; NumPy gives a read-only view).
        """
        if self.dtype.kind != "c":
            return ops.zeros_like(self)

        return ops.part_view(self, "imag")

    @imag.setter
    def imag(self, value) -> None:
        if self.dtype.kind != "c":
            raise TypeError("array does not have imaginary part to set")
        ops.assign(self.imag, value)

    def conj(self):
        """Complex conjugate (``numpy.conjugate``).  Collective (no communication)."""
        return np.conjugate(self)

    conjugate = conj

    def byteswap(self, inplace: bool = False):
        """Bytes of every element swapped, block by block.  Collective (no communication)."""

        return ops.byteswap(self, inplace)

    @property
    def flags(self):
        """Contiguity of the global view (see :class:`spmdarray.routines.logic.Flags`).  Not collective."""

        return ops.flags_of(self)

    def clip(self, min=None, max=None, out=None, **kw):  # noqa: A002
        """Values limited to ``[min, max]``: ``numpy.clip(a, min, max)``.  Collective.

        Elementwise: no communication when the bounds are scalars or share
        this array's layout.
        """
        return np.clip(self, min, max, out=out, **kw)

    def round(self, decimals: int = 0, out=None):
        """Rounded to ``decimals`` (NumPy's round half to even).  Collective (no communication)."""
        return ops.round(self, decimals, out)
