"""Transactions in the log on a real 3-broker cluster (issue #27 part 2): transactional batches produced over Kafka's
protocol with a producer id from InitProducerId, COMMIT / ABORT markers written straight to the leader with
WriteTxnMarkers (as a transaction coordinator sends them), then librdkafka consumers: read_committed sees exactly
the committed and plain records in order and stops at a transaction still open (the last stable offset),
read_uncommitted sees every record, and so does ``kactor consume --isolation-level``. The leader is SIGKILLed and
another replica leads: it rebuilt the same producer state from the replicated batches (the open transaction still
bounds read_committed), and a COMMIT written to it then makes that transaction visible."""

from __future__ import annotations

import subprocess
import sys
import time

from cluster_helpers import Cluster, now_ms, raw_request
from kafka_clients_helpers import bootstrap

from edges.transport import request
from messages.common import Errors, TopicPartition
from messages.replication import ProducePartition, ProduceRequest
from messages.txn_markers import TxnMarkerEntry, TxnMarkerPartitionResult, WriteTxnMarkersRequest
from protocol.records import TRANSACTIONAL_BIT, Record, build_batch

TOPIC = "txn-markers"
TP = TopicPartition(TOPIC, 0)


def init_producer_id(c: Cluster) -> tuple[int, int]:
    """InitProducerId v1 without a transactional id: (producer id, epoch)."""
    answer = raw_request(f"127.0.0.1:{c.lc.ports[c.live_brokers()[0]]}", 22, 1,
                         {"transactional_id": None, "transaction_timeout_ms": 60000})
    assert answer["error_code"] == 0, answer
    return answer["producer_id"], answer["producer_epoch"]


def leader_port(c: Cluster) -> tuple[int, int]:
    state = c.wait_partition(TOPIC, 0, lambda st: st["leader"] >= 0)
    return state["leader"], c.lc.ports[state["leader"]]


def produce(c: Cluster, values: tuple[str, ...], producer: tuple[int, int] | None = None, seq: int = 0) -> None:
    """One batch, acks=-1; transactional (with a transactional id) when ``producer`` is given."""
    records = [Record(i, 0, None, v.encode()) for i, v in enumerate(values)]
    if producer is None:
        batch, txn_id = build_batch(records, first_timestamp=now_ms()), None
    else:
        batch = build_batch(records, first_timestamp=now_ms(), producer_id=producer[0], producer_epoch=producer[1],
                            base_sequence=seq, attributes=TRANSACTIONAL_BIT)
        txn_id = f"tx-{producer[0]}"
    _, port = leader_port(c)
    answer = request("127.0.0.1", port, ProduceRequest(-1, 30000, (ProducePartition(TP, batch),), txn_id),
                     timeout_s=30.0)
    assert answer.partitions[0].error == Errors.NONE, answer


def end_txn(c: Cluster, producer: tuple[int, int], commit: bool) -> None:
    """WriteTxnMarkers to the partition's leader, as the coordinator of epoch 0 sends it."""
    _, port = leader_port(c)
    marker = TxnMarkerEntry(producer[0], producer[1], commit, 0, (TP,))
    answer = request("127.0.0.1", port, WriteTxnMarkersRequest((marker,)), timeout_s=30.0)
    assert answer.results == (TxnMarkerPartitionResult(producer[0], TP, Errors.NONE),), answer


def consume(c: Cluster, isolation: str, expected: int, timeout_s: float = 60.0) -> list[str]:
    """The values a librdkafka consumer at ``isolation`` reads from offset 0 until it holds ``expected`` of them and
    has reached the partition's end at its isolation: the high watermark, or for read_committed the last stable
    offset (librdkafka's _PARTITION_EOF; enable.partition.eof). Past that end no record is returned until the
    leader's log or state changes, so none is missed that a reader waiting on would get."""
    from confluent_kafka import Consumer
    from confluent_kafka import KafkaError as CkKafkaError
    from confluent_kafka import TopicPartition as CkTopicPartition

    from kactor.kafka_clients import client_config

    consumer = Consumer(client_config(bootstrap(c), "txn-reader", {
        "group.id": f"txn-reader-{isolation}", "enable.auto.commit": False, "isolation.level": isolation,
        "enable.partition.eof": True}))
    values: list[str] = []
    try:
        consumer.assign([CkTopicPartition(TOPIC, 0, 0)])
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None:
                continue
            if message.error() is None:
                values.append(message.value().decode())
            elif message.error().code() == CkKafkaError._PARTITION_EOF and len(values) >= expected:
                return values
        raise AssertionError(f"{isolation}: {values} read, no end of {TOPIC}-0 after {expected} within {timeout_s} s")
    finally:
        consumer.close()


def test_read_committed_sees_exactly_the_committed_records_before_and_after_a_leader_move(start_cluster):
    # the batches name transactions no coordinator opened (markers come straight from the test): 2.6's path, without
    # KIP-890's verification (test_cluster_txn_verification.py)
    c = start_cluster(3, overrides=("transaction.partition.verification.enable=false",))
    c.create_topic(TOPIC, 1, 3)
    a, b, d = init_producer_id(c), init_producer_id(c), init_producer_id(c)
    assert len({a[0], b[0], d[0]}) == 3
    produce(c, ("a0", "a1"), a)
    produce(c, ("b0", "b1"), b)
    produce(c, ("a2",), a, seq=2)
    end_txn(c, a, commit=False)
    end_txn(c, b, commit=True)
    produce(c, ("p0",))
    produce(c, ("d0",), d)  # left open: read_committed stops before it
    produce(c, ("p1",))
    everything = ["a0", "a1", "b0", "b1", "a2", "p0", "d0", "p1"]
    assert consume(c, "read_committed", 3) == ["b0", "b1", "p0"]
    assert consume(c, "read_uncommitted", 8) == everything
    # both at once: each prints until 3 s pass without a record
    consoles = {isolation: subprocess.Popen(
        [sys.executable, "-m", "kactor", "consume", "--bootstrap-server", bootstrap(c), "--topic", TOPIC,
         "--from-beginning", "--timeout-ms", "3000", "--isolation-level", isolation],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for isolation in ("read_committed", "read_uncommitted")}
    for isolation, values in (("read_committed", ["b0", "b1", "p0"]), ("read_uncommitted", everything)):
        out, err = consoles[isolation].communicate(timeout=120)
        assert consoles[isolation].returncode == 0, err
        assert out.splitlines() == values

    old_leader, _ = leader_port(c)
    c.wait_partition(TOPIC, 0, lambda st: len(st["isr"]) == 3, what="every replica in sync")
    c.kill(old_leader)
    c.wait_partition(TOPIC, 0, lambda st: st["leader"] not in (-1, old_leader), what="another leader")
    # every record readable from the new leader first: its high watermark at the log's end, so read_committed's
    # end is its last stable offset, not a high watermark still catching up
    assert consume(c, "read_uncommitted", 8) == everything
    # the new leader rebuilt the same state from the replicated batches: d's transaction is still open
    assert consume(c, "read_committed", 3) == ["b0", "b1", "p0"]
    end_txn(c, d, commit=True)
    assert consume(c, "read_committed", 5) == ["b0", "b1", "p0", "d0", "p1"]
