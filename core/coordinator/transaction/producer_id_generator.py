"""The transaction coordinator's producer ids: Kafka 2.6's ProducerIdManager (kafka.coordinator.transaction) as a
procedure over ZooKeeper effects, for the coordinator's actor (which does no blocking I/O).

Ids are handed out of a block of 1000 this coordinator claims by a conditional write of ``/latest_producer_id_block``
(the znode's codec is `protocol.zk.znodes.encode_producer_id_block`), so no id is handed out twice across the cluster;
the broker's idempotent producers draw theirs from the edge's own block (edges/producer_id_manager.py), claimed the
same way.
"""

from __future__ import annotations

import logging

from core.effects import Proc
from core.zk_client import KafkaZkClient
from messages.zk import BADVERSION, NODEEXISTS, NONODE, OK, Create, SetData
from protocol.zk import paths, znodes

log = logging.getLogger("kactor.coordinator")
LONG_MAX = 2**63 - 1


class ProducerIdsExhaustedError(RuntimeError):
    """KafkaException("Have exhausted all producerIds.")."""


class ProducerIdGenerator:
    """ProducerIdManager.generateProducerId over `KafkaZkClient` effects."""

    def __init__(self, broker_id: int, block_size: int = znodes.PRODUCER_ID_BLOCK_SIZE) -> None:
        self.broker_id = broker_id
        self.block_size = block_size
        self.zk = KafkaZkClient()
        self._next = 0
        self._end = -1  # the last id of the current block (inclusive); none claimed yet

    def generate_producer_id(self) -> Proc[int]:
        """The next id of the current block, claiming a new block when it is used up."""
        if self._next > self._end:
            self._next, self._end = yield from self._claim_new_block()
        pid = self._next
        self._next += 1
        return pid

    def _claim_new_block(self) -> Proc[tuple[int, int]]:
        """ProducerIdManager.getNewProducerIdBlock: read the latest block and its version, write the one after it
        conditionally on that version; on a lost race read again."""
        path = paths.ProducerIdBlockZNode
        while True:
            (r,) = yield from self.zk.get_data_raw([path])
            if r.code not in (OK, NONODE):
                raise RuntimeError(f"cannot read {path}: {r.code}")
            current = znodes.decode_producer_id_block(r.data) if r.code == OK else None
            if current is None:
                start = 0
            else:
                if current[2] > LONG_MAX - self.block_size:
                    raise ProducerIdsExhaustedError("Have exhausted all producerIds.")
                start = current[2] + 1
            end = start + self.block_size - 1
            data = znodes.encode_producer_id_block(self.broker_id, start, end)
            op = SetData(path, data, r.stat.version) if r.code == OK and r.stat is not None \
                else Create(path, data, make_parents=True)
            (w,) = yield from self.zk.retry_requests_until_connected([op])
            if w.code in (BADVERSION, NODEEXISTS):
                continue  # another broker claimed a block meanwhile
            if w.code != OK:
                raise RuntimeError(f"cannot write {path}: {w.code}")
            log.info("Acquired new producerId block (brokerId:%d,blockStartProducerId:%d,blockEndProducerId:%d)",
                     self.broker_id, start, end)
            return start, end
