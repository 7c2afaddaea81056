"""KIP-890 part 1 and KIP-664 on a real broker (issue #40). With transaction.partition.verification.enable (Kafka 3.6's
default) a transactional produce to a partition its transaction never added is refused with 3.6's INVALID_TXN_STATE
("Partition was not added to the transaction") and nothing is appended. With it off (2.6's behaviour) the same
produce is appended, no marker ever ends it, and read_committed stalls at it; ``kactor transactions find-hanging``
lists it and ``abort --start-offset`` ends it, after which a read_committed consumer reads on. A TxnOffsetCommit is
verified too (Kafka 3.7, KAFKA-15449): one in the ongoing transaction is committed with it, a stray one after the
transaction ended is refused INVALID_TXN_STATE and leaves the group's offset stable."""

from __future__ import annotations

from typing import Any

import pytest
from cluster_helpers import Cluster, now_ms, produce, raw_request, run_kactor
from kafka_clients_helpers import bootstrap, read_from_start

from protocol.records import TRANSACTIONAL_BIT, Record, build_batch

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

TOPIC = "verify-data"
HANGING, ADDED = 0, 1  # partition 0 is never added to the transactions (read_from_start reads partition 0)
OVERRIDES = ("offsets.topic.replication.factor=1", "offsets.topic.num.partitions=1",
             "transaction.state.log.replication.factor=1", "transaction.state.log.min.isr=1",
             "transaction.state.log.num.partitions=1", "group.initial.rebalance.delay.ms=0")
INVALID_TXN_STATE = 48
GROUP = "verify-group"


def _address(c: Cluster) -> str:
    return "{}:{}".format(*c.lc.broker_address(0))


def _begin(c: Cluster, txn_id: str) -> tuple[int, int]:
    """FindCoordinator until answered, InitProducerId, then AddPartitionsToTxn of partition ADDED only."""
    def found() -> bool:
        try:
            return raw_request(_address(c), 10, 2, {"key": txn_id, "key_type": 1}, timeout=10)["error_code"] == 0
        except OSError:
            return False
    c.wait(found, 60, f"the coordinator of {txn_id}")
    init = c.wait(lambda: (r := raw_request(_address(c), 22, 1, {"transactional_id": txn_id,
                                                                  "transaction_timeout_ms": 60000}))
                  ["error_code"] == 0 and r, 30, f"InitProducerId of {txn_id}")
    pid, epoch = init["producer_id"], init["producer_epoch"]
    added = raw_request(_address(c), 24, 1, {
        "v3_and_below_transactional_id": txn_id, "v3_and_below_producer_id": pid,
        "v3_and_below_producer_epoch": epoch, "v3_and_below_topics": [{"name": TOPIC, "partitions": [ADDED]}]})
    assert added["results_by_topic_v3_and_below"][0]["results_by_partition"][0]["partition_error_code"] == 0
    return pid, epoch


def _txn_produce(c: Cluster, txn_id: str, pid: int, epoch: int, partition: int, value: str) -> dict[str, Any]:
    batch = build_batch([Record(0, 0, b"k", value.encode())], first_timestamp=now_ms(), producer_id=pid,
                        producer_epoch=epoch, base_sequence=0, attributes=TRANSACTIONAL_BIT)
    answer = raw_request(_address(c), 0, 8, {"transactional_id": txn_id, "acks": -1, "timeout_ms": 30000,
                                             "topic_data": [{"name": TOPIC, "partition_data": [
                                                 {"index": partition, "records": batch}]}]})
    return answer["responses"][0]["partition_responses"][0]


def _commit(c: Cluster, txn_id: str, pid: int, epoch: int) -> None:
    end = raw_request(_address(c), 26, 1, {"transactional_id": txn_id, "producer_id": pid, "producer_epoch": epoch,
                                            "committed": True})
    assert end["error_code"] == 0, end


def _txn_offset_commit(c: Cluster, txn_id: str, pid: int, epoch: int, offset: int) -> int:
    """TxnOffsetCommit v2 of ``offset`` for partition ADDED in GROUP; the partition's error code."""
    answer = raw_request(_address(c), 28, 2, {
        "transactional_id": txn_id, "group_id": GROUP, "producer_id": pid, "producer_epoch": epoch,
        "topics": [{"name": TOPIC, "partitions": [{"partition_index": ADDED, "committed_offset": offset,
                                                   "committed_leader_epoch": -1, "committed_metadata": None}]}]})
    return answer["topics"][0]["partitions"][0]["error_code"]


