"""Documented deviations from NumPy, one line per name, for the docstrings and docs/api_coverage.md.

Keys are ``numpy.<name>``, ``ndarray.<name>``, ``linalg.<name>``,
``fft.<name>``, ``random.<name>`` or ``Generator.<name>``.  A name without
an entry behaves as NumPy's does on the arguments it accepts.  The area
pages (linalg.md, fft.md, sorting_statistics.md, random.md,
logic_and_array_api.md, the user guide) give the details.
"""

_SORT = "`kind=` is ignored: always a stable sort; `order=` (structured dtypes) raises NotImplementedError"
_PARTITION = "a full stable sort (a valid partition for every `kth`), more work than NumPy's introselect"
_SORTED_SET = "values come out sorted (NumPy may return them in hash order)"
_WHERE = "`where=` raises NotImplementedError"
_LINALG_ONE = "each matrix is held whole on one rank: at most `config.linalg_max_elements` elements"
_FFT_1D = (
    "1-D arrays of up to 65536 points are transformed on one rank; longer ones by the four-step "
    "or Bluestein algorithm, NumPy's values up to rounding"
)
_STREAMS = "counter-based generator: same values at every rank count, not NumPy's streams"
_BIAS = "no rejection: a small bias, at most `range / 2**32` (`range / 2**64` above 2**32)"
_ROW_PARAMS = "parameter vectors and matrices must be NumPy arrays or sequences (distributed: NotImplementedError)"

