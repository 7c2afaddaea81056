"""The transaction APIs on a broker with no transaction coordinator (kactor has none yet: FindCoordinator for a
transactional id answers COORDINATOR_NOT_AVAILABLE), answered as Kafka 2.6.3's KafkaApis answers them on a broker
that coordinates no ``__transaction_state`` partition:

- AddPartitionsToTxn (24, v0-1), AddOffsetsToTxn (25, v0-1), EndTxn (26, v0-1): ``TransactionCoordinator`` finds no
  state for the transactional id (``getTransactionState``: NOT_COORDINATOR), INVALID_REQUEST for an empty id;
  AddPartitionsToTxn for each of its partitions.
- TxnOffsetCommit (28, v0-3): NOT_COORDINATOR for each partition (2.6 would store the offsets as pending on the
  group's coordinator until the transaction's marker: nothing here can write that marker).
WriteTxnMarkers (27) is the replica manager's (core/api/write_txn_markers.py).
InitProducerId (22) with a transactional id is the AdminManager's (core/api/init_producer_id.py).
"""

from __future__ import annotations

from core.api.admin import fit_response
from core.api.not_configured import ROUTE, Body, always, answered_with, no_response
from core.api.registry import ApiSpec, register
from messages.common import Errors
from protocol.api_versions import API_KEYS

ADD_PARTITIONS_TO_TXN = API_KEYS["AddPartitionsToTxn"]
ADD_OFFSETS_TO_TXN = API_KEYS["AddOffsetsToTxn"]
END_TXN = API_KEYS["EndTxn"]
TXN_OFFSET_COMMIT = API_KEYS["TxnOffsetCommit"]


def _transactional_id(body: Body) -> str | None:
    # kio (Kafka 3.9's schemas) names AddPartitionsToTxn's v0-3 fields "v3_and_below_..."
    return body.get("transactional_id", body.get("v3_and_below_transactional_id"))


def coordinator_error(version: int, body: Body) -> Errors:
    """TransactionCoordinator: INVALID_REQUEST for an empty transactional id, else NOT_COORDINATOR."""
    return Errors.INVALID_REQUEST if not _transactional_id(body) else Errors.NOT_COORDINATOR


def add_partitions_error(version: int, body: Body, error: int) -> Body:
    return fit_response(ADD_PARTITIONS_TO_TXN, version, {"throttle_time_ms": 0, "results_by_topic_v3_and_below": [
        {"name": t["name"], "results_by_partition": [{"partition_index": p, "partition_error_code": error}
                                                     for p in t["partitions"]]}
        for t in body.get("v3_and_below_topics") or []]})


def add_offsets_error(version: int, body: Body, error: int) -> Body:
    return fit_response(ADD_OFFSETS_TO_TXN, version, {"throttle_time_ms": 0, "error_code": error})


def end_txn_error(version: int, body: Body, error: int) -> Body:
    return fit_response(END_TXN, version, {"throttle_time_ms": 0, "error_code": error})


def txn_offset_commit_error(version: int, body: Body, error: int) -> Body:
    return fit_response(TXN_OFFSET_COMMIT, version, {"throttle_time_ms": 0, "topics": [
        {"name": t["name"], "partitions": [{"partition_index": p["partition_index"], "error_code": error}
                                           for p in t["partitions"]]} for t in body.get("topics") or []]})


register(ApiSpec(ADD_PARTITIONS_TO_TXN, ROUTE, answered_with(coordinator_error), no_response, add_partitions_error))
register(ApiSpec(ADD_OFFSETS_TO_TXN, ROUTE, answered_with(coordinator_error), no_response, add_offsets_error))
register(ApiSpec(END_TXN, ROUTE, answered_with(coordinator_error), no_response, end_txn_error))
register(ApiSpec(TXN_OFFSET_COMMIT, ROUTE, answered_with(always(Errors.NOT_COORDINATOR)), no_response,
                 txn_offset_commit_error))
