"""Records the controller and channels send to observer actors, so a trace carries what Kafka puts in its
state-change log and metrics: event timings, state transitions, elections, request latencies, gauges.

They are ordinary messages (traced, replayed, summarised by spark/); nothing decides on them.
"""

from __future__ import annotations

from messages.common import TopicPartition
from messages.registry import message


@message
class ControllerEventProcessed:
    """One controller event: Kafka's EventQueueTimeMs (started − enqueued) and per-state RateAndTimeMs
    (finished − started). ``controller_state`` is the ControllerState name (e.g. "BrokerChange")."""

    event: str
    controller_state: str
    enqueued_ms: float
    started_ms: float
    finished_ms: float
    queue_size: int = 0


@message
class ControllerEventStarted:
    """An event that waits for ZooKeeper (it spans several inputs) has started: the ControllerState gauge shows its
    state until its ControllerEventProcessed. An event that completes within one input sends no such record (no
    scrape can see it in progress: the metrics actor runs after the cascade)."""

    event: str
    controller_state: str
    started_ms: float


@message
class PartitionStateChange:
    topic_partition: TopicPartition
    from_state: str
    to_state: str


@message
class ReplicaStateChange:
    topic_partition: TopicPartition
    replica: int
    from_state: str
    to_state: str


@message
class LeaderElection:
    """A leader decision written to ZooKeeper. strategy: OfflinePartition (clean/unclean), ReassignPartition,
    PreferredReplicaPartition, ControlledShutdownPartition, or InitialLeader for a new partition."""

    topic_partition: TopicPartition
    strategy: str
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    unclean: bool = False


@message
class StateChangeBatch:
    """What one state-machine call changed, as Kafka's state-change log would tell it."""

    controller_epoch: int
    partition_changes: tuple[PartitionStateChange, ...] = ()
    replica_changes: tuple[ReplicaStateChange, ...] = ()
    elections: tuple[LeaderElection, ...] = ()


@message
class ChannelRequestCompleted:
    """One controller → broker request answered (or abandoned when the broker was removed).

    enqueued → sent is the queue time (Kafka's RequestRateAndQueueTimeMs); sent → completed the latency;
    attempts > 1 means it was retried; queue_size is the channel's queue after this request left it."""

    broker_id: int
    request_type: str
    enqueued_ms: float
    sent_ms: float
    completed_ms: float
    attempts: int
    error: str
    queue_size: int


@message
class ControllerGauges:
    """Kafka's KafkaController gauges after an event (all 0 when not active)."""

    active: bool
    controller_epoch: int
    offline_partitions: int
    preferred_replica_imbalance: int
    global_topics: int
    global_partitions: int
    topics_to_delete: int
    replicas_to_delete: int
    under_replicated_partitions: int = 0


@message
class ControllerChanged:
    """This broker became the active controller (epoch) or resigned (epoch −1)."""

    broker_id: int
    controller_epoch: int
    active: bool


@message
class TopicDeletionProgress:
    """phase: Queued, Started, Ineligible, Completed."""

    topic: str
    phase: str
    reason: str = ""


@message
class ReassignmentProgress:
    """phase: Started, Completed, Dropped (invalid entry), Cancelled (reverted to its origin replicas)."""

    topic_partition: TopicPartition
    phase: str
    target_replicas: tuple[int, ...] = ()
    reason: str = ""


@message
class CoordinatorLoadErrors:
    """A coordinator's loads of its partitions that failed so far (the partition stays loading), as the Kafka metric
    ``partition-load-error-total`` of ``metrics_group`` ("group-coordinator-metrics" or
    "transaction-coordinator-metrics", the groups of 2.6's partition-load-time sensors)."""

    metrics_group: str
    partition_load_errors: int
