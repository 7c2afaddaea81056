"""DescribeProducers (61, v0; KIP-664, Kafka 3.0), beyond Kafka 2.6: the producers a partition replica's producer state
holds (KafkaApis.handleDescribeProducersRequest → ReplicaManager.activeProducerState → UnifiedLog.activeProducers),
served by the replica manager's shards; what kafka-transactions.sh's describe-producers, find-hanging and
abort --start-offset read. READ on the topic, else TOPIC_AUTHORIZATION_FAILED; a partition this broker has no log of
is UNKNOWN_TOPIC_OR_PARTITION (any replica answers, the leader or a follower)."""

from __future__ import annotations

from typing import Any

import attrs

from core.api.registry import ApiSpec, ReplicaManagerService, RequestContext, register, with_principal
from core.api.topic_groups import error_of, group_by_topic
from core.broker.shards import ShardedRequest, answers_of, by_shard, in_request_order
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import Authorized, RequestAuthorizer, allowed, refused
from messages.common import Errors, TopicPartition
from messages.transaction_admin import (
    DescribeProducersPartition,
    DescribeProducersRequest,
    DescribeProducersResponse,
    ProducerStateView,
)
from protocol.api_versions import ApiKeys


def request_from_wire(version: int, body: dict[str, Any], ctx: RequestContext | None = None
                      ) -> DescribeProducersRequest:
    return DescribeProducersRequest(tuple(TopicPartition(t["name"], p) for t in body["topics"]
                                          for p in t["partition_indexes"]))


def _tp(p: DescribeProducersPartition) -> TopicPartition:
    return p.tp


def response_to_wire(version: int, response: DescribeProducersResponse) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "topics": [
        {"name": topic, "partitions": [
            {"partition_index": p.tp.partition, "error_code": int(p.error), "error_message": p.error_message,
             "active_producers": [{"producer_id": s.producer_id, "producer_epoch": s.producer_epoch,
                                   "last_sequence": s.last_sequence, "last_timestamp": s.last_timestamp,
                                   "coordinator_epoch": s.coordinator_epoch,
                                   "current_txn_start_offset": s.current_txn_start_offset}
                                  for s in p.active_producers]} for p in parts]}
        for topic, parts in group_by_topic(response.partitions, _tp)]}


def error_response(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    e = error_of(error)
    return response_to_wire(version, DescribeProducersResponse(tuple(
        DescribeProducersPartition(TopicPartition(t["name"], p), e)
        for t in body.get("topics") or [] for p in t["partition_indexes"])))


def authorize(request: DescribeProducersRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleDescribeProducersRequest: READ on each topic, else TOPIC_AUTHORIZATION_FAILED."""
    topics = auth.filter(AclOperation.READ, ResourceType.TOPIC, (tp.topic for tp in request.partitions))
    denied = tuple(DescribeProducersPartition(tp, Errors.TOPIC_AUTHORIZATION_FAILED) for tp in request.partitions
                   if tp.topic not in topics)
    if not denied:
        return allowed(request)
    rest = tuple(tp for tp in request.partitions if tp.topic in topics)
    if not rest:
        return refused(DescribeProducersResponse(denied))
    return allowed(attrs.evolve(request, partitions=rest), lambda r: attrs.evolve(r, partitions=denied + r.partitions))


def active_producer_state(rm: Any, tp: TopicPartition) -> DescribeProducersPartition:
    """ReplicaManager.activeProducerState → Partition.activeProducerState: every producer of the replica's log
    (getPartitionOrError: UNKNOWN_TOPIC_OR_PARTITION when not hosted, KAFKA_STORAGE_ERROR when its dir is offline,
    NOT_LEADER_OR_FOLLOWER without a log)."""
    hosted = rm.get_partition(tp)
    if hosted is None:
        return DescribeProducersPartition(tp, Errors.UNKNOWN_TOPIC_OR_PARTITION)
    log = getattr(hosted, "log", None)
    if not hasattr(hosted, "log"):
        return DescribeProducersPartition(tp, Errors.KAFKA_STORAGE_ERROR)
    if log is None:
        return DescribeProducersPartition(tp, Errors.NOT_LEADER_OR_FOLLOWER)
    return DescribeProducersPartition(tp, Errors.NONE, tuple(
        ProducerStateView(pid, e.producer_epoch, e.last_seq, e.last_timestamp, e.coordinator_epoch,
                          -1 if e.current_txn_first_offset is None else e.current_txn_first_offset)
        for pid, e in sorted(log.producer_state.producers.items())))


def handle(rm: Any, request: DescribeProducersRequest, now_ms: float, reply: Any) -> Any:
    return DescribeProducersResponse(tuple(active_producer_state(rm, tp) for tp in request.partitions))
    yield  # a procedure, as every shard handler: it answers at once


def split(request: DescribeProducersRequest, shards: int) -> dict[int, DescribeProducersRequest]:
    return {i: attrs.evolve(request, partitions=tuple(parts))
            for i, parts in sorted(by_shard(request.partitions, lambda tp: tp, shards).items())}


def merge(request: DescribeProducersRequest, parts: dict[int, DescribeProducersResponse]
          ) -> DescribeProducersResponse:
    return DescribeProducersResponse(tuple(in_request_order(request.partitions,
                                                            (r for a in answers_of(parts) for r in a.partitions))))


def error(request: DescribeProducersRequest, code: Errors) -> DescribeProducersResponse:
    return DescribeProducersResponse(tuple(DescribeProducersPartition(tp, code) for tp in request.partitions))


SHARDED = ShardedRequest(DescribeProducersRequest, split, merge, error, handle)

SPEC = ApiSpec(ApiKeys.DESCRIBE_PRODUCERS, ReplicaManagerService(SHARDED), with_principal(request_from_wire),
               response_to_wire, error_response, request_type=DescribeProducersRequest, authorize=authorize)
register(SPEC)
