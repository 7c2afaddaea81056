"""MetricsActor ("metrics"): Kafka's metrics registry for one broker, fed only by traced messages.

It replaces the Yammer metrics Kafka registers in KafkaController (gauges), ControllerEventManager (EventQueueSize,
EventQueueTimeMs), ControllerStats (one RateAndTimeMs timer per ControllerState), ControllerChannelManager
(QueueSize, RequestRateAndQueueTimeMs per broker) and ReplicaManager (gauges and ISR meters). The actor decides
nothing and sends nothing: it folds what it receives into a `BrokerMetrics` and, when the process has a metrics
edge (a live broker with ``kactor.metrics.port`` set), hands the edge an immutable `MetricsSnapshot` after each
message. The edge's HTTP thread reads only that snapshot, never the actor, so serving a scrape cannot change what
the actors do, and a replay (no edges) builds the same values without serving them.
"""

from __future__ import annotations

from typing import Any

import attrs

from actors.base import KActor
from messages.broker_lifecycle import BrokerRegistered
from messages.controller_events import ControllerState
from messages.observability import (
    ChannelRequestCompleted,
    ControllerChanged,
    ControllerEventProcessed,
    ControllerEventStarted,
    ControllerGauges,
    CoordinatorLoadErrors,
)
from messages.partition import ReplicaManagerGauges

# kafka.server:type=KafkaServer,name=BrokerState values (kafka.server.BrokerStates)
BROKER_STATE_STARTING = 1
BROKER_STATE_RUNNING = 3

# ReplicaManager metrics that are meters in Kafka (exposed as counters); the rest are gauges
REPLICA_MANAGER_METERS = ("IsrExpandsPerSec", "IsrShrinksPerSec", "FailedIsrUpdatesPerSec")

INACTIVE_GAUGES = ControllerGauges(False, 0, 0, 0, 0, 0, 0, 0)

# The group and transaction coordinators' Kafka metrics groups (kafka.server:type=<group>)
COORDINATOR_METRICS_GROUPS = ("group-coordinator-metrics", "transaction-coordinator-metrics")

# A timer's (count, sum in ms): Kafka's Timer keeps a histogram; a Prometheus summary keeps count and sum.
Timing = tuple[int, float]


@attrs.frozen
class ChannelMetrics:
    """One ControllerChannelManager broker entry: QueueSize, RequestRateAndQueueTimeMs (enqueued → sent), and
    kactor's request latency (sent → completed), retries and errors."""

    queue_size: int = 0
    queue_time: Timing = (0, 0.0)
    latency: Timing = (0, 0.0)
    retries: int = 0
    errors: int = 0


@attrs.frozen
class MetricsSnapshot:
    """Every value the endpoint serves, as of the last message the actor handled (immutable; dicts are copies)."""

    broker_id: int | None = None
    broker_epoch: int | None = None
    broker_state: int = BROKER_STATE_STARTING
    controller: ControllerGauges = INACTIVE_GAUGES
    controller_state: int = int(ControllerState.Idle)
    event_queue_size: int = 0
    event_queue_time: Timing = (0, 0.0)
    # ControllerStats timer name (e.g. "LeaderElectionRateAndTimeMs") → (count, sum ms)
    rate_and_time: dict[str, Timing] = attrs.field(factory=dict)
    # broker id → its channel's metrics (only while this broker is the active controller)
    channels: dict[int, ChannelMetrics] = attrs.field(factory=dict)
    # (broker id, request type) → completed requests, for kactor's latency by request type
    requests: dict[tuple[int, str], Timing] = attrs.field(factory=dict)
    # Kafka ReplicaManager metric name → value summed over the PartitionActor shards
    replica_manager: dict[str, int] = attrs.field(factory=dict)
    # coordinator metrics group → its partition-load-error-total (loads that failed; the partition stays loading)
    partition_load_errors: dict[str, int] = attrs.field(factory=lambda: dict.fromkeys(COORDINATOR_METRICS_GROUPS, 0))

    @property
    def total_queue_size(self) -> int:
        """ControllerChannelManager's TotalQueueSize."""
        return sum(c.queue_size for c in self.channels.values())


def _add(t: Timing, ms: float) -> Timing:
    return t[0] + 1, t[1] + max(0.0, ms)


