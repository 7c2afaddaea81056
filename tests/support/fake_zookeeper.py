"""The ZooKeeper of the unit tests of the functional core: sim.zookeeper's model (checked against the real server by
tests/sim/test_zookeeper_differential.py) behind the small interface the tests use, and a driver that runs a
procedure on it.

`FakeZooKeeper` answers a `messages.zk.ZkBatch` as the ZkBridgeActor's executor does (``ZooKeeperModel.execute``):
one ZkOpResult per op, in order, with ZooKeeper's codes and stats; ops of a fenced batch (``fence_version >= 0``)
that write run as a multi [check(/controller_epoch, fence_version), op] and answer CONTROLLER_MOVED if the version
differs (NONODE if the node is missing), reads are never fenced. A failed Multi applies nothing: the inner results
are RUNTIMEINCONSISTENCY but for the failing op's own code, which is the Multi's code.

Its one-shot watches are the model's, per session (``session_id``, the session of the procedure that runs: a test
driving several controllers sets it; a session is opened for each id on first use); every watch event fired is
appended as (session, ZkWatchEvent) to ``fired``. Failures are injected per batch (``interceptors``) or per path
(``force``).

`run(proc, zk)` drives a procedure like `core.effects.run_sync` and returns (result, non-ZK effects); an answer
function that returns an Exception instance has it thrown into the procedure (Kafka's ZooKeeperClientException).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from messages.common import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from messages.zk import OK, Create, Delete, SetData, ZkBatch, ZkOpResult, ZkWatchEvent
from protocol.zk import paths, znodes
from sim.zookeeper import Node, ZooKeeperModel

CONTROLLER_EPOCH_PATH = paths.ControllerEpochZNode
__all__ = ["FakeZooKeeper", "Node", "run"]


class FakeZooKeeper:
    """sim.zookeeper's model answering ZkBatch effects. ``session_id`` owns the ephemerals it creates and the watches
    its reads arm (a test driving several controllers sets it to the one whose procedure runs)."""

    def __init__(self, session_id: int = 1, clock: Callable[[], float] | None = None) -> None:
        # a node's ctime: the clock's milliseconds when given (tests of notification purging run under freezegun),
        # else its czxid
        self.clock = clock
        self.fired: list[tuple[int, ZkWatchEvent]] = []
        self.model = ZooKeeperModel(clock_ms=self._now_ms)
        self.model.on_watch_event = lambda sid, event: self.fired.append((sid, event))
        self.session_id = session_id
        self.batches: list[ZkBatch] = []
        # A hook to replace the answer of the next batches: each entry is an Exception (thrown into the procedure)
        # or a function batch → results (or None to answer normally).
        self.interceptors: list[Callable[[ZkBatch], Any]] = []
        # path → a result code answered once, instead of executing the next op on that path (a sequential create's
        # path is the one it asks for, before the suffix)
        self.force: dict[str, str] = {}

    def _now_ms(self) -> int:
        return int(self.clock()) if self.clock is not None else self.model.zxid

    @property
    def nodes(self) -> dict[str, Node]:
        return self.model.nodes

    @property
    def zxid(self) -> int:
        return self.model.zxid

    @property
    def data_watches(self) -> dict[str, set[int]]:
        return self.model.data_watches

    @property
    def child_watches(self) -> dict[str, set[int]]:
        return self.model.child_watches

    def _sid(self) -> int:
        if self.session_id not in self.model.sessions:
            self.model.open_session(session_id=self.session_id)
        return self.session_id

    def create_top_level_paths(self) -> FakeZooKeeper:
        """KafkaZkClient.createTopLevelPaths: the persistent paths a broker expects (ZkData's PersistentZkPaths)."""
        for path in paths.PERSISTENT_ZK_PATHS:
            if not self.exists(path):
                self.create(path)
        return self

    # -- convenience for tests ---------------------------------------------------------------------------------------
    def create(self, path: str, data: str | None = None, make_parents: bool = True, sequential: bool = False) -> str:
        """Create a znode (not recorded in ``batches``); returns its path (with a sequential node's suffix)."""
        r = self._apply(Create(path, data, make_parents=make_parents, sequential=sequential))
        assert r.code == OK, (path, r.code)
        return r.path or path

    def set(self, path: str, data: str) -> None:
        r = self._apply(SetData(path, data))
        assert r.code == OK, (path, r.code)

    def get(self, path: str) -> str | None:
        return self.nodes[path].data

    def children(self, path: str) -> list[str]:
        return sorted(self.nodes[path].children)

    def delete(self, path: str, recursive: bool = True) -> None:
        r = self._apply(Delete(path, recursive=recursive))
        assert r.code == OK, (path, r.code)

    def version(self, path: str) -> int:
        return self.nodes[path].version

    def exists(self, path: str) -> bool:
        return path in self.nodes

    def setup_controller_epoch(self, epoch: int, zk_version: int) -> None:
        """Make /controller_epoch hold ``epoch`` at data version ``zk_version``."""
        if CONTROLLER_EPOCH_PATH not in self.nodes:
            self.create(CONTROLLER_EPOCH_PATH, str(epoch))
        node = self.nodes[CONTROLLER_EPOCH_PATH]
        node.data = str(epoch)
        node.version = zk_version

    def put_partition_state(self, tp: TopicPartition, leader: int, isr: tuple[int, ...] | list[int],
                            leader_epoch: int = 0, controller_epoch: int = 1, zk_version: int = 0) -> None:
        """Create (or overwrite) a partition state znode at a given version."""
        path = paths.TopicPartitionStateZNode.path(tp)
        data = znodes.encode_partition_state(LeaderIsrAndControllerEpoch(
            LeaderAndIsr(leader, leader_epoch, tuple(isr), zk_version), controller_epoch))
        if path not in self.nodes:
            self.create(path, data)
        node = self.nodes[path]
        node.data = data
        node.version = zk_version

    def state(self, tp: TopicPartition) -> LeaderIsrAndControllerEpoch:
        """The partition state znode of ``tp``, decoded."""
        path = paths.TopicPartitionStateZNode.path(tp)
        info = znodes.decode_partition_state(self.get(path), self.version(path))
        assert info is not None
        return info

    def leader_writes_isr(self, tp: TopicPartition, isr: tuple[int, ...]) -> None:
        """A partition leader's ISR change (IBP < 2.7-IV2): same leader, epoch and controller epoch, new ISR."""
        path = paths.TopicPartitionStateZNode.path(tp)
        info = self.state(tp)
        new = LeaderIsrAndControllerEpoch(LeaderAndIsr(info.leader_and_isr.leader, info.leader_and_isr.leader_epoch,
                                                       tuple(isr), 0), info.controller_epoch)
        r = self._apply(SetData(path, znodes.encode_partition_state(new), self.version(path)))
        assert r.code == OK

    # -- the executor ------------------------------------------------------------------------------------------------
    def __call__(self, batch: ZkBatch) -> Any:
        self.batches.append(batch)
        if self.interceptors:
            hook = self.interceptors.pop(0)
            if isinstance(hook, BaseException):
                return hook
            answer = hook(batch)
            if answer is not None:
                return answer
        return tuple(self._apply_fenced(op, batch.fence_version) for op in batch.ops)

    def _apply_fenced(self, op: Any, fence_version: int) -> ZkOpResult:
        forced = self.force.pop(getattr(op, "path", None), None)
        if forced is not None:
            return ZkOpResult(forced)
        return self._apply(op, fence_version)

    def _apply(self, op: Any, fence_version: int = -1) -> ZkOpResult:
        sid = self._sid()
        [result] = self.model.execute(sid, ZkBatch((op,), fence_version))
        for session in self.model.sessions.values():
            session.events.clear()  # they are in ``fired``
        return result


def run(proc: Any, zk: Callable[[ZkBatch], Any]) -> tuple[Any, list[Any]]:
    """Drive ``proc`` to completion against ``zk``; returns (its result, the non-ZK effects in order)."""
    effects: list[Any] = []
    try:
        effect = next(proc)
        while True:
            if isinstance(effect, ZkBatch):
                answer = zk(effect)
                effect = proc.throw(answer) if isinstance(answer, BaseException) else proc.send(answer)
            else:
                effects.append(effect)
                effect = proc.send(None)
    except StopIteration as stop:
        return stop.value, effects

