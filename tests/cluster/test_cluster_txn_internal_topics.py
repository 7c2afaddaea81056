"""The audit's poisoning sequence on a real broker (issue #39; audit finding 1): a client asks AddPartitionsToTxn for
``__transaction_state-0`` and is refused as 2.6.3 refuses it (TOPIC_AUTHORIZATION_FAILED, KafkaApis L2130), so its
EndTxn finds no transaction and no marker reaches the coordinator's log; a client's Produce to the internal topic is
INVALID_TOPIC_EXCEPTION. Then another transactional id opens a transaction whose producer dies, the broker
restarts, and the coordinator, having loaded every id of its one partition, aborts that transaction once its timeout
has passed: a read_committed consumer reads past it (the LSO moves on), and the id's next InitProducerId is an
epoch bump of the same producer id (the zombie stays fenced).

Before the fix the ABORT marker written into ``__transaction_state-0`` stopped every later load at that offset: the
victim's id was lost at the restart, its transaction was never aborted (read_committed stalled at offset 0 for ever)
and its next InitProducerId got a new producer id at epoch 0."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from cluster_helpers import Cluster, now_ms, produce, raw_request
from kafka_clients_helpers import bootstrap, read_from_start

from messages.common import Errors
from protocol.records import TRANSACTIONAL_BIT, Record, build_batch, iter_batches

pytestmark = [pytest.mark.cluster]

TOPIC = "poison-data"
OVERRIDES = ("offsets.topic.replication.factor=1", "offsets.topic.num.partitions=1",
             "transaction.state.log.replication.factor=1", "transaction.state.log.min.isr=1",
             "transaction.state.log.num.partitions=1", "group.initial.rebalance.delay.ms=0",
             "transaction.abort.timed.out.transaction.cleanup.interval.ms=1000")
VICTIM_TIMEOUT_MS = 10000
TOPIC_AUTHORIZATION_FAILED, OPERATION_NOT_ATTEMPTED, INVALID_TXN_STATE, INVALID_TOPIC_EXCEPTION = 29, 55, 48, 17

# the victim: a librdkafka transactional producer that writes one record in a transaction and dies without ending it
VICTIM = textwrap.dedent("""
    import os, sys
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": sys.argv[1], "transactional.id": "victim2",
                  "transaction.timeout.ms": int(sys.argv[2])})
    p.init_transactions(60)
    p.begin_transaction()
    p.produce(sys.argv[3], key=b"k", value=b"open", partition=0)
    assert p.flush(60) == 0
    os._exit(0)
