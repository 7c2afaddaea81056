"""The one in-memory ZooKeeper MODEL of the unit tests of the functional core, and a driver that runs a procedure on it.

`FakeZooKeeper` answers a `messages.zk.ZkBatch` as the ZkBridgeActor's executor does: one ZkOpResult per op, in
order, with ZooKeeper's codes and stats; ops of a fenced batch (``fence_version >= 0``) that write (Create, SetData,
Delete, Check, Multi, RegisterBroker) first check /controller_epoch's version and answer CONTROLLER_MOVED if it
differs (or the node is missing) — reads are never fenced. A Multi is atomic: on failure nothing is applied, the
result code is the first error, and the inner results are OK before it, the error at it, RUNTIMEINCONSISTENCY after.

It keeps ZooKeeper's one-shot watches per session (``session_id``): a read with watch=True arms one (GetData on an
existing node / Exists on any node: a data watch; GetChildren: a child watch) and the writes that trigger it append
(session, ZkWatchEvent) to ``fired``. Failures are injected per batch (``interceptors``) or per path (``force``).

`run(proc, zk)` drives a procedure like `core.effects.run_sync` and returns (result, non-ZK effects); an answer
function that returns an Exception instance has it thrown into the procedure (Kafka's ZooKeeperClientException).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import attrs

from messages.common import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from messages.zk import (
    BADVERSION,
    CONTROLLER_MOVED,
    NODEEXISTS,
    NONODE,
    NOTEMPTY,
    OK,
    RUNTIMEINCONSISTENCY,
    Check,
    Create,
    Delete,
    Exists,
    GetChildren,
    GetData,
    Multi,
    RegisterBroker,
    SetData,
    ZkBatch,
    ZkOpResult,
    ZkWatchEvent,
    ZStat,
)
from zk_bridge import paths, znodes

CONTROLLER_EPOCH_PATH = "/controller_epoch"
_WRITES = (Create, SetData, Delete, Check, Multi, RegisterBroker)


@attrs.define
class Node:
    data: str | None
    version: int = 0
    czxid: int = 0
    ephemeral_owner: int = 0
    ctime: int = 0
    children: set[str] = attrs.field(factory=set)
    seq: int = 0  # next sequential-child counter (ZooKeeper's cversion-based suffix)


class _OpFailedError(Exception):
    def __init__(self, code: str) -> None:
        self.code = code


class FakeZooKeeper:
    """A dict of path → Node answering ZkBatch effects. ``session_id`` owns the ephemerals it creates and the watches
    its reads arm (a test driving several controllers sets it to the one whose procedure runs)."""

    def __init__(self, session_id: int = 1, clock: Callable[[], float] | None = None) -> None:
        self.nodes: dict[str, Node] = {"/": Node(None)}
        self.zxid = 0
        self.session_id = session_id
        # a node's ctime: the clock's milliseconds when given (tests of notification purging run under freezegun),
        # else its czxid
        self.clock = clock
        self.batches: list[ZkBatch] = []
        # A hook to replace the answer of the next batches: each entry is an Exception (thrown into the procedure)
        # or a function batch → results (or None to answer normally).
        self.interceptors: list[Callable[[ZkBatch], Any]] = []
        # path → a result code answered once, instead of executing the next op on that path (a sequential create's
        # path is the one it asks for, before the suffix)
        self.force: dict[str, str] = {}
        self.data_watches: dict[str, set[int]] = {}
        self.child_watches: dict[str, set[int]] = {}
        self.fired: list[tuple[int, ZkWatchEvent]] = []

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
        if fence_version >= 0 and isinstance(op, _WRITES):
            epoch = self.nodes.get(CONTROLLER_EPOCH_PATH)
            if epoch is None or epoch.version != fence_version:
                return ZkOpResult(CONTROLLER_MOVED)
        return self._apply(op)

    def _stat(self, node: Node) -> ZStat:
        return ZStat(node.version, node.czxid, node.ephemeral_owner, node.ctime, len(node.children))

    @staticmethod
    def _parent(path: str) -> str:
        parent = path.rsplit("/", 1)[0]
        return parent or "/"

    def _apply(self, op: Any) -> ZkOpResult:
        if isinstance(op, Multi):
            result = self._multi(op)
        else:
            try:
                result = self._do(op)
            except _OpFailedError as f:
                result = ZkOpResult(f.code)
        self._arm(op, result)
        if result.code == OK:
            if isinstance(op, Multi):
                for inner in op.ops:
                    self._fire_for(inner, None)
            else:
                self._fire_for(op, result)
        return result

    # -- watches -----------------------------------------------------------------------------------------------------
    def _arm(self, op: Any, result: ZkOpResult) -> None:
        if not getattr(op, "watch", False):
            return
        if isinstance(op, Exists) or (isinstance(op, GetData) and result.code == OK):
            self.data_watches.setdefault(op.path, set()).add(self.session_id)
        elif isinstance(op, GetChildren) and result.code == OK:
            self.child_watches.setdefault(op.path, set()).add(self.session_id)

    def _fire(self, path: str, kind: str) -> None:
        table = self.child_watches if kind == "CHILD" else self.data_watches
        for session in sorted(table.pop(path, set())):
            self.fired.append((session, ZkWatchEvent(path, kind)))

    def _fire_for(self, op: Any, result: ZkOpResult | None) -> None:
        if isinstance(op, Create | RegisterBroker):
            path = result.path if result is not None and result.path else op.path
            self._fire(path, "CREATED")
            self._fire(self._parent(path), "CHILD")
        elif isinstance(op, SetData):
            self._fire(op.path, "CHANGED")
        elif isinstance(op, Delete):
            for p in [p for p in list(self.data_watches) if p == op.path or p.startswith(op.path + "/")]:
                self._fire(p, "DELETED")
            for p in [p for p in list(self.child_watches) if p.startswith(op.path + "/")]:
                self._fire(p, "CHILD")
            self._fire(op.path, "CHILD")
            self._fire(self._parent(op.path), "CHILD")

    def _node(self, path: str, version: int = -1) -> Node:
        """The node at ``path`` (NONODE if none), at data version ``version`` unless -1 (BADVERSION if not)."""
        node = self.nodes.get(path)
        if node is None:
            raise _OpFailedError(NONODE)
        if version != -1 and node.version != version:
            raise _OpFailedError(BADVERSION)
        return node

    def _do(self, op: Any) -> ZkOpResult:
        if isinstance(op, GetData):
            node = self._node(op.path)
            return ZkOpResult(OK, data=node.data, stat=self._stat(node))
        if isinstance(op, GetChildren):
            node = self._node(op.path)
            return ZkOpResult(OK, children=tuple(sorted(node.children)), stat=self._stat(node))
        if isinstance(op, Exists):
            return ZkOpResult(OK, stat=self._stat(self._node(op.path)))
        if isinstance(op, Check):
            return ZkOpResult(OK, stat=self._stat(self._node(op.path, op.version)))
        if isinstance(op, Create | RegisterBroker):
            return self._create(op)
        if isinstance(op, SetData):
            node = self._node(op.path, op.version)
            self.zxid += 1
            node.data = op.data
            node.version += 1
            return ZkOpResult(OK, stat=self._stat(node))
        if isinstance(op, Delete):
            node = self._node(op.path, op.version)
            if node.children and not op.recursive:
                raise _OpFailedError(NOTEMPTY)
            self.zxid += 1
            self._delete_tree(op.path)
            return ZkOpResult(OK)
        raise TypeError(f"unknown ZooKeeper op {op!r}")

    def _create(self, op: Create | RegisterBroker) -> ZkOpResult:
        nodes = self.nodes
        ephemeral = True if isinstance(op, RegisterBroker) else op.ephemeral
        path = op.path
        if isinstance(op, RegisterBroker) and path in nodes:
            existing = nodes[path]
            if existing.ephemeral_owner == self.session_id:
                return ZkOpResult(OK, path=path, stat=self._stat(existing))
            raise _OpFailedError(NODEEXISTS)
        parent = self._parent(path)
        if parent not in nodes:
            if isinstance(op, Create) and op.make_parents:
                stack = []
                p = parent
                while p not in nodes:
                    stack.append(p)
                    p = self._parent(p)
                for p in reversed(stack):
                    self._add_node(p, None, False)
            else:
                raise _OpFailedError(NONODE)
        if isinstance(op, Create) and op.sequential:
            pnode = nodes[parent]
            path = f"{path}{pnode.seq:010d}"
        if path in nodes:
            raise _OpFailedError(NODEEXISTS)
        node = self._add_node(path, op.data, ephemeral)
        return ZkOpResult(OK, path=path, stat=self._stat(node))

    def _add_node(self, path: str, data: str | None, ephemeral: bool) -> Node:
        self.zxid += 1
        ctime = int(self.clock()) if self.clock is not None else self.zxid
        node = Node(data, 0, self.zxid, self.session_id if ephemeral else 0, ctime)
        self.nodes[path] = node
        parent = self.nodes[self._parent(path)]
        parent.children.add(path.rsplit("/", 1)[1])
        parent.seq += 1
        return node

    def _delete_tree(self, path: str) -> None:
        node = self.nodes.pop(path)
        for child in list(node.children):
            self._delete_tree(f"{path}/{child}" if path != "/" else f"/{child}")
        parent = self.nodes.get(self._parent(path))
        if parent is not None:
            parent.children.discard(path.rsplit("/", 1)[1])

    def _multi(self, op: Multi) -> ZkOpResult:
        saved = (copy.deepcopy(self.nodes), self.zxid)
        results: list[ZkOpResult] = []
        for i, inner in enumerate(op.ops):
            try:
                results.append(self._do(inner))
            except _OpFailedError as f:
                self.nodes, self.zxid = saved
                inner_results = [ZkOpResult(OK)] * i + [ZkOpResult(f.code)]
                inner_results += [ZkOpResult(RUNTIMEINCONSISTENCY)] * (len(op.ops) - i - 1)
                return ZkOpResult(f.code, results=tuple(inner_results))
        return ZkOpResult(OK, results=tuple(results))


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

