"""Transactions in the log on a real 3-broker cluster (issue #27 part 2): transactional batches produced over Kafka's
protocol with a producer id from InitProducerId, COMMIT / ABORT markers written straight to the leader with
WriteTxnMarkers (as a transaction coordinator sends them), then librdkafka consumers: read_committed sees exactly
the committed and plain records in order and stops at a transaction still open (the last stable offset),
read_uncommitted sees every record, and so does ``kactor consume --isolation-level``. The leader is SIGKILLed and
another replica leads: it rebuilt the same producer state from the replicated batches (the open transaction still
bounds read_committed), and a COMMIT written to it then makes that transaction visible."""

from __future__ import annotations

from cluster_helpers import Cluster, now_ms, raw_request, run_kactor
from kafka_clients_helpers import bootstrap, read_from_start

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


def consume(c: Cluster, isolation: str, expected: int, settle_s: float = 3.0, timeout_s: float = 60.0
            ) -> list[str]:
    """The values a librdkafka consumer at ``isolation`` reads from offset 0 (kafka_clients_helpers.read_from_start)."""
    return read_from_start(c, TOPIC, isolation, expected, settle_s, timeout_s, "txn-reader")[0]


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
    for isolation, values in (("read_committed", ["b0", "b1", "p0"]), ("read_uncommitted", everything)):
        printed = run_kactor("consume", "--bootstrap-server", bootstrap(c), "--topic", TOPIC, "--from-beginning",
                             "--timeout-ms", "5000", "--isolation-level", isolation)
        assert printed.stdout.splitlines() == values

    old_leader, _ = leader_port(c)
    c.wait_partition(TOPIC, 0, lambda st: len(st["isr"]) == 3, what="every replica in sync")
    c.kill(old_leader)
    c.wait_partition(TOPIC, 0, lambda st: st["leader"] not in (-1, old_leader), what="another leader")
    # the new leader rebuilt the same state from the replicated batches: d's transaction is still open
    assert consume(c, "read_committed", 3) == ["b0", "b1", "p0"]
    assert consume(c, "read_uncommitted", 8) == everything
    end_txn(c, d, commit=True)
    assert consume(c, "read_committed", 5) == ["b0", "b1", "p0", "d0", "p1"]
