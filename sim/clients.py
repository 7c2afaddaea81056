"""The simulated clients of `kactor sim` beside the acks=all producer (sim/client.py): an idempotent producer, acks=1
and acks=0 producers and a consumer, each speaking the internal request its Kafka request converts to, sent with
`Sim.client_request` to the actor the request's ApiSpec routes it to, and recording every answer and every read.

- `IdempotentProducer` (librdkafka's enable.idempotence=true, max.in.flight 1 per partition): gets a producer id
  with InitProducerId from a serving broker (its transaction coordinator, as KafkaApis.handleInitProducerIdRequest
  hands it on; an idempotent producer needs no coordinator lookup), then sends each record as a batch of one
  carrying the producer id, epoch and the partition's next sequence, and RE-SENDS THE SAME BATCH (same sequence, same
  bytes) after a failed connection or a retriable error until it is acknowledged, as the producer's retries do. A
  fatal answer (OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID, INVALID_PRODUCER_EPOCH) fails the batch without
  re-sending it (librdkafka raises a fatal error) and the producer starts again with a new producer id;
- `PlainProducer` (acks=1 or acks=0, no producer id, no retries): acks=1 records what the leader acknowledged (which
  a leader that crashes before its followers fetched may lose: no loss is asserted), acks=0 only what it sent;
- `SimConsumer` (a consumer's Fetch: replica id -1, READ_UNCOMMITTED, fetch.min.bytes 1, fetch.max.wait.ms 500,
  no fetch session): one fetch in flight per partition, to the leader found as the producers find it, from its
  position; every (offset, value) it reads is kept with the high watermark it was read under.

What the invariants check of them is in sim/invariants.py (`ClientChecks`).
"""

from __future__ import annotations

import random
from typing import Any

import attrs

from actors import names
from messages.common import Errors, TopicPartition
from messages.replication import FetchPartition, FetchRequest, ProducePartition, ProduceRequest
from messages.transaction import InitProducerIdRequest
from protocol.records import Record, build_batch, iter_batches
from sim.client import PRODUCE_TIMEOUT_MS, PRODUCE_VERSION, zk_partition_leader
from sim.runtime import START_MS, Sim

CONNECTION_FAILED = "connection failed"
INIT_PRODUCER_ID_VERSION = 1  # librdkafka 1.x's InitProducerId without KIP-360
FETCH_VERSION = 11
RETRY_BACKOFF_MS = 100.0  # retry.backoff.ms
FETCH_MAX_WAIT_MS = 500  # fetch.max.wait.ms
# the answers a producer retries (Kafka's RetriableException subclasses a produce can get), a failed connection too
RETRIABLE = frozenset({CONNECTION_FAILED, *(e.name for e in (
    Errors.NOT_LEADER_OR_FOLLOWER, Errors.LEADER_NOT_AVAILABLE, Errors.REQUEST_TIMED_OUT,
    Errors.NOT_ENOUGH_REPLICAS, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, Errors.UNKNOWN_TOPIC_OR_PARTITION,
    Errors.KAFKA_STORAGE_ERROR, Errors.REPLICA_NOT_AVAILABLE, Errors.COORDINATOR_LOAD_IN_PROGRESS,
    Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR, Errors.CONCURRENT_TRANSACTIONS))})
# the answers after which an idempotent producer's sequence is no longer its partition's (librdkafka: fatal)
FATAL = frozenset(e.name for e in (Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, Errors.UNKNOWN_PRODUCER_ID,
                                   Errors.INVALID_PRODUCER_EPOCH))


@attrs.frozen
class ClientAck:
    """A record a producer was told is at ``offset`` (an acks=all or acks=1 answer)."""

    tp: TopicPartition
    offset: int
    value: str
    acks: int
    answered_ms: float


@attrs.frozen
class Read:
    """A record a consumer read, with the high watermark of the answer that carried it."""

    tp: TopicPartition
    offset: int
    value: str | None
    high_watermark: int
    leader: int
    read_ms: float


@attrs.define
class InFlight:
    """An idempotent producer's batch not yet acknowledged: the same bytes go out again until it is."""

    tp: TopicPartition
    value: str
    producer_id: int
    sequence: int
    batch: bytes
    attempts: int = 0
    sent: bool = False  # a request for it is out
    retrying: bool = False  # waiting out its retry backoff


