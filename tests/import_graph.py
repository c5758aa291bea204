"""The import graph of the installed (or checked-out) spmdarray, counting imports inside functions.

Built from the source with :mod:`ast`, so that it sees every ``import``
statement wherever it stands: at module level, inside functions and inside
``if`` blocks.  ``spmdarray.comm`` and ``spmdarray.decomposition`` are found
where the import system finds them (``comm/`` and ``decomposition/`` in a
checkout, ``spmdarray/comm`` in the wheel).
"""

from __future__ import annotations

import ast
import configparser
import importlib
import os
from dataclasses import dataclass, field

ROOTS = ("spmdarray", "spmdarray.comm", "spmdarray.decomposition")


@dataclass
class Graph:
    """Modules (name -> file), edges (name -> set of names) and the imports inside functions."""

    files: dict = field(default_factory=dict)
    edges: dict = field(default_factory=dict)
    #: (importer, imported, file, line, source line) of each import inside a function.
    inner: list = field(default_factory=list)


def module_files() -> dict:
    """Every module of the package: dotted name -> source file."""
    out = {}
    for root in ROOTS:
        pkg = importlib.import_module(root)
        base = os.path.dirname(pkg.__file__)
        for d, dirs, files in os.walk(base):
            dirs[:] = [
                x for x in dirs if x != "__pycache__" and not (root == "spmdarray" and x in ("comm", "decomposition"))
            ]
            for f in files:
                if f.endswith(".py"):
                    parts = os.path.relpath(os.path.join(d, f), base)[:-3].split(os.sep)
                    if parts[-1] == "__init__":
                        parts = parts[:-1]
                    out[".".join([root, *parts])] = os.path.join(d, f)
    return out


def build(files: dict | None = None) -> Graph:
    """The graph of ``files`` (default: :func:`module_files`)."""
    g = Graph(files=files if files is not None else module_files())
    for name, path in g.files.items():
        g.edges[name] = set()
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        lines = text.splitlines()
        _visit(g, name, path, lines, ast.parse(text), path.endswith("__init__.py"), False)
    return g


def _resolve(g: Graph, name: str) -> str | None:
    while name and name not in g.files:
        name = name.rpartition(".")[0]
    return name or None


def _visit(g: Graph, mod: str, path: str, lines: list, node, is_pkg: bool, in_func: bool) -> None:
    for ch in ast.iter_child_nodes(node):
        f = in_func or isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        if isinstance(ch, (ast.Import, ast.ImportFrom)):
            for target in _targets(g, mod, is_pkg, ch):
                r = _resolve(g, target)
                if r and r != mod:
                    g.edges[mod].add(r)
                    if in_func:
                        g.inner.append((mod, r, path, ch.lineno, lines[ch.lineno - 1]))
        _visit(g, mod, path, lines, ch, is_pkg, f)


def _targets(g: Graph, mod: str, is_pkg: bool, node) -> list:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        pkg = mod if is_pkg else mod.rpartition(".")[0]
        for _ in range(node.level - 1):
            pkg = pkg.rpartition(".")[0]
        base = f"{pkg}.{base}" if base else pkg
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in g.files else base for a in node.names]


def cycles(edges: dict) -> list:
    """Strongly connected components with more than one module (or a module importing itself)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on: set = set()
    out: list = []
    counter = [0]

    def visit(v):
        work = [(v, iter(sorted(edges.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            u, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on:
                    low[u] = min(low[u], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[u])
                if low[u] == index[u]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == u:
                            break
                    if len(comp) > 1 or u in edges.get(u, ()):
                        out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def layers(config_path: str, contract: str = "layers") -> tuple[str | None, list]:
    """``(container, [[module, ...] per layer, top first])`` of a layers contract of ``.importlinter``."""
    cp = configparser.ConfigParser()
    cp.read(config_path)
    sec = cp[f"importlinter:contract:{contract}"]
    container = sec.get("containers", "").strip() or None
    rows = [r.strip() for r in sec["layers"].strip().splitlines() if r.strip()]
    return container, [[m.strip() for m in r.split("|")] for r in rows]


def upward(edges: dict, container: str | None, rows: list) -> list:
    """Imports that break the layers: ``(importer, imported)`` pairs.

    An import goes wrong when it reaches a higher layer, or another module of the
    same layer (``a | b``: siblings are independent, as import-linter has them).
    """
    prefix = f"{container}." if container else ""
    level, own = {}, {}
    for i, row in enumerate(rows):
        for m in row:
            level[prefix + m] = i
            own[prefix + m] = prefix + m

    def of(name):
        while name:
            if name in level:
                return level[name], own[name]
            name = name.rpartition(".")[0]
        return None, None

    bad = []
    for a, targets in edges.items():
        la, ma = of(a)
        for b in targets:
            lb, mb = of(b)
            if la is None or lb is None:
                continue
            if lb < la or (lb == la and ma != mb):
                bad.append((a, b))
    return sorted(bad)
