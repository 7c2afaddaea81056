"""The APIs this broker serves: one ``ApiSpec`` per Kafka API key, registered by the module of its API family.

Kafka's ``KafkaApis.handle`` dispatches on the request's api key; here the edge (edges/net/inbound.py) looks the key
up with `spec_for_key`, turns the decoded body into an internal attrs request with ``request_from_wire`` and routes it
to the spec's ``route``, the one statement of where that API is served: a `Route` (the broker component KafkaApis
hands it to; the request is injected into that component's actor as a traced ``NetRequest``) or ``"edge:<handler>"``
for a handler the composition root plugged into the edge (e.g. AdminManager, which works through ZooKeeper on its
own thread). The answer comes back as an internal response and leaves through ``response_to_wire``.

The requests kactor itself sends (the controller's channels, the replica fetchers, controlled shutdown) go the other
way: the edge finds the spec by the internal request's type (`spec_for_type`), encodes it with ``request_to_wire`` at
``send_version`` and decodes the answer with ``response_from_wire``.

A key without a spec is not served and not advertised in ApiVersions. Converters are pure functions of their inputs.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import attrs

from messages.metadata import AutoCreateConfig
from protocol.api_versions import API_VERSIONS

EDGE_ROUTE_PREFIX = "edge:"


class Route(enum.Enum):
    """The broker components KafkaApis hands requests to. core names no actor (actors/names.py is above it): which
    actor is each component is said once, by `actors.core_effects.actor_for`. A route given as a string other than
    ``"edge:<handler>"`` is an actor's name as it stands (tests' own actors)."""

    REPLICA_MANAGER = enum.auto()  # ReplicaManager (and KafkaApis' MetadataCache)
    CONTROLLER = enum.auto()  # KafkaController
    GROUP_COORDINATOR = enum.auto()  # GroupCoordinator
    TRANSACTION_COORDINATOR = enum.auto()  # TransactionCoordinator


# kactor-private api keys (core/api/kactor_private.py): served with their own ``body_codec``, never advertised
PRIVATE_API_KEY_MIN = 10000


@attrs.frozen(slots=True)
class RequestContext:
    """What Kafka's ``RequestContext`` / ``RequestHeader`` tell a handler besides the body."""

    api_version: int
    correlation_id: int = 0
    client_id: str = ""
    client_host: str = ""
    connection_id: int = 0
    listener: str = ""  # the listener name the request came in on (Metadata answers with its endpoints)
    cluster_id: str = ""  # the cluster's id (/cluster/id), for Metadata
    auto_create: AutoCreateConfig = AutoCreateConfig()  # the broker's topic auto-creation settings, for Metadata
    principal: str = "User:ANONYMOUS"  # the connection's KafkaPrincipal (an SSL client certificate's DN), for ACLs


@attrs.frozen(slots=True)
class ApiSpec:
    """One Kafka API as this broker serves (and, for ``request_type``, sends) it.

    ``request_from_wire(version, body, ctx)``: the decoded request body → the internal request the route handles.
    ``response_to_wire(version, response)``: the route's internal response → the response body at that version.
    ``error_response(version, body, error_code)``: the whole answer with every item failed with ``error_code``
    (Kafka's ``AbstractRequest.getErrorResponse``), used when the request cannot be handled (a converter raised, the
    route is gone). ``reply_expected(version, body)``: False for requests Kafka never answers (Produce with acks=0).
``failed(response)``, for such a request: whether its route's internal answer is an error, on which the connection
is closed instead (KafkaApis.handleProduceRequest's closeConnection for acks=0); None: the route never answers it.
``edge_task(response)``: work an answer asks an edge to do after it is sent, as (edge handler name, request), run
on that handler's thread with no answer (Metadata's topic auto-creation); None when there is nothing to do.
    """

    api_key: int = attrs.field(converter=int)  # an ApiKeys member, kept as the plain int a header holds
    route: Route | str
    request_from_wire: Callable[[int, dict[str, Any], RequestContext], Any]
    response_to_wire: Callable[[int, Any], dict[str, Any]]
    error_response: Callable[[int, dict[str, Any], int], dict[str, Any]]
    reply_expected: Callable[[int, dict[str, Any]], bool] | None = None
    failed: Callable[[Any], bool] | None = None
    edge_task: Callable[[Any], tuple[str, Any] | None] | None = None
    # outbound: only for the requests kactor itself sends
    request_type: type | None = None
    send_version: int | None = None
    request_to_wire: Callable[[Any], dict[str, Any]] | None = None
    response_from_wire: Callable[[int, dict[str, Any]], Any] | None = None
    client_id_of: Callable[[Any], str | None] | None = None  # the header's client id for a request (else the process')
    # the frames of a kactor-private key (kactor_private.PrivateBodyCodec: decode_request(payload) -> Request,
    # encode_response(key, version, corr, body), encode_request(header, body), decode_response(key, version, payload))
    body_codec: Any = None

    @property
    def name(self) -> str:
        r = API_VERSIONS.get(self.api_key)
        return r.name if r is not None else f"kactor-private-{self.api_key}"

    @property
    def edge_handler(self) -> str | None:
        """The edge handler's name for a route "edge:<name>", else None (the route is an actor)."""
        route = self.route
        return route[len(EDGE_ROUTE_PREFIX):] if isinstance(route, str) and route.startswith(EDGE_ROUTE_PREFIX) \
            else None

    def expects_reply(self, version: int, body: dict[str, Any]) -> bool:
        return True if self.reply_expected is None else self.reply_expected(version, body)

    def route_answers(self, version: int, body: dict[str, Any]) -> bool:
        """Whether the route answers the request: the client expects an answer, or the edge must see whether an
        unanswered request failed (``failed``)."""
        return self.failed is not None or self.expects_reply(version, body)


