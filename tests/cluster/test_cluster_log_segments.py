"""Issue #20 item 4 on a real cluster: the log in Kafka's segment layout, rolled by a topic's segment.bytes, and a
torn tail recovered when a killed broker restarts.

3 broker processes, a topic with replication factor 3 and segment.bytes=1024. Record batches produced with acks=all
land on every replica as the same ``%020d.log`` segments (with ``.index`` / ``.timeindex``). A follower is SIGKILLed
and half a batch is appended to its active segment (what a write cut by a crash leaves); restarted, it truncates the
torn bytes, rejoins the ISR and replicates the records produced meanwhile, so every replica holds exactly the
acknowledged records at their offsets.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_helpers import TEST_SESSION_TIMEOUT_MS, Cluster, produce, running, segment_records
from kafka_clients_helpers import closing_producer, read_partition

from kactor.cluster import LocalCluster
from kactor.kafka_clients import watermark_offsets
from kactor.records import values_batch
from messages.common import Errors
from protocol.records import read_batch_header
from tests.support.kazoo_clients import new_chroot

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
# the tests on the module's cluster run on one worker: it writes a fixed trace folder (the codecs test keeps the
# session's shared_cluster group)
ON_MODULE_CLUSTER = pytest.mark.xdist_group("test_cluster_log_segments")

TOPIC = "seg"


@pytest.fixture(scope="module")
def brokers(zk_server, tmp_path_factory: pytest.TempPathFactory,  # noqa: ANN001
            cluster_trace_root: Path) -> Iterator[Cluster]:
    """3 brokers with the log defaults, for the tests that need no broker-wide setting: each on its own topic, in
    file order; the torn-tail test restarts the follower it killed, the idempotent producer's test (the last on
    it) leaves its leader killed."""
    lc = LocalCluster(3, zookeeper=new_chroot(zk_server.connect_string),
                      base_dir=str(tmp_path_factory.mktemp("log-segments")),
                      trace_dir=str(cluster_trace_root / "log-segments"),
                      overrides=[f"zookeeper.session.timeout.ms={TEST_SESSION_TIMEOUT_MS}",
                                 "controlled.shutdown.retry.backoff.ms=200"])
    with running(lc) as c:
        yield c


def _segment_files(c: Cluster, broker: int) -> list[str]:
    return sorted(os.listdir(os.path.join(c.log_dir(broker), f"{TOPIC}-0")))


@ON_MODULE_CLUSTER
def test_segments_roll_on_every_replica_and_a_torn_tail_is_recovered_on_restart(brokers: Cluster) -> None:
    c = brokers
    controller = c.controller_id()
    assert controller is not None
    leader, follower = (b for b in range(3) if b != controller)
    c.create_topic(TOPIC, assignment={0: [leader, follower, controller]}, configs={"segment.bytes": "1024"})
    c.wait_partition(TOPIC, 0, lambda st: st["leader"] == leader and sorted(st["isr"]) == [0, 1, 2],
                     what=f"{TOPIC}-0 led by {leader} with ISR of all 3")

    acknowledged: list[str] = []
    for i in range(12):
        values = tuple(f"r{i}-{j}-" + "x" * 60 for j in range(3))
        answer = produce(c, TOPIC, 0, values)
        assert (answer.error, answer.base_offset) == (Errors.NONE, len(acknowledged))
        acknowledged += values
    expected = [[o, v] for o, v in enumerate(acknowledged)]
    for b in range(3):
        c.wait(lambda b=b: [[o, v] for o, _e, v in segment_records(c, b, TOPIC, 0)] == expected, 30,
               f"broker {b} to hold the {len(expected)} acknowledged records")
    names = _segment_files(c, leader)
    logs = [n for n in names if n.endswith(".log")]
    assert len(logs) >= 3 and logs[0] == "00000000000000000000.log"
    for n in logs[:-1]:  # every rolled segment has both index files
        assert n.replace(".log", ".index") in names and n.replace(".log", ".timeindex") in names
    for b in (follower, controller):
        assert [n for n in _segment_files(c, b) if n.endswith(".log")] == logs  # the same bases everywhere

    c.kill(follower)
    active = os.path.join(c.log_dir(follower), f"{TOPIC}-0", logs[-1])
    good_size = os.path.getsize(active)
    with open(active, "ab") as f:
        f.write(values_batch(("torn",))[:30])  # half a batch header: a write cut by the crash
    more = tuple(f"after-{j}" for j in range(4))
    answer = produce(c, TOPIC, 0, more, acks=1)
    assert (answer.error, answer.base_offset) == (Errors.NONE, len(acknowledged))
    acknowledged += more
    c.restart(follower)
    c.wait_partition(TOPIC, 0, lambda st: sorted(st["isr"]) == [0, 1, 2], what=f"{follower} back in the ISR")
    expected = [[o, v] for o, v in enumerate(acknowledged)]
    c.wait(lambda: [[o, v] for o, _e, v in segment_records(c, follower, TOPIC, 0)] == expected, 30,
           f"restarted broker {follower} to hold every acknowledged record")
    with open(active, "rb") as f:
        data = f.read()
    # the torn bytes were cut: the file ends where the good batches did, or the next batch starts right there
    assert len(data) == good_size or read_batch_header(data, good_size).base_offset == len(acknowledged) - len(more)


@ON_MODULE_CLUSTER
def test_a_real_producers_batches_are_stored_as_sent_and_found_by_timestamp(brokers: Cluster) -> None:
    """librdkafka (confluent-kafka) produces lz4-compressed batches with its own timestamps, acks=all: the segments
    hold them as sent (codec, timestamps) at consecutive offsets on every replica, and ListOffsets by timestamp
    (Consumer.offsets_for_times, Log.fetchOffsetByTimestamp) finds the first record at or after a time."""
    from confluent_kafka import Consumer, Producer
    from confluent_kafka import TopicPartition as KafkaTopicPartition

    from protocol.records import iter_batches

    c = brokers
    # stamped 2023: the retention check (30 s after a broker's start, then every 5 minutes) would delete them
    c.create_topic("ts", partitions=1, replication_factor=3, configs={"retention.ms": "-1"})
    c.wait_partition("ts", 0, lambda st: len(st["isr"]) == 3, what="ts-0 with ISR of all 3")
    bootstrap = ",".join(f"127.0.0.1:{c.lc.ports[b]}" for b in range(3))
    t0 = 1_700_000_000_000
    delivered: list[tuple[int, int]] = []
    with closing_producer(Producer({"bootstrap.servers": bootstrap, "acks": "all", "compression.type": "lz4",
                                    "linger.ms": 50, "enable.idempotence": False})) as producer:
        for i in range(30):
            producer.produce("ts", value=f"v{i}".encode(), partition=0, timestamp=t0 + 10 * i,
                             on_delivery=lambda err, msg: delivered.append((err, msg.offset())))
        assert producer.flush(30) == 0
    assert sorted(o for _, o in delivered) == list(range(30)) and all(e is None for e, _ in delivered)
    leader = c.partition_state("ts", 0)["leader"]
    for b in range(3):
        c.wait(lambda b=b: len(segment_records(c, b, "ts", 0)) == 30, 30, f"broker {b} to hold the 30 records")
    with open(os.path.join(c.log_dir(leader), "ts-0", "00000000000000000000.log"), "rb") as f:
        batches = list(iter_batches(f.read()))
    assert all(b.compression == 3 for b in batches)  # lz4, as librdkafka compressed them
    assert [b.first_timestamp + r.timestamp_delta for b in batches for r in b.records()] == [
        t0 + 10 * i for i in range(30)]

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "ts-check", "enable.auto.commit": False})
    try:
        (found,) = consumer.offsets_for_times([KafkaTopicPartition("ts", 0, t0 + 125)], timeout=30)
        assert found.error is None and found.offset == 13  # v13 at t0+130 is the first at or after t0+125
        (late,) = consumer.offsets_for_times([KafkaTopicPartition("ts", 0, t0 + 10_000)], timeout=30)
        assert late.offset == -1  # none that late: Kafka answers -1
        consumer.assign([KafkaTopicPartition("ts", 0, found.offset)])
        got: list[str] = []
        while len(got) < 17:
            msg = consumer.poll(10)
            assert msg is not None, f"consumed only {got}"
            assert msg.error() is None, msg.error()
            got.append(msg.value().decode())
        assert got == [f"v{i}" for i in range(13, 30)]
    finally:
        consumer.close()


def test_broker_log_defaults_roll_and_retention_deletes_old_segments_on_every_replica(start_cluster) -> None:
    """server.properties' log.segment.bytes / log.retention.bytes are every log's defaults; the retention task
    (first run log.initial.task.delay.ms after start, 1 s here where Kafka 2.6 waits a fixed 30 s, then every
    log.retention.check.interval.ms) deletes the oldest segments on every replica, never past the high watermark, and
    the log start offset follows: the leader's log-start-offset checkpoint and a client's earliest offset (ListOffsets
    -2) say so."""
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as KafkaTopicPartition

    from core.broker.checkpoints import LOG_START_OFFSET_CHECKPOINT, read_offset_checkpoint
    from messages.common import TopicPartition

    c: Cluster = start_cluster(3, overrides=("log.segment.bytes=1024", "log.retention.bytes=2048",
                                             "log.retention.check.interval.ms=1000", "log.initial.task.delay.ms=1000"))
    from confluent_kafka import Producer

    c.create_topic("ret", partitions=1, replication_factor=3)
    c.wait_partition("ret", 0, lambda st: len(st["isr"]) == 3, what="ret-0 with ISR of all 3")
    bootstrap = ",".join(f"127.0.0.1:{c.lc.ports[b]}" for b in range(3))
    # a real producer stamps the current time (records stamped 0 would all go by retention.ms, as in Kafka)
    produced = 0
    # closed before the test stops brokers: librdkafka's threads go with it
    with closing_producer(Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})) as producer:
        for i in range(20):  # 20 batches of ~300 bytes: 6+ segments of 1 KiB
            for j in range(3):
                producer.produce("ret", value=(f"r{i}-{j}-" + "y" * 60).encode(), partition=0)
            assert producer.flush(30) == 0
            produced += 3
    leader = c.partition_state("ret", 0)["leader"]

    def kept(b: int) -> list[str]:
        return [n for n in sorted(os.listdir(os.path.join(c.log_dir(b), "ret-0"))) if n.endswith(".log")]

    def sizes(b: int) -> list[int]:
        return [os.path.getsize(os.path.join(c.log_dir(b), "ret-0", n)) for n in kept(b)]

    # retention.bytes 2048: whole segments go while the rest stays above it; the first survivor is the log start
    for b in range(3):
        c.wait(lambda b=b: kept(b)[0] != "00000000000000000000.log" and sum(sizes(b)) <= 2048 + 1024, 60,
               f"broker {b} to delete its oldest segments")
    # log.segment.bytes=1024 rolled every log (Log.maybeRoll: a batch that would not fit starts a segment), whose
    # ~6 KiB went into 1 KiB segments, the oldest deleted (retention may have run while the producer wrote)
    assert len(kept(leader)) >= 2 and max(sizes(leader)[:-1]) <= 1024, sizes(leader)
    start = int(kept(leader)[0][:20])
    records = segment_records(c, leader, "ret", 0)
    assert records and records[0][0] == start and records[-1][0] == produced - 1, (kept(leader), sizes(leader), records)
    c.wait(lambda: read_offset_checkpoint(os.path.join(c.log_dir(leader), LOG_START_OFFSET_CHECKPOINT)).get(
        TopicPartition("ret", 0)) == start, 30, "the leader's log-start-offset checkpoint")
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "ret-check"})
    try:
        assert watermark_offsets(consumer, KafkaTopicPartition("ret", 0), time.monotonic() + 30) == (start, produced)
    finally:
        consumer.close()


@ON_MODULE_CLUSTER
def test_an_idempotent_producer_keeps_its_sequence_through_a_leader_kill(brokers: Cluster) -> None:
    """librdkafka with enable.idempotence (InitProducerId, then producer id / epoch / sequence in every batch): the
    leader checks the sequences, the followers replicate the producer state with the batches, so after the leader's
    SIGKILL the new leader accepts the producer's next sequences; every value is in the log exactly once."""
    from confluent_kafka import Producer

    from protocol.records import iter_batches

    c = brokers  # the last test on it: its leader is killed
    controller = c.controller_id()
    assert controller is not None
    leader, follower = (b for b in range(3) if b != controller)
    c.create_topic("idem", assignment={0: [leader, follower, controller]})
    c.wait_partition("idem", 0, lambda st: st["leader"] == leader and len(st["isr"]) == 3,
                     what=f"idem-0 led by {leader} with ISR of all 3")
    bootstrap = ",".join(f"127.0.0.1:{c.lc.ports[b]}" for b in range(3))
    errors: list[object] = []

    def send(producer: Producer, values: list[str]) -> None:
        for v in values:
            producer.produce("idem", value=v.encode(), partition=0,
                             on_delivery=lambda err, msg: err is not None and errors.append(err))
        assert producer.flush(60) == 0 and not errors, errors

    first = [f"a{i}" for i in range(50)]
    second = [f"b{i}" for i in range(50)]
    with closing_producer(Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5,
                                    "message.timeout.ms": 60000})) as producer:
        send(producer, first)
        for b in range(3):
            c.wait(lambda b=b: len(segment_records(c, b, "idem", 0)) == 50, 30, f"broker {b} to hold the first 50")
        c.kill(leader)
        c.wait_partition("idem", 0, lambda st: st["leader"] not in (leader, -1), what="a new leader")
        send(producer, second)
    new_leader = c.partition_state("idem", 0)["leader"]
    assert [v for _o, _e, v in segment_records(c, new_leader, "idem", 0)] == first + second
    with open(os.path.join(c.log_dir(new_leader), "idem-0", "00000000000000000000.log"), "rb") as f:
        batches = list(iter_batches(f.read()))
    assert {b.producer_id for b in batches} != {-1} and len({b.producer_id for b in batches}) == 1
    seqs = [(b.base_sequence, b.base_sequence + b.last_offset_delta) for b in batches]
    assert seqs[0][0] == 0 and all(nxt[0] == prev[1] + 1 for prev, nxt in zip(seqs, seqs[1:], strict=False))


