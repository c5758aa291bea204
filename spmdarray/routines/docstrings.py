"""spmdarray's own docstrings for the NumPy functions it exposes, generated from tables by category.

``spmdarray.sum`` and most of the main namespace, ``spmdarray.linalg`` and
``spmdarray.fft`` are NumPy's functions dispatching through
``__array_function__``.  :func:`wrap` gives each a thin wrapper whose
docstring is spmdarray's: whether the call is collective, what it
communicates in terms of the layout, what it replicates and how it differs
from NumPy (the one-line notes of :mod:`spmdarray.routines.api_notes`), with
a link to NumPy's page instead of a copy of NumPy's text.  The category of a
name is the module that registered its implementation (``HANDLED``), so a
newly registered function gets the right text without being listed here.

Ufuncs stay NumPy's own objects (``reduce``, ``outer``, ``at`` and identity
checks keep working); :func:`ufunc_doc` gives the text that the API
reference shows for them.  Nothing here is collective.
"""

from __future__ import annotations

import inspect
import re
import types
from typing import Any, NamedTuple

import numpy as np

from spmdarray.core.registry import HANDLED, REPLICATED
from spmdarray.core.whole import LANE, SLOW
from spmdarray.engine.replicas import GIVE_VIEWS, PURE, direct, plain_arguments
from spmdarray.routines.api_notes import NOTES

#: The compiled lane's :func:`~spmdarray.engine.replicas.direct` (None: the Python lane alone).
_DIRECT_C = None if LANE is None else LANE.direct

__all__ = [
    "CATEGORIES",
    "Category",
    "annotate",
    "category_of",
    "doc_for",
    "plain_roles",
    "refresh",
    "ufunc_doc",
    "wrap",
    "wrap_all",
]

#: Every wrapper :func:`wrap` made, with its NOTES key (for :func:`refresh`).
_WRAPPERS: list = []

NUMPY_URL = "https://numpy.org/doc/stable/reference/generated/{}.html"


class Category(NamedTuple):
    """What every function of one category does on distributed arrays."""

    title: str
    collective: str
    communication: str
    replicated: str


_COLLECTIVE = (
    "Collective: every rank of the arrays' communicator calls it, in the same order "
    "(with only NumPy arguments it computes as NumPy does, the same on every rank)."
)
_NO_REPLICATION = "Nothing: the result is distributed like its inputs (or in the balanced layout of its shape)."

