"""Every ```python block of the README and docs/*.md runs as it stands, at any rank count.

Each block is executed on its own, in a fresh namespace, in an empty folder
that every rank shares (examples write HDF5 files), so a block that needs an
import or a variable defined elsewhere fails here.  A block preceded by the
line ``<!-- docs-example: skip (reason) -->`` is skipped (the user guide's
example of a deadlock).  Serially, ``pytest tests/test_doc_examples.py``;
at 2 ranks, ``mpiexec -n 2 python -m pytest --with-mpi tests/test_doc_examples.py``
(tests/run_all.sh runs both in its docs step).
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import re
import shutil
import tempfile

import pytest

import spmdarray as sp

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SKIP = re.compile(r"<!--\s*docs-example:\s*skip\s*\((?P<why>[^)]*)\)\s*-->")
FENCE = re.compile(r"^```python[ \t]*\n(?P<code>.*?)^```[ \t]*$", re.S | re.M)


def blocks() -> list:
    """``pytest.param(code, line, id=...)`` for every Python block, skipped ones marked."""
    out = []
    for page in PAGES:
        text = page.read_text()
        for m in FENCE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
            skip = SKIP.fullmatch(before.strip())
            marks = [pytest.mark.skip(reason=skip["why"])] if skip else []
            name = f"{page.relative_to(ROOT)}:{line}"
            out.append(pytest.param(m["code"], name, id=name, marks=marks))
    return out


def test_the_pages_have_examples():
    found = {p.split(":")[0] for p in (b.values[1] for b in blocks())}
    assert {"README.md", "docs/user_guide.md", "docs/io.md", "docs/halos.md"} <= found, found
    assert any(b.marks for b in blocks()), "the deadlock example of the user guide is marked and skipped"


@contextlib.contextmanager
def _shared_folder(comm):
    """An empty folder, the same on every rank, removed afterwards."""
    path = tempfile.mkdtemp(prefix="spmdarray-doc-") if comm.rank == 0 else None
    path = comm.bcast(path, root=0)
    old = os.getcwd()
    os.chdir(path)
    try:
        yield path
    finally:
        os.chdir(old)
    # Not on failure: the other ranks may be inside a collective (the test run then aborts).
    comm.Barrier()
    if comm.rank == 0:
        shutil.rmtree(path, ignore_errors=True)


@pytest.mark.mpi
@pytest.mark.parametrize(("code", "where"), blocks())
def test_example_runs(code, where, comm, capsys):
    settings = sp.config.as_dict()
    namespace = {"__name__": "__docs_example__"}
    try:
        with _shared_folder(comm):
            exec(compile(code, where, "exec"), namespace)  # noqa: S102 - the documentation's own code
            sp.sync()
    finally:
        sp.config.set(**settings)  # a block may change a setting for good (ghost_width=2)
    capsys.readouterr()
