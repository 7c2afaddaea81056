"""The metrics edge: a Prometheus text endpoint (prometheus_client) on 127.0.0.1:``kactor.metrics.port``.

The MetricsActor publishes an immutable `MetricsSnapshot` after each record it folds in; this edge keeps a reference
to the latest one, and its HTTP thread renders that reference on each scrape. Replacing a reference is atomic, so the
HTTP thread never sees a half-updated value and never touches an actor. Names follow what Prometheus' JMX exporter
makes of Kafka's MBeans: ``kafka.controller:type=KafkaController,name=ActiveControllerCount`` →
``kafka_controller_KafkaController_ActiveControllerCount``; Kafka's timers become summaries (``_count``, ``_sum`` in
ms) and its meters counters (``_total``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric, SummaryMetricFamily

from actors.metrics_actor import REPLICA_MANAGER_METERS, MetricsSnapshot

log = logging.getLogger("kactor.edges.metrics")

BIND_ADDRESS = "127.0.0.1"

KC = "kafka_controller_KafkaController_"
CEM = "kafka_controller_ControllerEventManager_"
STATS = "kafka_controller_ControllerStats_"
CCM = "kafka_controller_ControllerChannelManager_"
RM = "kafka_server_ReplicaManager_"


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, value=value)


def metric_families(snap: MetricsSnapshot) -> Iterator[Metric]:
    """The Prometheus metric families of one snapshot (also used by the unit tests)."""
    g = snap.controller
    active = 1 if g.active else 0
    yield _gauge(KC + "ActiveControllerCount", "1 if this broker is the active controller", active)
    yield _gauge(KC + "ControllerState", "ControllerState value of the controller event thread (0 Idle)",
                 snap.controller_state)
    yield _gauge(KC + "OfflinePartitionsCount", "partitions without a live leader (active controller only)",
                 g.offline_partitions)
    yield _gauge(KC + "PreferredReplicaImbalanceCount", "partitions whose leader is not the preferred replica",
                 g.preferred_replica_imbalance)
    yield _gauge(KC + "GlobalTopicCount", "topics in the cluster (active controller only)", g.global_topics)
    yield _gauge(KC + "GlobalPartitionCount", "partitions with a leader (active controller only)",
                 g.global_partitions)
    yield _gauge(KC + "TopicsToDeleteCount", "topics queued for deletion", g.topics_to_delete)
    yield _gauge(KC + "ReplicasToDeleteCount", "replicas of topics being deleted not yet deleted",
                 g.replicas_to_delete)
    yield _gauge(KC + "ControllerEpoch", "epoch of this broker as active controller (0 when not active)",
                 g.controller_epoch)

    yield _gauge(CEM + "EventQueueSize", "controller events waiting in the queue", snap.event_queue_size)
    count, total = snap.event_queue_time
    yield SummaryMetricFamily(CEM + "EventQueueTimeMs", "time controller events waited in the queue (ms)",
                              count_value=count, sum_value=total)

    for name in sorted(snap.rate_and_time):
        count, total = snap.rate_and_time[name]
        yield SummaryMetricFamily(STATS + name, "controller events of this state and their processing time (ms)",
                                  count_value=count, sum_value=total)

    yield _gauge(CCM + "TotalQueueSize", "requests queued for all brokers", snap.total_queue_size)
    queue = GaugeMetricFamily(CCM + "QueueSize", "requests queued for one broker", labels=["broker_id"])
    queue_time = SummaryMetricFamily(CCM + "RequestRateAndQueueTimeMs",
                                     "requests sent to one broker and their time in its queue (ms)",
                                     labels=["broker_id"])
    latency = SummaryMetricFamily("kactor_controller_ChannelRequestLatencyMs",
                                  "controller requests answered by one broker: time from send to answer (ms)",
                                  labels=["broker_id"])
    retries = CounterMetricFamily("kactor_controller_ChannelRequestRetries",
                                  "controller requests resent to one broker", labels=["broker_id"])
    errors = CounterMetricFamily("kactor_controller_ChannelRequestErrors",
                                 "controller requests answered with an error", labels=["broker_id"])
    for broker in sorted(snap.channels):
        c = snap.channels[broker]
        label = [str(broker)]
        queue.add_metric(label, c.queue_size)
        queue_time.add_metric(label, count_value=c.queue_time[0], sum_value=c.queue_time[1])
        latency.add_metric(label, count_value=c.latency[0], sum_value=c.latency[1])
        retries.add_metric(label, c.retries)
        errors.add_metric(label, c.errors)
    yield from (queue, queue_time, latency, retries, errors)
    by_type = SummaryMetricFamily("kactor_controller_RequestLatencyMs",
                                  "controller requests answered, by broker and request type (ms)",
                                  labels=["broker_id", "request_type"])
    for (broker, request_type) in sorted(snap.requests):
        count, total = snap.requests[(broker, request_type)]
        by_type.add_metric([str(broker), request_type], count_value=count, sum_value=total)
    yield by_type

    for name in sorted(snap.replica_manager):
        value = snap.replica_manager[name]
        if "." in name:  # a ReplicationQuotaManager's metric: kafka.server:type=<QuotaType>,name=byte-rate
            quota_type, metric = name.split(".", 1)
            yield _gauge(f"kafka_server_{quota_type}_{metric.replace('-', '_')}",
                         f"{quota_type} {metric} of throttled replicas (B/s)", value)
        elif name in REPLICA_MANAGER_METERS:
            yield CounterMetricFamily(RM + name, f"ReplicaManager {name} (meter count)", value=value)
        else:
            yield _gauge(RM + name, f"ReplicaManager {name}", value)

    for group in sorted(snap.partition_load_errors):
        # a Kafka metric (kafka.server:type=<group>,name=partition-load-error-total) as the JMX exporter names it
        yield CounterMetricFamily(f"kafka_server_{group.replace('-', '_')}_partition_load_error_total",
                                  f"{group}: loads of a partition that failed (the partition stays loading)",
                                  value=snap.partition_load_errors[group])

    yield _gauge("kafka_server_KafkaServer_BrokerState", "1 Starting, 3 RunningAsBroker (registered)",
                 snap.broker_state)
    if snap.broker_epoch is not None:
        yield _gauge("kactor_server_BrokerEpoch", "czxid of this broker's registration znode", snap.broker_epoch)


class _SnapshotCollector:
    def __init__(self, edge: MetricsEdge) -> None:
        self._edge = edge

    def collect(self) -> Iterator[Metric]:
        return metric_families(self._edge.snapshot)


class _GaugesCollector:
    """Gauges another edge reads live on each scrape (the log cleaner's threads: kafka.log:type=LogCleaner...),
    named as the JMX exporter names Kafka's: ``<domain>_<type>_<name>``, dashes as underscores."""

    def __init__(self, domain: str, source: Callable[[], dict[str, dict[str, float]]]) -> None:
        self._domain, self._source = domain, source

    def collect(self) -> Iterator[Metric]:
        for mbean_type, values in sorted(self._source().items()):
            for name, value in sorted(values.items()):
                yield _gauge(f"{self._domain}_{mbean_type}_{name.replace('-', '_')}",
                             f"{self._domain.replace('_', '.')}:type={mbean_type},name={name}", value)


class MetricsEdge:
    """Serves the latest published snapshot. The ``metrics`` slot of ``runtime.edges``; `close()` stops it."""

    def __init__(self, port: int, address: str = BIND_ADDRESS) -> None:
        self.snapshot = MetricsSnapshot()
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(_SnapshotCollector(self))  # type: ignore[arg-type]
        self._server: Any
        self._server, self._thread = start_http_server(port, addr=address, registry=self.registry)
        self.port: int = self._server.server_port

    def add_gauges(self, domain: str, source: Callable[[], dict[str, dict[str, float]]]) -> None:
        """Serve ``source()``'s gauges too ({MBean type: {name: value}}) under ``domain`` (e.g. ``kafka_log``)."""
        self.registry.register(_GaugesCollector(domain, source))  # type: ignore[arg-type]

    def publish(self, snapshot: MetricsSnapshot) -> None:
        """Called by the MetricsActor (driver thread): replace the reference the HTTP thread reads."""
        self.snapshot = snapshot

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
