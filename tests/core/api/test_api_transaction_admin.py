"""KIP-664's admin APIs beyond Kafka 2.6 (as Kafka 3.6 serves them): DescribeProducers (61) from a replica's producer
state, DescribeTransactions (65) and ListTransactions (66) from the transaction coordinator's cache — their answers,
their wire bodies (encoded with Kafka's schemas) and their authorization."""

from __future__ import annotations

import pytest
from freezegun import freeze_time

from core.api import describe_producers, describe_transactions, list_transactions
from core.api.registry import spec_for_key
from core.coordinator.group.group_metadata_manager import partition_for
from core.security.authorizer import ALLOW_ALL
from messages.common import Errors, TopicPartition
from messages.replication import ProducePartition, ProduceRequest
from messages.transaction_admin import (
    DescribeProducersRequest,
    DescribeTransactionsRequest,
    ListTransactionsRequest,
    TransactionListing,
)
from protocol.codec import decode_request, decode_response, encode_request, encode_response
from protocol.records import Record, build_batch
from tests.core.coordinator.transaction.harness import PARTITIONS, T0, T1, TXN, Harness
from tests.support.broker import drive, lai_request, lai_state, make_rm

TP = TopicPartition("foo", 0)


def test_describe_producers_answers_each_producer_with_its_open_transaction(tmp_path):
    rm = make_rm(tmp_path, transaction_partition_verification_enable=False)  # no coordinator to verify with
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 0, (0,), (0,), is_new=True)]), 1000.0))
    for pid, attributes, seq in ((7, 0x10, 0), (8, 0, 4)):  # a transactional producer, an idempotent one
        batch = build_batch([Record(0, 0, None, b"v"), Record(1, 1, None, b"w")], first_timestamp=5000,
                            producer_id=pid, producer_epoch=3, base_sequence=seq, attributes=attributes)
        drive(rm.handle_produce(ProduceRequest(1, 30000, (ProducePartition(TP, batch),),
                                               transactional_id="t" if attributes else None), 1000.0))
    missing = TopicPartition("nope", 0)
    response = drive(describe_producers.SHARDED.handle(rm, DescribeProducersRequest((TP, missing)), 1000.0, None))
    ok, unknown = response.partitions
    assert unknown.error == Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert [(s.producer_id, s.producer_epoch, s.last_sequence, s.last_timestamp, s.coordinator_epoch,
             s.current_txn_start_offset) for s in ok.active_producers] == [(7, 3, 1, 5001, -1, 0),
                                                                            (8, 3, 5, 5001, -1, -1)]
    body = describe_producers.response_to_wire(0, response)
    decoded, _ = decode_response(61, 0, encode_response(61, 0, body))
    assert decoded["topics"][0]["partitions"][0]["active_producers"][0]["current_txn_start_offset"] == 0
    request, _ = decode_request(61, 0, encode_request(61, 0, {"topics": [{"name": "foo", "partition_indexes": [0]}]}))
    assert describe_producers.request_from_wire(0, request) == DescribeProducersRequest((TP,))


@pytest.fixture
def h():
    with freeze_time("2026-01-01 00:00:00"):
        h = Harness()
        h.elect()
        yield h


def test_describe_and_list_transactions_from_the_coordinators_cache(h):
    h.init()
    assert h.add_error(0, 0, T0, T1) is Errors.NONE
    start = h.metadata().txn_start_timestamp
    (d,) = h.ask(DescribeTransactionsRequest((TXN,))).transactions
    assert (d.error, d.state, d.producer_id, d.producer_epoch, d.transaction_start_time_ms, d.partitions) == (
        Errors.NONE, "Ongoing", 0, 0, start, (T0, T1))
    other = next(t for t in (f"other-{i}" for i in range(100)) if partition_for(t, PARTITIONS) == h.partition)
    (unknown,) = h.ask(DescribeTransactionsRequest((other,))).transactions
    assert unknown.error == Errors.TRANSACTIONAL_ID_NOT_FOUND  # this coordinator's partition, an id it never saw
    elsewhere = next(t for t in (f"x-{i}" for i in range(100)) if partition_for(t, PARTITIONS) != h.partition)
    assert h.ask(DescribeTransactionsRequest((elsewhere,))).transactions[0].error == Errors.NOT_COORDINATOR
    listed = h.ask(ListTransactionsRequest())
    assert (listed.error, listed.transactions) == (Errors.NONE, (TransactionListing(TXN, 0, "Ongoing"),))
    assert h.ask(ListTransactionsRequest(("CompleteCommit",))).transactions == ()
    assert h.ask(ListTransactionsRequest((), (99,))).transactions == ()
    assert h.ask(ListTransactionsRequest(("Bogus", "Ongoing"))).unknown_state_filters == ("Bogus",)
    body = describe_transactions.response_to_wire(0, h.ask(DescribeTransactionsRequest((TXN,))))
    decoded, _ = decode_response(65, 0, encode_response(65, 0, body))
    assert decoded["transaction_states"][0]["topics"] == [{"topic": "t", "partitions": [0, 1]}]
    body = list_transactions.response_to_wire(0, listed)
    assert decode_response(66, 0, encode_response(66, 0, body))[0]["transaction_states"][0]["transactional_id"] == TXN


def test_before_the_coordinator_is_active_list_and_describe_say_coordinator_not_available(h):
    h.tc.is_active = False
    assert h.ask(ListTransactionsRequest()).error == Errors.COORDINATOR_NOT_AVAILABLE
    assert h.ask(DescribeTransactionsRequest((TXN,))).transactions[0].error == Errors.COORDINATOR_NOT_AVAILABLE


def test_the_three_keys_are_served_and_authorized():
    for key in (61, 65, 66):
        assert spec_for_key(key) is not None
    assert describe_producers.authorize(DescribeProducersRequest((TP,)), ALLOW_ALL).request is not None
