"""ProducerIdManager: unique producer ids for idempotent producers, claimed from ZooKeeper in blocks of 1000, as Kafka
2.6's ``kafka.coordinator.transaction.ProducerIdManager``.

Every broker claims its own block by a conditional write of ``/latest_producer_id_block`` (both ends inclusive, Kafka's
JSON, `zk_bridge.znodes.encode_producer_id_block`), so no id is handed out twice across the cluster, and hands ids out
of it without touching ZooKeeper until it is used up. An edge: it blocks on its own kazoo session, from the thread of
the request that needs an id (InitProducerId, answered by the admin handler).
"""

from __future__ import annotations

import logging
import threading

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from zk_bridge import paths, znodes

log = logging.getLogger("kactor.producer_id")
LONG_MAX = 2**63 - 1


class ProducerIdsExhaustedError(RuntimeError):
    """KafkaException("Have exhausted all producerIds.")."""


class ProducerIdManager:
    """kafka.coordinator.transaction.ProducerIdManager over a started KazooClient. The first block is claimed on the
    first request (Kafka claims it in the constructor, at broker startup; here the broker does not wait for ZooKeeper
    to start serving)."""

    def __init__(self, zk: KazooClient, broker_id: int, block_size: int = znodes.PRODUCER_ID_BLOCK_SIZE) -> None:
        self.zk = zk
        self.broker_id = broker_id
        self.block_size = block_size
        self._lock = threading.Lock()
        self._block: tuple[int, int] | None = None  # (block_start, block_end) of this broker's current block
        self._next = -1

    def generate_producer_id(self) -> int:
        """ProducerIdManager.generateProducerId: the next id of the current block, claiming a new block when it is
        used up."""
        with self._lock:
            if self._block is None or self._next > self._block[1]:
                self._block = self._claim_new_block()
                self._next = self._block[0]
            pid = self._next
            self._next += 1
            return pid

    def _claim_new_block(self) -> tuple[int, int]:
        """ProducerIdManager.getNewProducerIdBlock: read the latest block and its version, write the one after it
        conditionally on that version; on a lost race read again."""
        path = paths.ProducerIdBlockZNode
        while True:
            try:
                raw, stat = self.zk.get(path)
                version: int | None = stat.version
            except NoNodeError:
                raw, version = None, None
            current = znodes.decode_producer_id_block(raw.decode("utf-8") if raw else None)
            if current is None:
                start = 0
            else:
                if current[2] > LONG_MAX - self.block_size:
                    raise ProducerIdsExhaustedError("Have exhausted all producerIds.")
                start = current[2] + 1
            end = start + self.block_size - 1
            data = znodes.encode_producer_id_block(self.broker_id, start, end).encode("utf-8")
            try:
                if version is None:
                    self.zk.create(path, data, makepath=True)
                else:
                    self.zk.set(path, data, version)
            except (BadVersionError, NodeExistsError):
                continue  # another broker claimed a block meanwhile
            break
        log.info("Acquired new producerId block (brokerId:%d,blockStartProducerId:%d,blockEndProducerId:%d)",
                 self.broker_id, start, end)
        return start, end
