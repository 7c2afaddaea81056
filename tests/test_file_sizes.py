"""No source file of ``core/`` is over 1,000 lines unless it is one Kafka class (issue #42).

Files are Kafka's classes: a Kafka engineer looking for ``DelayedProduce`` or ``LogManager`` finds a file of that
name, so a file that grows past 1,000 lines is several of Kafka's files and is split along them. The exceptions are
the files that are one Kafka class each, listed with that class; a listed file may hold small helpers (values, the
class's companion object) but no second class of any size, so a listed file cannot grow a second Kafka class either.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "core"
MAX_LINES = 1000
# a listed file's other top-level classes stay below this: values and small helpers, not a second Kafka class
MAX_OTHER_CLASS_LINES = 100

# file (relative to the repository) -> (the class defined in it, the Kafka class it mirrors)
ONE_KAFKA_CLASS: dict[str, tuple[str, str]] = {
    "core/broker/log.py": ("Log", "kafka.log.Log"),
    "core/broker/replica_manager.py": ("ReplicaManager", "kafka.server.ReplicaManager"),
    "core/controller/kafka_controller.py": ("KafkaController", "kafka.controller.KafkaController"),
}


def _line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _top_level_classes(path: Path) -> dict[str, int]:
    """Each top-level class of ``path`` with its length in lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return {node.name: (node.end_lineno or node.lineno) - node.lineno + 1
            for node in tree.body if isinstance(node, ast.ClassDef)}


def test_no_core_file_is_over_a_thousand_lines_unless_it_is_one_kafka_class() -> None:
    too_long = sorted(f"{p.relative_to(ROOT).as_posix()} ({n} lines)"
                      for p in CORE.rglob("*.py")
                      if (n := _line_count(p)) > MAX_LINES and p.relative_to(ROOT).as_posix() not in ONE_KAFKA_CLASS)
    assert not too_long, (f"over {MAX_LINES} lines and not one Kafka class: split them along Kafka's files, "
                          f"{too_long}")


@pytest.mark.parametrize("name", sorted(ONE_KAFKA_CLASS))
def test_a_listed_file_is_its_one_kafka_class(name: str) -> None:
    path = ROOT / name
    cls, kafka_class = ONE_KAFKA_CLASS[name]
    classes = _top_level_classes(path)
    assert cls in classes, f"{name} is listed as {kafka_class} but defines no class {cls}"
    others = {c: n for c, n in classes.items() if c != cls and n >= MAX_OTHER_CLASS_LINES}
    assert not others, f"{name} is listed as one Kafka class ({kafka_class}) but also holds {others}"
