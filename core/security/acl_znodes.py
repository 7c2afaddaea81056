"""The ACL znodes' payloads and paths, byte-compatible with Kafka 2.6.3's ``kafka.zk`` (ResourceZNode,
LiteralAclChangeStore, ExtendedAclChangeStore) and ``AclEntry.toJsonCompatibleMap`` / ``fromBytes``.

A resource's ACLs: ``{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read",
"host":"*"}]}`` — Jackson's compact output of Scala maps, which keep these keys in this order. The entries keep the
order given (a set's order in Kafka: insertion order up to four entries, JVM hash order beyond; readers parse JSON).
A literal pattern's change notification is the text ``<RESOURCE_TYPE>:<name>`` (``TOPIC:orders``: the Java enum's
toString); a prefixed one's is ``{"version":1,"resourceType":"TOPIC","name":"orders-","patternType":"PREFIXED"}``
(ExtendedAclChangeEvent's bean properties in declaration order).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from core.security.acl import (
    RESOURCE_SEPARATOR,
    AccessControlEntry,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
    parse_kafka_principal,
)
from zk_bridge import paths
from zk_bridge.znodes import ZnodeDecodeError

ACL_VERSION = 1  # AclEntry.CurrentVersion
ACL_CHANGE_EVENT_VERSION = 1  # ExtendedAclChangeEvent.currentVersion


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def resource_path(pattern: ResourcePattern) -> str:
    """ResourceZNode.path: /kafka-acl/Topic/orders, /kafka-acl-extended/prefixed/Group/app-."""
    return paths.ZkAclStore.path(pattern.pattern_type.name, pattern.resource_type.pascal_name, pattern.name)


def resource_type_path(pattern_type: PatternType, resource_type: ResourceType) -> str:
    """ZkAclStore.path(resourceType): the parent of that type's resource nodes."""
    return paths.ZkAclStore.path(pattern_type.name, resource_type.pascal_name)


def change_create_path(pattern_type: PatternType) -> str:
    """ZkAclChangeStore.createPath of the pattern type's change store (the sequential node's prefix)."""
    return paths.ZkAclStore.change_create_path(pattern_type.name)


def encode_acls(entries: Iterable[AccessControlEntry]) -> str:
    """ResourceZNode.encode (AclEntry.toJsonCompatibleMap)."""
    return _dumps({"version": ACL_VERSION, "acls": [
        {"principal": e.principal, "permissionType": e.permission_type.pascal_name,
         "operation": e.operation.pascal_name, "host": e.host} for e in entries]})


def decode_acls(data: str | None, path: str) -> tuple[AccessControlEntry, ...]:
    """AclEntry.fromBytes: no data, or data that is not JSON, is no ACL (Kafka's Json.parseBytes swallows the
    failure); a version other than 1 or an entry without its keys raises ZnodeDecodeError. Unknown operation or
    permission names decode as UNKNOWN, as SecurityUtils does. Duplicates collapse (Kafka keeps a set)."""
    if not data:
        return ()
    try:
        js = json.loads(data)
    except ValueError:
        return ()
    if not isinstance(js, dict):
        raise ZnodeDecodeError(path, f"expected a JSON object: {data[:200]!r}")
    if js.get("version") != ACL_VERSION or isinstance(js.get("version"), bool):
        raise ZnodeDecodeError(path, f"requirement failed: ACL version {js.get('version')!r} is not {ACL_VERSION}")
    items = js.get("acls")
    if not isinstance(items, list):
        raise ZnodeDecodeError(path, "no 'acls' array")
    out: dict[AccessControlEntry, None] = {}
    for item in items:
        if not isinstance(item, dict):
            raise ZnodeDecodeError(path, f"an ACL is not a JSON object: {item!r}")
        try:
            principal, permission, host, operation = (item[k] for k in ("principal", "permissionType", "host",
                                                                        "operation"))
        except KeyError as e:
            raise ZnodeDecodeError(path, f"an ACL has no {e.args[0]!r}") from None
        if not all(isinstance(v, str) for v in (principal, permission, host, operation)):
            raise ZnodeDecodeError(path, f"an ACL's values are not all strings: {item!r}")
        try:
            kafka_principal = parse_kafka_principal(principal)
        except ValueError as e:
            raise ZnodeDecodeError(path, str(e)) from None
        entry = AccessControlEntry(str(kafka_principal), host, AclOperation.from_name(operation),
                                   AclPermissionType.from_name(permission))
        out[entry] = None
    return tuple(out)


def encode_acl_change(pattern: ResourcePattern) -> str:
    """The change notification of the pattern's store: LiteralAclChangeStore.encode or ExtendedAclChangeStore.encode
    (ValueError for a pattern type that is not specific)."""
    if pattern.pattern_type is PatternType.LITERAL:
        return f"{pattern.resource_type}{RESOURCE_SEPARATOR}{pattern.name}"
    if not pattern.pattern_type.is_specific:
        raise ValueError(f"Invalid pattern type: {pattern.pattern_type}")
    return _dumps({"version": ACL_CHANGE_EVENT_VERSION, "resourceType": pattern.resource_type.name,
                   "name": pattern.name, "patternType": pattern.pattern_type.name})


def decode_literal_acl_change(data: str | None, path: str = paths.LiteralAclChangeZNode) -> ResourcePattern:
    """LiteralAclChangeStore.decode: ``<type>:<name>``, split at the first ``:`` (a name may hold more)."""
    text = data or ""
    resource_type, sep, name = text.partition(RESOURCE_SEPARATOR)
    if not sep:
        raise ZnodeDecodeError(path, f"expected a string in format ResourceType:ResourceName but got {text}")
    return ResourcePattern(ResourceType.from_string(resource_type), name, PatternType.LITERAL)


def decode_extended_acl_change(data: str | None, path: str = paths.ExtendedAclChangeZNode) -> ResourcePattern:
    """ExtendedAclChangeStore.decode: the JSON change event (a version above 1 is refused)."""
    try:
        js = json.loads(data or "")
    except ValueError:
        raise ZnodeDecodeError(path, f"Failed to parse ACL change event: {data!r}") from None
    if not isinstance(js, dict) or not all(isinstance(js.get(k), str) for k in ("resourceType", "name",
                                                                                  "patternType")):
        raise ZnodeDecodeError(path, f"Failed to parse ACL change event: {data!r}")
    version = js.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version > ACL_CHANGE_EVENT_VERSION:
        raise ZnodeDecodeError(path, f"Acl change event received for unsupported version: {version}")
    return ResourcePattern(ResourceType.from_string(js["resourceType"]), js["name"],
                           PatternType.from_string(js["patternType"]))
