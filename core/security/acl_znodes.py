"""The ACL znodes in terms of the ACL values: their paths (protocol.zk.paths.ZkAclStore) and payloads
(protocol.zk.znodes' ACL codecs, which spell Kafka 2.6.3's bytes) for resource patterns and entries.

A resource's ACLs: ``{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read",
"host":"*"}]}``. A literal pattern's change notification is the text ``TOPIC:orders`` (the Java enum's toString); a
prefixed one's is ``{"version":1,"resourceType":"TOPIC","name":"orders-","patternType":"PREFIXED"}``.
"""

from __future__ import annotations

from collections.abc import Iterable

from core.security.acl import (
    RESOURCE_TYPES,
    AccessControlEntry,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
    parse_kafka_principal,
)
from protocol.zk import paths, znodes
from protocol.zk.znodes import ZnodeDecodeError

STORE_PATTERN_TYPES = (PatternType.LITERAL, PatternType.PREFIXED)  # ZkAclStore.stores: the specific pattern types


def resource_path(pattern: ResourcePattern) -> str:
    """ResourceZNode.path: /kafka-acl/Topic/orders, /kafka-acl-extended/prefixed/Group/app-."""
    return paths.ZkAclStore.path(pattern.pattern_type.name, pattern.resource_type.pascal_name, pattern.name)


def resource_type_path(pattern_type: PatternType, resource_type: ResourceType) -> str:
    """ZkAclStore.path(resourceType): the parent of that type's resource nodes."""
    return paths.ZkAclStore.path(pattern_type.name, resource_type.pascal_name)


def store_path(pattern_type: PatternType) -> str:
    """ZkAclStore.aclPath: /kafka-acl, /kafka-acl-extended/prefixed."""
    return paths.ZkAclStore.acl_path(pattern_type.name)


def change_create_path(pattern_type: PatternType) -> str:
    """ZkAclChangeStore.createPath of the pattern type's change store (the sequential node's prefix)."""
    return paths.ZkAclStore.change_create_path(pattern_type.name)


def acl_paths() -> list[str]:
    """What KafkaZkClient.createAclPaths creates: each store's root (and /kafka-acl-extended above the extended ones,
    which createRecursive creates without data) and one node per resource type, then the two change paths."""
    out: list[str] = []
    for pattern_type in STORE_PATTERN_TYPES:
        if pattern_type is not PatternType.LITERAL:
            out.append(paths.ExtendedAclZNode)
        out.append(store_path(pattern_type))
        out.extend(resource_type_path(pattern_type, t) for t in RESOURCE_TYPES)
    out += [paths.LiteralAclChangeZNode, paths.ExtendedAclChangeZNode]
    return out


def encode_acls(entries: Iterable[AccessControlEntry]) -> str:
    """ResourceZNode.encode."""
    return znodes.encode_acls((e.principal, e.permission_type.pascal_name, e.operation.pascal_name, e.host)
                              for e in entries)


def decode_acls(data: str | None, path: str) -> tuple[AccessControlEntry, ...]:
    """AclEntry.fromBytes: unknown operation or permission names decode as UNKNOWN (SecurityUtils), a principal
    that is not ``type:name`` raises ZnodeDecodeError; duplicates collapse (Kafka keeps a set)."""
    out: dict[AccessControlEntry, None] = {}
    for principal, permission, operation, host in znodes.decode_acls(data, path):
        try:
            kafka_principal = parse_kafka_principal(principal)
        except ValueError as e:
            raise ZnodeDecodeError(path, str(e)) from None
        out[AccessControlEntry(str(kafka_principal), host, AclOperation.from_name(operation),
                               AclPermissionType.from_name(permission))] = None
    return tuple(out)


def encode_acl_change(pattern: ResourcePattern) -> str:
    """The change notification of the pattern's store: LiteralAclChangeStore.encode or ExtendedAclChangeStore.encode
    (ValueError for a pattern type that is not specific)."""
    if pattern.pattern_type is PatternType.LITERAL:
        return znodes.encode_literal_acl_change(pattern.resource_type.name, pattern.name)
    if not pattern.pattern_type.is_specific:
        raise ValueError(f"Invalid pattern type: {pattern.pattern_type}")
    return znodes.encode_extended_acl_change(pattern.resource_type.name, pattern.name, pattern.pattern_type.name)


def decode_literal_acl_change(data: str | None) -> ResourcePattern:
    """LiteralAclChangeStore.decode."""
    resource_type, name = znodes.decode_literal_acl_change(data)
    return ResourcePattern(ResourceType.from_string(resource_type), name, PatternType.LITERAL)


def decode_extended_acl_change(data: str | None) -> ResourcePattern:
    """ExtendedAclChangeStore.decode."""
    resource_type, name, pattern_type = znodes.decode_extended_acl_change(data)
    return ResourcePattern(ResourceType.from_string(resource_type), name, PatternType.from_string(pattern_type))
