"""An in-memory ZooKeeper MODEL for unit tests of the functional core, and a driver that runs a procedure on it.

`FakeZooKeeper` answers a `messages.zk.ZkBatch` as the ZkBridgeActor's executor does: one ZkOpResult per op, in
order, with ZooKeeper's codes and stats; ops of a fenced batch (``fence_version >= 0``) that write (Create, SetData,
Delete, Check, Multi, RegisterBroker) first check /controller_epoch's version and answer CONTROLLER_MOVED if it
differs (or the node is missing) — reads are never fenced. A Multi is atomic: on failure nothing is applied, the
result code is the first error, and the inner results are OK before it, the error at it, RUNTIMEINCONSISTENCY after.

`run(proc, zk)` drives a procedure like `core.effects.run_sync` and returns (result, non-ZK effects); an answer
function that returns an Exception instance has it thrown into the procedure (Kafka's ZooKeeperClientException).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import attrs

from core.effects import SendRequest
from messages.common import Broker, EndPoint, LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
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
    ZStat,
)

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
    """A dict of path → Node answering ZkBatch effects. ``session_id`` owns the ephemerals it creates."""

    def __init__(self, session_id: int = 1) -> None:
        self.nodes: dict[str, Node] = {"/": Node(None)}
        self.zxid = 0
        self.session_id = session_id
        self.batches: list[ZkBatch] = []
        # A hook to replace the answer of the next batches: each entry is an Exception (thrown into the procedure)
        # or a function batch → results (or None to answer normally).
        self.interceptors: list[Callable[[ZkBatch], Any]] = []

    # -- convenience for tests ---------------------------------------------------------------------------------------
    def create(self, path: str, data: str | None = None, make_parents: bool = True) -> None:
        r = self._apply(Create(path, data, make_parents=make_parents))
        assert r.code == OK, (path, r.code)

    def set(self, path: str, data: str) -> None:
        r = self._apply(SetData(path, data))
        assert r.code == OK, (path, r.code)

    def get(self, path: str) -> str | None:
        return self.nodes[path].data

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
        from core.controller.zk_state import encode_partition_state, topic_partition_state_path
        path = topic_partition_state_path(tp)
        data = encode_partition_state(LeaderIsrAndControllerEpoch(
            LeaderAndIsr(leader, leader_epoch, tuple(isr), zk_version), controller_epoch))
        if path not in self.nodes:
            self.create(path, data)
        node = self.nodes[path]
        node.data = data
        node.version = zk_version

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
            return self._multi(op)
        try:
            return self._do(op)
        except _OpFailedError as f:
            return ZkOpResult(f.code)

    def _do(self, op: Any) -> ZkOpResult:
        nodes = self.nodes
        if isinstance(op, GetData):
            node = nodes.get(op.path)
            if node is None:
                raise _OpFailedError(NONODE)
            return ZkOpResult(OK, data=node.data, stat=self._stat(node))
        if isinstance(op, GetChildren):
            node = nodes.get(op.path)
            if node is None:
                raise _OpFailedError(NONODE)
            return ZkOpResult(OK, children=tuple(sorted(node.children)), stat=self._stat(node))
        if isinstance(op, Exists):
            node = nodes.get(op.path)
            if node is None:
                raise _OpFailedError(NONODE)
            return ZkOpResult(OK, stat=self._stat(node))
        if isinstance(op, Check):
            node = nodes.get(op.path)
            if node is None:
                raise _OpFailedError(NONODE)
            if op.version != -1 and node.version != op.version:
                raise _OpFailedError(BADVERSION)
            return ZkOpResult(OK, stat=self._stat(node))
        if isinstance(op, Create | RegisterBroker):
            return self._create(op)
        if isinstance(op, SetData):
            node = nodes.get(op.path)
            if node is None:
                raise _OpFailedError(NONODE)
            if op.version != -1 and node.version != op.version:
                raise _OpFailedError(BADVERSION)
            self.zxid += 1
            node.data = op.data
            node.version += 1
            return ZkOpResult(OK, stat=self._stat(node))
        if isinstance(op, Delete):
            node = nodes.get(op.path)
            if node is None:
                raise _OpFailedError(NONODE)
            if op.version != -1 and node.version != op.version:
                raise _OpFailedError(BADVERSION)
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
        node = Node(data, 0, self.zxid, self.session_id if ephemeral else 0, self.zxid)
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


def sent(effects: list[Any], request_type: type | None = None, broker_id: int | None = None) -> list[SendRequest]:
    """The SendRequest effects, optionally of one request type and/or to one broker."""
    return [e for e in effects if isinstance(e, SendRequest)
            and (request_type is None or isinstance(e.request, request_type))
            and (broker_id is None or e.broker_id == broker_id)]


def broker(broker_id: int, epoch: int = 1, host: str | None = None) -> Broker:
    """A Broker with one PLAINTEXT endpoint (TestUtils.createBrokerAndEpoch)."""
    return Broker(broker_id, (EndPoint(host or f"host{broker_id}", 9092),), None, epoch)
