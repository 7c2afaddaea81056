"""Fetch (key 1, v0-11): consumers' and followers' fetches, served by the replica manager
(``KafkaApis.handleFetchRequest`` → ``ReplicaManager.fetchMessages``) and sent at v11 by the replica fetchers
(``ReplicaFetcherThread``, IBP 2.6).

Versions (FetchRequest.json): v3 adds the response-wide ``max_bytes`` (before: Int.MaxValue); v4 ``isolation_level``
and, in the response, ``last_stable_offset`` and ``aborted_transactions`` (READ_COMMITTED: read up to the last stable
offset, the aborted transactions overlapping what was read listed; READ_UNCOMMITTED: null); v5
``log_start_offset``; v7 fetch sessions (KIP-227: ``session_id`` / ``session_epoch`` / ``forgotten_topics_data``, a
top-level ``error_code``); v9 the fetcher's ``current_leader_epoch``; v11 ``rack_id`` and ``preferred_read_replica``
(KIP-392). Before v7 a request has no session: id 0, epoch -1 (``FetchMetadata.LEGACY``).

Which fetcher of a follower sent the request travels as Kafka's client id ``broker-<replica id>-fetcher-<fetcher id>``
(``ReplicaFetcherBlockingSend``): ``client_id_of`` writes it, ``request_from_wire`` reads it back.

Records are v2 batches as the log holds them. A v0-3 fetch gets them down-converted to message sets
(``KafkaApis.maybeConvertFetchedData`` / ``RecordsUtil.downConvert``): magic v0 for Fetch v0-1, v1 for v2-3; control
batches dropped, each batch's codec kept (one compressed wrapper per batch), headers dropped (v0/v1 have none),
LogAppendTime's timestamp kept. Unlike Kafka, the records of the first batch below the fetch offset are not cut off
(the response does not know the fetch offset): consumers skip offsets below their position, as Kafka's do. A fetch
below v10 of a partition holding zstd batches gets UNSUPPORTED_COMPRESSION_TYPE and no records (zstd needs Fetch v10,
KIP-110; 2.6 decides this from the topic's compression.type, here from the batches themselves).
"""

from __future__ import annotations

import operator
import re
import struct
from collections.abc import Iterable
from typing import Any

import attrs

from core.api.registry import ApiSpec, ReplicaManagerService, RequestContext, register
from core.api.topic_groups import error_of, group_by_topic
from core.broker.fetch_session import SESSION_ID_STRIDE
from core.broker.shards import ShardedRequest, SplitRefused, answers_of, by_shard, first_error, shard_of
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import ANONYMOUS, Authorized, RequestAuthorizer, allowed
from messages.common import Errors, TopicPartition, wire_topic_partition
from messages.replication import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    INVALID_SESSION_ID,
    NO_LEADER_EPOCH,
    AbortedTransaction,
    FetchPartition,
    FetchPartitionData,
    FetchRequest,
    FetchResponse,
)
from protocol import compression
from protocol.api_versions import ApiKeys
from protocol.errors import NullFieldError
from protocol.legacy_records import MAGIC_V0, MAGIC_V1, build_message, build_message_set
from protocol.legacy_records import TIMESTAMP_TYPE_BIT as LEGACY_LOG_APPEND_TIME
from protocol.records import TIMESTAMP_TYPE_BIT, iter_batches

SEND_VERSION = 11  # ReplicaFetcherThread at IBP >= KAFKA_2_3_IV1
DEFAULT_RESPONSE_MAX_BYTES = 2147483647  # FetchRequest's max_bytes before v3 (Int.MaxValue)
ZSTD_MIN_FETCH_VERSION = 10

_FETCHER_CLIENT_ID = re.compile(r"broker-(-?\d+)-fetcher-(\d+)")


def fetcher_client_id(replica_id: int, fetcher_id: int) -> str:
    """ReplicaFetcherBlockingSend's client id."""
    return f"broker-{replica_id}-fetcher-{fetcher_id}"


def client_id_of(request: FetchRequest) -> str | None:
    """A follower's fetch carries its fetcher's client id; a consumer fetch the process' own."""
    return fetcher_client_id(request.replica_id, request.fetcher_id) if request.replica_id >= 0 else None


# (replica id, client id) → fetcher id: a follower's fetchers send the same few client ids on every fetch, and the
# regular expression's match was a tenth of reading a fetch request
_FETCHER_IDS: dict[tuple[int, str], int] = {}
_FETCHER_IDS_MAX = 4096  # forgotten wholesale past this (client ids are the senders' to choose)


