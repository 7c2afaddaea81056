"""The metrics actor's aggregation (no cluster) and the Prometheus endpoint edge that serves its snapshots."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from actors.clock import ManualClock
from actors.edge_slots import Edges
from actors.metrics_actor import BrokerMetrics, ChannelMetrics, MetricsActor, MetricsSnapshot
from actors.runtime import Runtime
from edges.metrics_http import MetricsEdge, metric_families
from messages.broker_lifecycle import BrokerRegistered
from messages.observability import (
    ChannelRequestCompleted,
    ControllerChanged,
    ControllerEventProcessed,
    ControllerEventStarted,
    ControllerGauges,
)
from messages.partition import ReplicaManagerGauges

ACTIVE = ControllerGauges(True, 3, offline_partitions=2, preferred_replica_imbalance=1, global_topics=4,
                          global_partitions=9, topics_to_delete=1, replicas_to_delete=3)


def rm_values(leaders: int, partitions: int, urp: int = 0, shrinks: int = 0) -> dict[str, int]:
    return {"LeaderCount": leaders, "PartitionCount": partitions, "UnderReplicatedPartitions": urp,
            "IsrShrinksPerSec": shrinks, "IsrExpandsPerSec": 0, "FailedIsrUpdatesPerSec": 0}


def test_controller_event_timings_are_kept_per_kafka_timer() -> None:
    m = BrokerMetrics()
    m.event_processed(ControllerEventProcessed("BrokerChange", "BrokerChange", 100.0, 104.0, 110.0, queue_size=2))
    m.event_processed(ControllerEventProcessed("BrokerChange", "BrokerChange", 110.0, 110.0, 113.5, queue_size=1))
    m.event_processed(ControllerEventProcessed("TopicChange", "TopicChange", 100.0, 113.5, 120.0))
    # states without a ControllerStats timer still count as queue time
    m.event_processed(ControllerEventProcessed("UpdateMetadataResponseReceived", "UpdateMetadataResponseReceived",
                                               120.0, 121.0, 121.0))
    s = m.snapshot()
    # Kafka names BrokerChange's timer LeaderElectionRateAndTimeMs
    assert s.rate_and_time == {"LeaderElectionRateAndTimeMs": (2, 9.5), "TopicChangeRateAndTimeMs": (1, 6.5)}
    assert s.event_queue_time == (4, 4.0 + 0.0 + 13.5 + 1.0)
    assert s.event_queue_size == 0
    assert s.controller_state == 0  # Idle


def test_controller_state_shows_an_event_waiting_for_zookeeper_until_it_finishes() -> None:
    """ControllerEventManager's ControllerState gauge: BrokerChange (2) while that event waits for ZooKeeper."""
    m = BrokerMetrics()
    m.event_started(ControllerEventStarted("BrokerChange", "BrokerChange", 10.0))
    assert m.snapshot().controller_state == 2
    m.event_processed(ControllerEventProcessed("BrokerChange", "BrokerChange", 9.0, 10.0, 30.0))
    assert m.snapshot().controller_state == 0
    m.event_started(ControllerEventStarted("Future", "NotAState", 31.0))
    assert m.snapshot().controller_state == 0


def test_unknown_controller_state_counts_queue_time_only() -> None:
    m = BrokerMetrics()
    m.event_processed(ControllerEventProcessed("Future", "NotAState", 0.0, 1.0, 2.0))
    assert m.snapshot().event_queue_time == (1, 1.0) and m.snapshot().rate_and_time == {}


def test_replica_manager_gauges_are_summed_over_shards_and_replaced_per_shard() -> None:
    m = BrokerMetrics()
    m.replica_manager_gauges(ReplicaManagerGauges(0, rm_values(2, 5, urp=1, shrinks=3)))
    m.replica_manager_gauges(ReplicaManagerGauges(1, rm_values(1, 4, shrinks=1)))
    assert m.snapshot().replica_manager == rm_values(3, 9, urp=1, shrinks=4)
    m.replica_manager_gauges(ReplicaManagerGauges(0, rm_values(0, 5, urp=0, shrinks=3)))
    assert m.snapshot().replica_manager == rm_values(1, 9, urp=0, shrinks=4)


