"""The APIs this broker serves: one unit (``ApiSpec``) per Kafka API key, declared by the module of its API family,
and the one table that finds a unit by its api key or by the type of its internal request (or, for the replica
fetchers, of their answers).

A unit is the whole contract of an API (Redpanda's ``handler.h``, tansu's one service per API):

- its wire side: ``request_from_wire`` (decoded body → internal request), ``response_to_wire`` and
  ``error_response`` (Kafka's ``AbstractRequest.getErrorResponse``), and, for a request kactor itself sends,
  ``send_version``, ``request_to_wire`` and ``response_from_wire``;
- ``request_type``: the internal request the unit serves (and sends) — how an actor finds the unit of a request;
- ``service``: who serves it, one value — `ReplicaManagerService` (the replica manager's shards, or its whole
  MetadataCache), `CoordinatorService` (a coordinator's procedure), `ControllerService` (a KafkaController event),
  `AdminService` (an AdminManager method), or a route as it stands (``"edge:<handler>"``: a handler the
  composition root plugged into the edge, such as ApiVersions'; any other string: an actor's name, for tests' APIs);
- ``authorize``: KafkaApis' authorization of it (`core.security.authorizer.Authorized`), which the one request front
  (actors/request_front.py) runs for every actor, with ``ALLOW_ALL`` when the broker has no authorizer.

Kafka's ``KafkaApis.handle`` dispatches on the request's api key: the edge (edges/net/inbound.py) finds the unit with
`spec_for_key`, converts the body and routes it to ``route`` (the service's actor); the answer leaves through
``response_to_wire``. The requests kactor sends go the other way (`spec_for_type`). A key without a unit is neither
served nor advertised in ApiVersions. Adding an API is its module (its unit, registered) and one line in
core/api/__init__.py.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, ClassVar

import attrs

from core.broker.shards import ShardedRequest
from core.security.acl import AclOperation
from core.security.authorizer import Authorized, RequestAuthorizer
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


@attrs.frozen(slots=True)
class ReplicaManagerService:
    """Served by the replica manager (KafkaApis → ReplicaManager): over its shards (``sharded``), or by KafkaApis from
    its whole MetadataCache (``from_cache(cache, request, auth)``: Metadata). ``updates_cache``: the whole cache takes
    the request before the shards do (UpdateMetadata). ``by_client_id(request, client_id)``: the request as its
    header's client id lets it be served, before its authorization (Produce's internalTopicsAllowed)."""

    route: ClassVar[Route] = Route.REPLICA_MANAGER
    sharded: ShardedRequest | None = None
    from_cache: Callable[[Any, Any, RequestAuthorizer], Any] | None = None
    updates_cache: bool = False
    by_client_id: Callable[[Any, str], Any] | None = None


@attrs.frozen(slots=True)
class CoordinatorService:
    """Served by a coordinator's procedure (``handle(coordinator, request, reply_to)``, e.g.
    GroupCoordinator.handleJoinGroup); ``error(request, code)``: the whole internal answer failed with ``code``, sent
    when the procedure failed before answering."""

    route: Route
    handle: Callable[[Any, Any, Any], Any]
    error: Callable[[Any, Any], Any]


@attrs.frozen(slots=True)
class ControllerService:
    """Served by KafkaController's event queue: ``event(request)`` is put, and the event's result answers."""

    route: ClassVar[Route] = Route.CONTROLLER
    event: Callable[[Any], Any]


@attrs.frozen(slots=True)
class AdminService:
    """Served by the admin server (AdminManager, the "admin" edge handler, on its own thread): ``method`` names the
    AdminManager method serving the request (called with its version, body and RequestContext).
    ``cluster_operation``: KafkaApis' authorizeClusterOperation of the whole request, refused with the unit's error
    answer (CLUSTER_AUTHORIZATION_FAILED); ``config_operation``: the operation each config resource needs (on the
    Cluster for a broker, else on its topic), refused one by one in the answer's ``config_results`` list; otherwise
    the method authorizes what it serves."""

    route: ClassVar[str] = "edge:admin"
    method: str
    cluster_operation: AclOperation | None = None
    config_operation: AclOperation | None = None
    config_results: str = ""


def group_coordinator(handle: Callable[[Any, Any, Any], Any], error: Callable[[Any, Any], Any]) -> CoordinatorService:
    return CoordinatorService(Route.GROUP_COORDINATOR, handle, error)


def transaction_coordinator(handle: Callable[[Any, Any, Any], Any],
                            error: Callable[[Any, Any], Any]) -> CoordinatorService:
    return CoordinatorService(Route.TRANSACTION_COORDINATOR, handle, error)


Service = ReplicaManagerService | CoordinatorService | ControllerService | AdminService | Route | str


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
    """One Kafka API as this broker serves (and, with ``send_version``, sends) it: its unit (see the module's doc).

    ``request_from_wire(version, body, ctx)``: the decoded request body → the internal request the service handles.
    ``response_to_wire(version, response)``: the service's internal response → the response body at that version.
    ``error_response(version, body, error_code)``: the whole answer with every item failed with ``error_code``
    (Kafka's ``AbstractRequest.getErrorResponse``), used when the request cannot be handled (a converter raised, the
    route is gone). ``reply_expected(version, body)``: False for requests Kafka never answers (Produce with acks=0).
    ``failed(response)``, for such a request: whether its service's internal answer is an error, on which the
    connection is closed instead (KafkaApis.handleProduceRequest's closeConnection for acks=0); None: never answered.
    ``edge_task(response)``: work an answer asks an edge to do after it is sent, as (edge handler name, request), run
    on that handler's thread with no answer (Metadata's topic auto-creation); None when there is nothing to do.
    ``authorize(request, auth)``: KafkaApis' authorization of the internal request, run by the request front.
    """

    api_key: int = attrs.field(converter=int)  # an ApiKeys member, kept as the plain int a header holds
    service: Service
    request_from_wire: Callable[[int, dict[str, Any], RequestContext], Any]
    response_to_wire: Callable[[int, Any], dict[str, Any]]
    error_response: Callable[[int, dict[str, Any], int], dict[str, Any]]
    reply_expected: Callable[[int, dict[str, Any]], bool] | None = None
    failed: Callable[[Any], bool] | None = None
    edge_task: Callable[[Any], tuple[str, Any] | None] | None = None
    request_type: type | None = None  # the internal request served (the actors' lookup) and, if sent, sent
    authorize: Callable[[Any, RequestAuthorizer], Authorized] | None = None
    # outbound: only for the requests kactor itself sends
    send_version: int | None = None
    request_to_wire: Callable[[Any], dict[str, Any]] | None = None
    response_from_wire: Callable[[int, dict[str, Any]], Any] | None = None
    client_id_of: Callable[[Any], str | None] | None = None  # the header's client id for a request (else the process')
    # the request's body at send_version as bytes, where the API encodes it itself (else request_to_wire's dict goes
    # through the generated encoder): UpdateMetadata reuses the body every broker is sent with one batch
    request_body_bytes: Callable[[Any], bytes] | None = None
    # the answer to a request sent at send_version read straight from its frame (without its size) as (correlation id,
    # internal response), where the API reads it itself (Fetch: a follower reads one on every fetch); None for a frame
    # it does not take, which the generated decoder and response_from_wire then read (or refuse)
    response_from_bytes: Callable[[bytes | bytearray], tuple[int, Any] | None] | None = None
    # the frames of a kactor-private key (kactor_private.PrivateBodyCodec: decode_request(payload) -> Request,
    # encode_response(key, version, corr, body), encode_request(header, body), decode_response(key, version, payload))
    body_codec: Any = None

    @property
    def route(self) -> Route | str:
        """Where the service runs: a broker component (`Route`) or a route as it stands."""
        service = self.service
        return service if isinstance(service, Route | str) else service.route

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


# THE table: every unit by its api key, by its internal request type, and (a sharded unit) by its follower answer's
_UNITS: dict[int | type, ApiSpec] = {}


def with_principal(from_wire: Callable[[int, dict[str, Any], RequestContext], Any]
                   ) -> Callable[[int, dict[str, Any], RequestContext], Any]:
    """``from_wire`` whose internal request also carries the connection's principal (its ``principal`` field), for
    the front that authorizes it."""
    def convert(version: int, body: dict[str, Any], ctx: RequestContext | None = None) -> Any:
        request = from_wire(version, body, ctx)
        return request if ctx is None else attrs.evolve(request, principal=ctx.principal)
    return convert


def register(spec: ApiSpec) -> None:
    """Serve ``spec.api_key`` with ``spec`` (and send ``spec.request_type`` with it, given ``send_version``). A key or
    request type registered twice by different specs is a programming error."""
    private = spec.api_key >= PRIVATE_API_KEY_MIN
    if private != (spec.body_codec is not None):
        raise ValueError(f"api key {spec.api_key}: a body_codec is for kactor-private keys (>= {PRIVATE_API_KEY_MIN})"
                         " and they need one")
    if not private and spec.api_key not in API_VERSIONS:
        raise ValueError(f"api key {spec.api_key} is not one Kafka 2.6 knows")
    old = _UNITS.get(spec.api_key)
    if old is not None and old != spec:
        raise ValueError(f"api key {spec.api_key} ({spec.name}) is registered twice")
    if spec.send_version is not None or spec.request_to_wire is not None or spec.response_from_wire is not None:
        if spec.request_type is None or spec.send_version is None or spec.request_to_wire is None \
                or spec.response_from_wire is None:
            raise ValueError(f"{spec.name}: an outbound spec needs request_type, send_version, request_to_wire and "
                             "response_from_wire")
        r = spec.body_codec if private else API_VERSIONS[spec.api_key]
        if not r.min_version <= spec.send_version <= r.max_version:
            raise ValueError(f"{spec.name}: send_version {spec.send_version} is outside {r.min_version}-"
                             f"{r.max_version}")
    for t in _types_of(spec):
        other = _UNITS.get(t)
        if other is not None and other.api_key != spec.api_key:
            raise ValueError(f"{t.__name__} is served or sent as both {other.name} and {spec.name}")
    for t in _types_of(spec):
        _UNITS[t] = spec
    _UNITS[spec.api_key] = spec


def unregister(api_key: int) -> None:
    """Serve ``api_key`` no more (a test putting its own unit in place of a real one)."""
    spec = _UNITS.pop(api_key, None)
    if spec is not None:
        for t in _types_of(spec):
            if _UNITS.get(t) is spec:
                del _UNITS[t]


def _types_of(spec: ApiSpec) -> tuple[type, ...]:
    sharded = spec.service.sharded if isinstance(spec.service, ReplicaManagerService) else None
    return tuple(t for t in (spec.request_type, sharded and sharded.response_type) if t is not None)


def spec_for_key(api_key: int) -> ApiSpec | None:
    return _UNITS.get(api_key)


def spec_for_type(request_type: type) -> ApiSpec | None:
    """The unit kactor sends a ``request_type`` with (None: kactor does not send it)."""
    spec = _UNITS.get(request_type)
    return spec if spec is not None and spec.request_type is request_type and spec.send_version is not None \
        else None


def unit_of(request: Any) -> ApiSpec | None:
    """The unit serving ``request`` (by its type), or None."""
    spec = _UNITS.get(type(request))
    return spec if spec is not None and spec.request_type is type(request) else None


def coordinator_service_of(request: Any) -> CoordinatorService:
    """The coordinator's service for ``request`` (its procedure and error answer); TypeError for a request no
    coordinator serves."""
    spec = unit_of(request)
    if spec is None or not isinstance(spec.service, CoordinatorService):
        raise TypeError(f"no coordinator handles {type(request).__name__}")
    return spec.service


def sharded_unit_of(request: Any) -> ShardedRequest:
    """The replica manager's unit for ``request``; TypeError for a request its shards do not serve."""
    spec = _UNITS.get(type(request))
    service = None if spec is None or spec.request_type is not type(request) else spec.service
    if not isinstance(service, ReplicaManagerService) or service.sharded is None:
        raise TypeError(f"replica-manager cannot handle {type(request).__name__}")
    return service.sharded


def follower_unit_of(response: Any) -> ShardedRequest | None:
    """The replica manager's unit whose requests a shard's follower fetchers send, by the type of their answer."""
    spec = _UNITS.get(type(response))
    service = None if spec is None else spec.service
    if isinstance(service, ReplicaManagerService) and service.sharded is not None \
            and service.sharded.response_type is type(response):
        return service.sharded
    return None


def units() -> tuple[ApiSpec, ...]:
    """Every unit registered, once each, in api key order."""
    return tuple(_UNITS[k] for k in sorted(k for k in _UNITS if isinstance(k, int)))


def registered_keys() -> frozenset[int]:
    """The Kafka api keys served (what ApiVersions advertises): kactor-private keys are not."""
    return frozenset(k for k in _UNITS if isinstance(k, int) and k < PRIVATE_API_KEY_MIN)
