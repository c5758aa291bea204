"""The main namespace of :mod:`spmdarray.array_api` (the extensions ``fft`` and ``linalg`` are beside it)."""

from __future__ import annotations

import builtins

import numpy as _np

from spmdarray import api as _sp
from spmdarray.array_api._info import Info as _Info
from spmdarray.array_api._info import backend_for as _backend_for
from spmdarray.routines.reductions import normalize_axes as _normalize_axes

__array_api_version__ = "2024.12"
_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


def _check_version(api_version) -> None:
    if api_version is not None and api_version not in _VERSIONS:
        raise ValueError(f"spmdarray supports Array API versions {', '.join(_VERSIONS)}; got {api_version!r}")


def __array_namespace_info__() -> _Info:
    """Inspection utilities (devices, dtypes, capabilities).  Not collective."""
    return _Info()


# ----------------------------------------------------------------- dtypes
bool = _np.bool  # noqa: A001
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
float32, float64 = _np.float32, _np.float64
complex64, complex128 = _np.complex64, _np.complex128

# -------------------------------------------------------------- constants
e, inf, nan, newaxis, pi = _np.e, _np.inf, _np.nan, None, _np.pi

# ------------------------------------------------------------ elementwise
_ELEMENTWISE = (
    "abs acos acosh add asin asinh atan atan2 atanh bitwise_and bitwise_left_shift bitwise_invert "
    "bitwise_or bitwise_right_shift bitwise_xor ceil conj copysign cos cosh divide equal exp expm1 floor "
    "floor_divide greater greater_equal hypot isfinite isinf isnan less less_equal log log1p log2 log10 "
    "logaddexp logical_and logical_not logical_or logical_xor maximum minimum multiply negative nextafter "
    "not_equal positive pow reciprocal remainder sign signbit sin sinh square sqrt subtract tan tanh trunc"
).split()
globals().update({_n: getattr(_np, _n) for _n in _ELEMENTWISE})


def real(x, /):
    """Real part (a view for complex arrays).  Not collective."""
    return _np.real(x)


def imag(x, /):
    """Imaginary part (a view for complex arrays).  Not collective."""
    return _np.imag(x)


def round(x, /):  # noqa: A001
    """Round half to even.  Collective."""
    return _np.round(x)


def clip(x, /, min=None, max=None):  # noqa: A002
    """Clamp to ``[min, max]`` (either may be None).  Collective."""
    if min is None and max is None:
        return _np.positive(x)
    return _np.clip(x, min, max)


# --------------------------------------------------------------- creation
def _kw(device, comm):
    kw = {} if comm is None else {"comm": comm}
    if device is not None:
        kw["backend"] = _backend_for(device)
    return kw


def arange(start, /, stop=None, step=1, *, dtype=None, device=None, comm=None):
    """Distributed ``arange``.  Collective."""
    return _sp.arange(start, stop, step, dtype=dtype, **_kw(device, comm))


def asarray(obj, /, *, dtype=None, device=None, copy=None, comm=None):
    """Distributed array from ``obj`` (the same on every rank, or a spmdarray array).  Collective."""
    if isinstance(obj, _sp.ndarray):
        if copy is False and dtype is not None and _np.dtype(dtype) != obj.dtype:
            raise ValueError("asarray(copy=False) cannot change the dtype without a copy")
        out = obj if device is None else obj.to_device(device)
        if dtype is not None:
            out = out.astype(dtype, copy=copy is True)
        elif copy:
            out = out.copy()
        return out
    if copy is False:
        raise ValueError(
            "asarray(copy=False): making a distributed array from a non-distributed object always copies; "
            "use copy=None or True (or spmdarray.from_local / from_dlpack to wrap each rank's own block)"
        )
    return _sp.asarray(obj, dtype=dtype, copy=copy, **_kw(device, comm))


def empty(shape, *, dtype=None, device=None, comm=None):
    """Uninitialised distributed array.  Collective."""
    return _sp.empty(shape, dtype=dtype or float64, **_kw(device, comm))


def zeros(shape, *, dtype=None, device=None, comm=None):
    """Distributed zeros.  Collective."""
    return _sp.zeros(shape, dtype=dtype or float64, **_kw(device, comm))


def ones(shape, *, dtype=None, device=None, comm=None):
    """Distributed ones.  Collective."""
    return _sp.ones(shape, dtype=dtype or float64, **_kw(device, comm))


