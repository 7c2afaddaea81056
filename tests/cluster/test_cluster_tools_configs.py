"""``kactor configs --bootstrap-server`` (Kafka 2.6.3's ConfigCommand on the admin API) on a real cluster: topic and
broker configs (one broker, the cluster default) altered and described, and what the brokers then hold in
``/config/...``; a delete of a key that is not set refused; user and client quotas through the client-quota APIs, or
Kafka's UnsupportedVersionException while the brokers do not advertise them."""

from __future__ import annotations

import pytest
from cluster_helpers import Cluster, run_kactor
from kafka_clients_helpers import bootstrap

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def configs(c: Cluster, *args: str):  # type: ignore[no-untyped-def]
    return run_kactor("configs", "--bootstrap-server", bootstrap(c), *args, check=False)


def znode(c: Cluster, path: str) -> dict[str, str]:
    return c.json(path)["config"] if c.zk.exists(path) else {}


def test_topic_broker_and_quota_configs(start_cluster) -> None:
    c: Cluster = start_cluster(2)
    c.create_topic("conf", assignment={0: [0, 1]})
    topic = ["--entity-type", "topics", "--entity-name", "conf"]
    got = configs(c, *topic, "--alter", "--add-config", "retention.ms=100000,min.insync.replicas=2")
    assert (got.returncode, got.stdout, got.stderr) == (0, "Completed updating config for topic conf.\n", "")
    assert znode(c, "/config/topics/conf") == {"retention.ms": "100000", "min.insync.replicas": "2"}
    # the entries' synonyms after the topic's own are the broker's (2.6: every broker config the key falls back to)
    lines = configs(c, *topic, "--describe").stdout.splitlines()
    assert len(lines) == 3 and lines[0] == "Dynamic configs for topic conf are:"
    assert lines[1].startswith("  min.insync.replicas=2 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:"
                               "min.insync.replicas=2") and lines[1].endswith("}")
    assert lines[2].startswith("  retention.ms=100000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:"
                               "retention.ms=100000") and lines[2].endswith("}")
    got = configs(c, *topic, "--alter", "--delete-config", "retention.ms,segment.ms")
    assert (got.returncode, got.stderr) == (1, "kactor configs: Invalid config(s): segment.ms\n")
    assert znode(c, "/config/topics/conf") == {"retention.ms": "100000", "min.insync.replicas": "2"}
    assert configs(c, *topic, "--alter", "--delete-config", "retention.ms").returncode == 0
    assert znode(c, "/config/topics/conf") == {"min.insync.replicas": "2"}
    every = configs(c, *topic, "--describe", "--all").stdout.splitlines()
    assert every[0] == "All configs for topic conf are:"
    assert "  segment.bytes=1073741824 sensitive=false synonyms={DEFAULT_CONFIG:log.segment.bytes=1073741824}" in every
    assert all(line.startswith("  ") and " sensitive=" in line and " synonyms={" in line for line in every[1:])

    got = configs(c, "--entity-type", "brokers", "--entity-default", "--alter", "--add-config",
                  "log.retention.ms=3600000")
    assert got.stdout == "Completed updating default config for brokers in the cluster.\n"
    got = configs(c, "--broker", "1", "--alter", "--add-config", "log.retention.ms=7200000")
    assert got.stdout == "Completed updating config for broker 1.\n"
    assert znode(c, "/config/brokers/<default>") == {"log.retention.ms": "3600000"}
    assert znode(c, "/config/brokers/1") == {"log.retention.ms": "7200000"}
    lines = configs(c, "--entity-type", "brokers", "--describe").stdout.splitlines()
    assert lines[0] == "Dynamic configs for broker 0 are:" and lines[1] == "Dynamic configs for broker 1 are:"
    assert lines[2].startswith("  log.retention.ms=7200000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:"
                               "log.retention.ms=7200000, DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=3600000")
    assert len(lines) == 5 and lines[3] == "Default configs for brokers in the cluster are:"
    assert lines[4].startswith("  log.retention.ms=3600000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:"
                               "log.retention.ms=3600000")
    assert configs(c, "--broker", "1", "--alter", "--delete-config", "log.retention.ms").returncode == 0
    assert znode(c, "/config/brokers/1") == {}

    from kactor.cli import kafka_wire

    alice = ["--entity-type", "users", "--entity-name", "alice"]
    if kafka_wire.supports(bootstrap(c), 49, 10):
        got = configs(c, *alice, "--alter", "--add-config", "producer_byte_rate=1048576,request_percentage=50")
        assert got.stdout == "Completed updating config for user alice.\n"
        # 2.6's AdminManager.alterClientQuotas writes a LONG quota as a long, a DOUBLE one as a double
        assert znode(c, "/config/users/alice") == {"producer_byte_rate": "1048576", "request_percentage": "50.0"}
        got = configs(c, *alice, "--describe")
        assert got.stdout == "Configs for user-principal 'alice' are producer_byte_rate=1048576.0, " \
                             "request_percentage=50.0\n"
        got = configs(c, "--entity-type", "clients", "--entity-default", "--alter", "--add-config",
                      "consumer_byte_rate=20000000")
        assert got.stdout == "Completed updating default config for clients in the cluster.\n"
        assert configs(c, "--client-defaults", "--describe").stdout == (
            "Configs for the default client-id are consumer_byte_rate=2.0E7\n")
    else:  # Kafka's client, on a broker without the API: UnsupportedVersionException, as the tool prints it
        got = configs(c, *alice, "--describe")
        assert got.returncode == 1 and got.stdout == ""
        assert got.stderr.splitlines() == [
            f"Error while executing config command with args '--bootstrap-server {bootstrap(c)} --entity-type users "
            "--entity-name alice --describe'",
            "org.apache.kafka.common.errors.UnsupportedVersionException: The broker does not support "
            "DESCRIBE_CLIENT_QUOTAS"]
