"""`kactor sim`'s hostile client (issue #39): on the seeds `sim/faults.py` gives a "hostile" fault, a client that
sends, once, the requests that found issue #39's bugs, and `HostileChecks`, what Kafka 2.6.3 answers them and what
must not follow.

What it sends, each through `Sim.client_request` as the internal request its Kafka request converts to (the sim's
other clients' way), once ``__transaction_state`` is led (created at the fault's step when the seed has none: a live
cluster's first FindCoordinator(TRANSACTION) creates it, which the sim's FindCoordinator cannot, its edge handler
not being run):

- the poisoning sequence of the audit's finding 1: FindCoordinator(TRANSACTION) for ``sim-hostile-<seed>``,
  InitProducerId, AddPartitionsToTxn naming ``__transaction_state-0``, ``__consumer_offsets-0`` and a partition of
  ``sim``, then EndTxn(commit). KafkaApis.handleAddPartitionToTxnRequest authorizes WRITE over
  ``partitionsToAdd.filterNot(tp => Topic.isInternal(tp.topic))`` only, so the internal partitions answer
  TOPIC_AUTHORIZATION_FAILED and ``sim``'s OPERATION_NOT_ATTEMPTED, with or without an authorizer; nothing was added,
  so the transaction is Empty and TransactionCoordinator.handleEndTransaction answers INVALID_TXN_STATE. Accepted,
  the EndTxn would have the coordinator write a COMMIT marker into ``__transaction_state`` (and
  ``__consumer_offsets``), where every later load of the partition stops;
- a Produce to ``__transaction_state-0`` and, on the seeds with one, ``__consumer_offsets-0``: ReplicaManager.
  appendToLocalLog with internalTopicsAllowed=false answers INVALID_TOPIC_EXCEPTION;
- a batch whose CRC does not match (one byte of its CRC-32C flipped) to a ``sim`` partition's leader:
  Log.analyzeAndValidateRecords' ``batch.isValid`` check, CORRUPT_MESSAGE;
- bytes that are no batch at all (seeded random bytes whose length field runs past the data): 2.6.3's
  ByteBufferLogInputStream finds no batch in them (a batch longer than what remains ends the iteration) and
  ProduceRequest.validateRecords refuses a v3+ produce without one, INVALID_RECORD;
- a transactional batch of a producer id no coordinator gave (``UNKNOWN_PRODUCER_ID``, far above any id block) to a
  ``sim`` partition, on the seeds without transactions: 2.6.3's ProducerStateManager takes a new producer id at any
  sequence and appends it, answering NONE, and the partition's last stable offset stays below it for ever (no
  coordinator knows the transaction to end it: the hanging transaction KIP-664's tool and KIP-890 later address).
  On the transactional seeds it would stall the read_committed consumer whose reading to the end the transactions'
  checks demand, so it is not sent there. With KIP-890 verification (kactor sim turns it on) the leader asks the
  coordinator first and answers its INVALID_PRODUCER_ID_MAPPING; when it could not ask (its broker paused or cut off
  from the coordinator: the ask failed or timed out) it answers NOT_ENOUGH_REPLICAS, as Kafka 3.7.1+ does
  (KAFKA-16386; 3.6.0-3.7.0 answered the NETWORK_EXCEPTION itself), which the client retries like any producer
  until the coordinator's verdict comes (`VERIFICATION_NOT_ASKED`).

A request whose connection failed, or answered a retriable error, goes again after retry.backoff.ms (to the
partition's leader of the moment, the coordinator looked up again), as a client's retries do; only its last answer
is held against Kafka's.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import attrs

from actors import names
from messages.common import Errors, TopicPartition
from messages.group import COORDINATOR_TYPE_TRANSACTION, FindCoordinatorRequest
from messages.replication import ProducePartition, ProduceRequest
from messages.transaction import AddPartitionsToTxnRequest, EndTxnRequest, InitProducerIdRequest
from protocol.errors import ProtocolError
from protocol.records import TRANSACTIONAL_BIT, Record, build_batch, iter_batches
from protocol.zk import paths
from sim.client import PRODUCE_TIMEOUT_MS, PRODUCE_VERSION, zk_partition_leader
from sim.clients import CONNECTION_FAILED, RETRIABLE, RETRY_BACKOFF_MS
from sim.runtime import START_MS, Sim
from sim.transactions import (
    ADD_PARTITIONS_VERSION,
    END_TXN_VERSION,
    FIND_COORDINATOR_VERSION,
    INIT_PRODUCER_ID_VERSION,
    REFIND,
    RETRY,
    TRANSACTION_TIMEOUT_MS,
)

TRANSACTION_STATE = TopicPartition("__transaction_state", 0)
CONSUMER_OFFSETS = TopicPartition("__consumer_offsets", 0)
INTERNAL = (TRANSACTION_STATE, CONSUMER_OFFSETS)
# the coordinator's answers retried as they are: the transactional producer's, but for an unknown topic (a client
# naming a topic that does not exist gives up: only an internal topic the seed lacks is named so, and only when
# internal topics are accepted)
AGAIN = RETRY - {Errors.UNKNOWN_TOPIC_OR_PARTITION.name}
# a verified produce's answer when the leader could not ask the transaction coordinator (Kafka 3.7.1+, KAFKA-16386):
# retriable, so never a last answer while the cluster heals
VERIFICATION_NOT_ASKED = Errors.NOT_ENOUGH_REPLICAS.name
# ProducerIdManager hands out blocks of 1,000 from 0 (/latest_producer_id_block): a run never reaches this one
UNKNOWN_PRODUCER_ID = 1 << 40
_CRC_AT = 17  # a v2 batch header's CRC-32C (DefaultRecordBatch.CRC_OFFSET)
READY_POLL_MS = 100.0


@attrs.define
class Sent:
    """One hostile request: what it is, the answer Kafka 2.6.3 gives it, and the answers it got."""

    name: str
    expected: dict[str, str]  # partition (or "") -> the error name expected
    answers: list[dict[str, str]] = attrs.Factory(list)
    done: bool = False

    @property
    def last(self) -> dict[str, str]:
        return self.answers[-1] if self.answers else {}


def internal_topics(sim: Sim) -> list[TopicPartition]:
    """The internal partitions the seed has (their topic znode written)."""
    return [tp for tp in INTERNAL if paths.TopicZNode.path(tp.topic) in sim.zk.nodes]


class HostileClient:
    """Sends the module's requests once `start` is called and ``__transaction_state`` is led; ``requests`` by name."""

    def __init__(self, sim: Sim, partitions: list[TopicPartition], transactional: bool) -> None:
        self.sim = sim
        self.partitions = partitions
        self.transactional = transactional
        self.rng = random.Random(f"hostile-client-{sim.seed}")
        self.transactional_id = f"sim-hostile-{sim.seed}"
        # every hostile record's value begins so (no producer's value does, nor the transactional id's records)
        self.value = f"poison-{sim.seed}"
        self.started_ms: float | None = None
        self.ready = False
        self.requests: dict[str, Sent] = {}
        self.producer_ids: set[int] = {UNKNOWN_PRODUCER_ID}
        self.coordinator = -1
        self.producer_id, self.epoch = -1, -1
        self.phase = ""  # the transactional sequence's step: init, add, end, "" (done or not begun)
        self.target = TopicPartition("", -1)  # the sim partition its requests name

    # -- start ---------------------------------------------------------------------------------------------------
    def start(self, create_transaction_state: Callable[[], Any]) -> None:
        if self.started_ms is not None:
            return
        self.started_ms = self.sim.now
        if paths.TopicZNode.path(TRANSACTION_STATE.topic) not in self.sim.zk.nodes:
            create_transaction_state()
        self.sim.note("hostile client starts")
        self._wait_ready()

    def _wait_ready(self) -> None:
        from sim.invariants import hosted_partition

        leader = zk_partition_leader(self.sim, TRANSACTION_STATE)
        p = hosted_partition(self.sim, leader, TRANSACTION_STATE) if leader >= 0 else None
        if p is None or not p.is_leader:
            self.sim.at(READY_POLL_MS, self._wait_ready)
            return
        self.ready = True
        self._send_all()

    def idle(self) -> bool:
        """Not started, or every request has its last answer."""
        return self.started_ms is None or (self.ready and all(r.done for r in self.requests.values()))

    # -- the requests --------------------------------------------------------------------------------------------
    def _send_all(self) -> None:
        target = self.partitions[self.rng.randrange(len(self.partitions))]
        for tp in internal_topics(self.sim):
            batch = build_batch([Record(0, 0, None, f"{self.value}-{tp.topic}".encode())],
                                first_timestamp=int(self.sim.now))
            self._produce(Sent(f"Produce to {tp.topic}-{tp.partition}",
                               {str(tp): Errors.INVALID_TOPIC_EXCEPTION.name}), tp, batch)
        corrupt = bytearray(build_batch([Record(0, 0, None, f"{self.value}-crc".encode())],
                                        first_timestamp=int(self.sim.now)))
        corrupt[_CRC_AT] ^= 0xFF
        self._produce(Sent(f"Produce of a batch with a wrong CRC to {target}",
                           {str(target): Errors.CORRUPT_MESSAGE.name}), target, bytes(corrupt))
        garbage = bytes(self.rng.getrandbits(8) for _ in range(61))
        # a batch header's length field that runs past the data: no reader can take it for a batch
        garbage = garbage[:8] + (10_000).to_bytes(4, "big") + garbage[12:]
        self._produce(Sent(f"Produce of garbage bytes to {target}", {str(target): Errors.INVALID_RECORD.name}),
                      target, garbage)
        if not self.transactional:
            batch = build_batch([Record(0, 0, None, f"{self.value}-pid".encode())], first_timestamp=int(self.sim.now),
                                producer_id=UNKNOWN_PRODUCER_ID, producer_epoch=0, base_sequence=0,
                                attributes=TRANSACTIONAL_BIT)
            # Kafka 3.6's transaction verification (KIP-890 part 1, on by default): the coordinator knows no such
            # producer for the id (2.6.3 appended it: a transaction no marker would ever end); retried while the
            # leader cannot ask it (VERIFICATION_NOT_ASKED)
            self._produce(Sent(f"Transactional produce of unknown producer id {UNKNOWN_PRODUCER_ID} to {target}",
                               {str(target): Errors.INVALID_PRODUCER_ID_MAPPING.name}), target, batch,
                          self.transactional_id)
        self.phase, self.target = "init", target
        self.requests["AddPartitionsToTxn"] = Sent(
            "AddPartitionsToTxn of __transaction_state-0, __consumer_offsets-0 and " + str(target),
            {str(TRANSACTION_STATE): Errors.TOPIC_AUTHORIZATION_FAILED.name,
             str(CONSUMER_OFFSETS): Errors.TOPIC_AUTHORIZATION_FAILED.name,
             str(target): Errors.OPERATION_NOT_ATTEMPTED.name})
        self.requests["EndTxn"] = Sent("EndTxn(commit) after it", {"": Errors.INVALID_TXN_STATE.name})
        self._advance()

    def _produce(self, sent: Sent, tp: TopicPartition, batch: bytes, transactional_id: str | None = None) -> None:
        self.requests[sent.name] = sent

        def send() -> None:
            leader = zk_partition_leader(self.sim, tp)
            serving = [b for b, br in sorted(self.sim.brokers.items()) if br.serving]
            target = leader if leader >= 0 else (serving[0] if serving else -1)
            if target < 0:
                self.sim.at(RETRY_BACKOFF_MS, send)
                return
            self.sim.note(f"hostile client: {sent.name} at b{target}")
            request = ProduceRequest(1, PRODUCE_TIMEOUT_MS, (ProducePartition(tp, batch),), transactional_id)
            self.sim.client_request(target, request, PRODUCE_VERSION, answered, client_id="sim-hostile")

        def answered(answer: Any) -> None:
            error = CONNECTION_FAILED if answer is None else answer.partitions[0].error.name
            sent.answers.append({str(tp): error})
            self.sim.note(f"hostile client: {sent.name}: {error}")
            if error in RETRIABLE:
                self.sim.at(RETRY_BACKOFF_MS, send)
            else:
                sent.done = True

        send()

    def _advance(self) -> None:
        """The transactional sequence's next request (the coordinator looked up first when it is not known)."""
        if not self.phase:
            return
        if self.coordinator < 0:
            serving = [b for b, br in sorted(self.sim.brokers.items()) if br.serving]
            if not serving:
                self.sim.at(RETRY_BACKOFF_MS, self._advance)
                return
            request = FindCoordinatorRequest(self.transactional_id, COORDINATOR_TYPE_TRANSACTION, "PLAINTEXT")
            self.sim.client_request(self.rng.choice(serving), request, FIND_COORDINATOR_VERSION, self._found,
                                    client_id="sim-hostile", route=names.GROUP_COORDINATOR)
        elif self.phase == "init":
            self._coordinator_request(InitProducerIdRequest(self.transactional_id, TRANSACTION_TIMEOUT_MS),
                                      INIT_PRODUCER_ID_VERSION, self._inited)
        elif self.phase == "add":
            tps = (TRANSACTION_STATE, CONSUMER_OFFSETS, self.target)
            self._coordinator_request(AddPartitionsToTxnRequest(self.transactional_id, self.producer_id, self.epoch,
                                                                tps), ADD_PARTITIONS_VERSION, self._added)
        elif self.phase == "end":
            self._coordinator_request(EndTxnRequest(self.transactional_id, self.producer_id, self.epoch, True),
                                      END_TXN_VERSION, self._ended)

    def _coordinator_request(self, request: Any, version: int, on_answer: Callable[[Any], None]) -> None:
        self.sim.note(f"hostile client: {type(request).__name__} at b{self.coordinator}")
        self.sim.client_request(self.coordinator, request, version, on_answer, client_id="sim-hostile",
                                route=names.TRANSACTION_COORDINATOR)

    def _again(self, error: str) -> bool:
        """A retriable answer: the same request after the backoff (the coordinator found again first if need be)."""
        if error in REFIND:
            self.coordinator = -1
        elif error not in AGAIN:
            return False
        self.sim.at(RETRY_BACKOFF_MS, self._advance)
        return True

    def _found(self, answer: Any) -> None:
        error = CONNECTION_FAILED if answer is None else answer.error.name
        if error != "NONE":
            self.sim.at(RETRY_BACKOFF_MS, self._advance)
            return
        self.coordinator = answer.node_id
        self._advance()

    def _inited(self, answer: Any) -> None:
        error = CONNECTION_FAILED if answer is None else answer.error.name
        if error != "NONE":
            if not self._again(error):
                self.sim.note(f"hostile client: InitProducerId: {error}")
                self.phase = ""
                for name in ("AddPartitionsToTxn", "EndTxn"):  # never sent: nothing to hold against Kafka
                    self.requests[name].done = True
            return
        self.producer_id, self.epoch = answer.producer_id, answer.producer_epoch
        self.producer_ids.add(self.producer_id)
        self.sim.note(f"hostile client: producer id {self.producer_id} epoch {self.epoch}")
        self.phase = "add"
        self._advance()

    def _added(self, answer: Any) -> None:
        sent = self.requests["AddPartitionsToTxn"]
        if answer is None:
            errors = {str(tp): CONNECTION_FAILED for tp in sent.expected}
        else:
            errors = {str(tp): e.name for tp, e in answer.errors}
        sent.answers.append(errors)
        self.sim.note(f"hostile client: AddPartitionsToTxn: {sorted(errors.items())}")
        again = {e for e in errors.values() if e != Errors.OPERATION_NOT_ATTEMPTED.name}
        if len(again) == 1 and self._again(next(iter(again))):
            return
        sent.done = True
        self.phase = "end"
        self._advance()

    def _ended(self, answer: Any) -> None:
        sent = self.requests["EndTxn"]
        error = CONNECTION_FAILED if answer is None else answer.error.name
        sent.answers.append({"": error})
        self.sim.note(f"hostile client: EndTxn: {error}")
        if self._again(error):
            return
        sent.done = True
        self.phase = ""


