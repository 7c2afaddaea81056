"""The data plane of a chaos run behind one small interface: produce with acks=all, read committed records.

`DataClient` is what the runner uses; `KactorDataClient` speaks kactor's transport (a ProduceRequest of one record
batch / a consumer's FetchRequest to the leader's replica-manager, the leader found in ZooKeeper as a Kafka client
learns it from a Metadata response). A client for Kafka's binary protocol can take its place without touching the
runner.
"""

from __future__ import annotations

from typing import Protocol

from kazoo.client import KazooClient

from actors import names
from kactor.admin.admin_zk import AdminZkClient
from messages.common import NO_LEADER, Errors, TopicPartition


class ProduceError(Exception):
    """Not acknowledged: no leader, unreachable, timed out or an error answer (the records may or may not be in
    the log; nothing is expected of them)."""


class DataClient(Protocol):
    def produce(self, topic: str, partition: int, values: tuple[str, ...]) -> int:
        """Append ``values`` with acks=all; the offset of the first (they are at consecutive offsets).
        ProduceError unless the cluster acknowledged them."""

    def read(self, topic: str, partition: int, offset: int) -> tuple[tuple[str, ...], int]:
        """(records from ``offset`` below the leader's high watermark, that high watermark), as a consumer's
        fetch sees them; ((), -1) when the partition cannot be read now."""

    def close(self) -> None: ...


class KactorDataClient:
    """DataClient over kactor's transport; its own ZooKeeper session for the leader look-ups."""

    def __init__(self, zookeeper: str, timeout_s: float = 5.0) -> None:
        self.timeout_s = timeout_s
        self._zk = KazooClient(hosts=zookeeper, timeout=10.0)
        self._zk.start(timeout=15)
        self._admin = AdminZkClient(self._zk)

    def _leader(self, tp: TopicPartition) -> tuple[int, str, int]:
        state = self._admin.get_topic_partition_state(tp)
        if state is None or state.leader_and_isr.leader == NO_LEADER:
            raise ProduceError(f"{tp.topic}-{tp.partition} has no leader")
        leader = state.leader_and_isr.leader
        for broker in self._admin.get_all_brokers_in_cluster():
            if broker.id == leader:
                ep = broker.endpoints[0]
                return leader, ep.host, ep.port
        raise ProduceError(f"leader {leader} of {tp.topic}-{tp.partition} is not registered")

    def _request(self, tp: TopicPartition, body: object) -> object:
        from edges.transport import TransportError, request

        try:
            _, host, port = self._leader(tp)
            return request(host, port, names.REPLICA_MANAGER, body, self.timeout_s)
        except TransportError as e:
            raise ProduceError(str(e)) from None
        except Exception as e:  # noqa: BLE001 - ZooKeeper reconnecting, a znode mid-change: not acknowledged
            raise ProduceError(f"{type(e).__name__}: {e}") from None

    def produce(self, topic: str, partition: int, values: tuple[str, ...]) -> int:
        from kactor.records import values_batch
        from messages.replication import ProducePartition, ProduceRequest, ProduceResponse

        tp = TopicPartition(topic, partition)
        request = ProduceRequest(-1, int(self.timeout_s * 1000), (ProducePartition(tp, values_batch(values)),))
        answer = self._request(tp, request)
        if not isinstance(answer, ProduceResponse) or len(answer.partitions) != 1:
            raise ProduceError(f"{topic}-{partition}: {answer}")
        result = answer.partitions[0]
        if result.error != Errors.NONE:
            raise ProduceError(f"{topic}-{partition}: {result.error}")
        return result.base_offset

    def read(self, topic: str, partition: int, offset: int) -> tuple[tuple[str, ...], int]:
        from kactor.records import read_records
        from messages.replication import FetchPartition, FetchRequest, FetchResponse

        tp = TopicPartition(topic, partition)
        values: list[str] = []
        hw = -1
        while True:  # fetches of at most partition_max_bytes each, up to the high watermark
            try:
                answer = self._request(tp, FetchRequest(-1, (FetchPartition(tp, offset),)))
            except ProduceError:
                return (), -1
            if not isinstance(answer, FetchResponse) or len(answer.partitions) != 1:
                return (), -1
            data = answer.partitions[0]
            if data.error != Errors.NONE:
                return (), -1
            hw = data.high_watermark  # every record read so far is below it
            # a fetch returns whole batches: the first may begin before ``offset``
            fetched = [(o, v) for o, _, v in read_records(data.records) if o >= offset]
            if not fetched:
                return tuple(values), hw
            for o, v in fetched:
                if o != offset:
                    return tuple(values), hw  # not contiguous (cannot happen in a log): stop at what is certain
                values.append(v)
                offset += 1

    def close(self) -> None:
        self._zk.stop()
        self._zk.close()