def full(shape, fill_value, *, dtype=None, device=None, comm=None):
    """Distributed array filled with ``fill_value``.  Collective."""
    return _sp.full(shape, fill_value, dtype=dtype, **_kw(device, comm))


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None, comm=None):
    """Distributed identity-like matrix.  Collective."""
    return _sp.eye(n_rows, n_cols, k=k, dtype=dtype or float64, **_kw(device, comm))


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True, comm=None):
    """Distributed ``linspace``.  Collective."""
    return _sp.linspace(start, stop, num, endpoint=endpoint, dtype=dtype, **_kw(device, comm))


def _like(fn, x, device, *args, dtype=None):
    out = fn(x, *args, dtype=dtype)
    return out if device is None else out.to_device(device)


def empty_like(x, /, *, dtype=None, device=None):
    """Uninitialised array laid out like ``x``.  Collective."""
    return _like(_np.empty_like, x, device, dtype=dtype)


def zeros_like(x, /, *, dtype=None, device=None):
    """Zeros laid out like ``x``.  Collective."""
    return _like(_np.zeros_like, x, device, dtype=dtype)


def ones_like(x, /, *, dtype=None, device=None):
    """Ones laid out like ``x``.  Collective."""
    return _like(_np.ones_like, x, device, dtype=dtype)


def full_like(x, /, fill_value, *, dtype=None, device=None):
    """``fill_value`` laid out like ``x``.  Collective."""
    return _like(_np.full_like, x, device, fill_value, dtype=dtype)


def meshgrid(*arrays, indexing="xy"):
    """Coordinate matrices (``numpy.meshgrid`` semantics).  Collective."""
    return list(_np.meshgrid(*arrays, indexing=indexing))


def tril(x, /, *, k=0):
    """Lower triangle of the last two axes.  Collective (no communication)."""
    return _np.tril(x, k=k)


def triu(x, /, *, k=0):
    """Upper triangle of the last two axes.  Collective (no communication)."""
    return _np.triu(x, k=k)


from spmdarray.routines.logic import from_dlpack  # noqa: E402,F401

# ------------------------------------------------------ data type functions


def astype(x, dtype, /, *, copy=True, device=None):
    """``x`` converted to ``dtype`` (and moved to ``device``).  Collective (no communication)."""
    return _np.astype(x, dtype, copy=copy, device=device)


def can_cast(from_, to, /):
    """Whether ``from_`` (dtype or array) casts safely to ``to``.  Not collective."""
    return _np.can_cast(from_.dtype if isinstance(from_, _sp.ndarray) else from_, to)


def finfo(type, /):  # noqa: A002
    """Machine limits of a floating dtype (or an array's dtype).  Not collective."""
    return _np.finfo(type.dtype if isinstance(type, _sp.ndarray) else type)


def iinfo(type, /):  # noqa: A002
    """Machine limits of an integer dtype (or an array's dtype).  Not collective."""
    return _np.iinfo(type.dtype if isinstance(type, _sp.ndarray) else type)


def isdtype(dtype, kind):
    """The standard's dtype-kind test.  Not collective."""
    return _np.isdtype(dtype, kind)


def result_type(*arrays_and_dtypes):
    """NumPy's promotion of the given arrays, dtypes and scalars.  Not collective."""
    return _np.result_type(*(a.dtype if isinstance(a, _sp.ndarray) else a for a in arrays_and_dtypes))


# ----------------------------------------------------------------- indexing
def take(x, indices, /, *, axis=None):
    """Elements of ``x`` at ``indices`` along ``axis``.  Collective."""
    return _np.take(x, indices, axis=axis)


def take_along_axis(x, indices, /, *, axis=-1):
    """``numpy.take_along_axis``.  Collective."""
    return _np.take_along_axis(x, indices, axis=axis)


# ----------------------------------------------------------- linear algebra
matmul = _np.matmul


def matrix_transpose(x, /):
    """Transpose of the last two axes (a view).  Not collective."""
    return _np.matrix_transpose(x)


def tensordot(x1, x2, /, *, axes=2):
    """``numpy.tensordot``.  Collective."""
    return _np.tensordot(x1, x2, axes=axes)