def test_channel_requests_queue_time_latency_retries_errors_and_removal() -> None:
    m = BrokerMetrics()
    m.controller_gauges(ACTIVE)
    m.request_completed(ChannelRequestCompleted(1, "LeaderAndIsrRequest", 10.0, 12.0, 20.0, 1, "NONE", 3))
    m.request_completed(ChannelRequestCompleted(1, "UpdateMetadataRequest", 10.0, 20.0, 21.0, 2, "NONE", 2))
    m.request_completed(ChannelRequestCompleted(2, "StopReplicaRequest", 5.0, 6.0, 7.0, 1, "STALE_BROKER_EPOCH", 0))
    s = m.snapshot()
    assert s.channels == {1: ChannelMetrics(queue_size=2, queue_time=(2, 12.0), latency=(2, 9.0), retries=1),
                          2: ChannelMetrics(queue_time=(1, 1.0), latency=(1, 1.0), errors=1)}
    assert s.total_queue_size == 2
    assert s.requests == {(1, "LeaderAndIsrRequest"): (1, 8.0), (1, "UpdateMetadataRequest"): (1, 1.0)}
    # ControllerChannelManager.removeBroker: the broker's queue gauge goes with its channel
    m.request_completed(ChannelRequestCompleted(2, "LeaderAndIsrRequest", 30.0, 0.0, 40.0, 0, "BROKER_REMOVED", 0))
    assert set(m.snapshot().channels) == {1}
    # resignation: every channel is gone, the gauges read 0 as in Kafka
    m.controller_gauges(ControllerGauges(False, 0, 0, 0, 0, 0, 0, 0))
    s = m.snapshot()
    assert s.channels == {} and not s.controller.active
    m.controller_gauges(ACTIVE)
    m.request_completed(ChannelRequestCompleted(1, "LeaderAndIsrRequest", 10.0, 12.0, 20.0, 1, "NONE", 0))
    m.controller_changed(ControllerChanged(1, -1, False))
    assert m.snapshot().channels == {} and m.snapshot().controller.active is False


def test_snapshot_is_a_copy() -> None:
    m = BrokerMetrics()
    m.replica_manager_gauges(ReplicaManagerGauges(0, rm_values(1, 1)))
    before = m.snapshot()
    m.replica_manager_gauges(ReplicaManagerGauges(0, rm_values(2, 2)))
    assert before.replica_manager["LeaderCount"] == 1


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def _render(snap: MetricsSnapshot) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    from prometheus_client import CollectorRegistry, generate_latest

    class Collector:
        def collect(self):  # type: ignore[no-untyped-def]
            return metric_families(snap)

    registry = CollectorRegistry(auto_describe=False)
    registry.register(Collector())  # type: ignore[arg-type]
    return _samples(generate_latest(registry).decode())


def test_rendering_uses_kafka_names() -> None:
    m = BrokerMetrics()
    m.broker_registered(BrokerRegistered(1, 77))
    m.controller_gauges(ACTIVE)
    m.event_processed(ControllerEventProcessed("BrokerChange", "BrokerChange", 100.0, 104.0, 110.0, queue_size=2))
    m.request_completed(ChannelRequestCompleted(2, "LeaderAndIsrRequest", 10.0, 12.0, 20.0, 1, "NONE", 3))
    m.replica_manager_gauges(ReplicaManagerGauges(0, rm_values(2, 5, urp=1, shrinks=3)))
    v = _render(m.snapshot())
    kc = "kafka_controller_KafkaController_"
    assert v[(kc + "ActiveControllerCount", ())] == 1
    assert v[(kc + "OfflinePartitionsCount", ())] == 2
    assert v[(kc + "PreferredReplicaImbalanceCount", ())] == 1
    assert v[(kc + "GlobalTopicCount", ())] == 4
    assert v[(kc + "GlobalPartitionCount", ())] == 9
    assert v[(kc + "TopicsToDeleteCount", ())] == 1
    assert v[(kc + "ReplicasToDeleteCount", ())] == 3
    assert v[(kc + "ControllerState", ())] == 0
    assert v[("kafka_controller_ControllerEventManager_EventQueueSize", ())] == 2
    assert v[("kafka_controller_ControllerEventManager_EventQueueTimeMs_count", ())] == 1
    assert v[("kafka_controller_ControllerEventManager_EventQueueTimeMs_sum", ())] == 4.0
    assert v[("kafka_controller_ControllerStats_LeaderElectionRateAndTimeMs_count", ())] == 1
    assert v[("kafka_controller_ControllerStats_LeaderElectionRateAndTimeMs_sum", ())] == 6.0
    b2 = (("broker_id", "2"),)
    assert v[("kafka_controller_ControllerChannelManager_QueueSize", b2)] == 3
    assert v[("kafka_controller_ControllerChannelManager_TotalQueueSize", ())] == 3
    assert v[("kafka_controller_ControllerChannelManager_RequestRateAndQueueTimeMs_count", b2)] == 1
    assert v[("kafka_controller_ControllerChannelManager_RequestRateAndQueueTimeMs_sum", b2)] == 2.0
    lair = (("broker_id", "2"), ("request_type", "LeaderAndIsrRequest"))
    assert v[("kactor_controller_RequestLatencyMs_sum", lair)] == 8.0
    assert v[("kafka_server_ReplicaManager_LeaderCount", ())] == 2
    assert v[("kafka_server_ReplicaManager_PartitionCount", ())] == 5
    assert v[("kafka_server_ReplicaManager_UnderReplicatedPartitions", ())] == 1
    assert v[("kafka_server_ReplicaManager_IsrShrinksPerSec_total", ())] == 3
    assert v[("kafka_server_KafkaServer_BrokerState", ())] == 3
    assert v[("kactor_server_BrokerEpoch", ())] == 77


