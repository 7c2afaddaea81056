"""Every kactor tool with ``--bootstrap-server`` on a SASL_SSL cluster (issue #29), given the client properties file
``kactor cluster --security sasl_ssl`` prints, under the option Kafka 2.6.3's tool names it (--command-config,
--admin.config, --consumer.config, --producer.config): topics created, listed, described; a topic's config changed
and read back; records produced and read back exactly; a group described, reset, its offsets deleted (OffsetDelete,
kafka_wire); records deleted and the log start moved; log dirs, the reassignments (ListPartitionReassignments,
kafka_wire), preferred elections (leader-election, preferred-replica-election --admin.config) and ``describe``'s end
offsets. Without the file each tool fails with one clear
line in bounded time, and with a wrong password every tool says "Authentication failed" at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_helpers import TEST_SESSION_TIMEOUT_MS, Cluster, running

from kactor.cluster import LocalCluster
from tests.support.kazoo_clients import new_chroot

# one worker runs the module: its module-scoped cluster writes a fixed trace folder, and its tests share topics
pytestmark = [pytest.mark.cluster, pytest.mark.xdist_group("test_cluster_tools_secure")]

REPO = Path(__file__).resolve().parents[2]
TOPIC = "secured"
OVERRIDES = (f"zookeeper.session.timeout.ms={TEST_SESSION_TIMEOUT_MS}", "controlled.shutdown.retry.backoff.ms=200",
             "offsets.topic.num.partitions=2", "group.initial.rebalance.delay.ms=0")


class Secured:
    def __init__(self, c: Cluster) -> None:
        assert c.lc.secure is not None
        self.c = c
        self.bootstrap = ",".join("{}:{}".format(*c.lc.broker_address(b)) for b in sorted(c.lc.procs))
        self.props = c.lc.secure.client_properties


def kactor(*args: str, stdin: str | None = None, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "kactor", *args], cwd=REPO, env=env, input=stdin,
                          capture_output=True, text=True, timeout=timeout)


def ok(*args: str, stdin: str | None = None) -> str:
    r = kactor(*args, stdin=stdin)
    assert r.returncode == 0, f"kactor {' '.join(args)} exited {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r.stdout


@pytest.fixture(scope="module")
def secured(zk_server, tmp_path_factory: pytest.TempPathFactory,  # noqa: ANN001
            cluster_trace_root: Path) -> Iterator[Secured]:
    lc = LocalCluster(2, zookeeper=new_chroot(zk_server.connect_string),
                      base_dir=str(tmp_path_factory.mktemp("tools-secure")),
                      trace_dir=str(cluster_trace_root / "tools-secure"), overrides=list(OVERRIDES),
                      security="sasl_ssl")
    with running(lc, concurrent=False) as c:
        yield Secured(c)


def test_topics_and_configs(secured: Secured) -> None:
    s = secured
    conn = ("--bootstrap-server", s.bootstrap, "--command-config", s.props)
    assert ok("topics", *conn, "--create", "--topic", TOPIC, "--partitions", "2",
              "--replication-factor", "2") == f"Created topic {TOPIC}.\n"
    assert TOPIC in ok("topics", *conn, "--list").splitlines()
    described = ok("topics", *conn, "--describe", "--topic", TOPIC).splitlines()
    assert described[0].startswith(f"Topic: {TOPIC}\tPartitionCount: 2\tReplicationFactor: 2\t")
    assert [line.split("\t")[2] for line in described[1:]] == ["Partition: 0", "Partition: 1"]
    # kafka-acls.sh's client with the file's PKCS12 trust store (refused before #29's tools took it): the broker
    # answers over SASL_SSL that it has no authorizer
    r = kactor("acls", *conn, "--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", TOPIC)
    assert r.returncode == 1 and "SecurityDisabledException" in r.stderr, (r.stdout, r.stderr)
    entity = ("--entity-type", "topics", "--entity-name", TOPIC)
    assert ok("configs", *conn, "--alter", *entity, "--add-config", "retention.ms=123456") == \
        f"Completed updating config for topic {TOPIC}.\n"
    assert ok("configs", *conn, "--describe", *entity).splitlines() == [
        f"Dynamic configs for topic {TOPIC} are:",
        "  retention.ms=123456 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=123456}"]


def test_records_groups_and_deleted_records(secured: Secured) -> None:
    s = secured
    b = ("--bootstrap-server", s.bootstrap)
    conn = (*b, "--command-config", s.props)
    assert ok("produce", *b, "--producer.config", s.props, "--topic", TOPIC, "--partition", "0",
              stdin="a\nb\nc\n") == f"{TOPIC}-0: 3 records acknowledged at offsets 0..2 (acks=1)\n"
    assert ok("consume", *b, "--consumer.config", s.props, "--topic", TOPIC, "--group", "g", "--from-beginning",
              "--max-messages", "3") == "a\nb\nc\n"
    rows = [line.split() for line in ok("consumer-groups", *conn, "--describe", "--group", "g").splitlines()
            if line.startswith("g ")]
    assert rows == [["g", TOPIC, "0", "3", "3", "0", "-", "-", "-"]]
    reset = ok("consumer-groups", *conn, "--reset-offsets", "--to-earliest", "--execute", "--topic", TOPIC,
               "--group", "g")
    assert [line.split() for line in reset.splitlines() if line.startswith("g ")] == [
        ["g", TOPIC, "0", "0"], ["g", TOPIC, "1", "0"]]
    deleted = ok("consumer-groups", *conn, "--delete-offsets", "--topic", TOPIC, "--group", "g")  # kafka_wire
    assert deleted.splitlines()[0] == f"Request succeed for deleting offsets with topic {TOPIC} group g"
    assert [line.split() for line in deleted.splitlines() if line.startswith(TOPIC)] == [
        [TOPIC, "0", "Successful"], [TOPIC, "1", "Successful"]]

    plan = Path(s.c.lc.base_dir) / "delete.json"
    plan.write_text(json.dumps({"partitions": [{"topic": TOPIC, "partition": 0, "offset": 2}], "version": 1}))
    assert ok("delete-records", *conn, "--offset-json-file", str(plan)).splitlines()[-1] == \
        f"partition: {TOPIC}-0\tlow_watermark: 2"
    assert ok("consume", *b, "--consumer.config", s.props, "--topic", TOPIC, "--partition", "0", "--offset",
              "earliest", "--max-messages", "1", "--property", "print.offset=true") == "Offset:2\tc\n"


def test_log_dirs_reassignments_election_and_describe(secured: Secured) -> None:
    s = secured
    conn = ("--bootstrap-server", s.bootstrap, "--command-config", s.props)
    dirs = json.loads(ok("log-dirs", *conn, "--describe", "--topic-list", TOPIC).splitlines()[-1])
    assert sorted(b["broker"] for b in dirs["brokers"]) == [0, 1]
    for broker in dirs["brokers"]:
        assert sorted(p["partition"] for d in broker["logDirs"] for p in d["partitions"]) == [f"{TOPIC}-0",
                                                                                            f"{TOPIC}-1"]
    assert ok("reassign-partitions", *conn, "--list") == "No partition reassignments found.\n"  # kafka_wire
    # the preferred leader leads already: the controller's answer came back over SASL_SSL
    r = kactor("leader-election", "--bootstrap-server", s.bootstrap, "--admin.config", s.props,
               "--election-type", "preferred", "--topic", TOPIC, "--partition", "0")
    assert r.returncode == 0 and r.stdout == f"Valid replica already elected for partitions {TOPIC}-0\n", r.stderr
    election = Path(s.c.lc.base_dir) / "election.json"
    election.write_text(json.dumps({"partitions": [{"topic": TOPIC, "partition": 1}]}))
    r = kactor("preferred-replica-election", "--bootstrap-server", s.bootstrap, "--admin.config", s.props,
               "--path-to-json-file", str(election))
    assert r.returncode == 1 and r.stdout == (
        f"Error completing preferred replica election for partition {TOPIC}-1: org.apache.kafka.common.errors."
        "ElectionNotNeededException: Leader election not needed for topic partition.\n"), r.stderr
    view = json.loads(ok("describe", "--zookeeper", s.c.connect_string, *conn, "--json"))
    (topic,) = [t for t in view["topics"] if t["name"] == TOPIC]
    assert [p["end_offset"] for p in topic["partitions"]] == [3, 0]


def test_without_the_file_each_tool_fails_in_bounded_time(secured: Secured, tmp_path: Path) -> None:
    s = secured
    b = ("--bootstrap-server", s.bootstrap)
    runs = {  # librdkafka's tools, then kafka_wire's
        "topics": ("topics", *b, "--list"),
        "consumer-groups": ("consumer-groups", *b, "--list"),
        "configs": ("configs", *b, "--describe", "--entity-type", "topics", "--entity-name", TOPIC),
        "log-dirs": ("log-dirs", *b, "--describe"),
    }
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    started = time.monotonic()
    procs = {name: subprocess.Popen([sys.executable, "-m", "kactor", *argv], cwd=REPO, env=env, text=True,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE) for name, argv in runs.items()}
    outcomes = {name: (p.wait(timeout=60), *p.communicate()) for name, p in procs.items()}
    assert time.monotonic() - started < 60
    for name in ("topics", "consumer-groups"):
        code, _, err = outcomes[name]
        assert code == 1 and err.startswith(f"kactor {name}: cannot get metadata from the bootstrap server(s) "
                                            f"{s.bootstrap} within "), err
        assert err.endswith("is a broker listening there?\n") and err.count("\n") == 1
    code, _, err = outcomes["configs"]
    assert code == 1 and err.splitlines()[-1].startswith("no bootstrap server answered (request to "), err
    code, _, err = outcomes["log-dirs"]
    assert code == 1 and err.startswith("kactor log-dirs: no bootstrap server answered (request to "), err
    assert err.count("\n") == 1

    # the right protocol, a wrong password: the broker's refusal, in one line
    wrong = tmp_path / "wrong.properties"
    text = Path(s.props).read_text()
    wrong.write_text(text.replace(text.split('password="', 1)[1].split('"', 1)[0], "guess"))
    for tool, argv in (("log-dirs", ("--describe",)), ("topics", ("--list",))):  # kafka_wire's, librdkafka's
        started = time.monotonic()
        r = kactor(tool, *b, "--command-config", str(wrong), *argv)
        assert r.returncode == 1 and r.stderr == (
            f"kactor {tool}: Authentication failed with {s.bootstrap.split(',')[0]} (PLAIN): SaslAuthenticate "
            "failed with error 58: Authentication failed: Invalid username or password\n")
        assert time.monotonic() - started < 30  # at once, as Kafka's client: not after librdkafka's retries
    r = kactor("acls", *b, "--command-config", str(wrong), "--list")
    assert r.returncode == 1 and r.stderr == (
        f"kactor acls: Error while executing ACL command: Authentication failed with {s.bootstrap.split(',')[0]} "
        "(PLAIN): SaslAuthenticate failed with error 58: Authentication failed: Invalid username or password\n")
