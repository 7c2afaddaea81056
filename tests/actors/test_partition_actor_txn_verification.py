"""PartitionActor's half of KIP-890 part 1 (Kafka 3.6's AddPartitionsToTxnManager): a transactional produce that
would open a transaction on a partition this shard leads waits while a verify-only AddPartitionsToTxn v4 goes to the
broker leading the transactional id's ``__transaction_state`` partition; its answer, or its failure, resumes the
produce. Peers are sinks the test plays, ZooKeeper the in-memory model."""

from __future__ import annotations

from pathlib import Path

from actors.partition_actor import PartitionActor
from messages.broker_lifecycle import ReplicaManagerInit
from messages.common import Errors, TopicPartition
from messages.net import NetResponse, NetSend, NetSendFailed
from messages.partition import ShardInit, ShardReply, ShardRequest
from messages.replication import ProducePartition, ProduceRequest, ProduceResponse
from messages.topic import TRANSACTION_STATE_TOPIC_NAME
from messages.transaction import AddPartitionsToTxnRequest, AddPartitionsToTxnResponse
from protocol.records import TRANSACTIONAL_BIT, Record, build_batch
from tests.support.actors import ActorTestbed, Delivered, ZooKeeperModel
from tests.support.broker import lai_request, lai_state, um_request, um_state

SHARD = "partition-0"
T0 = 1_000_000.0
TP = TopicPartition("t", 0)
TXN_STATE = TopicPartition(TRANSACTION_STATE_TOPIC_NAME, 0)


def out(caused: list[Delivered]) -> list[tuple[str, object]]:
    return [(d.receiver, d.body) for d in caused if d.sender == SHARD and d.receiver not in ("metrics", "timer")]


def _leader(tmp_path: Path) -> ActorTestbed:
    """Shard 0 of 1 on broker 0, leading t-0; __transaction_state-0 led by broker 2 (host2:9094)."""
    bed = ActorTestbed("broker-0", start_ms=T0, sinks=("net", "timer", "metrics", "replica-manager"))
    bed.rt.spawn(ZooKeeperModel, "zk")
    bed.rt.instances["zk"].zk.create_top_level_paths()
    bed.rt.spawn(PartitionActor, SHARD)
    bed.deliver(SHARD, ShardInit(0, 1, ReplicaManagerInit(0, (str(tmp_path / "logs"),))), "replica-manager",
                at_ms=T0)
    bed.deliver(SHARD, ShardRequest(1, um_request([um_state(TXN_STATE, 2, (2,), (2,))])), "replica-manager",
                at_ms=T0)
    bed.deliver(SHARD, ShardRequest(2, lai_request([lai_state(TP, 0, 0, [0], [0], is_new=True)])),
                "replica-manager", at_ms=T0)
    return bed


def _produce(token: int, seq: int = 0) -> ShardRequest:
    batch = build_batch([Record(0, 0, None, b"v")], first_timestamp=int(T0), producer_id=9, producer_epoch=1,
                        base_sequence=seq, attributes=TRANSACTIONAL_BIT)
    return ShardRequest(token, ProduceRequest(1, 30000, (ProducePartition(TP, batch),), transactional_id="tx"))


def test_the_produce_waits_for_the_coordinators_verification_and_answers_its_verdict(tmp_path: Path) -> None:
    bed = _leader(tmp_path)
    try:
        sent = out(bed.deliver(SHARD, _produce(3), "replica-manager", at_ms=T0 + 1))
        assert len(sent) == 1
        to, send = sent[0]
        assert to == "net" and isinstance(send, NetSend)
        assert (send.host, send.port, send.reply_to, send.timeout_ms) == ("host2", 9094, SHARD, 30000.0)
        assert send.body == AddPartitionsToTxnRequest("tx", 9, 1, (TP,), verify_only=True)
        # not in the transaction: refused, nothing appended
        answered = out(bed.deliver(SHARD, NetResponse(send.request_id, AddPartitionsToTxnResponse(
            ((TP, Errors.INVALID_TXN_STATE),), transactional_id="tx")), "net", at_ms=T0 + 2))
        (reply,) = [body for to, body in answered if to == "replica-manager"]
        assert isinstance(reply, ShardReply) and isinstance(reply.body, ProduceResponse)
        (p,) = reply.body.partitions
        assert (p.error, p.error_message) == (Errors.INVALID_TXN_STATE, "Partition was not added to the transaction")
        # a send that fails: NETWORK_EXCEPTION, answered NOT_ENOUGH_REPLICAS, which a 2.6 producer retries
        ((_, send),) = out(bed.deliver(SHARD, _produce(4), "replica-manager", at_ms=T0 + 3))
        answered = out(bed.deliver(SHARD, NetSendFailed(send.request_id, "connection refused"), "net", at_ms=T0 + 4))
        (reply,) = [body for to, body in answered if to == "replica-manager"]
        assert reply.body.partitions[0].error == Errors.NOT_ENOUGH_REPLICAS
        # verified: appended at offset 0
        ((_, send),) = out(bed.deliver(SHARD, _produce(5), "replica-manager", at_ms=T0 + 5))
        answered = out(bed.deliver(SHARD, NetResponse(send.request_id, AddPartitionsToTxnResponse(
            ((TP, Errors.NONE),), transactional_id="tx")), "net", at_ms=T0 + 6))
        (reply,) = [body for to, body in answered if to == "replica-manager"]
        assert (reply.body.partitions[0].error, reply.body.partitions[0].base_offset) == (Errors.NONE, 0)
        # the transaction is open here now: the next batch is appended without asking
        answered = out(bed.deliver(SHARD, _produce(6, seq=1), "replica-manager", at_ms=T0 + 7))
        assert [to for to, _ in answered] == ["replica-manager"]
        assert answered[0][1].body.partitions[0].base_offset == 1
    finally:
        bed.shutdown()


def test_the_shard_serves_other_requests_while_a_produce_waits_for_its_verification(tmp_path: Path) -> None:
    """AddPartitionsToTxnManager is asynchronous in Kafka: the shard is not held while the coordinator is asked
    (seed 6985: a coordinator cut off from this broker held every partition of the shard until request.timeout.ms).
    A plain produce that comes in meanwhile is appended and answered first; the verified one then goes on, in its
    turn, on the log as it is (offset 1)."""
    bed = _leader(tmp_path)
    try:
        ((_, send),) = out(bed.deliver(SHARD, _produce(3), "replica-manager", at_ms=T0 + 1))
        plain = build_batch([Record(0, 0, None, b"plain")], first_timestamp=int(T0))
        answered = out(bed.deliver(SHARD, ShardRequest(4, ProduceRequest(1, 30000, (ProducePartition(TP, plain),))),
                                   "replica-manager", at_ms=T0 + 2))
        (reply,) = [body for to, body in answered if to == "replica-manager"]
        assert reply.token == 4 and (reply.body.partitions[0].error, reply.body.partitions[0].base_offset) == (
            Errors.NONE, 0)
        answered = out(bed.deliver(SHARD, NetResponse(send.request_id, AddPartitionsToTxnResponse(
            ((TP, Errors.NONE),), transactional_id="tx")), "net", at_ms=T0 + 3))
        (reply,) = [body for to, body in answered if to == "replica-manager"]
        assert reply.token == 3 and (reply.body.partitions[0].error, reply.body.partitions[0].base_offset) == (
            Errors.NONE, 1)
    finally:
        bed.shutdown()
