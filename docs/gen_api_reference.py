"""Generate the API reference pages (docs/reference/) from spmdarray's own docstrings.

Sphinx runs :func:`write_pages` when a build starts (docs/conf.py), so the
reference always matches the installed package; the pages are not
committed.  Run it by hand to look at the files::

    python docs/gen_api_reference.py [OUTDIR]     # default: docs/reference

Every public name gets one page, ``generated/<full name>.rst``:

* every name of ``spmdarray.__all__``;
* every public attribute of ``spmdarray.ndarray``, including the methods it
  forwards to NumPy functions (``_MIRRORED``, ``_IN_PLACE``);
* the ``__all__`` of ``spmdarray.linalg``, ``fft``, ``random``, ``io`` and
  ``comm``, and ``spmdarray.config``.

The names are read from the package, never listed here, so new public names
get pages when they are added.  Functions show their ``__doc__`` (spmdarray's
own; NumPy's functions are wrapped under generated docstrings, see
``spmdarray/routines/docstrings.py``).  Objects whose ``__doc__`` is NumPy's
and cannot change (ufuncs, dtypes, classes, constants) show the text of
:func:`reference_doc` instead (docs/conf.py substitutes it when autodoc reads
the docstring).
"""

from __future__ import annotations

import inspect
import os
import pathlib
import re
import sys
import types
from typing import NamedTuple

import numpy

os.environ.setdefault("SPMDARRAY_BACKEND", "numpy")

import spmdarray.comm  # noqa: E402

import spmdarray  # noqa: E402
from spmdarray.core import array as _array  # noqa: E402
from spmdarray.core import methods as _methods  # noqa: E402
from spmdarray.routines import docstrings as _docstrings  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "reference"
NUMPY_URL = _docstrings.NUMPY_URL

#: (section key, title, module, intro) of the submodules documented by their ``__all__``.
SUBMODULES = [
    ("linalg", "spmdarray.linalg", spmdarray.linalg, "Linear algebra (:doc:`../linalg`)."),
    ("fft", "spmdarray.fft", spmdarray.fft, "Discrete Fourier transforms (:doc:`../fft`)."),
    ("random", "spmdarray.random", spmdarray.random, "Random sampling (:doc:`../random`)."),
    ("io", "spmdarray.io", spmdarray.io, "Parallel HDF5 input and output, checkpoints (:doc:`../io`)."),
    ("comm", "spmdarray.comm", spmdarray.comm, "The communication layer: the only module that talks to MPI."),
]

#: Section of the main namespace by docstring category (spmdarray.routines.docstrings.CATEGORIES).
MAIN_SECTIONS = [
    ("creation", "Array creation"),
    ("ufunc", "Elementwise ufuncs"),
    ("elementwise", "Elementwise functions"),
    ("reductions", "Reductions"),
    ("scans", "Scans and differences"),
    ("manipulation", "Shape and data movement"),
    ("indexing", "Indexing"),
    ("sorting", "Sorting and sets"),
    ("statistics", "Statistics"),
    ("logic", "Logic, comparison and dtype utilities"),
    ("numeric_misc", "Miscellaneous numerics"),
    ("products", "Products"),
    ("library", "Library: arrays, synchronisation, settings, I/O and communication"),
    ("no_arrays", "NumPy functions that take no arrays"),
    ("object", "NumPy's dtypes, classes and constants"),
]


class Entry(NamedTuple):
    """One page of the reference."""

    full: str  # spmdarray.sum, spmdarray.ndarray.sum, spmdarray.linalg.norm
    section: str  # the section page that lists it
    directive: str  # autofunction, automethod, autoproperty, autoclass, autodata, method
    obj: object


