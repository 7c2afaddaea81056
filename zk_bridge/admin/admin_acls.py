"""DescribeAcls, CreateAcls and DeleteAcls for the admin edge handler: core/api/acls_handler.py's procedure run on
the handler's own ZooKeeper session (this thread has no cache of the ACLs: it reads them for each request, the view
Kafka's AclAuthorizer cache follows). Its writes are AclAuthorizer's conditional, versioned updates with change
notifications, from which every broker's authorizer cache (core/security/acl_listener.py) follows them.
"""

from __future__ import annotations

import logging
from typing import Any

from kazoo.client import KazooClient

from core.api.acls import Body, error_response
from core.api.acls_handler import AclApiConfig
from core.api.acls_handler import handle_acls as handle_acls_proc
from core.security.authorizer import ANONYMOUS, acl_authorizer_configs, authorizer_enabled
from messages.common import Errors
from zk_bridge.admin.config_entries import KafkaConfigView
from zk_bridge.blocking import BlockingZk

log = logging.getLogger("kactor.admin_manager")


def acl_api_config(config: KafkaConfigView) -> AclApiConfig:
    if not authorizer_enabled(config["authorizer.class.name"]):
        return AclApiConfig(False)
    super_users, allow_everyone = acl_authorizer_configs(config.originals)
    return AclApiConfig(True, super_users, allow_everyone)


def handle_acls(zk: KazooClient, config: KafkaConfigView, api_key: int, version: int, body: Body, ctx: Any) -> Body:
    """The response body to ``body``. A failure of ZooKeeper answers the request's error response with
    UNKNOWN_SERVER_ERROR (KafkaApis.handleError) and the broker keeps serving."""
    try:
        with BlockingZk(zk) as blocking:
            return blocking.run(handle_acls_proc(acl_api_config(config), api_key, version, body,
                                                 getattr(ctx, "principal", ANONYMOUS),
                                                 getattr(ctx, "client_host", "")))
    except Exception:  # noqa: BLE001 - the request fails, the broker keeps serving
        log.exception("ACL request (api key %d, v%d) failed", api_key, version)
        return error_response(api_key)(version, body, int(Errors.UNKNOWN_SERVER_ERROR))
