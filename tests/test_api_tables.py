"""Tables keyed by API key or request type = 1 (issue #42): the serving code has one such table, the registry's
(core/api/registry.py ``_UNITS``); every other fact about an API lives in its unit (its core/api module).

Every ``.py`` of the serving folders is parsed with :mod:`ast` (nothing imported). A "table keyed by API key or request
type" is a dict assigned to a name or attribute (module, class or ``self``) whose annotation maps ints or types to an
API's unit or part of one (``dict[int, ApiSpec]``, ``dict[type, ShardedRequest]``, ``dict[type, Callable[...,
Authorized]]``...) or is keyed by ApiKeys; or whose keys, in a literal or comprehension, are api keys or request
types: ``ApiKeys.X``, a name or attribute spelled as an ApiKeys member (``CREATE_TOPICS``,
``client_quotas_api.ALTER_CLIENT_QUOTAS``), a class named ``...Request``/``...Response``, ``x.request_type`` /
``x.response_type`` / ``x.api_key``, or int literals mapped to functions (a handler table keyed by literal numbers).
protocol/ is not searched: its per-key version table is the keys' own definition (Kafka's ApiKeys enum holds them).
"""

from __future__ import annotations

import ast
from pathlib import Path

from protocol.api_versions import ApiKeys

ROOT = Path(__file__).resolve().parent.parent
SERVING = ("actors", "core", "edges", "zk_bridge", "kactor", "sim")
KEY_NAMES = frozenset(k.name for k in ApiKeys)
THE_TABLE = ("core/api/registry.py", "_UNITS")


# what only a table of APIs maps to: their units or parts of one
API_VALUES = frozenset({"ApiSpec", "ShardedRequest", "GroupApi", "Authorized", "AclOperation"})


def _annotated_api_table(annotation: ast.expr | None) -> bool:
    """``dict[<api key or type>, <an API's unit or part of one>]``, or any dict keyed by ApiKeys."""
    if not (isinstance(annotation, ast.Subscript) and isinstance(annotation.value, ast.Name)
            and annotation.value.id in ("dict", "Dict", "Mapping", "MutableMapping")
            and isinstance(annotation.slice, ast.Tuple) and len(annotation.slice.elts) == 2):
        return False
    key, value = annotation.slice.elts
    key_names = {n.id for n in ast.walk(key) if isinstance(n, ast.Name)}
    value_names = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
    return "ApiKeys" in key_names or bool(key_names & {"int", "type"} and value_names & API_VALUES)


def _api_key_like(key: ast.expr | None) -> bool:
    if isinstance(key, ast.Attribute):
        return key.attr in KEY_NAMES or (isinstance(key.value, ast.Name) and key.value.id == "ApiKeys") \
            or key.attr in ("request_type", "response_type", "api_key")
    if isinstance(key, ast.Name):
        return key.id in KEY_NAMES or (key.id.endswith(("Request", "Response")) and not key.id.startswith("_"))
    return False


def _literal_handler_table(value: ast.Dict) -> bool:
    keys_are_ints = value.keys and all(isinstance(k, ast.Constant) and type(k.value) is int for k in value.keys)
    values_are_functions = all(isinstance(v, ast.Lambda | ast.Attribute) for v in value.values)
    return bool(keys_are_ints and values_are_functions)


def _is_table(annotation: ast.expr | None, value: ast.expr | None) -> bool:
    if _annotated_api_table(annotation):
        return True
    if isinstance(value, ast.Dict):
        return any(_api_key_like(k) for k in value.keys) or _literal_handler_table(value)
    if isinstance(value, ast.DictComp):
        return _api_key_like(value.key)
    return False


def _target_name(target: ast.expr) -> str | None:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    return None


def tables(root: Path = ROOT) -> list[tuple[str, str]]:
    """(file, name) of every table keyed by API key or request type in the serving folders."""
    found: list[tuple[str, str]] = []
    for folder in SERVING:
        for path in sorted((root / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.AnnAssign):
                    targets, annotation, value = [node.target], node.annotation, node.value
                elif isinstance(node, ast.Assign):
                    targets, annotation, value = node.targets, None, node.value
                else:
                    continue
                if _is_table(annotation, value):
                    found += [(str(path.relative_to(root)), n) for n in map(_target_name, targets) if n]
    return found


def test_one_table_keyed_by_api_key_or_request_type() -> None:
    assert tables() == [THE_TABLE]


def test_the_count_sees_each_kind_of_table(tmp_path: Path) -> None:
    """Each shape of the tables issue #42 counted (13 of them) is seen; a dict of other ints is not."""
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "old.py").write_text('''
_BY_KEY: dict[int, ApiSpec] = {}
_BY_TYPE: dict[type, ApiSpec] = {}
BROKER_REQUESTS: dict[type, ShardedRequest] = {unit.request_type: unit for unit in UNITS}
FOLLOWER_RESPONSES = {unit.response_type: unit for unit in UNITS}
_AUTHORIZE = {DeleteRecordsRequest: authorize}
CLUSTER_OPERATION_OF = {ELECT_LEADERS: AclOperation.ALTER, 48: AclOperation.DESCRIBE_CONFIGS}
ERRORS = {client_quotas_api.DESCRIBE_CLIENT_QUOTAS: describe_error}
class AdminManager:
    def __init__(self):
        self._handlers = {19: self.create_topics, 32: lambda v, b: describe(self, v, b)}
        self.unrelated = {1: "a", 2: "b"}
''')
    assert [name for _, name in tables(tmp_path)] == [
        "_BY_KEY", "_BY_TYPE", "BROKER_REQUESTS", "FOLLOWER_RESPONSES", "_AUTHORIZE", "CLUSTER_OPERATION_OF", "ERRORS",
        "_handlers"]