class BrokerMetrics:
    """The aggregation, free of actors and threads (unit-tested directly)."""

    def __init__(self) -> None:
        self.broker_id: int | None = None
        self.broker_epoch: int | None = None
        self.broker_state = BROKER_STATE_STARTING
        self.controller = INACTIVE_GAUGES
        self.controller_state = int(ControllerState.Idle)
        self.event_queue_size = 0
        self.event_queue_time: Timing = (0, 0.0)
        self.rate_and_time: dict[str, Timing] = {}
        self.channels: dict[int, ChannelMetrics] = {}
        self.requests: dict[tuple[int, str], Timing] = {}
        self.shards: dict[int, dict[str, int]] = {}
        self.replica_manager: dict[str, int] = {}
        self.partition_load_errors: dict[str, int] = dict.fromkeys(COORDINATOR_METRICS_GROUPS, 0)

    def broker_registered(self, msg: BrokerRegistered) -> None:
        self.broker_id = msg.broker_id
        self.broker_epoch = msg.broker_epoch
        self.broker_state = BROKER_STATE_RUNNING

    def event_processed(self, msg: ControllerEventProcessed) -> None:
        """ControllerEventManager's EventQueueTimeMs / EventQueueSize and the state's RateAndTimeMs timer."""
        self.event_queue_time = _add(self.event_queue_time, msg.started_ms - msg.enqueued_ms)
        self.event_queue_size = msg.queue_size
        state = ControllerState.__members__.get(msg.controller_state)
        name = state.rate_and_time_metric_name if state is not None else None
        if name is not None:
            self.rate_and_time[name] = _add(self.rate_and_time.get(name, (0, 0.0)), msg.finished_ms - msg.started_ms)
        # Finished: Idle until the next event that waits for ZooKeeper reports its start (ControllerEventStarted);
        # an event that completes within one input is never visible to a scrape.
        self.controller_state = int(ControllerState.Idle)

    def event_started(self, msg: ControllerEventStarted) -> None:
        """ControllerEventManager sets its state when an event starts; ours is reported for events that wait."""
        state = ControllerState.__members__.get(msg.controller_state)
        self.controller_state = int(state) if state is not None else int(ControllerState.Idle)

    def controller_gauges(self, msg: ControllerGauges) -> None:
        self.controller = msg
        if not msg.active:
            # onControllerResignation: ControllerChannelManager.shutdown removes every broker's gauges
            self.channels.clear()

    def controller_changed(self, msg: ControllerChanged) -> None:
        if not msg.active:
            self.controller = INACTIVE_GAUGES
            self.channels.clear()

    def request_completed(self, msg: ChannelRequestCompleted) -> None:
        c = self.channels.get(msg.broker_id)
        if c is None:  # (not a default to get: built on every request)
            c = ChannelMetrics()
        failed = msg.error not in ("", "NONE")
        if msg.error == "BROKER_REMOVED":
            # ControllerChannelManager.removeBroker drops the broker's QueueSize gauge with its queue
            self.channels.pop(msg.broker_id, None)
        else:
            self.channels[msg.broker_id] = ChannelMetrics(
                queue_size=msg.queue_size,
                queue_time=_add(c.queue_time, msg.sent_ms - msg.enqueued_ms) if msg.sent_ms else c.queue_time,
                latency=_add(c.latency, msg.completed_ms - msg.sent_ms) if msg.sent_ms else c.latency,
                retries=c.retries + max(0, msg.attempts - 1), errors=c.errors + int(failed))
        if msg.sent_ms and not failed:
            key = (msg.broker_id, msg.request_type)
            self.requests[key] = _add(self.requests.get(key, (0, 0.0)), msg.completed_ms - msg.sent_ms)

    def replica_manager_gauges(self, msg: ReplicaManagerGauges) -> None:
        """One PartitionActor shard's ReplicaManager values; the broker's are the sum over shards."""
        self.shards[msg.shard] = dict(msg.values)
        total: dict[str, int] = {}
        for shard in sorted(self.shards):
            for name, value in self.shards[shard].items():
                total[name] = total.get(name, 0) + value
        self.replica_manager = total

    def coordinator_load_errors(self, msg: CoordinatorLoadErrors) -> None:
        self.partition_load_errors[msg.metrics_group] = msg.partition_load_errors

    def snapshot(self) -> MetricsSnapshot:
        return MetricsSnapshot(
            broker_id=self.broker_id, broker_epoch=self.broker_epoch, broker_state=self.broker_state,
            controller=self.controller, controller_state=self.controller_state,
            event_queue_size=self.event_queue_size, event_queue_time=self.event_queue_time,
            rate_and_time=dict(self.rate_and_time), channels=dict(self.channels), requests=dict(self.requests),
            replica_manager=dict(self.replica_manager), partition_load_errors=dict(self.partition_load_errors))


class MetricsActor(KActor):
    """The actor named "metrics": folds records into `BrokerMetrics`; publishes snapshots to the metrics edge."""

    def on_start(self) -> None:
        self.metrics = BrokerMetrics()

    def _publish(self) -> None:
        edge = self.runtime.edges.metrics
        if edge is not None:
            edge.publish(self.metrics.snapshot())

    def on_BrokerRegistered(self, msg: BrokerRegistered, sender: str) -> None:
        self.metrics.broker_registered(msg)
        self._publish()

    def on_ControllerEventProcessed(self, msg: ControllerEventProcessed, sender: str) -> None:
        self.metrics.event_processed(msg)
        self._publish()

    def on_ControllerEventStarted(self, msg: ControllerEventStarted, sender: str) -> None:
        self.metrics.event_started(msg)
        self._publish()

    def on_ControllerGauges(self, msg: ControllerGauges, sender: str) -> None:
        self.metrics.controller_gauges(msg)
        self._publish()

    def on_ControllerChanged(self, msg: ControllerChanged, sender: str) -> None:
        self.metrics.controller_changed(msg)
        self._publish()

    def on_ChannelRequestCompleted(self, msg: ChannelRequestCompleted, sender: str) -> None:
        self.metrics.request_completed(msg)
        self._publish()

    def on_ReplicaManagerGauges(self, msg: ReplicaManagerGauges, sender: str) -> None:
        self.metrics.replica_manager_gauges(msg)
        self._publish()

    def on_CoordinatorLoadErrors(self, msg: CoordinatorLoadErrors, sender: str) -> None:
        self.metrics.coordinator_load_errors(msg)
        self._publish()

    def on_unhandled(self, body: Any, sender: str) -> None:
        # Other records (e.g. progress records) are kept by the trace; they carry no Kafka metric.
        pass
