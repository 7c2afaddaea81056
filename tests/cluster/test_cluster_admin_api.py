"""The admin API on a real 3-broker cluster, driven by real clients: confluent-kafka's AdminClient (librdkafka),
kafka-python 3's KafkaAdminClient (a subprocess on .venv-clients/kafka-python3), `kactor topics --bootstrap-server`
and raw Kafka frames — each answer checked against the znodes the controller and the AdminManager wrote.

The tests share the session's cluster (conftest shared_cluster), each with topics of its own; the idempotent
producer's test has a cluster of its own, as it asserts the first producer-id block a cluster claims."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cluster_helpers import Cluster, raw_request, run_kactor
from kafka_clients_helpers import closing_producer

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
pytest.importorskip("confluent_kafka")

KAFKA_PYTHON3 = Path(sys.prefix).parent / ".venv-clients" / "kafka-python3"  # beside the venv (scripts/setup)


def endpoint(c: Cluster, broker_id: int) -> str:
    """host:port of the broker's first registered listener."""
    return c.json(f"/brokers/ids/{broker_id}")["endpoints"][0].split("://", 1)[1]


def bootstrap(c: Cluster) -> str:
    return ",".join(endpoint(c, b) for b in c.live_brokers())


@pytest.fixture
def cluster(shared_cluster: Cluster) -> Cluster:
    return shared_cluster


def listed_topics(c: Cluster) -> list[str]:
    """What ``kafka-topics --list`` must print: every topic in ZooKeeper not marked for deletion, sorted."""
    marked = set(c.zk.get_children("/admin/delete_topics")) if c.zk.exists("/admin/delete_topics") else set()
    return sorted(set(c.zk.get_children("/brokers/topics")) - marked)


def test_confluent_admin_client_creates_alters_and_deletes_a_topic(cluster: Cluster) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        NewPartitions,
        NewTopic,
    )

    c = cluster
    assert c.live_brokers() == [0, 1, 2]
    with AdminClient({"bootstrap.servers": bootstrap(c)}) as admin:
        futures = admin.create_topics([NewTopic("orders", 2, replica_assignment=[[0, 1], [1, 2]],
                                                config={"cleanup.policy": "compact"})], operation_timeout=30)
        futures["orders"].result(timeout=60)
        assert c.zk.get("/brokers/topics/orders")[0] == \
            b'{"version":2,"partitions":{"0":[0,1],"1":[1,2]},"adding_replicas":{},"removing_replicas":{}}'
        assert c.zk.get("/config/topics/orders")[0] == b'{"version":1,"config":{"cleanup.policy":"compact"}}'
        # DelayedCreatePartitions answered once every partition had a leader
        assert [c.partition_state("orders", p)["leader"] for p in (0, 1)] == [0, 1]

        (configs,) = admin.describe_configs([ConfigResource("TOPIC", "orders")]).values()
        entries = configs.result(timeout=30)
        assert (entries["cleanup.policy"].value, entries["cleanup.policy"].source) == ("compact", 1)
        assert (entries["segment.bytes"].value, entries["segment.bytes"].is_default) == ("1073741824", True)

        resource = ConfigResource("TOPIC", "orders", incremental_configs=[
            ConfigEntry("retention.ms", "3600000", incremental_operation=AlterConfigOpType.SET)])
        admin.incremental_alter_configs([resource])[resource].result(timeout=30)
        assert c.zk.get("/config/topics/orders")[0] == \
            b'{"version":1,"config":{"cleanup.policy":"compact","retention.ms":"3600000"}}'

        refused = admin.create_partitions([NewPartitions("orders", 3, [[3, 1]])], operation_timeout=30)["orders"]
        with pytest.raises(KafkaException, match="Unknown broker.s. in replica assignment: 3"):
            refused.result(timeout=60)
        admin.create_partitions([NewPartitions("orders", 3, [[2, 0]])],
                                operation_timeout=30)["orders"].result(timeout=60)
        assert c.assignment("orders") == {0: [0, 1], 1: [1, 2], 2: [2, 0]}
        assert c.partition_state("orders", 2)["leader"] == 2

        admin.delete_topics(["orders"], operation_timeout=30)["orders"].result(timeout=60)
    assert not c.zk.exists("/brokers/topics/orders")  # DelayedDeleteTopics answered once the topic was gone
    # completeDeleteTopic removes the topic znode, then its config and its deletion mark
    c.wait(lambda: not c.zk.exists("/config/topics/orders") and not c.zk.exists("/admin/delete_topics/orders"),
           30, "the config and the deletion mark of orders removed")


def test_confluent_admin_client_gets_kafkas_errors(cluster: Cluster) -> None:
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import AdminClient, NewTopic

    c = cluster
    c.create_topic("taken", 1, 1)
    with AdminClient({"bootstrap.servers": bootstrap(c)}) as admin:
        futures = admin.create_topics([NewTopic("taken", 1, 1), NewTopic("rf4", 1, 4)], operation_timeout=30)
        codes = {}
        for name, future in futures.items():
            with pytest.raises(KafkaException) as e:
                future.result(timeout=60)
            codes[name] = e.value.args[0].code()
    assert codes == {"taken": KafkaError.TOPIC_ALREADY_EXISTS, "rf4": KafkaError.INVALID_REPLICATION_FACTOR}
    assert not c.zk.exists("/brokers/topics/rf4")


