"""`kactor chaos` as a user runs it (issue #19 item 6): a short seeded run on real brokers and a real 3-server
ZooKeeper ensemble, and a run stopped by SIGHUP that leaves nothing running.

Seed 25167 is chosen (and checked below, the schedule being pure) so that its 8 steps include the controller killed
mid-reassignment, SIGTERM, SIGSTOP past the session timeout, an unusable log dir, a network partition, a ZooKeeper
server and the ZooKeeper leader killed, and a deletion: one seed's cluster, where seeds 18 and 28 took two (the first
of 40,000 seeds to hold all of it in 8 steps).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cluster_helpers import Cluster

from edges.net_faults import FAULTS_ENV
from kactor.chaos.client import ProduceError
from kactor.chaos.kafka_client import KafkaDataClient
from kactor.chaos.schedule import make_schedule
from scripts.sweep import marked_pids

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

SEEDS = (25167,)
STEPS = 8


def _kactor_chaos(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "kactor", "chaos", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _processes_of(fault_file: str) -> list[int]:
    """Processes started by a run: each inherits KACTOR_NET_FAULTS=<its seed folder>/net-faults.json."""
    return [p for p in marked_pids(fault_file, FAULTS_ENV) if not _zombie(p)]


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _none_left(fault_file: str, timeout_s: float = 15.0) -> list[int]:
    """Polls until no process of the run is left (the children janitor may take a moment to exit); what is left."""
    deadline = time.monotonic() + timeout_s
    while (left := _processes_of(fault_file)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def test_seeded_run_with_ensemble_and_partition_faults(tmp_path: Path) -> None:
    faults = {s.fault for seed in SEEDS for s in make_schedule(seed, STEPS, 3, 3)}
    assert faults >= {"kill-controller", "sigterm", "sigstop", "logdir", "partition", "zk-kill", "zk-kill-leader"}
    schedule = [s for seed in SEEDS for s in make_schedule(seed, STEPS, 3, 3)]
    assert any(s.op == "reassign" and s.fault == "kill-controller" for s in schedule)
    assert any(s.op == "delete" for s in schedule)
    # the transaction checker has a run of its own (test_cluster_chaos_txn_check.py): this one's faults and checks
    proc = _kactor_chaos("--seeds", ",".join(map(str, SEEDS)), "--steps", str(STEPS), "--zookeeper-ensemble", "3",
                         "--work-dir", str(tmp_path), "--keep", "--no-txn-check")
    out, err = proc.communicate(timeout=600)
    lines = out.splitlines()
    assert lines[0] == (f"kactor chaos: seeds 25167, {STEPS} steps, 3 brokers, a 3-server ZooKeeper ensemble; "
                        f"folders in {tmp_path}"), out
    results = {}
    for seed in SEEDS:
        assert any(line.startswith(f"seed {seed} ") for line in lines), out
        result = json.loads((tmp_path / f"seed-{seed}" / "result.json").read_text())
        results[seed] = result
        assert result["error"] is None, (out, err)
        assert result["acked"] > 0
        applied = sum(1 for s in make_schedule(seed, STEPS, 3, 3) if s.fault)
        assert sum(result["faults"].values()) == applied
        samples = (tmp_path / f"seed-{seed}" / "samples.jsonl").read_text().splitlines()
        assert len(samples) > 20
        acks = (tmp_path / f"seed-{seed}" / "acks.jsonl").read_text().splitlines()
        assert len(acks) == result["acked"]
        events = (tmp_path / f"seed-{seed}" / "events.log").read_text()
        assert "healed" in events, events
        assert "live: every operation complete, every partition led and written to" in events, events
        assert _none_left(str(tmp_path / f"seed-{seed}" / "net-faults.json")) == []
        # the brokers' traces are kept with the seed
        assert list((tmp_path / f"seed-{seed}" / "traces").glob("broker-*.jsonl"))
    summary = lines[-6:] if lines[-1].startswith("runs that failed") else lines[-5:]
    assert summary[0].startswith(f"1 seeds x {STEPS} steps: ")
    assert summary[-1].startswith("time: ")
    violations = [(seed, v) for seed, r in results.items() for v in r["violations"]]
    assert violations == [], out
    assert summary[0] == (f"1 seeds x {STEPS} steps: 0 safety violations, 0 lost records, 0 divergent records, "
                          "0 stuck operations, 0 transaction violations")
    assert proc.returncode == 0 and "1 seeds clean" in out, out


def test_the_data_client_never_recreates_a_deleted_topic(start_cluster) -> None:
    """The schedule alone creates and deletes topics. librdkafka keeps every topic its producer ever wrote to in its
    Metadata requests, and with auto.create.topics.enable (on, as in Kafka 2.6) a request that allows creation makes
    the broker create a deleted topic again (seed 28: t2 deleted at 15 s, re-created by broker 0 at 32 s when a
    leader change made the producer refresh t0, t1, t2). Here the producer writes to the deleted topic itself, which
    makes it ask for it at once: the record is not acknowledged and the topic stays deleted."""
    pytest.importorskip("confluent_kafka")
    from kazoo.exceptions import NoNodeError

    from zk_bridge.admin.admin_zk import AdminZkClient

    c, client = _written_topic(start_cluster, "gone")
    try:
        AdminZkClient(c.zk).delete_topic("gone")
        c.wait(lambda: c.zk.exists("/admin/delete_topics/gone") is None and c.zk.exists("/brokers/topics/gone") is None,
               what="the deletion of gone")
        # its Metadata answers now call the topic unknown: librdkafka holds the record for the topic to appear
        # (topic.metadata.propagation.max.ms, 30 s) until message.timeout.ms; with creation allowed, the answer
        # created the topic again and the record was acknowledged
        with pytest.raises(ProduceError, match="^gone-0: _MSG_TIMED_OUT: "):
            client.produce("gone", 0, ("after",))
    finally:
        client.close()
    for path in ("/brokers/topics/gone", "/config/topics/gone"):
        with pytest.raises(NoNodeError):
            c.zk.get(path)


def test_the_data_client_writes_to_partitions_added_to_a_topic(start_cluster) -> None:
    """librdkafka learns a topic's partition count from Metadata answers, and writing to a partition beyond it
    fails at once (_UNKNOWN_PARTITION) without asking again; an `expand` step's new partitions could then not be
    written until the periodic refresh (topic.metadata.refresh.interval.ms, 5 minutes by default) unless a leader
    change made one first (seed 2: t0 expanded to 2 partitions at 8.3 s, no Metadata request for t0 after 8.4 s,
    the liveness probe's "t0-1 accepts no acks=all write" for 90 s); its consumer, which has read the topic too, the
    same. Both refresh every second."""
    pytest.importorskip("confluent_kafka")
    from zk_bridge.admin.admin_zk import AdminZkClient

    c, client = _written_topic(start_cluster, "grows")
    try:
        admin = AdminZkClient(c.zk)
        admin.add_partitions("grows", admin.get_full_replica_assignment("grows"), admin.get_broker_metadatas(), 2)
        c.wait_partition("grows", 1, lambda s: s["leader"] == 0)
        assert c.wait(lambda: _produced(client, "grows", 1, "p1") is not None, timeout=15.0,
                      what="an acknowledged write to grows-1") is True
        # the consumer's metadata is its own, refreshed every second too: a read right after the producer's write
        # can come before that refresh (a fresh clone: ((), -1), the partition not known to it yet)
        reads: list[tuple[tuple[str, ...], int]] = []
        c.wait(lambda: reads.append(client.read("grows", 1, 0)) or reads[-1] != ((), -1), timeout=15.0,
               what="grows-1 read by the consumer")
        assert reads[-1] == (("p1",), 1)
    finally:
        client.close()


def _written_topic(start_cluster, topic: str) -> tuple[Cluster, KafkaDataClient]:  # noqa: ANN001 - the fixture
    """One broker, ``topic`` with one partition, and a data client whose first record there was acknowledged
    and read back (so its producer has the topic in its metadata)."""
    c = start_cluster(1, overrides=("offsets.topic.num.partitions=3",))
    c.create_topic(topic, replication_factor=1)
    client = KafkaDataClient("{}:{}".format(*c.lc.broker_address(0)), timeout_s=3.0)
    try:
        c.wait(lambda: _produced(client, topic, 0, "first") is not None, what=f"a leader for {topic}-0")
        assert client.read(topic, 0, 0) == (("first",), 1)
    except BaseException:
        client.close()  # a failed test's frame would keep its librdkafka threads reconnecting to a stopped cluster
        raise
    return c, client


def _produced(client: KafkaDataClient, topic: str, partition: int, value: str) -> int | None:
    try:
        return client.produce(topic, partition, (value,))
    except ProduceError:
        return None


def test_sighup_stops_the_run_and_everything_it_started(tmp_path: Path) -> None:
    proc = _kactor_chaos("--seeds", "5", "--steps", "25", "--work-dir", str(tmp_path), "--no-txn-check")
    events = tmp_path / "seed-5" / "events.log"
    deadline = time.monotonic() + 120
    while "step 1:" not in (events.read_text() if events.exists() else ""):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run never reached step 1"
        time.sleep(0.1)
    fault_file = str(tmp_path / "seed-5" / "net-faults.json")
    assert len(_processes_of(fault_file)) >= 4  # 3 brokers and ZooKeeper
    proc.send_signal(signal.SIGHUP)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (out, err)
    assert "interrupted; everything it started has been stopped" in err
    assert _none_left(fault_file) == []


def test_a_seed_over_sasl_ssl(tmp_path: Path) -> None:
    """`kactor chaos --security sasl_ssl`: the same faults with every connection over SASL_SSL — the producer, the
    transactional loop and the checks' readers with the cluster's client settings, replication and the controller's
    requests over the brokers' one SASL_SSL listener — and the run is clean, its transactions committed."""
    proc = _kactor_chaos("--seeds", "18", "--steps", "6", "--security", "sasl_ssl", "--work-dir", str(tmp_path),
                         "--keep", "--no-txn-check")
    out, err = proc.communicate(timeout=600)
    assert out.splitlines()[0] == (f"kactor chaos: seeds 18, 6 steps, 3 brokers, one ZooKeeper server, every "
                                   f"connection SASL_SSL; folders in {tmp_path}"), out
    result = json.loads((tmp_path / "seed-18" / "result.json").read_text())
    assert result["error"] is None and result["violations"] == [] and result["acked"] > 0, (out, err)
    events = (tmp_path / "seed-18" / "events.log").read_text()
    committed = int(events.split("transactions: ", 1)[1].split(" committed", 1)[0])
    assert committed > 0, events
    # the PLAINTEXT-only hostile client is skipped, and the events say so (no 20 s a request waited out)
    assert "  hostile client skipped: it speaks PLAINTEXT only and the brokers' listener is sasl_ssl" in events
    # the brokers talked to each other over it: no PLAINTEXT listener was bound
    logs = sorted((tmp_path / "seed-18" / "cluster").glob("broker-*.log"))
    assert len(logs) == 3
    for log in logs:
        assert " started on SECURE://" in log.read_text(errors="replace")
        assert "PLAINTEXT://" not in log.read_text(errors="replace").split(" started on ", 1)[1].split("\n", 1)[0]
    assert proc.returncode == 0 and "1 seeds clean" in out, out