def test_every_compression_codec_librdkafka_sends_is_stored_as_sent_and_read_back(shared_cluster: Cluster) -> None:
    """gzip, snappy, lz4 and zstd batches from librdkafka (acks=all; Produce v7+, so zstd is allowed): each is
    validated by decompressing it (Kafka's LogValidator), stored with its codec unchanged on every replica (a topic's
    compression.type=producer, Kafka's default) at consecutive offsets, and read back in order by a librdkafka
    consumer (Fetch v11, which may carry zstd). On the session's shared cluster (conftest shared_cluster): its records
    are stamped now, so no retention check there deletes them (the timestamp test's, stamped 2023, would be)."""
    from confluent_kafka import Producer

    from kactor.kafka_clients import client_config
    from protocol.records import iter_batches

    codecs = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
    c = shared_cluster
    c.create_topic("codecs", partitions=1, replication_factor=3)
    c.wait_partition("codecs", 0, lambda st: len(st["isr"]) == 3, what="codecs-0 with ISR of all 3")
    servers = ",".join(f"127.0.0.1:{c.lc.ports[b]}" for b in range(3))
    sent: list[str] = []
    for name in codecs:
        acked: list[tuple[object, int]] = []
        with closing_producer(Producer(client_config(servers, f"codec-{name}", {
                "acks": "all", "compression.type": name, "linger.ms": 20, "enable.idempotence": False}))) as p:
            for i in range(25):
                value = f"{name}-{i:03d}-" + "x" * 200  # compressible, so every codec really compresses
                p.produce("codecs", value=value.encode(), partition=0,
                          on_delivery=lambda err, msg, acked=acked: acked.append((err, msg.offset())))
                sent.append(value)
            assert p.flush(30) == 0
        assert [e for e, _ in acked] == [None] * 25, acked
        assert sorted(o for _, o in acked) == list(range(len(sent) - 25, len(sent)))
    for b in range(3):
        c.wait(lambda b=b: len(segment_records(c, b, "codecs", 0)) == len(sent), 30,
               f"broker {b} to hold the {len(sent)} records")
        with open(os.path.join(c.log_dir(b), "codecs-0", "00000000000000000000.log"), "rb") as f:
            batches = list(iter_batches(f.read()))
        seen = {}
        for batch in batches:
            for r in batch.records():
                seen[r.value.decode().split("-")[0]] = batch.compression
        assert seen == codecs, f"broker {b}: codec by producer {seen}"
        assert [v for _, _, v in segment_records(c, b, "codecs", 0)] == sent
    assert read_partition(servers, "codecs", 0) == list(enumerate(sent))