def vecdot(x1, x2, /, *, axis=-1):
    """Dot product of vectors along ``axis`` of the broadcast shape (conjugating ``x1``).

    Collective: an elementwise product (distributed) and a sum along ``axis``.
    """
    if not (isinstance(x1, _sp.ndarray) or isinstance(x2, _sp.ndarray)):
        return _np.vecdot(x1, x2, axis=axis)
    n1, n2 = _np.shape(x1), _np.shape(x2)
    nd = builtins.max(len(n1), len(n2))
    if not -nd <= axis < 0 and not 0 <= axis < nd:
        raise _np.exceptions.AxisError(axis, nd)
    ax = axis % nd - nd  # counted from the end: both operands' contracted axis
    if -ax > builtins.min(len(n1), len(n2)) or n1[ax] != n2[ax]:
        raise ValueError(
            f"vecdot: x1 {n1} and x2 {n2} must have the same size along axis {axis} (and at least {-ax} dimensions)"
        )
    dt = _np.result_type(x1, x2)
    if dt.kind == "c":
        x1 = _np.conjugate(x1)
    return _np.sum(_np.multiply(x1, x2), axis=ax, dtype=dt)


# ------------------------------------------------------------- manipulation
def broadcast_arrays(*arrays):
    """``numpy.broadcast_arrays`` as a list.  Collective."""
    return list(_np.broadcast_arrays(*arrays))


def broadcast_to(x, /, shape):
    """``numpy.broadcast_to``.  Collective."""
    return _np.broadcast_to(x, shape)


def concat(arrays, /, *, axis=0):
    """Join along ``axis`` (None: flatten first).  Collective."""
    return _np.concat(arrays, axis=axis)


def expand_dims(x, /, axis=0):
    """View with a length-1 axis inserted.  Not collective."""
    return _np.expand_dims(x, axis)


def flip(x, /, *, axis=None):
    """View with ``axis`` reversed.  Not collective."""
    return _np.flip(x, axis=axis)


def moveaxis(x, source, destination, /):
    """View with axes moved.  Not collective."""
    return _np.moveaxis(x, source, destination)


def permute_dims(x, /, axes):
    """View with axes permuted.  Not collective."""
    return _np.permute_dims(x, axes)


def repeat(x, repeats, /, *, axis=None):
    """``numpy.repeat``.  Collective."""
    return _np.repeat(x, repeats, axis=axis)


def reshape(x, /, shape, *, copy=None):
    """``numpy.reshape``.  Collective."""
    return _np.reshape(x, shape, copy=copy)


def roll(x, /, shift, *, axis=None):
    """``numpy.roll``.  Collective."""
    return _np.roll(x, shift, axis=axis)


def squeeze(x, /, axis):
    """View without the given length-1 axes.  Not collective."""
    return _np.squeeze(x, axis=axis)


def stack(arrays, /, *, axis=0):
    """Join along a new axis.  Collective."""
    return _np.stack(arrays, axis=axis)


def tile(x, repetitions, /):
    """``numpy.tile``.  Collective."""
    return _np.tile(x, repetitions)


def unstack(x, /, *, axis=0):
    """Views of ``x`` along ``axis``, as a tuple.  Not collective."""
    if not isinstance(x, _sp.ndarray):
        return _np.unstack(x, axis=axis)
    if x.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    ax = _normalize_axes(axis, x.ndim)[0]
    return tuple(x[(slice(None),) * ax + (i, Ellipsis)] for i in range(x.shape[ax]))


# ---------------------------------------------------------------- searching
def argmax(x, /, *, axis=None, keepdims=False):
    """Index of the first maximum.  Collective."""
    return _np.argmax(x, axis=axis, keepdims=keepdims)


def argmin(x, /, *, axis=None, keepdims=False):
    """Index of the first minimum.  Collective."""
    return _np.argmin(x, axis=axis, keepdims=keepdims)


def count_nonzero(x, /, *, axis=None, keepdims=False):
    """Number of nonzero elements.  Collective."""
    return _np.count_nonzero(x, axis=axis, keepdims=keepdims)


def nonzero(x, /):
    """Indices of nonzero elements (distributed, data-dependent length).  Collective."""
    return tuple(_np.nonzero(x))


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """``numpy.searchsorted``.  Collective."""
    return _np.searchsorted(x1, x2, side=side, sorter=sorter)


def where(condition, x1, x2, /):
    """Three-argument ``where``.  Collective."""
    return _np.where(condition, x1, x2)


