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
    # shape, data movement and array creation (_broadcasting, _editing, _padding, _diagonals)
    "append",
    "block",
    "broadcast_arrays",
    "broadcast_to",
    "delete",
    "diag",
    "diagflat",
    "diagonal",
    "diag_indices_from",
    "fill_diagonal",
    "insert",
    "meshgrid",
    "pad",
    "permute_dims",
    "repeat",
    "resize",
    "row_stack",
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
    "linalg",
    "fft",
    "printoptions",
    "set_printoptions",
    "get_printoptions",
    "broadcast_shapes",
]

# Creation functions NumPy has and spmdarray does not distribute yet.
_NOT_DISTRIBUTED = {
    "frombuffer",
    "fromfile",
    "fromiter",
    "fromstring",
    "genfromtxt",
    "load",
    "loadtxt",
    "vander",
    "asmatrix",
    "bartlett",
    "blackman",
    "bmat",
    "fromregex",
    "hamming",
    "hanning",
    "kaiser",
}


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
    stub.__doc__ = f"Not implemented: raises NotImplementedError (see numpy.{name})."
    return stub


def __getattr__(name: str):
    """NumPy's remaining names: see the module docstring."""
    if name.startswith("__"):
        raise AttributeError(name)
    if name in _NOT_DISTRIBUTED:
        return _not_implemented(name)
    if hasattr(np, name):
        return getattr(np, name)
    raise AttributeError(f"module 'spmdarray' has no attribute {name!r}")
