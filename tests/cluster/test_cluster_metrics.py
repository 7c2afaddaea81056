"""Issue #7 on a real cluster: every broker serves Kafka's metrics on its kactor.metrics.port (Prometheus text)."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from cluster_helpers import TEST_SESSION_TIMEOUT_MS
from prometheus_client.parser import text_string_to_metric_families

pytestmark = pytest.mark.cluster

KC = "kafka_controller_KafkaController_"
RM = "kafka_server_ReplicaManager_"


def scrape(cluster, broker_id: int) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """One scrape of a broker's endpoint: unlabelled sample name → value (labelled samples keyed name{k=v,...})."""
    with urllib.request.urlopen(cluster.lc.metrics_url(broker_id), timeout=5) as r:
        text = r.read().decode()
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
            out[s.name + (f"{{{labels}}}" if labels else "")] = s.value
    return out


def try_scrape(cluster, broker_id: int) -> dict[str, float] | None:  # type: ignore[no-untyped-def]
    try:
        return scrape(cluster, broker_id)
    except (urllib.error.URLError, ConnectionError):
        return None


def test_active_controller_count_and_offline_partitions(start_cluster) -> None:
    # No controlled shutdown on the way out: with a broker dead, the last brokers' controlled shutdowns can only
    # fail and retry (Kafka does the same), which would make the teardown the slowest part of this test.
    c = start_cluster(3, overrides=["controlled.shutdown.enable=false"])
    brokers = [0, 1, 2]
    # each endpoint listens on loopback only, on the port LocalCluster gave it
    assert len({c.lc.metrics_ports[b] for b in brokers}) == 3

    def one_active() -> dict[int, dict[str, float]] | None:
        scrapes = {b: try_scrape(c, b) for b in brokers}
        if any(s is None for s in scrapes.values()):
            return None
        active = [b for b, s in scrapes.items() if s[KC + "ActiveControllerCount"] == 1]
        return scrapes if active == [c.controller_id()] else None  # type: ignore[return-value]

    scrapes = c.wait(one_active, what="ActiveControllerCount = 1 on the controller only")
    controller = c.controller_id()
    assert controller is not None
    assert sum(s[KC + "ActiveControllerCount"] for s in scrapes.values()) == 1
    for b, s in scrapes.items():
        assert s["kafka_server_KafkaServer_BrokerState"] == 3  # RunningAsBroker once registered
        assert s["kactor_server_BrokerEpoch"] == c.zk.exists(f"/brokers/ids/{b}").czxid
        if b != controller:  # Kafka's controller gauges read 0 on every broker but the active controller
            assert s[KC + "OfflinePartitionsCount"] == 0 and s[KC + "GlobalTopicCount"] == 0
    ctl = scrapes[controller]
    assert ctl[KC + "ControllerEpoch"] == c.controller_epoch()
    # the election itself was timed: Kafka's ControllerChange timer counted at least the Startup event
    assert ctl["kafka_controller_ControllerStats_ControllerChangeRateAndTimeMs_count"] >= 1
    assert ctl["kafka_controller_ControllerEventManager_EventQueueTimeMs_count"] >= 1

    # an RF1 topic whose only replica is on a broker that is not the controller
    victim = next(b for b in brokers if b != controller)
    c.create_topic("solo", assignment={0: [victim]})
    c.create_topic("spread", partitions=3, replication_factor=3)
    c.wait_partition("solo", 0, lambda st: st["leader"] == victim, what=f"solo-0 led by {victim}")

    def counts_settled() -> dict[str, float] | None:
        s = scrape(c, controller)
        ok = (s[KC + "GlobalTopicCount"] == 2 and s[KC + "GlobalPartitionCount"] == 4
              and s[KC + "OfflinePartitionsCount"] == 0)
        return s if ok else None
    ctl = c.wait(counts_settled, what="GlobalTopicCount 2, GlobalPartitionCount 4, no offline partition")
    # the controller sent LeaderAndIsr/UpdateMetadata through its channel to every broker
    for b in brokers:
        assert ctl[f"kafka_controller_ControllerChannelManager_RequestRateAndQueueTimeMs_count{{broker_id={b}}}"] >= 1

    # the victim hosts 4 partitions (solo-0 and the 3 of spread) and leads solo-0 at least
    victim_rm = c.wait(lambda: (s := scrape(c, victim))[RM + "PartitionCount"] == 4 and s,
                       what=f"broker {victim} PartitionCount 4")
    assert victim_rm[RM + "LeaderCount"] >= 1
    total_leaders = c.wait(lambda: (n := sum(scrape(c, b)[RM + "LeaderCount"] for b in brokers)) == 4 and n,
                           what="4 leaders over the brokers")
    assert total_leaders == 4

    epoch_before = c.partition_state("solo", 0)["leader_epoch"]  # type: ignore[index]
    c.kill(victim)
    # after the session expires the controller finds no live replica for solo-0: OfflinePartitionsCount rises
    ctl = c.wait(lambda: (s := scrape(c, controller))[KC + "OfflinePartitionsCount"] == 1 and s,
                 TEST_SESSION_TIMEOUT_MS / 1000 + 30, "OfflinePartitionsCount 1 after the kill")
    assert ctl[KC + "ActiveControllerCount"] == 1
    assert ctl["kafka_controller_ControllerStats_LeaderElectionRateAndTimeMs_count"] >= 1  # BrokerChange's timer
    # Kafka's removeReplicasFromIsr keeps the last ISR member and sets NoLeader
    st = c.wait_partition("solo", 0, lambda st: st["leader"] == -1, what="solo-0 without a leader")
    assert st["isr"] == [victim] and st["leader_epoch"] == epoch_before + 1
    # spread's partitions lose the victim from their ISR on the survivors: UnderReplicatedPartitions on the leaders
    c.wait(lambda: sum(scrape(c, b)[RM + "UnderReplicatedPartitions"] for b in brokers if b != victim) == 3,
           what="3 under-replicated partitions on the survivors")
    for b in brokers:
        if b != victim:
            assert scrape(c, b)[KC + "ActiveControllerCount"] == (1 if b == controller else 0)
    # the victim's endpoint went with its process
    assert try_scrape(c, victim) is None
