"""Kafka 2.6.3's ACL values and AclAuthorizer's decision, pure.

The values mirror the clients' ``org.apache.kafka.common.acl`` / ``.resource`` classes (ResourceType, PatternType,
AclOperation, AclPermissionType, ResourcePattern, AccessControlEntry, AclBinding and their filters) with the codes the
wire protocol carries and the ``toString`` the tools print; `authorize` is ``AclAuthorizer.authorizeAction`` over an
ACL cache (resource pattern → its entries) held by the caller.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterable, Mapping
from typing import Self

import attrs


def _pascal_case(name: str) -> str:
    """SecurityUtils.toPascalCase: ``TRANSACTIONAL_ID`` → ``TransactionalId``."""
    return "".join(part[:1].upper() + part[1:].lower() for part in name.split("_"))


class _KafkaEnum(enum.Enum):
    """A Java enum of the clients: ``value`` is its wire code (in declaration order, so also its ordinal's order),
    ``str()`` its Java ``toString`` (the constant's name)."""

    def __str__(self) -> str:
        return self.name

    @property
    def code(self) -> int:
        return int(self.value)

    @property
    def pascal_name(self) -> str:
        """SecurityUtils.resourceTypeName / operationName / permissionTypeName: ``TransactionalId``, ``Read``."""
        return _pascal_case(self.name)

    @classmethod
    def from_name(cls, name: str) -> Self:
        """SecurityUtils.resourceType / operation / permissionType: the Pascal-case name or its upper case (no
        underscores: ``IdempotentWrite`` or ``IDEMPOTENTWRITE``); UNKNOWN for anything else."""
        for member in cls:
            if name.upper() == member.pascal_name.upper():
                return member
        return cls["UNKNOWN"]

    @classmethod
    def from_string(cls, text: str) -> Self:
        """The Java enum's ``fromString``: ``valueOf(str.toUpperCase)``, UNKNOWN when no constant has that name."""
        return cls.__members__.get(text.upper(), cls["UNKNOWN"])

    @classmethod
    def from_code(cls, code: int) -> Self:
        try:
            return cls(code)
        except ValueError:
            return cls["UNKNOWN"]


class ResourceType(_KafkaEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6


class PatternType(_KafkaEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4

    @property
    def is_specific(self) -> bool:
        """PatternType.isSpecific: a pattern an ACL can be stored under (LITERAL, PREFIXED)."""
        return self in (PatternType.LITERAL, PatternType.PREFIXED)


class AclOperation(_KafkaEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12


class AclPermissionType(_KafkaEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


# AclEntry.ResourceTypes / AclOperations: every concrete value
RESOURCE_TYPES: tuple[ResourceType, ...] = tuple(t for t in ResourceType if t not in (ResourceType.UNKNOWN,
                                                                                      ResourceType.ANY))
ACL_OPERATIONS: tuple[AclOperation, ...] = tuple(o for o in AclOperation if o not in (AclOperation.UNKNOWN,
                                                                                      AclOperation.ANY))
WILDCARD_RESOURCE = "*"  # ResourcePattern.WILDCARD_RESOURCE
CLUSTER_NAME = "kafka-cluster"  # Resource.CLUSTER_NAME
WILDCARD_HOST = "*"  # AclEntry.WildcardHost
USER_TYPE = "User"  # KafkaPrincipal.USER_TYPE
RESOURCE_SEPARATOR = ":"  # AclEntry.ResourceSeparator


@attrs.frozen(slots=True)
class KafkaPrincipal:
    """KafkaPrincipal: compared by type and name (AclAuthorizer compares a custom principal class the same way)."""

    principal_type: str
    name: str

    def __str__(self) -> str:
        return f"{self.principal_type}:{self.name}"


WILDCARD_PRINCIPAL = KafkaPrincipal(USER_TYPE, "*")  # AclEntry.WildcardPrincipal
WILDCARD_PRINCIPAL_STRING = str(WILDCARD_PRINCIPAL)


def parse_kafka_principal(text: str | None) -> KafkaPrincipal:
    """SecurityUtils.parseKafkaPrincipal: ``type:name`` split at the first ``:`` (ValueError with Kafka's message)."""
    if not text or ":" not in text:
        raise ValueError(f"expected a string in format principalType:principalName but got {text}")
    principal_type, _, name = text.partition(":")
    return KafkaPrincipal(principal_type, name)


def parse_super_users(value: str | None) -> frozenset[KafkaPrincipal]:
    """AclAuthorizer.configure's ``super.users``: principals separated by ``;`` (each trimmed); none when unset or
    empty."""
    if not value:
        return frozenset()
    return frozenset(parse_kafka_principal(s.strip()) for s in value.split(";"))


@attrs.frozen(slots=True)
class ResourcePattern:
    """ResourcePattern: a resource type, a name and a specific pattern type (LITERAL or PREFIXED)."""

    resource_type: ResourceType
    name: str
    pattern_type: PatternType

    def __str__(self) -> str:
        return (f"ResourcePattern(resourceType={self.resource_type}, name={self.name}, "
                f"patternType={self.pattern_type})")

    def to_filter(self) -> ResourcePatternFilter:
        return ResourcePatternFilter(self.resource_type, self.name, self.pattern_type)


@attrs.frozen(slots=True)
class AccessControlEntry:
    """AccessControlEntry: ``principal`` as text (``User:alice``), a host (an IP address or ``*``), an operation and
    a permission type."""

    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    def __str__(self) -> str:  # AccessControlEntryData.toString
        return (f"(principal={self.principal}, host={self.host}, operation={self.operation}, "
                f"permissionType={self.permission_type})")

    @property
    def kafka_principal(self) -> KafkaPrincipal:
        return parse_kafka_principal(self.principal)

    def to_filter(self) -> AccessControlEntryFilter:
        return AccessControlEntryFilter(self.principal, self.host, self.operation, self.permission_type)


@attrs.frozen(slots=True)
class AclBinding:
    pattern: ResourcePattern
    entry: AccessControlEntry

    def __str__(self) -> str:
        return f"(pattern={self.pattern}, entry={self.entry})"


@attrs.frozen(slots=True)
class ResourcePatternFilter:
    """ResourcePatternFilter: ANY resource type, a None name and the ANY / MATCH pattern types match more than one
    pattern."""

    resource_type: ResourceType
    name: str | None
    pattern_type: PatternType

    def __str__(self) -> str:
        name = "<any>" if self.name is None else self.name
        return f"ResourcePattern(resourceType={self.resource_type}, name={name}, patternType={self.pattern_type})"

    def matches(self, pattern: ResourcePattern) -> bool:
        """ResourcePatternFilter.matches: MATCH finds every pattern that applies to the named resource (the literal
        name, the wildcard ``*``, every prefix)."""
        if self.resource_type is not ResourceType.ANY and self.resource_type is not pattern.resource_type:
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH) and self.pattern_type is not \
                pattern.pattern_type:
            return False
        if self.name is None:
            return True
        if self.pattern_type in (PatternType.ANY, pattern.pattern_type):
            return self.name == pattern.name
        if pattern.pattern_type is PatternType.LITERAL:
            return self.name == pattern.name or pattern.name == WILDCARD_RESOURCE
        if pattern.pattern_type is PatternType.PREFIXED:
            return self.name.startswith(pattern.name)
        raise ValueError(f"Unsupported PatternType: {pattern.pattern_type}")

    def find_indefinite_field(self) -> str | None:
        if self.resource_type is ResourceType.ANY:
            return "Resource type is ANY."
        if self.resource_type is ResourceType.UNKNOWN:
            return "Resource type is UNKNOWN."
        if self.name is None:
            return "Resource name is NULL."
        if self.pattern_type is PatternType.MATCH:
            return "Resource pattern type is MATCH."
        if self.pattern_type is PatternType.UNKNOWN:
            return "Resource pattern type is UNKNOWN."
        return None

    @property
    def matches_at_most_one(self) -> bool:
        return self.find_indefinite_field() is None


@attrs.frozen(slots=True)
class AccessControlEntryFilter:
    """AccessControlEntryFilter: a None principal / host, ANY operation / permission type match every entry."""

    principal: str | None
    host: str | None
    operation: AclOperation
    permission_type: AclPermissionType

    def matches(self, entry: AccessControlEntry) -> bool:
        if self.principal is not None and self.principal != entry.principal:
            return False
        if self.host is not None and self.host != entry.host:
            return False
        if self.operation is not AclOperation.ANY and self.operation is not entry.operation:
            return False
        return self.permission_type is AclPermissionType.ANY or self.permission_type is entry.permission_type


ANY_ENTRY = AccessControlEntryFilter(None, None, AclOperation.ANY, AclPermissionType.ANY)
ANY_RESOURCE = ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY)


@attrs.frozen(slots=True)
class AclBindingFilter:
    pattern_filter: ResourcePatternFilter
    entry_filter: AccessControlEntryFilter

    def matches(self, binding: AclBinding) -> bool:
        return self.pattern_filter.matches(binding.pattern) and self.entry_filter.matches(binding.entry)


ANY_BINDING = AclBindingFilter(ANY_RESOURCE, ANY_ENTRY)


def supported_operations(resource_type: ResourceType) -> frozenset[AclOperation]:
    """AclEntry.supportedOperations: what an ACL on a resource of this type may name (besides ALL)."""
    op = AclOperation
    table = {
        ResourceType.TOPIC: (op.READ, op.WRITE, op.CREATE, op.DESCRIBE, op.DELETE, op.ALTER, op.DESCRIBE_CONFIGS,
                             op.ALTER_CONFIGS),
        ResourceType.GROUP: (op.READ, op.DESCRIBE, op.DELETE),
        ResourceType.CLUSTER: (op.CREATE, op.CLUSTER_ACTION, op.DESCRIBE_CONFIGS, op.ALTER_CONFIGS,
                               op.IDEMPOTENT_WRITE, op.ALTER, op.DESCRIBE),
        ResourceType.TRANSACTIONAL_ID: (op.DESCRIBE, op.WRITE),
        ResourceType.DELEGATION_TOKEN: (op.DESCRIBE,),
    }
    if resource_type not in table:
        raise ValueError("Not a concrete resource type")
    return frozenset(table[resource_type])


def implied_by_allow(operation: AclOperation) -> frozenset[AclOperation]:
    """The operations an ALLOW ACL may name to allow ``operation`` (AclAuthorizer.authorizeAction's ``allowOps``,
    besides ALL): READ, WRITE, DELETE or ALTER allow DESCRIBE; ALTER_CONFIGS allows DESCRIBE_CONFIGS. A DENY ACL
    denies only the operation it names (or ALL)."""
    op = AclOperation
    if operation is op.DESCRIBE:
        return frozenset((op.DESCRIBE, op.READ, op.WRITE, op.DELETE, op.ALTER))
    if operation is op.DESCRIBE_CONFIGS:
        return frozenset((op.DESCRIBE_CONFIGS, op.ALTER_CONFIGS))
    return frozenset((operation,))


AclCache = Mapping[ResourcePattern, Iterable[AccessControlEntry]]


def matching_acls(acls: AclCache, resource_type: ResourceType, name: str) -> list[AccessControlEntry]:
    """AclAuthorizer.matchingAcls: the entries of the literal ``*`` pattern, of the literal name and of every
    prefixed pattern the name starts with. (Kafka's range scan of its ordered cache runs from the name down to its
    first character, so an empty prefix applies to the empty name only.)"""
    found: list[AccessControlEntry] = []
    found.extend(acls.get(ResourcePattern(resource_type, WILDCARD_RESOURCE, PatternType.LITERAL), ()))
    found.extend(acls.get(ResourcePattern(resource_type, name, PatternType.LITERAL), ()))
    for pattern, entries in acls.items():
        if pattern.resource_type is resource_type and pattern.pattern_type is PatternType.PREFIXED and \
                name.startswith(pattern.name) and (pattern.name or not name):
            found.extend(entries)
    return found


def _matching_acl_exists(operation: AclOperation, principal: KafkaPrincipal, host: str,
                         permission_type: AclPermissionType, acls: Iterable[AccessControlEntry]) -> bool:
    """AclAuthorizer.matchingAclExists: an entry of that permission for the principal (or ``User:*``), the operation
    (or ALL) and the host (or ``*``)."""
    for acl in acls:
        if acl.permission_type is not permission_type:
            continue
        if acl.operation is not operation and acl.operation is not AclOperation.ALL:
            continue
        if acl.host != host and acl.host != WILDCARD_HOST:
            continue
        try:
            acl_principal = acl.kafka_principal
        except ValueError:
            continue
        if acl_principal in (principal, WILDCARD_PRINCIPAL):
            return True
    return False


def authorize(principal: KafkaPrincipal, host: str, operation: AclOperation, resource: ResourcePattern,
              acls: AclCache, super_users: Iterable[KafkaPrincipal] = (),
              allow_everyone_if_no_acl_found: bool = False) -> bool:
    """AclAuthorizer.authorizeAction: a super user is allowed everything; otherwise, with no ACL that applies to the
    resource, ``allow.everyone.if.no.acl.found`` decides; else a DENY that matches refuses, and an ALLOW that
    matches (directly, through ALL or an implying operation) allows. ``host`` is the client's address as text.
    ValueError for a resource that is not LITERAL (Kafka's IllegalArgumentException)."""
    if resource.pattern_type is not PatternType.LITERAL:
        raise ValueError(f"Only literal resources are supported. Got: {resource.pattern_type}")
    if principal in frozenset(super_users):
        return True
    applicable = matching_acls(acls, resource.resource_type, resource.name)
    if not applicable:
        return allow_everyone_if_no_acl_found
    if _matching_acl_exists(operation, principal, host, AclPermissionType.DENY, applicable):
        return False
    return any(_matching_acl_exists(op, principal, host, AclPermissionType.ALLOW, applicable)
               for op in implied_by_allow(operation))


def _compare_patterns(a: ResourcePattern, b: ResourcePattern) -> int:
    """AclAuthorizer.ResourceOrdering: resource type, then pattern type (their declaration order), then the name in
    reverse (Java's String.compareTo: UTF-16 code units, which big-endian UTF-16 bytes sort as)."""
    if a.resource_type is not b.resource_type:
        return -1 if a.resource_type.value < b.resource_type.value else 1
    if a.pattern_type is not b.pattern_type:
        return -1 if a.pattern_type.value < b.pattern_type.value else 1
    an, bn = a.name.encode("utf-16-be"), b.name.encode("utf-16-be")
    return 0 if an == bn else (1 if an < bn else -1)


def in_cache_order(patterns: Iterable[ResourcePattern]) -> list[ResourcePattern]:
    """The patterns in the order of AclAuthorizer's cache (a TreeMap on ResourceOrdering), the order its ``acls``
    lists bindings in."""
    return sorted(patterns, key=functools.cmp_to_key(_compare_patterns))


def validate_acl_binding(binding: AclBinding) -> None:
    """AclAuthorizer.validateAclBinding, and the znode name ZooKeeper accepts for the pattern (PathUtils.validatePath
    of ``/kafka-acl/<Type>/<name>``): ValueError with the message Kafka's IllegalArgumentException carries."""
    pattern, entry = binding.pattern, binding.entry
    if pattern.resource_type is ResourceType.UNKNOWN or pattern.pattern_type is PatternType.UNKNOWN or \
            entry.operation is AclOperation.UNKNOWN or entry.permission_type is AclPermissionType.UNKNOWN:
        raise ValueError("ACL binding contains unknown elements")
    if "/" in pattern.name:
        raise ValueError(f"ACL binding contains invalid resource name: {pattern.name}")
    if pattern.name in ("", ".", ".."):
        raise ValueError(f"Invalid resource name {pattern.name!r}: not a ZooKeeper node name")
