"""SplitMix64, defined once: the constants, a vectorised NumPy form and the scalar kernel sources.

Not collective: pure functions and strings, no MPI and no state.

Element ``i`` of the stream keyed ``key`` is output ``i`` of SplitMix64
started at ``key``::

    mix64((key + (i + 1) * GAMMA) mod 2**64) == mix64(i * GAMMA + base(key))

where :func:`mix64` is the finaliser: the xorshift-multiply rounds of
:data:`MIX_ROUNDS`, then a xorshift by :data:`FINAL_SHIFT`.  A double in
[0, 1) is the top 53 bits of the word times ``2**-53``.  Keys are derived by
chaining the finaliser over words (:func:`fold`).

Three forms evaluate this, all built from the constants below, so changing a
constant here changes every one of them:

* :func:`bits`, :func:`unit`, :func:`unit_open`: vectorised on uint64
  arrays, used by :mod:`spmdarray.random` (NumPy, or CuPy arrays through
  NumPy's dispatch);
* :data:`NUMBA_U01`: Python source of a scalar function, spliced into the
  numba kernels of :mod:`spmdarray.fusion.kernels_cpu`;
* :data:`CUDA_U01`: CUDA C++ source of a ``__device__`` function, spliced
  into the CuPy kernels of :mod:`spmdarray.fusion.kernels_cuda`.

Both scalar functions take ``(base(key), i)`` and return the float64 in
[0, 1) of element ``i``.  This module imports only NumPy, so every layer may
use it.

Examples
--------
>>> int(mix64(GAMMA))  # the first output of SplitMix64 seeded 0
16294208416658607535
>>> [int(b) for b in bits(1234567, np.arange(3, dtype=np.uint64))]
[6457827717110365317, 3203168211198807973, 9817491932198370423]
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "MASK",
    "GAMMA",
    "MIX_ROUNDS",
    "FINAL_SHIFT",
    "UNIT_BITS",
    "NUMBA_U01_NAME",
    "NUMBA_U01",
    "CUDA_U01_NAME",
    "CUDA_U01",
    "base",
    "mix64",
    "mix64_inplace",
    "fold",
    "bits",
    "unit",
    "unit_open",
]

#: Words are taken modulo ``2**64``.
MASK = (1 << 64) - 1
#: The counter increment: the odd integer nearest ``2**64`` over the golden ratio.
GAMMA = 0x9E3779B97F4A7C15
#: Finaliser rounds ``z = (z ^ (z >> shift)) * multiplier``, in order.
MIX_ROUNDS = ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB))
#: The finaliser's last step: ``z ^ (z >> FINAL_SHIFT)``.
FINAL_SHIFT = 31
#: Mantissa bits a uniform float keeps: the top ``UNIT_BITS[dtype]`` bits times ``2**-UNIT_BITS[dtype]``.
UNIT_BITS = {np.dtype(np.float64): 53, np.dtype(np.float32): 24}

_SHIFT53 = 64 - UNIT_BITS[np.dtype(np.float64)]
_SCALE53 = 2.0 ** -UNIT_BITS[np.dtype(np.float64)]


def base(key: int) -> int:
    """The counter offset of stream ``key``: ``(key + GAMMA) mod 2**64``.  Not collective.

    Output ``i`` of the stream is ``mix64(i * GAMMA + base(key))``; the kernels
    take this offset as their key parameter.

    Parameters
    ----------
    key : int
        Stream key (any integer; taken modulo ``2**64``).

    Returns
    -------
    int
        In ``[0, 2**64)``.

    Examples
    --------
    >>> base(MASK) == GAMMA - 1
    True
    """
    return (key + GAMMA) & MASK


def mix64(z: Any) -> np.ndarray:
    """The SplitMix64 finaliser, a bijection on 64-bit words, applied elementwise.  Not collective.

    Parameters
    ----------
    z : array_like of uint64
        Words to mix (copied, not modified).

    Returns
    -------
    numpy.ndarray of uint64
        Same shape as ``z``.

    Examples
    --------
    >>> int(mix64(0))
    0
    """
    return mix64_inplace(np.array(z, dtype=np.uint64))


def mix64_inplace(z: Any) -> Any:
    """:func:`mix64` overwriting the uint64 array ``z`` (NumPy or CuPy); returns ``z``.  Not collective."""
    tmp = np.empty_like(z)
    with np.errstate(over="ignore"):
        for shift, mult in MIX_ROUNDS:
            np.right_shift(z, np.uint64(shift), out=tmp)
            np.bitwise_xor(z, tmp, out=z)
            np.multiply(z, np.uint64(mult), out=z)
        np.right_shift(z, np.uint64(FINAL_SHIFT), out=tmp)
        np.bitwise_xor(z, tmp, out=z)
    return z


def fold(seed: int, words: tuple[int, ...]) -> int:
    """Key derived by chaining the finaliser over ``words`` after ``seed``.  Not collective.

    ``h = mix64(base(seed))``, then ``h = mix64(base(h ^ w))`` for each word
    ``w`` (taken modulo ``2**64``).

    Parameters
    ----------
    seed : int
        In ``[0, 2**64)``.
    words : tuple of int
        Words folded in, in order.

    Returns
    -------
    int
        A 64-bit key.

    Examples
    --------
    >>> fold(0, ()) == int(mix64(GAMMA))
    True
    """
    h = int(mix64(base(seed)))
    for word in words:
        h = int(mix64(base(h ^ (word & MASK))))
    return h


def bits(key: int, flat: Any) -> Any:
    """Output ``i`` of SplitMix64 started at ``key``, for each ``i`` in ``flat``.  Not collective.

    Parameters
    ----------
    key : int
        Stream key.
    flat : array of uint64
        Counters (global C-order flat indices; NumPy or CuPy).

    Returns
    -------
    array of uint64
        A new array of ``flat``'s shape and namespace.
    """
    with np.errstate(over="ignore"):
        z = np.multiply(flat, np.uint64(GAMMA), dtype=np.uint64)
        z += np.uint64(base(key))
    return mix64_inplace(z)


def unit(words: Any, dtype: Any = np.float64) -> Any:
    """Floats in [0, 1): the top 53 (float64) or 24 (float32) bits of ``words``, scaled.  Not collective.

    Parameters
    ----------
    words : array of uint64
        Random words; overwritten for float64 (a scratch array).
    dtype : float64 or float32
        Result dtype.

    Returns
    -------
    array of ``dtype``
        ``(words >> (64 - b)) * 2**-b`` with ``b = UNIT_BITS[dtype]``.

    Examples
    --------
    >>> unit(np.array([MASK], dtype=np.uint64)).tolist() == [1.0 - 2.0**-53]
    True
    """
    dtype = np.dtype(dtype)
    if dtype == np.float32:
        b = UNIT_BITS[dtype]
        return (words >> np.uint64(64 - b)).astype(np.float32) * np.float32(2.0**-b)
    np.right_shift(words, np.uint64(_SHIFT53), out=words)
    out = words.astype(np.float64)
    out *= _SCALE53
    return out


def unit_open(words: Any) -> Any:
    """float64 in the open interval (0, 1): ``(top 53 bits + 0.5) * 2**-53``.  Not collective.

    ``words`` (uint64) is overwritten.
    """
    np.right_shift(words, np.uint64(_SHIFT53), out=words)
    out = words.astype(np.float64)
    out += 0.5
    out *= _SCALE53
    return out


def flat_indices(box: tuple, shape: tuple[int, ...], xp: Any = np) -> np.ndarray:
    """Global C-order flat indices of the elements of ``box``.

    Not collective.  Built by broadcasting one ``arange`` per axis times the
    C stride of that axis, so no index array larger than the block exists.

    Parameters
    ----------
    box : tuple of (int, int)
        Global half-open range per axis.
    shape : tuple of int
        Global shape.
    xp : module
        Array namespace of the result (NumPy, or CuPy for device blocks).

    Returns
    -------
    numpy.ndarray of uint64
        Array of the box's shape.

    Examples
    --------
    >>> flat_indices(((1, 3), (2, 4)), (4, 5)).tolist()
    [[7, 8], [12, 13]]
    """
    nd = len(shape)
    out = xp.zeros((), dtype=np.uint64)
    stride = 1
    for axis in range(nd - 1, -1, -1):
        lo, hi = box[axis]
        idx = xp.arange(lo, hi, dtype=np.uint64) * np.uint64(stride)
        out = out + idx.reshape((hi - lo,) + (1,) * (nd - 1 - axis))
        stride *= shape[axis]
    return out


def uniform_box(key: int, box: tuple, shape: tuple[int, ...]) -> np.ndarray:
    """float64 uniform values of stream ``key`` over the global ``box`` of ``shape``.  Not collective.

    The deferred ``Generator.random`` draws (``spmdarray.fusion.record.random_leaf``)
    are evaluated with this: the same values as ``spmdarray.random._counter.Stream.uniform`` (lane 0).
    """
    flat = flat_indices(box, shape)
    return unit(bits(key, flat.reshape(-1)), np.dtype(np.float64)).reshape(flat.shape)


def _numba_u01(name: str) -> str:
    """Python source of the scalar ``name(k, f)``: :func:`unit` of output ``f`` of the stream with base ``k``."""
    lines = [f"def {name}(k, f):", f"    z = np.uint64(f) * np.uint64(0x{GAMMA:016X}) + k"]
    for shift, mult in MIX_ROUNDS:
        lines.append(f"    z = (z ^ (z >> np.uint64({shift}))) * np.uint64(0x{mult:016X})")
    lines.append(f"    z = z ^ (z >> np.uint64({FINAL_SHIFT}))")
    lines.append(f"    return np.float64(z >> np.uint64({_SHIFT53})) * {_SCALE53!r}")
    return "\n".join(lines) + "\n"


def _cuda_u01(name: str) -> str:
    """CUDA C++ source of ``double name(k, f)``, the same function as :func:`_numba_u01`'s."""
    u64 = "unsigned long long"
    lines = [
        f"__device__ __forceinline__ double {name}({u64} k, {u64} f) {{",
        f"    {u64} z = f * 0x{GAMMA:016X}ULL + k;",
    ]
    for shift, mult in MIX_ROUNDS:
        lines.append(f"    z = (z ^ (z >> {shift})) * 0x{mult:016X}ULL;")
    lines.append(f"    z = z ^ (z >> {FINAL_SHIFT});")
    lines.append(f"    return (double)(z >> {_SHIFT53}) * {_SCALE53!r};")
    lines.append("}")
    return "\n" + "\n".join(lines) + "\n"


#: Name of the function :data:`NUMBA_U01` defines.
NUMBA_U01_NAME = "spmd_u01"
#: Python source of ``spmd_u01(k, f)`` for numba (it uses ``np``; the kernel module compiles it).
NUMBA_U01 = _numba_u01(NUMBA_U01_NAME)
#: Name of the ``__device__`` function :data:`CUDA_U01` defines.
CUDA_U01_NAME = "spmd_u01"
#: CUDA C++ source of ``double spmd_u01(unsigned long long k, unsigned long long f)``.
CUDA_U01 = _cuda_u01(CUDA_U01_NAME)
