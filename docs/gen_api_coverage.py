"""Generate docs/api_coverage.md from the installed NumPy and spmdarray itself.

Run from the repository root (no MPI needed; importing spmdarray does not
initialise it)::

    python docs/gen_api_coverage.py            # print the page
    python docs/gen_api_coverage.py --update   # rewrite docs/api_coverage.md
    python docs/gen_api_coverage.py --check    # exit 1 if the committed page is out of date (CI)

The page is ``docs/api_coverage.in.md`` (hand-written text) with its
``{{TOTALS}}`` and ``{{TABLES}}`` markers replaced.  Each name of NumPy's
main namespace (functions and ufuncs), ``numpy.ndarray`` (methods),
``numpy.linalg``, ``numpy.fft``, ``numpy.random`` and
``numpy.random.Generator`` (methods) gets one status, decided from
spmdarray's registries, never by hand:

``distributed``
    Runs on the blocks where they live (``HANDLED`` in ``_dispatch``, an
    elementwise ufunc, or a function spmdarray defines itself).
``replicated``
    Implemented, holding a small input or the result whole on every rank
    (registered with ``implements(..., replicated=True)``), or an explicit
    conversion that returns all the data (``tolist``).
``no arrays``
    Takes and returns no arrays: NumPy's own function, correct as it is
    (``_namespace.NO_ARRAYS``: printing options, dtype queries, ...), or
    random seeding and generator state.
``not implemented``
    Raises ``NotImplementedError`` naming the function.

Per-name notes (documented deviations) come from ``NOTES`` in
``spmdarray/routines/api_notes.py`` (the docstrings show them too).
"""

from __future__ import annotations

import os
import pathlib
import re
import sys
import types

import numpy

os.environ.setdefault("SPMDARRAY_BACKEND", "numpy")  # no backend warning: the page does not depend on it
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import gen_api_reference  # noqa: E402

import spmdarray  # noqa: E402
import spmdarray.random  # noqa: E402
from spmdarray.core import methods as _methods  # noqa: E402
from spmdarray.core.registry import HANDLED, REPLICATED  # noqa: E402
from spmdarray.routines import namespace as _namespace  # noqa: E402
from spmdarray.routines.api_notes import NOTES  # noqa: E402

DIST, REPL, OWN, MISSING = "distributed", "replicated", "no arrays", "not implemented"
STATUSES = (DIST, REPL, OWN, MISSING)
#: ndarray methods that return all of the array's data by request.
GATHERING_METHODS = {"tolist", "tobytes", "tofile", "dump", "dumps"}
#: NumPy's test runners are not API: left out of every count.
EXCLUDED = {"test"}

HERE = pathlib.Path(__file__).resolve().parent
TEMPLATE = HERE / "api_coverage.in.md"
PAGE = HERE / "api_coverage.md"


def public_callables(mod) -> list[str]:
    """Public functions and ufuncs of a module (no classes, modules or constants)."""
    out = []
    for n in dir(mod):
        if n.startswith("_") or n in EXCLUDED:
            continue
        f = getattr(mod, n)
        if isinstance(f, numpy.ufunc) or (callable(f) and not isinstance(f, (type, types.ModuleType))):
            out.append(n)
    return out


def _is_stub(obj) -> bool:
    return obj is None or bool(getattr(obj, "_spmdarray_stub", False))


def _registered(f) -> str:
    if f not in HANDLED:
        return MISSING
    return REPL if f in REPLICATED else DIST


def function_status(ours_mod, np_mod, name: str) -> str:
    """Status of ``np_mod.<name>`` as ``ours_mod.<name>``."""
    theirs = getattr(np_mod, name)
    try:
        ours = getattr(ours_mod, name)
    except (AttributeError, NotImplementedError):
        return MISSING
    if _is_stub(ours):
        return MISSING
    if isinstance(theirs, numpy.ufunc):
        if theirs.signature is None:
            return DIST
        from spmdarray.linalg._products import GUFUNCS

        if theirs is numpy.matmul or theirs in GUFUNCS:
            return DIST
        return _registered(theirs)
    ours = getattr(ours, "_spmdarray_wraps", ours)  # spmdarray's docstring over NumPy's function
    if ours is theirs:
        if hasattr(theirs, "_implementation"):
            return _registered(theirs)
        if name in _namespace.NO_ARRAYS:
            return OWN
        return MISSING
    return REPL if theirs in REPLICATED else DIST


def method_status(name: str) -> str:
    """Status of ``numpy.ndarray.<name>`` on ``spmdarray.ndarray``."""
    cls = spmdarray.ndarray
    if any(name in vars(k) for k in cls.__mro__ if k is not object):
        return REPL if name in GATHERING_METHODS else DIST
    if name in _methods._MIRRORED or name in _methods._IN_PLACE:
        f = getattr(numpy, name, None)
        if f is not None and (f in HANDLED or isinstance(f, numpy.ufunc)):
            return REPL if f in REPLICATED else DIST
    return MISSING


#: Random functions whose result is small and identical on every rank.
RANDOM_REPLICATED = {"bytes"}
#: Random functions that take and return no arrays (generator state and seeding).
RANDOM_NO_ARRAYS = {"seed", "get_state", "set_state", "default_rng", "spawn"}


def _random_kind(name: str) -> str:
    if name in RANDOM_REPLICATED:
        return REPL
    return OWN if name in RANDOM_NO_ARRAYS else DIST


def random_status(name: str) -> str:
    mod = spmdarray.random
    obj = vars(mod).get(name)
    if obj is None or _is_stub(obj):
        return MISSING
    return _random_kind(name)


