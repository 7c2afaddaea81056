"""The transaction coordinator on a real broker with a real client (confluent-kafka / librdkafka): a transactional
producer finds its coordinator (FindCoordinator key type 1 creates __transaction_state as 2.6.3's
transactionTopicConfigs say), initialises its producer id, adds a partition and commits; the coordinator writes
Empty → Ongoing → PrepareCommit for the transactional id to its __transaction_state partition (TransactionLog v0)
before each answer, and sends the commit marker to the partition's leader. An idempotent producer's InitProducerId
goes through the same coordinator. (The leader side of WriteTxnMarkers is another part of issue #27: until it exists
the marker is retried and CompleteCommit is not written, which this test does not wait for.)"""

from __future__ import annotations

import os

import pytest
from kafka_clients_helpers import bootstrap, closing_producer

from core.coordinator.group.group_metadata_manager import partition_for
from core.coordinator.transaction.transaction_log import read_txn_record_key, read_txn_record_value
from core.coordinator.transaction.transaction_metadata import TransactionState
from messages.common import TopicPartition
from protocol.records import iter_batches, read_records

pytestmark = [pytest.mark.cluster]

TXN_ID = "txn-app"
PARTITIONS = 3


def _txn_records(c, partition: int) -> list[tuple[str, object]]:
    folder = os.path.join(c.log_dir(0), f"__transaction_state-{partition}")
    if not os.path.isdir(folder):
        return []
    data = b""
    for name in sorted(os.listdir(folder)):
        if name.endswith(".log"):
            with open(os.path.join(folder, name), "rb") as f:
                data += f.read()
    out = []
    try:
        for batch in iter_batches(data):
            for r in read_records(batch):
                out.append((read_txn_record_key(r.key), None if r.value is None else read_txn_record_value(r.value)))
    except Exception:  # noqa: BLE001 - a batch being written ends the list
        pass
    return out


def test_a_transactional_producer_initialises_and_commits_through_the_coordinator(start_cluster):
    from confluent_kafka import Producer

    # a single-broker LocalCluster lowers transaction.state.log.replication.factor and min.isr to 1 by itself
    # (2.6's 3 and 2 would leave __transaction_state uncreated: COORDINATOR_NOT_AVAILABLE for ever)
    c = start_cluster(1, overrides=(f"transaction.state.log.num.partitions={PARTITIONS}",))
    c.create_topic("t", partitions=1, replication_factor=1)
    with closing_producer(Producer({"bootstrap.servers": bootstrap(c), "transactional.id": TXN_ID,
                                    "transaction.timeout.ms": 60000})) as producer:
        producer.init_transactions(60)
        # FindCoordinator created __transaction_state with the transaction topic's configs
        assert c.assignment("__transaction_state") == {p: [0] for p in range(PARTITIONS)}
        assert c.json("/config/topics/__transaction_state")["config"] == {
            "unclean.leader.election.enable": "false", "compression.type": "uncompressed",
            "cleanup.policy": "compact", "min.insync.replicas": "1", "segment.bytes": "104857600"}
        producer.begin_transaction()
        for i in range(3):
            producer.produce("t", value=f"v{i}".encode(), partition=0)
        producer.commit_transaction(60)  # EndTxn answered once PrepareCommit is written

    p = partition_for(TXN_ID, PARTITIONS)
    records = c.wait(lambda: (r := _txn_records(c, p)) and len(r) >= 3 and r, what="three transaction records")
    assert {k for k, _ in records} == {TXN_ID}
    states = [TransactionState.from_byte(v.state_byte) for _, v in records]
    assert states[:3] == [TransactionState.EMPTY, TransactionState.ONGOING, TransactionState.PREPARE_COMMIT]
    empty, ongoing, prepare = (v for _, v in records[:3])
    assert (empty.producer_epoch, empty.txn_timeout_ms, empty.topic_partitions) == (0, 60000, frozenset())
    assert ongoing.producer_id == empty.producer_id >= 0
    assert ongoing.topic_partitions == prepare.topic_partitions == frozenset({TopicPartition("t", 0)})
    assert prepare.txn_start_timestamp == ongoing.txn_start_timestamp > 0

    # an idempotent producer gets its producer id from the same coordinator, and its records are acknowledged
    delivered = []
    with closing_producer(Producer({"bootstrap.servers": bootstrap(c), "enable.idempotence": True})) as idem:
        idem.produce("t", value=b"idem", partition=0, on_delivery=lambda err, msg: delivered.append(err))
        assert idem.flush(60) == 0
    assert delivered == [None]