class IdempotentProducer:
    """acks=all with a producer id; ``acks`` the acknowledged records, ``answers`` every answer as (what, value or
    "", error name or CONNECTION_FAILED), ``failed`` the values of batches failed by a fatal answer."""

    def __init__(self, sim: Sim, prefix: str = "i") -> None:
        self.sim = sim
        self.prefix = prefix
        self.rng = random.Random(f"idempotent-producer-{sim.seed}")  # which broker is asked for a producer id
        self.producer_id = -1
        self.epoch = -1
        self.initializing = False
        self.sequences: dict[TopicPartition, int] = {}
        self.in_flight: dict[TopicPartition, InFlight] = {}
        self.acks: list[ClientAck] = []
        self.answers: list[tuple[str, str, str]] = []
        self.failed: list[str] = []
        self.resent = 0  # how many times a batch went out again
        self._n = 0

    # -- InitProducerId ----------------------------------------------------------------------------------------------
    def _init(self) -> None:
        serving = [b for b, br in sorted(self.sim.brokers.items()) if br.serving]
        if self.initializing or not serving:
            return
        target = self.rng.choice(serving)
        self.initializing = True
        self.sim.note(f"client {self.prefix} InitProducerId at b{target}")
        self.sim.client_request(target, InitProducerIdRequest(None, 0), INIT_PRODUCER_ID_VERSION, self._inited,
                                client_id=f"sim-{self.prefix}", route=names.TRANSACTION_COORDINATOR)

    def _inited(self, answer: object) -> None:
        self.initializing = False
        error = CONNECTION_FAILED if answer is None else answer.error.name  # type: ignore[attr-defined]
        self.answers.append(("InitProducerId", "", error))
        if answer is None or answer.error != Errors.NONE:  # type: ignore[attr-defined]
            self.sim.note(f"client {self.prefix} InitProducerId: {error}")
            return
        self.producer_id, self.epoch = answer.producer_id, answer.producer_epoch  # type: ignore[attr-defined]
        self.sequences.clear()
        self.sim.note(f"client {self.prefix} producer id {self.producer_id} epoch {self.epoch}")

    # -- Produce -----------------------------------------------------------------------------------------------------
    def produce(self, tp: TopicPartition) -> None:
        """One step's worth: a new record if the partition has none unacknowledged, else the waiting one again."""
        if self.producer_id < 0:
            self._init()
            return
        batch = self.in_flight.get(tp)
        if batch is None:
            self._n += 1
            value = f"{self.prefix}{self.sim.seed}-{self._n}"
            seq = self.sequences.get(tp, 0)
            data = build_batch([Record(0, 0, None, value.encode())], first_timestamp=int(self.sim.now),
                               producer_id=self.producer_id, producer_epoch=self.epoch, base_sequence=seq)
            batch = self.in_flight[tp] = InFlight(tp, value, self.producer_id, seq, data)
        if not batch.sent and not batch.retrying:
            self._send(batch)

    def _retry(self, batch: InFlight) -> None:
        """The same batch again after retry.backoff.ms."""
        if batch.retrying:
            return
        batch.retrying = True

        def again() -> None:
            batch.retrying = False
            self._send(batch)

        self.sim.at(RETRY_BACKOFF_MS, again)

    def _send(self, batch: InFlight) -> None:
        if self.in_flight.get(batch.tp) is not batch or batch.sent:
            return
        leader = zk_partition_leader(self.sim, batch.tp)
        if leader < 0:  # none yet: look again after the backoff (as a metadata refresh would)
            self._retry(batch)
            return
        batch.sent = True
        batch.attempts += 1
        if batch.attempts > 1:
            self.resent += 1
        self.sim.note(f"client {self.prefix} produce {batch.value} seq {batch.sequence} try {batch.attempts} "
                      f"to {batch.tp.topic}-{batch.tp.partition} at b{leader}")
        request = ProduceRequest(-1, PRODUCE_TIMEOUT_MS, (ProducePartition(batch.tp, batch.batch),))
        self.sim.client_request(leader, request, PRODUCE_VERSION, lambda answer: self._answered(batch, answer),
                                client_id=f"sim-{self.prefix}")

    def _answered(self, batch: InFlight, answer: object) -> None:
        batch.sent = False
        if answer is None:
            error, offset = CONNECTION_FAILED, -1
        else:
            part = answer.partitions[0]  # type: ignore[attr-defined]
            error, offset = part.error.name, part.base_offset
        self.answers.append(("Produce", batch.value, error))
        self.sim.note(f"client {self.prefix} {batch.value}: {error} offset {offset}")
        if error == "NONE":
            del self.in_flight[batch.tp]
            if batch.producer_id == self.producer_id:  # (one of a fatal answer's old id: its sequences are gone)
                self.sequences[batch.tp] = batch.sequence + 1
            self.acks.append(ClientAck(batch.tp, offset, batch.value, -1, self.sim.now - START_MS))
        elif error in RETRIABLE:
            self._retry(batch)
        else:
            # fatal (or unexpected): the batch fails, never sent again; a new producer id starts the sequences over
            del self.in_flight[batch.tp]
            self.failed.append(batch.value)
            if error in FATAL and batch.producer_id == self.producer_id:
                # the other partitions' batches go on under the old id until answered, as ones already sent would
                self.producer_id, self.epoch = -1, -1


