"""``spmdarray.fft``: NumPy's FFT functions, distributed.

The transforms and ``fftshift``/``ifftshift`` are NumPy's own functions: with
spmdarray arrays they dispatch through ``__array_function__`` to the pencil
implementation in :mod:`spmdarray.fft._transforms`; with NumPy arrays they compute as
NumPy does.  ``fftfreq`` and ``rfftfreq`` create distributed arrays (they
take ``comm=`` and ``backend=`` like the other creation functions).
"""

from numpy.fft import (
    fft,
    fft2,
    fftn,
    fftshift,
    hfft,
    ifft,
    ifft2,
    ifftn,
    ifftshift,
    ihfft,
    irfft,
    irfft2,
    irfftn,
    rfft,
    rfft2,
    rfftn,
)

from spmdarray.fft._transforms import fftfreq, rfftfreq

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
