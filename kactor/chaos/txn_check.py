"""`kactor chaos`'s Jepsen-style transactional workload (issue #40), judged by the simulator's own checker
(sim/txn_checker.py: the same `History`, `check` and `table`).

Beside the consume-transform-produce loop (kactor/chaos/txn_workload.py, whose exactly-once checks stay), while the
seed's steps run:

- ``PRODUCERS`` transactional producers (librdkafka through confluent-kafka, as real applications; one thread each,
  ``transactional.id`` ``kactor-chaos-check-<seed>-<i>``, max.in.flight.requests.per.connection 5, librdkafka's
  default) each write, in one transaction, 1-2 unique values (``s<seed>-p<i>-<n>``) to each of 2-4 partitions of
  ``TOPIC``; a third of the transactions also commit the producer's group offset (``send_offsets_to_transaction``:
  a unique, growing offset of ``TOPIC``-0, KIP-98's consume-transform-produce); about one in five is aborted on
  purpose. They reach the brokers through the runner's proxies (kactor/chaos/delay_proxy.py), whose connection
  delays are the anomalies' delayed requests, with request.timeout.ms and socket.timeout.ms ``REQUEST_TIMEOUT_MS``.
- Outcomes as the checker defines them: committed on an acknowledged commit_transaction, aborted on an acknowledged
  abort_transaction or when abandoned before a commit was asked (the coordinator aborts it: a new producer's
  InitProducerId or transaction.timeout.ms), unknown when a commit was asked and not acknowledged.
- After each InitProducerId, and at the end, each producer's group offset is read (OffsetFetch with require_stable:
  librdkafka asks so for a read_committed consumer).
- A sampler takes each partition's last stable offset and high watermark every ``SAMPLE_EVERY_S`` (ListOffsets at
  read_committed and at read_uncommitted) with the runner's "cluster whole since", for the stalled-reader check.

After the seed's heal (`finish`): the producers end their transaction in flight and stop; the sampler goes on until
every last stable offset reaches its high watermark (``STALL_BOUND_MS`` + 5 s at most); a read_committed and a
read_uncommitted reader read every partition from offset 0 to its end (offsets and values); every group's offset is
read once more (``final``). `to_history` (pure) turns it into the checker's History, with the EndTxn requests
the proxies delivered after their client had left (`stray_end_txns`): one that landed inside a later transaction of
its producer marks that transaction's anomalies known (KIP-890 part 2, as in the simulator).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from kactor.chaos.history import ErrorAnswer
from kactor.chaos.kafka_client import METADATA_REFRESH, UnknownServerErrorAnswers
from kactor.kafka_clients import close_within, error_text
from sim.txn_checker import (
    ABORTED,
    COMMITTED,
    UNKNOWN,
    Entry,
    History,
    OffsetRead,
    StableSample,
    StrayEndTxn,
    TxnWrites,
)

TOPIC = "chaos-txn-check"
CLIENT_ID_PREFIX = "kactor-chaos-check-"  # + the producer's name: its client.id
PARTITIONS = 4
PRODUCERS = 3
ABORT_SHARE = 0.2  # aborted on purpose
OFFSETS_SHARE = 1 / 3  # consume-transform-produce: the group's offset committed in the transaction
REQUEST_TIMEOUT_MS = 5000  # request.timeout.ms and socket.timeout.ms (lowered from 30 s / 60 s: the delays' scale)
TRANSACTION_TIMEOUT_MS = 10000
ABORT_INTERVAL_MS = 10000  # the brokers' transaction.abort.timed.out.transaction.cleanup.interval.ms (Kafka's default)
# an open transaction times out, the coordinator's next sweep aborts it, the markers are written (sim's bound too)
STALL_BOUND_MS = TRANSACTION_TIMEOUT_MS + ABORT_INTERVAL_MS + 5000.0
CALL_TIMEOUT_S = 30.0  # each librdkafka transactional call
COMMIT_ATTEMPTS = 3  # commit_transaction asked again after a retriable error
SAMPLE_EVERY_S = 0.5
PAUSE_S = 0.1
READ_TIMEOUT_S = 30.0

# how a transaction ended, as its producer saw it
COMMIT_ACKED, ABORT_ACKED, ABANDONED, OPEN = "commit acknowledged", "abort acknowledged", "abandoned", "open"


def _close_later(client: Any) -> None:
    """A replaced producer closed in the background: its close may wait on what it still has in flight."""
    def close() -> None:
        try:
            client.close()
        except Exception:  # noqa: BLE001 - its transaction's end raised (fenced): the new producer's to settle
            pass

    threading.Thread(target=close, name="chaos-txn-check-close", daemon=True).start()


def partition_name(partition: int) -> str:
    return f"{TOPIC}-{partition}"


def group_of(seed: int, producer: int) -> str:
    return f"kactor-chaos-check-{seed}-g{producer}"


def group_key(group: str) -> str:
    """The checker's key of a group offset: the group and the partition whose offset it commits."""
    return f"{group}/{partition_name(0)}"