def generator_status(name: str) -> str:
    gen = spmdarray.random.Generator
    if any(name in vars(k) for k in gen.__mro__ if k is not object):
        return _random_kind(name)
    return MISSING


def ndarray_methods() -> list[str]:
    nd = numpy.ndarray
    return sorted(n for n in dir(nd) if not n.startswith("_") and n not in EXCLUDED and callable(getattr(nd, n)))


def generator_methods() -> list[str]:
    g = numpy.random.Generator
    return sorted(n for n in dir(g) if not n.startswith("_") and callable(getattr(g, n)))


def areas() -> list[tuple[str, str, list[tuple[str, str]]]]:
    """``(title, prefix, [(name, status), ...])`` for each counted area."""
    ours_linalg = getattr(spmdarray, "linalg", numpy.linalg)
    ours_fft = getattr(spmdarray, "fft", numpy.fft)
    return [
        (
            "Main namespace: functions and ufuncs",
            "numpy.",
            [(n, function_status(spmdarray, numpy, n)) for n in public_callables(numpy)],
        ),
        ("`ndarray` methods", "ndarray.", [(n, method_status(n)) for n in ndarray_methods()]),
        (
            "`numpy.linalg`",
            "linalg.",
            [(n, function_status(ours_linalg, numpy.linalg, n)) for n in public_callables(numpy.linalg)],
        ),
        ("`numpy.fft`", "fft.", [(n, function_status(ours_fft, numpy.fft, n)) for n in public_callables(numpy.fft)]),
        ("`numpy.random` functions", "random.", [(n, random_status(n)) for n in public_callables(numpy.random)]),
        ("`numpy.random.Generator` methods", "Generator.", [(n, generator_status(n)) for n in generator_methods()]),
    ]


def _counts(rows) -> dict:
    c = dict.fromkeys(STATUSES, 0)
    for _, s in rows:
        c[s] += 1
    return c


def _pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:.1f}%" if b else "n/a"


def totals(data) -> str:
    allrows = [r for _, _, rows in data for r in rows]
    c = _counts(allrows)
    m = len(allrows)
    n = m - c[MISSING]
    lines = [
        f"**{n} of {m} implemented ({_pct(n, m)}), {c[DIST]} distributed.** The other implemented "
        f"names are {c[REPL]} replicated for small inputs and {c[OWN]} functions that take and return no "
        f"arrays; {c[MISSING]} raise `NotImplementedError`. Generated with NumPy {numpy.__version__}.",
        "",
        "| area | names | implemented | distributed | replicated | no arrays | not implemented |",
        "|------|------:|------------:|------------:|-----------:|----------:|----------------:|",
    ]
    for title, _, rows in data:
        k = _counts(rows)
        impl = len(rows) - k[MISSING]
        lines.append(
            f"| {title} | {len(rows)} | {impl} ({_pct(impl, len(rows))}) | {k[DIST]} | {k[REPL]} | {k[OWN]} | "
            f"{k[MISSING]} |"
        )
    lines.append(
        f"| **all** | **{m}** | **{n} ({_pct(n, m)})** | **{c[DIST]}** | **{c[REPL]}** | **{c[OWN]}** | "
        f"**{c[MISSING]}** |"
    )
    return "\n".join(lines)


#: Prefix of a NOTES key -> prefix of the reference entry's full name.
ENTRY_PREFIX = {
    "numpy.": "spmdarray.",
    "ndarray.": "spmdarray.ndarray.",
    "linalg.": "spmdarray.linalg.",
    "fft.": "spmdarray.fft.",
    "random.": "spmdarray.random.",
}


def _linked(prefix: str, name: str, entries: set[str]) -> str:
    """``name`` linking to its API reference page (Generator methods: the Generator's page)."""
    full = "spmdarray.random.Generator" if prefix == "Generator." else ENTRY_PREFIX[prefix] + name
    if full not in entries:
        return f"`{name}`"
    return f"[`{name}`]({gen_api_reference.page_of(full)}.rst)"


def tables(data) -> str:
    entries = {e.full for e in gen_api_reference.entries()}
    out = []
    for title, prefix, rows in data:
        out += [f"### {title}", "", "| name | status | notes |", "|------|--------|-------|"]
        for name, status in sorted(rows):
            note = NOTES.get(prefix + name, "")
            cell = _linked(prefix, name, entries) if status != MISSING else f"`{name}`"
            out.append(f"| {cell} | {status} | {note} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def render() -> str:
    data = areas()
    text = TEMPLATE.read_text()
    return text.replace("{{TOTALS}}", totals(data)).replace("{{TABLES}}", tables(data))


def main(argv: list[str]) -> int:
    page = render()
    if argv[1:] == ["--update"]:
        PAGE.write_text(page)
        return 0
    if argv[1:] == ["--check"]:
        committed = PAGE.read_text()
        m = re.search(r"Generated with NumPy ([^ ]+?)\.\s", committed)
        if m and m.group(1) != numpy.__version__:
            # Another NumPy has other names: the page cannot match; say so, do not fail.
            sys.stderr.write(
                f"docs/api_coverage.md was generated with NumPy {m.group(1)}; NumPy {numpy.__version__} is "
                "installed, so the check is skipped (regenerate with that NumPy to compare)\n"
            )
            return 0
        if committed != page:
            sys.stderr.write(
                "docs/api_coverage.md is out of date with the code: run `python docs/gen_api_coverage.py --update` "
                "and commit the result\n"
            )
            return 1
        return 0
    sys.stdout.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
