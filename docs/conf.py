"""Sphinx configuration of spmdarray's documentation site.

Build it from the repository root (the ``docs`` extra installs what it needs)::

    pip install -e ".[docs]"
    sphinx-build -W -b html docs docs/_build/html

The Markdown pages are read by myst-parser; the API reference
(docs/reference/) is generated from spmdarray's docstrings by
docs/gen_api_reference.py when the build starts.
"""

from __future__ import annotations

import os
import pathlib
import sys

os.environ.setdefault("SPMDARRAY_BACKEND", "numpy")
HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gen_api_reference  # noqa: E402

import spmdarray  # noqa: E402

project = "spmdarray"
author = "the spmdarray developers"
copyright = "the spmdarray developers"  # noqa: A001 - Sphinx's name
release = version = spmdarray.__version__

extensions = ["myst_parser", "numpydoc", "sphinx.ext.autodoc"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "api_coverage.in.md", "README.md"]

html_theme = "pydata_sphinx_theme"
html_title = f"spmdarray {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}

myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]

# numpydoc: spmdarray's docstrings, no autosummary tables of class members.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"


def _generate(app) -> None:
    gen_api_reference.write_pages()


def setup(app):
    app.connect("builder-inited", _generate)
