"""Exactly-once consume-transform-produce on a real broker (issue #27): a librdkafka consumer in group ``ctp`` reads
``in``, a transactional producer writes the transformed records to ``out`` and sends the consumer's positions to its
transaction (AddOffsetsToTxn, then TxnOffsetCommit to the group's coordinator). The group's committed offset, read by
a separate consumer's ``committed()``, moves only when the transaction commits; until its marker a stable OffsetFetch
(v7 require_stable) answers UNSTABLE_OFFSET_COMMIT; an aborted transaction leaves the offset where it was and its
records unread by read_committed; ``kactor consumer-groups --describe`` shows the committed offset; and after the
broker restarts, the group's load replays the markers: the committed transaction's offset is there, the aborted one's
never is. Then the same with kafka-python 3's send_offsets_to_transaction."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cluster_helpers import Cluster, produce, raw_request, run_kactor
from kafka_clients_helpers import KAFKA_PYTHON3, OVERRIDES, bootstrap, closing_producer

from messages.common import Errors

pytestmark = [pytest.mark.cluster]

GROUP, TXN_ID = "ctp", "ctp-tx"
UNSTABLE_OFFSET_COMMIT, INVALID_PRODUCER_EPOCH = 88, 47


def _committed(c: Cluster, group: str = GROUP, topic: str = "in") -> int:
    """The group's committed offset of ``topic``-0 (-1001: none), as a separate consumer that is not a member reads
    it (read_uncommitted: no require_stable)."""
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as CkTopicPartition

    checker = Consumer({"bootstrap.servers": bootstrap(c), "group.id": group, "enable.auto.commit": False,
                        "isolation.level": "read_uncommitted"})
    try:
        (tp,) = checker.committed([CkTopicPartition(topic, 0)], timeout=30)
        return tp.offset
    finally:
        checker.close()


def _stable_fetch(c: Cluster, group: str = GROUP, topic: str = "in") -> tuple[int, int]:
    """OffsetFetch v7 with require_stable at the group's coordinator (the one broker): (error code, offset)."""
    answer = raw_request(bootstrap(c), 9, 7, {"group_id": group, "require_stable": True,
                                              "topics": [{"name": topic, "partition_indexes": [0]}]})
    assert answer["error_code"] == 0, answer
    (p,) = answer["topics"][0]["partitions"]
    return p["error_code"], p["committed_offset"]


def _txn_offset_commit(c: Cluster, producer_id: int, epoch: int, offset: int) -> int:
    """TxnOffsetCommit v3 of in-0 for group ``fenced`` as that producer: the partition's error code."""
    answer = raw_request(bootstrap(c), 28, 3, {
        "transactional_id": "fenced-tx", "group_id": "fenced", "producer_id": producer_id, "producer_epoch": epoch,
        "generation_id": -1, "member_id": "", "group_instance_id": None, "topics": [{"name": "in", "partitions": [
            {"partition_index": 0, "committed_offset": offset, "committed_leader_epoch": -1,
             "committed_metadata": ""}]}]})
    (topic,) = answer["topics"]
    (partition,) = topic["partitions"]
    return partition["error_code"]


def _read(consumer: Any, n: int, timeout_s: float = 60.0) -> list[Any]:
    out: list[Any] = []
    deadline = time.monotonic() + timeout_s
    while len(out) < n and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            out.append(message)
    assert len(out) == n, f"read {len(out)} of {n} records"
    return out


def _transform(producer: Any, consumer: Any, n: int) -> None:
    """One transaction's work: n records of ``in`` upper-cased to ``out``, and the consumer's positions sent to the
    transaction with its group metadata (generation and member id: TxnOffsetCommit v3)."""
    producer.begin_transaction()
    for message in _read(consumer, n):
        producer.produce("out", value=message.value().upper(), partition=0)
    producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                         consumer.consumer_group_metadata(), 60)


def _out_values(c: Cluster, expected: int, topic: str = "out", settle_s: float = 3.0) -> list[bytes]:
    """What a read_committed consumer reads of ``topic``-0 from its start: ``expected`` records, then nothing more
    for ``settle_s``."""
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as CkTopicPartition

    reader = Consumer({"bootstrap.servers": bootstrap(c), "group.id": "out-reader", "enable.auto.commit": False,
                       "isolation.level": "read_committed"})
    values: list[bytes] = []
    try:
        reader.assign([CkTopicPartition(topic, 0, 0)])
        deadline, settle_until = time.monotonic() + 60, None
        while time.monotonic() < (settle_until or deadline):
            message = reader.poll(0.2)
            if message is not None and message.error() is None:
                values.append(message.value())
            if settle_until is None and len(values) >= expected:
                settle_until = time.monotonic() + settle_s
    finally:
        reader.close()
    return values


def _cluster(start_cluster: Any, topic_in: str, topic_out: str) -> Cluster:
    """One broker (its own __consumer_offsets and __transaction_state, 3 partitions each); ``topic_in`` holds r0-r9."""
    c = start_cluster(1, overrides=(*OVERRIDES, "transaction.state.log.num.partitions=3",
                                    "transaction.state.log.replication.factor=1", "transaction.state.log.min.isr=1"))
    c.create_topic(topic_in, partitions=1, replication_factor=1)
    c.create_topic(topic_out, partitions=1, replication_factor=1)
    assert produce(c, topic_in, 0, tuple(f"r{i}" for i in range(10))).error is Errors.NONE
    return c


