"""`kactor sim --txn-check`'s workload (issue #40): several transactional producers writing unique values to 2-4
partitions a transaction, some consume-transform-produce style (their group's offsets committed in the transaction),
read_committed and read_uncommitted readers of everything, and the faults Jepsen needed to find Kafka's aborted
reads, lost writes and torn transactions — then `history()`, what sim/txn_checker.py judges.

The producers (`TxnClient`, a Java/librdkafka transactional producer as a 2.6 client drives it) speak the internal
requests their Kafka requests convert to, sent with `Sim.client_request` to the actor each request's ApiSpec routes
it to, over connections of their own (`Connection`: one per producer and broker, its own lane of the simulated
network, so two connections of one client are two TCP streams with no order between them):

- FindCoordinator(TRANSACTION) at a serving broker, InitProducerId at the coordinator (a new epoch after every
  abandoned transaction: a 2.6 application replacing its producer), then per transaction AddPartitionsToTxn of 2-4
  partitions of the ``txn`` topic, one Produce per value (1-2 values a partition, each its own batch with the
  partition's next sequence), up to MAX_IN_FLIGHT requests in flight per connection (max.in.flight.requests.per.
  connection 5, librdkafka's and Java's default), a batch answered with a retriable error or timed out sent again
  on its own after retry.backoff.ms (so out of order with the others in flight: OUT_OF_ORDER_SEQUENCE_NUMBER while
  an earlier batch of the partition is unacknowledged is retried as Java's producer does, DUPLICATE_SEQUENCE_NUMBER
  is an acknowledgement); a third of the transactions also AddOffsetsToTxn and TxnOffsetCommit the producer's group
  offset (a unique, growing offset of an input partition, KIP-98's sendOffsetsToTransaction) at the group
  coordinator (FindCoordinator(GROUP)); then EndTxn, commit seven times in ten. A batch still unacknowledged after
  BATCH_ATTEMPTS tries aborts the transaction (Java: the batch expired, an abortable error), then re-inits.
- Each request has the client's request.timeout.ms (REQUEST_TIMEOUT_MS): unanswered by then, the client fails it
  and every other request on its connection and closes the connection (NetworkClient), an answer coming later is
  dropped; the producer retries.
- After each InitProducerId the producer reads its group's committed offset (OffsetFetch, require_stable, as a
  consume-transform-produce application starting); at the end every group's is read again (``final``).

The faults, each a seeded choice of the ``txn-faults-<seed>`` stream (the seed's other streams untouched: with the
workload off, a seed's run is what it was):

- a request delayed (DELAY_SHARE of them, 0.5-12 s): the broker has read it but handles it late (its request queue,
  a stalled handler: Kafka's request channel keeps a request whose connection closed), so it lands after later
  requests of the same client on its other connections, and past its timeout, after the client gave up on it;
  requests sent behind it on its connection wait for it (Kafka reads one request of a connection at a time), and are
  lost with the connection if it closes first;
- the coordinator moving mid-commit (MOVE_SHARE of the EndTxn(commit) requests, while the cluster is healthy and no
  outage of the seed's schedule is near): the coordinator's broker crashes just after the EndTxn reaches it and its
  supervisor restarts it (as sim/faults.py's crash-restart), so the commit is completed, or not, by the next
  coordinator while the producer retries it.

The readers: `StableReader` (sim/transactions.py's read_committed consumer, each answer's last stable offset and
high watermark kept as a `StableSample`) fetches every partition every step, `sim.clients.SimConsumer` (read
uncommitted) every other step.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any

import attrs

from actors import names
from messages.common import Errors, TopicPartition
from messages.group import (
    COORDINATOR_TYPE_GROUP,
    COORDINATOR_TYPE_TRANSACTION,
    FindCoordinatorRequest,
    OffsetCommitPartition,
    OffsetFetchRequest,
    TxnOffsetCommitRequest,
)
from messages.replication import ProducePartition, ProduceRequest
from messages.topic import GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME
from messages.transaction import (
    AddOffsetsToTxnRequest,
    AddPartitionsToTxnRequest,
    EndTxnRequest,
    InitProducerIdRequest,
)
from protocol.records import TRANSACTIONAL_BIT, Record, build_batch
from sim.client import PRODUCE_TIMEOUT_MS, PRODUCE_VERSION, zk_partition_leader
from sim.clients import CONNECTION_FAILED, RETRIABLE, RETRY_BACKOFF_MS, SimConsumer
from sim.runtime import START_MS, Sim
from sim.transactions import REFIND, RETRY, ReadCommittedConsumer, add_partitions_error, answer_error, retry_or_fail
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

TOPIC = "txn"
PARTITIONS = 4
PRODUCERS = 3
MAX_IN_FLIGHT = 5  # max.in.flight.requests.per.connection
REQUEST_TIMEOUT_MS = 5000.0  # the producers' request.timeout.ms (lowered from 30 s, as latency-minded users do)
TRANSACTION_TIMEOUT_MS = 10000  # transaction.timeout.ms
ABORT_INTERVAL_MS = 10000  # the brokers' transaction.abort.timed.out.transaction.cleanup.interval.ms (Kafka's default)
# how long a partition's last stable offset may stay below its high watermark: an open transaction times out, the
# coordinator's next sweep aborts it, the markers are written, the reader's next fetch sees it (a few seconds)
STALL_BOUND_MS = TRANSACTION_TIMEOUT_MS + ABORT_INTERVAL_MS + 5000.0
BATCH_ATTEMPTS = 4  # a batch's tries before the transaction is aborted (Java: delivery.timeout.ms expired)
TXN_EVERY = 3  # a producer begins a transaction on every third step when it has none open
OFFSETS_SHARE = 1 / 3  # of the transactions: consume-transform-produce, the group's offset committed in it
COMMIT_SHARE = 0.7
DELAY_SHARE = 0.05  # of the requests: handled late by the broker
DELAY_MS = (500.0, 12000.0)
MOVE_SHARE = 0.25  # of the EndTxn(commit) requests: the coordinator's broker crashes and restarts as it handles it
MOVE_CRASH_MS = (0.6, 3.0)  # when, after the EndTxn was sent (it reaches the broker after 0.5 ms)
MOVE_RESTART_MS = (200.0, 2000.0)
VERSIONS = {"FindCoordinator": 2, "InitProducerId": 1, "AddPartitionsToTxn": 1, "AddOffsetsToTxn": 1,
            "TxnOffsetCommit": 2, "EndTxn": 1, "OffsetFetch": 7}
INPUT = TopicPartition("sim", 0)  # the input partition whose consumed offset a consume-transform-produce commits


def partition_name(tp: TopicPartition) -> str:
    return f"{tp.topic}-{tp.partition}"


@attrs.define
class Request:
    """A request awaiting its answer on a connection."""

    what: str
    on_answer: Callable[[Any], None]
    connection: Connection


@attrs.define
class Connection:
    """A producer's connection to a broker (its own lane of the simulated network): what is in flight on it, what
    waits for a slot (MAX_IN_FLIGHT), and until when a delayed request holds what is sent behind it."""

    client_id: str
    dst: int
    in_flight: dict[int, Request] = attrs.field(factory=dict)
    waiting: list[Callable[[], None]] = attrs.field(factory=list)
    held_until: float = 0.0
    closed: bool = False


@attrs.define
class Batch:
    tp: TopicPartition
    value: str
    sequence: int
    data: bytes
    attempts: int = 0
    sent: bool = False
    acked: bool = False


@attrs.define
class OpenTxn:
    number: int
    writes: list[tuple[TopicPartition, str]]
    commit: bool
    offset: int | None  # the group offset committed in it (None: a plain transaction)
    outcome: str = "open"
    commit_sent: bool = False  # an EndTxn(commit) went out (its outcome the coordinator's until answered)
    reinit: bool = False  # aborted on an abortable error: a new epoch after it (the sequences are unknown)
    producer_id: int = -1  # the producer id and epoch it ran under
    epoch: int = -1
    began_ms: float = 0.0
    # when it ended for the coordinator as far as the producer knows: its EndTxn answered, or (abandoned) the next
    # InitProducerId's answer (None: open at the end)
    ended_ms: float | None = None


class TxnClient:
    """One transactional producer (transactional.id ``sim-tx-<seed>-<i>``) and its consume-transform-produce group."""

    def __init__(self, workload: TxnWorkload, index: int) -> None:
        self.w = workload
        self.sim = workload.sim
        self.name = f"p{index}"
        self.transactional_id = f"sim-tx-{self.sim.seed}-{index}"
        self.group = f"sim-tx-group-{self.sim.seed}-{index}"
        self.rng = random.Random(f"txn-check-{self.sim.seed}-{index}")
        self.connections: dict[int, Connection] = {}
        self._conn_ids = itertools.count(1)
        self._tokens = itertools.count(1)
        self.coordinator = -1
        self.group_coordinator = -1
        self.producer_id, self.epoch = -1, -1
        self.sequences: dict[TopicPartition, int] = {}
        self.txns: list[OpenTxn] = []
        self.txn: OpenTxn | None = None
        self.phase = ""  # "add", "produce", "add-offsets", "commit-offsets", "end"
        self.batches: list[Batch] = []
        self.busy = False
        self.offset = 0  # the input offset consumed so far (each consume-transform-produce transaction adds one)
        self.offset_reads: list[OffsetRead] = []
        self.final_error = ""  # the last answer to the final OffsetFetch while it was not NONE ("": not asked)
        # every EndTxn as it reached its broker: (transaction number, producer id, epoch, when)
        self.end_txn_landings: list[tuple[int, int, int, float]] = []
        self._n = 0

    # -- connections ----------------------------------------------------------------------------------------------
    def _connection(self, dst: int) -> Connection:
        c = self.connections.get(dst)
        if c is None or c.closed:
            c = self.connections[dst] = Connection(f"sim-{self.name}-c{next(self._conn_ids)}", dst)
        return c

    def request(self, dst: int, what: str, body: Any, route: str, on_answer: Callable[[Any], None],
                version: int | None = None, on_land: Callable[[], None] | None = None) -> None:
        """``body`` to broker ``dst`` on this producer's connection to it; ``on_answer(None)`` if it times out or its
        connection fails. At most MAX_IN_FLIGHT in flight per connection (the rest wait their turn). ``on_land()``
        as it reaches the broker (after its delay, whatever the client has done meanwhile)."""
        c = self._connection(dst)
        if len(c.in_flight) >= MAX_IN_FLIGHT:
            c.waiting.append(lambda: self.request(dst, what, body, route, on_answer, version, on_land))
            return
        token = next(self._tokens)
        c.in_flight[token] = Request(what, on_answer, c)
        self.sim.at(REQUEST_TIMEOUT_MS, lambda: self._timed_out(c, token))
        v = VERSIONS.get(what, PRODUCE_VERSION) if version is None else version

        def send() -> None:
            if on_land is not None:
                on_land()
            self.sim.client_request(dst, body, v, lambda answer: self._answered(c, token, answer),
                                    client_id=c.client_id, route=route)

        now = self.sim.now
        delay = self.w.delay()
        if delay > 0:
            # read by the broker, handled late: it lands whatever becomes of the connection meanwhile
            self.sim.note(f"client {self.name} {what} to b{dst} delayed {delay:.0f} ms")
            c.held_until = max(c.held_until, now + delay)
            self.sim.at(delay, send)
        elif c.held_until > now:
            # behind a delayed request on the same connection: goes once it has landed, unless the connection closed
            self.sim.at(c.held_until - now, lambda: None if c.closed else send())
        else:
            send()

    def _answered(self, c: Connection, token: int, answer: Any) -> None:
        req = c.in_flight.pop(token, None)
        if req is None:
            return  # timed out already (or its connection closed): the client dropped it
        self._free(c)
        req.on_answer(answer)

    def _timed_out(self, c: Connection, token: int) -> None:
        req = c.in_flight.get(token)
        if req is None:
            return
        self.sim.note(f"client {self.name} {req.what} to b{c.dst} timed out: connection {c.client_id} closed")
        c.closed = True
        failed = [c.in_flight.pop(t) for t in sorted(c.in_flight)]
        c.waiting.clear()
        for r in failed:
            r.on_answer(None)

    def _free(self, c: Connection) -> None:
        while c.waiting and len(c.in_flight) < MAX_IN_FLIGHT and not c.closed:
            c.waiting.pop(0)()

    # -- the producer's state ---------------------------------------------------------------------------------------
    def idle(self) -> bool:
        return self.txn is None and not self.busy

    def step(self, step: int, partitions: list[TopicPartition]) -> None:
        if self.busy or self.txn is not None:
            return
        if self.coordinator < 0 or self.producer_id < 0:
            self._advance()
        elif step % TXN_EVERY == 0:
            self._begin(partitions)

    def _begin(self, partitions: list[TopicPartition]) -> None:
        chosen = sorted(self.rng.sample(partitions, self.rng.randint(2, min(4, len(partitions)))))
        writes = []
        for tp in chosen:
            for _ in range(self.rng.randint(1, 2)):
                self._n += 1
                writes.append((tp, f"{self.name}-{self._n}"))
        offset = None
        if self.rng.random() < OFFSETS_SHARE:
            self.offset += 1
            offset = self.offset
        commit = self.rng.random() < COMMIT_SHARE
        self.txn = OpenTxn(len(self.txns) + 1, writes, commit, offset, producer_id=self.producer_id,
                           epoch=self.epoch, began_ms=self.sim.now)
        self.txns.append(self.txn)
        self.phase = "add"
        self.sim.note(f"client {self.name} begin transaction {self.txn.number} "
                      f"({'commit' if commit else 'abort'}; {len(writes)} values)")
        self._advance()

    def _later(self, refind: bool = False) -> None:
        if refind:
            self.coordinator = -1
        self.busy = True
        self.sim.at(RETRY_BACKOFF_MS, self._advance)

    def _advance(self) -> None:
        self.busy = False
        txn = self.txn
        if self.coordinator < 0:
            self.busy = True
            self._find(COORDINATOR_TYPE_TRANSACTION, self._advance, self._later)
        elif self.producer_id < 0:
            self._coordinator("InitProducerId", InitProducerIdRequest(self.transactional_id, TRANSACTION_TIMEOUT_MS),
                              self._inited)
        elif txn is None:
            return
        elif self.phase == "add":
            self._coordinator("AddPartitionsToTxn", AddPartitionsToTxnRequest(
                self.transactional_id, self.producer_id, self.epoch, tuple(sorted({tp for tp, _ in txn.writes}))),
                self._added)
        elif self.phase == "produce":
            for b in self.batches:
                self._send(b)
        elif self.phase == "add-offsets":
            self._coordinator("AddOffsetsToTxn", AddOffsetsToTxnRequest(
                self.transactional_id, self.producer_id, self.epoch, self.group), self._offsets_added)
        elif self.phase == "commit-offsets":
            self.busy = True
            if self.group_coordinator < 0:
                self._find(COORDINATOR_TYPE_GROUP, self._advance, self._later)
                return
            request = TxnOffsetCommitRequest(self.transactional_id, self.group, self.producer_id, self.epoch,
                                             (OffsetCommitPartition(INPUT, txn.offset or 0),))
            self.request(self.group_coordinator, "TxnOffsetCommit", request, names.GROUP_COORDINATOR,
                         self._offsets_committed)
        elif self.phase == "end":
            self._end(txn)

    def _find(self, key_type: int, then: Callable[[], None], failed: Callable[[], None]) -> None:
        """FindCoordinator of the transactional id or the group at a serving broker, then ``then()`` (``failed()``
        if it could not be found)."""
        serving = [b for b, br in sorted(self.sim.brokers.items()) if br.serving]
        if not serving:
            failed()
            return
        target = self.rng.choice(serving)
        key = self.transactional_id if key_type == COORDINATOR_TYPE_TRANSACTION else self.group

        def found(answer: Any) -> None:
            if answer is None or answer.error != Errors.NONE:
                failed()
                return
            if key_type == COORDINATOR_TYPE_TRANSACTION:
                self.coordinator = answer.node_id
            else:
                self.group_coordinator = answer.node_id
            self.sim.note(f"client {self.name} {'transaction' if key_type else 'group'} coordinator b{answer.node_id}")
            then()

        self.request(target, "FindCoordinator", FindCoordinatorRequest(key, key_type, "PLAINTEXT"),
                     names.GROUP_COORDINATOR, found)

    def _coordinator(self, what: str, body: Any, on_answer: Callable[[Any], None],
                     on_land: Callable[[], None] | None = None) -> None:
        self.busy = True
        self.sim.note(f"client {self.name} {what} at b{self.coordinator}")
        self.request(self.coordinator, what, body, names.TRANSACTION_COORDINATOR, on_answer, on_land=on_land)

    def _retry_or_fail(self, what: str, error: str) -> None:
        self.sim.note(f"client {self.name} {what}: {error}")
        retry_or_fail(error, self._later, self._abandon)

    def _inited(self, answer: Any) -> None:
        error = answer_error(answer)
        if error != "NONE":
            self._retry_or_fail("InitProducerId", error)
            return
        self.busy = False
        self.producer_id, self.epoch = answer.producer_id, answer.producer_epoch
        for t in self.txns:  # what the producer abandoned ends here at the coordinator (a new epoch)
            if t.ended_ms is None:
                t.ended_ms = self.sim.now
        self.sequences.clear()
        self.sim.note(f"client {self.name} producer id {self.producer_id} epoch {self.epoch}")
        self.fetch_offsets(False)  # the application starts: where its input stands

    def _added(self, answer: Any) -> None:
        txn = self.txn
        if txn is None or self.phase != "add":
            return
        error = add_partitions_error(answer)
        if error != "NONE":
            self._retry_or_fail("AddPartitionsToTxn", error)
            return
        self.busy = False
        self.phase = "produce"
        self.batches = []
        for tp, value in txn.writes:
            seq = self.sequences.get(tp, 0)
            self.sequences[tp] = seq + 1
            data = build_batch([Record(0, 0, None, value.encode())], first_timestamp=int(self.sim.now),
                               producer_id=self.producer_id, producer_epoch=self.epoch, base_sequence=seq,
                               attributes=TRANSACTIONAL_BIT)
            self.batches.append(Batch(tp, value, seq, data))
        self._advance()

    def _offsets_added(self, answer: Any) -> None:
        if self.txn is None or self.phase != "add-offsets":
            return
        error = answer_error(answer)
        if error != "NONE":
            self._retry_or_fail("AddOffsetsToTxn", error)
            return
        self.phase = "commit-offsets"
        self._advance()

    def _offsets_committed(self, answer: Any) -> None:
        if self.txn is None or self.phase != "commit-offsets":
            return
        error = CONNECTION_FAILED if answer is None else next(
            (p.error.name for p in answer.partitions if p.error != Errors.NONE), "NONE")
        if error != "NONE":
            self.sim.note(f"client {self.name} TxnOffsetCommit: {error}")
            if error in REFIND:
                self.group_coordinator = -1
                self._later()
            elif error in RETRY or error == Errors.UNKNOWN_TOPIC_OR_PARTITION.name:
                self._later()
            else:
                self._abandon(error)
            return
        self.phase = "end"
        self._advance()

    def _end(self, txn: OpenTxn) -> None:
        if txn.commit:
            txn.commit_sent = True
            self.w.maybe_move_coordinator(self.coordinator)
        number, producer_id, epoch = txn.number, self.producer_id, self.epoch
        self._coordinator("EndTxn", EndTxnRequest(self.transactional_id, producer_id, epoch, txn.commit),
                          self._ended,
                          lambda: self.end_txn_landings.append((number, producer_id, epoch, self.sim.now)))

    def _ended(self, answer: Any) -> None:
        txn = self.txn
        if txn is None or self.phase != "end":
            return
        error = answer_error(answer)
        if error != "NONE":
            self._retry_or_fail("EndTxn", error)
            return
        txn.outcome = COMMITTED if txn.commit else ABORTED
        txn.ended_ms = self.sim.now
        self.sim.note(f"client {self.name} transaction {txn.number} {txn.outcome}")
        self.txn, self.phase, self.busy = None, "", False
        if txn.reinit:
            self.producer_id, self.epoch = -1, -1

    def _abort(self, why: str) -> None:
        """An abortable error (a batch that never got through): EndTxn(abort), then a new producer epoch."""
        txn = self.txn
        if txn is None:
            return
        self.sim.note(f"client {self.name} transaction {txn.number} aborts: {why}")
        txn.commit, txn.reinit = False, True
        self.batches = []
        self.phase = "end"
        self.sequences.clear()
        self.busy = False
        self._advance()

    def _abandon(self, error: str) -> None:
        """A fatal answer: the transaction is left to the coordinator (aborted by the next InitProducerId, unless an
        EndTxn(commit) of it went out unanswered: its outcome is then unknown) and the producer starts again."""
        txn = self.txn
        if txn is not None:
            txn.outcome = UNKNOWN if txn.commit_sent else ABORTED
            # ended_ms stays None: the coordinator has it open until the next InitProducerId bumps the epoch
            self.sim.note(f"client {self.name} transaction {txn.number} abandoned ({error}): {txn.outcome}")
        self.txn, self.phase, self.batches = None, "", []
        self.producer_id, self.epoch = -1, -1
        self._later()

    # -- Produce -----------------------------------------------------------------------------------------------------
    def _send(self, batch: Batch) -> None:
        if batch not in self.batches or batch.sent or batch.acked:
            return
        leader = zk_partition_leader(self.sim, batch.tp)
        if leader < 0:
            self.sim.at(RETRY_BACKOFF_MS, lambda: self._send(batch))
            return
        if batch.attempts >= BATCH_ATTEMPTS:
            self._abort(f"{batch.value} unacknowledged after {batch.attempts} tries")
            return
        batch.sent = True
        batch.attempts += 1
        self.sim.note(f"client {self.name} produce {batch.value} seq {batch.sequence} try {batch.attempts} to "
                      f"{partition_name(batch.tp)} at b{leader}")
        # a transactional producer's Produce names its transactional.id (ProduceRequest v3+), which the leader's
        # transaction verification (KIP-890 part 1) asks the coordinator about
        request = ProduceRequest(-1, PRODUCE_TIMEOUT_MS, (ProducePartition(batch.tp, batch.data),),
                                 self.transactional_id)
        self.request(leader, "Produce", request, names.REPLICA_MANAGER, lambda a: self._produced(batch, a))

    def _produced(self, batch: Batch, answer: Any) -> None:
        batch.sent = False
        if batch not in self.batches:
            return  # of a transaction ended or abandoned since
        error = CONNECTION_FAILED if answer is None else answer.partitions[0].error.name
        self.sim.note(f"client {self.name} {batch.value}: {error}")
        if error in ("NONE", Errors.DUPLICATE_SEQUENCE_NUMBER.name):
            batch.acked = True
            if all(b.acked for b in self.batches):
                self.batches = []
                self.phase = "add-offsets" if self.txn is not None and self.txn.offset is not None else "end"
                self._advance()
        elif error in RETRIABLE or (error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER.name and any(
                b.tp == batch.tp and b.sequence < batch.sequence and not b.acked for b in self.batches)):
            # Java's producer retries a batch whose predecessor is still unacknowledged (it went out of order)
            self.sim.at(RETRY_BACKOFF_MS, lambda: self._send(batch))
        else:
            self._abandon(error)

    # -- the group's committed offset --------------------------------------------------------------------------------
    def fetch_offsets(self, final: bool) -> None:
        """OffsetFetch (require_stable) of the group's input partition at its coordinator, recorded; the final one
        is asked again until answered, one at start-up is advisory (dropped on an error: the producer moves on)."""
        if final and not self.final_error:
            self.final_error = "no answer"
        def again() -> None:
            if final:
                self.sim.at(RETRY_BACKOFF_MS, lambda: self.fetch_offsets(True))

        if self.group_coordinator < 0:
            self._find(COORDINATOR_TYPE_GROUP, lambda: self.fetch_offsets(final), again)
            return
        request = OffsetFetchRequest(self.group, (INPUT,), require_stable=True)

        def fetched(answer: Any) -> None:
            part = None if answer is None or answer.error != Errors.NONE or not answer.partitions \
                else answer.partitions[0]
            error = CONNECTION_FAILED if answer is None else (answer.error if part is None else part.error).name
            if error != "NONE" or part is None:
                if error in REFIND:
                    self.group_coordinator = -1
                if final:
                    self.final_error = error
                again()  # unstable (a transaction of the group open), loading, or the coordinator moved
                return
            self.offset_reads.append(OffsetRead(f"{self.group}/{partition_name(INPUT)}", part.offset, final))
            self.sim.note(f"client {self.name} group offset {part.offset}{' (final)' if final else ''}")

        self.request(self.group_coordinator, "OffsetFetch", request, names.GROUP_COORDINATOR, fetched)

    def final_offset_read(self) -> bool:
        return any(r.final for r in self.offset_reads)

    def final_offset_unanswered(self) -> bool:
        """The final OffsetFetch asked and not answered NONE yet (it is asked again meanwhile)."""
        return bool(self.final_error) and not self.final_offset_read()

    def stray_end_txns(self) -> list[StrayEndTxn]:
        """Each EndTxn that reached the coordinator while a later transaction of the producer ran under the same
        producer id and epoch (delayed past its timeout, or a retry's first copy): the coordinator cannot tell it
        from that transaction's own, and ends that one (KIP-890 part 2's case)."""
        out = []
        for number, producer_id, epoch, at in self.end_txn_landings:
            for t in self.txns:
                if (t.number > number and (t.producer_id, t.epoch) == (producer_id, epoch) and t.began_ms <= at
                        and (t.ended_ms is None or at <= t.ended_ms)):
                    out.append(StrayEndTxn(f"{self.name}:T{number}'s EndTxn", f"{self.name}:T{t.number}",
                                           at - self.w.started_ms))
        return out

    def writes(self) -> list[TxnWrites]:
        out = []
        for t in self.txns:
            outcome = t.outcome if t.outcome in (COMMITTED, ABORTED, UNKNOWN) else (
                UNKNOWN if t.commit_sent else ABORTED)
            offsets = ((f"{self.group}/{partition_name(INPUT)}", t.offset),) if t.offset is not None else ()
            out.append(TxnWrites(self.name, t.number, tuple((partition_name(tp), v) for tp, v in t.writes), outcome,
                                 offsets))
        return out


class StableReader(ReadCommittedConsumer):
    """The read_committed consumer, every NONE answer's last stable offset and high watermark kept."""

    def __init__(self, sim: Sim, prefix: str = "rc") -> None:
        super().__init__(sim, prefix)
        self.samples: list[StableSample] = []

    def _answered(self, tp: TopicPartition, leader: int, position: int, answer: Any) -> None:
        before = len(self.answers)
        super()._answered(tp, leader, position, answer)
        if len(self.answers) > before and self.answers[-1][2] == "NONE" and tp in self.stable:
            lso, hw = self.stable[tp]
            healthy = self.sim.last_fault_ms - START_MS if self.sim.healthy() else None
            self.samples.append(StableSample(self.sim.now - START_MS, partition_name(tp), lso, hw, healthy))