def _stable_offset(c: Cluster) -> tuple[int, int]:
    """OffsetFetch v7 with require_stable of partition ADDED: (committed offset, error code)."""
    answer = raw_request(_address(c), 9, 7, {"group_id": GROUP, "require_stable": True,
                                             "topics": [{"name": TOPIC, "partition_indexes": [ADDED]}]})
    p = answer["topics"][0]["partitions"][0]
    return p["committed_offset"], p["error_code"]


def _rows(out: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.split("\t")[:-1]] for line in out.splitlines()[1:]]


def test_a_never_added_partition_is_refused_and_with_verification_off_its_hanging_transaction_is_aborted(
        start_cluster):
    c = start_cluster(1, overrides=(*OVERRIDES, "transaction.partition.verification.enable=true"))
    c.create_topic(TOPIC, partitions=2, replication_factor=1)

    # verification on: refused with 3.6's error, nothing appended
    pid, epoch = _begin(c, "verified")
    refused = _txn_produce(c, "verified", pid, epoch, HANGING, "never-added")
    assert (refused["error_code"], refused["error_message"]) == (INVALID_TXN_STATE,
                                                                 "Partition was not added to the transaction")
    assert _txn_produce(c, "verified", pid, epoch, ADDED, "added")["error_code"] == 0
    # the consumed offsets in the transaction: AddOffsetsToTxn, then the group coordinator's verified TxnOffsetCommit
    c.wait(lambda: raw_request(_address(c), 10, 2, {"key": GROUP, "key_type": 0})["error_code"] == 0, 60,
           f"the coordinator of {GROUP}")
    added = raw_request(_address(c), 25, 1, {"transactional_id": "verified", "producer_id": pid,
                                             "producer_epoch": epoch, "group_id": GROUP})
    assert added["error_code"] == 0, added
    c.wait(lambda: _txn_offset_commit(c, "verified", pid, epoch, 7) == 0, 30, "the TxnOffsetCommit")
    _commit(c, "verified", pid, epoch)
    c.wait(lambda: _stable_offset(c) == (7, 0), 30, "the committed offset")
    # a stray TxnOffsetCommit of the ended transaction (2.6.3 appended it, pending for ever: UNSTABLE_OFFSET_COMMIT)
    assert _txn_offset_commit(c, "verified", pid, epoch, 9) == INVALID_TXN_STATE
    assert _stable_offset(c) == (7, 0)

    # verification off: the same produce is appended and hangs
    overrides = c.lc.overrides
    overrides[overrides.index("transaction.partition.verification.enable=true")] = \
        "transaction.partition.verification.enable=false"
    c.stop_broker(0)
    c.restart(0)
    pid, epoch = _begin(c, "unverified")
    hanging = _txn_produce(c, "unverified", pid, epoch, HANGING, "hanging")
    assert (hanging["error_code"], hanging["base_offset"]) == (0, 0)  # the first record of partition 0
    assert _txn_produce(c, "unverified", pid, epoch, ADDED, "added-2")["error_code"] == 0
    _commit(c, "unverified", pid, epoch)  # the coordinator's markers go to partition ADDED only
    after = produce(c, TOPIC, HANGING, ("after",))
    assert after.error.name == "NONE" and after.base_offset == 1
    values, (_, lso) = read_from_start(c, TOPIC, "read_committed", 1, 1.0, 6.0, "stalled")
    assert (values, lso) == ([], 0)  # read_committed stalls at the open transaction's first offset

    found = run_kactor("transactions", "--bootstrap-server", bootstrap(c), "find-hanging", "--broker-id", "0",
                       "--max-transaction-timeout", "0").stdout
    assert found.splitlines()[0].split() == ["Topic", "Partition", "ProducerId", "ProducerEpoch",
                                             "CoordinatorEpoch", "StartOffset", "LastTimestamp", "Duration(min)"]
    rows = _rows(found)
    assert [(r[0], r[1], r[2], r[3], r[5]) for r in rows] == [(TOPIC, "0", str(pid), str(epoch), "0")], found
    producers = run_kactor("transactions", "--bootstrap-server", bootstrap(c), "describe-producers", "--topic",
                           TOPIC, "--partition", "0").stdout
    assert [(r[0], r[5]) for r in _rows(producers)] == [(str(pid), "0")], producers

    run_kactor("transactions", "--bootstrap-server", bootstrap(c), "abort", "--topic", TOPIC, "--partition", "0",
               "--start-offset", "0")
    values, (_, lso) = read_from_start(c, TOPIC, "read_committed", 1, 1.0, 60.0, "freed")
    assert values == ["after"] and lso == 3  # the hanging record aborted; the marker at offset 2
    assert _rows(run_kactor("transactions", "--bootstrap-server", bootstrap(c), "find-hanging", "--broker-id", "0",
                            "--max-transaction-timeout", "0").stdout) == []