def _fetcher_id(replica_id: int, ctx: RequestContext | None) -> int:
    if ctx is None or replica_id < 0:
        return 0
    client_id = ctx.client_id or ""
    key = (replica_id, client_id)
    found = _FETCHER_IDS.get(key)
    if found is None:
        m = _FETCHER_CLIENT_ID.fullmatch(client_id)
        found = int(m.group(2)) if m is not None and int(m.group(1)) == replica_id else 0
        if len(_FETCHER_IDS) >= _FETCHER_IDS_MAX:
            _FETCHER_IDS.clear()
        _FETCHER_IDS[key] = found
    return found


def request_from_wire(version: int, body: dict[str, Any], ctx: RequestContext | None = None) -> FetchRequest:
    replica_id = body["replica_id"]
    forgotten = body.get("forgotten_topics_data")
    # positional, in FetchRequest's field order (keywords cost a name match per field, on every fetch)
    return FetchRequest(
        replica_id,
        tuple(FetchPartition(wire_topic_partition(t["topic"], p["partition"]), p["fetch_offset"],
                             p.get("current_leader_epoch", NO_LEADER_EPOCH), p.get("log_start_offset", -1),
                             p["partition_max_bytes"])
              for t in body["topics"] for p in t["partitions"]),
        body["max_wait_ms"], body["min_bytes"], body.get("max_bytes", DEFAULT_RESPONSE_MAX_BYTES),
        body.get("isolation_level", 0), body.get("session_id", INVALID_SESSION_ID),
        body.get("session_epoch", FINAL_EPOCH),
        tuple(wire_topic_partition(t["topic"], p) for t in forgotten for p in t["partitions"]) if forgotten else (),
        _fetcher_id(replica_id, ctx), body.get("rack_id", ""),
        version >= 11 and replica_id < 0,  # client_metadata: only a consumer's matters (fetchOnlyFromLeader)
        ctx.listener if ctx is not None else "",
        ctx.principal if ctx is not None else ANONYMOUS)


def authorize_fetch(request: FetchRequest, auth: RequestAuthorizer
                    ) -> tuple[FetchRequest, tuple[FetchPartitionData, ...]]:
    """KafkaApis.handleFetchRequest's authorization: a follower (replica id >= 0) needs CLUSTER_ACTION on the
    Cluster, else every partition answers TOPIC_AUTHORIZATION_FAILED; a consumer needs READ on each partition's topic.
    Returns the request of the partitions allowed and the answers of those refused (`with_refused` adds them).
    (The refused partitions do not enter a fetch session the request opens.)"""
    if not auth.enabled:
        return request, ()
    if request.replica_id >= 0:
        allowed: set[str] | None = None if auth.allows_cluster(AclOperation.CLUSTER_ACTION) else set()
    else:
        allowed = auth.filter(AclOperation.READ, ResourceType.TOPIC, (p.tp.topic for p in request.partitions))
    if allowed is None:
        return request, ()
    refused = tuple(FetchPartitionData(p.tp, Errors.TOPIC_AUTHORIZATION_FAILED) for p in request.partitions
                    if p.tp.topic not in allowed)
    if not refused:
        return request, ()
    return attrs.evolve(request, partitions=tuple(p for p in request.partitions if p.tp.topic in allowed)), refused


def with_refused(response: FetchResponse, refused: tuple[FetchPartitionData, ...]) -> FetchResponse:
    """KafkaApis' fetch answer: the erroneous partitions first, then the data read."""
    return attrs.evolve(response, partitions=refused + response.partitions) if refused else response


def authorize(request: FetchRequest, auth: RequestAuthorizer) -> Authorized:
    """`authorize_fetch` for the request front: the refused partitions are answered beside the others."""
    body, refused = authorize_fetch(request, auth)
    return allowed(body, (lambda r: with_refused(r, refused)) if refused else None)


def _tp(x: Any) -> TopicPartition:
    return x.tp if hasattr(x, "tp") else x


_partition_tp = operator.attrgetter("tp")  # a FetchPartition's or FetchPartitionData's, with no Python call