def test_replication_byte_rates_are_summed_over_shards_under_their_quota_types() -> None:
    """ReplicationQuotaManager's byte-rate (kafka.server:type=LeaderReplication|FollowerReplication): each shard
    measures the throttled replicas it hosts; the broker's rate is the sum."""
    m = BrokerMetrics()
    m.replica_manager_gauges(ReplicaManagerGauges(0, {"LeaderReplication.byte-rate": 700,
                                                      "FollowerReplication.byte-rate": 0}))
    m.replica_manager_gauges(ReplicaManagerGauges(1, {"LeaderReplication.byte-rate": 300,
                                                      "FollowerReplication.byte-rate": 5}))
    v = _render(m.snapshot())
    assert v[("kafka_server_LeaderReplication_byte_rate", ())] == 1000
    assert v[("kafka_server_FollowerReplication_byte_rate", ())] == 5
    assert not [k for k in v if "ReplicaManager_LeaderReplication" in k[0]]


def test_a_fresh_broker_serves_zeros() -> None:
    v = _render(MetricsSnapshot())
    assert v[("kafka_controller_KafkaController_ActiveControllerCount", ())] == 0
    assert v[("kafka_controller_KafkaController_OfflinePartitionsCount", ())] == 0
    assert v[("kafka_server_KafkaServer_BrokerState", ())] == 1


@pytest.fixture
def runtime() -> Iterator[Runtime]:
    rt = Runtime("metrics-test", clock=ManualClock(1000.0))
    yield rt
    rt.shutdown()


def test_actor_publishes_snapshots_to_the_endpoint(runtime: Runtime) -> None:
    edge = MetricsEdge(0)  # port 0: the OS picks one (kactor.metrics.port=0 means "disabled" only in config)
    try:
        runtime.edges = Edges(metrics=edge)
        runtime.spawn(MetricsActor, "metrics")
        runtime.inject("metrics", ACTIVE, "controller")
        runtime.inject("metrics", ReplicaManagerGauges(0, rm_values(1, 2)), "replica-manager-0")
        runtime.inject("metrics", ReplicaManagerGauges(1, rm_values(1, 1)), "replica-manager-1")
        runtime.run_until_idle()
        with urllib.request.urlopen(f"http://127.0.0.1:{edge.port}/metrics", timeout=10) as r:
            v = _samples(r.read().decode())
        assert v[("kafka_controller_KafkaController_ActiveControllerCount", ())] == 1
        assert v[("kafka_controller_KafkaController_GlobalPartitionCount", ())] == 9
        assert v[("kafka_server_ReplicaManager_PartitionCount", ())] == 3
        assert edge._server.server_address[0] == "127.0.0.1"
    finally:
        edge.close()


def test_actor_without_edge_keeps_values_and_ignores_other_records(runtime: Runtime) -> None:
    """As in a replay: no edge, nothing served, the values are still folded in; unknown records are ignored."""
    runtime.spawn(MetricsActor, "metrics")
    runtime.inject("metrics", ACTIVE, "controller")
    runtime.inject("metrics", ControllerChanged(0, 3, True), "controller")
    runtime.run_until_idle()
    actor = runtime.instances["metrics"]
    assert actor.metrics.snapshot().controller == ACTIVE
