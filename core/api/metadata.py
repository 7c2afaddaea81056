"""Metadata (key 3, v0-9): KafkaApis.handleTopicMetadataRequest over the broker's MetadataCache, and its converters.

The replica manager holds the cache (fed by UpdateMetadata); the request is routed there. Brokers are answered with
their endpoint of the listener the request came in on; partitions as MetadataCache.getPartitionMetadata (leader epoch,
offline replicas, LEADER_NOT_AVAILABLE / REPLICA_NOT_AVAILABLE / LISTENER_NOT_FOUND).

Topic auto-creation (KafkaApis.getTopicMetadata / createTopic): a named topic the cache does not know is, when the
request allows it (``allow_auto_topic_creation``, always for v0-3) and the broker's ``auto.create.topics.enable``
(stamped into the request by the edge), answered LEADER_NOT_AVAILABLE and listed in the response's kactor-internal
``create_topics``; the edge writes it with AdminZkClient after the answer is sent (``edge_task`` → the "auto_create"
handler), as 2.6's request thread does before answering. The checks 2.6's create makes that decide the answer are
made here, purely: an illegal or colliding name is INVALID_TOPIC_EXCEPTION, ``default.replication.factor`` above the
live brokers INVALID_REPLICATION_FACTOR (once the cache knows any: before the first UpdateMetadata the edge's
AdminZkClient counts ZooKeeper's, as 2.6's does). The internal topics are created whatever the settings
(createInternalTopic, with their coordinator's settings: ``__consumer_offsets`` the group coordinator's offsets.topic.*,
``__transaction_state`` the transaction coordinator's transaction.state.log.*) once their replication factor's
brokers are alive; until then the answer is INVALID_REPLICATION_FACTOR (getTopicMetadata's translation of
createInternalTopic's COORDINATOR_NOT_AVAILABLE, which is FindCoordinator's answer) and nothing is created. A broker
that did not stamp ``transaction.state.log.replication.factor`` leaves an unknown ``__transaction_state``
UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

from typing import Any

import attrs

from core.api.registry import ApiSpec, ReplicaManagerService, RequestContext, register
from core.broker.metadata_cache import MetadataCache
from core.security.acl import CLUSTER_NAME, AclOperation, ResourceType
from core.security.authorizer import ALLOW_ALL, RequestAuthorizer
from messages import topic as topic_rules
from messages.common import NO_LEADER, Errors
from messages.metadata import (
    AUTHORIZED_OPERATIONS_OMITTED,
    CreatableTopic,
    MetadataBroker,
    MetadataPartition,
    MetadataRequest,
    MetadataResponse,
    MetadataTopic,
)
from protocol.api_versions import ApiKeys

# AclOperation codes; with no authorizer every operation a resource supports is authorized
# (KafkaApis.authorizedOperations, Authorizer absent)
_READ, _WRITE, _CREATE, _DELETE, _ALTER, _DESCRIBE, _CLUSTER_ACTION, _DESCRIBE_CONFIGS, _ALTER_CONFIGS, \
    _IDEMPOTENT_WRITE = 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
TOPIC_OPERATIONS = sum(1 << op for op in (_READ, _WRITE, _CREATE, _DELETE, _ALTER, _DESCRIBE, _DESCRIBE_CONFIGS,
                                          _ALTER_CONFIGS))
CLUSTER_OPERATIONS = sum(1 << op for op in (_CREATE, _ALTER, _DESCRIBE, _CLUSTER_ACTION, _DESCRIBE_CONFIGS,
                                            _ALTER_CONFIGS, _IDEMPOTENT_WRITE))


def request_from_wire(version: int, body: dict[str, Any], ctx: RequestContext) -> MetadataRequest:
    """MetadataRequest: v0's empty topic list means every topic; from v1 null means every topic, empty none."""
    raw = body.get("topics")
    topics = None if raw is None or (version == 0 and not raw) else tuple(t["name"] for t in raw)
    return MetadataRequest(topics, bool(body.get("allow_auto_topic_creation", True)), ctx.listener,
                           bool(body.get("include_cluster_authorized_operations", False)),
                           bool(body.get("include_topic_authorized_operations", False)), version, ctx.cluster_id,
                           ctx.auto_create, ctx.principal)


