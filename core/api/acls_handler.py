"""KafkaApis.handleDescribeAcls / handleCreateAcls / handleDeleteAcls as one procedure (a generator of ZooKeeper
effects, core/effects.py) for the admin edge handler: read the ACLs (the view Kafka's AclAuthorizer cache follows),
decide with AclAuthorizer's rules for the request's principal (`core.api.acls.refusal`), then serve the API
(core/api/describe_acls.py, create_acls.py, delete_acls.py)."""

from __future__ import annotations

import attrs

from core.api.acls import Body, refusal
from core.api.create_acls import create_acls
from core.api.delete_acls import delete_acls
from core.api.describe_acls import describe_acls
from core.effects import Proc
from core.security.acl import parse_super_users
from core.security.acl_store import ZkAclAuthorizer, load_acls
from core.security.authorizer import ALLOW_ALL, ANONYMOUS, Authorizer
from protocol.api_versions import ApiKeys


@attrs.frozen(slots=True)
class AclApiConfig:
    """The broker's authorizer settings: whether ``authorizer.class.name`` names AclAuthorizer, ``super.users`` and
    ``allow.everyone.if.no.acl.found``."""

    enabled: bool
    super_users: str | None = None
    allow_everyone_if_no_acl_found: bool = False


def handle_acls(config: AclApiConfig, api_key: int, version: int, body: Body, principal: str = ANONYMOUS,
                host: str = "") -> Proc[Body]:
    """The answer (every field of the newest version) to a DescribeAcls, CreateAcls or DeleteAcls request."""
    if not config.enabled:
        refused = refusal(api_key, version, body, ALLOW_ALL)
        assert refused is not None
        return refused
    store = ZkAclAuthorizer()
    store.cache = yield from load_acls(store.kzk)
    authorizer = Authorizer({p: v.acls for p, v in store.cache.items()}, parse_super_users(config.super_users),
                            config.allow_everyone_if_no_acl_found)
    refused = refusal(api_key, version, body, authorizer.for_request(principal, host))
    if refused is not None:
        return refused
    if api_key == ApiKeys.DESCRIBE_ACLS:
        return describe_acls(body, store)
    if api_key == ApiKeys.CREATE_ACLS:
        return (yield from create_acls(body, store))
    return (yield from delete_acls(body, store))
