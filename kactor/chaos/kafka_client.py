"""The chaos runner's data plane through Kafka's protocol: a DataClient (kactor/chaos/client.py) made of Kafka's own
client library (confluent-kafka / librdkafka), as any application producing to and consuming from the cluster.

Produce: an idempotent librdkafka producer (enable.idempotence, acks=all, one request in flight per broker: records
stay in order through retries, and a retry the broker already appended is dropped by its sequence number, so a
record in a log twice is a broker's fault); the values of one call are produced back to back inside ``linger.ms`` so
they travel in one record batch, and the delivery reports give each record's acknowledged offset. librdkafka
retries what Kafka calls retriable (a leader that moved, a broker down) until ``message.timeout.ms``; a record whose
report carries an error was not acknowledged. The run's client waits Kafka's ``request.timeout.ms`` (30 s) for an
answer, as an application does, so a broker holding an acks=all produce shows as the wait it is (the runner
measures it, kactor/chaos/gaps.py). An error that makes the idempotent producer fail for good (librdkafka's fatal
errors: an UNKNOWN_SERVER_ERROR answer is one) is counted, and the producer is replaced so the run goes on writing.
The schedule alone creates and deletes topics: the producer's Metadata requests never allow auto-creation. Both
clients refresh their metadata every second, so the partitions an expansion adds are written to and read within
about a second.

Read: a consumer with ``assign()`` at the offset (no group subscription, nothing committed) reads up to the
partition's high watermark, which ListOffsets(latest) gives for read_uncommitted — a consumer never sees above it.

Every UNKNOWN_SERVER_ERROR (-1) the producer or the consumer receives is recorded (``error_answers()``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from kactor.chaos.answers import UNKNOWN_SERVER_ERROR
from kactor.chaos.client import ProduceError
from kactor.chaos.history import ErrorAnswer
from kactor.kafka_clients import client_config, close_within, error_text

if TYPE_CHECKING:
    from kactor.cluster import LocalCluster

LINGER_MS = 5
# Both clients. Leaders move all the time here: learn the new one fast. And librdkafka refuses a partition beyond
# the count it knows (a write fails at once with _UNKNOWN_PARTITION, a watermark query finds no leader) without
# asking again: an expanded topic's new partitions would wait for the periodic refresh, 5 minutes by default.
METADATA_REFRESH = {"topic.metadata.refresh.fast.interval.ms": 100, "topic.metadata.refresh.interval.ms": 1000}


def is_unknown_server_error(error: Any) -> bool:
    """A KafkaError of an UNKNOWN_SERVER_ERROR answer: its code, or a fatal error whose reason names it
    (librdkafka's text for -1 is "Unknown broker error")."""
    return error.code() == UNKNOWN_SERVER_ERROR or "Unknown broker error" in (error.str() or "")


class UnknownServerErrorAnswers:
    """The UNKNOWN_SERVER_ERROR answers librdkafka's error callbacks report (`check_server_errors` holds them against
    the run): a client's ``error_cb`` is ``on_error(source)``. librdkafka calls back on its own threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._answers: list[ErrorAnswer] = []

    def on_error(self, source: str) -> Callable[[Any], None]:
        def record(error: Any) -> None:
            if is_unknown_server_error(error):
                self.record(source, error_text(error))
        return record

    def record(self, source: str, detail: str) -> None:
        with self._lock:
            self._answers.append(ErrorAnswer(time.monotonic(), source, detail))

    def answers(self) -> tuple[ErrorAnswer, ...]:
        with self._lock:
            return tuple(self._answers)


class KafkaDataClient:
    """DataClient over Kafka's protocol; ``bootstrap`` is ``host:port[,host:port...]``. ``timeout_s`` bounds a read;
    ``request_timeout_s`` (default ``timeout_s``) is the producer's request.timeout.ms and message.timeout.ms."""

    def __init__(self, bootstrap: str, timeout_s: float = 5.0, request_timeout_s: float | None = None,
                 security: Mapping[str, str] | None = None) -> None:
        """``security``: librdkafka's settings for the cluster's listener (security.protocol, ssl.*, sasl.*)."""
        from confluent_kafka import Consumer

        self.timeout_s = timeout_s
        self.request_timeout_s = timeout_s if request_timeout_s is None else request_timeout_s
        timeout_ms = int(self.request_timeout_s * 1000)
        self._server_errors = UnknownServerErrorAnswers()
        self._fatal: list[Any] = []  # the producer's fatal error, from librdkafka's error callback
        self.fatal_errors = 0
        self._producer_config = client_config(bootstrap, "kactor-chaos-producer", {
            "acks": "all",
            "enable.idempotence": True,
            "max.in.flight.requests.per.connection": 1,
            "linger.ms": LINGER_MS,
            "request.timeout.ms": timeout_ms,
            "message.timeout.ms": timeout_ms,
            "retry.backoff.ms": 100,
            **METADATA_REFRESH,
            # librdkafka's producer asks for every topic it ever wrote to in each Metadata request, and allows
            # creation by default: the brokers (auto.create.topics.enable, Kafka 2.6's default true) would create
            # again a topic the schedule deleted, with num.partitions / default.replication.factor
            "allow.auto.create.topics": False,
            "error_cb": self._on_producer_error,
            **(security or {}),
        })
        self._producer = self._new_producer()
        self._consumer = Consumer(client_config(bootstrap, "kactor-chaos-consumer", {
            "group.id": "kactor-chaos-reader",  # librdkafka needs one; nothing is subscribed or committed
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "auto.offset.reset": "error",
            "isolation.level": "read_uncommitted",
            "fetch.wait.max.ms": 50,
            **METADATA_REFRESH,
            "error_cb": self._on_consumer_error,
            **(security or {}),
        }))

    def _new_producer(self) -> Any:
        from confluent_kafka import Producer

        self._fatal.clear()
        return Producer(self._producer_config)

    def _on_producer_error(self, error: Any) -> None:
        # confluent-kafka hands a fatal error over with the broker's code that caused it (rd_kafka_fatal_error)
        if error.fatal():
            self._fatal.append(error)
        elif is_unknown_server_error(error):
            self._server_errors.record("the producer", error_text(error))

    def _on_consumer_error(self, error: Any) -> None:
        if is_unknown_server_error(error):
            self._server_errors.record("the consumer", error_text(error))

    def error_answers(self) -> tuple[ErrorAnswer, ...]:
        """The UNKNOWN_SERVER_ERROR answers received so far (``ts``: time.monotonic())."""
        return self._server_errors.answers()

    def produce(self, topic: str, partition: int, values: tuple[str, ...]) -> int:
        """acks=all; the offset of the first value. ProduceError unless every value was acknowledged at
        consecutive offsets (a batch split by a retry is reported as not acknowledged: nothing is expected of it)."""
        reports: list[tuple[Any, int]] = []

        def on_delivery(error: Any, msg: Any) -> None:
            reports.append((error, msg.offset()))
        try:
            for value in values:
                self._producer.produce(topic, value=value.encode(), partition=partition, on_delivery=on_delivery)
        except Exception as e:  # noqa: BLE001 - an unknown partition, a full queue: not acknowledged
            self._producer.flush(self.request_timeout_s + 2)
            self._after_produce(topic, partition, reports)
            raise ProduceError(f"{topic}-{partition}: {type(e).__name__}: {e}") from None
        self._producer.flush(self.request_timeout_s + 2)  # message.timeout.ms bounds every record's wait
        self._after_produce(topic, partition, reports)
        errors = [error_text(e) for e, _ in reports if e is not None]
        if errors or len(reports) != len(values):
            raise ProduceError(f"{topic}-{partition}: {errors[0] if errors else 'no delivery report'}")
        offsets = [o for _, o in reports]
        if offsets != list(range(offsets[0], offsets[0] + len(values))):
            raise ProduceError(f"{topic}-{partition}: acknowledged at offsets {offsets}, not consecutive")
        return offsets[0]

    def _after_produce(self, topic: str, partition: int, reports: list[tuple[Any, int]]) -> None:
        """One -1 answer per call (its records travelled in one batch), from the delivery reports or else the
        fatal error it caused; a producer failed for good is replaced."""
        unknown = [e for e, _ in reports if e is not None and is_unknown_server_error(e)]
        fatal = list(self._fatal)
        if unknown:
            self._server_errors.record("the producer",
                                       f"Produce to {topic}-{partition}: {error_text(unknown[0])}")
        elif any(is_unknown_server_error(e) for e in fatal):
            self._server_errors.record("the producer",
                                       f"Produce to {topic}-{partition}: {error_text(fatal[0])} (fatal)")
        if fatal:
            self.fatal_errors += 1
            self._producer.flush(0)
            self._producer = self._new_producer()

    def read(self, topic: str, partition: int, offset: int) -> tuple[tuple[str, ...], int]:
        """The values from ``offset`` below the high watermark, and that high watermark; ((), -1) when the
        partition cannot be read now (no leader, a broker down, not read within the timeout)."""
        from confluent_kafka import KafkaException, TopicPartition

        tp = TopicPartition(topic, partition, offset)
        try:
            _, hw = self._consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=self.timeout_s,
                                                         cached=False)
            if hw <= offset:
                return (), hw
            self._consumer.assign([tp])
            values: list[str] = []
            next_offset = offset
            deadline = time.monotonic() + self.timeout_s
            while next_offset < hw:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return (), -1
                batch = self._consumer.consume(num_messages=min(hw - next_offset, 10000), timeout=min(remaining, 0.5))
                for msg in batch:
                    if msg.error() is not None:
                        if is_unknown_server_error(msg.error()):
                            self._server_errors.record(
                                "the consumer", f"Fetch from {topic}-{partition}: {error_text(msg.error())}")
                        if msg.error().name() != "_PARTITION_EOF":
                            return (), -1
                        continue
                    if (msg.topic(), msg.partition()) != (topic, partition) or msg.offset() != next_offset:
                        continue  # a stale fetch of an earlier assignment, or a gap we did not ask for
                    if next_offset < hw:
                        values.append(msg.value().decode())
                    next_offset += 1
            return tuple(values), hw
        except KafkaException as e:
            if e.args and hasattr(e.args[0], "code") and is_unknown_server_error(e.args[0]):
                self._server_errors.record("the consumer",
                                           f"ListOffsets / Fetch of {topic}-{partition}: {error_text(e)}")
            return (), -1
        finally:
            try:
                self._consumer.unassign()
            except KafkaException:
                pass

    def close(self) -> bool:
        """Flush the producer and close the consumer; False if the close was given up (`close_within`)."""
        self._producer.flush(self.request_timeout_s)
        return close_within(self._consumer)


def kafka_data_client(cluster: LocalCluster, request_timeout_s: float = 30.0) -> KafkaDataClient:
    """The data plane of a run: Kafka's protocol (`KafkaDataClient`), bootstrapped from every broker's listener as
    an application is configured."""
    return KafkaDataClient(bootstrap(cluster), request_timeout_s=request_timeout_s, security=security(cluster))


def security(cluster: LocalCluster) -> dict[str, str]:
    """librdkafka's settings for the cluster's listener (kactor cluster --security), none for PLAINTEXT."""
    return dict(cluster.secure.librdkafka) if cluster.secure is not None else {}


def bootstrap(cluster: LocalCluster) -> str:
    """Every broker's listener, ``host:port[,host:port...]``, as an application is configured."""
    return ",".join("{}:{}".format(*cluster.broker_address(b)) for b in range(cluster.n))
