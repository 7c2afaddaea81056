"""No source file is over 1,000 lines unless it is one Kafka class (issue #42).

Files are Kafka's classes: a Kafka engineer looking for ``DelayedProduce`` or ``LogManager`` finds a file of that
name, so a file that grows past 1,000 lines is several of Kafka's files (or, outside ``core/``, several things of
kactor's own) and is split along them. The exceptions are the files that are one Kafka class each, listed with that
class; a listed file may hold small helpers (values, the class's companion object) but no second class of any size,
so a listed file cannot grow a second Kafka class either.

Every top-level folder of the repository holding Python is measured, except the tests' own; a new folder is measured
as soon as it exists (`test_every_folder_with_python_is_measured`). ``scripts/`` is measured whole: its shell scripts
too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# the source folders, every file of which is measured: their Python, and in scripts/ every script
SOURCE_FOLDERS = ("actors", "bench", "core", "edges", "examples", "kactor", "messages", "protocol", "scripts", "sim",
                  "spark", "zk_bridge")
# top-level folders that hold Python but are not source: the tests themselves
NOT_SOURCE = frozenset({"tests"})
MAX_LINES = 1000
# a listed file's other top-level classes stay below this: values and small helpers, not a second Kafka class
MAX_OTHER_CLASS_LINES = 100

# file (relative to the repository) -> (the class defined in it, the Kafka class it mirrors)
ONE_KAFKA_CLASS: dict[str, tuple[str, str]] = {
    "core/broker/log.py": ("Log", "kafka.log.Log"),
    "core/broker/replica_manager.py": ("ReplicaManager", "kafka.server.ReplicaManager"),
    "core/controller/kafka_controller.py": ("KafkaController", "kafka.controller.KafkaController"),
}


def source_files() -> list[Path]:
    """Every measured file: the Python of the source folders, and every file of ``scripts/``."""
    files: list[Path] = []
    for folder in SOURCE_FOLDERS:
        base = ROOT / folder  # (a folder not there is nothing to measure: examples/ is new)
        pattern = "*" if folder == "scripts" else "*.py"
        files += (p for p in base.rglob(pattern) if p.is_file() and "__pycache__" not in p.parts)
    return sorted(files)


def _line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8", errors="replace").splitlines())


def _top_level_classes(path: Path) -> dict[str, int]:
    """Each top-level class of ``path`` with its length in lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return {node.name: (node.end_lineno or node.lineno) - node.lineno + 1
            for node in tree.body if isinstance(node, ast.ClassDef)}


def test_every_folder_with_python_is_measured() -> None:
    folders = {d.name for d in ROOT.iterdir()
               if d.is_dir() and not d.name.startswith(".") and not d.name.endswith(".egg-info")
               and next(d.rglob("*.py"), None) is not None}
    unmeasured = sorted(folders - set(SOURCE_FOLDERS) - NOT_SOURCE)
    assert not unmeasured, f"top-level folders holding Python that the size check does not measure: {unmeasured}"


def test_no_source_file_is_over_a_thousand_lines_unless_it_is_one_kafka_class() -> None:
    files = source_files()
    assert any(p.relative_to(ROOT).as_posix() == "core/broker/replica_manager.py" for p in files)  # the scan works
    too_long = sorted(f"{p.relative_to(ROOT).as_posix()} ({n} lines)"
                      for p in files
                      if (n := _line_count(p)) > MAX_LINES and p.relative_to(ROOT).as_posix() not in ONE_KAFKA_CLASS)
    assert not too_long, (f"over {MAX_LINES} lines and not one Kafka class: split them along Kafka's files (or along "
                          f"what they hold), {too_long}")


@pytest.mark.parametrize("name", sorted(ONE_KAFKA_CLASS))
def test_a_listed_file_is_its_one_kafka_class(name: str) -> None:
    path = ROOT / name
    cls, kafka_class = ONE_KAFKA_CLASS[name]
    classes = _top_level_classes(path)
    assert cls in classes, f"{name} is listed as {kafka_class} but defines no class {cls}"
    others = {c: n for c, n in classes.items() if c != cls and n >= MAX_OTHER_CLASS_LINES}
    assert not others, f"{name} is listed as one Kafka class ({kafka_class}) but also holds {others}"
