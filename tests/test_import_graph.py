"""The layering of the package: no import cycle (counting imports inside functions), few imports
inside functions, each with its reason, and every layer contract of ``.importlinter`` kept."""

from __future__ import annotations

import os

import pytest
from import_graph import build, cycles, layers, upward

CONFIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".importlinter")
MAX_INNER = 20


@pytest.fixture(scope="module")
def graph():
    return build()


def test_no_import_cycle(graph):
    assert cycles(graph.edges) == []


def test_inner_imports_are_few_and_give_their_reason(graph):
    assert len(graph.inner) <= MAX_INNER, [f"{p}:{n}" for _, _, p, n, _ in graph.inner]
    for _, _, path, line, text in graph.inner:
        assert "#" in text and text.split("#", 1)[1].strip(), (
            f"{path}:{line} imports inside a function without a reason"
        )


@pytest.mark.skipif(not os.path.exists(CONFIG), reason="no .importlinter beside tests/")
@pytest.mark.parametrize("contract", ["layers", "core", "fusion", "engine"])
def test_layers_import_only_downward(graph, contract):
    container, rows = layers(CONFIG, contract)
    assert rows and all(rows)
    known = [(f"{container}.{m}" if container else m) for row in rows for m in row]
    assert all(any(f == k or f.startswith(k + ".") for f in graph.files) for k in known), known
    assert upward(graph.edges, container, rows) == []


def test_checks_catch_a_cycle_and_an_upward_import():
    edges = {"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": {"p.a"}}
    assert cycles(edges) == [["p.a", "p.b", "p.c"]]
    assert cycles({"p.a": {"p.b"}, "p.b": set()}) == []
    rows = [["high"], ["mid1", "mid2"], ["low"]]
    assert upward({"p.low.x": {"p.mid1"}, "p.high": {"p.low.y"}}, "p", rows) == [("p.low.x", "p.mid1")]
    # Siblings of one layer (mid1 | mid2) are independent; a module may import its own parts.
    assert upward({"p.mid1.x": {"p.mid2"}, "p.mid1": {"p.mid1.y"}}, "p", rows) == [("p.mid1.x", "p.mid2")]


def test_graph_sees_imports_inside_functions(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    import b  # reason\n")
    (tmp_path / "b.py").write_text("import a\n")
    g = build({"a": str(tmp_path / "a.py"), "b": str(tmp_path / "b.py")})
    assert g.edges == {"a": {"b"}, "b": {"a"}}
    assert [(m, t, n) for m, t, _, n, _ in g.inner] == [("a", "b", 2)]
    assert cycles(g.edges) == [["a", "b"]]
