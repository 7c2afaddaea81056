"""The transaction APIs kactor does not serve yet, answered as Kafka 2.6.3's KafkaApis answers them on a broker that
cannot act on them:

- TxnOffsetCommit (28, v0-3): NOT_COORDINATOR for each partition (2.6 stores the offsets as pending on the group's
  coordinator until the transaction's marker).

The transaction coordinator's APIs have their own modules, routed to it: InitProducerId (core/api/init_producer_id.py),
AddPartitionsToTxn (add_partitions_to_txn.py), AddOffsetsToTxn (add_offsets_to_txn.py), EndTxn (end_txn.py);
WriteTxnMarkers (27) is the replica manager's (core/api/write_txn_markers.py), and the one the coordinator sends to
partition leaders goes out through write_txn_markers_sender.py.
"""

from __future__ import annotations

from core.api.admin import fit_response
from core.api.not_configured import ROUTE, Body, always, answered_with, no_response
from core.api.registry import ApiSpec, register
from messages.common import Errors
from protocol.api_versions import API_KEYS

TXN_OFFSET_COMMIT = API_KEYS["TxnOffsetCommit"]


def txn_offset_commit_error(version: int, body: Body, error: int) -> Body:
    return fit_response(TXN_OFFSET_COMMIT, version, {"throttle_time_ms": 0, "topics": [
        {"name": t["name"], "partitions": [{"partition_index": p["partition_index"], "error_code": error}
                                           for p in t["partitions"]]} for t in body.get("topics") or []]})


register(ApiSpec(TXN_OFFSET_COMMIT, ROUTE, answered_with(always(Errors.NOT_COORDINATOR)), no_response,
                 txn_offset_commit_error))
