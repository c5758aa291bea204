"""The API reference (docs/gen_api_reference.py) covers every public name with spmdarray's own docstrings."""

from __future__ import annotations

import importlib.util
import inspect
import pathlib

import numpy
import pytest

import spmdarray
from spmdarray.core import methods as _methods

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"


@pytest.fixture(scope="module")
def gen():
    if not (DOCS / "gen_api_reference.py").exists():
        pytest.skip("docs/ is not next to the tests (an installed copy of the tests)")
    spec = importlib.util.spec_from_file_location("gen_api_reference", DOCS / "gen_api_reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _says_collective(doc: str) -> bool:
    return "Collective" in doc or "Not collective" in doc


def test_sum_has_spmdarrays_own_docstring():
    doc = spmdarray.sum.__doc__
    assert doc != numpy.sum.__doc__ and "Collective" in doc
    assert "numpy.org/doc/stable/reference/generated/numpy.sum.html" in doc  # linked, not copied
    assert "where=" in doc and "NotImplementedError" in doc  # the documented difference
    assert "Parameters\n----------" not in doc  # NumPy's parameter list is not copied
    assert "Collective" in spmdarray.ndarray.sum.__doc__
    assert spmdarray.sum(numpy.arange(4)) == 6  # the wrapper still computes
    assert inspect.signature(spmdarray.sum) == inspect.signature(numpy.sum)


def test_submodule_functions_have_own_docstrings():
    for f in (spmdarray.linalg.norm, spmdarray.fft.fft, spmdarray.random.beta, spmdarray.mean):
        assert _says_collective(f.__doc__), f


def test_every_public_name_has_an_entry(gen):
    full = {e.full for e in gen.entries()}
    wanted = {f"spmdarray.{n}" for n in spmdarray.__all__}
    wanted |= {f"spmdarray.ndarray.{n}" for n in dir(spmdarray.ndarray) if not n.startswith("_")}
    wanted |= {f"spmdarray.ndarray.{n}" for n in (*_methods._MIRRORED, *_methods._IN_PLACE)}
    for mod in (spmdarray.linalg, spmdarray.fft, spmdarray.random, spmdarray.io, spmdarray.comm):
        wanted |= {f"{mod.__name__}.{n}" for n in mod.__all__}
    wanted.add("spmdarray.config")
    assert not wanted - full, sorted(wanted - full)[:20]


def test_every_entry_says_whether_it_is_collective(gen):
    bad = [e.full for e in gen.entries() if not _says_collective(gen.reference_doc(e.full, e.obj))]
    assert not bad, bad[:20]
    # Only NumPy's own objects get the generated "NumPy's own" text, never spmdarray's attributes.
    numpy_text = [e.full for e in gen.entries() if gen.reference_doc(e.full, e.obj).startswith("NumPy's own")]
    assert not [n for n in numpy_text if n.startswith("spmdarray.ndarray.")], numpy_text


def test_pages_are_written_one_per_entry(gen, tmp_path):
    ents = gen.write_pages(tmp_path)
    pages = {p.stem for p in (tmp_path / "generated").glob("*.rst")}
    assert pages == {e.full for e in ents}
    text = (tmp_path / "generated" / "spmdarray.sum.rst").read_text()
    assert text.startswith("spmdarray.sum\n=============") and ".. autofunction:: spmdarray.sum" in text
    add = (tmp_path / "generated" / "spmdarray.add.rst").read_text()
    assert ".. py:function:: spmdarray.add(x1, x2, /" in add and "Collective" in add
    index = (tmp_path / "index.rst").read_text()
    for section in ("reductions", "ufunc", "ndarray", "linalg", "fft", "random", "io", "comm"):
        assert f"   {section}\n" in index and (tmp_path / f"{section}.rst").exists()
    assert ":doc:`spmdarray.sum <generated/spmdarray.sum>`" in (tmp_path / "reductions.rst").read_text()
    shape = (tmp_path / "generated" / "spmdarray.ndarray.shape.rst").read_text()
    assert ".. autoproperty:: spmdarray.ndarray.shape" in shape


def test_coverage_page_links_each_implemented_name(gen):
    page = (DOCS / "api_coverage.md").read_text()
    assert "[`sum`](reference/generated/spmdarray.sum.rst)" in page
    assert "[`norm`](reference/generated/spmdarray.linalg.norm.rst)" in page
    assert "[`argsort`](reference/generated/spmdarray.ndarray.argsort.rst)" in page
