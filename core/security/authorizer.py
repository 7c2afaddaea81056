"""The broker's authorizer: Kafka 2.6.3's AclAuthorizer as the request fronts use it, pure.

`Authorizer` is the authorizer's state (its ACL cache, ``super.users``, ``allow.everyone.if.no.acl.found``) built
from the `messages.security.AuthorizerChanged` the config manager sends (core/security/acl_listener.py keeps the
cache); `RequestAuthorizer` is that state bound to one request's principal and client address, what KafkaApis'
``authorize(request.context, operation, resourceType, name)`` and ``filterByAuthorized`` ask. With no authorizer
configured (``authorizer.class.name`` empty, 2.6's default) there is no `Authorizer` and every request is allowed:
``ALLOW_ALL``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from core.security.acl import (
    CLUSTER_NAME,
    AccessControlEntry,
    AclOperation,
    AclPermissionType,
    KafkaPrincipal,
    PatternType,
    ResourcePattern,
    ResourceType,
    authorize,
    parse_kafka_principal,
    parse_super_users,
    supported_operations,
)
from messages.security import AclRow, AuthorizerChanged

# authorizer.class.name values that mean AclAuthorizer (2.6's and its deprecated SimpleAclAuthorizer wrapper)
ACL_AUTHORIZER_CLASS_NAMES = frozenset({"kafka.security.authorizer.AclAuthorizer",
                                        "kafka.security.auth.SimpleAclAuthorizer"})
ANONYMOUS = "User:ANONYMOUS"  # KafkaPrincipal.ANONYMOUS


def authorizer_enabled(class_name: str | None) -> bool:
    """Whether ``authorizer.class.name`` turns authorization on; ValueError for a class kactor cannot load."""
    if not class_name:
        return False
    if class_name.strip() in ACL_AUTHORIZER_CLASS_NAMES:
        return True
    raise ValueError(f"kactor serves only {' or '.join(sorted(ACL_AUTHORIZER_CLASS_NAMES))}, not {class_name}")


SUPER_USERS = "super.users"  # AclAuthorizer.SuperUsersProp
ALLOW_EVERYONE_IF_NO_ACL_FOUND = "allow.everyone.if.no.acl.found"  # AclAuthorizer.AllowEveryoneIfNoAclIsFoundProp


def acl_authorizer_configs(originals: Mapping[str, str]) -> tuple[str | None, bool]:
    """AclAuthorizer.configure: ``super.users`` (text, checked here) and ``allow.everyone.if.no.acl.found`` (Scala's
    toBoolean: ``true`` / ``false`` in any case, default false) from the broker's original settings; ValueError
    with the key for a value AclAuthorizer refuses."""
    super_users = originals.get(SUPER_USERS)
    try:
        parse_super_users(super_users)
    except ValueError as e:
        raise ValueError(f"{SUPER_USERS}: {e}") from None
    allow = (originals.get(ALLOW_EVERYONE_IF_NO_ACL_FOUND) or "false").strip().lower()
    if allow not in ("true", "false"):
        raise ValueError(f"{ALLOW_EVERYONE_IF_NO_ACL_FOUND}: For input string: \"{allow}\"")
    return super_users, allow == "true"


def row_of(pattern: ResourcePattern, entry: AccessControlEntry) -> AclRow:
    return AclRow(pattern.resource_type.code, pattern.name, pattern.pattern_type.code, entry.principal, entry.host,
                  entry.operation.code, entry.permission_type.code)


def rows_of(cache: Mapping[ResourcePattern, Iterable[AccessControlEntry]]) -> tuple[AclRow, ...]:
    return tuple(row_of(p, e) for p, entries in cache.items() for e in entries)


@attrs.frozen(slots=True, eq=False)
class Authorizer:
    """AclAuthorizer's decision state: the ACL cache (resource pattern → entries), the super users and
    ``allow.everyone.if.no.acl.found``."""

    acls: Mapping[ResourcePattern, tuple[AccessControlEntry, ...]]
    super_users: frozenset[KafkaPrincipal] = frozenset()
    allow_everyone_if_no_acl_found: bool = False

    @classmethod
    def from_message(cls, msg: AuthorizerChanged) -> Authorizer:
        acls: dict[ResourcePattern, list[AccessControlEntry]] = {}
        for r in msg.acls:
            pattern = ResourcePattern(ResourceType.from_code(r.resource_type), r.name,
                                      PatternType.from_code(r.pattern_type))
            acls.setdefault(pattern, []).append(AccessControlEntry(
                r.principal, r.host, AclOperation.from_code(r.operation),
                AclPermissionType.from_code(r.permission_type)))
        return cls({p: tuple(e) for p, e in acls.items()}, parse_super_users(msg.super_users),
                   msg.allow_everyone_if_no_acl_found)

    def authorize(self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType,
                  name: str) -> bool:
        """AclAuthorizer.authorize for one action on the literal resource ``name``. A principal that is not
        ``type:name`` is refused."""
        try:
            kafka_principal = parse_kafka_principal(principal)
        except ValueError:
            return False
        return authorize(kafka_principal, host, operation, ResourcePattern(resource_type, name, PatternType.LITERAL),
                         self.acls, self.super_users, self.allow_everyone_if_no_acl_found)

    def for_request(self, principal: str, host: str) -> RequestAuthorizer:
        return RequestAuthorizer(self, principal, host)


@attrs.frozen(slots=True)
class RequestAuthorizer:
    """KafkaApis' authorize helpers for one request: ``authorizer`` None = no authorizer (everything allowed)."""

    authorizer: Authorizer | None
    principal: str = ANONYMOUS
    host: str = ""

    @property
    def enabled(self) -> bool:
        return self.authorizer is not None

    def allows(self, operation: AclOperation, resource_type: ResourceType, name: str) -> bool:
        """KafkaApis.authorize."""
        return self.authorizer is None or self.authorizer.authorize(self.principal, self.host, operation,
                                                                    resource_type, name)

    def allows_cluster(self, operation: AclOperation) -> bool:
        return self.allows(operation, ResourceType.CLUSTER, CLUSTER_NAME)

    def filter(self, operation: AclOperation, resource_type: ResourceType, names: Iterable[str]) -> set[str]:
        """KafkaApis.filterByAuthorized: the names (each asked once) the principal may act on."""
        return {n for n in set(names) if self.allows(operation, resource_type, n)}

    def authorized_operations(self, resource_type: ResourceType, name: str) -> int:
        """KafkaApis.authorizedOperations: the bit field (1 << AclOperation code) of the operations a resource of
        this type supports that the principal may perform."""
        ops = supported_operations(resource_type) - {AclOperation.ALL}
        return sum(1 << op.code for op in ops if self.allows(op, resource_type, name))


ALLOW_ALL = RequestAuthorizer(None)


def request_authorizer(authorizer: Authorizer | None, principal: str, host: str) -> RequestAuthorizer:
    return ALLOW_ALL if authorizer is None else authorizer.for_request(principal, host)


@attrs.frozen(slots=True)
class Authorized:
    """What a request front does after KafkaApis' authorization of a request: serve ``request`` (then pass its
    answer through ``finish``, which adds the refused parts), or send ``answer`` at once (refused as a whole, or
    nothing allowed left to serve)."""

    request: Any = None
    answer: Any = None
    finish: Callable[[Any], Any] | None = None


def allowed(request: Any, finish: Callable[[Any], Any] | None = None) -> Authorized:
    return Authorized(request, None, finish)


def refused(answer: Any) -> Authorized:
    return Authorized(None, answer)