@attrs.define
class TxnRecord:
    """One transaction as its producer thread lived it (mutable while it runs)."""

    producer: str
    number: int
    writes: list[tuple[str, str]] = attrs.field(factory=list)
    offsets: list[tuple[str, int]] = attrs.field(factory=list)
    commit_asked: bool = False
    end: str = OPEN
    instance_ms: float = 0.0  # when the producer instance running it was created (its InitProducerId: its epoch)
    began_ms: float = 0.0
    # when it ended for the coordinator as far as the producer knows: its end acknowledged, or (abandoned) the next
    # producer instance created (its InitProducerId bumps the epoch); None: open at the end
    ended_ms: float | None = None


def outcome(record: TxnRecord) -> str:
    """The checker's outcome: committed on an acknowledged commit, aborted on an acknowledged abort or an
    abandonment (or a transaction left open) before a commit was asked, unknown otherwise."""
    if record.end == COMMIT_ACKED:
        return COMMITTED
    if record.end == ABORT_ACKED or not record.commit_asked:
        return ABORTED
    return UNKNOWN


@attrs.frozen(slots=True)
class FinalRead:
    """A reader's log of every partition after the heal: ``entries`` (partition name, offset, value), ``ends``
    partition name → the offset it read to (its end of partition), ``high_watermarks`` the partitions' ends."""

    entries: tuple[Entry, ...]
    ends: Mapping[str, int]
    high_watermarks: Mapping[str, int] = attrs.field(factory=dict)


@attrs.frozen(slots=True)
class DeliveredEndTxn:
    """An EndTxn a proxy wrote to a broker after its client had left the connection (delay_proxy.StrayRequest),
    its times in the run's ms."""

    client_id: str
    opened_ms: float  # the connection opened
    client_gone_ms: float
    delivered_ms: float


def delivered_end_txns(strays: Iterable[Any], t0: float) -> list[DeliveredEndTxn]:
    """The proxies' EndTxn requests delivered after their client had left (delay_proxy.StrayRequest, on the
    monotonic clock) in the run's ms (``t0``: the run's start on that clock)."""
    return [DeliveredEndTxn(s.client_id, (s.opened_at - t0) * 1000, (s.client_gone_at - t0) * 1000,
                            (s.delivered_at - t0) * 1000) for s in strays if s.api == "EndTxn" and s.client_id]


def stray_end_txns(records: Iterable[TxnRecord], delivered: Iterable[DeliveredEndTxn]) -> tuple[StrayEndTxn, ...]:
    """Each delivered EndTxn that landed inside a later transaction of its producer, under the same epoch: the
    producer instance that ran the transaction had opened the connection, the client had left it (timed out, then
    retried and ended that earlier transaction) before the transaction began, and it landed while the transaction
    ran. The coordinator cannot tell it from the transaction's own EndTxn (KIP-890 part 2)."""
    records = list(records)
    out = []
    for d in delivered:
        if not d.client_id.startswith(CLIENT_ID_PREFIX):
            continue
        name = d.client_id[len(CLIENT_ID_PREFIX):]
        for r in records:
            if (r.producer == name and r.instance_ms <= d.opened_ms and d.client_gone_ms <= r.began_ms
                    <= d.delivered_ms and (r.ended_ms is None or d.delivered_ms <= r.ended_ms)):
                out.append(StrayEndTxn(f"an EndTxn {name} sent before it and gave up on", f"{name}:T{r.number}",
                                       d.delivered_ms))
    return tuple(out)