class PlainProducer:
    """acks=1 or acks=0, no producer id, a record a call, never re-sent; ``acks`` what an acks=1 leader
    acknowledged, ``sent`` every (tp, value) sent, ``answers`` as IdempotentProducer's."""

    def __init__(self, sim: Sim, acks: int, prefix: str) -> None:
        assert acks in (0, 1)
        self.sim = sim
        self.acks_setting = acks
        self.prefix = prefix
        self.acks: list[ClientAck] = []
        self.sent: list[tuple[TopicPartition, str]] = []
        self.answers: list[tuple[str, str, str]] = []
        self._n = 0

    def produce(self, tp: TopicPartition) -> bool:
        leader = zk_partition_leader(self.sim, tp)
        if leader < 0:
            return False
        self._n += 1
        value = f"{self.prefix}{self.sim.seed}-{self._n}"
        batch = build_batch([Record(0, 0, None, value.encode())], first_timestamp=int(self.sim.now))
        request = ProduceRequest(self.acks_setting, PRODUCE_TIMEOUT_MS, (ProducePartition(tp, batch),))
        self.sent.append((tp, value))
        self.sim.note(f"client {self.prefix} produce {value} acks={self.acks_setting} to {tp.topic}-{tp.partition} "
                      f"at b{leader}")
        self.sim.client_request(leader, request, PRODUCE_VERSION, lambda answer: self._answered(tp, value, answer),
                                client_id=f"sim-{self.prefix}", expects=self.acks_setting != 0)
        return True

    def _answered(self, tp: TopicPartition, value: str, answer: object) -> None:
        if answer is None:
            error, offset = CONNECTION_FAILED, -1
        else:
            part = answer.partitions[0]  # type: ignore[attr-defined]
            error, offset = part.error.name, part.base_offset
        self.answers.append(("Produce", value, error))
        self.sim.note(f"client {self.prefix} {value}: {error} offset {offset}")
        if error == "NONE":
            self.acks.append(ClientAck(tp, offset, value, self.acks_setting, self.sim.now - START_MS))


class FetchingClient:
    """What a consumer's fetches share: one Fetch in flight per partition (replica id -1, fetch.min.bytes 1,
    fetch.max.wait.ms 500, no fetch session) from its position, to the leader the partition's state znode names;
    ``answers`` every answer as (what, partition, error name or CONNECTION_FAILED)."""

    def __init__(self, sim: Sim, prefix: str) -> None:
        self.sim = sim
        self.prefix = prefix
        self.positions: dict[TopicPartition, int] = {}
        self.fetching: set[TopicPartition] = set()
        self.answers: list[tuple[str, str, str]] = []

    def _send(self, tp: TopicPartition, leader: int, position: int, isolation_level: int = 0) -> None:
        self.fetching.add(tp)
        request = FetchRequest(-1, (FetchPartition(tp, position),), max_wait_ms=FETCH_MAX_WAIT_MS, min_bytes=1,
                               isolation_level=isolation_level)
        self.sim.client_request(leader, request, FETCH_VERSION,
                                lambda answer: self._answered(tp, leader, position, answer),
                                client_id=f"sim-{self.prefix}")

    def _answered(self, tp: TopicPartition, leader: int, position: int, answer: Any) -> None:
        raise NotImplementedError

    def _partition(self, tp: TopicPartition, leader: int, position: int, answer: Any) -> Any:
        """The answer's partition when it is NONE, else None (the answer recorded, an error noted)."""
        self.fetching.discard(tp)
        name = f"{tp.topic}-{tp.partition}"
        if answer is None:
            self.answers.append(("Fetch", name, CONNECTION_FAILED))
            return None
        part = answer.partitions[0]
        self.answers.append(("Fetch", name, part.error.name))
        if part.error != Errors.NONE:
            self.sim.note(f"client {self.prefix} fetch {name} at {position} from b{leader}: {part.error.name}")
            return None
        return part


