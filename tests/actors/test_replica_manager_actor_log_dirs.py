"""ReplicaManagerActor on simpleSystemBase: when the last live log dir fails the broker halts (Kafka's
LogManager.handleLogDirFailure: "Shutdown broker because all log dirs in ... have failed", Exit.halt(1)); KafkaServer's
isShuttingDown reaches every shard."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from actors.clock import ManualClock
from actors.replica_manager_actor import ReplicaManagerActor
from actors.runtime import Runtime
from messages.broker_lifecycle import BrokerShutdownComplete, ReplicaManagerInit
from messages.partition import LogDirFailure, ReplicaManagerShuttingDown, ShardShuttingDown
from tests.support.actors import Sink


@contextmanager
def _replica_manager(dirs: tuple[str, ...], shards: int) -> Iterator[tuple[Runtime, list[tuple[str, Any]]]]:
    """A replica manager with ``shards`` PartitionActors over ``dirs``, its peers sinks; (runtime, every
    (receiver, message) delivered)."""
    rt = Runtime("broker-0", clock=ManualClock(1_000.0))
    seen: list[tuple[str, Any]] = []
    rt.observer = lambda seq, ts, sender, receiver, body, cause: seen.append((receiver, body))
    try:
        for name in ("kafka-server", "timer", "zk", "metrics", "net"):
            rt.spawn(Sink, name)
        rt.spawn(ReplicaManagerActor, "replica-manager")
        rt.deliver("replica-manager", ReplicaManagerInit(0, dirs, partition_actors=shards), "edge:process")
        yield rt, seen
    finally:
        rt.shutdown()


def test_broker_halts_only_when_every_log_dir_has_failed(tmp_path: Path) -> None:
    dirs = (str(tmp_path / "a"), str(tmp_path / "b"))
    with _replica_manager(dirs, 2) as (rt, seen):
        def halts() -> list[Any]:
            return [b for r, b in seen if r == "kafka-server" and isinstance(b, BrokerShutdownComplete)]

        rt.deliver("replica-manager", LogDirFailure(0, dirs[0]), "edge:log-dirs")
        assert halts() == []  # one dir left: its partitions are still served
        rt.deliver("replica-manager", LogDirFailure(1, dirs[1]), "edge:log-dirs")
        assert halts() == [BrokerShutdownComplete(
            False, f"Shutdown broker because all log dirs in {dirs[0]}, {dirs[1]} have failed", True)]
        # both shards were told of each failure
        assert [(r, b.dir_index) for r, b in seen if isinstance(b, LogDirFailure) and r != "replica-manager"] == [
            ("partition-0", 0), ("partition-1", 0), ("partition-0", 1), ("partition-1", 1)]


def test_shutting_down_reaches_every_shard_once(tmp_path: Path) -> None:
    """KafkaServer's isShuttingDown (set before the controlled shutdown) is passed to every shard, once."""
    with _replica_manager((str(tmp_path / "a"),), 3) as (rt, seen):
        rt.deliver("replica-manager", ReplicaManagerShuttingDown(), "kafka-server")
        rt.deliver("replica-manager", ReplicaManagerShuttingDown(), "kafka-server")
        assert [r for r, b in seen if isinstance(b, ShardShuttingDown)] == ["partition-0", "partition-1", "partition-2"]
