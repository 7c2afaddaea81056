"""The transactional side of a chaos run (issue #27): a consume-transform-produce loop with Kafka's exactly-once
machinery, beside the plain idempotent producer, and the checks on what it leaves.

The loop (one thread, librdkafka through confluent-kafka, as an exactly-once application is written):
- feeds its own input topic a few plain records each turn (an idempotent acks=all producer);
- reads the input at read_committed with a consumer of group ``GROUP`` assigned every input partition (it starts
  from the group's committed offsets);
- in one transaction, writes ``<input value>@<transaction number>`` for each record read to the same partition of
  the output topic and sends the consumer's positions with ``send_offsets_to_transaction``;
- commits the transaction, or (one in ``ABORT_EVERY``, by the seed) aborts it and rewinds the consumer to the
  group's committed offsets, as an application does after an abort;
- on an error librdkafka says needs an abort, aborts; on a fatal one (fenced, or a timeout past recovery), replaces
  the producer — InitProducerId with the same transactional id fences the old one and completes or aborts whatever
  it left — and rewinds.

What must hold afterwards (``check_transactions``), per input partition p, with the group's committed offset c:
the output partition p, read at read_committed, is exactly the transform of input records 0..c-1 in order, each
once (a committed transaction's records all there, nothing of an aborted one, offsets atomic with the output);
no record of a transaction the loop saw aborted is visible; every transaction the loop saw committed is visible.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kactor.chaos.history import ErrorAnswer, Violation
from kactor.chaos.kafka_client import METADATA_REFRESH, UnknownServerErrorAnswers
from kactor.kafka_clients import CLOSE_TIMEOUT_S, client_config, close_within, error_text, watermark_offsets

INPUT = "chaos-txn-in"
OUTPUT = "chaos-txn-out"
PARTITIONS = 2
GROUP = "chaos-txn"
ABORT_EVERY = 5  # about one transaction in five is aborted on purpose
FEED_PER_TURN = 6
TXN_TIMEOUT_MS = 20000
PAUSE_S = 0.05

# outcome of a transaction as the loop saw it
COMMITTED, ABORTED, UNKNOWN = "committed", "aborted", "unknown"


def transform(value: str, txn: int) -> str:
    return f"{value}@{txn}"


def untransform(value: str) -> tuple[str, int]:
    """(input value, transaction number) of an output value."""
    head, _, txn = value.rpartition("@")
    return head, int(txn)


def check_transactions(inputs: Mapping[int, Sequence[str]], committed: Mapping[int, int],
                       read_committed: Mapping[int, Sequence[str]], outcomes: Mapping[int, str]) -> list[Violation]:
    """``inputs``: each input partition's values by offset; ``committed``: the group's committed offset per input
    partition (absent: none); ``read_committed``: each output partition's values as a read_committed consumer reads
    them; ``outcomes``: transaction number → COMMITTED / ABORTED / UNKNOWN as the loop saw it end."""
    out: list[Violation] = []
    seen_txns: set[int] = set()
    for p in sorted(set(inputs) | set(read_committed)):
        offset = committed.get(p, 0)
        source = list(inputs.get(p, ()))
        output = list(read_committed.get(p, ()))
        if offset > len(source):
            out.append(Violation("txn", f"{OUTPUT}: group {GROUP} committed offset {offset} of {INPUT}-{p}, past "
                                        f"its {len(source)} records"))
            continue
        derived = [untransform(v) for v in output]
        seen_txns.update(t for _, t in derived)
        aborted = sorted({t for _, t in derived if outcomes.get(t) == ABORTED})
        if aborted:
            out.append(Violation("txn", f"{OUTPUT}-{p}: records of aborted transaction(s) {aborted[:5]} visible at "
                                        f"read_committed"))
        values = [v for v, _ in derived]
        if values != source[:offset]:
            first = next((i for i, (a, b) in enumerate(zip(values, source[:offset], strict=False)) if a != b),
                         min(len(values), offset))
            out.append(Violation("txn", f"{OUTPUT}-{p}: read_committed holds {len(values)} records for the "
                                        f"{offset} input records the group committed; first difference at "
                                        f"{first}: {values[first:first + 2]} against {source[first:first + 2]}"))
    if COMMITTED not in outcomes.values():
        # a run lasts tens of seconds with the cluster healed at its end: a loop that committed nothing is stuck
        out.append(Violation("txn", f"no transaction committed in the whole run ({len(outcomes)} begun): the "
                                    f"transactional loop made no progress"))
    missing = sorted(t for t, o in outcomes.items() if o == COMMITTED and t not in seen_txns)
    # a committed transaction that read nothing writes nothing; the loop only begins one with records read
    if missing:
        out.append(Violation("txn", f"transaction(s) {missing[:5]} committed but none of their records visible"))
    return out


class TxnWorkload:
    """The loop as a thread: ``start()``, ``stop()`` (finishes the transaction in flight), then ``outcomes``,
    ``errors`` and ``error_answers()``."""

    def __init__(self, bootstrap: str, seed: int, stop: threading.Event,
                 security: Mapping[str, str] | None = None) -> None:
        self.bootstrap = bootstrap
        self.security = dict(security or {})  # librdkafka's settings for the cluster's listener
        self.seed = seed
        self.rng = random.Random(f"txn-{seed}")
        self.outcomes: dict[int, str] = {}
        self.errors: list[str] = []  # what the loop recovered from, for the events log
        self.fed = 0
        self._outer_stop = stop
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._server_errors = UnknownServerErrorAnswers()
        self._in_call: tuple[str, float] | None = None  # the blocking librdkafka call under way, since when
        self._thread = threading.Thread(target=self._run, name="chaos-txn", daemon=True)

    # -- clients ------------------------------------------------------------------------------------------------
    def error_answers(self) -> tuple[ErrorAnswer, ...]:
        return self._server_errors.answers()

    def _producer(self) -> Any:
        from confluent_kafka import Producer

        p = Producer(client_config(self.bootstrap, "kactor-chaos-txn", {
            "transactional.id": f"kactor-chaos-{self.seed}", "transaction.timeout.ms": TXN_TIMEOUT_MS,
            "allow.auto.create.topics": False, **METADATA_REFRESH,
            "error_cb": self._server_errors.on_error("the transactional producer"), **self.security}))
        self._calling("init_transactions", p.init_transactions, 60)
        return p

    def _feeder(self) -> Any:
        from confluent_kafka import Producer

        return Producer(client_config(self.bootstrap, "kactor-chaos-txn-feed", {
            "enable.idempotence": True, "acks": "all", "linger.ms": 5, "allow.auto.create.topics": False,
            **METADATA_REFRESH,
            "error_cb": self._server_errors.on_error("the transactional loop's feeder"), **self.security}))

    def _consumer(self) -> Any:
        """A read_committed consumer of group GROUP assigned every input partition at the group's committed offsets,
        fetched first and given explicitly: assigned without offsets, librdkafka fetches them itself, and an
        OffsetFetch answered NOT_COORDINATOR as a whole (a coordinator named a moment before its broker was told,
        as Kafka's FindCoordinator can) leaves the partitions waiting for ever (confluentinc/librdkafka#5586; chaos
        seed 27 read nothing for a whole run)."""
        from confluent_kafka import Consumer, KafkaException

        c = Consumer(client_config(self.bootstrap, "kactor-chaos-txn-reader", {
            "group.id": GROUP, "enable.auto.commit": False, "auto.offset.reset": "earliest",
            "isolation.level": "read_committed", "fetch.wait.max.ms": 50,
            # the loop starts as the run creates its topics, and leaders move all the time: without a fast refresh
            # librdkafka waits 5 minutes to learn the partitions it was assigned before they had leaders
            **METADATA_REFRESH,
            "error_cb": self._server_errors.on_error("the transactional loop's consumer"), **self.security}))
        try:
            self._rewind(c)
        except KafkaException:
            self._close(c)
            raise
        return c

    # -- the loop -----------------------------------------------------------------------------------------------
    def start(self) -> TxnWorkload:
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 30) -> str | None:
        """Ask the loop to end after its transaction in flight; None once it has, else what it is still inside.
        The cluster is healed by then and each call has a 60 s timeout, but librdkafka's
        send_offsets_to_transaction ignores its own once the group coordinator was restarted
        (confluentinc/librdkafka#5456, #5511): the thread is left inside it and its transaction to the coordinator,
        which aborts it after transaction.timeout.ms."""
        self._stop.set()
        self._thread.join(timeout_s)
        call = self._in_call
        if not self._thread.is_alive():
            return None
        if call is None:
            return f"still running {timeout_s:.0f} s after being asked to stop"
        return f"still inside librdkafka's {call[0]} after {time.monotonic() - call[1]:.0f} s"

    def _calling(self, name: str, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``, one of librdkafka's blocking calls, noted as the one in progress while it runs."""
        self._in_call = (name, time.monotonic())
        try:
            return fn(*args)
        finally:
            self._in_call = None

    def _stopping(self) -> bool:
        return self._stop.is_set() or self._outer_stop.is_set()

    def _rewind(self, consumer: Any) -> None:
        """The consumer (re)assigned at the group's committed offsets (the start where there is none): what it read
        since is read again. KafkaException when they cannot be fetched (a partition's error included: reading
        from the start instead would repeat committed input)."""
        from confluent_kafka import OFFSET_BEGINNING, KafkaException, TopicPartition

        committed = self._calling("committed", lambda: consumer.committed(
            [TopicPartition(INPUT, p) for p in range(PARTITIONS)], timeout=30))
        failed = next((tp.error for tp in committed if tp.error is not None), None)
        if failed is not None:
            raise KafkaException(failed)
        # seek() refuses a partition not being fetched yet; assign() with the offsets restarts every fetch there
        consumer.assign([TopicPartition(INPUT, tp.partition, tp.offset if tp.offset >= 0 else OFFSET_BEGINNING)
                         for tp in committed])

    def _rewound(self, consumer: Any) -> Any:
        """`_rewind`, or None (the consumer closed, a new one made next turn) when the offsets cannot be fetched."""
        from confluent_kafka import KafkaException

        try:
            self._rewind(consumer)
            return consumer
        except KafkaException as e:
            self.errors.append(f"rewind: {error_text(e.args[0])}")
            self._close(consumer)
            return None

    def _run(self) -> None:
        from confluent_kafka import KafkaException

        feeder, consumer, producer = None, None, None
        txn = 0
        try:
            while not self._stopping():
                try:
                    feeder = feeder or self._feeder()
                    consumer = consumer or self._consumer()
                    producer = producer or self._producer()
                except KafkaException as e:
                    self.errors.append(f"set-up: {e}")
                    self._stop.wait(1)
                    continue
                for _ in range(FEED_PER_TURN):
                    feeder.produce(INPUT, value=f"in-{self.seed}-{self.fed}".encode(), partition=self.fed % PARTITIONS)
                    self.fed += 1
                feeder.poll(0)
                msgs = [m for m in consumer.consume(num_messages=20, timeout=0.5) if m.error() is None]
                if not msgs:
                    continue
                txn += 1
                try:
                    if not self._transact(producer, consumer, msgs, txn):
                        consumer = self._rewound(consumer)
                except KafkaException as e:
                    error = e.args[0]
                    self.errors.append(f"transaction {txn}: {error_text(error)}")
                    if error.txn_requires_abort():
                        try:
                            self._calling("abort_transaction", producer.abort_transaction, 60)
                            self.outcomes[txn] = ABORTED
                        except KafkaException:
                            self.outcomes[txn] = UNKNOWN
                            producer = None
                    else:
                        # fatal, or a commit that timed out: the outcome is the coordinator's; a new producer with
                        # the same transactional id fences this one and completes or aborts what it left
                        self.outcomes[txn] = UNKNOWN
                        producer = None
                    consumer = self._rewound(consumer)
                self._stop.wait(PAUSE_S)
        except Exception as e:  # noqa: BLE001 - the run reports it; the cluster's checks still run
            self.errors.append(f"the loop stopped: {type(e).__name__}: {e}")
        finally:
            for client in (feeder, producer):
                if client is not None:
                    client.flush(30)
            if consumer is not None:
                self._close(consumer)

    def _close(self, consumer: Any) -> None:
        if not close_within(consumer):
            self.errors.append(f"a consumer's close did not return within {CLOSE_TIMEOUT_S:.0f} s (librdkafka): "
                               f"left behind")

    def _transact(self, producer: Any, consumer: Any, msgs: list[Any], txn: int) -> bool:
        """One transaction of ``msgs``: committed (True), or aborted on purpose (False: the caller rewinds)."""
        self.outcomes[txn] = UNKNOWN
        producer.begin_transaction()
        for m in msgs:
            producer.produce(OUTPUT, value=transform(m.value().decode(), txn).encode(), partition=m.partition())
        # a partition read nothing from yet has no position (OFFSET_INVALID): nothing to commit for it
        positions = [tp for tp in consumer.position(consumer.assignment()) if tp.offset >= 0]
        self._calling("send_offsets_to_transaction", producer.send_offsets_to_transaction, positions,
                      consumer.consumer_group_metadata(), 60)
        if self.rng.randrange(ABORT_EVERY) == 0:
            self._calling("abort_transaction", producer.abort_transaction, 60)
            self.outcomes[txn] = ABORTED
            return False
        self._calling("commit_transaction", producer.commit_transaction, 60)
        self.outcomes[txn] = COMMITTED
        return True


def read_topic(bootstrap: str, topic: str, isolation: str, timeout_s: float = 30,
               security: Mapping[str, str] | None = None) -> dict[int, list[str]]:
    """Every partition of ``topic`` from offset 0 to its end at ``isolation`` (read_committed ends at the last
    stable offset): partition → values by position."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(client_config(bootstrap, "kactor-chaos-txn-check", {
        "group.id": "kactor-chaos-txn-check", "enable.auto.commit": False, "isolation.level": isolation,
        **(security or {})}))
    try:
        out: dict[int, list[str]] = {p: [] for p in range(PARTITIONS)}
        lookups_end = time.monotonic() + timeout_s
        ends = {p: watermark_offsets(consumer, TopicPartition(topic, p), lookups_end)[1] for p in range(PARTITIONS)}
        consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        deadline = time.monotonic() + timeout_s
        idle_since = time.monotonic()
        # read_committed may end below the high watermark (markers, an open transaction): stop when nothing
        # arrives for 2 s, or every partition is read to its high watermark
        last: dict[int, int] = {p: -1 for p in range(PARTITIONS)}
        while time.monotonic() < deadline and time.monotonic() - idle_since < 2 \
                and any(last[p] < ends[p] - 1 for p in range(PARTITIONS)):
            for m in consumer.consume(num_messages=500, timeout=0.5):
                if m.error() is None:
                    out[m.partition()].append(m.value().decode())
                    last[m.partition()] = m.offset()
                    idle_since = time.monotonic()
        return out
    finally:
        close_within(consumer)


def committed_offsets(bootstrap: str, timeout_s: float = 30,
                      security: Mapping[str, str] | None = None) -> dict[int, int]:
    """The group's committed offset per input partition (absent: nothing committed). librdkafka's committed() gives
    up on a coordinator that moved or is still loading (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS: chaos seed
    11, its coordinator elected as the faults ended); asked again until ``timeout_s``, as an application would, and
    as Java's consumer does by itself."""
    from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

    again = {KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS, KafkaError.COORDINATOR_NOT_AVAILABLE}
    consumer = Consumer(client_config(bootstrap, "kactor-chaos-txn-check", {
        "group.id": GROUP, "enable.auto.commit": False, **(security or {})}))
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            try:
                return {tp.partition: tp.offset for tp in consumer.committed(
                    [TopicPartition(INPUT, p) for p in range(PARTITIONS)],
                    timeout=max(deadline - time.monotonic(), 1)) if tp.offset >= 0}
            except KafkaException as e:
                if e.args[0].code() not in again or time.monotonic() >= deadline:
                    raise
                time.sleep(0.5)
    finally:
        close_within(consumer)
