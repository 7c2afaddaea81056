"""Test support for the broker core: an in-memory ZooKeeper answering ZkBatch effects, and request builders."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.broker.config import BrokerSideConfig
from core.broker.partition import encode_partition_state, partition_state_path
from core.broker.replica_manager import ReplicaManager
from core.effects import Emit, Proc, run_sync
from messages.common import Broker, EndPoint, TopicPartition
from messages.requests import (
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    StopReplicaPartitionState,
    StopReplicaRequest,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
)
from messages.zk import (
    BADVERSION,
    NODEEXISTS,
    NONODE,
    OK,
    Create,
    Delete,
    Exists,
    GetChildren,
    GetData,
    SetData,
    ZkBatch,
    ZkOpResult,
    ZStat,
)


class FakeZk:
    """A tiny ZooKeeper model: data + version per path, persistent-sequential creates, conditional setData.

    ``force`` maps a path to a result code returned (once per op) instead of executing the op.
    """

    def __init__(self) -> None:
        self.nodes: dict[str, list[Any]] = {}  # path -> [data, version]
        self.seq: dict[str, int] = {}
        self.batches: list[ZkBatch] = []
        self.force: dict[str, str] = {}

    def create(self, path: str, data: str | None = None) -> None:
        self.nodes[path] = [data, 0]

    def data(self, path: str) -> str | None:
        return self.nodes[path][0]

    def version(self, path: str) -> int:
        return self.nodes[path][1]

    def children(self, parent: str) -> list[str]:
        prefix = parent.rstrip("/") + "/"
        return sorted(p[len(prefix):] for p in self.nodes if p.startswith(prefix) and "/" not in p[len(prefix):])

    def __call__(self, batch: ZkBatch) -> tuple[ZkOpResult, ...]:
        self.batches.append(batch)
        return tuple(self._op(op) for op in batch.ops)

    def _op(self, op: Any) -> ZkOpResult:
        path = op.path
        if path in self.force:
            return ZkOpResult(self.force.pop(path))
        node = self.nodes.get(path)
        if isinstance(op, GetData):
            if node is None:
                return ZkOpResult(NONODE)
            return ZkOpResult(OK, data=node[0], stat=ZStat(node[1]))
        if isinstance(op, Exists):
            return ZkOpResult(OK, stat=ZStat(node[1])) if node else ZkOpResult(NONODE)
        if isinstance(op, SetData):
            if node is None:
                return ZkOpResult(NONODE)
            if op.version != -1 and op.version != node[1]:
                return ZkOpResult(BADVERSION)
            node[0] = op.data
            node[1] += 1
            return ZkOpResult(OK, stat=ZStat(node[1]))
        if isinstance(op, Create):
            if op.sequential:
                parent = path.rsplit("/", 1)[0]
                n = self.seq.get(parent, 0)
                self.seq[parent] = n + 1
                path = f"{path}{n:010d}"
            if path in self.nodes:
                return ZkOpResult(NODEEXISTS)
            self.nodes[path] = [op.data, 0]
            return ZkOpResult(OK, path=path, stat=ZStat(0))
        if isinstance(op, Delete):
            if node is None:
                return ZkOpResult(NONODE)
            del self.nodes[path]
            return ZkOpResult(OK)
        if isinstance(op, GetChildren):
            return ZkOpResult(OK, children=tuple(self.children(path)))
        raise AssertionError(f"unsupported op {op!r}")


def drive(proc: Proc[Any], zk: FakeZk | None = None, effects: list[Any] | None = None) -> Any:
    """Run a core procedure against ``zk`` (a fresh FakeZk if None); non-ZK effects go to ``effects``."""
    return run_sync(proc, zk if zk is not None else FakeZk(), effects.append if effects is not None else None)


def settle_truncation(zk: FakeZk, leader: ReplicaManager, follower: ReplicaManager, leader_id: int,
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
    return [e.body for e in effects if isinstance(e, Emit) and (to is None or e.to == to)]


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


def seed_state_znode(zk: FakeZk, tp: TopicPartition, leader: int, leader_epoch: int, isr: Sequence[int],
                     controller_epoch: int = 0, version: int = 0) -> None:
    zk.nodes[partition_state_path(tp)] = [encode_partition_state(leader, leader_epoch, controller_epoch, isr), version]
