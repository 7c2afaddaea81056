"""A coordinator's failed partition load is counted where an operator sees it: the transaction coordinator's actor
tells the metrics actor (CoordinatorLoadErrors), which serves it as the Kafka metric
kafka.server:type=transaction-coordinator-metrics,name=partition-load-error-total (the JMX exporter's
``kafka_server_transaction_coordinator_metrics_partition_load_error_total``); the group coordinator's likewise."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from actors.clock import ManualClock
from actors.group_coordinator_actor import GroupCoordinatorActor
from actors.metrics_actor import BrokerMetrics, MetricsSnapshot
from actors.runtime import Runtime
from actors.transaction_coordinator_actor import TransactionCoordinatorActor
from core.coordinator.group.group_metadata_manager import partition_for
from core.coordinator.group.message_formats import records_batch
from edges.metrics_http import metric_families
from messages.common import Broker, EndPoint, Errors
from messages.group import GroupCoordinatorConfig, GroupCoordinatorInit
from messages.net import NetReply, NetRequest
from messages.observability import CoordinatorLoadErrors
from messages.replication import LeadershipChange
from messages.transaction import (
    InitProducerIdRequest,
    InitProducerIdResponse,
    TransactionCoordinatorConfig,
    TransactionCoordinatorInit,
)
from protocol.records import CONTROL_ABORT, EndTransactionMarker, build_end_txn_marker_batch
from protocol.zk import znodes
from tests.actors.test_group_coordinator_actor import Recorder, ReplicaManagerModel
from tests.actors.test_metrics_actor import _samples
from tests.support.actors import ZooKeeperModel

NAME = "transaction-coordinator"
TXN_METRIC = "kafka_server_transaction_coordinator_metrics_partition_load_error_total"
GROUP_METRIC = "kafka_server_group_coordinator_metrics_partition_load_error_total"
GROUP_CONFIG = GroupCoordinatorConfig(offsets_topic_num_partitions=3)


def _render(snap: MetricsSnapshot) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    class Collector:
        def collect(self) -> Any:
            return metric_families(snap)

    registry = CollectorRegistry(auto_describe=False)
    registry.register(Collector())  # type: ignore[arg-type]
    return _samples(generate_latest(registry).decode())


def test_the_metrics_are_served_from_zero_and_follow_the_coordinators() -> None:
    v = _render(MetricsSnapshot())
    assert (v[(TXN_METRIC, ())], v[(GROUP_METRIC, ())]) == (0, 0)
    m = BrokerMetrics()
    m.coordinator_load_errors(CoordinatorLoadErrors("transaction-coordinator-metrics", 2))
    m.coordinator_load_errors(CoordinatorLoadErrors("group-coordinator-metrics", 1))
    v = _render(m.snapshot())
    assert (v[(TXN_METRIC, ())], v[(GROUP_METRIC, ())]) == (2, 1)


@pytest.fixture
def rt():
    rt = Runtime("broker-1", clock=ManualClock(1_000.0))
    for name in ("net", "timer", "metrics"):
        rt.spawn(Recorder, name)
    rt.spawn(ReplicaManagerModel, "replica-manager")
    rt.spawn(ZooKeeperModel, "zk")
    zk = rt.instances["zk"].zk.create_top_level_paths()
    zk.create("/brokers/ids/1", znodes.encode_broker(Broker(1, (EndPoint("127.0.0.1", 9091),)), timestamp_ms=1))
    rt.spawn(TransactionCoordinatorActor, NAME)
    rt.deliver(NAME, TransactionCoordinatorInit(1, TransactionCoordinatorConfig(transaction_log_num_partitions=3)),
               "edge:process")
    yield rt
    rt.shutdown()


def test_a_failed_transaction_load_reaches_the_metrics_actor(rt):
    p = partition_for("tx", 3)
    rm = rt.instances["replica-manager"]
    rm.logs[p] = bytearray(build_end_txn_marker_batch(3, 0, EndTransactionMarker(CONTROL_ABORT, 1), 0))
    rt.deliver(NAME, LeadershipChange(((p, 4),), (), "__transaction_state"), "replica-manager")
    assert rt.instances["metrics"].received == [CoordinatorLoadErrors("transaction-coordinator-metrics", 1)]
    rt.deliver(NAME, NetRequest(7, 1, InitProducerIdRequest("tx", 60000), True, 4, "cli", "/127.0.0.1"), "edge:net")
    (reply,) = [m for m in rt.instances["net"].received if isinstance(m, NetReply)]
    assert reply.body == InitProducerIdResponse(Errors.COORDINATOR_LOAD_IN_PROGRESS)
    # a load that succeeds tells the metrics actor nothing new
    rm.logs[p] = bytearray()
    rt.deliver(NAME, LeadershipChange(((p, 5),), (), "__transaction_state"), "replica-manager")
    assert len(rt.instances["metrics"].received) == 1


def test_a_failed_group_load_reaches_the_metrics_actor():
    rt = Runtime("broker-1", clock=ManualClock(1_000.0))
    try:
        for name in ("net", "timer", "metrics"):
            rt.spawn(Recorder, name)
        rt.spawn(ReplicaManagerModel, "replica-manager")
        rt.spawn(ZooKeeperModel, "zk")
        rt.instances["zk"].zk.create_top_level_paths()
        rt.spawn(GroupCoordinatorActor, "group-coordinator")
        rt.deliver("group-coordinator", GroupCoordinatorInit(1, GROUP_CONFIG), "edge:process")
        p = partition_for("g", GROUP_CONFIG.offsets_topic_num_partitions)
        # a key of an unknown version: 2.6.3's readMessageKey throws
        rt.instances["replica-manager"].logs[p] = bytearray(records_batch([(b"\x00\x09g", b"")], 0))
        rt.deliver("group-coordinator", LeadershipChange(((p, 0),), ()), "replica-manager")
        assert rt.instances["metrics"].received == [CoordinatorLoadErrors("group-coordinator-metrics", 1)]
    finally:
        rt.shutdown()
