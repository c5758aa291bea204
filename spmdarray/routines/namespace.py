"""The rest of NumPy's namespace, generated from NumPy itself.

* Every ufunc is NumPy's own ufunc object: called with a spmdarray array it
  dispatches through ``__array_ufunc__`` to the elementwise engine.
* Functions that take arrays (``sum``, ``mean``, ``allclose``, ``reshape`` ...)
  are NumPy's own functions: with spmdarray arguments they dispatch through
  ``__array_function__``, and an unimplemented one raises
  ``NotImplementedError`` naming it.  With plain NumPy arguments they
  compute as NumPy does, the same on every rank.
* Functions that would *create* a NumPy array from scratch, and that
  spmdarray does not distribute yet, raise ``NotImplementedError`` instead of
  quietly returning a non-distributed array.
* dtypes, constants, ``errstate`` and the like are NumPy's.
"""

from __future__ import annotations

import numpy as np

_UFUNCS = sorted(n for n in dir(np) if isinstance(getattr(np, n, None), np.ufunc))

_ARRAY_FUNCTIONS = [
    # advanced indexing (routines/indexing: advanced.py, functions.py)
    "argwhere",
    "choose",
    "compress",
    "diag_indices_from",
    "extract",
    "fill_diagonal",
    "flatnonzero",
    "ix_",
    "nonzero",
    "place",
    "put",
    "put_along_axis",
    "putmask",
    "ravel_multi_index",
    "searchsorted",
    "select",
    "take",
    "take_along_axis",
    "unravel_index",
    # others
    # linear algebra (linalg/_products.py; numpy.linalg dispatches on its own)
    "einsum",
    "einsum_path",
    "inner",
    "kron",
    "outer",
    "tensordot",
    "vdot",
    "cross",
    # logic, comparison, dtype utilities, misc (_logic.py)
    "angle",
    "array2string",
    "array_repr",
    "array_str",
    "astype",
    "common_type",
    "fix",
    "imag",
    "iscomplex",
    "isneginf",
    "isposinf",
    "isreal",
    "may_share_memory",
    "min_scalar_type",
    "nan_to_num",
    "packbits",
    "real",
    "real_if_close",
    "shares_memory",
    "unpackbits",
    "isdtype",
    "mintypecode",
    # (end of logic block)
    # FFT helpers and miscellaneous numerics (_fft.py, _numeric_misc.py)
    "apply_along_axis",
    "apply_over_axes",
    "i0",
    "interp",
    "piecewise",
    "polyadd",
    "polyder",
    "polydiv",
    "polyfit",
    "polyint",
    "polymul",
    "polysub",
    "polyval",
    "sinc",
    "trim_zeros",
    "unwrap",
    # (end of FFT / miscellaneous numerics)
    # sorting and set operations (_sorting.py)
    "argpartition",
    "argsort",
    "intersect1d",
    "isin",
    "lexsort",
    "partition",
    "setdiff1d",
    "setxor1d",
    "sort",
    "sort_complex",
    "union1d",
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    # end sorting
    # statistics (_statistics.py, _order_statistics.py, _histograms.py)
    "average",
    "bincount",
    "convolve",
    "corrcoef",
    "correlate",
    "cov",
    "digitize",
    "histogram",
    "histogram2d",
    "histogram_bin_edges",
    "histogramdd",
    "median",
    "nanargmax",
    "nanargmin",
    "nanmax",
    "nanmean",
    "nanmedian",
    "nanmin",
    "nanpercentile",
    "nanprod",
    "nanquantile",
    "nanstd",
    "nansum",
    "nanvar",
    "percentile",
    "quantile",
    # end statistics
    # shape, data movement and array creation (_broadcasting, _editing, _padding, _diagonals)
    "append",
    "block",
    "broadcast_arrays",
    "broadcast_to",
    "delete",
    "diag",
    "diagflat",
    "diagonal",
    "insert",
    "meshgrid",
    "pad",
    "permute_dims",
    "repeat",
    "resize",
    "tile",
    "tril_indices_from",
    "triu_indices_from",
    "unstack",
    # other areas
    "all",
    "trace",
    "tril",
    "triu",
    "array_split",
    "count_nonzero",
    "dsplit",
    "hsplit",
    "ptp",
    "roll",
    "split",
    "vsplit",
    "where",
    "column_stack",
    "concat",
    "concatenate",
    "dstack",
    "hstack",
    "stack",
    "vstack",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "cumulative_prod",
    "cumulative_sum",
    "matrix_transpose",
    "rollaxis",
    "trapezoid",
    "cumprod",
    "cumsum",
    "diff",
    "ediff1d",
    "expand_dims",
    "flip",
    "fliplr",
    "flipud",
    "gradient",
    "moveaxis",
    "nancumprod",
    "nancumsum",
    "rot90",
    "squeeze",
    "swapaxes",
    "allclose",
    "amax",
    "amin",
    "any",
    "argmax",
    "argmin",
    "array_equal",
    "array_equiv",
    "around",
    "clip",
    "copyto",
    "dot",
    "isclose",
    "max",
    "mean",
    "min",
    "ndim",
    "prod",
    "ravel",
    "reshape",
    "round",
    "shape",
    "size",
    "std",
    "sum",
    "transpose",
    "var",
]