def unknown_topic(request: MetadataRequest, topic: str, known: set[str] | frozenset[str],
                  alive_brokers: int) -> tuple[MetadataTopic, CreatableTopic | None]:
    """KafkaApis.getTopicMetadata for a topic the cache does not know: its answer, and the topic to create if any
    (createTopic / createInternalTopic; the errors 2.6's AdminZkClient.createTopic would throw are decided here)."""
    internal = topic in topic_rules.INTERNAL_TOPICS
    ops = TOPIC_OPERATIONS if request.include_topic_authorized_operations else AUTHORIZED_OPERATIONS_OMITTED

    def answer(error: Errors) -> MetadataTopic:
        return MetadataTopic(topic, error, internal, (), ops)

    config = request.auto_create
    internal_rf = {topic_rules.GROUP_METADATA_TOPIC_NAME: config.offsets_topic_replication_factor,
                   topic_rules.TRANSACTION_STATE_TOPIC_NAME: config.transaction_topic_replication_factor}.get(topic)
    if internal_rf is not None:  # createInternalTopic, whatever auto.create.topics.enable says
        if alive_brokers < internal_rf:  # not created until that many brokers are alive
            return answer(Errors.INVALID_REPLICATION_FACTOR), None
        return answer(Errors.LEADER_NOT_AVAILABLE), CreatableTopic(topic, -1, -1)
    if internal or not (request.allow_auto_topic_creation and config.enable):
        return answer(Errors.UNKNOWN_TOPIC_OR_PARTITION), None
    unified = topic.replace(".", "_")  # Topic.unifyCollisionChars: AdminZkClient.validateTopicCreate's collision check
    if not topic_rules.is_valid(topic) or any(k.replace(".", "_") == unified for k in known):
        return answer(Errors.INVALID_TOPIC_EXCEPTION), None
    # AdminUtils.assignReplicasToBrokers over AdminZkClient.getBrokerMetadatas: ZooKeeper's brokers, which the cache
    # mirrors once the controller's first UpdateMetadata came. Before it (a broker just started, none alive in its
    # cache) the count is unknown here, not zero: the edge's AdminZkClient decides on ZooKeeper's (an existing topic
    # is TopicExistsException there, answered LEADER_NOT_AVAILABLE as here). Answered INVALID_REPLICATION_FACTOR
    # with no partitions, librdkafka took the topic for one of none and refreshed it only every
    # topic.metadata.refresh.interval.ms (300 s): a producer stalled that long.
    if 0 < alive_brokers < config.replication_factor:
        return answer(Errors.INVALID_REPLICATION_FACTOR), None
    return answer(Errors.LEADER_NOT_AVAILABLE), CreatableTopic(topic, config.num_partitions,
                                                               config.replication_factor)


def handle_metadata_request(cache: MetadataCache, request: MetadataRequest,
                            auth: RequestAuthorizer = ALLOW_ALL) -> MetadataResponse:
    """KafkaApis.handleTopicMetadataRequest (2.6): the requested topics the cache knows, each partition as
    getPartitionMetadata says; unknown ones as `unknown_topic` decides (auto-created, or UNKNOWN_TOPIC_OR_PARTITION);
    alive brokers with an endpoint on the request's listener; the controller id (-1 unknown); the cluster id.

    With an authorizer: a topic without DESCRIBE is left out of an all-topics answer and answered
    TOPIC_AUTHORIZATION_FAILED when named (its existence undisclosed); a topic to auto-create needs CREATE on the
    Cluster or on the topic, else it is answered TOPIC_AUTHORIZATION_FAILED; the authorized operations asked for are
    the principal's."""
    version = request.api_version
    listener = request.listener or None
    known = cache.get_all_topics()
    wanted = sorted(known) if request.topics is None else list(dict.fromkeys(request.topics))
    refused: list[MetadataTopic] = []
    if auth.enabled:
        describable = auth.filter(AclOperation.DESCRIBE, ResourceType.TOPIC, wanted)
        if request.topics is not None:
            refused_describe = [MetadataTopic(t, Errors.TOPIC_AUTHORIZATION_FAILED) for t in wanted
                                if t not in describable]
        else:
            refused_describe = []
        wanted = [t for t in wanted if t in describable]
        missing = [t for t in wanted if t not in known]
        if missing and request.allow_auto_topic_creation and request.auto_create.enable and \
                not auth.allows_cluster(AclOperation.CREATE):
            creatable = auth.filter(AclOperation.CREATE, ResourceType.TOPIC, missing)
            refused = [MetadataTopic(t, Errors.TOPIC_AUTHORIZATION_FAILED, t in topic_rules.INTERNAL_TOPICS)
                       for t in missing if t not in creatable]
            wanted = [t for t in wanted if t in known or t in creatable]
        refused += refused_describe
    by_topic: dict[str, list[MetadataPartition]] = {}
    for pm in cache.get_topic_metadata([t for t in wanted if t in known], listener,
                                       error_unavailable_endpoints=version == 0,
                                       error_unavailable_listeners=version >= 6):
        by_topic.setdefault(pm.topic_partition.topic, []).append(MetadataPartition(
            pm.topic_partition.partition, pm.error, pm.leader, pm.leader_epoch, pm.replicas, pm.isr,
            pm.offline_replicas))
    alive = cache.get_alive_brokers()
    topics: list[MetadataTopic] = []
    create: list[CreatableTopic] = []
    for t in wanted:
        if t in known:
            topic_ops = AUTHORIZED_OPERATIONS_OMITTED if not request.include_topic_authorized_operations else \
                auth.authorized_operations(ResourceType.TOPIC, t) if auth.enabled else TOPIC_OPERATIONS
            topics.append(MetadataTopic(t, Errors.NONE, t in topic_rules.INTERNAL_TOPICS, tuple(by_topic.get(t, ())),
                                        topic_ops))
            continue
        answer, creatable = unknown_topic(request, t, known, len(alive))
        if auth.enabled and request.include_topic_authorized_operations:
            answer = attrs.evolve(answer, topic_authorized_operations=auth.authorized_operations(ResourceType.TOPIC, t))
        topics.append(answer)
        if creatable is not None:
            create.append(creatable)
    topics += refused
    brokers = []
    for b in sorted(alive, key=lambda b: b.id):
        ep = next((e for e in b.endpoints if listener is None or e.listener_name == listener), None)
        if ep is not None:
            brokers.append(MetadataBroker(b.id, ep.host, ep.port, b.rack))
    controller = cache.get_controller_id()
    cluster_ops = AUTHORIZED_OPERATIONS_OMITTED if not request.include_cluster_authorized_operations else \
        auth.authorized_operations(ResourceType.CLUSTER, CLUSTER_NAME) if auth.enabled else CLUSTER_OPERATIONS
    return MetadataResponse(tuple(brokers), request.cluster_id or None, NO_LEADER if controller is None else controller,
                            tuple(topics), 0, cluster_ops, tuple(create))


