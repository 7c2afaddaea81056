"""WriteTxnMarkers (key 27, v0): a transaction coordinator's COMMIT / ABORT markers, appended by the partitions'
leaders (``KafkaApis.handleWriteTxnMarkersRequest`` → ``ReplicaManager.appendRecords`` with origin Coordinator,
acks=-1), served by the replica manager over its shards. The coordinator's side sends it with ``request_to_wire``
and reads the answer with ``response_from_wire`` (``TransactionMarkerChannelManager``).

The request names, per producer, its epoch, COMMIT (``transaction_result`` true) or ABORT, the coordinator's epoch
and the partitions to mark; the answer an error per (producer, partition). A request split over shards gives each
shard the markers' partitions it hosts (a marker naming none of them is left out of that shard's part).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core.api.registry import ApiSpec, ReplicaManagerService, RequestContext, register, with_principal
from core.api.topic_groups import error_of, group_by_topic
from core.broker.shards import ShardedRequest, answers_of, shard_of
from core.security.acl import AclOperation
from core.security.authorizer import Authorized, RequestAuthorizer, allowed, refused
from messages.common import Errors, TopicPartition
from messages.txn_markers import (
    TxnMarkerEntry,
    TxnMarkerPartitionResult,
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
)
from protocol.api_versions import ApiKeys

SEND_VERSION = 0  # the only version 2.6 has


def _tp(tp: TopicPartition) -> TopicPartition:
    return tp


def _topics(partitions: Iterable[TopicPartition]) -> list[dict[str, Any]]:
    return [{"name": topic, "partition_indexes": [tp.partition for tp in tps]}
            for topic, tps in group_by_topic(partitions, _tp)]


def request_from_wire(version: int, body: dict[str, Any], ctx: RequestContext | None = None
                      ) -> WriteTxnMarkersRequest:
    return WriteTxnMarkersRequest(tuple(
        TxnMarkerEntry(m["producer_id"], m["producer_epoch"], bool(m["transaction_result"]), m["coordinator_epoch"],
                       tuple(TopicPartition(t["name"], p) for t in m["topics"] for p in t["partition_indexes"]))
        for m in body.get("markers") or ()))


def request_to_wire(request: WriteTxnMarkersRequest) -> dict[str, Any]:
    return {"markers": [{"producer_id": m.producer_id, "producer_epoch": m.producer_epoch,
                         "transaction_result": m.committed, "topics": _topics(m.partitions),
                         "coordinator_epoch": m.coordinator_epoch} for m in request.markers]}


def _by_producer(results: Iterable[TxnMarkerPartitionResult]) -> dict[int, list[TxnMarkerPartitionResult]]:
    out: dict[int, list[TxnMarkerPartitionResult]] = {}
    for r in results:
        out.setdefault(r.producer_id, []).append(r)
    return out


def response_to_wire(version: int, response: WriteTxnMarkersResponse) -> dict[str, Any]:
    """WriteTxnMarkersResponse: one entry per producer (Kafka's map by producer id), its partitions by topic."""
    return {"markers": [
        {"producer_id": pid, "topics": [
            {"name": topic, "partitions": [{"partition_index": r.tp.partition, "error_code": int(r.error)}
                                           for r in rs]}
            for topic, rs in group_by_topic(results, lambda r: r.tp)]}
        for pid, results in _by_producer(response.results).items()]}


def response_from_wire(version: int, body: dict[str, Any]) -> WriteTxnMarkersResponse:
    return WriteTxnMarkersResponse(tuple(
        TxnMarkerPartitionResult(m["producer_id"], TopicPartition(t["name"], p["partition_index"]),
                                 error_of(p["error_code"]))
        for m in body.get("markers") or () for t in m["topics"] for p in t["partitions"]))


def error(request: WriteTxnMarkersRequest, code: Errors) -> WriteTxnMarkersResponse:
    """Every (producer, partition) of ``request`` failed with ``code``."""
    return WriteTxnMarkersResponse(tuple(TxnMarkerPartitionResult(m.producer_id, tp, code)
                                         for m in request.markers for tp in m.partitions))


def error_response(version: int, body: dict[str, Any], code: int) -> dict[str, Any]:
    """WriteTxnMarkersRequest.getErrorResponse."""
    return response_to_wire(version, error(request_from_wire(version, body), error_of(code)))


def authorize(request: WriteTxnMarkersRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleWriteTxnMarkersRequest's authorizeClusterOperation(CLUSTER_ACTION): else every marker's
    partitions answer CLUSTER_AUTHORIZATION_FAILED and nothing is written."""
    if auth.allows_cluster(AclOperation.CLUSTER_ACTION):
        return allowed(request)
    return refused(WriteTxnMarkersResponse(tuple(TxnMarkerPartitionResult(m.producer_id, tp,
                                                                          Errors.CLUSTER_AUTHORIZATION_FAILED)
                                                 for m in request.markers for tp in m.partitions)))


def split(request: WriteTxnMarkersRequest, shards: int) -> dict[int, WriteTxnMarkersRequest]:
    parts: dict[int, list[TxnMarkerEntry]] = {}
    for m in request.markers:
        by_shard: dict[int, list[TopicPartition]] = {}
        for tp in m.partitions:
            by_shard.setdefault(shard_of(tp, shards), []).append(tp)
        for i, tps in by_shard.items():
            parts.setdefault(i, []).append(TxnMarkerEntry(m.producer_id, m.producer_epoch, m.committed,
                                                          m.coordinator_epoch, tuple(tps)))
    return {i: WriteTxnMarkersRequest(tuple(ms)) for i, ms in sorted(parts.items())}


def merge(request: WriteTxnMarkersRequest, parts: dict[int, WriteTxnMarkersResponse]) -> WriteTxnMarkersResponse:
    """The shards' answers in the request's (producer, partition) order."""
    found = {(r.producer_id, r.tp): r for a in answers_of(parts) for r in a.results}
    return WriteTxnMarkersResponse(tuple(found[(m.producer_id, tp)] for m in request.markers for tp in m.partitions
                                         if (m.producer_id, tp) in found))


SHARDED = ShardedRequest(WriteTxnMarkersRequest, split, merge, error,
                         lambda rm, part, now_ms, reply: rm.handle_write_txn_markers(part, now_ms, reply))


SPEC = ApiSpec(ApiKeys.WRITE_TXN_MARKERS, ReplicaManagerService(SHARDED), with_principal(request_from_wire),
               response_to_wire, error_response, request_type=WriteTxnMarkersRequest, authorize=authorize,
               send_version=SEND_VERSION, request_to_wire=request_to_wire, response_from_wire=response_from_wire)
register(SPEC)