CATEGORIES: dict[str, Category] = {
    "ufunc": Category(
        "Elementwise ufuncs",
        "Collective when an operand is a spmdarray array: every rank calls it, in the same order.",
        "None when the operands share a layout: each rank runs NumPy's loop on its own block. An operand in "
        "another layout (a shifted view, a broadcast, another distribution) is aligned first: a halo "
        "exchange of the edge cells with the neighbouring ranks, or a redistribution that moves each element "
        "of the overlap once, in point-to-point messages between the ranks whose blocks overlap. Large "
        "elementwise chains are deferred and fused (call ``spmdarray.sync()`` before reading a timer).",
        "NumPy arrays and scalars given as operands are the same on every rank; each rank reads its part. "
        "The result is distributed.",
    ),
    "elementwise": Category(
        "Elementwise functions",
        _COLLECTIVE,
        "As the elementwise ufuncs: none when the operands share a layout, else the halo exchange or "
        "redistribution that aligns them. ``allclose``, ``array_equal`` and ``array_equiv`` add one "
        "allreduce of a flag (a few bytes, log2(P) messages).",
        "The boolean answers of ``allclose``/``array_equal``/``array_equiv`` are the same on every rank; "
        "array results are distributed.",
    ),
    "reductions": Category(
        "Reductions",
        _COLLECTIVE,
        "Each rank reduces its own block; the ranks that differ only along the reduced grid axes all-gather "
        "their partial results (the result's block size times the itemsize per rank, log2(P) messages) and "
        "combine them in rank order, so the answer is the same at every rank count.",
        "A full reduction is a 0-d array, the same on every rank. An axis reduction is replicated along the "
        "reduced grid axes and distributed along the others (so ``x - x.mean(axis=0)`` moves no data).",
    ),
    "scans": Category(
        "Scans and differences",
        _COLLECTIVE,
        "``cumsum``/``cumprod`` scan each block, then the ranks along the scanned axis exchange their last "
        "slices and add the carries of the ranks before them (one slice per rank). ``diff``/``gradient`` "
        "are differences of shifted views: a halo exchange of the edge cells only.",
        _NO_REPLICATION,
    ),
    "creation": Category(
        "Array creation",
        "Collective: every rank calls it with the same arguments, in the same order.",
        "None: each rank builds its own block from the global description.",
        "A NumPy array or list given as data is the same on every rank; the result is distributed.",
    ),
    "manipulation": Category(
        "Shape and data movement",
        _COLLECTIVE,
        "Views (transposes, basic slices, ``expand_dims``, ``broadcast_to``) move nothing. A result in "
        "another layout (``reshape``, ``concatenate``, ``roll``, ``pad``, ...) is a redistribution: each "
        "element moves at most once, in point-to-point messages between the ranks whose old and new blocks "
        "overlap (bytes: the elements that change rank times the itemsize).",
        _NO_REPLICATION,
    ),
    "indexing": Category(
        "Indexing",
        _COLLECTIVE,
        "Reads and writes by index are routed to the owning ranks: one all-to-all of requests (the indices) "
        "and one of replies (the values); a scatter is one all-to-all (the last write wins, as in NumPy). "
        "``nonzero`` places each rank's indices by a prefix sum of per-rank counts.",
        "Index arrays given as NumPy arrays are the same on every rank; the result is distributed.",
    ),
    "sorting": Category(
        "Sorting and sets",
        _COLLECTIVE,
        "None when the sort axis is not split. Otherwise a sample sort along that axis: an all-gather of P "
        "samples per rank, then one all-to-all that moves each element once (and a second to rebalance).",
        _NO_REPLICATION,
    ),
    "statistics": Category(
        "Statistics",
        _COLLECTIVE,
        "The NaN-aware reductions and averages communicate as the reductions do. ``median``/``percentile``/"
        "``quantile`` sort along the axis (a sample sort) and read a few slices. Histograms count each "
        "block against bins every rank computes identically, then add the counts (bins times itemsize per "
        "rank).",
        "Histogram bins and counts are small and replicated on every rank; other results are distributed.",
    ),
    "logic": Category(
        "Logic, comparison and dtype utilities",
        _COLLECTIVE + " Dtype utilities and ``may_share_memory`` read metadata only.",
        "Elementwise parts as the ufuncs; ``array2string`` and friends gather the items they print.",
        "Printed text is the same on every rank; array results are distributed.",
    ),
    "numeric_misc": Category(
        "Miscellaneous numerics",
        _COLLECTIVE,
        "Window functions and ``vander`` build each block locally. ``unwrap`` is a prefix scan across ranks; "
        "``polyfit`` a tall-skinny QR (one small all-gather of triangular factors); ``apply_along_axis`` "
        "redistributes the axis to be whole on each rank.",
        "Polynomial coefficients and small sample points are held whole on every rank.",
    ),
    "products": Category(
        "Products",
        _COLLECTIVE,
        "2-D ``matmul``/``dot`` use SUMMA: for each panel, a broadcast of an ``A`` column panel along the "
        "process-grid rows and of a ``B`` row panel along the columns (about ``(m k / pr + k n / pc)`` "
        "elements per rank in total). Stacks run batch-parallel; other products are built from transposes "
        "(views), reshapes (redistributions), broadcasting products and reductions.",
        "Nothing: no operand is gathered.",
    ),
    "linalg": Category(
        "Linear algebra",
        _COLLECTIVE,
        "``qr`` and ``svd`` of one tall matrix use TSQR: each rank factors its row block and one all-gather "
        "of the small ``N x N`` triangular factors follows. Other routines run NumPy's routine on stacks "
        "batch-parallel (each matrix whole on one rank), or gather a single matrix onto one rank, solve "
        "there and scatter the result (at most ``config.linalg_max_elements`` elements).",
        "Small results (norms, determinants, ``N x N`` factors) are the same on every rank.",
    ),
    "fft": Category(
        "Discrete Fourier transforms",
        _COLLECTIVE,
        "A transform along an axis split over ranks redistributes the array into a pencil layout where that "
        "axis is whole on every rank (an all-to-all among the ranks of the other grid axes: each element "
        "moves once), transforms each block with the backend's FFT, and redistributes back. Axes already "
        "whole are transformed in place.",
        _NO_REPLICATION,
    ),
    "random": Category(
        "Random sampling",
        "Collective when it returns an array (it creates a distributed array; no data moves). A "
        "``size=None`` draw is not collective, but every rank must still make the same calls in the same "
        "order, so that the generators' draw counters agree.",
        "None: the generator is counter-based, each rank computes the draws of its own block from their "
        "global indices (``seed(None)`` broadcasts entropy from rank 0 once).",
        "A scalar draw (``size=None``) is the same on every rank; arrays are distributed and identical at "
        "every rank count.",
    ),
    "no_arrays": Category(
        "Takes no arrays",
        "Not collective: NumPy's own function, correct as it is on each rank.",
        "None.",
        "Not applicable: it takes and returns no arrays.",
    ),
    "object": Category(
        "NumPy objects",
        "Not collective: NumPy's own object (a class, a dtype, a constant or a module).",
        "None.",
        "Not applicable.",
    ),
    "not_implemented": Category(
        "Not implemented",
        "Not collective: raises NotImplementedError on every rank without communicating.",
        "None.",
        "Never a silent gather: use ``numpy.<name>`` on a NumPy array if a replicated result is what you want.",
    ),
}

