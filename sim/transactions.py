"""`kactor sim`'s transactions (issue #28 Build items 5 and 6): a transactional producer and a read_committed consumer,
each speaking the internal requests their Kafka requests convert to, sent with `Sim.client_request` to the actor the
request's ApiSpec routes it to, and `TxnChecks`, the invariants on what they did (called from sim/invariants.py's
Checker beside ClientChecks).

- `TxnProducer` (librdkafka's transactional producer, transactional.id ``sim-txn-<seed>``, one record per partition
  per transaction): FindCoordinator(TRANSACTION) at a serving broker (the group coordinator actor answers it), then
  InitProducerId(transactional id) at the coordinator, then per transaction AddPartitionsToTxn, one Produce per
  partition (a transactional batch with the producer id, epoch and the partition's next sequence, the same bytes
  re-sent until acknowledged) and EndTxn, commit or abort as its own seeded stream decides. Retriable answers
  (CONCURRENT_TRANSACTIONS, COORDINATOR_LOAD_IN_PROGRESS, a produce's NOT_LEADER_OR_FOLLOWER, ...) are retried after
  retry.backoff.ms; NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE and a failed connection to the coordinator look the
  coordinator up again first (librdkafka's coordinator re-query). A fatal answer (INVALID_PRODUCER_EPOCH: fenced,
  e.g. by the coordinator aborting a timed-out transaction; INVALID_PRODUCER_ID_MAPPING, INVALID_TXN_STATE,
  OUT_OF_ORDER_SEQUENCE_NUMBER, ...) abandons the transaction and starts again with InitProducerId, which bumps the
  epoch and has the coordinator abort whatever the old epoch left open — as an application replacing its producer.
- `ReadCommittedConsumer` (a consumer's Fetch at isolation_level 1, READ_COMMITTED): one fetch in flight per
  partition, to the leader the state znode names, from its position; it drops what Java's Fetcher drops
  (PartitionRecords.nextFetchedRecord): a transactional batch of a producer the answer's aborted_transactions list
  names as aborted from an offset at or below the batch (until that producer's abort marker), and every control
  batch. Every record it keeps is recorded with the last stable offset and high watermark of its answer.

Both run on the seeds `transactional(seed)` picks (TXN_SHARE of them, a stream of its own), which alone have
`__transaction_state` (sim/run.py `create_transaction_state_topic`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import attrs

from actors import names
from messages.common import Errors, TopicPartition
from messages.group import COORDINATOR_TYPE_TRANSACTION, FindCoordinatorRequest
from messages.replication import ProducePartition, ProduceRequest
from messages.transaction import AddPartitionsToTxnRequest, EndTxnRequest, InitProducerIdRequest
from protocol.records import TRANSACTIONAL_BIT, Record, batch_end_txn_marker, build_batch, iter_batches
from sim.client import PRODUCE_TIMEOUT_MS, PRODUCE_VERSION, zk_partition_leader
from sim.clients import CONNECTION_FAILED, RETRIABLE, RETRY_BACKOFF_MS, FetchingClient
from sim.runtime import START_MS, Sim

FIND_COORDINATOR_VERSION = 2
INIT_PRODUCER_ID_VERSION = 1
ADD_PARTITIONS_VERSION = 1
END_TXN_VERSION = 1
READ_COMMITTED = 1
TRANSACTION_TIMEOUT_MS = 60000  # librdkafka's transaction.timeout.ms
TXN_EVERY = 5  # a transaction begins on every fifth step (when none is open)
# the share of seeds with transactions (their own stream): `__transaction_state`'s partition (its replicas fetched by
# another partition actor than the topic's: +26 %) and the transactions (+20 %) add about half of a seed's inputs
# (+46 % over seeds 1-20 x 50 steps with every seed transactional), so a seventh of the seeds (1,443 of 1-10,000)
# keeps the campaign's cost near +7 %
TXN_SHARE = 1 / 16
# a record value any of the sim's producers writes ("<prefix><seed>-<n>"): a control record's value is not one
VALUE = re.compile(r"[a-z]+\d+-\d+")
# the answers after which the coordinator must be looked up again (librdkafka: a coordinator re-query)
REFIND = frozenset({CONNECTION_FAILED, Errors.NOT_COORDINATOR.name, Errors.COORDINATOR_NOT_AVAILABLE.name})
# the coordinator's answers that are retried as they are (after the backoff)
RETRY = frozenset({Errors.CONCURRENT_TRANSACTIONS.name, Errors.COORDINATOR_LOAD_IN_PROGRESS.name,
                   Errors.UNKNOWN_TOPIC_OR_PARTITION.name, Errors.REQUEST_TIMED_OUT.name})
# EndTxn answers given before the coordinator writes anything (TransactionCoordinator.handleEndTransaction's checks)
REFUSED_UNWRITTEN = frozenset({"NONE", Errors.INVALID_PRODUCER_EPOCH.name, Errors.INVALID_TXN_STATE.name,
                               Errors.CONCURRENT_TRANSACTIONS.name, Errors.COORDINATOR_LOAD_IN_PROGRESS.name,
                               Errors.INVALID_PRODUCER_ID_MAPPING.name})

OPEN, COMMITTED, ABORTED, UNKNOWN = "open", "committed", "aborted", "unknown"


def answer_error(answer: Any) -> str:
    """A coordinator answer's error name; CONNECTION_FAILED for no answer (the connection broke or timed out)."""
    return CONNECTION_FAILED if answer is None else answer.error.name


