"""One ZooKeeper vocabulary (issue #21): Kafka's znode paths are spelled only in protocol/zk/paths.py and their JSON
only in protocol/zk/znodes.py (Kafka's ZkData); everything else names a path through `paths` and reads or writes a
payload through `znodes` (or the procedures of core/zk_client.py built on them).

The source is read with `ast`, so what is checked is code: docstrings and comments may name znodes (they document
them), and tests are not scanned — a test spells the exact path and bytes it expects, which is the point of a test,
not a second definition. The checks:

1. no string constant (or leading f-string fragment) in code starts with a znode path of Kafka's ZooKeeper layout,
   or holds one as a JSON string (a hand-written trace line);
2. no znode JSON outside znodes.py: no dict literal with a ``version`` key and a znode field, no subscript or
   ``.get`` of a field only znodes have, and no json.loads (or json.dumps of an object) in a function that also
   names a znode path;
3. a planted example of each is caught (so the scan cannot pass by reading nothing);
4. no code but core/zk_client.py builds a ZkBatch: every ZooKeeper procedure is a KafkaZkClient one.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# The code scanned: every top-level folder holding Python source (a new one is scanned without being listed), but
# tests/ and docs/, which are not code of kactor.
NOT_SOURCE = {"tests", "docs", "build", "dist"}
PACKAGES = tuple(sorted(d.name for d in REPO.iterdir() if d.is_dir() and not d.name.startswith(".")
                        and d.name not in NOT_SOURCE and any(d.rglob("*.py"))))
HOME = {"protocol/zk/paths.py", "protocol/zk/znodes.py"}  # the one definition of each path and payload

# The top-level znodes of Kafka 2.6's layout (ZkData), each with the paths below it.
ZNODE_ROOTS = ("/brokers", "/controller", "/controller_epoch", "/admin", "/config", "/isr_change_notification",
               "/log_dir_event_notification", "/cluster", "/consumers", "/latest_producer_id_block")
# Fields that only znode payloads have (message and trace fields are spelled differently or are attrs fields).
ZNODE_ONLY_FIELDS = {"brokerid", "adding_replicas", "removing_replicas", "entity_path", "entity_type",
                     "entity_name", "listener_security_protocol_map", "jmx_port"}
ZNODE_FIELDS = ZNODE_ONLY_FIELDS | {"leader", "leader_epoch", "controller_epoch", "partitions", "replicas", "topic",
                                    "partition", "broker", "event", "config", "endpoints", "host", "port",
                                    "timestamp", "rack", "features", "id"}
# ...except in Kafka's wire bodies, where LeaderAndIsr v3+ spells two of them the same (AddingReplicas,
# RemovingReplicas) and Describe/AlterClientQuotas two more (EntityType, EntityName): core/api's converters read
# those from protocol's decoded dicts, not from a znode.
# The Kafka-protocol tools read the same fields from the answers they get (ListPartitionReassignments,
# DescribeClientQuotas). The trace's incident detector reads a traced LeaderAndIsr's partition states (message fields).
WIRE_BODY_FIELDS = {"kactor/trace/incidents/detect.py": {"adding_replicas"},
                    "core/api/": {"adding_replicas", "removing_replicas", "entity_type", "entity_name"},
                    "kactor/cli/reassign_kafka.py": {"adding_replicas", "removing_replicas"},
                    "kactor/cli/configs_kafka.py": {"entity_type", "entity_name"}}
JSON_CALLS = {"loads", "dumps"}
# Functions whose JSON looks like a znode's but is not one, and why.
NOT_ZNODES = {
    ("kactor/admin/reassign.py", "format_as_reassignment_json"):
        "the --reassignment-json-file of kafka-reassign-partitions (with log_dirs), a file, not a znode",
}


def _is_znode_path(text: str) -> bool:
    return any(text == root or text.startswith(root + "/") for root in ZNODE_ROOTS)


def _embeds_znode_path(text: str) -> bool:
    """A JSON text with a znode path in it (``'{"path":"/brokers/ids"}'``)."""
    return any(f'"{root}"' in text or f'"{root}/' in text for root in ZNODE_ROOTS)


def _docstrings(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _const(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _names_znode_path(node: ast.AST) -> bool:
    """The subtree names a znode: a path literal, or an attribute of protocol.zk.paths (``paths.TopicZNode...``)."""
    for n in ast.walk(node):
        text = _const(n)
        if text is not None and _is_znode_path(text):
            return True
        if (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "paths"
                and n.attr[:1].isupper()):  # paths.TopicZNode, paths.ControllerZNode, ...
            return True
    return False


def scan(source: str, name: str) -> list[str]:
    """The violations of one module's source."""
    tree = ast.parse(source, name)
    skip = _docstrings(tree)  # and the fragments of f-strings, judged by their head
    skip.update(id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values)
    for n in ast.walk(tree):
        if isinstance(n, ast.FunctionDef) and (name, n.name) in NOT_ZNODES:
            skip.update(id(d) for d in ast.walk(n) if isinstance(d, ast.Dict))
    found: dict[str, None] = {}  # in order, once each (nested functions see the same call)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            head = _const(node.values[0]) if node.values else None
            if head is not None and _is_znode_path(head):
                found.setdefault(f"{name}:{node.lineno}: znode path spelled out: f{head!r}...")
            continue
        text = _const(node)
        if text is not None and id(node) not in skip and _is_znode_path(text):
            found.setdefault(f"{name}:{node.lineno}: znode path spelled out: {text!r}")
        elif text is not None and id(node) not in skip and _embeds_znode_path(text):
            found.setdefault(f"{name}:{node.lineno}: znode path spelled out in JSON: {text[:60]!r}")
        if isinstance(node, ast.Dict) and id(node) not in skip:
            keys = {k for k in map(_const, [k for k in node.keys if k is not None]) if k is not None}
            if "version" in keys and keys & ZNODE_FIELDS:
                found.setdefault(f"{name}:{node.lineno}: a znode payload built by hand: keys {sorted(keys)}")
        wire = next((f for prefix, f in WIRE_BODY_FIELDS.items() if name.startswith(prefix)), set())
        if isinstance(node, ast.Subscript) and _const(node.slice) in ZNODE_ONLY_FIELDS - wire:
            found.setdefault(f"{name}:{node.lineno}: a znode field read by hand: [{_const(node.slice)!r}]")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and node.args and _const(node.args[0]) in ZNODE_ONLY_FIELDS - wire):
            found.setdefault(f"{name}:{node.lineno}: a znode field read by hand: .get({_const(node.args[0])!r})")
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _names_znode_path(node):
            for call in ast.walk(node):
                # loads: znode JSON read by hand; dumps: only of an object (dumps of a string quotes it for a
                # JSON text, as the trace generator does)
                if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                        and call.func.attr in JSON_CALLS and isinstance(call.func.value, ast.Name)
                        and call.func.value.id in ("json", "orjson")
                        and (call.func.attr == "loads" or (call.args and isinstance(call.args[0], ast.Dict)))):
                    found.setdefault(f"{name}:{call.lineno}: json.{call.func.attr} next to a znode path in "
                                 f"{node.name}(): decode or encode it with protocol.zk.znodes")
    return list(found)


