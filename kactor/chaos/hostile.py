"""`kactor chaos`'s hostile client (issue #39): once a seed, at a step of its own stream (``hostile-<seed>``: the
schedule's operations and faults are untouched), raw Kafka requests that found issue #39's bugs, each held to Kafka
2.6.3's answer — as sim/hostile.py does in the simulator:

- FindCoordinator(TRANSACTION) and InitProducerId for ``chaos-hostile-<seed>``, then AddPartitionsToTxn of
  ``__transaction_state-0`` and ``__consumer_offsets-0``: 29 TOPIC_AUTHORIZATION_FAILED each
  (KafkaApis.handleAddPartitionToTxnRequest never authorizes an internal topic); then EndTxn(commit): 48
  INVALID_TXN_STATE (nothing was added);
- a Produce (acks=1) to each internal topic that exists: 17 INVALID_TOPIC_EXCEPTION (appendToLocalLog with
  internalTopicsAllowed=false);
- to a data partition's leader, a batch whose CRC-32C does not match: 2 CORRUPT_MESSAGE; and bytes that hold no
  batch: 87 INVALID_RECORD (ProduceRequest.validateRecords).

Under the seed's faults a request can meet a broker that is down or a coordinator that moved: it is retried
(another broker, the coordinator looked up again) for HOSTILE_BOUND_S, and a request that got no definitive answer
by then is noted, not held against the brokers. A transactional batch of an unknown producer id (which sim/hostile.py
sends) is not sent here: 2.6.3 appends it and the partition's last stable offset then hangs below it for ever, which
would stall the run's read_committed consumer.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from edges.net.blocking_client import BlockingClient, TransportError
from kactor.chaos.history import Violation
from protocol.records import Record, build_batch

HOSTILE_BOUND_S = 20.0
RETRY_S = 0.2
NONE, CORRUPT_MESSAGE, NOT_LEADER, INVALID_TOPIC, NOT_ENOUGH_REPLICAS = 0, 2, 6, 17, 19
COORDINATOR_LOAD, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR = 14, 15, 16
TOPIC_AUTHORIZATION_FAILED, INVALID_TXN_STATE, CONCURRENT_TRANSACTIONS, INVALID_RECORD = 29, 48, 51, 87
RETRIABLE = frozenset({COORDINATOR_LOAD, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, CONCURRENT_TRANSACTIONS,
                       NOT_LEADER, NOT_ENOUGH_REPLICAS, 3, 5, 7, 20})  # + UNKNOWN_TOPIC, LEADER_NOT_AVAILABLE, ...
INTERNAL = ("__transaction_state", "__consumer_offsets")
_CRC_AT = 17  # a v2 batch header's CRC-32C


def hostile_step(seed: int, steps: int) -> int:
    """The step after whose operation the seed's hostile client runs (-1: no step)."""
    return random.Random(f"hostile-{seed}").randrange(steps) if steps > 0 else -1


Address = tuple[str, int]