def _is_numpy_object(obj) -> bool:
    """NumPy's own object, whose ``__doc__`` is NumPy's (ufuncs, dtypes, classes, constants, modules)."""
    if isinstance(obj, numpy.ufunc):
        return True
    if isinstance(obj, types.ModuleType):
        return not obj.__name__.startswith("spmdarray")
    if isinstance(obj, type) or callable(obj):
        return not str(getattr(obj, "__module__", None) or "").startswith("spmdarray")
    if type(obj).__module__.startswith("spmdarray"):  # an instance of spmdarray's class (mgrid)
        return False
    return not any(obj is v for v in vars(spmdarray.comm).values())  # constants: NumPy's, but COUNTERS


def _main_section(obj) -> str:
    if isinstance(obj, numpy.ufunc) and obj.signature is None:
        return "ufunc"
    if isinstance(obj, types.ModuleType) or _is_numpy_object(obj):
        if isinstance(obj, types.ModuleType) and obj.__name__.startswith("spmdarray"):
            return "library"
        return "object" if not callable(obj) or isinstance(obj, type) else "no_arrays"
    wrapped = getattr(obj, "_spmdarray_wraps", None)
    if wrapped is not None:
        cat = _docstrings.category_of(wrapped)
        return cat if cat in dict(MAIN_SECTIONS) else "manipulation"
    mod = getattr(obj, "__module__", "") or ""
    if mod.startswith(("spmdarray.routines", "spmdarray.linalg", "spmdarray.fft")):
        cat = _docstrings.category_of_module(mod)
        return cat if cat in dict(MAIN_SECTIONS) else "creation"
    return "library"


def _directive(obj, owner: type | None = None, name: str = "") -> str:
    if owner is not None:
        attr = inspect.getattr_static(owner, name)
        return "autoproperty" if isinstance(attr, property) else "automethod"
    if _is_numpy_object(obj) or isinstance(obj, types.ModuleType):
        return "autodata"
    if isinstance(obj, type):
        return "autoexception" if issubclass(obj, BaseException) else "autoclass"
    if callable(obj):
        return "autofunction"
    return "autodata"


def ndarray_names() -> list[str]:
    """Every public attribute of ``spmdarray.ndarray`` (class attributes and forwarded methods)."""
    own = {n for n in dir(spmdarray.ndarray) if not n.startswith("_")}
    return sorted(own | set(_methods._MIRRORED) | set(_methods._IN_PLACE))


def entries() -> list[Entry]:
    """Every page of the reference, in order."""
    out = []
    for name in spmdarray.__all__:
        obj = getattr(spmdarray, name)
        out.append(Entry(f"spmdarray.{name}", _main_section(obj), _directive(obj), obj))
    out.append(Entry("spmdarray.config", "library", "autodata", spmdarray.config))
    for name in ndarray_names():
        if name in vars(_array.ndarray) or any(name in vars(k) for k in _array.ndarray.__mro__[1:-1]):
            obj = getattr(_array.ndarray, name)
            out.append(Entry(f"spmdarray.ndarray.{name}", "ndarray", _directive(obj, _array.ndarray, name), obj))
        else:  # forwarded to the NumPy function of the same name (ndarray.__getattr__)
            out.append(Entry(f"spmdarray.ndarray.{name}", "ndarray", "method", None))
    for key, _, mod, _ in SUBMODULES:
        for name in mod.__all__:
            obj = getattr(mod, name)
            out.append(Entry(f"{mod.__name__}.{name}", key, _directive(obj), obj))
    seen: dict[str, Entry] = {}
    for e in out:
        seen.setdefault(e.full, e)
    return list(seen.values())


def _numpy_name(obj, short: str) -> str:
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    mod = getattr(obj, "__module__", None)
    if isinstance(obj, (numpy.ufunc, type)) or callable(obj):
        name = getattr(obj, "__name__", short)
        if not mod or mod.startswith("numpy._") or mod in ("builtins", "numpy"):
            return f"numpy.{name}"
        return f"{mod}.{name}"
    return f"numpy.{short}"