_BY_KEY: dict[int, ApiSpec] = {}
_BY_TYPE: dict[type, ApiSpec] = {}


def with_principal(from_wire: Callable[[int, dict[str, Any], RequestContext], Any]
                   ) -> Callable[[int, dict[str, Any], RequestContext], Any]:
    """``from_wire`` whose internal request also carries the connection's principal (its ``principal`` field), for
    the front that authorizes it."""
    def convert(version: int, body: dict[str, Any], ctx: RequestContext | None = None) -> Any:
        request = from_wire(version, body, ctx)
        return request if ctx is None else attrs.evolve(request, principal=ctx.principal)
    return convert


def register(spec: ApiSpec) -> None:
    """Serve ``spec.api_key`` with ``spec`` (and send ``spec.request_type`` with it). A key or request type
    registered twice by different specs is a programming error."""
    private = spec.api_key >= PRIVATE_API_KEY_MIN
    if private != (spec.body_codec is not None):
        raise ValueError(f"api key {spec.api_key}: a body_codec is for kactor-private keys (>= {PRIVATE_API_KEY_MIN})"
                         " and they need one")
    if not private and spec.api_key not in API_VERSIONS:
        raise ValueError(f"api key {spec.api_key} is not one Kafka 2.6 knows")
    old = _BY_KEY.get(spec.api_key)
    if old is not None and old != spec:
        raise ValueError(f"api key {spec.api_key} ({spec.name}) is registered twice")
    if spec.request_type is not None:
        if spec.send_version is None or spec.request_to_wire is None or spec.response_from_wire is None:
            raise ValueError(f"{spec.name}: an outbound spec needs send_version, request_to_wire and "
                             "response_from_wire")
        r = spec.body_codec if private else API_VERSIONS[spec.api_key]
        if not r.min_version <= spec.send_version <= r.max_version:
            raise ValueError(f"{spec.name}: send_version {spec.send_version} is outside {r.min_version}-"
                             f"{r.max_version}")
        other = _BY_TYPE.get(spec.request_type)
        if other is not None and other.api_key != spec.api_key:
            raise ValueError(f"{spec.request_type.__name__} is sent as both {other.name} and {spec.name}")
        _BY_TYPE[spec.request_type] = spec
    _BY_KEY[spec.api_key] = spec


def register_outbound(spec: ApiSpec) -> None:
    """Send ``spec.request_type`` as ``spec.api_key`` for an API whose serving side another module registers (or
    that this broker does not serve): WriteTxnMarkers, which the transaction coordinator sends and the partition
    leader's module serves. Only `spec_for_type` finds it."""
    if spec.request_type is None or spec.send_version is None or spec.request_to_wire is None \
            or spec.response_from_wire is None:
        raise ValueError(f"{spec.name}: an outbound spec needs request_type, send_version, request_to_wire and "
                         "response_from_wire")
    other = _BY_TYPE.get(spec.request_type)
    if other is not None and other != spec:
        raise ValueError(f"{spec.request_type.__name__} is sent by two specs")
    _BY_TYPE[spec.request_type] = spec


def spec_for_key(api_key: int) -> ApiSpec | None:
    return _BY_KEY.get(api_key)


def spec_for_type(request_type: type) -> ApiSpec | None:
    return _BY_TYPE.get(request_type)


def registered_keys() -> frozenset[int]:
    """The Kafka api keys served (what ApiVersions advertises): kactor-private keys are not."""
    return frozenset(k for k in _BY_KEY if k < PRIVATE_API_KEY_MIN)
