"""Ufuncs on device (CuPy) blocks with NumPy's results: :func:`_on_device`.  Not collective."""

from __future__ import annotations

import numpy as np

__all__ = ["_on_device"]


# Ufuncs CuPy lacks (``spacing``...), found on first use: computed on a host copy
# of this rank's block (never a gather) and copied back.
_HOST_UFUNCS: set = set()

_LOGICAL = frozenset({np.logical_and, np.logical_or, np.logical_xor, np.logical_not})


def _kind(a) -> str:
    return a.dtype.kind if hasattr(a, "dtype") else ("c" if isinstance(a, complex) else "")


def _device_operand(a, kinds: str):
    """A Python int beyond int64, as NumPy would convert it (CuPy overflows a C long)."""
    if type(a) is int and not -(1 << 63) <= a < 1 << 63:
        if any(k in "fc" for k in kinds):
            return float(a)
        if "u" in kinds and 0 <= a < 1 << 64:
            return np.uint64(a)
    return a


def _on_device(func, be, nout: int, kw: dict):
    """``run(*blocks, out=...)``: ufunc ``func`` on device blocks with NumPy's results.

    CuPy's ufuncs take no ``where=`` or ``signature=``, fill at most one
    ``out``, reject complex logical operands and Python ints beyond int64, and
    lack a few ufuncs.  Each case is computed another way here; every other
    call goes straight to CuPy.
    """
    kw = dict(kw)
    where = kw.pop("where", None)
    sig = kw.pop("signature", None)
    if sig is not None:
        sig = sig if isinstance(sig, tuple) else (sig,)
        if len(sig) == 1 and not isinstance(sig[0], str):
            kw["dtype"] = sig[0]
        elif any(isinstance(t, str) for t in sig) or any(t is not None for t in sig[:-1]):
            raise NotImplementedError(
                f"{func.__name__}(signature={sig!r}) on the cupy backend: give only the output type, or dtype="
            )
        else:
            kw["dtype"] = sig[-1]

    def run(*args, out) -> None:
        outs = out if isinstance(out, tuple) else (out,)
        kinds = "".join(_kind(a) for a in args)
        args = [_device_operand(a, kinds) for a in args]
        if func in _LOGICAL and "c" in kinds:
            args = [np.not_equal(a, 0) if _kind(a) == "c" else a for a in args]
        if where is None and nout == 1 and func not in _HOST_UFUNCS:
            try:
                func(*args, out=outs, **kw)
                return
            except TypeError as e:
                if "NotImplemented" not in str(e):
                    raise
                _HOST_UFUNCS.add(func)
        if func in _HOST_UFUNCS:
            res = func(*[be.to_host(a) if be.is_block(a) else a for a in args], **kw)
            res = tuple(be.asarray(r) for r in (res if nout > 1 else (res,)))
        else:
            res = func(*args, **kw)
            res = res if nout > 1 else (res,)
        w = True if where is None else where if hasattr(where, "shape") else bool(where)
        for o, r in zip(outs, res):
            # Casting was checked against NumPy's rules before any work.
            np.copyto(o, r, casting="unsafe", where=w)

    return run