def add_partitions_error(answer: Any) -> str:
    """AddPartitionsToTxn's one error for the client (librdkafka's): the first partition's error that is not
    OPERATION_NOT_ATTEMPTED (Kafka's answer for the partitions beside the one that failed), else NONE."""
    if answer is None:
        return CONNECTION_FAILED
    return next((e.name for _, e in answer.errors if e != Errors.NONE and e != Errors.OPERATION_NOT_ATTEMPTED),
                "NONE")


def retry_or_fail(error: str, later: Callable[[bool], None], fail: Callable[[str], None]) -> None:
    """What a transactional client does with a coordinator's error (librdkafka's rd_kafka_txn_* handlers): look the
    coordinator up again (REFIND), ask again after the backoff (RETRY), or give up on the producer (``fail``)."""
    if error in REFIND:
        later(True)
    elif error in RETRY:
        later(False)
    else:
        fail(error)


def transactional(seed: int) -> bool:
    """Whether the seed runs transactions (and has `__transaction_state`): a draw of its own stream."""
    return random.Random(f"txn-share-{seed}").random() < TXN_SHARE


@attrs.define
class Txn:
    """One transaction: its records (one per partition, in the order written), what the producer asks at its end,
    and its outcome as the producer knows it. A transaction abandoned on a fatal answer is aborted by the coordinator
    (only EndTxn(commit) commits, and each one sent was refused) unless an EndTxn(commit) went out without an answer
    that refuses it before any write (`REFUSED_UNWRITTEN`): it may have been applied, so its outcome is UNKNOWN."""

    number: int
    producer_id: int
    epoch: int
    commit: bool
    records: dict[TopicPartition, str]
    outcome: str = OPEN
    # an EndTxn(commit) of it went out and was not refused before any write (its connection failed, or the
    # coordinator's append of PrepareCommit failed: Kafka answers NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE, yet
    # the record may have reached the followers, and a coordinator loading it then completes the commit)
    commit_unanswered: bool = False


@attrs.define
class TxnBatch:
    """A transactional batch not yet acknowledged: the same bytes go out again until it is."""

    tp: TopicPartition
    value: str
    sequence: int
    batch: bytes
    sent: bool = False
    acked: bool = False


@attrs.frozen
class TxnRead:
    """A record the read_committed consumer kept, with its answer's last stable offset and high watermark."""

    tp: TopicPartition
    offset: int
    value: str | None
    last_stable_offset: int
    high_watermark: int
    leader: int
    read_ms: float


