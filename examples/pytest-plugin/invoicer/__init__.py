"""invoicer: orders in, invoices out, exactly once.

An order is JSON ``{"id": "o-1", "qty": 3, "price": 2.5}``; its invoice is ``{"order": "o-1", "total": 7.5}``, with
the order's key, on the output topic. The service is Kafka's consume-transform-produce loop:

1. a consumer of group ``group_id`` reads orders at ``read_committed`` (auto-commit off);
2. each batch's invoices are produced in one transaction, together with the consumer's positions
   (``send_offsets_to_transaction``), then the transaction is committed: invoices and offsets land together or not
   at all;
3. when librdkafka says a transaction must be aborted (a broker died mid-transaction, say), it is aborted and the
   consumer rewinds to the group's committed offsets, so the batch is read and invoiced again, once.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition

log = logging.getLogger("invoicer")


def invoice(order: bytes) -> bytes:
    """The transform: an order's invoice."""
    o = json.loads(order)
    return json.dumps({"order": o["id"], "total": round(o["qty"] * o["price"], 2)}).encode()


class Invoicer:
    """The service: ``run(stop)`` until ``stop`` is set. ``config`` is librdkafka's connection settings
    (``bootstrap.servers`` and, on a secured cluster, its security settings)."""

    def __init__(self, config: dict[str, Any], orders: str, invoices: str, group_id: str,
                 transactional_id: str, batch: int = 50,
                 on_commit: Callable[[int], None] | None = None) -> None:
        self.orders, self.invoices, self.batch = orders, invoices, batch
        self.on_commit = on_commit
        self.consumer = Consumer({**config, "group.id": group_id, "isolation.level": "read_committed",
                                  "enable.auto.commit": False, "auto.offset.reset": "earliest"})
        self.producer = Producer({**config, "transactional.id": transactional_id,
                                  "transaction.timeout.ms": 30000})
        self.committed = 0  # invoices in committed transactions
        self.aborted = 0  # transactions aborted and read again

    def run(self, stop: threading.Event) -> None:
        self.producer.init_transactions(60)
        self.consumer.subscribe([self.orders])
        try:
            while not stop.is_set():
                orders = [m for m in self.consumer.consume(self.batch, timeout=0.2) if not self._skip(m)]
                if orders:
                    self._process(orders)
        finally:
            self.consumer.close()
            self.producer.flush(10)

    @staticmethod
    def _skip(message: Any) -> bool:
        error = message.error()
        if error is None:
            return False
        if error.code() != KafkaError._PARTITION_EOF:
            log.warning("consumer: %s", error)
        return True

    def _process(self, orders: list[Any]) -> None:
        self.producer.begin_transaction()
        try:
            for m in orders:
                self.producer.produce(self.invoices, key=m.key(), value=invoice(m.value()), partition=m.partition())
            positions = self.consumer.position(self.consumer.assignment())
            self.producer.send_offsets_to_transaction(positions, self.consumer.consumer_group_metadata(), 30)
            self._commit()
        except KafkaException as e:
            error = e.args[0]
            if not error.txn_requires_abort():
                raise
            log.warning("transaction aborted (%s): rewinding to the committed offsets", error)
            self.producer.abort_transaction(30)
            self.aborted += 1
            self._rewind()
            return
        self.committed += len(orders)
        if self.on_commit is not None:
            self.on_commit(self.committed)

    def _commit(self) -> None:
        """commit_transaction, again while librdkafka says the error is retriable (its documented use)."""
        while True:
            try:
                self.producer.commit_transaction(30)
                return
            except KafkaException as e:
                if not e.args[0].retriable():
                    raise

    def _rewind(self) -> None:
        """Seek every assigned partition back to the group's committed offset (the start when none)."""
        committed = self.consumer.committed(self.consumer.assignment(), timeout=30)
        for tp in committed:
            offset = tp.offset if tp.offset >= 0 else OFFSET_BEGINNING
            self.consumer.seek(TopicPartition(tp.topic, tp.partition, offset))
