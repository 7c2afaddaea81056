"""cluster-start: how long a project's test session waits for kactor's pytest plugin (kactor/testing/).

Each run starts, as the ``kafka_cluster`` fixture does, one embedded ZooKeeper and 3 brokers, and times it until the
cluster is ready for clients: every broker registered and answering Metadata with all three brokers and the
controller. Then it times ``kafka_topic`` — a 3-partition, RF 3 topic created through CreateTopics until every broker's
Metadata names its elected leaders — several times. The floor, measured in the same run just before: the ZooKeeper
start alone (a JVM up and answering ``ruok``), which the cluster's start includes and cannot beat.

Targets (issue #41): the cluster ready in ≤ 5 s on a 2-core machine, a topic in ≤ 0.2 s.
"""

from __future__ import annotations

import time

from bench import common as c

ANCHOR = ("testcontainers' Kafka (a Docker container per session) is ready in about 10-20 s; "
          "targets ≤ 5 s for the cluster, ≤ 0.2 s for a topic (issue #41)")
BROKERS = 3
TOPICS_PER_RUN = 5


def zookeeper_start() -> float:
    """Seconds from nothing to a ZooKeeper answering ruok (the cluster start's first step, alone)."""
    from kactor.testing.cluster import ZK_TICK_MS
    from zk_bridge.server import ZooKeeperEnsemble

    t0 = time.perf_counter()
    zk = ZooKeeperEnsemble(1, tick_ms=ZK_TICK_MS).start()
    took = time.perf_counter() - t0
    zk.stop()
    return took


def run(scale: float = 1.0, runs: int = 5, tmpfs: bool = False) -> c.Result:
    from kactor.testing.cluster import KafkaTestCluster, TopicFactory

    load_before = c.load_average()
    floors: list[float] = []
    starts: list[float] = []
    topics: list[float] = []
    for i in range(runs):
        floors.append(zookeeper_start())
        t0 = time.perf_counter()
        cluster = KafkaTestCluster(BROKERS).start()
        starts.append(time.perf_counter() - t0)
        try:
            factory = TopicFactory(cluster, f"bench-{i}")
            run_topics = []
            for _ in range(TOPICS_PER_RUN):
                t0 = time.perf_counter()
                factory(partitions=3, replication_factor=3)
                run_topics.append((time.perf_counter() - t0) * 1000)
            topics.extend(run_topics)
        finally:
            cluster.stop()
        print(f"  run {i + 1}: ZooKeeper alone {floors[-1]:.2f} s; {BROKERS}-broker cluster ready in "
              f"{starts[-1]:.2f} s; topics ready in {', '.join(f'{t:.0f}' for t in run_topics)} ms", flush=True)
    return c.Result(
        name="cluster-start", scale_text=f"{BROKERS} brokers, 1 ZooKeeper, kactor.testing's kafka_cluster",
        figure_label="cluster ready for clients (every broker registered, every Metadata lists all)",
        figure=c.Measure(starts), ceiling_label="the ZooKeeper start alone (same runs)", ceiling=c.Measure(floors),
        anchor=ANCHOR,
        extra={"kafka_topic: 3 partitions, RF 3, leaders in every broker's Metadata": c.Measure(topics, "ms")},
        notes=[f"targets: cluster ≤ 5 s ({'met' if c.Measure(starts).median <= 5 else 'NOT met'}), "
               f"topic ≤ 200 ms ({'met' if c.Measure(topics).median <= 200 else 'NOT met'})"],
        load_before=load_before, load_after=c.load_average())
