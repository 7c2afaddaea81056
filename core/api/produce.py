"""Produce (key 0, v0-8) both ways: client requests to the replica manager, and kactor's own tools' requests.

v3+ carry v2 record batches, passed on as received (the leader's log checks them: CRC-32C, codec, record count —
a corrupt batch is that partition's CORRUPT_MESSAGE). v0-2 carry message sets of magic v0/v1: converted here to the
v2 batch a 2.6 broker appends (LogValidator's conversion, ``protocol.legacy_records.to_batch``); a message set that
cannot be read (bad CRC-32, cut short, unknown codec) is that partition's error, never a closed connection.
acks=0 is never answered (Kafka's producer does not wait for it), but the replica manager's answer still reaches
the edge: an error in it closes the connection (KafkaApis.handleProduceRequest: closeConnection, so the producer
notices and refreshes its metadata), a clean one is dropped (sendNoOpResponseExemptThrottle).
"""

from __future__ import annotations

from typing import Any

import attrs

from core.api.registry import ApiSpec, ReplicaManagerService, RequestContext, register
from core.broker.shards import ShardedRequest, answers_of, by_shard, in_request_order
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import Authorized, RequestAuthorizer, allowed
from messages.common import Errors, TopicPartition, wire_topic_partition
from messages.replication import ProducePartition, ProducePartitionResponse, ProduceRequest, ProduceResponse
from messages.topic import INTERNAL_TOPICS
from protocol import compression
from protocol.api_versions import ApiKeys
from protocol.errors import ProtocolError
from protocol.legacy_records import deep_messages, iter_messages, to_batch
from protocol.records import TRANSACTIONAL_BIT, first_batch_size

_ATTRIBUTES_AT = 21  # a v2 batch header's attributes (DefaultRecordBatch.ATTRIBUTES_OFFSET)

SEND_VERSION = 8
FIRST_BATCH_VERSION = 3  # Produce v3+: record batches of magic v2 only


def legacy_to_batch(records: bytes) -> tuple[bytes, Errors]:
    """A v0/v1 message set as the v2 batch the log appends (offsets from 0: the leader assigns them), keeping the
    producer's codec; ``(b"", error)`` when it cannot be read (LogValidator: CorruptRecordException →
    CORRUPT_MESSAGE, InvalidRecordException → INVALID_RECORD, UNSUPPORTED_COMPRESSION_TYPE)."""
    try:
        codec = next((m.compression for m in iter_messages(records) if m.compression), compression.NONE)
        return to_batch(deep_messages(records), 0, codec), Errors.NONE
    except ProtocolError as e:
        return b"", Errors(e.error_code)


def _whole_first_batch(records: bytes) -> bool:
    """Whether ``records`` begin with a whole batch holding a v2 header's attributes: bytes that hold none have no
    batch to be transactional or idempotent (2.6.3's RequestUtils.hasTransactionalRecords / hasIdempotentRecords
    see none; validation answers INVALID_RECORD)."""
    size = first_batch_size(records)
    return size is not None and size >= _ATTRIBUTES_AT + 2


def _is_transactional(records: bytes) -> bool:
    """Whether the first batch of a partition's records (v2: a produce carries one) has the transactional bit."""
    return _whole_first_batch(records) and bool(
        int.from_bytes(records[_ATTRIBUTES_AT:_ATTRIBUTES_AT + 2], "big") & TRANSACTIONAL_BIT)


_PRODUCER_ID_AT = 43  # a v2 batch's producerId (after baseOffset .. maxTimestamp): -1 when it has none


def _has_producer_id(records: bytes) -> bool:
    """RecordBatch.hasProducerId of a partition's first batch: an idempotent (or transactional) producer's."""
    return _whole_first_batch(records) and len(records) >= _PRODUCER_ID_AT + 8 and int.from_bytes(
        records[_PRODUCER_ID_AT:_PRODUCER_ID_AT + 8], "big", signed=True) >= 0


ADMIN_CLIENT_ID = "__admin_client"  # AdminUtils.AdminClientId