def mirrored_doc(name: str) -> str:
    """Docstring of ``ndarray.<name>``, a method forwarded to ``spmdarray.<name>(a, ...)``."""
    func = getattr(spmdarray, name)
    doc = inspect.getdoc(func) or ""
    paragraphs = doc.split("\n\n")
    collective = "Not collective" if paragraphs[1:] and paragraphs[1].startswith("Not collective") else "Collective"
    if name in _methods._IN_PLACE:
        return (
            f"In place: ``a[...] = spmdarray.{name}(a, ...)``.\n\n"
            f"{collective}: as :func:`spmdarray.{name}` (which says what it communicates and how it differs "
            "from NumPy), followed by an assignment in the array's own layout."
        )
    return (
        f"``a.{name}(...)`` is ``spmdarray.{name}(a, ...)``.\n\n"
        f"{collective}: see :func:`spmdarray.{name}` for what it communicates, what is replicated and how it "
        "differs from NumPy."
    )


def reference_doc(full: str, obj) -> str:
    """The docstring the reference shows for ``full`` (numpydoc text)."""
    short = full.rsplit(".", 1)[1]
    if full.startswith("spmdarray.ndarray.") and obj is None:
        return mirrored_doc(short)
    if full == "spmdarray.config":
        return (
            "The library's settings: a :class:`spmdarray.settings.Settings` object.\n\n"
            "Not collective to read or set; settings marked *agreed* in :doc:`../../settings` must be equal on "
            "every rank, which the first collective call of a new communicator checks. Each setting reads its "
            "``SPMDARRAY_*`` environment variable once; ``config.set(name=value)`` changes it (in a ``with`` "
            "block, only until the block ends). The table of every setting is :doc:`../../settings`."
        )
    if isinstance(obj, numpy.ufunc):
        return _docstrings.ufunc_doc(obj)
    if isinstance(obj, property):
        return inspect.getdoc(obj) or ""
    if full == "spmdarray.comm.COUNTERS":
        return (
            "Running totals of this process's messages and bytes (a dict), for all communicators together.\n\n"
            "Not collective: each rank counts its own traffic; :func:`spmdarray.comm_stats` reads differences "
            "of it over a block of code."
        )
    if not callable(obj) and type(obj).__module__.startswith("spmdarray"):
        return inspect.getdoc(type(obj)) or ""
    if isinstance(obj, types.ModuleType) and obj.__name__.startswith("spmdarray"):
        first = (inspect.getdoc(obj) or obj.__name__).split("\n\n")[0]
        return f"{first}\n\nNot collective: a module; each of its functions says whether it is collective."
    if _is_numpy_object(obj):
        np_name = _numpy_name(obj, short)
        kind = "module" if isinstance(obj, types.ModuleType) else "class" if isinstance(obj, type) else "object"
        if callable(obj) and not isinstance(obj, type):
            kind = "function"
        url = NUMPY_URL.format(np_name)
        if kind == "object":  # pi, e, nan, newaxis ...
            kind, url = "constant", "https://numpy.org/doc/stable/reference/constants.html"
        return (
            f"NumPy's own ``{np_name}`` ({kind}), the same object.\n\n"
            "Not collective: spmdarray adds nothing to it; it takes no distributed arrays "
            f"(`{np_name} <{url}>`__ in NumPy's documentation)."
        )
    return inspect.getdoc(obj) or ""


def _title(text: str, char: str = "=") -> list[str]:
    return [text, char * len(text), ""]


def page_of(full: str) -> str:
    """Path of ``full``'s page, relative to docs/ (no suffix)."""
    return f"reference/generated/{full}"


def _signature(obj) -> str:
    """A ufunc's signature from the first line of NumPy's docstring (optional parts dropped)."""
    first = (obj.__doc__ or "").splitlines()[0] if obj.__doc__ else ""
    if "(" not in first:
        return "(*args, **kwargs)"
    return re.sub(r"\[.*?\]", "", first[first.index("(") :])


