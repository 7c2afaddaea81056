"""PartitionActor: ShardShuttingDown sets its ReplicaManager's isShuttingDown (ReplicaManager.begin_shutdown) at
once, as KafkaServer.shutdown sets the AtomicBoolean it shares with its ReplicaManager."""

from __future__ import annotations

from pathlib import Path

from actors.clock import ManualClock
from actors.replica_manager_actor import ReplicaManagerActor
from actors.runtime import Runtime
from messages.broker_lifecycle import ReplicaManagerInit
from messages.partition import ReplicaManagerShuttingDown
from tests.support.actors import Sink


def test_every_shard_begins_its_shutdown(tmp_path: Path) -> None:
    rt = Runtime("broker-0", clock=ManualClock(1_000.0))
    try:
        for name in ("kafka-server", "timer", "zk", "metrics", "net"):
            rt.spawn(Sink, name)
        rt.spawn(ReplicaManagerActor, "replica-manager")
        rt.deliver("replica-manager", ReplicaManagerInit(0, (str(tmp_path / "a"),), partition_actors=3), "edge:process")
        shards = [rt.instances[f"partition-{i}"] for i in range(3)]
        assert [s.rm.is_shutting_down for s in shards] == [False] * 3
        rt.deliver("replica-manager", ReplicaManagerShuttingDown(), "kafka-server")
        assert [s.rm.is_shutting_down for s in shards] == [True] * 3
    finally:
        rt.shutdown()
