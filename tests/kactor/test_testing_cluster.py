"""kactor.testing's cluster on real brokers: the topics kafka_topic makes (leaders in every broker's Metadata, deleted
after), and each fault helper as a test calls it — kill and heal, a partition between two brokers, a pause, an
expired ZooKeeper session, controller(), a slow link. One 2-broker cluster for the module."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from kactor.cli import kafka_wire
from kactor.testing.cluster import KafkaTestCluster, TopicFactory

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


@pytest.fixture(scope="module")
def cluster() -> Iterator[KafkaTestCluster]:
    # a follower that stops fetching leaves the ISR after 2 s instead of 2.6's 30 s
    c = KafkaTestCluster(2, overrides=["replica.lag.time.max.ms=2000"])
    c.start()
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture
def topics(cluster: KafkaTestCluster, request: pytest.FixtureRequest) -> Iterator[TopicFactory]:
    factory = TopicFactory(cluster, request.node.name)
    try:
        yield factory
    finally:
        factory.cleanup()
        cluster.heal()


def metadata_leaders(cluster: KafkaTestCluster, broker: int, topic: str) -> dict[int, int]:
    """Partition → leader in broker ``broker``'s Metadata answer for ``topic``."""
    body = {"topics": [{"name": topic}], "allow_auto_topic_creation": False,
            "include_cluster_authorized_operations": False, "include_topic_authorized_operations": False}
    answer = kafka_wire.exchange(cluster.lc.broker_address(broker), *kafka_wire.METADATA, body, timeout_s=5.0)
    (t,) = answer["topics"]
    return {p["partition_index"]: p["leader_id"] for p in t["partitions"]}


def test_a_topic_is_led_in_every_brokers_metadata_and_deleted_after_the_test(cluster: KafkaTestCluster) -> None:
    factory = TopicFactory(cluster, "test_a_topic[x]")
    topic = factory(partitions=3, replication_factor=2, config={"retention.ms": "60000"})
    assert topic.startswith("test_a_topic_x-")
    for b in cluster.brokers:
        leaders = metadata_leaders(cluster, b, topic)
        assert sorted(leaders) == [0, 1, 2] and all(leader in cluster.brokers for leader in leaders.values())
    config, _ = cluster.zk.get(f"/config/topics/{topic}")
    assert json.loads(config)["config"] == {"retention.ms": "60000"}
    factory.cleanup()
    cluster.wait(lambda: cluster.zk.exists(f"/brokers/topics/{topic}") is None, 30, f"{topic} deleted")


def test_kill_broker_moves_the_leadership_and_heal_starts_it_again(cluster: KafkaTestCluster,
                                                                  topics: TopicFactory) -> None:
    topic = topics(partitions=1, replication_factor=2)
    leader = cluster.leader(topic)
    cluster.kill_broker(leader)
    assert not cluster.running(leader)
    (other,) = set(cluster.brokers) - {leader}
    assert cluster.wait_for_leader(topic, not_on=[leader], timeout=30) == other
    assert cluster.isr(topic) == [other]
    assert cluster.heal() is True
    assert cluster.running(leader)
    assert set(cluster.wait_for_isr(topic, timeout=30)[0]) == {0, 1}
    assert cluster.heal() is False  # nothing left to heal


def test_a_partition_between_leader_and_follower_shrinks_the_isr_until_healed(cluster: KafkaTestCluster,
                                                                            topics: TopicFactory) -> None:
    from confluent_kafka import Producer

    topic = topics(partitions=1, replication_factor=2)
    leader = cluster.leader(topic)
    (follower,) = set(cluster.brokers) - {leader}
    with cluster.partition(leader, follower):
        # a follower that has every record is never out of sync: give the leader records it cannot fetch. The brokers
        # poll the fault file every 0.1 s, so a record produced at once can still reach the follower before the cut:
        # keep producing until the ISR has shrunk (a record after the cut is enough)
        producer = Producer({**cluster.client_config, "acks": 1})
        deadline = time.monotonic() + 30
        while cluster.isr(topic) != [leader] and time.monotonic() < deadline:
            producer.produce(topic, b"behind the partition")
            assert producer.flush(10) == 0
            time.sleep(0.2)
        assert cluster.wait_for_isr(topic, 0, isr=[leader], timeout=5) == {0: [leader]}
        assert cluster.leader(topic) == leader  # the follower's ZooKeeper session is untouched
    assert set(cluster.wait_for_isr(topic, 0, timeout=30)[0]) == {leader, follower}


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def test_pause_broker_stops_the_process_until_the_block_ends(cluster: KafkaTestCluster) -> None:
    pid = cluster.lc.procs[1].pid
    with cluster.pause_broker(1):
        cluster.wait(lambda: _state(pid) == "T", 5, "broker 1 stopped")
    cluster.wait(lambda: _state(pid) != "T", 5, "broker 1 continued")


def test_expire_session_gives_the_broker_a_new_session(cluster: KafkaTestCluster) -> None:
    before = cluster.zk.exists("/brokers/ids/0").ephemeralOwner
    cluster.expire_session(0, timeout=30)
    after = cluster.zk.exists("/brokers/ids/0").ephemeralOwner
    assert after != before
    assert cluster.running(0)


def test_controller_is_the_one_in_zookeeper(cluster: KafkaTestCluster) -> None:
    data, _ = cluster.zk.get("/controller")
    assert cluster.controller() == json.loads(data)["brokerid"]


def _acks_all_latency(cluster: KafkaTestCluster, topic: str, n: int = 5) -> float:
    """The median seconds an acks=all produce of one record to ``topic`` takes, each sent alone."""
    from confluent_kafka import Producer

    producer = Producer({**cluster.client_config, "acks": "all", "linger.ms": 0})
    took = []
    for i in range(n):
        start = time.monotonic()
        producer.produce(topic, str(i).encode())
        assert producer.flush(15) == 0
        took.append(time.monotonic() - start)
    return sorted(took)[n // 2]


def test_a_slow_link_to_the_follower_delays_acks_all_by_about_the_delay(cluster: KafkaTestCluster,
                                                                       topics: TopicFactory) -> None:
    topic = topics(partitions=1, replication_factor=2)
    leader = cluster.leader(topic)
    (follower,) = set(cluster.brokers) - {leader}
    _acks_all_latency(cluster, topic, 2)  # connections and the producer id set up
    fast = _acks_all_latency(cluster, topic)
    with cluster.slow_link(leader, follower, 400):
        time.sleep(0.5)  # the rule polled (0.1 s) and a fetch already in flight answered
        slow = _acks_all_latency(cluster, topic)
        # the follower's next fetch, which advances the high watermark, is held 0.4 s on its way to the leader
        assert slow >= fast + 0.3, (fast, slow)
        assert cluster.isr(topic) and set(cluster.isr(topic)) == {leader, follower}  # slow, not out of sync
    time.sleep(0.5)
    assert _acks_all_latency(cluster, topic) < fast + 0.2