def to_history(records: Iterable[TxnRecord], committed: FinalRead, uncommitted: FinalRead,
               offset_reads: Iterable[OffsetRead], samples: Iterable[StableSample],
               unsettled: Iterable[tuple[str, str]] = (), stall_bound_ms: float = STALL_BOUND_MS,
               delivered: Iterable[DeliveredEndTxn] = ()) -> History:
    """What the workload did and read as sim/txn_checker.py's History: the read_committed reader's position is where
    it read to; a partition is complete when that is its high watermark (no transaction open there)."""
    records = list(records)
    txns = tuple(TxnWrites(r.producer, r.number, tuple(r.writes), outcome(r), tuple(r.offsets)) for r in records
                 if r.writes or r.offsets)
    hws = {**uncommitted.high_watermarks, **committed.high_watermarks}
    complete = frozenset(p for p, end in committed.ends.items() if p in hws and end >= hws[p])
    return History(txns=txns, committed=committed.entries, uncommitted=uncommitted.entries,
                   positions=dict(committed.ends), complete=complete, offset_reads=tuple(offset_reads),
                   samples=tuple(samples), stall_bound_ms=stall_bound_ms, unsettled=tuple(unsettled),
                   strays=stray_end_txns(records, delivered))


def summary(records: Iterable[TxnRecord]) -> dict[str, int]:
    """How many transactions ended each way (the checker's outcomes)."""
    out = dict.fromkeys((COMMITTED, ABORTED, UNKNOWN), 0)
    for r in records:
        if r.writes or r.offsets:
            out[outcome(r)] += 1
    return out


def _where(thread: threading.Thread) -> str:
    """The line of this module a live thread is at (the librdkafka call it waits in), for the events log."""
    import sys
    import traceback

    frame = sys._current_frames().get(thread.ident or -1)
    if frame is None:
        return "ended"
    here = [f for f in traceback.extract_stack(frame) if f.filename == __file__]
    return f"{here[-1].name}, line {here[-1].lineno}: {here[-1].line}" if here else "outside this module"


