"""The statements of Python loops over a small array, spmdarray against NumPy.

npbench's loop kernels (``seidel_2d``, ``syrk``, ``cholesky``, ``lu``,
``gramschmidt``...) spend their time in statements like these, run once per
element or per row on an array every rank holds whole (replicated: below
``config.replicate_below``).  Each statement's cost is Python's, not the
data's: what spmdarray adds per statement is the product's metric here.

Each statement runs ``reps`` times per round on a 60 x 60 float64 array,
NumPy and spmdarray alternating, and the fastest round counts (noise on a
shared machine only adds time).  ``alpha * A[i, j]`` is a NumPy scalar, as in
``syrk``: its product with a view reaches ``__array_ufunc__``::

    python -m scaling.loop_statements [--reps 20000] [--rounds 5] [--json]

Not collective: run it on one process (every rank of a job would run the
same statements on its own copy, with no message).
"""

from __future__ import annotations

import argparse
import json
import timeit

import numpy

#: The statements, as npbench's loop kernels write them (``i``, ``j``: loop indices).
STATEMENTS = (
    "A[i, j]",
    "A[i, j] = 1.5",
    "A[i, j] += A[i, j - 1]",
    "A[i, 1:-1]",
    "A[i, 1:-1] += A[i - 1, :-2]",
    "2.0 * A[i, :j]",
    "A[i, :j] @ A[:j, j]",
    "A[i, :j] * A[:j, j]",
    "A[i, :j].sum()",
    "alpha * A[i, j] * A[:i, j]",
    "A[i, :j] = A[i - 1, :j]",
)


def measure(reps: int = 20000, rounds: int = 5, n: int = 60) -> list[dict]:
    """Microseconds per statement of :data:`STATEMENTS`, NumPy's and spmdarray's.  Not collective."""
    import spmdarray

    a = numpy.random.default_rng(0).random((n, n))
    arrays = {"numpy": a.copy(), "spmdarray": spmdarray.asarray(a.copy())}
    rows = []
    for stmt in STATEMENTS:
        best = {}
        for _ in range(rounds):
            for name, arr in arrays.items():
                names = {"A": arr, "i": n // 2, "j": n // 3, "alpha": 1.5}
                t = timeit.timeit(stmt, globals=names, number=reps) / reps * 1e6
                best[name] = min(best.get(name, t), t)
        rows.append({
            "statement": stmt, "numpy_us": best["numpy"], "spmdarray_us": best["spmdarray"],
            "ratio": best["spmdarray"] / best["numpy"],
        })  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> None:
    """Print the table, or the rows as JSON with ``--json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the rows as one JSON line")
    args = parser.parse_args(argv)
    rows = measure(args.reps, args.rounds)
    if args.json:
        print(json.dumps(rows))
        return
    print(f"{'statement':>30} {'numpy us':>9} {'spmdarray us':>13} {'ratio':>6}")
    for r in rows:
        print(f"{r['statement']:>30} {r['numpy_us']:>9.3f} {r['spmdarray_us']:>13.3f} {r['ratio']:>6.1f}")


if __name__ == "__main__":
    main()
