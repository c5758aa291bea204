"""Rows of a Gauss-Seidel sweep on a split array, and element access: collectives and time against NumPy.

::

    mpiexec -n 2 python examples/seidel_rows.py

npbench's ``seidel_2d`` over the first rows of a 300 x 300 array (split:
past ``config.replicate_below``, set to 65,536 here): each row update reads seven small row
slices, then a scalar loop reads and writes the row element by element.
Prints the collectives per row (exact), then the time per ``A[i, j]`` read
against NumPy's (fastest of 5 rounds; noisy on a shared machine).
"""

from __future__ import annotations

import time

import numpy

import spmdarray as sp


def seidel(xp, a, rows: int):
    """npbench's ``seidel_2d`` kernel over rows 1 .. ``rows``."""
    n = a.shape[0]
    for i in range(1, rows + 1):
        a[i, 1:-1] += (
            a[i - 1, :-2] + a[i - 1, 1:-1] + a[i - 1, 2:] + a[i, 2:] + a[i + 1, :-2] + a[i + 1, 1:-1] + a[i + 1, 2:]
        )
        for j in range(1, n - 1):
            a[i, j] += a[i, j - 1]
            a[i, j] /= 9.0
    return a


def _reads(arr, count: int) -> None:
    for _ in range(count):
        arr[7, 9]


def _best(fn, repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main(n: int = 300, rows: int = 3) -> None:
    a0 = numpy.random.default_rng(0).random((n, n))
    x = sp.array(a0)
    rank = x.comm.rank
    with sp.comm_stats() as st:
        seidel(sp, x, rows)
    numpy.testing.assert_allclose(numpy.asarray(x), seidel(numpy, a0.copy(), rows), rtol=1e-13)
    t_np = _best(lambda: seidel(numpy, a0.copy(), rows))
    t_sp = _best(lambda: seidel(sp, sp.array(a0), rows))
    if rank == 0:
        print(
            f"seidel {n}x{n}, {rows} rows, {x.comm.size} ranks: {st.collectives / rows:.1f} collectives per row, "
            f"{st.messages_sent} messages, {st.collective_bytes} collective bytes; time {t_sp / t_np:.0f}x NumPy"
        )
    reads = 20000
    for label, shape in (("replicated 100x100", (100, 100)), (f"split {n}x{n}", (n, n))):
        a = numpy.arange(numpy.prod(shape), dtype=float).reshape(shape)
        y = sp.array(a)
        tn = _best(lambda a=a: _reads(a, reads))
        ts = _best(lambda y=y: _reads(y, reads))
        if rank == 0:
            print(f"A[i, j] read, {label}: NumPy {tn / reads * 1e6:.2f} us, spmdarray {ts / reads * 1e6:.2f} us")


if __name__ == "__main__":
    # The threshold these figures were measured at (the default then): the 300 x 300 array is split.
    with sp.config.set(replicate_below=1 << 16):
        main()