class ChaosHostileClient:
    """``brokers()``: the registered brokers' addresses; ``leader(topic, partition)``: a partition's leader's address
    (None: none); ``exists(topic)``: whether the topic's znode is there. ``violations``, ``notes`` after `run`."""

    def __init__(self, seed: int, brokers: Callable[[], dict[int, Address]],
                 leader: Callable[[str, int], Address | None], exists: Callable[[str], bool],
                 data_partition: tuple[str, int] | None, bound_s: float = HOSTILE_BOUND_S) -> None:
        self.seed = seed
        self.brokers, self.leader, self.exists = brokers, leader, exists
        self.data_partition = data_partition
        self.bound_s = bound_s
        self.txn = f"chaos-hostile-{seed}"
        self.violations: list[Violation] = []
        self.notes: list[str] = []
        self._deadline = 0.0

    def run(self) -> None:
        self._deadline = time.monotonic() + self.bound_s
        self._transaction()
        for topic in INTERNAL:
            if self.exists(topic):
                batch = build_batch([Record(0, 0, None, f"poison-{self.seed}".encode())], first_timestamp=_now_ms())
                self._produce(f"Produce to {topic}-0", topic, 0, batch, INVALID_TOPIC, any_broker=True)
        if self.data_partition is not None:
            topic, p = self.data_partition
            corrupt = bytearray(build_batch([Record(0, 0, None, b"poison")], first_timestamp=_now_ms()))
            corrupt[_CRC_AT] ^= 0xFF
            self._produce(f"Produce of a batch with a wrong CRC to {topic}-{p}", topic, p, bytes(corrupt),
                          CORRUPT_MESSAGE)
            garbage = bytearray(random.Random(self.seed).getrandbits(8) for _ in range(61))
            garbage[8:12] = (10_000).to_bytes(4, "big")  # a size past the bytes: no whole batch, whatever the rest
            self._produce(f"Produce of garbage bytes to {topic}-{p}", topic, p, bytes(garbage), INVALID_RECORD)

    # -- the requests ---------------------------------------------------------------------------------------------
    def _judge(self, what: str, got: object, expected: object) -> None:
        self.notes.append(f"{what}: {got}")
        if got != expected:
            self.violations.append(Violation("hostile", f"{what} answered {got}, Kafka 2.6.3 answers {expected}"))

    def _ask(self, address: Address | None, api_key: int, version: int, body: dict) -> dict | None:
        if address is None:
            return None
        try:
            with BlockingClient(*address, connect_timeout_s=2.0, client_id="chaos-hostile") as c:
                return c.request_raw(api_key, version, body, timeout_s=5.0)
        except (TransportError, OSError):
            return None

    def _until(self, send: Callable[[], int | None], what: str) -> int | None:
        """``send()`` until it gives a code that is not retriable (None: no answer), within the bound."""
        while True:
            code = send()
            if code is not None and code not in RETRIABLE:
                return code
            if time.monotonic() >= self._deadline:
                self.notes.append(f"{what}: no definitive answer within {self.bound_s:.0f} s (last {code})")
                return None
            time.sleep(RETRY_S)

    def _any_broker(self) -> Address | None:
        brokers = self.brokers()
        return brokers[min(brokers)] if brokers else None

    def _transaction(self) -> None:
        coordinator: list[Address | None] = [None]

        def coordinator_request(api_key: int, body: dict) -> dict | None:
            if coordinator[0] is None:
                found = self._ask(self._any_broker(), 10, 2, {"key": self.txn, "key_type": 1})
                if found is None or found["error_code"] != NONE:
                    return None
                coordinator[0] = (found["host"], found["port"])
            answer = self._ask(coordinator[0], api_key, 1, body)
            if answer is None or answer.get("error_code") in (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE):
                coordinator[0] = None
            return answer

        init: list[dict | None] = [None]

        def init_producer_id() -> int | None:
            init[0] = coordinator_request(22, {"transactional_id": self.txn, "transaction_timeout_ms": 60000})
            return None if init[0] is None else init[0]["error_code"]

        if self._until(init_producer_id, "InitProducerId") != NONE or init[0] is None:
            return
        pid, epoch = init[0]["producer_id"], init[0]["producer_epoch"]
        added: list[dict[str, int]] = [{}]

        def add() -> int | None:
            answer = coordinator_request(24, {
                "v3_and_below_transactional_id": self.txn, "v3_and_below_producer_id": pid,
                "v3_and_below_producer_epoch": epoch,
                "v3_and_below_topics": [{"name": t, "partitions": [0]} for t in INTERNAL]})
            if answer is None:
                return None
            added[0] = {f"{t['name']}-{p['partition_index']}": p["partition_error_code"]
                        for t in answer["results_by_topic_v3_and_below"] for p in t["results_by_partition"]}
            codes = set(added[0].values())
            return codes.pop() if len(codes) == 1 else -2  # mixed codes: definitive
        if self._until(add, "AddPartitionsToTxn") is not None:
            self._judge("AddPartitionsToTxn of __transaction_state-0 and __consumer_offsets-0",
                        sorted(added[0].items()), sorted((f"{t}-0", TOPIC_AUTHORIZATION_FAILED) for t in INTERNAL))

        def end() -> int | None:
            answer = coordinator_request(26, {"transactional_id": self.txn, "producer_id": pid,
                                              "producer_epoch": epoch, "committed": True})
            return None if answer is None else answer["error_code"]
        code = self._until(end, "EndTxn")
        if code is not None:
            self._judge("EndTxn(commit) after it", code, INVALID_TXN_STATE)

    def _produce(self, what: str, topic: str, partition: int, records: bytes, expected: int,
                 any_broker: bool = False) -> None:
        def send() -> int | None:
            address = self._any_broker() if any_broker else self.leader(topic, partition)
            answer = self._ask(address, 0, 8, {"transactional_id": None, "acks": 1, "timeout_ms": 30000,
                                               "topic_data": [{"name": topic, "partition_data": [
                                                   {"index": partition, "records": records}]}]})
            return None if answer is None else answer["responses"][0]["partition_responses"][0]["error_code"]
        code = self._until(send, what)
        if code is not None:
            self._judge(what, code, expected)


def _now_ms() -> int:
    return int(time.time() * 1000)
