"""WriteTxnMarkers (key 27, v0) as the transaction coordinator sends it (TransactionMarkerChannelManager's requests
to partition leaders): the outbound half only; the leader's module serves the API."""

from __future__ import annotations

from typing import Any

from core.api.registry import ApiSpec, Route, register_outbound
from core.api.topic_groups import error_of
from messages.common import TopicPartition
from messages.transaction import WriteTxnMarkersOutbound, WriteTxnMarkersOutboundResponse
from protocol.api_versions import API_KEYS

WRITE_TXN_MARKERS = API_KEYS["WriteTxnMarkers"]
SEND_VERSION = 0  # 2.6's only version


def request_to_wire(request: WriteTxnMarkersOutbound) -> dict[str, Any]:
    out = []
    for m in request.markers:
        topics: dict[str, list[int]] = {}
        for tp in m.partitions:
            topics.setdefault(tp.topic, []).append(tp.partition)
        out.append({"producer_id": m.producer_id, "producer_epoch": m.producer_epoch,
                    "transaction_result": m.committed, "coordinator_epoch": m.coordinator_epoch,
                    "topics": [{"name": t, "partition_indexes": ps} for t, ps in topics.items()]})
    return {"markers": out}


def response_from_wire(version: int, body: dict[str, Any]) -> WriteTxnMarkersOutboundResponse:
    return WriteTxnMarkersOutboundResponse(tuple(
        (m["producer_id"], TopicPartition(t["name"], p["partition_index"]), error_of(p["error_code"]))
        for m in body["markers"] for t in m["topics"] for p in t["partitions"]))


def _not_served(*_: Any) -> Any:
    raise TypeError("WriteTxnMarkers is served by its leader-side module, not by its sender")


register_outbound(ApiSpec(WRITE_TXN_MARKERS, Route.REPLICA_MANAGER, _not_served, _not_served, _not_served,
                          request_type=WriteTxnMarkersOutbound, send_version=SEND_VERSION,
                          request_to_wire=request_to_wire, response_from_wire=response_from_wire))