class TxnProducer:
    """``txns`` every transaction begun, ``answers`` every answer as (what, about, error name or CONNECTION_FAILED)."""

    def __init__(self, sim: Sim, prefix: str = "t") -> None:
        self.sim = sim
        self.prefix = prefix
        self.transactional_id = f"sim-txn-{sim.seed}"
        self.rng = random.Random(f"txn-{sim.seed}")  # its own stream: the coordinator asked, commit or abort
        self.coordinator = -1
        self.producer_id, self.epoch = -1, -1
        self.sequences: dict[TopicPartition, int] = {}
        self.txns: list[Txn] = []
        self.txn: Txn | None = None
        self.phase = ""  # of the open transaction: "add", "produce", "end"
        self.batches: dict[TopicPartition, TxnBatch] = {}
        self.busy = False  # a coordinator request out, or its backoff running
        self.answers: list[tuple[str, str, str]] = []
        self._n = 0

    def idle(self) -> bool:
        """No transaction open and none being set up: every partition's last stable offset can reach its HW."""
        return self.txn is None and not self.busy and self.producer_id >= 0

    def step(self, step: int, partitions: list[TopicPartition]) -> None:
        if self.busy or self.txn is not None:
            return  # the open transaction goes on as its answers come
        if self.coordinator < 0 or self.producer_id < 0:
            self._advance()
        elif step % TXN_EVERY == 0 and partitions:
            self._begin(partitions)

    # -- the coordinator's requests -------------------------------------------------------------------------------
    def _begin(self, partitions: list[TopicPartition]) -> None:
        records = {}
        for tp in partitions:
            self._n += 1
            records[tp] = f"{self.prefix}{self.sim.seed}-{self._n}"
        commit = self.rng.random() < 0.7
        self.txn = Txn(len(self.txns) + 1, self.producer_id, self.epoch, commit, records)
        self.txns.append(self.txn)
        self.phase = "add"
        self.sim.note(f"client {self.prefix} begin transaction {self.txn.number} ({'commit' if commit else 'abort'})")
        self._advance()

    def _advance(self) -> None:
        """The next request the producer's state calls for."""
        self.busy = False
        if self.coordinator < 0:
            self._find()
        elif self.producer_id < 0:
            self._request("InitProducerId", InitProducerIdRequest(self.transactional_id, TRANSACTION_TIMEOUT_MS),
                          INIT_PRODUCER_ID_VERSION, self._inited)
        elif self.txn is None:
            return
        elif self.phase == "add":
            request = AddPartitionsToTxnRequest(self.transactional_id, self.producer_id, self.epoch,
                                                tuple(self.txn.records))
            self._request("AddPartitionsToTxn", request, ADD_PARTITIONS_VERSION, self._added)
        elif self.phase == "produce":
            for batch in self.batches.values():
                self._send(batch)
        elif self.phase == "end":
            request = EndTxnRequest(self.transactional_id, self.producer_id, self.epoch, self.txn.commit)
            self._request("EndTxn", request, END_TXN_VERSION, self._ended)

    def _later(self, refind: bool = False) -> None:
        """The same step again after retry.backoff.ms (the coordinator looked up again first if ``refind``)."""
        if refind:
            self.coordinator = -1
        self.busy = True
        self.sim.at(RETRY_BACKOFF_MS, self._advance)

    def _find(self) -> None:
        serving = [b for b, br in sorted(self.sim.brokers.items()) if br.serving]
        if not serving:
            self._later()
            return
        target = self.rng.choice(serving)
        self.busy = True
        request = FindCoordinatorRequest(self.transactional_id, COORDINATOR_TYPE_TRANSACTION, "PLAINTEXT")
        self.sim.client_request(target, request, FIND_COORDINATOR_VERSION, self._found,
                                client_id=f"sim-{self.prefix}", route=names.GROUP_COORDINATOR)

    def _found(self, answer: Any) -> None:
        error = answer_error(answer)
        self.answers.append(("FindCoordinator", self.transactional_id, error))
        if error != "NONE":
            self.sim.note(f"client {self.prefix} FindCoordinator: {error}")
            self._later()
            return
        self.coordinator = answer.node_id
        self.sim.note(f"client {self.prefix} coordinator b{self.coordinator}")
        self._advance()

    def _request(self, what: str, request: Any, version: int, on_answer: Any) -> None:
        self.busy = True
        self.sim.note(f"client {self.prefix} {what} at b{self.coordinator}")
        self.sim.client_request(self.coordinator, request, version, on_answer, client_id=f"sim-{self.prefix}",
                                route=names.TRANSACTION_COORDINATOR)

    def _retry_or_fail(self, what: str, error: str) -> None:
        self.sim.note(f"client {self.prefix} {what}: {error}")
        retry_or_fail(error, self._later, self._fenced)

    def _inited(self, answer: Any) -> None:
        error = answer_error(answer)
        self.answers.append(("InitProducerId", self.transactional_id, error))
        if error != "NONE":
            self._retry_or_fail("InitProducerId", error)
            return
        self.busy = False
        self.producer_id, self.epoch = answer.producer_id, answer.producer_epoch
        self.sequences.clear()
        self.sim.note(f"client {self.prefix} producer id {self.producer_id} epoch {self.epoch}")

    def _added(self, answer: Any) -> None:
        error = add_partitions_error(answer)
        self.answers.append(("AddPartitionsToTxn", str(self.txn.number if self.txn else ""), error))
        if self.txn is None or self.phase != "add":
            return
        if error != "NONE":
            self._retry_or_fail("AddPartitionsToTxn", error)
            return
        self.busy = False
        self.phase = "produce"
        for tp, value in self.txn.records.items():
            seq = self.sequences.get(tp, 0)
            data = build_batch([Record(0, 0, None, value.encode())], first_timestamp=int(self.sim.now),
                               producer_id=self.producer_id, producer_epoch=self.epoch, base_sequence=seq,
                               attributes=TRANSACTIONAL_BIT)
            self.batches[tp] = TxnBatch(tp, value, seq, data)
        self._advance()

    def _ended(self, answer: Any) -> None:
        error = answer_error(answer)
        txn = self.txn
        self.answers.append(("EndTxn", str(txn.number if txn else ""), error))
        if txn is None or self.phase != "end":
            return
        if txn.commit and error not in REFUSED_UNWRITTEN:
            txn.commit_unanswered = True
        if error != "NONE":
            self._retry_or_fail("EndTxn", error)
            return
        txn.outcome = COMMITTED if txn.commit else ABORTED
        self.sim.note(f"client {self.prefix} transaction {txn.number} {txn.outcome}")
        self.txn, self.phase, self.busy = None, "", False

    def _fenced(self, error: str) -> None:
        """A fatal answer: the open transaction is abandoned (the coordinator aborts it, unless an EndTxn(commit) of it
        went unanswered: then its outcome is the coordinator's) and a new InitProducerId starts the producer again."""
        txn = self.txn
        if txn is not None:
            txn.outcome = UNKNOWN if txn.commit_unanswered else ABORTED
            self.sim.note(f"client {self.prefix} transaction {txn.number} abandoned ({error}): {txn.outcome}")
        self.txn, self.phase, self.batches = None, "", {}
        self.producer_id, self.epoch = -1, -1
        self._later()

    # -- Produce --------------------------------------------------------------------------------------------------
    def _send(self, batch: TxnBatch) -> None:
        if self.batches.get(batch.tp) is not batch or batch.sent or batch.acked:
            return
        leader = zk_partition_leader(self.sim, batch.tp)
        if leader < 0:
            self.sim.at(RETRY_BACKOFF_MS, lambda: self._send(batch))
            return
        batch.sent = True
        self.sim.note(f"client {self.prefix} produce {batch.value} seq {batch.sequence} to "
                      f"{batch.tp.topic}-{batch.tp.partition} at b{leader}")
        request = ProduceRequest(-1, PRODUCE_TIMEOUT_MS, (ProducePartition(batch.tp, batch.batch),))
        self.sim.client_request(leader, request, PRODUCE_VERSION, lambda answer: self._produced(batch, answer),
                                client_id=f"sim-{self.prefix}")

    def _produced(self, batch: TxnBatch, answer: Any) -> None:
        batch.sent = False
        error = CONNECTION_FAILED if answer is None else answer.partitions[0].error.name
        self.answers.append(("Produce", batch.value, error))
        if self.batches.get(batch.tp) is not batch:
            return  # of an abandoned transaction
        self.sim.note(f"client {self.prefix} {batch.value}: {error}")
        if error == "NONE":
            batch.acked = True
            self.sequences[batch.tp] = batch.sequence + 1
            if all(b.acked for b in self.batches.values()):
                self.batches, self.phase = {}, "end"
                self._advance()
        elif error in RETRIABLE:
            self.sim.at(RETRY_BACKOFF_MS, lambda: self._send(batch))
        else:
            self._fenced(error)


