"""The top-level folders are the layers (issue #42): no circle among them, and each imports only the folders below
it. (No source file over 1,000 lines unless it is one Kafka class: tests/test_file_sizes.py.)

The import graph is tests/test_layers.py's (every ``.py`` of the source folders parsed with :mod:`ast`, every import
counted, also those inside functions and under ``TYPE_CHECKING``), folded onto the top-level folders. Imports made
from strings (``importlib.import_module``: kactor's command table naming ``bench.cli``) are not seen, which is how the
CLI reaches the shell folders above it.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from tests.test_layers import EXACT_LAYERS, LAYER_RULES, PACKAGES, cycles, import_graph, layer_of

# The folders, lowest first: each may import only the folders before it (vocabulary, the functional core, the
# actors, the edges and the ZooKeeper edge over them, the simulator standing in for the edges, the trace analysis,
# the CLI and broker process, and the tools over the CLI).
FOLDERS: tuple[str, ...] = (
    "messages", "protocol", "core", "actors", "edges", "zk_bridge", "sim", "spark", "kactor", "bench", "scripts")


def folder_of(module: str) -> str:
    return module.split(".", 1)[0]


def folder_graph(graph: dict[str, set[str]]) -> dict[tuple[str, str], list[str]]:
    """(importing folder, imported folder) -> the module imports behind that edge (``a.x -> b.y``), sorted."""
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for importer, targets in graph.items():
        for imported in targets:
            pair = (folder_of(importer), folder_of(imported))
            if pair[0] != pair[1]:
                edges[pair].append(f"{importer} -> {imported}")
    return {pair: sorted(imports) for pair, imports in edges.items()}


def folder_cycles(edges: dict[tuple[str, str], list[str]]) -> set[tuple[str, ...]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
        graph.setdefault(b, set())
    return cycles(graph)


@pytest.fixture(scope="module")
def edges() -> dict[tuple[str, str], list[str]]:
    return folder_graph(import_graph())


def _examples(edges: dict[tuple[str, str], list[str]], a: str, b: str) -> str:
    imports = edges[(a, b)]
    return f"  {a} -> {b}: {', '.join(imports[:3])}" + (f" (+{len(imports) - 3})" if len(imports) > 3 else "")


def test_every_source_folder_is_a_layer() -> None:
    assert sorted(FOLDERS) == sorted(PACKAGES), "a new top-level folder needs its place in FOLDERS"


def test_no_circle_among_the_folders(edges: dict[tuple[str, str], list[str]]) -> None:
    found = sorted(folder_cycles(edges))
    detail = [_examples(edges, a, b) for c in found for a in c for b in c if (a, b) in edges]
    assert not found, "folders that import each other: " + "; ".join(" <-> ".join(c) for c in found) + "\n" + \
        "\n".join(detail)


def test_each_folder_imports_only_the_folders_below_it(edges: dict[tuple[str, str], list[str]]) -> None:
    rank = {folder: i for i, folder in enumerate(FOLDERS)}
    upward = sorted((a, b) for a, b in edges if rank[b] > rank[a])
    assert not upward, "imports of a folder above the importer (FOLDERS, lowest first):\n" + "\n".join(
        _examples(edges, a, b) for a, b in upward)


def test_each_folder_is_one_layer_of_test_layers() -> None:
    """tests/test_layers.py's layers are whole folders, in FOLDERS' order."""
    assert EXACT_LAYERS == {}
    assert sorted(prefix for prefix in (p for _layer, p in LAYER_RULES) if "." in prefix) == []
    layers = [layer_of(folder) for folder in FOLDERS]
    assert layers == sorted(layers), list(zip(FOLDERS, layers, strict=True))


# --- the checker itself, on a made-up import graph ------------------------------------------------------------------

def test_folder_graph_folds_modules_onto_folders() -> None:
    graph = {"a.x": {"b.y", "a.z"}, "a.z": set(), "b.y": {"c"}, "c": {"a.x"}, "b": set()}
    edges = folder_graph(graph)
    assert edges == {("a", "b"): ["a.x -> b.y"], ("b", "c"): ["b.y -> c"], ("c", "a"): ["c -> a.x"]}
    assert folder_cycles(edges) == {("a", "b", "c")}
    assert folder_cycles({("a", "b"): ["a.x -> b.y"]}) == set()