def refuse_internal_topics(request: ProduceRequest, client_id: str) -> ProduceRequest:
    """ReplicaManager.appendToLocalLog with internalTopicsAllowed = (the header's client id is AdminClientId): else
    each partition of an internal topic (Topic.InternalTopics; only the coordinators append to them, in-process) is
    answered INVALID_TOPIC_EXCEPTION ("Cannot append to internal topic") and nothing is appended to it."""
    if client_id == ADMIN_CLIENT_ID or not any(pp.tp.topic in INTERNAL_TOPICS for pp in request.partitions):
        return request
    return attrs.evolve(request, partitions=tuple(
        attrs.evolve(pp, records=b"", error=Errors.INVALID_TOPIC_EXCEPTION) if pp.tp.topic in INTERNAL_TOPICS else pp
        for pp in request.partitions))


def authorize(request: ProduceRequest, auth: RequestAuthorizer) -> Authorized:
    """`authorize_produce` for the request front: a refused partition is answered with the others."""
    return allowed(authorize_produce(request, auth))


def authorize_produce(request: ProduceRequest, auth: RequestAuthorizer) -> ProduceRequest:
    """KafkaApis.handleProduceRequest's authorization: transactional records need WRITE on the TransactionalId
    (else every partition answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED), other idempotent records IDEMPOTENT_WRITE
    on the Cluster (else CLUSTER_AUTHORIZATION_FAILED); then a partition of a topic without WRITE answers
    TOPIC_AUTHORIZATION_FAILED and nothing of it is appended. The partitions keep the request's order."""
    if not auth.enabled or request.coordinator or any(
            p.error == Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED for p in request.partitions):
        return request  # request_from_wire's refusal of transactional records without a transactional id stands
    records = [p.records for p in request.partitions]
    whole: Errors | None = None
    if any(_is_transactional(r) for r in records):
        if request.transactional_id is None or not auth.allows(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                                                               request.transactional_id):
            whole = Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    elif any(_has_producer_id(r) for r in records) and not auth.allows_cluster(AclOperation.IDEMPOTENT_WRITE):
        whole = Errors.CLUSTER_AUTHORIZATION_FAILED
    if whole is not None:
        return attrs.evolve(request, partitions=tuple(ProducePartition(p.tp, b"", whole) for p in request.partitions))
    allowed = auth.filter(AclOperation.WRITE, ResourceType.TOPIC, (p.tp.topic for p in request.partitions))
    return attrs.evolve(request, partitions=tuple(
        p if p.tp.topic in allowed else ProducePartition(p.tp, b"", Errors.TOPIC_AUTHORIZATION_FAILED)
        for p in request.partitions))