def request_to_wire(request: FetchRequest) -> dict[str, Any]:
    """The v11 body, partitions grouped by topic in order of first appearance."""
    return {
        "replica_id": request.replica_id, "max_wait_ms": request.max_wait_ms, "min_bytes": request.min_bytes,
        "max_bytes": request.max_bytes, "isolation_level": request.isolation_level,
        "session_id": request.session_id, "session_epoch": request.session_epoch,
        "topics": [{"topic": topic, "partitions": [
            {"partition": p.tp.partition, "current_leader_epoch": p.leader_epoch, "fetch_offset": p.fetch_offset,
             "log_start_offset": p.log_start_offset, "partition_max_bytes": p.partition_max_bytes} for p in parts]}
            for topic, parts in group_by_topic(request.partitions, _partition_tp)],
        "forgotten_topics_data": [{"topic": topic, "partitions": [tp.partition for tp in tps]}
                                  for topic, tps in group_by_topic(request.forgotten, _tp)],
        "rack_id": request.rack_id,
    }


# FetchRequest v11's fixed fields and a partition's (the generated encoder's structs for them)
_V11_HEAD = struct.Struct(">iiiibii")  # replica_id max_wait_ms min_bytes max_bytes isolation_level session_*
_V11_PARTITION = struct.Struct(">iiqqi")  # partition current_leader_epoch fetch_offset log_start_offset max_bytes
_I32 = struct.Struct(">i")
_I16 = struct.Struct(">h")
_NO_TOPICS = _I32.pack(0)


def request_body_bytes(request: FetchRequest) -> bytes:
    """The v11 body `request_to_wire` and the generated encoder make, written straight from the request: a follower
    sends one on every fetch, mostly with no partition or one, and the dicts and the encoder's checks of them cost more
    than the bytes (tests/core/api/test_fetch_wire.py holds the two to the same bytes)."""
    head = _V11_HEAD.pack(request.replica_id, request.max_wait_ms, request.min_bytes, request.max_bytes,
                          request.isolation_level, request.session_id, request.session_epoch)
    rack = request.rack_id
    if rack is None:
        raise NullFieldError("rack_id cannot be null")
    rack_bytes = rack.encode()
    partitions, forgotten = request.partitions, request.forgotten
    out = [head]
    if partitions:
        _write_groups(out, ((p.tp.topic, _V11_PARTITION.pack(p.tp.partition, p.leader_epoch, p.fetch_offset,
                                                              p.log_start_offset, p.partition_max_bytes))
                            for p in partitions))
    else:
        out.append(_NO_TOPICS)
    if forgotten:
        _write_groups(out, ((tp.topic, _I32.pack(tp.partition)) for tp in forgotten))
    else:
        out.append(_NO_TOPICS)
    out += (_I16.pack(len(rack_bytes)), rack_bytes)
    return b"".join(out)


def _write_groups(out: list[bytes], packed: Iterable[tuple[str, bytes]]) -> None:
    """A topics array of (topic, packed partition) pairs, grouped by topic in order of first appearance: its length,
    then each topic's name and its packed partitions."""
    groups: dict[str, list[bytes]] = {}
    for topic, one in packed:
        group = groups.get(topic)
        if group is None:
            groups[topic] = [one]
        else:
            group.append(one)
    out.append(_I32.pack(len(groups)))
    for topic, parts in groups.items():
        name = topic.encode()
        out += (_I16.pack(len(name)), name, _I32.pack(len(parts)), *parts)


# -- down-conversion (Fetch v0-3) ------------------------------------------------------------------------------------
def magic_for(version: int) -> int:
    """The message format a Fetch version reads: v0 for Fetch v0-1, v1 for v2-3, v2 from v4."""
    return MAGIC_V0 if version <= 1 else MAGIC_V1 if version <= 3 else 2


def down_convert(records: bytes, magic: int) -> bytes:
    """``RecordsUtil.downConvert``: v2 batches as a magic ``magic`` (0 or 1) message set, batch by batch."""
    out: list[bytes] = []
    for batch in iter_batches(records):
        if batch.is_control:
            continue
        log_append_time = bool(batch.attributes & TIMESTAMP_TYPE_BIT)
        messages = [(batch.base_offset + r.offset_delta,
                     batch.max_timestamp if log_append_time else batch.first_timestamp + r.timestamp_delta,
                     r.key, r.value) for r in batch.records()]
        if not messages:
            continue
        if batch.compression == compression.NONE:
            attributes = LEGACY_LOG_APPEND_TIME if log_append_time and magic == MAGIC_V1 else 0
            out += [build_message(o, k, v, magic=magic, timestamp=t, attributes=attributes) for o, t, k, v in messages]
        else:
            out.append(build_message_set(messages, magic=magic, codec=batch.compression))
    return b"".join(out)


def _has_zstd(records: bytes) -> bool:
    return any(b.compression == compression.ZSTD for b in iter_batches(records))