class ReadCommittedConsumer(FetchingClient):
    """Reads every partition from offset 0 on at READ_COMMITTED; ``reads`` every record kept, ``positions`` and
    ``stable`` (the last answer's last stable offset and high watermark) per partition."""

    def __init__(self, sim: Sim, prefix: str = "r") -> None:
        super().__init__(sim, prefix)
        self.stable: dict[TopicPartition, tuple[int, int]] = {}
        self.answered_ms: dict[TopicPartition, float] = {}  # when a fetch of the partition was last answered NONE
        self.reads: list[TxnRead] = []

    def at_end(self, tp: TopicPartition, since: float) -> bool:
        """Answered since ``since`` with its position at the last stable offset, which is the high watermark."""
        lso, hw = self.stable.get(tp, (-1, -2))
        return self.answered_ms.get(tp, -1.0) >= since and lso == hw and self.positions.get(tp, 0) >= hw

    def fetch(self, tp: TopicPartition) -> bool:
        if tp in self.fetching:
            return False
        leader = zk_partition_leader(self.sim, tp)
        if leader < 0:
            return False
        self._send(tp, leader, self.positions.get(tp, 0), READ_COMMITTED)
        return True

    def _answered(self, tp: TopicPartition, leader: int, position: int, answer: Any) -> None:
        part = self._partition(tp, leader, position, answer)
        if part is None:
            return
        name = f"{tp.topic}-{tp.partition}"
        now = self.sim.now - START_MS
        # Fetcher.PartitionRecords: the aborted transactions by first offset, the producers aborted so far
        aborted = sorted(part.aborted_transactions or (), key=lambda a: a.first_offset)
        aborted_producers: set[int] = set()
        read = 0
        for batch in iter_batches(part.records):
            if batch.last_offset < position:
                continue
            if batch.producer_id >= 0:
                while aborted and aborted[0].first_offset <= batch.last_offset:
                    aborted_producers.add(aborted.pop(0).producer_id)
                if batch.is_control:
                    marker = batch_end_txn_marker(batch)
                    if marker is not None and marker.is_abort:
                        aborted_producers.discard(batch.producer_id)
                elif batch.is_transactional and batch.producer_id in aborted_producers:
                    position = batch.last_offset + 1  # an aborted transaction's batch: skipped whole
                    continue
            if not batch.is_control:
                for r in batch.records():
                    offset = batch.base_offset + r.offset_delta
                    if offset < position:
                        continue
                    value = None if r.value is None else r.value.decode("utf-8", "replace")
                    self.reads.append(TxnRead(tp, offset, value, part.last_stable_offset, part.high_watermark,
                                              leader, now))
                    read += 1
            position = max(position, batch.last_offset + 1)
        self.positions[tp] = position
        self.stable[tp] = (part.last_stable_offset, part.high_watermark)
        self.answered_ms[tp] = self.sim.now
        if read:
            self.sim.note(f"client {self.prefix} read_committed {read} of {name} from b{leader} to {position}")


