"""Test support for the broker core: request builders, a ReplicaManager on temp dirs, a driver of its procedures."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from actors.core_effects import routes
from core.broker.config import BrokerSideConfig
from core.broker.replica_manager import ReplicaManager
from core.effects import Proc, Respond, run_sync
from kactor.records import read_records, read_values, values_batch
from messages.common import Broker, EndPoint, TopicPartition
from messages.replication import ProducePartition, ProduceRequest
from messages.requests import (
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    StopReplicaPartitionState,
    StopReplicaRequest,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
)
from tests.support.fake_zookeeper import FakeZooKeeper


def broker_zk() -> FakeZooKeeper:
    """The ZooKeeper a broker starts against: Kafka's persistent top-level paths exist."""
    return FakeZooKeeper().create_top_level_paths()


def drive(proc: Proc[Any], zk: FakeZooKeeper | None = None, effects: list[Any] | None = None) -> Any:
    """Run a core procedure against ``zk`` (a fresh broker_zk() if None); non-ZK effects go to ``effects``."""
    return run_sync(proc, zk if zk is not None else broker_zk(), effects.append if effects is not None else None)


def settle_truncation(zk: FakeZooKeeper, leader: ReplicaManager, follower: ReplicaManager, leader_id: int,
                      now_ms: float) -> int:
    """Run the follower's truncation against ``leader`` to the end: OffsetsForLeaderEpoch requests answered by the
    leader's core until no partition fetched from it is truncating. Returns the number of round trips."""
    rounds = 0
    while (request := follower.epoch_request_for(leader_id)) is not None:
        response = drive(leader.handle_offsets_for_leader_epoch(request, now_ms), zk)
        drive(follower.handle_epoch_response(leader_id, response, now_ms), zk)
        rounds += 1
    return rounds


def emitted(effects: Sequence[Any], to: str | None = None) -> list[Any]:
    """What ``effects`` deliver to the actor ``to`` (to anyone if None) as the actors route them
    (actors/core_effects.py); a Respond goes to its reply handle."""
    out: list[Any] = []
    for e in effects:
        delivered = ((e.reply_to, e.response),) if isinstance(e, Respond) else routes(e) or ()
        out.extend(body for name, body in delivered if to is None or name == to)
    return out


def produce_request(tp: TopicPartition, *values: str, acks: int = 1, timeout_ms: int = 30000) -> ProduceRequest:
    """A ProduceRequest of one batch of ``values`` for ``tp``."""
    return ProduceRequest(acks, timeout_ms, (ProducePartition(tp, values_batch(values)),))


def log_values(log: Any, start: int = 0, end: int | None = None) -> tuple[str, ...]:
    """The values of a Log's records from ``start`` (to ``end``), as text."""
    return read_values(log.read(start, 1 << 30, end))


def log_records(log: Any, start: int = 0) -> list[tuple[int, int, str]]:
    """(offset, leader epoch, value) of a Log's records from ``start``."""
    return read_records(log.read(start, 1 << 30))


def broker(broker_id: int) -> Broker:
    return Broker(broker_id, (EndPoint(f"host{broker_id}", 9092 + broker_id),))


def lai_state(tp: TopicPartition, leader: int, leader_epoch: int, isr: Sequence[int], replicas: Sequence[int],
              controller_epoch: int = 0, zk_version: int = 0, is_new: bool = False) -> LeaderAndIsrPartitionState:
    return LeaderAndIsrPartitionState(tp, controller_epoch, leader, leader_epoch, tuple(isr), zk_version,
                                      tuple(replicas), is_new=is_new)


def lai_request(states: Sequence[LeaderAndIsrPartitionState], controller_epoch: int = 0, broker_epoch: int = -1,
                live: Sequence[int] = (0, 1, 2)) -> LeaderAndIsrRequest:
    return LeaderAndIsrRequest(0, controller_epoch, broker_epoch, tuple(states), tuple(broker(b) for b in live))


def um_request(states: Sequence[UpdateMetadataPartitionState] = (), live: Sequence[int] = (0, 1, 2),
               controller_epoch: int = 0, controller_id: int = 0, broker_epoch: int = -1) -> UpdateMetadataRequest:
    return UpdateMetadataRequest(controller_id, controller_epoch, broker_epoch, tuple(states),
                                 tuple(broker(b) for b in live))


def um_state(tp: TopicPartition, leader: int, isr: Sequence[int], replicas: Sequence[int], leader_epoch: int = 0,
             controller_epoch: int = 0) -> UpdateMetadataPartitionState:
    return UpdateMetadataPartitionState(tp, controller_epoch, leader, leader_epoch, tuple(isr), 0, tuple(replicas))


def stop_request(states: Sequence[tuple[TopicPartition, int, bool]], controller_epoch: int = 0,
                 broker_epoch: int = -1) -> StopReplicaRequest:
    return StopReplicaRequest(0, controller_epoch, broker_epoch,
                              tuple(StopReplicaPartitionState(tp, e, d) for tp, e, d in states))


def make_rm(tmp_path: Any, broker_id: int = 0, now_ms: float = 0, n_dirs: int = 1, **config: Any) -> ReplicaManager:
    dirs = tuple(str(tmp_path / f"b{broker_id}-logs{i}") for i in range(n_dirs))
    rm = ReplicaManager(BrokerSideConfig(broker_id, dirs, **config), now_ms)
    drive(rm.handle_update_metadata(um_request(), now_ms))  # all brokers 0..2 alive
    return rm
