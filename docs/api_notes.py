"""Documented deviations from NumPy, one line per name, for docs/api_coverage.md.

Keys are ``numpy.<name>``, ``ndarray.<name>``, ``linalg.<name>``,
``fft.<name>``, ``random.<name>`` or ``Generator.<name>``.  A name without
an entry behaves as NumPy's does on the arguments it accepts.
"""

NOTES = {
    "numpy.linspace": "scalar `start`/`stop` only; array endpoints raise NotImplementedError",
    "numpy.empty": "`order='F'` raises NotImplementedError (also `zeros`, `ones`, `full`)",
    "numpy.matmul": "SUMMA for 2-D operands",
    "numpy.reshape": (
        "a redistributed copy where NumPy may return a view (writing through it does not change the input)"
    ),
    "numpy.cumulative_sum": "`include_initial=True` raises NotImplementedError",
    "numpy.gradient": "scalar spacings only; coordinate arrays raise NotImplementedError",
    "numpy.trapezoid": "uniform `dx` only",
    "numpy.spacing": "on CuPy blocks, computed on a host copy of each rank's block",
    "numpy.arange": "NumPy's length, dtype and values, bit for bit",
    "numpy.array": "from a global NumPy array, list or scalar that every rank passes",
    "numpy.asarray": "`backend=` moves an array between NumPy and CuPy blocks",
    "ndarray.tolist": "gathers the whole array onto every rank (the caller asks for all of it)",
    "ndarray.item": "collective: broadcast from the owning rank",
    "random.seed": "counter-based generator: same values at every rank count, not NumPy's streams",
    "Generator.random": "counter-based generator: same values at every rank count, not NumPy's streams",
}
