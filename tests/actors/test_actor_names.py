"""Every actor name is defined once, in actors/names.py: no other source module spells one as a string literal.

The rule, checked by reading every ``.py`` of the source packages with :mod:`ast` (nothing is imported):

An *actor name* is a value of a string constant of actors/names.py (``"controller"``, ``"replica-manager"``,
``"edge:zk"``, ...); a name *prefix* is one of its ``*_PREFIX`` constants (``"channel-"``, ``"partition-"``).
Outside actors/names.py, a string literal equal to an actor name is an error where it is used as one:

- an argument of a call that addresses, registers or looks up actors or carries a destination: ``post``,
  ``inject``, ``spawn``, ``has_actor``, ``address``, ``register``, ``unregister``, ``deliver``, ``request``
  (BlockingClient's destination), and the messages that carry an actor name (``NetSend``, ``ZkRequest``,
  ``ChannelStart``, ``ActorInit``);
- an operand of a comparison (``sender == "controller"``, ``to in (...)``);
- an element of a tuple, list or set display (spawn tables, recipient lists);
- the value of a module- or class-level constant (a second name for an actor, as ``FRONT = "replica-manager"``
  was).

An f-string that starts with a name prefix (``f"channel-{broker_id}"``) is an error anywhere, and so is a
``startswith`` on one: use ``names.channel()``, ``names.shard()``, ``names.SHARD_PREFIX``.

Not actor names, so not checked: docstrings, log text, dict keys and subscripts (JSON fields such as describe's
``"controller"``). ALLOWED lists the few literals that equal a name but mean something
else, each with why. Tests are not scanned: they name the actors of the systems they build.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from actors import names

ROOT = Path(__file__).resolve().parent.parent.parent
NAMES_FILE = ROOT / "actors" / "names.py"
PACKAGES = ("actors", "core", "edges", "zk_bridge", "kactor", "bench", "spark", "messages", "protocol")

DESTINATION_CALLS = frozenset({
    "post", "inject", "spawn", "has_actor", "address", "register", "unregister", "deliver", "request",
    "NetSend", "ZkRequest", "ChannelStart", "ActorInit",
})

# (file relative to the repository, literal) -> why it is not an actor name
ALLOWED: dict[tuple[str, str], str] = {
    ("bench/topic_deletion.py", "controller"): "a row label of the benchmark's table (which broker was measured)",
}


def _names() -> tuple[frozenset[str], tuple[str, ...]]:
    values: set[str] = set()
    prefixes: list[str] = []
    for node in ast.parse(NAMES_FILE.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            target = node.targets[0]
            assert isinstance(target, ast.Name)
            (prefixes.append if target.id.endswith("_PREFIX") else values.add)(node.value.value)
    return frozenset(values), tuple(prefixes)


NAMES, PREFIXES = _names()


def _callee(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _literal(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def violations(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, literal) of every actor name used as one in ``tree`` (see the module docstring)."""
    for node in ast.walk(tree):
        candidates: list[ast.AST] = []
        if isinstance(node, ast.Call):
            callee = _callee(node)
            args = [*node.args, *(k.value for k in node.keywords)]
            if callee in DESTINATION_CALLS:
                candidates.extend(args)
            if callee == "startswith":
                for a in args:
                    if _literal(a) in PREFIXES:
                        yield node.lineno, str(_literal(a))
        elif isinstance(node, ast.Compare):
            candidates.extend([node.left, *node.comparators])
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            candidates.extend(node.elts)
        elif isinstance(node, (ast.Module, ast.ClassDef)):
            candidates.extend(s.value for s in node.body if isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value)
        elif isinstance(node, ast.JoinedStr) and node.values:
            head = _literal(node.values[0])
            if head is not None and head.startswith(PREFIXES):
                yield node.lineno, f"f{head!r}..."
        for c in candidates:
            value = _literal(c)
            if value in NAMES:
                yield c.lineno, str(value)


def _sources() -> Iterator[Path]:
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def test_names_are_distinct_and_the_scan_sees_them() -> None:
    assert {"controller", "replica-manager", "state-change-log", "edge:zk"} <= NAMES
    assert set(PREFIXES) == {"channel-", "partition-", "txn-marker-channel-", "edge:"}
    sample = ast.parse('FRONT = "replica-manager"\nself.post("net", x)\nif r["sender"] == "controller": pass\n'
                       'name = f"channel-{b}"\nfor n in ("metrics", "zk"): pass\nlog.info("controller")\n'
                       'd = {"controller": 1}\nedges["net"]\n')
    assert sorted(violations(sample)) == [(1, "replica-manager"), (2, "net"), (3, "controller"),
                                          (4, "f'channel-'..."), (5, "metrics"), (5, "zk")]


def test_the_names_are_what_traces_record() -> None:
    """A name is part of the trace format (sender / receiver of every record): recorded traces replay only if the
    names stay what they were."""
    assert {"zk", "timer", "net", "metrics", "state-change-log", "replica-manager", "controller",
                     "topic-deletion", "kafka-server", "config-manager", "group-coordinator",
                     "transaction-coordinator", "edge:zk", "edge:net", "edge:timer", "edge:process",
                     "edge:log-dirs", "edge:log-cleaner"} == NAMES
    assert (names.channel(3), names.shard(0), names.txn_marker_channel(2)) == ("channel-3", "partition-0",
                                                                              "txn-marker-channel-2")


def test_no_actor_name_literal_outside_actors_names() -> None:
    found = []
    for path in _sources():
        if path == NAMES_FILE:
            continue
        rel = path.relative_to(ROOT).as_posix()
        for line, literal in violations(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if (rel, literal) not in ALLOWED:
                found.append(f"{rel}:{line}: {literal}")
    assert not found, "actor names spelled outside actors/names.py (import them from there):\n" + "\n".join(found)


def test_allowed_literals_are_still_there() -> None:
    """ALLOWED only shrinks: an entry whose literal is gone is removed."""
    stale = [k for k in ALLOWED if f'"{k[1]}"' not in (ROOT / k[0]).read_text(encoding="utf-8")]
    assert not stale, stale