def response_to_wire(version: int, response: MetadataResponse) -> dict[str, Any]:
    brokers = []
    for b in response.brokers:
        broker: dict[str, Any] = {"node_id": b.node_id, "host": b.host, "port": b.port}
        if version >= 1:
            broker["rack"] = b.rack
        brokers.append(broker)
    topics = []
    for t in response.topics:
        partitions = []
        for p in t.partitions:
            part: dict[str, Any] = {"error_code": int(p.error), "partition_index": p.partition_index,
                                    "leader_id": p.leader, "replica_nodes": list(p.replicas), "isr_nodes": list(p.isr)}
            if version >= 7:
                part["leader_epoch"] = p.leader_epoch
            if version >= 5:
                part["offline_replicas"] = list(p.offline_replicas)
            partitions.append(part)
        topic: dict[str, Any] = {"error_code": int(t.error), "name": t.name, "partitions": partitions}
        if version >= 1:
            topic["is_internal"] = t.is_internal
        if version >= 8:
            topic["topic_authorized_operations"] = t.topic_authorized_operations
        topics.append(topic)
    body: dict[str, Any] = {"brokers": brokers, "topics": topics}
    if version >= 1:
        body["controller_id"] = response.controller_id
    if version >= 2:
        body["cluster_id"] = response.cluster_id
    if version >= 3:
        body["throttle_time_ms"] = response.throttle_time_ms
    if version >= 8:
        body["cluster_authorized_operations"] = response.cluster_authorized_operations
    return body


def error_response(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    """MetadataRequest.getErrorResponse: every requested topic with ``error``, no brokers, no controller."""
    raw = body.get("topics") or []
    topics = tuple(MetadataTopic(t["name"], Errors(error)) for t in raw)
    return response_to_wire(version, MetadataResponse((), None, NO_LEADER, topics))


def response_from_wire(version: int, body: dict[str, Any]) -> MetadataResponse:
    """The answer to a Metadata request kactor sends (its tools and tests)."""
    brokers = tuple(MetadataBroker(b["node_id"], b["host"], b["port"], b.get("rack")) for b in body["brokers"])
    topics = tuple(
        MetadataTopic(t["name"], Errors(t["error_code"]), t.get("is_internal", False), tuple(
            MetadataPartition(p["partition_index"], Errors(p["error_code"]), p["leader_id"], p.get("leader_epoch", -1),
                              tuple(p["replica_nodes"]), tuple(p["isr_nodes"]), tuple(p.get("offline_replicas", ())))
            for p in t["partitions"]), t.get("topic_authorized_operations", AUTHORIZED_OPERATIONS_OMITTED))
        for t in body["topics"])
    return MetadataResponse(brokers, body.get("cluster_id"), body.get("controller_id", NO_LEADER), topics,
                            body.get("throttle_time_ms", 0),
                            body.get("cluster_authorized_operations", AUTHORIZED_OPERATIONS_OMITTED))


SEND_VERSION = 9


def request_to_wire(request: MetadataRequest) -> dict[str, Any]:
    """Metadata v9 as kactor's tools send it."""
    return {"topics": None if request.topics is None else [{"name": t} for t in request.topics],
            "allow_auto_topic_creation": request.allow_auto_topic_creation,
            "include_cluster_authorized_operations": request.include_cluster_authorized_operations,
            "include_topic_authorized_operations": request.include_topic_authorized_operations}


AUTO_CREATE_HANDLER = "auto_create"


def edge_task(response: MetadataResponse) -> tuple[str, tuple[CreatableTopic, ...]] | None:
    """The topics the answer promised to create, for the "auto_create" edge handler."""
    return (AUTO_CREATE_HANDLER, response.create_topics) if response.create_topics else None


SPEC = ApiSpec(ApiKeys.METADATA, ReplicaManagerService(from_cache=handle_metadata_request), request_from_wire,
               response_to_wire, error_response, edge_task=edge_task, request_type=MetadataRequest,
               send_version=SEND_VERSION, request_to_wire=request_to_wire, response_from_wire=response_from_wire)
register(SPEC)
