"""The Array API ``linalg`` extension: forwards to ``spmdarray.linalg``.

Each function calls ``spmdarray.linalg.<name>`` when called; one spmdarray
does not implement yet raises ``NotImplementedError`` naming it.
"""

# The standard's linalg.matmul, matrix_transpose, tensordot and vecdot are the
# main namespace's functions.
from spmdarray.array_api import _main
from spmdarray.array_api._forward import forward

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

cholesky = forward("linalg", "cholesky")
cross = forward("linalg", "cross")
det = forward("linalg", "det")
diagonal = forward("linalg", "diagonal")
eigh = forward("linalg", "eigh")
eigvalsh = forward("linalg", "eigvalsh")
inv = forward("linalg", "inv")
matrix_norm = forward("linalg", "matrix_norm")
matrix_power = forward("linalg", "matrix_power")
matrix_rank = forward("linalg", "matrix_rank")
outer = forward("linalg", "outer")
pinv = forward("linalg", "pinv")
qr = forward("linalg", "qr")
slogdet = forward("linalg", "slogdet")
solve = forward("linalg", "solve")
svd = forward("linalg", "svd")
svdvals = forward("linalg", "svdvals")
trace = forward("linalg", "trace")
vector_norm = forward("linalg", "vector_norm")
matmul = _main.matmul
matrix_transpose = _main.matrix_transpose
tensordot = _main.tensordot
vecdot = _main.vecdot