class TxnCheckWorkload:
    """The producers and the sampler as threads: ``start()``, then after the heal ``finish()`` → History.
    ``bootstrap``: the producers' (the proxies'); ``direct``: the brokers' own listener (sampler, readers, groups);
    ``healthy_since_ms()``: since when the cluster has been whole, in the run's ms (None: a fault is on);
    ``now_ms()``: the run's clock."""

    def __init__(self, bootstrap: str, direct: str, seed: int, now_ms: Callable[[], float],
                 healthy_since_ms: Callable[[], float | None], security: Mapping[str, str] | None = None,
                 producers: int = PRODUCERS) -> None:
        self.bootstrap = bootstrap
        self.direct = direct
        self.seed = seed
        self.now_ms = now_ms
        self.healthy_since_ms = healthy_since_ms
        self.security = dict(security or {})
        self.producers = producers
        self.records: list[TxnRecord] = []
        self.offset_reads: list[OffsetRead] = []
        self.samples: list[StableSample] = []
        self.errors: list[str] = []
        self.unsettled: list[tuple[str, str]] = []
        self.stuck: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sampling = threading.Event()
        self._server_errors = UnknownServerErrorAnswers()
        self._threads = [threading.Thread(target=self._produce, args=(i,), name=f"chaos-txn-check-p{i}",
                                          daemon=True) for i in range(producers)]
        self._sampler = threading.Thread(target=self._sample_loop, name="chaos-txn-check-sampler", daemon=True)

    # -- clients -----------------------------------------------------------------------------------------------------
    def error_answers(self) -> tuple[ErrorAnswer, ...]:
        return self._server_errors.answers()

    def _note(self, text: str) -> None:
        with self._lock:
            self.errors.append(f"{self.now_ms() / 1000:.1f}s {text}")

    def _producer(self, i: int) -> Any:
        from confluent_kafka import Producer

        from kactor.kafka_clients import client_config

        p = Producer(client_config(self.bootstrap, f"{CLIENT_ID_PREFIX}p{i}", {
            "transactional.id": f"kactor-chaos-check-{self.seed}-{i}",
            "transaction.timeout.ms": TRANSACTION_TIMEOUT_MS, "max.in.flight.requests.per.connection": 5,
            "request.timeout.ms": REQUEST_TIMEOUT_MS, "socket.timeout.ms": REQUEST_TIMEOUT_MS, "linger.ms": 2,
            "allow.auto.create.topics": False, **METADATA_REFRESH,
            "error_cb": self._server_errors.on_error(f"transactional producer p{i}"), **self.security}))
        p.init_transactions(CALL_TIMEOUT_S)
        return p

    def _consumer(self, client_id: str, extra: Mapping[str, Any]) -> Any:
        from confluent_kafka import Consumer

        from kactor.kafka_clients import client_config

        return Consumer(client_config(self.direct, client_id, {
            "enable.auto.commit": False, **METADATA_REFRESH, **extra,
            "error_cb": self._server_errors.on_error(client_id), **self.security}))

    def _group_consumer(self, i: int) -> Any:
        """A consumer of the producer's group, never subscribed: its group metadata for send_offsets_to_transaction,
        and its committed() for OffsetFetch (require_stable: it reads read_committed)."""
        return self._consumer(f"kactor-chaos-check-g{i}", {"group.id": group_of(self.seed, i),
                                                           "isolation.level": "read_committed"})

    def _read_offset(self, consumer: Any, i: int, final: bool, timeout_s: float = 10.0) -> str | None:
        """The group's committed offset, appended to ``offset_reads``; None, or the error it was answered."""
        from confluent_kafka import KafkaException, TopicPartition

        try:
            (tp,) = consumer.committed([TopicPartition(TOPIC, 0)], timeout=timeout_s)
        except KafkaException as e:
            return error_text(e)
        if tp.error is not None:
            return error_text(tp.error)
        with self._lock:
            self.offset_reads.append(OffsetRead(group_key(group_of(self.seed, i)), tp.offset if tp.offset >= 0
                                                else -1, final))
        return None

    # -- the run ----------------------------------------------------------------------------------------------------
    def start(self) -> TxnCheckWorkload:
        for t in self._threads:
            t.start()
        self._sampler.start()
        return self

    def _stopping(self) -> bool:
        return self._stop.is_set()

    def _produce(self, i: int) -> None:
        from confluent_kafka import KafkaException, TopicPartition

        name = f"p{i}"
        rng = random.Random(f"chaos-txn-check-{self.seed}-{i}")
        key = group_key(group_of(self.seed, i))
        producer: Any = None
        consumer: Any = None
        number = n = offset = 0
        instance_ms = 0.0
        try:
            while not self._stopping():
                try:
                    consumer = consumer or self._group_consumer(i)
                    if producer is None:
                        instance_ms = self.now_ms()
                        producer = self._producer(i)
                        with self._lock:  # what the previous instance abandoned ends with its epoch
                            for r in self.records:
                                if r.producer == name and r.ended_ms is None:
                                    r.ended_ms = self.now_ms()
                        error = self._read_offset(consumer, i, False)
                        if error is not None:
                            self._note(f"{name}: OffsetFetch after InitProducerId: {error}")
                except KafkaException as e:
                    self._note(f"{name}: set-up: {error_text(e)}")
                    self._stop.wait(1)
                    continue
                number += 1
                record = TxnRecord(name, number, instance_ms=instance_ms, began_ms=self.now_ms())
                with self._lock:
                    self.records.append(record)
                try:
                    producer.begin_transaction()
                    for p in sorted(rng.sample(range(PARTITIONS), rng.randint(2, min(4, PARTITIONS)))):
                        for _ in range(rng.randint(1, 2)):
                            n += 1
                            value = f"s{self.seed}-{name}-{n}"
                            # recorded before it is handed over: a value possibly written is the transaction's
                            record.writes.append((partition_name(p), value))
                            producer.produce(TOPIC, value=value.encode(), partition=p)
                    producer.poll(0)
                    if rng.random() < OFFSETS_SHARE:
                        offset += 1
                        record.offsets.append((key, offset))
                        producer.send_offsets_to_transaction([TopicPartition(TOPIC, 0, offset)],
                                                             consumer.consumer_group_metadata(), CALL_TIMEOUT_S)
                    if rng.random() < ABORT_SHARE:
                        producer.abort_transaction(CALL_TIMEOUT_S)
                        record.end = ABORT_ACKED
                    else:
                        record.commit_asked = True
                        self._commit(producer)
                        record.end = COMMIT_ACKED
                except (KafkaException, BufferError) as e:
                    self._note(f"{name}:T{number}: {error_text(e)}")
                    if not self._recover(producer, record, e):
                        # a new producer's InitProducerId fences this one and ends what it left
                        _close_later(producer)
                        producer = None
                if record.end != ABANDONED:
                    record.ended_ms = self.now_ms()
                self._stop.wait(PAUSE_S)
        except Exception as e:  # noqa: BLE001 - the run reports it; the checker still judges what was recorded
            self._note(f"{name} stopped: {type(e).__name__}: {e}")
        finally:
            if producer is not None:
                producer.flush(10)
            if consumer is not None:
                close_within(consumer)

    def _commit(self, producer: Any) -> None:
        """commit_transaction, asked again after a retriable error (as librdkafka's documentation says to)."""
        from confluent_kafka import KafkaException

        for attempt in range(COMMIT_ATTEMPTS):
            try:
                producer.commit_transaction(CALL_TIMEOUT_S)
                return
            except KafkaException as e:
                if not e.args[0].retriable() or attempt == COMMIT_ATTEMPTS - 1:
                    raise

    def _recover(self, producer: Any, record: TxnRecord, e: BaseException) -> bool:
        """After a failed call: abort if librdkafka says the transaction needs it or no commit was asked (True:
        the producer goes on); otherwise (fatal, or a commit whose outcome is the coordinator's) the transaction is
        abandoned and the producer replaced (False)."""
        from confluent_kafka import KafkaException

        error = e.args[0] if isinstance(e, KafkaException) and e.args else None
        if error is not None and error.fatal():
            record.end = ABANDONED
            return False
        if record.commit_asked and error is not None and not error.txn_requires_abort():
            record.end = ABANDONED
            return False
        for _ in range(2):
            try:
                producer.abort_transaction(CALL_TIMEOUT_S)
                record.end = ABORT_ACKED
                return True
            except KafkaException as a:
                self._note(f"{record.producer}:T{record.number}: abort: {error_text(a)}")
                if not a.args[0].retriable():
                    break
        record.end = ABANDONED
        return False

    # -- samples ------------------------------------------------------------------------------------------------------
    def _sample_loop(self) -> None:
        from confluent_kafka import KafkaException, TopicPartition

        rc = self._consumer("kactor-chaos-check-lso", {"group.id": "kactor-chaos-check-lso",
                                                        "isolation.level": "read_committed"})
        ru = self._consumer("kactor-chaos-check-hw", {"group.id": "kactor-chaos-check-hw",
                                                       "isolation.level": "read_uncommitted"})
        try:
            while not self._stop.is_set() or self._sampling.is_set():
                for p in range(PARTITIONS):
                    tp = TopicPartition(TOPIC, p)
                    try:
                        # the last stable offset first: the high watermark read after it is at least as far
                        lso = rc.get_watermark_offsets(tp, timeout=1.0, cached=False)[1]
                        at = self.now_ms()
                        hw = ru.get_watermark_offsets(tp, timeout=1.0, cached=False)[1]
                    except KafkaException:
                        continue  # a leader moving or down: the next round
                    with self._lock:
                        self.samples.append(StableSample(at, partition_name(p), int(lso), int(hw),
                                                         self.healthy_since_ms()))
                time.sleep(SAMPLE_EVERY_S)
        finally:
            close_within(rc)
            close_within(ru)

    def _settled(self) -> bool:
        """Every partition's last sample has its last stable offset at its high watermark."""
        with self._lock:
            last: dict[str, StableSample] = {}
            for s in self.samples:
                last[s.partition] = s
        return len(last) == PARTITIONS and all(s.last_stable_offset >= s.high_watermark for s in last.values())

    # -- after the heal -----------------------------------------------------------------------------------------------
    def stop_producers(self, join_s: float = 45.0) -> None:
        """The producers end their transaction in flight and stop (the sampler goes on until `finish`); a producer
        still inside librdkafka after ``join_s`` is left there (``stuck``), its transaction the coordinator's. Asked
        again (`finish` after the runner's stop), a producer already left there is not waited for twice (a seed
        with a stuck producer spent 45 s more in each run). Where it waits is noted: the one seen so far is
        send_offsets_to_transaction past its timeout, librdkafka's own defect (confluentinc/librdkafka#5456: the
        group coordinator request's timeout is never checked)."""
        self._sampling.set()
        self._stop.set()
        deadline = time.monotonic() + join_s
        for t in self._threads:
            if t.name in self.stuck:
                continue
            t.join(max(0.1, deadline - time.monotonic()))
            if t.is_alive():
                self.stuck.append(t.name)
                self._note(f"{t.name} still inside librdkafka after {join_s:.0f} s: {_where(t)}")

    def abandon(self) -> None:
        """Everything stopped without reading (the run is ending, checked or not)."""
        self._sampling.clear()
        self._stop.set()

    def finish(self, delivered: Callable[[], Iterable[DeliveredEndTxn]] = tuple) -> History:
        """After `stop_producers`: wait for the last stable offsets, read everything, and the checker's History
        (``delivered()``: the EndTxn requests the proxies delivered after their client had left)."""
        self.stop_producers()
        # a transaction left open (a stuck producer) is the coordinator's to abort: wait for it, sampling on
        settle_end = time.monotonic() + STALL_BOUND_MS / 1000 + 5
        while time.monotonic() < settle_end and not self._settled():
            time.sleep(SAMPLE_EVERY_S)
        self._sampling.clear()
        self._sampler.join(15)
        committed = self.read_all("read_committed")
        uncommitted = self.read_all("read_uncommitted")
        self._final_offsets()
        with self._lock:
            return to_history(list(self.records), committed, uncommitted, list(self.offset_reads),
                              list(self.samples), list(self.unsettled), delivered=delivered())

    def _final_offsets(self) -> None:
        for i in range(self.producers):
            consumer = self._group_consumer(i)
            try:
                error: str | None = "not asked"
                deadline = time.monotonic() + READ_TIMEOUT_S
                while time.monotonic() < deadline:
                    error = self._read_offset(consumer, i, True, timeout_s=5.0)
                    if error is None:
                        break
                    time.sleep(0.5)
                if error is not None:
                    self.unsettled.append((group_key(group_of(self.seed, i)), error))
            finally:
                close_within(consumer)

    def read_all(self, isolation: str, timeout_s: float = READ_TIMEOUT_S) -> FinalRead:
        """Every partition from offset 0 to its end at ``isolation`` (read_committed: the last stable offset):
        each record's offset and value, where each partition's reading ended, the high watermarks."""
        from confluent_kafka import OFFSET_BEGINNING, KafkaError, KafkaException, TopicPartition

        from kactor.kafka_clients import watermark_offsets

        consumer = self._consumer(f"kactor-chaos-check-{isolation}", {
            "group.id": f"kactor-chaos-check-{isolation}", "isolation.level": isolation,
            "enable.partition.eof": True, "auto.offset.reset": "earliest"})
        entries: list[Entry] = []
        ends: dict[str, int] = {}
        hws: dict[str, int] = {}
        try:
            deadline = time.monotonic() + timeout_s
            for p in range(PARTITIONS):
                try:
                    hws[partition_name(p)] = watermark_offsets(consumer, TopicPartition(TOPIC, p), deadline)[1]
                except KafkaException as e:
                    self._note(f"{isolation} reader: {partition_name(p)}'s high watermark: {error_text(e)}")
            consumer.assign([TopicPartition(TOPIC, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
            at_end: set[int] = set()
            while time.monotonic() < deadline and len(at_end) < PARTITIONS:
                for m in consumer.consume(num_messages=500, timeout=0.5):
                    name = partition_name(m.partition())
                    if m.error() is None:
                        entries.append(Entry(name, m.offset(), (m.value() or b"").decode(errors="replace")))
                        ends[name] = max(ends.get(name, 0), m.offset() + 1)
                        at_end.discard(m.partition())
                    elif m.error().code() == KafkaError._PARTITION_EOF:
                        ends[name] = max(ends.get(name, 0), m.offset())
                        if isolation == "read_committed" or ends[name] >= hws.get(name, 0):
                            at_end.add(m.partition())
            if len(at_end) < PARTITIONS:
                self._note(f"{isolation} reader: partitions {sorted(set(range(PARTITIONS)) - at_end)} not read to "
                           f"their end within {timeout_s:.0f} s")
        finally:
            close_within(consumer)
        return FinalRead(tuple(entries), ends, hws if isolation == "read_uncommitted" else {})


__all__ = ["ABORT_ACKED", "ABANDONED", "COMMIT_ACKED", "OPEN", "PARTITIONS", "STALL_BOUND_MS", "TOPIC", "FinalRead",
           "TxnCheckWorkload", "TxnRecord", "outcome", "summary", "to_history"]
