"""``spmdarray.fft``: NumPy's FFT functions, distributed.

The transforms and ``fftshift``/``ifftshift`` call NumPy's own functions: with
spmdarray arrays they dispatch through ``__array_function__`` to the pencil
implementation in :mod:`spmdarray.fft._transforms`; with NumPy arrays they compute as
NumPy does.  ``fftfreq`` and ``rfftfreq`` create distributed arrays (they
take ``comm=`` and ``backend=`` like the other creation functions).
"""

import numpy.fft as _np_fft

from spmdarray.fft._transforms import fftfreq, rfftfreq
from spmdarray.routines.docstrings import wrap_all as _wrap_all

__all__ = [
    "fft",
    "ifft",
    "rfft",
    "irfft",
    "hfft",
    "ihfft",
    "fftn",
    "ifftn",
    "fft2",
    "ifft2",
    "rfftn",
    "rfft2",
    "irfftn",
    "irfft2",
    "fftshift",
    "ifftshift",
    "fftfreq",
    "rfftfreq",
]

# NumPy's transforms under spmdarray's docstrings (spmdarray.routines.docstrings).
globals().update(_wrap_all(_np_fft, [n for n in __all__ if not n.endswith("freq")], "spmdarray.fft", "fft."))