#: Module of a registered implementation -> category (the longest matching prefix wins).
MODULE_CATEGORY = {
    "spmdarray.routines.reductions": "reductions",
    "spmdarray.routines.scans": "scans",
    "spmdarray.routines.creation": "creation",
    "spmdarray.routines.grids": "creation",
    "spmdarray.routines.readers": "creation",
    "spmdarray.routines.manipulation": "manipulation",
    "spmdarray.routines.attributes": "manipulation",
    "spmdarray.routines.indexing": "indexing",
    "spmdarray.routines.sorting": "sorting",
    "spmdarray.routines.stats": "statistics",
    "spmdarray.routines.logic": "logic",
    "spmdarray.routines.elementwise_functions": "elementwise",
    "spmdarray.routines.numeric_misc": "numeric_misc",
    "spmdarray.linalg._products": "products",
    "spmdarray.linalg._einsum": "products",
    "spmdarray.linalg._summa": "products",
    "spmdarray.linalg": "linalg",
    "spmdarray.fft": "fft",
    "spmdarray.random": "random",
}

_NOTE_PREFIX = {"numpy": "numpy.", "numpy.linalg": "linalg.", "numpy.fft": "fft.", "numpy.random": "random."}


def _np_name(func) -> str:
    """``numpy.sum``, ``numpy.linalg.norm``: the public name NumPy documents it under."""
    mod = getattr(func, "__module__", None) or "numpy"
    if not mod.startswith("numpy") or mod.startswith("numpy._"):
        mod = "numpy"
    return f"{mod}.{func.__name__}"


def category_of(func) -> str:
    """The category key of NumPy's ``func`` (by the module that registered its implementation)."""
    if isinstance(func, np.ufunc):
        impl = HANDLED.get(func)
        return "ufunc" if impl is None or func.signature is None else category_of_module(impl.__module__)
    impl = HANDLED.get(func)
    if impl is None:
        if isinstance(func, (type, types.ModuleType)) or not callable(func):
            return "object"
        return "no_arrays" if not hasattr(func, "_implementation") else "not_implemented"
    return category_of_module(getattr(impl, "__module__", "") or "")


def category_of_module(module: str) -> str:
    """The category of an implementation defined in ``module`` (``elementwise`` when none matches)."""
    best = ""
    for prefix in MODULE_CATEGORY:
        if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
            best = prefix
    return MODULE_CATEGORY[best] if best else "elementwise"


def _rst(text: str) -> str:
    """Markdown code spans (single backticks) as reStructuredText literals."""
    return re.sub(r"(?<!`)`([^`]+)`(?!`)", r"``\1``", text)


def plain_roles(text: str) -> str:
    """Sphinx roles (``:ref:`x```, ``:func:`y```) as literals: NumPy's targets are not in this site."""
    text = re.sub(r":[\w:]+:`([^`<]*?)\s*<[^`>]*>`", r"``\1``", text)
    return re.sub(r":[\w:]+:`~?([^`]+)`", r"``\1``", text)


def _summary(func) -> str:
    doc = inspect.getdoc(func) or ""
    for para in doc.split("\n\n"):
        line = " ".join(para.split())
        if line and not line.startswith(func.__name__ + "("):
            return plain_roles(line)
    return f"NumPy's ``{func.__name__}``."


def _implementation(func) -> str:
    """The first paragraph of the registered implementation's docstring ("" if none)."""
    impl = HANDLED.get(func)
    doc = inspect.getdoc(impl) if impl is not None else None
    return " ".join(doc.split("\n\n")[0].split()) if doc else ""


