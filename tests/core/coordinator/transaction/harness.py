"""The transaction coordinator under an actor stand-in: its effects are answered as the actor, the replica manager
and ZooKeeper would (appends go to an in-memory log per __transaction_state partition and can be held back or
failed, reads read it back), timers fire when the frozen clock passes them, markers sent are kept for the test to
answer."""

from __future__ import annotations

import time
from typing import Any

from core.api.registry import coordinator_service_of
from core.coordinator.coordinator_loader import AwaitHighWatermark, LogRead, LogStart
from core.coordinator.group.group_metadata_manager import partition_for
from core.coordinator.transaction.transaction_coordinator import TransactionCoordinator
from core.coordinator.transaction.transaction_log import read_txn_record_key, read_txn_record_value
from core.coordinator.transaction.transaction_state_manager import AppendTxnLog, ReadTxnLog, ReadTxnLogStart
from core.coordinator.transaction.txn_marker_channel_manager import SendTxnMarkers
from core.effects import Respond, Schedule
from messages.common import Broker, EndPoint, Errors, ReplicaAssignment, TopicPartition
from messages.transaction import (
    AddOffsetsToTxnRequest,
    AddPartitionsToTxnRequest,
    EndTxnRequest,
    InitProducerIdRequest,
    TransactionCoordinatorConfig,
)
from messages.zk import ZkBatch
from protocol.records import assign_offsets, iter_batches, read_records
from protocol.zk import znodes
from tests.support.fake_zookeeper import FakeZooKeeper

TXN = "txn"
T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)
PARTITIONS = 4


class _HeldError(Exception):
    pass