""")


def _address(c: Cluster) -> str:
    return "{}:{}".format(*c.lc.broker_address(0))


def _coordinator(c: Cluster, txn_id: str) -> None:
    """FindCoordinator (key type 1) until answered: the first creates __transaction_state."""
    def found() -> bool:
        try:
            return raw_request(_address(c), 10, 2, {"key": txn_id, "key_type": 1}, timeout=10)["error_code"] == 0
        except OSError:
            return False
    c.wait(found, 60, f"the coordinator of {txn_id}")


def _init(c: Cluster, txn_id: str, timeout_ms: int = 60000) -> dict[str, Any]:
    return raw_request(_address(c), 22, 1, {"transactional_id": txn_id, "transaction_timeout_ms": timeout_ms})


def _add(c: Cluster, txn_id: str, pid: int, epoch: int, topics: list[tuple[str, list[int]]]
         ) -> dict[tuple[str, int], int]:
    answer = raw_request(_address(c), 24, 1, {
        "v3_and_below_transactional_id": txn_id, "v3_and_below_producer_id": pid,
        "v3_and_below_producer_epoch": epoch,
        "v3_and_below_topics": [{"name": t, "partitions": ps} for t, ps in topics]})
    return {(t["name"], p["partition_index"]): p["partition_error_code"]
            for t in answer["results_by_topic_v3_and_below"] for p in t["results_by_partition"]}


def _read(c: Cluster, isolation: str, expected: int, settle_s: float = 2.0, timeout_s: float = 60.0
          ) -> tuple[list[str], tuple[int, int]]:
    return read_from_start(c, TOPIC, isolation, expected, settle_s, timeout_s, "poison-reader")


def test_internal_topics_stay_out_of_transactions_and_a_dead_producers_transaction_is_aborted_after_a_restart(
        start_cluster):
    c = start_cluster(1, overrides=OVERRIDES)
    c.create_topic(TOPIC, partitions=1, replication_factor=1)
    _coordinator(c, "poisoner")

    # the poisoning attempt: refused with or without an authorizer (this cluster has none)
    init = _init(c, "poisoner")
    assert init["error_code"] == 0, init
    pid, epoch = init["producer_id"], init["producer_epoch"]
    assert _add(c, "poisoner", pid, epoch, [("__transaction_state", [0]), (TOPIC, [0])]) == {
        ("__transaction_state", 0): TOPIC_AUTHORIZATION_FAILED, (TOPIC, 0): OPERATION_NOT_ATTEMPTED}
    assert _add(c, "poisoner", pid, epoch, [("__consumer_offsets", [0])]) == {
        ("__consumer_offsets", 0): TOPIC_AUTHORIZATION_FAILED}
    end = raw_request(_address(c), 26, 1, {"transactional_id": "poisoner", "producer_id": pid,
                                            "producer_epoch": epoch, "committed": False})
    assert end["error_code"] == INVALID_TXN_STATE  # nothing was added: no transaction, no marker
    # nor can a client append to the internal topic itself (ReplicaManager.appendToLocalLog)
    batch = build_batch([Record(0, 0, b"k", b"v")], first_timestamp=now_ms())
    produced = raw_request(_address(c), 0, 8, {"transactional_id": None, "acks": 1, "timeout_ms": 30000, "topic_data": [
        {"name": "__transaction_state", "partition_data": [{"index": 0, "records": batch}]}]})
    assert produced["responses"][0]["partition_responses"][0]["error_code"] == INVALID_TOPIC_EXCEPTION

    # the victim's producer opens a transaction on the data topic and dies
    victim = subprocess.run([sys.executable, "-c", VICTIM, bootstrap(c), str(VICTIM_TIMEOUT_MS), TOPIC],
                            capture_output=True, text=True, timeout=120)
    assert victim.returncode == 0, victim.stderr[-3000:]
    victim_pid = _init_producer_id_of_open_transaction(c)

    c.stop_broker(0)
    c.restart(0)
    _coordinator(c, "victim2")  # the partition is loaded: its ids answer again

    # the coordinator aborts the open transaction once its timeout has passed: its marker lets read_committed on
    values, (low, lso) = c.wait(lambda: (r := _read(c, "read_committed", 0, settle_s=0.5))[1][1] == 2 and r,
                                VICTIM_TIMEOUT_MS / 1000 + 60, "the victim's transaction aborted (LSO 2)")
    assert (values, low, lso) == ([], 0, 2)  # "open" at 0 aborted, its ABORT marker at 1
    assert produce(c, TOPIC, 0, ("after",)).error is Errors.NONE
    assert _read(c, "read_committed", 1) == (["after"], (0, 3))
    assert _read(c, "read_uncommitted", 2) == (["open", "after"], (0, 3))

    # the victim's id survived the restart: its next InitProducerId bumps the fenced epoch of the same producer id
    again = _init(c, "victim2", VICTIM_TIMEOUT_MS)
    assert (again["error_code"], again["producer_id"], again["producer_epoch"]) == (0, victim_pid, 2)


def _init_producer_id_of_open_transaction(c: Cluster) -> int:
    """The producer id of the one batch the victim left open in the data topic (from the broker's segment)."""
    folder = os.path.join(c.log_dir(0), f"{TOPIC}-0")
    data = b"".join(Path(folder, n).read_bytes() for n in sorted(os.listdir(folder)) if n.endswith(".log"))
    (batch,) = iter_batches(data)
    assert batch.attributes & TRANSACTIONAL_BIT
    return batch.producer_id