def _partition_to_wire(version: int, p: FetchPartitionData) -> dict[str, Any]:
    error, records = p.error, p.records
    if records and version < ZSTD_MIN_FETCH_VERSION and _has_zstd(records):
        error, records = Errors.UNSUPPORTED_COMPRESSION_TYPE, b""
    elif records and version <= 3:
        records = down_convert(records, magic_for(version))
    out: dict[str, Any] = {"partition_index": p.tp.partition, "error_code": int(error),
                           "high_watermark": p.high_watermark, "records": records}
    if version >= 4:
        out["last_stable_offset"] = p.last_stable_offset
        # READ_COMMITTED: the aborted transactions overlapping the records (a list, maybe empty); else null
        out["aborted_transactions"] = None if p.aborted_transactions is None else [
            {"producer_id": t.producer_id, "first_offset": t.first_offset} for t in p.aborted_transactions]
    if version >= 5:
        out["log_start_offset"] = p.log_start_offset
    if version >= 11:
        out["preferred_read_replica"] = p.preferred_read_replica
    return out


def response_to_wire(version: int, response: FetchResponse) -> dict[str, Any]:
    body: dict[str, Any] = {"responses": [
        {"topic": topic, "partitions": [_partition_to_wire(version, p) for p in parts]}
        for topic, parts in group_by_topic(response.partitions, _partition_tp)]}
    if version >= 1:
        body["throttle_time_ms"] = response.throttle_time_ms
    if version >= 7:
        body["error_code"] = int(response.error)
        body["session_id"] = response.session_id
    return body


def _aborted_from_wire(aborted: list[dict[str, Any]] | None) -> tuple[AbortedTransaction, ...] | None:
    return None if aborted is None else tuple(AbortedTransaction(t["producer_id"], t["first_offset"]) for t in aborted)


def response_from_wire(version: int, body: dict[str, Any]) -> FetchResponse:
    # FetchPartitionData's fields positionally (log_end_offset is not on the wire: -1), no keyword matched per partition
    return FetchResponse(
        tuple(FetchPartitionData(
            wire_topic_partition(t["topic"], p["partition_index"]), error_of(p["error_code"]), p["high_watermark"],
            p.get("last_stable_offset", -1), p.get("log_start_offset", -1), p["records"] or b"", -1,
            p.get("preferred_read_replica", -1), _aborted_from_wire(p.get("aborted_transactions")))
            for t in body["responses"] for p in t["partitions"]),
        error_of(body.get("error_code", 0)), body.get("session_id", INVALID_SESSION_ID),
        body.get("throttle_time_ms", 0))


_V11_ANSWER_HEAD = struct.Struct(">iihi")  # correlation id, throttle_time_ms, error_code, session_id
_V11_ANSWER_PARTITION = struct.Struct(">ihqqqi")  # index, error, HW, LSO, log start, aborted transactions' count
_V11_AFTER_ABORTED = struct.Struct(">ii")  # preferred_read_replica, the records' size
_I64_PAIR = struct.Struct(">qq")


def response_from_bytes(payload: bytes | bytearray) -> tuple[int, FetchResponse] | None:
    """`response_from_wire` of the generated decoder's body, read straight from a v11 answer's frame (without its
    size): (correlation id, FetchResponse); None when the frame is not well formed (a null where the schema has none,
    a negative length, a frame too short, bad UTF-8), for the plain path to refuse it with its own error. A follower
    reads one on every fetch (tests/core/api/test_fetch_wire.py holds the two to the same answers)."""
    buf = payload if type(payload) is bytes else bytes(payload)
    try:
        corr, throttle_ms, error_code, session_id = _V11_ANSWER_HEAD.unpack_from(buf, 0)
        pos = _V11_ANSWER_HEAD.size
        (topics,) = _I32.unpack_from(buf, pos)
        pos += 4
        if topics < 0:
            return None
        out: list[FetchPartitionData] = []
        append = out.append
        for _ in range(topics):
            (n,) = _I16.unpack_from(buf, pos)
            end = pos + 2 + n
            if n < 0 or end > len(buf):
                return None
            topic = buf[pos + 2:end].decode()
            (count,) = _I32.unpack_from(buf, end)
            pos = end + 4
            if count < 0:
                return None
            for _ in range(count):
                index, error, hw, lso, log_start, n = _V11_ANSWER_PARTITION.unpack_from(buf, pos)
                pos += _V11_ANSWER_PARTITION.size
                aborted: tuple[AbortedTransaction, ...] | None = None
                if n >= 0:
                    aborted = tuple(AbortedTransaction(producer_id, first_offset) for producer_id, first_offset
                                    in _unpacked(_I64_PAIR, buf, pos, n))
                    pos += n * _I64_PAIR.size
                preferred, n = _V11_AFTER_ABORTED.unpack_from(buf, pos)
                pos += _V11_AFTER_ABORTED.size
                if n >= 0:
                    end = pos + n
                    if end > len(buf):
                        return None
                    records = buf[pos:end]
                    pos = end
                elif n == -1:
                    records = b""
                else:
                    return None
                append(FetchPartitionData(wire_topic_partition(topic, index), error_of(error), hw, lso, log_start,
                                          records, -1, preferred, aborted))
    except (struct.error, UnicodeDecodeError):
        return None
    return corr, FetchResponse(tuple(out), error_of(error_code), session_id, throttle_ms)