class Harness:
    def __init__(self, config: TransactionCoordinatorConfig | None = None,
                 log: dict[int, bytearray] | None = None, zk: FakeZooKeeper | None = None) -> None:
        self.config = config or TransactionCoordinatorConfig(transaction_log_num_partitions=PARTITIONS,
                                                             transaction_max_timeout_ms=60000)
        self.tc = TransactionCoordinator(1, self.config, lambda: time.time() * 1000, offsets_topic_num_partitions=5)
        self.partition = partition_for(TXN, PARTITIONS)
        self.log = log if log is not None else {}
        self.responses: dict[str, Any] = {}
        self.timers: dict[str, float] = {}
        self.append_error = Errors.NONE
        self.appends: list[AppendTxnLog] = []
        self.sent: list[SendTxnMarkers] = []
        self.hold = False  # hold appends and reads back (their procedure waits)
        self.held: list[tuple[Any, Any]] = []
        # a partition's high watermark below its log end (what is above is not replicated yet); absent: the log end
        self.high_watermark: dict[int, int] = {}
        self.awaiting: list[tuple[Any, AwaitHighWatermark]] = []  # loads waiting for the high watermark to move
        self._n = 0
        if zk is None:
            zk = FakeZooKeeper().create_top_level_paths()
            for b in (1, 2):
                zk.create(f"/brokers/ids/{b}", znodes.encode_broker(Broker(b, (EndPoint("127.0.0.1", 9090 + b),)),
                                                                    timestamp_ms=1))
            zk.create("/brokers/topics/t", znodes.encode_topic_assignment(
                {T0: ReplicaAssignment((1, 2)), T1: ReplicaAssignment((2, 1))}))
            zk.put_partition_state(T0, 1, (1, 2))
            zk.put_partition_state(T1, 2, (2, 1))
        self.zk = zk
        self.run(self.tc.startup())

    # -- driving -----------------------------------------------------------------------------------------------------
    def run(self, proc: Any, value: Any = None) -> None:
        try:
            effect = proc.send(value)
            while True:
                effect = proc.send(self._answer(proc, effect))
        except (StopIteration, _HeldError):
            pass

    def _answer(self, proc: Any, effect: Any) -> Any:
        if isinstance(effect, Respond):
            assert effect.reply_to not in self.responses, f"answered twice: {effect.reply_to}"
            self.responses[effect.reply_to] = effect.response
        elif isinstance(effect, Schedule):
            self.timers[effect.key] = time.time() * 1000 + effect.delay_ms
        elif isinstance(effect, ZkBatch):
            return self.zk(effect)
        elif isinstance(effect, SendTxnMarkers):
            self.sent.append(effect)
        elif isinstance(effect, (AppendTxnLog, ReadTxnLog, ReadTxnLogStart)):
            if self.hold:
                self.held.append((proc, effect))
                raise _HeldError
            return self._io(effect)
        elif isinstance(effect, AwaitHighWatermark):
            if self.hw(effect.partition) <= effect.offset:  # the fetch purgatory holds it
                self.awaiting.append((proc, effect))
                raise _HeldError
            return LogRead(Errors.NONE, b"", 0, self.leo(effect.partition), self.hw(effect.partition))
        else:
            raise AssertionError(f"unexpected effect {effect!r}")
        return None

    def _io(self, effect: Any) -> Any:
        if isinstance(effect, AppendTxnLog):
            self.appends.append(effect)
            if self.append_error is not Errors.NONE:
                return self.append_error
            buf = bytearray(effect.records)
            assign_offsets(buf, 0, self.leo(effect.partition))
            self.log.setdefault(effect.partition, bytearray()).extend(buf)
            return Errors.NONE
        if isinstance(effect, ReadTxnLogStart):
            return LogStart(Errors.NONE, 0)
        data = bytes(self.log.get(effect.partition, b""))
        out = b"".join(b.raw for b in iter_batches(data) if b.base_offset + b.last_offset_delta >= effect.offset)
        return LogRead(Errors.NONE, out, 0, self.leo(effect.partition), self.hw(effect.partition))

    def replicate(self, partition: int, high_watermark: int | None = None) -> None:
        """The followers caught up to ``high_watermark`` (the log end if None): the waiting loads are answered."""
        if high_watermark is None:
            self.high_watermark.pop(partition, None)
        else:
            self.high_watermark[partition] = high_watermark
        waiting, self.awaiting = self.awaiting, []
        for proc, _ in waiting:
            self.run(proc, LogRead(Errors.NONE, b"", 0, self.leo(partition), self.hw(partition)))

    def hw(self, partition: int) -> int:
        return self.high_watermark.get(partition, self.leo(partition))

    def release(self) -> None:
        """The held appends and reads are answered, in order."""
        self.hold = False
        held, self.held = self.held, []
        for proc, effect in held:
            self.run(proc, self._io(effect))

    def leo(self, partition: int) -> int:
        batches = list(iter_batches(bytes(self.log.get(partition, b""))))
        return batches[-1].base_offset + batches[-1].last_offset_delta + 1 if batches else 0

    def records(self, partition: int | None = None) -> list[tuple[str, Any]]:
        """The records of the partition as (transactional id, decoded value or None)."""
        p = self.partition if partition is None else partition
        return [(read_txn_record_key(r.key), None if r.value is None else read_txn_record_value(r.value))
                for b in iter_batches(bytes(self.log.get(p, b""))) for r in read_records(b)]

    def advance(self, frozen: Any, ms: float) -> None:
        """Move the clock by ``ms``, firing every timer that falls due on the way, in time order."""
        end = time.time() * 1000 + ms
        while True:
            due = sorted((t, k) for k, t in self.timers.items() if t <= end)
            if not due:
                break
            t, key = due[0]
            frozen.tick(max(t - time.time() * 1000, 0) / 1000)
            del self.timers[key]
            self.run(self.tc.on_timer(key))
        frozen.tick(max(end - time.time() * 1000, 0) / 1000)

    def elect(self, epoch: int = 5, partition: int | None = None) -> None:
        self.run(self.tc.on_election(self.partition if partition is None else partition, epoch))

    def resign(self, epoch: int = 5) -> None:
        self.run(self.tc.on_resignation(self.partition, epoch))

    # -- requests ----------------------------------------------------------------------------------------------------
    def request(self, req: Any) -> str:
        self._n += 1
        handle = f"r{self._n}"
        self.run(coordinator_service_of(req).handle(self.tc, req, handle))
        return handle

    def ask(self, req: Any) -> Any:
        return self.responses.get(self.request(req))

    def init(self, txn_id: str | None = TXN, timeout_ms: int = 10000, pid: int = -1, epoch: int = -1) -> Any:
        return self.ask(InitProducerIdRequest(txn_id, timeout_ms, pid, epoch))

    def add(self, pid: int, epoch: int, *tps: TopicPartition, txn_id: str = TXN) -> Any:
        return self.ask(AddPartitionsToTxnRequest(txn_id, pid, epoch, tps or (T0,)))

    def add_error(self, pid: int, epoch: int, *tps: TopicPartition) -> Errors:
        errors = {e for _, e in self.add(pid, epoch, *tps).errors}
        assert len(errors) == 1, errors
        return errors.pop()

    def add_offsets(self, pid: int, epoch: int, group: str) -> Errors:
        return self.ask(AddOffsetsToTxnRequest(TXN, pid, epoch, group)).error

    def end(self, pid: int, epoch: int, commit: bool = True) -> Errors:
        return self.ask(EndTxnRequest(TXN, pid, epoch, commit)).error

    def answer_markers(self, error: Errors = Errors.NONE, only: set[TopicPartition] | None = None) -> None:
        """Answer every marker request sent so far, each partition with ``error`` (or NONE for those not in
        ``only``)."""
        sent, self.sent = self.sent, []
        for s in sent:
            errors = {(m.producer_id, tp): (error if only is None or tp in only else Errors.NONE)
                      for m in s.markers for tp in m.partitions}
            self.run(self.tc.on_markers_response(s.markers, errors))

    def metadata(self, txn_id: str = TXN) -> Any:
        state = self.tc.state_manager.get_transaction_state(txn_id)
        return state if isinstance(state, Errors) or state is None else state.transaction_metadata
