"""AddPartitionsToTxn v4 (Kafka 3.6, KIP-890 part 1): the verify-only request a partition leader sends the transaction
coordinator, on the wire both ways, answered by handleVerifyPartitionsInTransaction, and refused without
CLUSTER_ACTION."""

from __future__ import annotations

from freezegun import freeze_time

from core.api import add_partitions_to_txn as api
from core.api.registry import spec_for_type
from core.security.authorizer import ALLOW_ALL
from messages.common import Errors
from messages.transaction import AddPartitionsToTxnRequest, AddPartitionsToTxnResponse
from protocol.codec import decode_request, decode_response, encode_request, encode_response
from tests.core.coordinator.transaction.harness import T0, T1, TXN, Harness

VERIFY = AddPartitionsToTxnRequest(TXN, 0, 0, (T0, T1), verify_only=True)


def test_the_leader_sends_v4_and_reads_its_answer():
    spec = spec_for_type(AddPartitionsToTxnRequest)
    assert spec is not None and spec.send_version == 4
    wire, _ = decode_request(24, 4, encode_request(24, 4, api.request_to_wire(VERIFY)))
    assert wire["transactions"][0]["verify_only"] is True
    assert api.request_from_wire(4, wire) == VERIFY
    answer = AddPartitionsToTxnResponse(((T0, Errors.NONE), (T1, Errors.INVALID_TXN_STATE)), transactional_id=TXN)
    body, _ = decode_response(24, 4, encode_response(24, 4, api.response_to_wire(4, answer)))
    assert api.response_from_wire(4, body) == answer
    refused = AddPartitionsToTxnResponse((), Errors.CLUSTER_AUTHORIZATION_FAILED, TXN)
    body, _ = decode_response(24, 4, encode_response(24, 4, api.response_to_wire(4, refused)))
    assert (body["error_code"], body["results_by_transaction"]) == (31, [])


def test_the_coordinator_verifies_without_adding():
    with freeze_time("2026-01-01 00:00:00"):
        h = Harness()
        h.elect()
        h.init()
        assert h.add_error(0, 0, T0) is Errors.NONE
        before = len(h.records())
        answer = h.ask(VERIFY)
        assert dict(answer.errors) == {T0: Errors.NONE, T1: Errors.INVALID_TXN_STATE}
        assert answer.transactional_id == TXN
        assert len(h.records()) == before  # nothing written: T1 was not added
        assert h.metadata().topic_partitions == {T0}
        assert dict(h.ask(AddPartitionsToTxnRequest(TXN, 0, 1, (T0,), verify_only=True)).errors) == {
            T0: Errors.INVALID_PRODUCER_EPOCH}


class _NoClusterAction:
    enabled = True

    def allows_cluster(self, operation):
        return False


def test_verify_only_needs_cluster_action():
    assert api.authorize(VERIFY, ALLOW_ALL).request == VERIFY
    refused = api.authorize(VERIFY, _NoClusterAction()).answer  # type: ignore[arg-type]
    assert refused == AddPartitionsToTxnResponse((), Errors.CLUSTER_AUTHORIZATION_FAILED, TXN)
