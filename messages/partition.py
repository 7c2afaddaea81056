"""Messages between a broker's ReplicaManagerActor and its PartitionActor shards.

A broker's partitions are sharded over a bounded set of PartitionActors (``kactor.partition.actors``, 8 by default)
by a stable hash of the TopicPartition, so 10,000 partitions are 8 actors, not 10,000. The ReplicaManagerActor
splits each controller or client request by shard, sends each shard its part as a `ShardRequest`, and merges the
`ShardReply`s into the one response Kafka's ReplicaManager would give.
"""

from __future__ import annotations

from typing import Any

from messages.registry import message


@message
class ShardInit:
    """Start shard ``shard`` of ``shards`` with the broker side's configuration (a ReplicaManagerInit)."""

    shard: int
    shards: int
    config: Any


@message
class ShardRequest:
    """One shard's part of a request (LeaderAndIsr, UpdateMetadata, StopReplica, Fetch, Produce)."""

    token: int
    body: Any


@message
class ShardReply:
    """The shard's answer to the ShardRequest with this token."""

    token: int
    shard: int
    body: Any


@message
class ShardBrokerEpoch:
    """This broker's registration epoch (its /brokers/ids/<id> czxid), for stale-broker-epoch checks."""

    broker_epoch: int


@message
class ReplicaManagerShutdown:
    """KafkaServer.shutdown's replicaManager.shutdown(): stop fetching and checkpoint high watermarks; the
    ReplicaManagerActor then passes ``complete`` back to the kafka-server."""

    complete: Any


@message
class ShardShutdown:
    pass


@message
class ReplicaManagerShuttingDown:
    """KafkaServer.shutdown's ``isShuttingDown.set(true)``, sent by the kafka-server before it asks the controller
    for a controlled shutdown (Kafka's ReplicaManager shares that flag): from now on makeFollowers adds no fetchers.
    The ReplicaManagerActor passes it to every shard as a ShardShuttingDown."""


@message
class ShardShuttingDown:
    """ReplicaManagerShuttingDown, for one shard: its ReplicaManager's begin_shutdown()."""


@message
class ShardStopped:
    shard: int


@message
class ReplicaManagerGauges:
    """kafka.server:type=ReplicaManager gauges and meter counts of one shard, by Kafka's metric names (the metrics
    actor sums the shards)."""

    shard: int
    values: dict[str, int]


@message
class LogAppendFailed:
    """A shard's append to (or read of) log dir number ``dir_index`` failed while it handled the message numbered
    ``seq`` (reported by the log-dir probe edge of a live broker). The file system's answer decided something — the
    producer or the fetcher got KAFKA_STORAGE_ERROR, a follower stayed behind — so it is recorded as an input: a
    replay reads these ahead and makes the same appends and reads fail on its healthy scratch dirs
    (`edges.log_dirs.RecordedLogDirs`)."""

    dir_index: int
    seq: int


@message
class LogDirFailure:
    """The log-dir probe (an edge) found log dir number ``dir_index`` of ``log.dirs`` unusable (missing, not a
    directory, not writable): the shards take its partitions offline (ReplicaManager.handleLogDirFailure). The index,
    not the path, identifies the dir, so a replay on scratch dirs takes the same dir offline."""

    dir_index: int
    log_dir: str