class TxnWorkload:
    """The producers, the two readers and the faults, a step at a time; ``quiet()`` (from sim/run.py): whether a
    coordinator may be moved now (the cluster healthy, no outage of the seed's schedule near)."""

    def __init__(self, sim: Sim, partitions: list[TopicPartition], quiet: Callable[[], bool] = lambda: False) -> None:
        self.sim = sim
        self.started_ms = sim.now  # the run's start: what the checker's times count from
        self.partitions = partitions
        self.quiet = quiet
        self.faults = random.Random(f"txn-faults-{sim.seed}")
        self.producers = [TxnClient(self, i) for i in range(PRODUCERS)]
        self.committed = StableReader(sim)
        self.uncommitted = SimConsumer(sim, "ru")
        self.delays = 0
        self.moves = 0
        self.complete: frozenset[TopicPartition] = frozenset()

    def delay(self) -> float:
        """A request's seeded lateness (0: none)."""
        if self.faults.random() >= DELAY_SHARE:
            return 0.0
        self.delays += 1
        return round(self.faults.uniform(*DELAY_MS), 3)

    def maybe_move_coordinator(self, coordinator: int) -> None:
        """Mid-commit: the coordinator's broker crashes as it handles the EndTxn, and is started again."""
        if self.faults.random() >= MOVE_SHARE or coordinator < 0 or not self.quiet():
            return
        broker = self.sim.brokers[coordinator]
        crash_at = round(self.faults.uniform(*MOVE_CRASH_MS), 3)
        restart = round(self.faults.uniform(*MOVE_RESTART_MS), 3)
        self.moves += 1
        sim = self.sim

        def crash() -> None:
            if broker.up and not broker.paused:
                sim.crash(coordinator, reason="crash (the transaction coordinator, mid-commit)")
                sim.at(restart, lambda: None if broker.up else sim.start(coordinator))

        sim.at(crash_at, crash)

    def end_faults(self) -> None:
        """No more coordinator moves (the run's steps are over: the cluster heals and settles)."""
        self.quiet = lambda: False

    def step(self, step: int) -> None:
        for p in self.producers:
            p.step(step, self.partitions)
        for tp in self.partitions:
            self.committed.fetch(tp)
            if step % 2 == 0:
                self.uncommitted.fetch(tp)

    def idle(self) -> bool:
        return all(p.idle() for p in self.producers)

    def finish(self, most_ms: float = STALL_BOUND_MS + 5000.0, every_ms: float = 100.0) -> None:
        """After the run: the producers end what they have open, both readers read every partition to its end and
        every group's offset is read (``most_ms`` at most: a hanging transaction holds the read_committed reader,
        which is the checker's to report)."""
        start, end = self.sim.now, self.sim.now + most_ms
        self.end_faults()
        asked = False
        # a final OffsetFetch still unanswered at the end gets the time of a delayed request and a retry: asked late
        # (a producer busy until then), it may have drawn a delay (seed 1430: 11.4 s, asked 4 s before the end).
        # A run that ends before ``end`` (every seed that passes) is as it was.
        grace_end = end + REQUEST_TIMEOUT_MS + DELAY_MS[1]
        while self.sim.now < end or (self.sim.now < grace_end
                                     and any(p.final_offset_unanswered() for p in self.producers)):
            idle = self.idle()
            if idle and not asked:
                for p in self.producers:
                    p.fetch_offsets(True)
                asked = True
            done = [tp for tp in self.partitions if self.committed.at_end(tp, start)]
            if asked and len(done) == len(self.partitions) and all(p.final_offset_read() for p in self.producers):
                break
            for tp in self.partitions:
                if tp not in done:
                    self.committed.fetch(tp)
                self.uncommitted.fetch(tp)
            limit = end if self.sim.now < end else grace_end
            self.sim.run_for(min(every_ms, limit - self.sim.now))
        self.complete = frozenset(tp for tp in self.partitions if self.committed.at_end(tp, start))

    def summary(self) -> str:
        """What the workload did, one line."""
        txns = [t for p in self.producers for t in p.txns]
        by = {o: sum(1 for t in txns if t.outcome == o) for o in (COMMITTED, ABORTED, UNKNOWN)}
        return (f"{len(txns)} transactions ({by[COMMITTED]} committed, {by[ABORTED]} aborted, {by[UNKNOWN]} unknown, "
                f"{sum(1 for t in txns if t.offset is not None)} with offsets), {self.delays} requests delayed, "
                f"{self.moves} coordinator moves, {len(self.committed.reads)} read_committed reads")

    def history(self) -> History:
        rc = tuple(Entry(partition_name(r.tp), r.offset, r.value) for r in self.committed.reads if r.value is not None)
        ru = tuple(Entry(partition_name(r.tp), r.offset, r.value) for r in self.uncommitted.reads
                   if r.value is not None)
        return History(
            txns=tuple(t for p in self.producers for t in p.writes()), committed=rc, uncommitted=ru,
            positions={partition_name(tp): self.committed.positions.get(tp, 0) for tp in self.partitions},
            complete=frozenset(partition_name(tp) for tp in self.complete),
            offset_reads=tuple(r for p in self.producers for r in p.offset_reads),
            samples=tuple(self.committed.samples), stall_bound_ms=STALL_BOUND_MS,
            unsettled=tuple((f"{p.group}/{partition_name(INPUT)}", p.final_error) for p in self.producers
                            if p.final_offset_unanswered()),
            strays=tuple(s for p in self.producers for s in p.stray_end_txns()),
            power_losses=self._power_losses())

    def _power_losses(self) -> tuple[tuple[str, str], ...]:
        """The checked partitions and the coordinators' logs whose sole ISR member lost power (or came back on a new
        disk), the first time."""
        out: dict[str, str] = {}
        internal = {TopicPartition(TRANSACTION_STATE_TOPIC_NAME, 0), TopicPartition(GROUP_METADATA_TOPIC_NAME, 0)}
        for at, b, what, alone in getattr(self.sim, "sole_isr_losses", ()):
            for tp in sorted(tp for tp in alone if tp in self.partitions or tp in internal):
                out.setdefault(partition_name(tp),
                               f"b{b} {what} at {(at - self.started_ms) / 1000:.1f} s as its sole ISR member")
        return tuple(sorted(out.items()))


__all__ = ["PARTITIONS", "STALL_BOUND_MS", "TOPIC", "TxnClient", "TxnWorkload"]