_PASSTHROUGH = [
    "bool_",
    "complex64",
    "complex128",
    "dtype",
    "e",
    "errstate",
    "euler_gamma",
    "finfo",
    "float16",
    "float32",
    "float64",
    "geterr",
    "iinfo",
    "inf",
    "int8",
    "int16",
    "int32",
    "int64",
    "intp",
    "nan",
    "newaxis",
    "pi",
    "promote_types",
    "result_type",
    "can_cast",
    "seterr",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "isscalar",
    "iscomplexobj",
    "isrealobj",
    "issubdtype",
    "integer",
    "floating",
    "complexfloating",
    "number",
    "generic",
    "signedinteger",
    "unsignedinteger",
    "inexact",
    "exceptions",
    "printoptions",
    "set_printoptions",
    "get_printoptions",
    "broadcast_shapes",
]

# Creation functions NumPy has and spmdarray does not distribute yet.
_NOT_DISTRIBUTED = {
    "asmatrix",
    "bmat",
    "load",
}


# NumPy callables that take no arrays (dtypes, printing and error settings,
# strings): ``spmdarray.<name>`` is NumPy's own and is correct as it is.
NO_ARRAYS = {
    "base_repr",
    "binary_repr",
    "broadcast_shapes",
    "datetime_data",
    "format_float_positional",
    "format_float_scientific",
    "get_include",
    "get_printoptions",
    "getbufsize",
    "geterr",
    "geterrcall",
    "info",
    "isdtype",
    "isscalar",
    "issubdtype",
    "iterable",
    "mintypecode",
    "printoptions",
    "promote_types",
    "set_printoptions",
    "setbufsize",
    "seterr",
    "seterrcall",
    "show_config",
    "show_runtime",
    "typename",
}


def _passes_through(obj) -> bool:
    """Whether NumPy's object is safe as ``spmdarray.<name>``.

    Ufuncs and ``__array_function__`` dispatchers dispatch to spmdarray (or
    raise NotImplementedError naming themselves); classes, modules and
    constants are NumPy's.  Any other callable would take a spmdarray array
    through ``__array__``, a hidden gather, so it is stubbed unless it is in
    :data:`NO_ARRAYS`.
    """
    import types

    if isinstance(obj, (np.ufunc, type, types.ModuleType)) or not callable(obj):
        return True
    return hasattr(obj, "_implementation")


__all__ = _UFUNCS + _ARRAY_FUNCTIONS + _PASSTHROUGH

globals().update({n: getattr(np, n) for n in __all__})


def _not_implemented(name: str):
    def stub(*args, **kwargs):
        raise NotImplementedError(
            f"spmdarray.{name} is not implemented yet (it would create a non-distributed NumPy array); "
            f"use numpy.{name} explicitly if a replicated array is what you want"
        )

    stub.__name__ = name
    stub.__qualname__ = name
    stub._spmdarray_stub = True
    stub.__doc__ = f"Not implemented: raises NotImplementedError (see numpy.{name})."
    return stub


def __getattr__(name: str):
    """NumPy's remaining names: see the module docstring."""
    if name.startswith("__"):
        raise AttributeError(name)
    if name in _NOT_DISTRIBUTED:
        return _not_implemented(name)
    if hasattr(np, name):
        obj = getattr(np, name)
        if name in NO_ARRAYS or _passes_through(obj):
            return obj
        return _not_implemented(name)
    raise AttributeError(f"module 'spmdarray' has no attribute {name!r}")
