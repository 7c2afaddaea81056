"""The transaction coordinator's actor on a real Runtime: requests in as NetRequest, answers out as NetReply to
"net", its __transaction_state appends and reads as LocalRequest to a replica-manager stand-in, its ZooKeeper reads
and producer-id block through the in-memory ZooKeeper, its markers through a TransactionMarkerChannelActor per broker
whose WriteTxnMarkers goes out as NetSend and whose (fake) leader's answer completes the transaction."""

from __future__ import annotations

from typing import Any

import pytest

from actors.clock import ManualClock
from actors.runtime import Runtime
from actors.transaction_coordinator_actor import TransactionCoordinatorActor
from core.coordinator.group.group_metadata_manager import partition_for
from core.coordinator.transaction.transaction_log import read_txn_record_value
from core.coordinator.transaction.transaction_metadata import TransactionState
from messages.common import Broker, EndPoint, Errors, ReplicaAssignment, TopicPartition
from messages.net import NetReply, NetRequest, NetResponse, NetSend, NetSendFailed
from messages.replication import LeadershipChange
from messages.runtime import TimerFired
from messages.transaction import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    EndTxnRequest,
    EndTxnResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
    TransactionCoordinatorConfig,
    TransactionCoordinatorInit,
)
from messages.txn_markers import (
    TxnMarkerEntry,
    TxnMarkerPartitionResult,
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
)
from protocol.records import iter_batches, read_records
from protocol.zk import znodes
from tests.actors.test_group_coordinator_actor import Recorder, ReplicaManagerModel
from tests.support.actors import ZooKeeperModel

TXN_TOPIC = "__transaction_state"
T0 = TopicPartition("t", 0)
CONFIG = TransactionCoordinatorConfig(transaction_log_num_partitions=3)
NAME = "transaction-coordinator"


@pytest.fixture
def rt():
    rt = Runtime("broker-1", clock=ManualClock(1_000.0))
    for name in ("net", "timer"):
        rt.spawn(Recorder, name)
    rt.spawn(ReplicaManagerModel, "replica-manager")
    rt.spawn(ZooKeeperModel, "zk")
    zk = rt.instances["zk"].zk.create_top_level_paths()
    for b in (1, 2):
        zk.create(f"/brokers/ids/{b}", znodes.encode_broker(Broker(b, (EndPoint("127.0.0.1", 9090 + b),)),
                                                            timestamp_ms=1))
    zk.create("/brokers/topics/t", znodes.encode_topic_assignment({T0: ReplicaAssignment((2, 1))}))
    zk.put_partition_state(T0, 2, (2, 1))
    rt.spawn(TransactionCoordinatorActor, NAME)
    rt.deliver(NAME, TransactionCoordinatorInit(1, CONFIG), "edge:process")
    yield rt
    rt.shutdown()


def _ask(rt: Runtime, request_id: int, body: Any) -> Any:
    rt.deliver(NAME, NetRequest(7, request_id, body, True, 4, "cli", "/127.0.0.1"), "edge:net")
    return {m.request_id: m.body for m in rt.instances["net"].received if isinstance(m, NetReply)}.get(request_id)


def _sends(rt: Runtime) -> list[NetSend]:
    return [m for m in rt.instances["net"].received if isinstance(m, NetSend)]


def _states(rt: Runtime, partition: int) -> list[TransactionState]:
    data = bytes(rt.instances["replica-manager"].logs.get(partition, b""))
    return [TransactionState.from_byte(read_txn_record_value(r.value).state_byte)
            for b in iter_batches(data) for r in read_records(b)]


def test_a_transaction_commits_through_the_marker_channel_of_the_partitions_leader(rt):
    p = partition_for("tx", 3)
    assert _ask(rt, 1, InitProducerIdRequest("tx", 60000)) == InitProducerIdResponse(Errors.NOT_COORDINATOR)
    rt.deliver(NAME, LeadershipChange(((p, 4),), (), TXN_TOPIC), "replica-manager")
    assert _ask(rt, 2, InitProducerIdRequest("tx", 60000)) == InitProducerIdResponse(Errors.NONE, 0, 0)
    assert _ask(rt, 3, InitProducerIdRequest(None, 60000)) == InitProducerIdResponse(Errors.NONE, 1, 0)
    assert _ask(rt, 4, AddPartitionsToTxnRequest("tx", 0, 0, (T0,))) == AddPartitionsToTxnResponse(
        ((T0, Errors.NONE),))
    assert _ask(rt, 5, EndTxnRequest("tx", 0, 0, True)) == EndTxnResponse(Errors.NONE)
    assert _states(rt, p) == [TransactionState.EMPTY, TransactionState.ONGOING, TransactionState.PREPARE_COMMIT]
    # the marker goes to t-0's leader, broker 2, through its channel, at coordinator epoch 4
    (send,) = _sends(rt)
    assert (send.host, send.port, send.reply_to) == ("127.0.0.1", 9092, "txn-marker-channel-2")
    assert send.body == WriteTxnMarkersRequest((TxnMarkerEntry(0, 0, True, 4, (T0,)),))
    # the connection fails: the markers go back to the coordinator, which sends them again after its backoff
    rt.deliver("txn-marker-channel-2", NetSendFailed(send.request_id, "refused"), "edge:net")
    retry = [m for m in rt.instances["timer"].received if getattr(m, "key", "") == "txn-markers-retry"]
    assert retry
    rt.deliver(NAME, TimerFired("txn-markers-retry"), "edge:timer")
    sends = _sends(rt)
    assert len(sends) == 2 and sends[1].body == send.body
    rt.deliver("txn-marker-channel-2", NetResponse(sends[1].request_id, WriteTxnMarkersResponse(
        (TxnMarkerPartitionResult(0, T0, Errors.NONE),))), "edge:net")
    assert _states(rt, p)[-1] is TransactionState.COMPLETE_COMMIT
    # a resignation: the ids are gone from here
    rt.deliver(NAME, LeadershipChange((), ((p, 5),), TXN_TOPIC), "replica-manager")
    assert _ask(rt, 6, EndTxnRequest("tx", 0, 0, True)) == EndTxnResponse(Errors.NOT_COORDINATOR)


def test_an_internal_topic_never_joins_a_transaction_without_an_authorizer(rt):
    """KafkaApis.handleAddPartitionToTxnRequest (2.6.3 L2130): __transaction_state-0 answers TOPIC_AUTHORIZATION_FAILED
    and t-0 OPERATION_NOT_ATTEMPTED although no authorizer is configured; the coordinator is not asked (nothing is
    written), so the EndTxn that follows has no transaction to end and sends no marker into the coordinator's log."""
    p = partition_for("tx", 3)
    rt.deliver(NAME, LeadershipChange(((p, 4),), (), TXN_TOPIC), "replica-manager")
    assert _ask(rt, 1, InitProducerIdRequest("tx", 60000)) == InitProducerIdResponse(Errors.NONE, 0, 0)
    txn_state = TopicPartition(TXN_TOPIC, 0)
    assert _ask(rt, 2, AddPartitionsToTxnRequest("tx", 0, 0, (T0, txn_state))) == AddPartitionsToTxnResponse(
        ((T0, Errors.OPERATION_NOT_ATTEMPTED), (txn_state, Errors.TOPIC_AUTHORIZATION_FAILED)))
    assert _states(rt, p) == [TransactionState.EMPTY]
    assert _ask(rt, 3, EndTxnRequest("tx", 0, 0, False)) == EndTxnResponse(Errors.INVALID_TXN_STATE)
    assert _sends(rt) == []
