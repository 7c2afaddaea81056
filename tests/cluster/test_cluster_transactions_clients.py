"""Exactly-once with real clients (issue #27): the transaction coordinator, its markers and READ_COMMITTED on one
3-broker cluster, driven by confluent-kafka (librdkafka) and kafka-python 3.0.12 (a subprocess,
kafka_python3_txn_client.py).

- a transactional producer commits and aborts: read_committed reads exactly the committed records in order,
  read_uncommitted all of them (both clients);
- a second producer with the same transactional.id fences the first, whose records never become visible;
- a transaction left open by a SIGKILLed producer is aborted after its transaction.timeout.ms (the coordinator's
  abort task runs every second here), and read_committed gets past it;
- the coordinator's broker SIGKILLed mid-commit: the transaction is all or nothing on every partition, and the
  producer (librdkafka) or the next producer of its transactional.id (kafka-python 3.0.12, whose commit can wait for
  ever: its test says why) goes on.

The tests share the cluster and run in this order; the last one kills a broker.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster_helpers import KILLED_UNDER_LOAD, TEST_SESSION_TIMEOUT_MS, Cluster
from kafka_clients_helpers import HERE, KAFKA_PYTHON3, bootstrap, closing_producer

from core.coordinator.group.group_metadata_manager import partition_for
from kactor.cluster import LocalCluster
from messages.topic import TRANSACTION_STATE_TOPIC_NAME
from tests.support.kazoo_clients import new_chroot

# one worker runs the module: its module-scoped cluster writes a fixed trace folder, and a kafka-python 3 test reads
# the topic a librdkafka test wrote (split across two workers, the second cluster had no such topic and read nothing)
pytestmark = [pytest.mark.cluster, pytest.mark.xdist_group("test_cluster_transactions_clients")]

TXN_PARTITIONS = 3  # of __transaction_state
PARTITIONS = 3  # of every data topic here
ABORT_INTERVAL_MS = 1000  # transaction.abort.timed.out.transaction.cleanup.interval.ms


@pytest.fixture(scope="module")
def cluster(zk_server, tmp_path_factory: pytest.TempPathFactory, cluster_trace_root: Path) -> Iterator[Cluster]:
    trace_dir = cluster_trace_root / "test_cluster_transactions_clients-0"
    trace_dir.mkdir(parents=True, exist_ok=True)
    # the last test SIGKILLs a broker while a producer commits: see conftest start_cluster(killed_under_load)
    (trace_dir / KILLED_UNDER_LOAD).write_text("incarnations after the first are not replayed\n")
    lc = LocalCluster(3, zookeeper=new_chroot(zk_server.connect_string),
                      base_dir=str(tmp_path_factory.mktemp("transactions-clients")), trace_dir=str(trace_dir),
                      overrides=[f"zookeeper.session.timeout.ms={TEST_SESSION_TIMEOUT_MS}",
                                 "controlled.shutdown.enable=false", "auto.leader.rebalance.enable=false",
                                 "offsets.topic.num.partitions=3", "group.initial.rebalance.delay.ms=0",
                                 f"transaction.state.log.num.partitions={TXN_PARTITIONS}",
                                 f"transaction.abort.timed.out.transaction.cleanup.interval.ms={ABORT_INTERVAL_MS}"])
    c = Cluster(lc)
    try:
        # Cluster.start, with a deadline for a machine loaded by other clusters
        lc.start()
        c.wait(lambda: len(c.zk.get_children("/brokers/ids")) == 3, 120, "3 brokers registered")
        c.wait(lambda: c.controller_id() is not None, 60, "a controller")
        yield c
    finally:
        c.stop()


# -- clients ---------------------------------------------------------------------------------------------------------
def _config(c: Cluster, name: str, extra: dict[str, Any]) -> dict[str, Any]:
    from kactor.kafka_clients import client_config

    return client_config(bootstrap(c), name, extra)


def txn_producer(c: Cluster, txn_id: str, **extra: Any) -> Any:
    from confluent_kafka import Producer

    return Producer(_config(c, f"producer-{txn_id}", {"transactional.id": txn_id, **extra}))


def produce_all(producer: Any, topic: str, values: list[tuple[int, str]]) -> None:
    """Every value to its partition, flushed; a delivery error fails the test."""
    errors: list[Any] = []
    for p, v in values:
        producer.produce(topic, value=v.encode(), partition=p,
                         on_delivery=lambda err, msg: err is not None and errors.append(err))
    assert producer.flush(60) == 0
    assert errors == []


def consume(c: Cluster, topic: str, isolation: str, expected: int, timeout_s: float = 60.0) -> dict[int, list[str]]:
    """{partition: values in offset order} a librdkafka consumer at ``isolation`` reads from offset 0 of every
    partition: until ``expected`` arrived and every partition is at its end at that isolation, the high watermark,
    or for read_committed the last stable offset (librdkafka's _PARTITION_EOF; enable.partition.eof). Past that end
    no record is returned until the leader's log or state changes, so none is missed that a reader waiting on would
    get. Whatever was read when ``timeout_s`` ran out, otherwise."""
    from confluent_kafka import Consumer
    from confluent_kafka import KafkaError as CkKafkaError
    from confluent_kafka import TopicPartition as CkTopicPartition

    consumer = Consumer(_config(c, "txn-reader", {"group.id": f"txn-reader-{topic}", "enable.auto.commit": False,
                                                  "isolation.level": isolation, "enable.partition.eof": True}))
    out: dict[int, list[str]] = {p: [] for p in range(PARTITIONS)}
    at_end: set[int] = set()  # partitions whose end came after their last record
    try:
        consumer.assign([CkTopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            message: Any = consumer.poll(0.2)
            if message is None:
                continue
            if message.error() is None:
                out[message.partition()].append(message.value().decode())
                at_end.discard(message.partition())
            elif message.error().code() == CkKafkaError._PARTITION_EOF:
                at_end.add(message.partition())
                if len(at_end) == PARTITIONS and sum(map(len, out.values())) >= expected:
                    break
    finally:
        consumer.close()
    return out


def kp3_txn(*args: str, timeout: float = 150) -> Any:
    """kafka_python3_txn_client.py under kafka-python 3."""
    (result,) = kp3_txns(args, timeout=timeout)
    return result


def kp3_txns(*runs: tuple[str, ...], timeout: float = 150) -> list[Any]:
    """kafka_python3_txn_client.py under kafka-python 3, once per argument tuple, all at once (readers that do not
    wait on each other); their results in order."""
    env = dict(os.environ, PYTHONPATH=str(KAFKA_PYTHON3))
    procs = [subprocess.Popen([sys.executable, str(HERE / "kafka_python3_txn_client.py"), *args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=str(HERE))
             for args in runs]
    results = []
    try:
        for args, proc in zip(runs, procs, strict=True):
            out, err = proc.communicate(timeout=timeout)
            assert proc.returncode == 0, f"kafka-python 3 {' '.join(args)} exited {proc.returncode}:\n{err[-3000:]}"
            results.append(json.loads(out))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return results


def per_partition(values: dict[str, list[str]]) -> dict[int, list[str]]:
    return {int(p): v for p, v in values.items()}


# -- 1. commit and abort ---------------------------------------------------------------------------------------------
def test_librdkafka_read_committed_reads_exactly_the_committed_records(cluster: Cluster) -> None:
    c = cluster
    c.create_topic("txn-ck", PARTITIONS, 3)
    with closing_producer(txn_producer(c, "ck-txn")) as producer:
        producer.init_transactions(60)
        for kind, commit in (("c0", True), ("a0", False), ("c1", True)):
            producer.begin_transaction()
            produce_all(producer, "txn-ck", [(p, f"{kind}-{p}-{i}") for p in range(PARTITIONS) for i in range(2)])
            if commit:
                producer.commit_transaction(60)
            else:
                producer.abort_transaction(60)
    committed = {p: [f"{k}-{p}-{i}" for k in ("c0", "c1") for i in range(2)] for p in range(PARTITIONS)}
    everything = {p: [f"{k}-{p}-{i}" for k in ("c0", "a0", "c1") for i in range(2)] for p in range(PARTITIONS)}
    assert consume(c, "txn-ck", "read_committed", 12) == committed
    assert consume(c, "txn-ck", "read_uncommitted", 18) == everything


def test_kafka_python3_read_committed_reads_exactly_the_committed_records(cluster: Cluster) -> None:
    c = cluster
    c.create_topic("txn-kp3", PARTITIONS, 3)
    assert kp3_txn("transactions", bootstrap(c), "txn-kp3", "kp3-txn", str(PARTITIONS)) == {"error": None}
    committed = {p: [f"kc0-{p}", f"kc1-{p}", f"kc2-{p}"] for p in range(PARTITIONS)}
    everything = {p: [f"kc0-{p}", f"kc1-{p}", f"ka-{p}", f"kc2-{p}"] for p in range(PARTITIONS)}
    # each client reads what the other wrote, at both isolation levels
    assert consume(c, "txn-kp3", "read_committed", 9) == committed
    assert consume(c, "txn-kp3", "read_uncommitted", 12) == everything
    read = kp3_txns(("consume", bootstrap(c), "txn-kp3", "read_committed", str(PARTITIONS), "9"),
                    ("consume", bootstrap(c), "txn-kp3", "read_uncommitted", str(PARTITIONS), "12"),
                    ("consume", bootstrap(c), "txn-ck", "read_committed", str(PARTITIONS), "12"))
    assert [per_partition(r) for r in read] == [
        committed, everything, {p: [f"{k}-{p}-{i}" for k in ("c0", "c1") for i in range(2)] for p in range(PARTITIONS)}]


def test_interleaved_transactions_on_the_same_partitions(cluster: Cluster) -> None:
    """Two producers' transactions interleaved batch by batch on every partition, one committed and one aborted,
    then both again the other way round: read_committed skips exactly the aborted batches (the aborted transactions
    index), whichever transaction ended first."""
    c = cluster
    c.create_topic("txn-mix", PARTITIONS, 3)
    with closing_producer(txn_producer(c, "mix-a")) as a, closing_producer(txn_producer(c, "mix-b")) as b:
        a.init_transactions(60)
        b.init_transactions(60)
        for rnd, (first, second) in enumerate(((a, b), (b, a))):
            first.begin_transaction()
            second.begin_transaction()
            for i in range(3):
                produce_all(a, "txn-mix", [(p, f"a{rnd}-{p}-{i}") for p in range(PARTITIONS)])
                produce_all(b, "txn-mix", [(p, f"b{rnd}-{p}-{i}") for p in range(PARTITIONS)])
            # round 0: a commits first, then b aborts; round 1: b aborts first, then a commits
            for producer in (first, second):
                if producer is a:
                    a.commit_transaction(60)
                else:
                    b.abort_transaction(60)
    committed = {p: [f"a{rnd}-{p}-{i}" for rnd in range(2) for i in range(3)] for p in range(PARTITIONS)}
    assert consume(c, "txn-mix", "read_committed", 18) == committed
    assert consume(c, "txn-mix", "read_uncommitted", 36) == {
        p: [f"{x}{rnd}-{p}-{i}" for rnd in range(2) for i in range(3) for x in "ab"] for p in range(PARTITIONS)}


# -- 2. fencing ------------------------------------------------------------------------------------------------------
def test_librdkafka_a_second_producer_fences_the_first(cluster: Cluster) -> None:
    from confluent_kafka import KafkaException

    c = cluster
    c.create_topic("txn-fence", PARTITIONS, 3)
    with closing_producer(txn_producer(c, "fenced")) as zombie, closing_producer(txn_producer(c, "fenced")) as fencer:
        zombie.init_transactions(60)
        zombie.begin_transaction()
        produce_all(zombie, "txn-fence", [(0, "zombie-0"), (1, "zombie-0")])
        # InitProducerId aborts the zombie's open transaction and bumps the epoch
        fencer.init_transactions(60)
        fencer.begin_transaction()
        produce_all(fencer, "txn-fence", [(0, "fencer-0"), (1, "fencer-0")])
        fencer.commit_transaction(60)
        with pytest.raises(KafkaException) as raised:
            zombie.produce("txn-fence", value=b"zombie-1", partition=0)
            zombie.flush(30)
            zombie.commit_transaction(30)
        error = raised.value.args[0]
        assert error.fatal(), error
        assert error.name() in ("_FENCED", "PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH"), error
        # the fencer goes on
        fencer.begin_transaction()
        produce_all(fencer, "txn-fence", [(2, "fencer-1")])
        fencer.commit_transaction(60)
    assert consume(c, "txn-fence", "read_committed", 3) == {0: ["fencer-0"], 1: ["fencer-0"], 2: ["fencer-1"]}
    assert sorted(v for vs in consume(c, "txn-fence", "read_uncommitted", 5).values() for v in vs) == \
        ["fencer-0", "fencer-0", "fencer-1", "zombie-0", "zombie-0"]


def test_kafka_python3_a_second_producer_fences_the_first(cluster: Cluster) -> None:
    c = cluster
    c.create_topic("txn-fence-kp3", PARTITIONS, 3)
    # a Produce of an older epoch is INVALID_PRODUCER_EPOCH in 2.6 (PRODUCER_FENCED is 2.7's): kafka-python 3 fails
    # the send with it and starts a KIP-360 epoch bump, so its commit fails (how depends on how far the bump got)
    errors = kp3_txn("fence", bootstrap(c), "txn-fence-kp3", "fenced-kp3")
    assert errors["send"].startswith("InvalidProducerEpochError: [Error 47]"), errors
    assert errors["commit"] is not None, errors
    assert consume(c, "txn-fence-kp3", "read_committed", 1) == {0: ["fencer-0"], 1: [], 2: []}
    assert consume(c, "txn-fence-kp3", "read_uncommitted", 2) == {0: ["zombie-0", "fencer-0"], 1: [], 2: []}


def test_a_timeout_above_transaction_max_timeout_ms_is_refused(cluster: Cluster) -> None:
    """InitProducerId with a transaction.timeout.ms above the broker's transaction.max.timeout.ms (900000):
    INVALID_TRANSACTION_TIMEOUT, which librdkafka reports from init_transactions."""
    from confluent_kafka import KafkaException

    producer = txn_producer(cluster, "too-long", **{"transaction.timeout.ms": 900001})
    try:
        with pytest.raises(KafkaException) as raised:
            producer.init_transactions(60)
    finally:
        with contextlib.suppress(KafkaException):  # a producer in a fatal state raises it again from close
            producer.close()
    error = raised.value.args[0]
    assert (error.name(), error.fatal()) == ("INVALID_TRANSACTION_TIMEOUT", True), error


# -- 3. a transaction left open by a dead producer -------------------------------------------------------------------
def test_a_dead_producers_open_transaction_is_aborted_after_its_timeout(cluster: Cluster) -> None:
    c = cluster
    c.create_topic("txn-open", PARTITIONS, 3)
    timeout_ms = 5000
    env = dict(os.environ, PYTHONPATH=str(KAFKA_PYTHON3))
    started = time.monotonic()  # before the transaction began: its abort cannot come before started + its timeout
    proc = subprocess.Popen([sys.executable, str(HERE / "kafka_python3_txn_client.py"), "open", bootstrap(c),
                             "txn-open", "open-kp3", str(timeout_ms)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=str(HERE))
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert json.loads(line) == {"ready": True}, proc.stderr.read() if proc.stderr else line
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        # another producer commits behind the open transaction on the same partition
        with closing_producer(txn_producer(c, "after-open")) as producer:
            producer.init_transactions(60)
            producer.begin_transaction()
            produce_all(producer, "txn-open", [(0, "after-0")])
            producer.commit_transaction(60)
        # the LSO stays at the open transaction until the coordinator aborts it, then read_committed gets past it
        # (one reader, at the LSO until then: its one committed record is after-0, behind the open transaction)
        seen = consume(c, "txn-open", "read_committed", 1, timeout_s=90)
        assert time.monotonic() - started >= timeout_ms / 1000  # not aborted before its timeout
        assert seen == {0: ["after-0"], 1: [], 2: []}
        assert consume(c, "txn-open", "read_uncommitted", 3) == {0: ["open-0", "open-1", "after-0"], 1: [], 2: []}
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


# -- 4. the coordinator's broker dies mid-commit ---------------------------------------------------------------------
def _coordinator(c: Cluster, txn_id: str) -> int:
    """The leader of the transactional id's __transaction_state partition, once all three replicas are in its ISR
    (so that whatever it acknowledged survives it)."""
    st = c.wait_partition(TRANSACTION_STATE_TOPIC_NAME, partition_for(txn_id, TXN_PARTITIONS),
                          lambda st: st["leader"] >= 0 and len(st["isr"]) == 3,
                          what="the transaction log partition led and fully replicated")
    return int(st["leader"])


def test_the_coordinators_broker_killed_during_open_transactions(cluster: Cluster) -> None:
    """The next coordinator loads the Ongoing transactions: the live producer commits through it, and the dead
    producer's transaction is aborted after its timeout by it (read_committed gets past it)."""
    c = cluster
    c.create_topic("txn-ongoing", PARTITIONS, 3)
    live_id, dead_id = "ongoing-live", "ongoing-zombie"
    # both transactional ids on the same __transaction_state partition, so that one kill moves both
    assert partition_for(live_id, TXN_PARTITIONS) == partition_for(dead_id, TXN_PARTITIONS)
    env = dict(os.environ, PYTHONPATH=str(KAFKA_PYTHON3))
    proc = subprocess.Popen([sys.executable, str(HERE / "kafka_python3_txn_client.py"), "open", bootstrap(c),
                             "txn-ongoing", dead_id, "5000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=str(HERE))
    try:
        with closing_producer(txn_producer(c, live_id)) as producer:
            producer.init_transactions(60)
            producer.begin_transaction()
            produce_all(producer, "txn-ongoing", [(p, f"live-{p}") for p in range(PARTITIONS)])
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert json.loads(line) == {"ready": True}, proc.stderr.read() if proc.stderr else line
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
            coordinator = _coordinator(c, live_id)
            c.lc.kill_broker(coordinator)
            producer.commit_transaction(90)
        # the open transaction bounds partition 0 until the new coordinator aborts it (one reader, at the LSO until
        # then: live-0, the third committed record, is behind the open transaction)
        seen = consume(c, "txn-ongoing", "read_committed", 3, timeout_s=120)
        assert seen == {p: [f"live-{p}"] for p in range(PARTITIONS)}
        assert consume(c, "txn-ongoing", "read_uncommitted", 5)[0] in (["open-0", "open-1", "live-0"],
                                                                       ["live-0", "open-0", "open-1"])
        c.restart(coordinator)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


def _crash_during_commit(c: Cluster, producer: Any, txn_id: str, tag: str, kill_after_commit: bool) -> bool:
    """One transaction of 20 records on every partition of txn-crash whose coordinator's broker is SIGKILLed (no
    wait for its trace: the point is to land between PrepareCommit and CompleteCommit) while its commit is in
    flight, or right after the commit was acknowledged; the commit finished as librdkafka says to. Whether it was
    committed (else aborted); the killed broker is started again."""
    from confluent_kafka import KafkaException

    coordinator = _coordinator(c, txn_id)
    producer.begin_transaction()
    produce_all(producer, "txn-crash", [(p, f"{tag}-{p}-{i}") for p in range(PARTITIONS) for i in range(20)])
    outcome: list[BaseException | None] = []
    committing = threading.Thread(target=lambda: outcome.append(_try(lambda: producer.commit_transaction(90))))
    committing.start()
    if kill_after_commit:
        committing.join(120)
    c.lc.kill_broker(coordinator)
    committing.join(120)
    assert not committing.is_alive()
    (error,) = outcome
    committed = error is None
    if error is not None:  # what librdkafka says to do with a commit that failed
        assert isinstance(error, KafkaException) and not error.args[0].fatal(), error
        if error.args[0].retriable():
            producer.commit_transaction(90)
            committed = True
        else:
            producer.abort_transaction(90)
    c.restart(coordinator)
    return committed


def test_the_coordinators_broker_killed_mid_commit_leaves_all_or_nothing(cluster: Cluster) -> None:
    c = cluster
    c.create_topic("txn-crash", PARTITIONS, 3)
    txn_id = "crash-txn"
    expected: dict[int, list[str]] = {p: [] for p in range(PARTITIONS)}
    with closing_producer(txn_producer(c, txn_id)) as producer:
        producer.init_transactions(60)
        for tag, kill_after_commit in (("t0", False), ("t1", True)):
            if _crash_during_commit(c, producer, txn_id, tag, kill_after_commit):
                for p in range(PARTITIONS):
                    expected[p] += [f"{tag}-{p}-{i}" for i in range(20)]
            # the same producer goes on; read_committed sees every record of a committed transaction, on every
            # partition, or none of an aborted one
            producer.begin_transaction()
            produce_all(producer, "txn-crash", [(p, f"{tag}-after-{p}") for p in range(PARTITIONS)])
            producer.commit_transaction(90)
            for p in range(PARTITIONS):
                expected[p].append(f"{tag}-after-{p}")
            assert consume(c, "txn-crash", "read_committed", sum(map(len, expected.values()))) == expected
    # a commit acknowledged before the crash is never lost
    assert expected[0][-21:] == [*(f"t1-0-{i}" for i in range(20)), "t1-after-0"]
    # and a new producer with the same id goes on too
    with closing_producer(txn_producer(c, txn_id)) as again:
        again.init_transactions(60)
        again.begin_transaction()
        produce_all(again, "txn-crash", [(0, "t2-0")])
        again.commit_transaction(90)
    expected[0].append("t2-0")
    assert consume(c, "txn-crash", "read_committed", sum(map(len, expected.values()))) == expected


def test_kafka_python3_the_coordinators_broker_killed_mid_commit_leaves_all_or_nothing(cluster: Cluster) -> None:
    """kafka-python 3 commits while its coordinator's broker is SIGKILLed: the transaction is committed or aborted
    on every partition, never on some. kafka-python 3.0.12 itself may never learn which: until the dead broker's
    ZooKeeper session expires, FindCoordinator names it (the leader the answering broker's metadata cache knows, as
    KafkaApis in 2.6.3), and its Sender._maybe_send_pending_request then drops the EndTxn it was sending
    (KafkaNetClient.await_ready raises KafkaConnectionError on the refused connection; the except branch enqueues
    FindCoordinator, but target_node is already the coordinator's id, so `if target_node is None: retry(handler)` is
    skipped, where Java's Sender always retries) and commit_transaction() waits for ever. So the client gets 10 s,
    and is then replaced as its user would replace it: a new producer with the same transactional.id, whose
    InitProducerId makes the new coordinator finish the old transaction (roll a PrepareCommit forward, abort an
    Ongoing one) before it goes on."""
    c = cluster
    topic, txn_id = "txn-crash-kp3", "crash-kp3"
    c.create_topic(topic, PARTITIONS, 3)
    env = dict(os.environ, PYTHONPATH=str(KAFKA_PYTHON3))
    proc = subprocess.Popen([sys.executable, str(HERE / "kafka_python3_txn_client.py"), "commit-crash", bootstrap(c),
                             topic, txn_id, str(PARTITIONS), "60000", "10"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=str(HERE))
    try:
        assert proc.stdin is not None and proc.stdout is not None
        line = proc.stdout.readline()
        assert json.loads(line) == {"ready": True}, proc.stderr.read() if proc.stderr else line
        coordinator = _coordinator(c, txn_id)  # its InitProducerId made __transaction_state if it was not there
        proc.stdin.write("commit\n")
        proc.stdin.flush()
        c.lc.kill_broker(coordinator)
        outcome = json.loads(proc.stdout.readline() or "null")
        assert proc.wait(60) == 0
        assert outcome is not None and "commit" in outcome, proc.stderr.read() if proc.stderr else outcome
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    c.restart(coordinator)
    # the next producer of the id: "kc0", "kc1", "ka" (aborted), "kc2" on every partition
    assert kp3_txn("transactions", bootstrap(c), topic, txn_id, str(PARTITIONS)) == {"error": None}
    after = [[f"kc0-{p}", f"kc1-{p}", f"kc2-{p}"] for p in range(PARTITIONS)]
    crashed = [[f"kx-{p}-{i}" for i in range(20)] for p in range(PARTITIONS)]
    seen = consume(c, topic, "read_committed", 3 * PARTITIONS)
    if outcome["commit"] is None:  # acknowledged: it must be there
        assert seen == {p: crashed[p] + after[p] for p in range(PARTITIONS)}
    else:  # either, but the same on every partition
        assert seen in ({p: crashed[p] + after[p] for p in range(PARTITIONS)}, {p: after[p] for p in range(PARTITIONS)})
    # read_uncommitted shows the crashed transaction's records whatever became of them: they were written
    assert consume(c, topic, "read_uncommitted", 24 * PARTITIONS) \
        == {p: crashed[p] + [f"kc0-{p}", f"kc1-{p}", f"ka-{p}", f"kc2-{p}"] for p in range(PARTITIONS)}


def _try(action: Any) -> BaseException | None:
    try:
        action()
    except BaseException as e:  # noqa: BLE001 - the outcome the test inspects
        return e
    return None