class Transactions:
    """The transactional producer and the read_committed consumer, driven a step at a time: the producer begins a
    transaction (a record to every partition) every TXN_EVERY steps when none is open, the consumer fetches one
    partition every other step (odd steps, the partitions in turn: sim/clients.py's consumer has the even ones)."""

    def __init__(self, sim: Sim) -> None:
        self.sim = sim
        self.producer = TxnProducer(sim)
        self.consumer = ReadCommittedConsumer(sim)

    def step(self, step: int, partitions: list[TopicPartition]) -> None:
        if not partitions:
            return
        self.producer.step(step, partitions)
        if step % 2 == 1:
            self.consumer.fetch(partitions[(step // 2) % len(partitions)])

    def read_to_end(self, partitions: list[TopicPartition], most_ms: float, every_ms: float = 100.0) -> bool:
        """After the settling: fetch until every partition is read up to its last stable offset, which is its high
        watermark (nothing left open), ``most_ms`` at most; whether it got there."""
        start = end = self.sim.now
        end += most_ms
        while True:
            waiting = [tp for tp in partitions if not self.consumer.at_end(tp, start)]
            if not waiting:
                return True
            if self.sim.now >= end:
                return False
            for tp in waiting:
                self.consumer.fetch(tp)
            self.sim.run_for(min(every_ms, end - self.sim.now))
        return False


class TxnChecks:
    """The invariants on the transactions (a step's are cheap: they look at what is new since the last):

    - the read_committed consumer never keeps a record at or above its answer's last stable offset (not yet
      committed), nor a control record (every value kept is one a producer wrote), nor a record of a transaction the
      producer saw aborted (EndTxn(abort) acknowledged, or abandoned before its commit was asked);
    - a partition's last stable offset never passes its high watermark, on any replica;
    - no answer to either client is UNKNOWN_SERVER_ERROR;
    - at the end (settled, the producer done, the consumer read to every partition's end): no transaction left
      hanging — every partition's leader has its last stable offset at its high watermark; every record of a
      transaction whose EndTxn(commit) was acknowledged read committed exactly once, the partition's transactional
      records in the order written; a transaction of unknown outcome read whole or not at all.
    """

    def __init__(self, txns: Transactions, partitions: list[TopicPartition]) -> None:
        self.txns = txns
        self.partitions = partitions
        self._reads_seen = 0
        self._answers_seen = [0, 0]
        self.read_values: dict[str, TxnRead] = {}
        self.found: list[str] = []

    def _txn_of(self) -> dict[str, Txn]:
        return {v: t for t in self.txns.producer.txns for v in t.records.values()}

    def check(self, hosted: Any) -> list[str]:
        """``hosted(broker, tp)``: the broker's online Partition of ``tp`` or None."""
        reads = self.txns.consumer.reads
        for r in reads[self._reads_seen:]:
            name = f"{r.tp.topic}-{r.tp.partition}"
            if r.offset >= r.last_stable_offset:
                self.found.append(f"{name}: read_committed consumer read {r.value!r} at offset {r.offset} from "
                                  f"b{r.leader}, at or above the last stable offset {r.last_stable_offset} of that "
                                  f"answer (HW {r.high_watermark})")
            if r.value is None or not VALUE.fullmatch(r.value):
                self.found.append(f"{name}: read_committed consumer read {r.value!r} at offset {r.offset} from "
                                  f"b{r.leader}: no producer's record (a control record?)")
            self.read_values.setdefault(r.value or "", r)
        self._reads_seen = len(reads)
        for t in self.txns.producer.txns:
            if t.outcome != ABORTED:
                continue
            for v in t.records.values():
                r = self.read_values.get(v)
                if r is not None:
                    msg = (f"{r.tp.topic}-{r.tp.partition}: read_committed consumer read {v!r} at offset {r.offset} "
                           f"from b{r.leader}, a record of aborted transaction {t.number}")
                    if msg not in self.found:
                        self.found.append(msg)
        lists = (self.txns.producer.answers, self.txns.consumer.answers)
        for i, answers in enumerate(lists):
            for what, about, error in answers[self._answers_seen[i]:]:
                if error == "UNKNOWN_SERVER_ERROR":
                    self.found.append(f"{what} {about!r} answered {error}")
            self._answers_seen[i] = len(answers)
        out = list(self.found)
        sim = self.txns.sim
        for tp in self.partitions:
            for b in sim.brokers:
                p = hosted(b, tp)
                log = None if p is None else p.log
                if log is not None and log.last_stable_offset > log.high_watermark:
                    out.append(f"{tp.topic}-{tp.partition}: b{b}'s last stable offset {log.last_stable_offset} "
                               f"past its high watermark {log.high_watermark}")
        return out

    def check_final(self, hosted: Any, leaders: dict[TopicPartition, int], read_to_end: bool) -> list[str]:
        out: list[str] = []
        producer = self.txns.producer
        if producer.txn is not None:
            out.append(f"transaction {producer.txn.number} still open at the end ({producer.phase})")
        for tp in self.partitions:
            name = f"{tp.topic}-{tp.partition}"
            leader = leaders.get(tp, -1)
            p = hosted(leader, tp) if leader >= 0 else None
            log = None if p is None else p.log
            if log is not None and log.last_stable_offset != log.high_watermark:
                out.append(f"{name}: leader b{leader}'s last stable offset {log.last_stable_offset} below its high "
                           f"watermark {log.high_watermark} at the end: a transaction left hanging")
        if not read_to_end:
            consumer = self.txns.consumer
            out.append(f"the read_committed consumer did not read every partition to its end (positions "
                       f"{sorted((str(t), o) for t, o in consumer.positions.items())}, last answers' LSO/HW "
                       f"{sorted((str(t), s) for t, s in consumer.stable.items())})")
        counts: dict[str, int] = {}
        order: dict[TopicPartition, list[str]] = {}
        txn_of = self._txn_of()
        for r in self.txns.consumer.reads:
            if r.value in txn_of:
                counts[r.value] = counts.get(r.value, 0) + 1
                order.setdefault(r.tp, []).append(r.value)
        for t in producer.txns:
            read = {v: counts.get(v, 0) for v in t.records.values()}
            if t.outcome == COMMITTED:
                for v, n in read.items():
                    if n != 1:
                        out.append(f"committed transaction {t.number}'s {v!r} read committed {n} times, not once")
            elif t.outcome == UNKNOWN and len({n > 0 for n in read.values()}) > 1:
                out.append(f"transaction {t.number} (outcome unknown) read in part: {read}")
        for tp, values in order.items():
            numbers = [txn_of[v].number for v in values]
            if numbers != sorted(numbers):
                out.append(f"{tp.topic}-{tp.partition}: transactional records read committed out of order: "
                           f"{values}")
        return out