# ---------------------------------------------------------------------- sets
def unique_all(x, /):
    """Unique values, first indices, inverse indices and counts.  Collective."""
    from collections import namedtuple

    v, i, inv, c = _np.unique(x, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    return namedtuple("UniqueAllResult", "values indices inverse_indices counts")(v, i, _np.reshape(inv, x.shape), c)


def unique_counts(x, /):
    """Unique values and their counts.  Collective."""
    from collections import namedtuple

    v, c = _np.unique(x, return_counts=True, equal_nan=False)
    return namedtuple("UniqueCountsResult", "values counts")(v, c)


def unique_inverse(x, /):
    """Unique values and the inverse indices (shaped like ``x``).  Collective."""
    from collections import namedtuple

    v, inv = _np.unique(x, return_inverse=True, equal_nan=False)
    return namedtuple("UniqueInverseResult", "values inverse_indices")(v, _np.reshape(inv, x.shape))


def unique_values(x, /):
    """Unique values.  Collective."""
    return _np.unique(x, equal_nan=False)


# ------------------------------------------------------------------ sorting
def _norm_axis(x, axis):
    return _normalize_axes(axis, x.ndim)[0]


def sort(x, /, *, axis=-1, descending=False, stable=True):
    """Sorted copy; ``descending`` keeps equal elements in their order when ``stable``.  Collective."""
    kind = "stable" if stable else None
    if not descending:
        return _np.sort(x, axis=axis, kind=kind)
    return _np.flip(_np.sort(_np.flip(x, axis=axis), axis=axis, kind=kind), axis=axis)


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """Indices that sort ``x`` (see :func:`sort`).  Collective."""
    kind = "stable" if stable else None
    if not descending:
        return _np.argsort(x, axis=axis, kind=kind)
    ax = _norm_axis(x, axis)
    res = _np.flip(_np.argsort(_np.flip(x, axis=ax), axis=ax, kind=kind), axis=ax)
    return (x.shape[ax] - 1) - res


# -------------------------------------------------------------- statistical
def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Inclusive (or with ``include_initial``) prefix sums.  Collective."""
    return _np.cumulative_sum(x, axis=axis, dtype=dtype, include_initial=include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Prefix products.  Collective."""
    return _np.cumulative_prod(x, axis=axis, dtype=dtype, include_initial=include_initial)


def max(x, /, *, axis=None, keepdims=False):  # noqa: A001
    """Maximum.  Collective."""
    return _np.max(x, axis=axis, keepdims=keepdims)


def min(x, /, *, axis=None, keepdims=False):  # noqa: A001
    """Minimum.  Collective."""
    return _np.min(x, axis=axis, keepdims=keepdims)


def mean(x, /, *, axis=None, keepdims=False):
    """Arithmetic mean.  Collective."""
    return _np.mean(x, axis=axis, keepdims=keepdims)


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    """Product.  Collective."""
    return _np.prod(x, axis=axis, dtype=dtype, keepdims=keepdims)


def sum(x, /, *, axis=None, dtype=None, keepdims=False):  # noqa: A001
    """Sum.  Collective."""
    return _np.sum(x, axis=axis, dtype=dtype, keepdims=keepdims)


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    """Standard deviation (``correction`` is NumPy's ``ddof``).  Collective."""
    return _np.std(x, axis=axis, ddof=correction, keepdims=keepdims)


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    """Variance (``correction`` is NumPy's ``ddof``).  Collective."""
    return _np.var(x, axis=axis, ddof=correction, keepdims=keepdims)


# ------------------------------------------------------------------ utility
def all(x, /, *, axis=None, keepdims=False):  # noqa: A001
    """Logical AND reduction.  Collective."""
    return _np.all(x, axis=axis, keepdims=keepdims)


def any(x, /, *, axis=None, keepdims=False):  # noqa: A001
    """Logical OR reduction.  Collective."""
    return _np.any(x, axis=axis, keepdims=keepdims)


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """n-th discrete difference.  Collective."""
    kw = {}
    if prepend is not None:
        kw["prepend"] = prepend
    if append is not None:
        kw["append"] = append
    return _np.diff(x, n=n, axis=axis, **kw)


__all__ = sorted(
    n
    for n, v in list(globals().items())
    if not n.startswith("_") and n not in ("annotations", "builtins") and getattr(v, "__module__", "") != "__future__"
) + ["__array_api_version__", "__array_namespace_info__"]