NOTES = {
    # creation
    "numpy.linspace": "scalar `start`/`stop` only; array endpoints raise NotImplementedError",
    "numpy.logspace": "scalar `start`/`stop`/`base` only (arrays raise NotImplementedError), `axis` 0",
    "numpy.geomspace": "scalar `start`/`stop` only (arrays raise NotImplementedError), `axis` 0",
    "numpy.empty": "`order='F'` raises NotImplementedError (also `zeros`, `ones`, `full`)",
    "numpy.arange": "NumPy's length, dtype and values, bit for bit",
    "numpy.array": "from a global NumPy array, list or scalar that every rank passes",
    "numpy.asarray": "`backend=` moves an array between NumPy and CuPy blocks",
    "numpy.asfortranarray": "returns the array: blocks are always stored in C order",
    "numpy.require": "`requirements='W'` on a read-only broadcast view returns a copy instead of raising",
    # shape and data movement
    "numpy.reshape": (
        "a redistributed copy where NumPy may return a view (writing through it does not change the input)"
    ),
    "numpy.ravel": "a redistributed copy unless only length-1 axes change (NumPy may return a view)",
    "numpy.diagonal": "a copy, not NumPy's read-only view",
    "ndarray.diagonal": "a copy, not NumPy's read-only view",
    "numpy.pad": "a callable `mode` raises NotImplementedError (every string mode works)",
    "ndarray.view": "a dtype of another itemsize needs an unsplit last axis; `type=` raises NotImplementedError",
    "ndarray.resize": "`refcheck=True` raises ValueError on every rank if any rank sees another reference",
    "ndarray.dump": "gathers the whole array; rank 0 writes the file",
    "ndarray.tofile": "gathers the whole array; rank 0 writes the file",
    "ndarray.tobytes": "gathers the whole array onto every rank",
    "ndarray.dumps": "gathers the whole array onto every rank",
    "ndarray.tolist": "gathers the whole array onto every rank (the caller asks for all of it)",
    "ndarray.item": "collective: broadcast from the owning rank",
    "ndarray.to_device": "`stream=` raises NotImplementedError",
    # scans and reductions
    "numpy.gradient": "scalar spacings only; coordinate arrays raise NotImplementedError",
    "numpy.sum": _WHERE + " (also `prod`, `min`, `max`, `mean`, `var`, `std`, `any`, `all`)",
    "numpy.nanmean": _WHERE,
    "numpy.nanvar": "`where=` and `mean=` raise NotImplementedError",
    "numpy.nanstd": "`where=` and `mean=` raise NotImplementedError",
    "numpy.spacing": "on CuPy blocks, computed on a host copy of each rank's block",
    # sorting, sets, statistics
    "numpy.sort": _SORT,
    "numpy.argsort": _SORT,
    "ndarray.sort": _SORT,
    "ndarray.argsort": _SORT,
    "numpy.partition": _PARTITION,
    "numpy.argpartition": _PARTITION,
    "ndarray.partition": _PARTITION,
    "ndarray.argpartition": _PARTITION,
    "numpy.lexsort": "1-D keys only; N-D keys raise NotImplementedError",
    "numpy.unique": "`axis=` with zero-size slices raises NotImplementedError",
    "numpy.unique_values": _SORTED_SET,
    "numpy.unique_counts": _SORTED_SET,
    "numpy.unique_inverse": _SORTED_SET,
    "numpy.unique_all": _SORTED_SET,
    "numpy.intersect1d": "`assume_unique=` is ignored (the answer is computed without it)",
    "numpy.isin": "`assume_unique=` and `kind=` are ignored (one sample sort of both inputs)",
    "numpy.nanquantile": "`weights=` raises NotImplementedError",
    "numpy.nanpercentile": "`weights=` raises NotImplementedError",
    "numpy.digitize": "`bins` is held whole on every rank (gathered if distributed)",
    "numpy.convolve": "the shorter input is held whole on every rank (gathered if distributed)",
    "numpy.correlate": "the shorter input is held whole on every rank (gathered if distributed)",
    # logic, dtype utilities
    "numpy.imag": "of a non-complex array: a new writable array of zeros (NumPy: a read-only view)",
    "numpy.shares_memory": "against a NumPy array: answers for this rank's block only",
    "numpy.may_share_memory": "compares bounds; against a NumPy array, this rank's block only",
    "numpy.unpackbits": "`count=` beyond the data pads with zeros",
    # products and linear algebra
    "numpy.matmul": (
        "SUMMA for 2-D operands, stacks batch-parallel; gufunc `axes=`/`axis=`/`keepdims=` raise NotImplementedError"
    ),
    "numpy.vecdot": "gufunc `axes=`/`axis=`/`keepdims=` raise NotImplementedError",
    "numpy.matvec": "gufunc `axes=`/`axis=`/`keepdims=` raise NotImplementedError",
    "numpy.vecmat": "gufunc `axes=`/`axis=`/`keepdims=` raise NotImplementedError",
    "numpy.einsum_path": "shapes only: NumPy's path finder on zero-stride stand-ins",
    "linalg.qr": "TSQR: rows of `R` (columns of `Q`) may differ from LAPACK's by a sign or phase",
    "linalg.svd": "TSQR-based: singular vectors may differ from LAPACK's by a sign or phase",
    "linalg.cholesky": (
        "one matrix on several ranks: the lower triangle is read, also with `upper=True`; `a` must be Hermitian"
    ),
    "linalg.pinv": "scalar `rcond`/`rtol` only; arrays raise NotImplementedError",
    "linalg.matrix_rank": "scalar `tol`/`rtol` only; arrays raise NotImplementedError",
    "linalg.matrix_power": "`n < 0` inverts first: " + _LINALG_ONE,
    "linalg.lstsq": "a wide `a` is gathered on every rank and solved on rank 0",
    "linalg.cond": _LINALG_ONE + " (except `p` in None, 2, -2 for one matrix)",
    "linalg.det": _LINALG_ONE,
    "linalg.slogdet": _LINALG_ONE,
    "linalg.inv": _LINALG_ONE,
    "linalg.solve": _LINALG_ONE,
    "linalg.eig": _LINALG_ONE,
    "linalg.eigh": _LINALG_ONE,
    "linalg.eigvals": _LINALG_ONE,
    "linalg.eigvalsh": _LINALG_ONE,
    "linalg.tensorinv": _LINALG_ONE,
    "linalg.tensorsolve": _LINALG_ONE,
    # FFT and numerics
    "fft.fft": _FFT_1D,
    "fft.ifft": _FFT_1D,
    "fft.rfft": _FFT_1D,
    "fft.irfft": _FFT_1D,
    "fft.hfft": _FFT_1D,
    "fft.ihfft": _FFT_1D,
    "fft.fftn": "axes may be reordered to save a redistribution: then NumPy's values up to rounding",
    "numpy.poly": "`numpy.poly(x)` does not dispatch a spmdarray array: call `spmdarray.poly`",
    "numpy.roots": "`numpy.roots(x)` does not dispatch a spmdarray array: call `spmdarray.roots`",
    "numpy.piecewise": "each callable gets the whole array (NumPy: the selected elements); it must be elementwise",
    "numpy.interp": "`xp` and `fp` are held whole on every rank (gathered if distributed)",
    "numpy.polyval": "the coefficients `p` are held whole on every rank",
    "numpy.polyfit": "`cov=True` with complex data raises NotImplementedError",
    "numpy.unwrap": "the corrections are summed by a prefix scan: last-bit differences",
    # random
    "random.seed": _STREAMS,
    "Generator.random": _STREAMS,
    "random.randint": _BIAS,
    "Generator.integers": _BIAS,
    "random.get_state": "returns `('spmdarray.counter', seed, draw)`: there is no NumPy BitGenerator",
    "random.get_bit_generator": "raises NotImplementedError (no NumPy BitGenerator): use `get_state`",
    "random.set_bit_generator": "raises NotImplementedError (no NumPy BitGenerator): use `seed` or `set_state`",
    "random.multinomial": "1-D `pvals` only (2-D raises NotImplementedError); " + _ROW_PARAMS,
    "Generator.multinomial": "1-D `pvals` only (2-D raises NotImplementedError); " + _ROW_PARAMS,
    "Generator.dirichlet": _ROW_PARAMS,
    "Generator.multivariate_normal": _ROW_PARAMS,
    "Generator.multivariate_hypergeometric": "`method='count'` uses the marginal algorithm too; " + _ROW_PARAMS,
    "Generator.choice": "`p` must be a NumPy array or sequence (a distributed `p` raises NotImplementedError)",
    "random.choice": "`p` must be a NumPy array or sequence (a distributed `p` raises NotImplementedError)",
    "Generator.standard_exponential": "`method=` is accepted; both use inversion",
    "Generator.bytes": "the same bytes on every rank; not collective",
    "numpy.loadtxt": "every rank parses the whole file (small files); the result is distributed",
    "numpy.genfromtxt": "every rank parses the whole file; `names=`/`usemask=True` raise NotImplementedError",
    "numpy.fromfile": "every rank reads the whole file (small files); the result is distributed",
    "numpy.frombuffer": "a distributed copy, not a view of the buffer",
    "numpy.fromregex": "one-field structured dtypes give that field; several fields raise NotImplementedError",
}