class HostileChecks:
    """The invariants on the hostile client (from its start on):

    - each request's last answer is Kafka 2.6.3's (the table in `HostileClient`); none is UNKNOWN_SERVER_ERROR;
    - nothing of it lands in an internal topic's log, on any replica: no batch of its producer ids, no record of its
      values, and no control batch at all in ``__transaction_state`` (a transaction marker there is what stops every
      later load of the partition);
    - at the end (the cluster settled): every request has its last answer.
    """

    def __init__(self, client: HostileClient) -> None:
        self.client = client
        self.found: list[str] = []
        self._judged: set[str] = set()

    def check(self) -> list[str]:
        c = self.client
        if c.started_ms is None:
            return []
        for name, sent in c.requests.items():
            if not sent.done or name in self._judged:
                continue
            self._judged.add(name)
            got = sent.last
            wrong = {tp: e for tp, e in got.items() if sent.expected.get(tp) != e}
            if wrong:
                self.found.append(f"hostile {sent.name} answered {sorted(got.items())}, Kafka 2.6.3 answers "
                                  f"{sorted(sent.expected.items())}")
        return self.found + self._landed()

    def _landed(self) -> list[str]:
        from sim.invariants import hosted_partition

        c, out = self.client, []
        value = c.value.encode()
        for tp in internal_topics(c.sim):
            for b in sorted(c.sim.brokers):
                p = hosted_partition(c.sim, b, tp)
                log = None if p is None else p.log
                if log is None:
                    continue
                try:
                    segments = [s.read(0, s.size) for s in log.segments]
                except OSError:  # its log dir failed: unreadable, to Kafka too
                    continue
                for data in segments:
                    if value in data:
                        out.append(f"{tp}: b{b}'s log holds a hostile client's record ({c.value}-...)")
                    try:
                        for batch in iter_batches(data):
                            if batch.is_control and tp == TRANSACTION_STATE:
                                out.append(f"{tp}: b{b}'s log holds a control batch (a transaction marker of "
                                           f"producer id {batch.producer_id}) at offset {batch.base_offset}")
                            elif batch.producer_id in c.producer_ids:
                                out.append(f"{tp}: b{b}'s log holds a batch of the hostile client's producer id "
                                           f"{batch.producer_id} at offset {batch.base_offset}")
                    except ProtocolError:  # a torn tail (a power loss): the ISR checks report what matters
                        continue
        return out

    def check_final(self) -> list[str]:
        c = self.client
        if c.started_ms is None:
            return []
        out = [f"hostile {s.name} still unanswered at the end ({len(s.answers)} answers: "
               f"{s.answers[-3:]})" for s in c.requests.values() if not s.done]
        if not c.ready:
            out.append(f"hostile client started at {c.started_ms - START_MS:.0f} ms never found "
                       f"__transaction_state-0 led")
        return out