def _source_files() -> list[Path]:
    files: list[Path] = []
    for pkg in PACKAGES:
        files.extend(sorted((REPO / pkg).rglob("*.py")))
    return [f for f in files if f.relative_to(REPO).as_posix() not in HOME]


def test_znode_paths_and_payloads_are_defined_once() -> None:
    files = _source_files()
    assert {"core", "actors", "kactor", "zk_bridge"} <= set(PACKAGES) and len(files) > 100, PACKAGES
    found = [v for f in files for v in scan(f.read_text(encoding="utf-8"), f.relative_to(REPO).as_posix())]
    assert found == [], "use protocol.zk.paths / protocol.zk.znodes / core.zk_client:\n" + "\n".join(found)


def test_the_scan_catches_each_kind_of_duplicate() -> None:
    planted = '''
"""/brokers/ids in a docstring is documentation."""
import json

def controller_id(zk):
    data, _ = zk.get(paths.ControllerZNode)
    return json.loads(data)

def state_path(tp):
    return f"/brokers/topics/{tp.topic}/partitions/{tp.partition}/state"

def encode(leader, isr):
    return {"version": 1, "leader": leader, "isr": isr}

def broker_of(js):
    return js["brokerid"], js.get("entity_path")

CONTROLLER = "/controller"
WATCH = '{"@":"ZkWatchEvent","path":"/brokers/ids","kind":"CHILD"}'
'''
    kinds = [v.split(": ", 1)[1].split(":")[0] for v in scan(planted, "planted.py")]
    assert sorted(kinds) == sorted([
        "json.loads next to a znode path in controller_id()", "znode path spelled out",
        "a znode payload built by hand", "a znode field read by hand", "a znode field read by hand",
        "znode path spelled out", "znode path spelled out in JSON"]), kinds



# Where a ZkBatch effect may be built: KafkaZkClient's procedures, and the benchmark of the executor edge itself.
ZK_BATCH_BUILDERS = {
    "core/zk_client.py": "every KafkaZkClient procedure",
    "bench/zk_bridge.py": "measures the executor edge with raw batches",
}


def test_every_zookeeper_procedure_is_a_kafka_zk_client_one() -> None:
    """One module holds the ZooKeeper procedures: no code elsewhere builds a ZkBatch (it calls core.zk_client)."""
    found = []
    for f in _source_files():
        name = f.relative_to(REPO).as_posix()
        if name in ZK_BATCH_BUILDERS:
            continue
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"), name)):
            func = node.func if isinstance(node, ast.Call) else None
            if (isinstance(func, ast.Name) and func.id == "ZkBatch") or (
                    isinstance(func, ast.Attribute) and func.attr == "ZkBatch"):
                found.append(f"{name}:{node.lineno}")
    assert found == [], "build ZooKeeper requests in core/zk_client.py (KafkaZkClient):\n" + "\n".join(found)
