"""The one request front: KafkaApis.handle's steps before a broker component serves a request, for every actor a
request is routed to (the replica manager, the group and transaction coordinators, the controller).

`admit` finds the request's unit (core/api/registry.py, by the internal request's type), takes the header's client
id into the request where the unit's service asks it to (Produce's internalTopicsAllowed), and runs the unit's
``authorize`` (KafkaApis' authorization) with the broker's authorizer, or ``ALLOW_ALL`` when it has none. A request
refused as a whole is answered here (NetReply); otherwise the actor serves what was allowed, and passes its answer
through ``finish`` (the refused parts).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import attrs

from actors import names
from actors.base import KActor
from core.api.registry import ApiSpec, ReplicaManagerService, unit_of
from core.security.authorizer import ALLOW_ALL, ANONYMOUS, Authorizer, RequestAuthorizer, request_authorizer
from messages.net import NetReply, NetRequest

log = logging.getLogger("kactor.broker")


@attrs.frozen(slots=True)
class Admitted:
    """A request the front let through: its unit, the request to serve, the last step of its answer (None: as it is)
    and the request's authorizer (Metadata reads it while it answers)."""

    spec: ApiSpec
    request: Any
    finish: Callable[[Any], Any] | None
    auth: RequestAuthorizer


def admit(actor: KActor, msg: NetRequest, authorizer: Authorizer | None) -> Admitted | None:
    """Mirrors KafkaApis.handle's dispatch and each handler's authorization before the component serves the request:
    None when it was answered here (refused as a whole) or no unit serves it."""
    body = msg.body
    spec = unit_of(body)
    if spec is None:
        log.warning("%s: no API unit serves %s", actor.name, type(body).__name__)
        return None
    service = spec.service
    if isinstance(service, ReplicaManagerService) and service.by_client_id is not None:
        body = service.by_client_id(body, msg.client_id)
    # request_authorizer's ALLOW_ALL without a broker authorizer, without its call or the principal's getattr
    auth = ALLOW_ALL if authorizer is None else \
        request_authorizer(authorizer, getattr(body, "principal", ANONYMOUS), msg.client_host)
    if spec.authorize is None:
        return Admitted(spec, body, None, auth)
    decision = spec.authorize(body, auth)
    if decision.request is None:
        if msg.reply_expected:
            actor.post(names.NET, NetReply(msg.connection_id, msg.request_id, decision.answer))
        return None
    return Admitted(spec, decision.request, decision.finish, auth)