class SimConsumer(FetchingClient):
    """Reads every partition from offset 0 on, and again what it read from a leader once the partition has a new
    one; ``reads`` every record read, in order."""

    def __init__(self, sim: Sim, prefix: str = "c") -> None:
        super().__init__(sim, prefix)
        # per partition: the leader last fetched from and the position it was first fetched from
        self.leaders: dict[TopicPartition, tuple[int, int]] = {}
        self.rewinds = 0
        self.reads: list[Read] = []

    def fetch(self, tp: TopicPartition) -> bool:
        if tp in self.fetching:
            return False
        leader = zk_partition_leader(self.sim, tp)
        if leader < 0:
            return False
        position = self.positions.get(tp, 0)
        last, since = self.leaders.get(tp, (leader, position))
        if last != leader:
            # a new leader: read again what the old one served (as a consumer seeking back would), so a record
            # the new leader holds otherwise is read with two values
            self.rewinds += 1
            self.sim.note(f"client {self.prefix} {tp.topic}-{tp.partition} leader b{last} -> b{leader}: reads again "
                          f"from {since}")
            since, position = position, since
            self.positions[tp] = position
        self.leaders[tp] = (leader, since)
        self._send(tp, leader, position)
        return True

    def _answered(self, tp: TopicPartition, leader: int, position: int, answer: Any) -> None:
        part = self._partition(tp, leader, position, answer)
        if part is None:
            return
        name = f"{tp.topic}-{tp.partition}"
        now = self.sim.now - START_MS
        read = 0
        for batch in iter_batches(part.records):
            if batch.is_control:
                continue
            for r in batch.records():
                offset = batch.base_offset + r.offset_delta
                if offset < position:  # a batch straddling the position: a consumer skips what is below it
                    continue
                value = None if r.value is None else r.value.decode("utf-8", "replace")
                self.reads.append(Read(tp, offset, value, part.high_watermark, leader, now))
                read += 1
            position = max(position, batch.last_offset + 1)
        self.positions[tp] = position
        if read:
            self.sim.note(f"client {self.prefix} read {read} of {name} from b{leader} to {position}")


class Clients:
    """Every simulated client besides sim/client.py's acks=all producer, driven a step at a time. A seed's cost goes
    with the actor inputs its requests cause (a produce most: the followers' fetches it wakes), so the rates are
    kept low (issue #28's 10,000 seeds in 30 minutes): the idempotent producer sends a new record to one partition a
    step (the partitions in turn; a batch being retried goes again on its own backoff), the acks=1 and acks=0
    producers one record every eighth step each (acks=1 on steps 0, 8, 16, ..., acks=0 on 4, 12, 20, ..., to the
    partitions in turn), and the consumer fetches one partition every other step (in turn: each partition every 2n
    steps, reading all that came since: a fetch reads up to 1 MB)."""

    def __init__(self, sim: Sim) -> None:
        self.sim = sim
        self.idempotent = IdempotentProducer(sim)
        self.acks1 = PlainProducer(sim, 1, "o")
        self.acks0 = PlainProducer(sim, 0, "z")
        self.consumer = SimConsumer(sim)

    def step(self, step: int, partitions: list[TopicPartition]) -> None:
        if not partitions:
            return
        n = len(partitions)
        self.idempotent.produce(partitions[step % n])
        if step % 4 == 0:  # every eighth step each (every fourth until 2026-11-27 04:30: the campaign's 30 minutes)
            (self.acks1 if step % 8 == 0 else self.acks0).produce(partitions[(step // 8) % n])
        if step % 2 == 0:
            self.consumer.fetch(partitions[(step // 2) % n])

    def answer_lists(self) -> tuple[list[tuple[str, str, str]], ...]:
        """Each client's answers (what, about, error), every one as it came."""
        return self.idempotent.answers, self.acks1.answers, self.acks0.answers, self.consumer.answers

    def waiting(self) -> bool:
        """An idempotent batch not yet acknowledged (it is being retried)."""
        return bool(self.idempotent.in_flight)