def test_create_topics_on_a_broker_that_is_not_the_controller_is_not_controller(cluster: Cluster) -> None:
    c = cluster
    other = next(b for b in c.live_brokers() if b != c.controller_id())
    body = {"topics": [{"name": "elsewhere", "num_partitions": 1, "replication_factor": 1, "assignments": [],
                        "configs": []}], "timeout_ms": 10000, "validate_only": False}
    response = raw_request(endpoint(c, other), 19, 5, body)
    (result,) = response["topics"]
    assert (result["name"], result["error_code"]) == ("elsewhere", 41)  # NOT_CONTROLLER
    assert not c.zk.exists("/brokers/topics/elsewhere")
    ok = raw_request(endpoint(c, c.controller_id()), 19, 5, body)["topics"][0]
    assert (ok["error_code"], ok["num_partitions"], ok["replication_factor"]) == (0, 1, 1)


def test_kactor_topics_bootstrap_server(cluster: Cluster) -> None:
    c = cluster
    servers = bootstrap(c)
    created = run_kactor("topics", "--bootstrap-server", servers, "--create", "--topic", "cli",
                         "--replica-assignment", "0:1,1:2,2:0", "--config", "min.insync.replicas=2")
    assert created.stdout == "Created topic cli.\n"
    assert c.assignment("cli") == {0: [0, 1], 1: [1, 2], 2: [2, 0]}
    # the brokers' metadata caches follow the controller's UpdateMetadata a moment after the leaders are elected
    c.wait(lambda: "cli" in listed_topics(c)
           and run_kactor("topics", "--bootstrap-server", servers, "--list").stdout.splitlines() == listed_topics(c),
           30, "cli listed with every other topic")
    expected = ["Topic: cli\tPartitionCount: 3\tReplicationFactor: 2\tConfigs: min.insync.replicas=2",
                "\tTopic: cli\tPartition: 0\tLeader: 0\tReplicas: 0,1\tIsr: 0,1",
                "\tTopic: cli\tPartition: 1\tLeader: 1\tReplicas: 1,2\tIsr: 1,2",
                "\tTopic: cli\tPartition: 2\tLeader: 2\tReplicas: 2,0\tIsr: 2,0"]
    c.wait(lambda: run_kactor("topics", "--bootstrap-server", servers, "--describe", "--topic", "cli"
                              ).stdout.splitlines() == expected, 30, "cli described with its leaders")
    again = run_kactor("topics", "--bootstrap-server", servers, "--create", "--topic", "cli", "--partitions", "1",
                       "--replication-factor", "1", check=False)
    assert again.returncode == 1 and "TOPIC_ALREADY_EXISTS" in again.stderr
    assert run_kactor("topics", "--bootstrap-server", servers, "--delete", "--topic", "cli").stdout == ""
    c.wait(lambda: not c.zk.exists("/brokers/topics/cli"), 30, "cli deleted")


@pytest.mark.skipif(not KAFKA_PYTHON3.is_dir(), reason="kafka-python 3 is installed by scripts/setup")
def test_kafka_python3_admin_client(cluster: Cluster) -> None:
    c = cluster
    script = textwrap.dedent("""
        import json, sys, time
        from kafka.admin import KafkaAdminClient, NewTopic, ConfigResource, ConfigResourceType
        admin = KafkaAdminClient(bootstrap_servers=sys.argv[1], request_timeout_ms=30000)
        admin.create_topics([NewTopic("py3", num_partitions=2, replication_factor=3,
                                      topic_configs={"retention.ms": "60000"})], timeout_ms=30000)
        described = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "py3")])
        deadline = time.monotonic() + 30  # Metadata follows the controller's UpdateMetadata a moment later
        while "py3" not in (names := sorted(admin.list_topics())) and time.monotonic() < deadline:
            time.sleep(0.2)
        admin.delete_topics(["py3"], timeout_ms=30000)
        print(json.dumps({"names": names, "described": described}, default=str))
    """)
    env = dict(os.environ, PYTHONPATH=str(KAFKA_PYTHON3))
    proc = subprocess.run([sys.executable, "-c", script, bootstrap(c)], capture_output=True, text=True,
                          timeout=120, env=env, cwd="/")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "py3" in out["names"]
    retention = out["described"]["topic"]["py3"]["retention.ms"]
    assert (retention["value"] if isinstance(retention, dict) else retention) == "60000"
    assert not c.zk.exists("/brokers/topics/py3")


def test_idempotent_producer_gets_its_producer_id_from_a_block(start_cluster) -> None:
    """librdkafka's idempotent producer starts with InitProducerId: the broker it asks claims a block of 1000 ids in
    /latest_producer_id_block (Kafka's JSON) and every record is acknowledged."""
    from confluent_kafka import Producer

    c = start_cluster(3)
    c.create_topic("idem", 1, 3)
    delivered: list[tuple[object, int]] = []
    with closing_producer(Producer({"bootstrap.servers": bootstrap(c), "enable.idempotence": True,
                                    "acks": "all"})) as producer:
        for i in range(20):
            producer.produce("idem", value=b"v%d" % i,
                             on_delivery=lambda err, msg: delivered.append((err, msg.offset())))
        assert producer.flush(60) == 0
    assert [err for err, _ in delivered] == [None] * 20
    assert sorted(offset for _, offset in delivered) == list(range(20))
    block = c.json("/latest_producer_id_block")
    assert set(block) == {"version", "broker", "block_start", "block_end"}
    assert (block["version"], block["block_start"], block["block_end"]) == (1, "0", "999")
    assert block["broker"] in c.live_brokers()