def _unpacked(s: struct.Struct, buf: bytes, pos: int, n: int) -> list[tuple[Any, ...]]:
    """``n`` values of ``s`` from ``buf[pos:]`` (struct.error when the buffer ends before them)."""
    end = pos + n * s.size
    if end > len(buf):
        raise struct.error("the buffer ends inside the array")
    return list(s.iter_unpack(buf[pos:end]))


def error_response(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    """FetchRequest.getErrorResponse: the error at the top (v7+) and for every partition of the request, with no
    records and undefined offsets, in the request's session."""
    e = error_of(error)
    return response_to_wire(version, FetchResponse(
        tuple(FetchPartitionData(wire_topic_partition(t["topic"], p["partition"]), e)
              for t in body["topics"] for p in t["partitions"]),
        e, body.get("session_id", INVALID_SESSION_ID)))


def split(request: FetchRequest, shards: int) -> dict[int, FetchRequest]:
    """An incremental fetch goes to the shard holding its session and may only name that shard's partitions
    (FETCH_SESSION_ID_NOT_FOUND otherwise); a full one to the shards of its partitions, and, as a session lives in
    one shard, without a session when it spans several (brokers with different shard counts)."""
    if request.session_id != INVALID_SESSION_ID:
        shard = request.session_id % SESSION_ID_STRIDE
        if shard >= shards or any(shard_of(fp.tp, shards) != shard for fp in request.partitions):
            raise SplitRefused(FetchResponse((), Errors.FETCH_SESSION_ID_NOT_FOUND))
        return {shard: request}
    groups = by_shard(request.partitions, lambda fp: fp.tp, shards)
    if len(groups) == 1:  # one shard holds every partition: the request itself (no attrs.evolve per fetch)
        return {i: request for i in groups}
    epoch = FINAL_EPOCH if len(groups) > 1 and request.session_epoch == INITIAL_EPOCH else request.session_epoch
    return {i: attrs.evolve(request, partitions=tuple(parts), session_epoch=epoch)
            for i, parts in sorted(groups.items())}


def merge(request: FetchRequest, parts: dict[int, FetchResponse]) -> FetchResponse:
    """One shard's (a session's) answer as it is; several shards' in the request's partition order."""
    answers = answers_of(parts)
    if len(answers) == 1:
        return answers[0]
    data = {d.tp: d for a in answers for d in a.partitions}
    return FetchResponse(tuple(data[fp.tp] for fp in request.partitions if fp.tp in data),
                         first_error(a.error for a in answers))


def error(request: FetchRequest, code: Errors) -> FetchResponse:
    return FetchResponse(tuple(FetchPartitionData(fp.tp, code) for fp in request.partitions))


def response_failed(response: FetchResponse) -> bool:
    return any(d.error != Errors.NONE for d in response.partitions)


SHARDED = ShardedRequest(FetchRequest, split, merge, error,
                         lambda rm, part, now_ms, reply: rm.handle_fetch(part, now_ms, reply),
                         response_type=FetchResponse, response_failed=response_failed,
                         handle_response=lambda rm, leader, response, now_ms:
                         rm.handle_fetch_response(leader, response, now_ms))


SPEC = ApiSpec(ApiKeys.FETCH, ReplicaManagerService(SHARDED), request_from_wire, response_to_wire, error_response,
               request_type=FetchRequest, authorize=authorize, send_version=SEND_VERSION,
               request_to_wire=request_to_wire, response_from_wire=response_from_wire, client_id_of=client_id_of,
               request_body_bytes=request_body_bytes, response_from_bytes=response_from_bytes)
assert SEND_VERSION == 11  # request_body_bytes writes v11
register(SPEC)
