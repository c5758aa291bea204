"""The Array API ``fft`` extension: forwards to ``spmdarray.fft``.

Each function calls ``spmdarray.fft.<name>`` (distributed, pencil
decomposition; see docs/fft.md) when called.
``fftfreq``/``rfftfreq`` take the standard's ``dtype=`` and ``device=``.
"""

from spmdarray.array_api._forward import forward

__all__ = [
    "fft",
    "ifft",
    "fftn",
    "ifftn",
    "rfft",
    "irfft",
    "rfftn",
    "irfftn",
    "hfft",
    "ihfft",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]

fft = forward("fft", "fft")
ifft = forward("fft", "ifft")
fftn = forward("fft", "fftn")
ifftn = forward("fft", "ifftn")
rfft = forward("fft", "rfft")
irfft = forward("fft", "irfft")
rfftn = forward("fft", "rfftn")
irfftn = forward("fft", "irfftn")
hfft = forward("fft", "hfft")
ihfft = forward("fft", "ihfft")
fftshift = forward("fft", "fftshift")
ifftshift = forward("fft", "ifftshift")
_fftfreq = forward("fft", "fftfreq", creates=True)
_rfftfreq = forward("fft", "rfftfreq", creates=True)


def _freq(f, n, d, dtype, device):
    out = f(n, d=d)
    if device is not None:
        out = out.to_device(device)
    return out if dtype is None else out.astype(dtype, copy=False)


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """Sample frequencies of ``fft`` (distributed).  Collective."""
    return _freq(_fftfreq, n, d, dtype, device)


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """Sample frequencies of ``rfft`` (distributed).  Collective."""
    return _freq(_rfftfreq, n, d, dtype, device)