def _body(text: str) -> list[str]:
    """Docstring text as a directive's content (numpydoc's Notes heading as a rubric)."""
    text = text.replace("Notes\n-----\n", ".. rubric:: Notes\n\n")
    return ["   " + line if line else "" for line in text.splitlines()]


def _entry_page(e: Entry, no_index: bool = False) -> str:
    lines = _title(e.full)
    if e.directive == "method":
        lines += [f".. py:method:: {e.full}(*args, **kwargs)", ""] + _body(reference_doc(e.full, None))
    elif e.directive == "autodata":  # NumPy's object, a module or the settings: text from reference_doc
        if isinstance(e.obj, numpy.ufunc):
            lines += [f".. py:function:: {e.full}{_signature(e.obj)}"]
        else:
            lines += [f".. py:data:: {e.full}"]
        lines += ["   :no-index:"] if no_index else []
        lines += [""] + _body(reference_doc(e.full, e.obj))
        if e.full == "spmdarray.config":
            lines += ["", ".. autoclass:: spmdarray.settings.Settings", "   :members:"]
    else:
        lines += [f".. {e.directive}:: {e.full}"]
        lines += ["   :no-index:"] if no_index else []
        if e.directive == "autoclass" and e.full == "spmdarray.random.Generator":
            lines += ["   :members:", "   :inherited-members:"]
    return "\n".join(lines) + "\n"


def _section_pages() -> dict[str, tuple[str, str]]:
    pages = {key: (title, "") for key, title in MAIN_SECTIONS}
    pages["ndarray"] = ("spmdarray.ndarray", "The distributed array: its methods and attributes.")
    for key, title, _, intro in SUBMODULES:
        pages[key] = (title, intro)
    return pages


def _summary_line(e: Entry) -> str:
    doc = reference_doc(e.full, e.obj)
    first = " ".join(doc.split("\n\n")[0].split())
    return _docstrings.plain_roles(first).replace("|", "\\|")


def write_pages(out: pathlib.Path = OUT) -> list[Entry]:
    """Write index.rst, one page per section and one per entry under ``out``."""
    ents = entries()
    gen = out / "generated"
    gen.mkdir(parents=True, exist_ok=True)
    wanted = set()
    described: set[int] = set()  # one object under two names (spmdarray.CommStats, spmdarray.comm.CommStats)
    for e in ents:
        path = gen / f"{e.full}.rst"
        wanted.add(path.name)
        again = isinstance(e.obj, type) and id(e.obj) in described
        described.add(id(e.obj))
        text = _entry_page(e, no_index=again)
        if not path.exists() or path.read_text() != text:  # unchanged files keep Sphinx's cache
            path.write_text(text)
    for stale in gen.glob("*.rst"):
        if stale.name not in wanted:
            stale.unlink()
    sections = _section_pages()
    order = [k for k in sections if any(e.section == k for e in ents)]
    index = _title("API reference") + [
        "Every public name of spmdarray, from its own docstrings: whether the call is collective, what it "
        "communicates, what is replicated, and how it differs from NumPy (NumPy's documentation is linked, "
        "not copied). :doc:`../api_coverage` counts NumPy's names by status.",
        "",
        ".. toctree::",
        "   :maxdepth: 1",
        "",
    ]
    index += [f"   {k}" for k in order]
    (out / "index.rst").write_text("\n".join(index) + "\n")
    for key in order:
        title, intro = sections[key]
        lines = _title(title)
        if intro:
            lines += [intro, ""]
        lines += [".. list-table::", "   :widths: 30 70", ""]
        rows = [e for e in ents if e.section == key]
        for e in rows:
            lines += [f"   * - :doc:`{e.full} <generated/{e.full}>`", f"     - {_summary_line(e)}"]
        lines += ["", ".. toctree::", "   :hidden:", ""] + [f"   generated/{e.full}" for e in rows]
        text = "\n".join(lines) + "\n"
        path = out / f"{key}.rst"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    return ents


if __name__ == "__main__":
    target = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    n = len(write_pages(target))
    print(f"{n} reference pages under {target}")
