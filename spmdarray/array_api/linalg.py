"""The Array API ``linalg`` extension: forwards to ``spmdarray.linalg``.

Each function calls ``spmdarray.linalg.<name>`` when called; one spmdarray
does not implement yet raises ``NotImplementedError`` naming it.
"""

from ._forward import forward

__all__ = [
    "cholesky",
    "cross",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "inv",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
]

globals().update({_n: forward("linalg", _n) for _n in __all__})