def doc_for(func, note_key: str | None = None, category: str | None = None) -> str:
    """spmdarray's docstring for NumPy's ``func`` (numpydoc, linking NumPy's page).

    ``note_key`` is the key of :data:`NOTES` (``numpy.sum``, ``linalg.norm``);
    ``category`` overrides the category found by :func:`category_of`.
    """
    cat = CATEGORIES[category or category_of(func)]
    full = _np_name(func)
    impl = _implementation(func)
    collective, communication, replicated = cat.collective, cat.communication, cat.replicated
    if "Not collective" in impl:
        collective = "Not collective: it reads the arrays' metadata (shape, dtype), which every rank holds."
        communication = "None."
        replicated = "The result (a dtype, a shape or a flag) is the same on every rank."
    if note_key is None:
        note_key = _NOTE_PREFIX.get(full.rsplit(".", 1)[0], "numpy.") + func.__name__
    if func in REPLICATED:
        replicated = (
            "This function holds a small input or its result whole on every rank "
            "(meant for small arrays: bins, coefficients, small matrices)."
        )
    note = NOTES.get(note_key)
    differs = _rst(note) if note else "None on the arguments it accepts: NumPy's semantics and results."
    url = NUMPY_URL.format(full)
    return (
        f"{_summary(func)}\n\n"
        f"{collective}\n\n"
        f"Parameters, return values and exceptions are those of `{full} <{url}>`__ (NumPy's documentation "
        f"is linked, not copied).\n\n"
        "Notes\n-----\n"
        f"**Category.** {cat.title}.\n\n"
        + (f"**Implementation.** {impl}\n\n" if impl else "")
        + f"**Communication.** {communication}\n\n"
        f"**Replicated.** {replicated}\n\n"
        f"**Differences from NumPy.** {differs}\n"
    )


def ufunc_doc(ufunc: np.ufunc) -> str:
    """The API reference's docstring for NumPy's ufunc (the ufunc object itself keeps NumPy's)."""
    return doc_for(ufunc, "numpy." + ufunc.__name__)


def wrap(func, qualname: str, note_key: str | None = None) -> Any:
    """A function calling NumPy's ``func`` with spmdarray's docstring (:func:`doc_for`).

    With spmdarray arguments the call still dispatches through
    ``__array_function__``; ``__wrapped__`` is NumPy's function (its signature).
    Classes, ufuncs, modules and constants are returned unchanged.
    """
    if isinstance(func, (np.ufunc, type, types.ModuleType)) or not callable(func):
        return func

    if func in PURE:

        def wrapper(*args, **kwargs):
            if func in HANDLED:  # replicated arguments: NumPy's own call, without the dispatch
                if _DIRECT_C is not None and (res := _DIRECT_C(func, args, kwargs)) is not SLOW:
                    return res  # (``direct``'s usual case, compiled: ``spmdarray.core._lane``)
                res = direct(func, args, kwargs)
                if res is not SLOW:
                    return res
            return func(*args, **kwargs)

    elif func in GIVE_VIEWS:

        def wrapper(*args, **kwargs):
            impl = HANDLED.get(func)
            if impl is not None and plain_arguments(args, kwargs):
                return impl(*args, **kwargs)  # a view, whatever the layout: the protocol would come here
            return func(*args, **kwargs)

    else:

        def wrapper(*args, **kwargs):
            return func(*args, **kwargs)

    mod, _, name = qualname.rpartition(".")
    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__module__ = mod
    wrapper.__wrapped__ = func
    wrapper._spmdarray_wraps = func  # NumPy's functions may have a __wrapped__ of their own
    wrapper.__doc__ = doc_for(func, note_key)
    _WRAPPERS.append((wrapper, note_key))
    return wrapper


def refresh() -> None:
    """Recompute the wrappers' docstrings once every implementation is registered.

    ``spmdarray.api`` calls it last: a wrapper made before the module that
    registers its implementation was imported would otherwise show the
    wrong category.
    """
    for wrapper, note_key in _WRAPPERS:
        wrapper.__doc__ = doc_for(wrapper._spmdarray_wraps, note_key)


def wrap_all(np_module, names, module_name: str, note_prefix: str) -> dict:
    """``{name: wrap(np_module.<name>)}`` for ``names``, as ``module_name.<name>``."""
    return {
        n: wrap(getattr(np_module, n), f"{module_name}.{n}", note_prefix + n) for n in names if hasattr(np_module, n)
    }


def annotate(func, category: str) -> None:
    """Complete an spmdarray function's docstring from its category's table entry (in place).

    After the summary line it adds the collective sentence when the text has
    neither "Collective" nor "Not collective", and what is communicated and
    replicated when it does not say so.  Idempotent.
    """
    target = getattr(func, "__func__", func)
    doc = target.__doc__ or ""
    cat = CATEGORIES[category]
    added = []
    if "Collective" not in doc and "Not collective" not in doc:
        added.append(cat.collective)
    if not re.search(r"communicat|Replicated:", doc):
        added.append(f"Communication: {cat.communication} Replicated: {cat.replicated}")
    if not added:
        return
    head, _, rest = doc.partition("\n")
    rest = rest.lstrip("\n")
    indents = [len(line) - len(line.lstrip()) for line in rest.splitlines() if line.strip()]
    pad = " " * min(indents, default=0)
    text = head + "".join(f"\n\n{pad}{para}" for para in added) + "\n"
    target.__doc__ = text + (f"\n{rest}" if rest.strip() else "")
