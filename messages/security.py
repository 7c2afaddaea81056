"""Messages of the broker's authorizer (Kafka 2.6.3's AclAuthorizer): its start and its ACL cache as the request
fronts see it.

The config manager actor loads the ACLs from ZooKeeper and follows their change notifications; every time the cache
changes it tells the actors that authorize requests (actors/core_effects.py RECONFIGURABLES) the whole cache. ACLs
travel as plain rows (the codes of core.security.acl's enums), so this layer needs nothing above it.
"""

from __future__ import annotations

from messages.registry import message


@message
class AclRow:
    """One ACL: a resource pattern (ResourceType and PatternType codes, name) and an entry (principal text, host,
    AclOperation and AclPermissionType codes)."""

    resource_type: int
    name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int


@message
class AclAuthorizerInit:
    """Start the broker's AclAuthorizer (``authorizer.class.name`` set): ``super_users`` as the ``super.users``
    text, ``allow_everyone_if_no_acl_found`` as configured."""

    super_users: str | None = None
    allow_everyone_if_no_acl_found: bool = False


@message
class AuthorizerChanged:
    """The authorizer's whole state for the actors that authorize requests. ``loaded`` False: the ACLs are not read
    yet (the state a broker starts with, which allows the super users only)."""

    super_users: str | None
    allow_everyone_if_no_acl_found: bool
    acls: tuple[AclRow, ...] = ()
    loaded: bool = True
