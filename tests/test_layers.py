"""The source packages import downwards only, and no module imports itself back through others.

Every ``.py`` under the source packages is parsed with :mod:`ast` (nothing is imported, so a module that cannot be
imported on this machine is still checked); every ``import``/``from ... import`` counts, also those inside functions
and under ``TYPE_CHECKING``. Imports made from strings (``importlib.import_module``) are not seen.

Layers, lowest first (issue #21); a module may import from its own layer or a lower one:

1. vocabulary: ``messages``, ``protocol`` (with ZooKeeper's vocabulary, Kafka's ZkData: ``protocol.zk``)
2. ``core``
3. ``actors`` (with the runtime they run on: ``actors.runtime``, ``actors.clock``)
4. edges: ``edges`` and ``zk_bridge``
5. shell: ``kactor``, ``bench``, ``spark``, ``scripts``

Each top-level folder is one layer of its own, in the order tests/test_folders.py's FOLDERS gives within these five,
and no circle runs among the folders (tests/test_folders.py).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# every top-level folder holding Python source is checked (a new one must be given a layer below)
NOT_SOURCE = {"tests", "docs", "build", "dist", "examples"}  # examples/: projects that use kactor, not kactor
PACKAGES = tuple(sorted(d.name for d in ROOT.iterdir() if d.is_dir() and not d.name.startswith(".")
                        and d.name not in NOT_SOURCE and any(d.rglob("*.py"))))

# (layer, module prefix); the longest matching prefix wins
LAYER_RULES: tuple[tuple[int, str], ...] = (
    (1, "messages"),
    (1, "protocol"),
    (2, "core"),
    (3, "actors"),
    (4, "edges"),
    (4, "zk_bridge"),
    (4, "sim"),  # the simulator stands in for the edges (issue #28)
    (5, "kactor"),
    (5, "bench"),
    (5, "spark"),
    (5, "scripts"),
)
# packages whose __init__ sits lower than their modules (none today)
EXACT_LAYERS: dict[str, int] = {}
LAYER_NAMES = {1: "vocabulary", 2: "core", 3: "actors", 4: "edges", 5: "shell"}

# Today's imports that run upwards: (importer, imported) -> why, and the engineer who removes it.
# The list only shrinks: test_known_violations_still_exist fails when an entry no longer happens.
KNOWN_VIOLATIONS: dict[tuple[str, str], str] = {
}

# Today's import cycles, each the sorted modules of one strongly connected component -> why, who removes it
KNOWN_CYCLES: dict[tuple[str, ...], str] = {}


def layer_of(module: str) -> int | None:
    if module in EXACT_LAYERS:
        return EXACT_LAYERS[module]
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for layer, prefix in LAYER_RULES:
        if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), layer)
    return None if best is None else best[1]


def source_modules() -> dict[str, Path]:
    """Every module of the source packages by its dotted name (a package by its own name)."""
    modules: dict[str, Path] = {}
    for package in PACKAGES:
        base = ROOT / package
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def imports_of(module: str, path: Path, known: set[str]) -> Iterator[str]:
    """The source modules ``module`` imports, wherever the import statement stands in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if _is_package(path) else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield from _resolve(alias.name, known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".") if package else []
                if node.level > 1:
                    base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                # `from pkg import name`: the submodule pkg.name when there is one, else pkg itself
                candidate = f"{base}.{alias.name}"
                if candidate in known:
                    yield candidate
                else:
                    yield from _resolve(base, known)


def _resolve(name: str, known: set[str]) -> Iterator[str]:
    """The deepest source module named by ``name`` (``import a.b.c`` imports a.b.c; a.b if c is not a module)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in known:
            yield candidate
            return
        parts.pop()


def import_graph() -> dict[str, set[str]]:
    """Module name -> the names of the source modules it imports (itself excluded)."""
    modules = source_modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        graph[module] = {imported for imported in imports_of(module, path, known) if imported != module}
    return graph


def upward_imports(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    found = set()
    for importer, targets in graph.items():
        for imported in targets:
            if layer_of(imported) > layer_of(importer):  # type: ignore[operator]
                found.add((importer, imported))
    return found


def cycles(graph: dict[str, set[str]]) -> set[tuple[str, ...]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: set[tuple[str, ...]] = set()
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.add(tuple(sorted(component)))
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def _describe(pair: tuple[str, str]) -> str:
    importer, imported = pair
    return (f"{importer} ({LAYER_NAMES[layer_of(importer)]}) imports {imported} "  # type: ignore[index]
            f"({LAYER_NAMES[layer_of(imported)]})")  # type: ignore[index]


def test_every_module_has_a_layer(graph: dict[str, set[str]]) -> None:
    assert {"messages", "core", "actors", "edges", "kactor"} <= set(PACKAGES)  # the scan found the tree
    assert sorted(m for m in graph if layer_of(m) is None) == []


def test_no_import_runs_upwards(graph: dict[str, set[str]]) -> None:
    new = sorted(upward_imports(graph) - set(KNOWN_VIOLATIONS))
    assert not new, "imports from a higher layer into a lower one:\n" + "\n".join(map(_describe, new))


def test_known_violations_still_exist(graph: dict[str, set[str]]) -> None:
    gone = sorted(set(KNOWN_VIOLATIONS) - upward_imports(graph))
    assert not gone, "no longer happen, delete from KNOWN_VIOLATIONS:\n" + "\n".join(f"{a} -> {b}" for a, b in gone)


def test_no_import_cycle(graph: dict[str, set[str]]) -> None:
    new = sorted(cycles(graph) - set(KNOWN_CYCLES))
    assert not new, "import cycles (modules that import each other, directly or through others):\n" + "\n".join(
        " <-> ".join(c) for c in new)


def test_known_cycles_still_exist(graph: dict[str, set[str]]) -> None:
    gone = sorted(set(KNOWN_CYCLES) - cycles(graph))
    assert not gone, "no longer cycles, delete from KNOWN_CYCLES:\n" + "\n".join(" <-> ".join(c) for c in gone)


# --- the checker itself, on made-up import graphs -------------------------------------------------------------------

def test_layer_of_takes_the_longest_prefix() -> None:
    assert layer_of("protocol.zk.paths") == 1
    assert layer_of("zk_bridge") == 4
    assert layer_of("zk_bridge.executor") == 4
    assert layer_of("actors.runtime") == 3
    assert layer_of("bench.cli") == 5
    assert layer_of("coreutils") is None


def test_cycles_finds_components_not_self_loops() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == {("a", "b", "c")}


def test_imports_inside_functions_and_type_checking_are_read(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg.low import Thing\n"
        "def f():\n    import pkg.high.deep\n    from . import sibling\n    from .. import top\n",
        encoding="utf-8")
    known = {"pkg", "pkg.low", "pkg.high", "pkg.sub", "pkg.sub.sibling", "pkg.top"}
    assert sorted(imports_of("pkg.sub.mod", path, known)) == ["pkg.high", "pkg.low", "pkg.sub.sibling", "pkg.top"]
