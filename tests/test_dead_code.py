"""No dead code: every function, method, property, class and import of the source folders is used somewhere (in the
source or by a test), as vulture finds them (issue #42: the dead code goes, and new dead code fails the suite).

Names used only from outside Python's sight are allowed below, each with why; a name vulture flags that is really
dead is deleted, not allowed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_folders import FOLDERS
from tests.test_layers import ROOT

vulture = pytest.importorskip("vulture")

CHECKED = ("function", "method", "property", "class", "import")
# name patterns used by name, not by a call vulture sees
ALLOWED_PATTERNS: dict[str, str] = {
    r"on_[A-Za-z]+": "actor handlers, dispatched by the message's type name (actors/base.py)",
    r"receiveMessage": "thespian's Actor interface",
    r"pytest_[a-z_]+": "pytest hooks (kactor/testing/plugin.py, the conftests)",
    r"serve_[a-z_]+": "AdminManager's API methods, named by the admin API units (core/api/admin.py, AdminService)",
}
# (file, name) -> why
ALLOWED: dict[tuple[str, str], str] = {
    ("kactor/trace/inline_system.py", "wakeupAfter"): "thespian's ActorSystem interface, which the inline system is",
    ("kactor/testing/__init__.py", "__getattr__"): "the module's lazy attributes (PEP 562)",
    ("kactor/testing/cluster.py", "client_properties_file"): "the pytest plugin's API, for projects that use kactor",
    ("kactor/testing/cluster.py", "restart_broker"): "the pytest plugin's API, for projects that use kactor",
    ("kactor/testing/plugin.py", "kafka_client_config"): "a fixture of the pytest plugin, for projects that use kactor",
    ("kactor/testing/plugin.py", "kafka_topic"): "a fixture of the pytest plugin, for projects that use kactor",
    **{("protocol/primitives.py", name): "called from the codecs protocol/codegen.py generates"
       for name in ("read_compact_string", "read_compact_bytes", "read_uuid", "null_error", "write_compact_string")},
    ("core/api/kactor_private.py", "is_private"): "in the API registry's rework (issue #42 item 1), which uses or "
                                                  "deletes it",
}


def dead_names() -> dict[tuple[str, str], str]:
    """(file, name) -> what vulture says, for the source folders' unused names (the tests count as users)."""
    v = vulture.Vulture()
    v.scavenge([str(ROOT / folder) for folder in FOLDERS] + [str(ROOT / "tests")])
    found = {}
    for item in v.get_unused_code(min_confidence=60):
        path = Path(item.filename).resolve().relative_to(ROOT).as_posix()
        if item.typ not in CHECKED or path.split("/", 1)[0] not in FOLDERS:
            continue
        if any(re.fullmatch(p, item.name) for p in ALLOWED_PATTERNS):
            continue
        found[(path, item.name)] = f"{path}:{item.first_lineno}: unused {item.typ} {item.name!r}"
    return found


@pytest.fixture(scope="module")
def dead() -> dict[tuple[str, str], str]:
    return dead_names()


def test_no_dead_names(dead: dict[tuple[str, str], str]) -> None:
    new = sorted(v for k, v in dead.items() if k not in ALLOWED)
    assert not new, "names defined and never used (delete them, or allow one used out of vulture's sight):\n" + \
        "\n".join(new)


def test_every_allowed_name_is_still_flagged(dead: dict[tuple[str, str], str]) -> None:
    gone = sorted(f"{f}: {n}" for f, n in ALLOWED if (f, n) not in dead)
    assert not gone, "no longer unused (or gone): delete from ALLOWED:\n" + "\n".join(gone)
