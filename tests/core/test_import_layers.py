"""The folders of src/citebound form layers: no folder imports one that imports it back.

Every import counts, wherever it sits: at module top, inside a function, or under
`TYPE_CHECKING`. A cycle through a function-level import still ties the two folders together
(neither can be read, tested or moved without the other); a lazy import only hides it.
Modules directly under citebound/ (config.py, errors.py, ...) are not folders and are left out.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from pathlib import Path

import citebound

ROOT = Path(citebound.__file__).resolve().parent
FOLDERS = frozenset(p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file())

# (importing folder, imported folder) -> "file:line" of each import that makes the edge
Edges = dict[tuple[str, str], list[str]]


def _package_of(path: Path) -> list[str]:
    """The dotted package `path` sits in, as parts ("citebound", "index")."""
    rel = path.relative_to(ROOT.parent).with_suffix("").parts
    return list(rel[:-1])


def _imported(path: Path, tree: ast.AST) -> Iterator[tuple[str, str, ast.stmt]]:
    """(module, imported name or "", node) for every import in `tree`, relative ones resolved."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, "", node
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = _package_of(path)
                base = package[: len(package) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                # `from citebound import text`: the folder is the name, not the module.
                full = module if node.module else f"{module}.{alias.name}"
                yield full, alias.name, node


def _folder(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] == "citebound" and len(parts) > 1 and parts[1] in FOLDERS:
        return parts[1]
    return None


def _modules() -> Iterator[tuple[Path, str, ast.AST]]:
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if len(rel.parts) > 1 and rel.parts[0] in FOLDERS:
            yield path, rel.parts[0], ast.parse(path.read_text("utf-8"), str(path))


def folder_edges() -> Edges:
    edges: Edges = {}
    for path, folder, tree in _modules():
        for module, _, node in _imported(path, tree):
            target = _folder(module)
            if target is not None and target != folder:
                where = f"{path.relative_to(ROOT.parent)}:{node.lineno}"
                edges.setdefault((folder, target), []).append(where)
    return edges


def find_cycle(edges: Edges) -> list[str] | None:
    """One cycle of the folder graph as its folders in order (first repeated last), or None."""
    graph: dict[str, list[str]] = {}
    for a, b in sorted(edges):
        graph.setdefault(a, []).append(b)
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)) is not None:
            return found
    return None


def describe(cycle: list[str], edges: Edges) -> str:
    lines = [" -> ".join(cycle)]
    for a, b in itertools.pairwise(cycle):
        lines.append(f"  {a} -> {b}: " + ", ".join(edges[(a, b)]))
    return "\n".join(lines)


def test_the_cycle_finder_finds_a_cycle_and_only_one() -> None:
    assert find_cycle({("a", "b"): ["x:1"], ("b", "c"): ["y:2"]}) is None
    edges = {("a", "b"): ["x:1"], ("b", "c"): ["y:2"], ("c", "a"): ["z:3"], ("c", "d"): ["w:4"]}
    cycle = find_cycle(edges)
    assert cycle == ["a", "b", "c", "a"]
    assert describe(cycle, edges).splitlines()[3] == "  c -> a: z:3"


def test_relative_imports_resolve_to_their_folder() -> None:
    path = ROOT / "index" / "example.py"
    tree = ast.parse("from ..store import base\nfrom . import build\nfrom .. import text\n")
    got = [(_folder(m), name) for m, name, _ in _imported(path, tree)]
    assert got == [("store", "base"), ("index", "build"), ("text", "text")]


def test_no_folder_import_cycle() -> None:
    edges = folder_edges()
    cycle = find_cycle(edges)
    assert cycle is None, "folder import cycle:\n" + describe(cycle, edges)


def test_no_cross_folder_private_import() -> None:
    # A name with a leading underscore is its module's own: another folder that needs it needs
    # a public name for it.
    found = []
    for path, folder, tree in _modules():
        for module, name, node in _imported(path, tree):
            target = _folder(module)
            private = name.startswith("_") and name != "__version__"
            if target is not None and target != folder and private:
                found.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}: {module}.{name}")
    assert not found, "\n".join(found)
