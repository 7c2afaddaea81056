"""BlockingZk: the KafkaZkClient procedures (core.zk_client) for synchronous callers — the admin tools, `kactor
cluster`, the demo, chaos and the benchmarks — so that they read and write ZooKeeper with the same procedures, paths
and codecs as the brokers.

Each `ZkBatch` a procedure yields goes through a `ZkExecutor` on the caller's started KazooClient (pipelined,
re-sent across a connection loss, as for a broker), and the caller's thread waits for its results.
"""

from __future__ import annotations

import queue
from collections.abc import Generator
from typing import Any, TypeVar

from kazoo.client import KazooClient

from core.effects import run_sync
from core.zk_client import KafkaZkClient
from messages.zk import ZkBatch, ZkOpResult
from zk_bridge.executor import ZkExecutor

R = TypeVar("R")
DEFAULT_TIMEOUT_S = 15.0


class BlockingZk:
    """Runs core procedures against ZooKeeper from a synchronous caller. ``zk`` is the KafkaZkClient (no watches)."""

    def __init__(self, client: KazooClient, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.client = client
        self.timeout_s = timeout_s
        self.zk = KafkaZkClient()
        self._executor: ZkExecutor | None = None

    def run(self, proc: Generator[Any, Any, R]) -> R:
        """Drive ``proc`` to its end; its ZkBatch effects are answered by ZooKeeper (TimeoutError if one is not
        answered within ``timeout_s``). The procedures used here yield no other effect."""
        return run_sync(proc, self._answer)

    def _answer(self, batch: ZkBatch) -> tuple[ZkOpResult, ...]:
        if self._executor is None:
            self._executor = ZkExecutor(self.client, workers=1)
        box: queue.Queue[tuple[ZkOpResult, ...]] = queue.Queue()
        self._executor.submit(batch, box.put)
        try:
            return box.get(timeout=self.timeout_s)
        except queue.Empty:
            raise TimeoutError(f"ZooKeeper did not answer within {self.timeout_s:g} s") from None

    def close(self) -> None:
        if self._executor is not None:
            self._executor.close()
            self._executor = None

    def __enter__(self) -> BlockingZk:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def controller_id(client: KazooClient) -> int | None:
    """KafkaZkClient.getControllerId for a synchronous caller: the controller's broker id, None if there is none."""
    with BlockingZk(client) as b:
        cid = b.run(b.zk.get_controller_id())
    return cid if cid >= 0 else None
