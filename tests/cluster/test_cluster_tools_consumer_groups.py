"""``kactor consumer-groups --reset-offsets / --delete / --delete-offsets`` (Kafka 2.6.3's ConsumerGroupCommand) on a
real 3-broker cluster: the plan it prints, and the offsets the group's coordinator then holds (read back through
librdkafka's OffsetFetch), for every scenario; the refusals while a member is active; DeleteGroups; OffsetDelete.
On the session's shared cluster (conftest shared_cluster), each test with a topic and a group of its own."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import pytest
from cluster_helpers import Cluster, run_kactor
from kafka_clients_helpers import bootstrap, closing_producer

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
pytest.importorskip("confluent_kafka")

ASSIGNMENT = {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1]}
HEADER = f"{'GROUP':<30} {'TOPIC':<30} {'PARTITION':<10} {'NEW-OFFSET':<15}"


def groups(c: Cluster, *args: str) -> Any:
    return run_kactor("consumer-groups", "--bootstrap-server", bootstrap(c), *args, check=False)


def plan(group: str, offsets: dict[int, int]) -> list[str]:
    return ["", HEADER, *(f"{group:<30} {'resets':<30} {p!s:<10} {o!s:<15}" for p, o in sorted(offsets.items()))]


def committed(c: Cluster, group: str) -> dict[int, int]:
    from confluent_kafka import ConsumerGroupTopicPartitions

    from kactor.kafka_clients import admin_client

    admin = admin_client(bootstrap(c))
    got = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(30)
    return {tp.partition: tp.offset for tp in got.topic_partitions or () if tp.offset >= 0}


def test_reset_offsets_every_scenario_then_delete(shared_cluster: Cluster, tmp_path) -> None:
    from confluent_kafka import Consumer, Producer

    from kactor.kafka_clients import client_config

    c = shared_cluster
    c.create_topic("resets", assignment=ASSIGNMENT)
    servers = bootstrap(c)
    # 10 records per partition, record i stamped t0 + i seconds
    t0 = (int(time.time()) - 3600) * 1000
    producer = Producer(client_config(servers, "test-producer", {"acks": "all"}))
    with closing_producer(producer):
        for p in range(3):
            for i in range(10):
                producer.produce("resets", value=f"{p}-{i}".encode(), partition=p, timestamp=t0 + i * 1000)
        assert producer.flush(60) == 0

    # a group nobody has used (Dead): a reset creates its offsets
    got = groups(c, "--reset-offsets", "--group", "app", "--topic", "resets", "--to-offset", "3", "--execute")
    assert (got.returncode, got.stdout.splitlines(), got.stderr) == (0, plan("app", {0: 3, 1: 3, 2: 3}), "")
    assert committed(c, "app") == {0: 3, 1: 3, 2: 3}

    got = groups(c, "--reset-offsets", "--group", "app", "--all-topics", "--shift-by", "4", "--execute")
    assert got.stdout.splitlines() == plan("app", {0: 7, 1: 7, 2: 7})
    assert committed(c, "app") == {0: 7, 1: 7, 2: 7}

    # past the log end: clamped, with the tool's warning
    got = groups(c, "--reset-offsets", "--group", "app", "--topic", "resets:1", "--shift-by", "20", "--execute")
    assert got.stdout.splitlines() == plan("app", {1: 10})
    assert got.stderr == ("WARN New offset (27) is higher than latest offset for topic partition resets-1. "
                          "Value will be set to 10\n")
    assert committed(c, "app") == {0: 7, 1: 10, 2: 7}

    # a dry run (explicit, or by default with Kafka's warning) changes nothing
    got = groups(c, "--reset-offsets", "--group", "app", "--topic", "resets", "--to-earliest", "--dry-run")
    assert (got.stdout.splitlines(), got.stderr) == (plan("app", {0: 0, 1: 0, 2: 0}), "")
    got = groups(c, "--reset-offsets", "--group", "app", "--topic", "resets", "--to-earliest")
    assert got.stdout.splitlines() == plan("app", {0: 0, 1: 0, 2: 0})
    assert got.stderr.startswith("WARN: No action will be performed as the --execute option is missing.")
    assert committed(c, "app") == {0: 7, 1: 10, 2: 7}

    at = dt.datetime.fromtimestamp((t0 + 4500) / 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]
    got = groups(c, "--reset-offsets", "--group", "app", "--topic", "resets", "--to-datetime", at, "--execute")
    assert got.stdout.splitlines() == plan("app", {0: 5, 1: 5, 2: 5})
    assert committed(c, "app") == {0: 5, 1: 5, 2: 5}
    # the same instant in another zone; and a time after every record: the log end
    plus2 = dt.datetime.fromtimestamp((t0 + 2500) / 1000, dt.timezone(dt.timedelta(hours=2)))
    got = groups(c, "--reset-offsets", "--group", "app", "--topic", "resets:0", "--to-datetime",
                 plus2.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "+02:00", "--dry-run")
    assert got.stdout.splitlines() == plan("app", {0: 3})
    got = groups(c, "--reset-offsets", "--group", "app", "--topic", "resets:0", "--by-duration", "PT1M", "--dry-run")
    assert got.stdout.splitlines() == plan("app", {0: 10})
    got = groups(c, "--reset-offsets", "--group", "app", "--topic", "resets:0,2", "--by-duration", "P1D", "--execute")
    assert got.stdout.splitlines() == plan("app", {0: 0, 2: 0})
    got = groups(c, "--reset-offsets", "--group", "app", "--topic", "resets:1", "--to-latest", "--execute")
    assert got.stdout.splitlines() == plan("app", {1: 10})
    got = groups(c, "--reset-offsets", "--group", "app", "--topic", "resets", "--to-current", "--execute")
    assert got.stdout.splitlines() == plan("app", {0: 0, 1: 10, 2: 0})
    assert committed(c, "app") == {0: 0, 1: 10, 2: 0}

    # --export writes the plan as the CSV --from-file reads
    got = groups(c, "--reset-offsets", "--group", "app", "--topic", "resets", "--to-earliest", "--dry-run",
                 "--export")
    assert got.stdout == "resets,0,0\nresets,1,0\nresets,2,0\n\n"
    plan_file = tmp_path / "plan.csv"
    plan_file.write_text("resets,0,4\nresets,2,20\n")
    got = groups(c, "--reset-offsets", "--group", "app", "--from-file", str(plan_file), "--execute")
    assert got.stdout.splitlines() == plan("app", {0: 4, 2: 10})
    assert got.stderr == ("WARN New offset (20) is higher than latest offset for topic partition resets-2. "
                          "Value will be set to 10\n")
    assert committed(c, "app") == {0: 4, 1: 10, 2: 10}

    got = groups(c, "--reset-offsets", "--group", "app", "--topic", "nope", "--to-latest", "--execute")
    assert (got.returncode, got.stdout) == (0, "\nError: Executing consumer group command failed due to "
                                               "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: "
                                               "This server does not host this topic-partition.\n")

    # a member is active: no reset, no deletion (Kafka's lines, exit 0 as 2.6)
    consumer = Consumer(client_config(servers, "test-member", {"group.id": "app", "enable.auto.commit": False,
                                                               "session.timeout.ms": 6000}))
    try:
        consumer.subscribe(["resets"])
        c.wait(lambda: consumer.poll(0.2) is not None or consumer.assignment(), 60, "the member's assignment")
        got = groups(c, "--reset-offsets", "--group", "app", "--topic", "resets", "--to-earliest", "--execute")
        assert (got.returncode, got.stdout.splitlines()) == (0, [
            "", "Error: Assignments can only be reset if the group 'app' is inactive, but the current state is "
                "Stable.", "", HEADER])
        got = groups(c, "--delete", "--group", "app")
        assert got.stdout.splitlines() == [
            "", "Error: Deletion of some consumer groups failed:",
            "* Group 'app' could not be deleted due to: java.util.concurrent.ExecutionException: "
            "org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty."]
        assert committed(c, "app") == {0: 4, 1: 10, 2: 10}
    finally:
        consumer.close()

    got = groups(c, "--delete", "--group", "app", "--group", "never")
    assert got.stdout.splitlines() == [
        "", "Error: Deletion of some consumer groups failed:",
        "* Group 'never' could not be deleted due to: java.util.concurrent.ExecutionException: "
        "org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist.",
        "", "These consumer groups were deleted successfully: 'app'"]
    assert committed(c, "app") == {}
    assert "app" not in groups(c, "--list").stdout.split()


def offset_delete_served(c: Cluster) -> bool:
    from kactor.cli import kafka_wire

    return kafka_wire.supports(bootstrap(c), 47, 10)


def test_delete_offsets(shared_cluster: Cluster) -> None:
    """OffsetDelete: refused per partition while a member subscribes to the topic (GROUP_SUBSCRIBED_TO_TOPIC), done
    once it left; a group that does not exist is GROUP_ID_NOT_FOUND."""
    from confluent_kafka import Consumer

    from kactor.kafka_clients import client_config

    c = shared_cluster
    if not offset_delete_served(c):
        pytest.skip("the brokers do not advertise OffsetDelete (API 47) in ApiVersions yet")
    c.create_topic("pruned", assignment=ASSIGNMENT)
    servers = bootstrap(c)
    groups(c, "--reset-offsets", "--group", "pruner", "--topic", "pruned", "--to-latest", "--execute")
    row = "{:<30} {:<15} {:<15}".format
    consumer = Consumer(client_config(servers, "test-member", {"group.id": "pruner", "enable.auto.commit": False,
                                                               "session.timeout.ms": 6000}))
    try:
        consumer.subscribe(["pruned"])
        c.wait(lambda: consumer.poll(0.2) is not None or consumer.assignment(), 60, "the member's assignment")
        got = groups(c, "--delete-offsets", "--group", "pruner", "--topic", "pruned:0")
        subscribed = ("Error: org.apache.kafka.common.errors.GroupSubscribedToTopicException: Deleting offsets of a "
                      "topic is forbidden while the consumer group is actively subscribed to it.")
        assert got.stdout.splitlines() == [
            "", "Error: Encounter some partition level error, see the follow-up details:",
            "", row("TOPIC", "PARTITION", "STATUS"), row("pruned", "0", subscribed)]
    finally:
        consumer.close()
    got = groups(c, "--delete-offsets", "--group", "pruner", "--topic", "pruned:0", "--topic", "nope")
    assert got.stdout.splitlines() == [
        "Request succeed for deleting offsets with topic pruned:0, nope group pruner",
        "", row("TOPIC", "PARTITION", "STATUS"),
        row("nope", "Not Provided", "Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This "
                                    "server does not host this topic-partition."),
        row("pruned", "0", "Successful")]
    assert committed(c, "pruner") == {1: 0, 2: 0}
    got = groups(c, "--delete-offsets", "--group", "never", "--topic", "pruned")
    assert got.stdout.splitlines()[:2] == ["", "Error: 'never' does not exist."]