def request_from_wire(version: int, body: dict[str, Any], ctx: RequestContext) -> ProduceRequest:
    """KafkaApis.handleProduceRequest's admission too: transactional records from a request without a
    ``transactional_id`` are TRANSACTIONAL_ID_AUTHORIZATION_FAILED (``authorize`` of a null transactional id fails:
    every partition of the request answers it and nothing is appended). With one, they are appended as any
    idempotent batch (2.6 checks neither acks nor that AddPartitionsToTxn named the partition)."""
    if version >= FIRST_BATCH_VERSION and body.get("transactional_id") is None and any(
            _is_transactional(p["records"] or b"") for t in body["topic_data"] for p in t["partition_data"]):
        return ProduceRequest(body["acks"], body["timeout_ms"], tuple(
            ProducePartition(TopicPartition(t["name"], p["index"]), b"", Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
            for t in body["topic_data"] for p in t["partition_data"]), None, principal=ctx.principal)
    partitions = []
    for topic in body["topic_data"]:
        name = topic["name"]
        for p in topic["partition_data"]:
            tp = wire_topic_partition(name, p["index"])
            records = p["records"] or b""
            if version < FIRST_BATCH_VERSION:
                batch, error = legacy_to_batch(records)
                partitions.append(ProducePartition(tp, batch, error))
            else:
                partitions.append(ProducePartition(tp, records))
    return ProduceRequest(body["acks"], body["timeout_ms"], tuple(partitions), body.get("transactional_id"),
                          principal=ctx.principal)


def reply_expected(version: int, body: dict[str, Any]) -> bool:
    return bool(body["acks"] != 0)


def failed(response: ProduceResponse) -> bool:
    """handleProduceRequest's ``errorInResponse``: some partition was answered with an error."""
    return any(p.error != Errors.NONE for p in response.partitions)


def response_to_wire(version: int, response: ProduceResponse) -> dict[str, Any]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for p in response.partitions:
        part: dict[str, Any] = {"index": p.tp.partition, "error_code": int(p.error), "base_offset": p.base_offset}
        if version >= 2:
            part["log_append_time_ms"] = p.log_append_time_ms
        if version >= 5:
            part["log_start_offset"] = p.log_start_offset
        if version >= 8:
            part["record_errors"] = [{"batch_index": i, "batch_index_error_message": m} for i, m in p.record_errors]
            part["error_message"] = p.error_message
        topics.setdefault(p.tp.topic, []).append(part)
    body: dict[str, Any] = {"responses": [{"name": t, "partition_responses": parts} for t, parts in topics.items()]}
    if version >= 1:
        body["throttle_time_ms"] = response.throttle_time_ms
    return body


def error_response(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    """ProduceRequest.getErrorResponse: every partition of the request with ``error``."""
    return response_to_wire(version, ProduceResponse(tuple(
        ProducePartitionResponse(wire_topic_partition(t["name"], p["index"]), Errors(error))
        for t in body["topic_data"] for p in t["partition_data"])))


def request_to_wire(request: ProduceRequest) -> dict[str, Any]:
    """Produce v8 as kactor's tools send it (record batches as given)."""
    topics: dict[str, list[dict[str, Any]]] = {}
    for p in request.partitions:
        topics.setdefault(p.tp.topic, []).append({"index": p.tp.partition, "records": p.records})
    return {"transactional_id": request.transactional_id, "acks": request.acks, "timeout_ms": request.timeout_ms,
            "topic_data": [{"name": t, "partition_data": parts} for t, parts in topics.items()]}


def response_from_wire(version: int, body: dict[str, Any]) -> ProduceResponse:
    return ProduceResponse(tuple(
        ProducePartitionResponse(wire_topic_partition(t["name"], p["index"]), Errors(p["error_code"]), p["base_offset"],
                                 p.get("log_append_time_ms", -1), p.get("log_start_offset", -1),
                                 tuple((e["batch_index"], e["batch_index_error_message"])
                                       for e in p.get("record_errors", ())), p.get("error_message"))
        for t in body["responses"] for p in t["partition_responses"]), body.get("throttle_time_ms", 0))


def split(request: ProduceRequest, shards: int) -> dict[int, ProduceRequest]:
    groups = by_shard(request.partitions, lambda pp: pp.tp, shards)
    if len(groups) == 1:  # one shard holds every partition: the request itself (no attrs.evolve per produce)
        return {i: request for i in groups}
    return {i: attrs.evolve(request, partitions=tuple(parts)) for i, parts in sorted(groups.items())}


def merge(request: ProduceRequest, parts: dict[int, ProduceResponse]) -> ProduceResponse:
    return ProduceResponse(tuple(in_request_order((pp.tp for pp in request.partitions),
                                                  (r for a in answers_of(parts) for r in a.partitions))))


def error(request: ProduceRequest, code: Errors) -> ProduceResponse:
    return ProduceResponse(tuple(ProducePartitionResponse(pp.tp, code) for pp in request.partitions))


SHARDED = ShardedRequest(ProduceRequest, split, merge, error,
                         lambda rm, part, now_ms, reply: rm.handle_produce(part, now_ms, reply))


SPEC = ApiSpec(ApiKeys.PRODUCE, ReplicaManagerService(SHARDED, by_client_id=refuse_internal_topics), request_from_wire,
               response_to_wire, error_response, reply_expected=reply_expected, failed=failed,
               request_type=ProduceRequest, authorize=authorize, send_version=SEND_VERSION,
               request_to_wire=request_to_wire, response_from_wire=response_from_wire)
register(SPEC)