def test_offsets_sent_in_a_transaction_are_committed_with_it_and_dropped_with_an_abort(start_cluster):
    from confluent_kafka import Consumer, Producer

    c = _cluster(start_cluster, "in", "out")

    consumer = Consumer({"bootstrap.servers": bootstrap(c), "group.id": GROUP, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
    try:
        consumer.subscribe(["in"])
        with closing_producer(Producer({"bootstrap.servers": bootstrap(c), "transactional.id": TXN_ID,
                                        "transaction.timeout.ms": 60000})) as producer:
            producer.init_transactions(60)

            _transform(producer, consumer, 4)
            # the offsets are in the log as the producer's transactional batch: pending, not committed
            assert _committed(c) == -1001
            assert _stable_fetch(c) == (UNSTABLE_OFFSET_COMMIT, -1)
            producer.commit_transaction(60)
            # EndTxn is answered once PrepareCommit is written; the marker reaches __consumer_offsets after it
            c.wait(lambda: _stable_fetch(c) == (0, 4), what="the transaction's offset committed")
            assert _committed(c) == 4
            assert _out_values(c, 4) == [b"R0", b"R1", b"R2", b"R3"]

            _transform(producer, consumer, 3)
            assert _stable_fetch(c) == (UNSTABLE_OFFSET_COMMIT, -1)
            producer.abort_transaction(60)
            c.wait(lambda: _stable_fetch(c)[0] == 0, what="the aborted transaction's offsets dropped")
            assert _stable_fetch(c) == (0, 4)
            assert _committed(c) == 4
            assert _out_values(c, 4) == [b"R0", b"R1", b"R2", b"R3"]  # the aborted records are never read
    finally:
        consumer.close()

    desc = run_kactor("consumer-groups", "--bootstrap-server", bootstrap(c), "--describe", "--group", GROUP)
    rows = [line.split() for line in desc.stdout.splitlines() if line.startswith(GROUP)]
    assert rows == [[GROUP, "in", "0", "4", "10", "6", "-", "-", "-"]], desc.stdout + desc.stderr

    # the coordinator's restart loads the group from __consumer_offsets: the committed transaction's offset,
    # replayed with its COMMIT marker, is there; the aborted one's never materialises. It comes back without KIP-890's
    # verification (on by default), so that the raw TxnOffsetCommits below reach 2.6.3's append check: verified, a
    # transactional id no InitProducerId gave ("fenced-tx") is INVALID_PRODUCER_ID_MAPPING before any epoch is looked at
    c.lc.overrides.append("transaction.partition.verification.enable=false")
    c.stop_broker(0)
    c.restart(0)
    assert c.wait(lambda: _safe(lambda: _stable_fetch(c)), what="the group loaded") == (0, 4)
    assert _committed(c) == 4

    # the coordinator's append checks the producer's epoch: once a batch of epoch 1 is in the group's partition, a
    # TxnOffsetCommit of epoch 0 (a fenced producer's) is INVALID_PRODUCER_EPOCH
    init = raw_request(bootstrap(c), 22, 1, {"transactional_id": None, "transaction_timeout_ms": 60000})
    assert init["error_code"] == 0, init
    pid = init["producer_id"]
    assert [_txn_offset_commit(c, pid, epoch, offset) for epoch, offset in ((1, 5), (1, 6), (0, 7))] == [
        0, 0, INVALID_PRODUCER_EPOCH]


def _safe(probe: Any) -> Any:
    """``probe()``, or None while the restarted broker is not answering (or answers COORDINATOR_LOAD_IN_PROGRESS)."""
    try:
        return probe()
    except (OSError, AssertionError):
        return None


def test_kafka_python3_send_offsets_to_transaction(start_cluster):
    """The same loop with kafka-python 3 (tests/cluster/kafka_python3_txn_offsets.py, a consumer assigned its
    partition: no generation or member id in its TxnOffsetCommit): pending until the commit, committed with it, and
    an aborted transaction's offset dropped."""
    c = _cluster(start_cluster, "kin", "kout")
    script = Path(__file__).parent / "kafka_python3_txn_offsets.py"
    proc = subprocess.run([sys.executable, str(script), bootstrap(c), "kp3-ctp", "kin", "kout"], capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(KAFKA_PYTHON3)))
    assert proc.returncode == 0, proc.stderr[-8000:]
    assert json.loads(proc.stdout) == {"pending": None, "committed": 4, "pending_abort": 4}
    c.wait(lambda: _stable_fetch(c, "kp3-ctp", "kin")[0] == 0, what="the aborted transaction's offsets dropped")
    assert _stable_fetch(c, "kp3-ctp", "kin") == (0, 4)
    assert _committed(c, "kp3-ctp", "kin") == 4
    assert _out_values(c, 4, "kout") == [b"R0", b"R1", b"R2", b"R3"]
