"""The producer ``kactor describe --watch --produce TOPIC`` runs beside the view: a librdkafka producer on its own
thread sending ``--rate`` records a second round-robin over the topic's partitions, every delivery report counted by
an AckTracker (kactor/admin/acks.py). The records are ``describe-watch-<n>`` values without keys."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from kactor.admin.acks import AckTracker
from kactor.kafka_clients import client_config, error_text, topic_partitions


class WatchProducer:
    """start() after the topic is known to exist; stop() flushes for at most ``flush_s`` and closes."""

    def __init__(self, bootstrap: str, topic: str, rate: float, acks: str, tracker: AckTracker, *,
                 producer: Any = None, clock: Callable[[], float] = time.monotonic,
                 connection: Mapping[str, Any] | None = None) -> None:
        """``connection``: librdkafka's security settings (the tool's client properties file). ``producer`` (a
        confluent_kafka.Producer's produce/poll/flush/purge/close) and ``clock`` are for tests."""
        self.bootstrap = bootstrap
        self.topic = topic
        self.rate = rate
        self.tracker = tracker
        self._clock = clock
        if producer is None:
            from confluent_kafka import Producer

            producer = Producer(client_config(bootstrap, "kactor-describe-watch", {
                **(connection or {}), "acks": acks, "enable.idempotence": False, "linger.ms": 0,
                "retry.backoff.ms": 100, "topic.metadata.refresh.fast.interval.ms": 100}))
        self._producer = producer
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.partitions: list[int] = []

    def check_topic(self, timeout_s: float) -> None:
        """The topic's partitions (KafkaClientError if it does not exist or no broker answers)."""
        self.partitions = topic_partitions(self._producer, self.bootstrap, self.topic, None, timeout_s)

    def start(self) -> WatchProducer:
        self._thread = threading.Thread(target=self._run, name="describe-watch-producer", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        started = self._clock()
        n = 0
        while not self._stop.is_set():
            partition = self.partitions[n % len(self.partitions)]

            def report(error: Any, msg: Any, partition: int = partition) -> None:
                self.tracker.delivered(partition, msg.offset(), None if error is None else error_text(error))
            try:
                self._producer.produce(self.topic, value=f"describe-watch-{n}".encode(), partition=partition,
                                       on_delivery=report)
                self.tracker.sent(partition)
            except BufferError:
                pass  # librdkafka's queue is full (the cluster is not answering): try again at the next slot
            n += 1
            self._wait_until(started + n / self.rate)

    def _wait_until(self, at: float) -> None:
        """Serve delivery reports until ``at``: poll() returns as soon as it has served one, so a single
        poll(delay) would send the next record at the next acknowledgement instead of at the rate."""
        while not self._stop.is_set():
            delay = at - self._clock()
            if delay <= 0:
                return
            self._producer.poll(min(delay, 0.1))

    def stop(self, flush_s: float = 5.0) -> None:
        """Stop sending, wait up to ``flush_s`` for the records sent, then close: what is still unanswered is
        purged (close() would wait for it), so no librdkafka thread outlives the watch reconnecting to a cluster
        that is gone."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        self._producer.flush(flush_s)
        self._producer.purge()
        self._producer.close()
