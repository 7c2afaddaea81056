"""A broker restarted under load: its listener binds at once but reads no request before its start-up has ended
(Kafka's SocketServer.startProcessingRequests), so no client is answered UNKNOWN_SERVER_ERROR by a broker whose
actors do not exist yet, and an idempotent producer fails no send."""

from __future__ import annotations

import logging
import socket
import struct
import threading
import time
from pathlib import Path
from typing import Any

from cluster_helpers import Cluster, recv_exact
from kafka_clients_helpers import OVERRIDES, ProducerThread, bootstrap, read_partition

from messages.common import Errors
from protocol.framing import RequestHeader, decode_response, encode_request
from protocol.records import iter_batches

TOPIC = "restarted"
METADATA_V1 = 1


class MetadataProbe:
    """A raw client that reconnects to one broker every few ms and asks for the topic's metadata as soon as it is
    connected: it sees whatever the broker answers right after its listener binds. ``codes``: every error code of
    every answer (topic and partitions); ``answers``: how many answers it read."""

    def __init__(self, host: str, port: int) -> None:
        self.address = (host, port)
        self.codes: list[int] = []
        self.answers = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="metadata-probe", daemon=True)

    def start(self) -> MetadataProbe:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)

    def _run(self) -> None:
        corr = 0
        frame_of = lambda c: encode_request(RequestHeader(3, METADATA_V1, c, "restart-probe"),  # noqa: E731
                                            {"topics": [{"name": TOPIC}]})
        while not self._stop.is_set():
            try:
                with socket.create_connection(self.address, timeout=1.0) as s:
                    s.settimeout(30.0)  # a broker still starting holds the request: its answer comes later
                    corr += 1
                    s.sendall(frame_of(corr))
                    size = struct.unpack(">i", recv_exact(s, 4))[0]
                    _, body = decode_response(3, METADATA_V1, recv_exact(s, size))
            except OSError:
                time.sleep(0.01)  # refused (the broker is down), reset, or closed: try again at once
                continue
            self.answers += 1
            for t in body["topics"]:
                self.codes.append(t["error_code"])
                self.codes.extend(p["error_code"] for p in t["partitions"])
            time.sleep(0.02)


class _EosLog(logging.Logger):
    """A logger for librdkafka (its ``logger`` setting) that keeps every line."""

    def __init__(self) -> None:
        super().__init__("test-broker-restart-librdkafka", logging.DEBUG)
        self.lines: list[str] = []

    def handle(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_producers_keep_writing_while_a_broker_is_killed_and_restarted(start_cluster: Any) -> None:
    """The leader of an idempotent producer's partition is SIGKILLed and started again at once, twice (its old
    registration is still there: the new process waits for it to expire before its start-up ends). The producer
    (librdkafka, acks=all, retrying connections every 50-100 ms) and a raw client that reconnects in a loop hit the
    new process as soon as it binds. No answer carries UNKNOWN_SERVER_ERROR, no broker found an actor missing, the
    producer failed no send and hit no error, and every acknowledged record is in the log exactly once, at its
    offset."""
    c: Cluster = start_cluster(3, overrides=OVERRIDES, killed_under_load=True)
    c.create_topic(TOPIC, assignment={0: [0, 1, 2]}, configs={"min.insync.replicas": "2"})
    c.wait_partition(TOPIC, 0, lambda s: len(s["isr"]) == 3, what="full ISR")
    client_errors: list[str] = []
    eos_log = _EosLog()
    producer = ProducerThread(bootstrap(c), TOPIC, extra={
        "enable.idempotence": True, "reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 100,
        # librdkafka's epoch bumps and drains, kept for the messages of the checks below (kactor's clients send its
        # log to a silent logger)
        "debug": "eos", "logger": eos_log,
        "error_cb": lambda e: client_errors.append(f"{e.name()}{' (fatal)' if e.fatal() else ''}: {e.str()}")})
    probes: list[MetadataProbe] = []
    producer.start()
    try:
        seen = producer.wait_acks(c, 50, "before any fault")
        for round_ in range(2):
            leader = c.partition_state(TOPIC, 0)["leader"]
            probe = MetadataProbe(*c.lc.broker_address(leader)).start()
            probes.append(probe)
            c.wait(lambda p=probe: p.answers > 0, 30, f"round {round_}: the probe answered by broker {leader}")
            c.kill(leader)
            c.restart(leader, wait=False)
            c.wait(lambda p=probe, n=probe.answers: p.answers > n + 3, 60,
                   f"round {round_}: answers from the restarted broker {leader}")
            c.wait_partition(TOPIC, 0, lambda s, b=leader: b in s["isr"] and len(s["isr"]) == 3, 60,
                             f"round {round_}: broker {leader} back in the ISR")
            seen = producer.wait_acks(c, seen + 50, f"round {round_}: acks after broker {leader}'s restart")
    finally:
        for probe in probes:
            probe.stop()
        producer.stop()
    logs = {b: Path(c.lc.logs[b]).read_text(encoding="utf-8", errors="replace") for b in c.lc.logs}
    assert {b: [line for line in log.splitlines() if "no actor" in line] for b, log in logs.items()} == \
        {b: [] for b in logs}
    assert all(code != Errors.UNKNOWN_SERVER_ERROR for probe in probes for code in probe.codes), \
        [probe.codes for probe in probes]
    assert producer.failed == [] and not [e for e in client_errors if "UNKNOWN_SERVER_ERROR" in e or "fatal" in e], \
        (producer.failed[:5], client_errors)
    log = read_partition(bootstrap(c), TOPIC, 0)
    offsets = dict(log)
    values = {v for _, v in log}
    # librdkafka reports a batch without an offset (None) when it learned of its write only from a later batch's
    # acknowledgement (rd_kafka_dr_implicit_ack: the answer was lost with the killed leader): it is then only known to
    # be in the log, somewhere
    assert [(o, v) for o, v in producer.acked if (offsets.get(o) != v if o is not None else v not in values)] == []
    # The broker never writes one (producer id, epoch, sequence) twice. librdkafka can write a record twice itself
    # (confluentinc/librdkafka#4953, open): when the restarted leader answers OUT_OF_ORDER_SEQUENCE_NUMBER to a batch
    # sent before the retry of an earlier one whose answer died with the old leader (as Kafka answers it), the client
    # bumps its epoch and re-sends both from sequence 0, though the earlier one was written. A record is then in the
    # log once per epoch, never twice in one.
    leader = c.partition_state(TOPIC, 0)["leader"]
    copies: dict[str, list[tuple[int, int, int]]] = {}  # value -> [(offset, producer epoch, sequence)]
    for segment in sorted((Path(c.log_dir(leader)) / f"{TOPIC}-0").glob("*.log")):
        for batch in iter_batches(segment.read_bytes()):
            for i, record in enumerate(batch.records()):
                copies.setdefault(record.value.decode(), []).append(
                    (batch.base_offset + record.offset_delta, batch.producer_epoch, batch.base_sequence + i))
    assert sorted(copies) == sorted(values)
    written = [(epoch, seq) for cs in copies.values() for _, epoch, seq in cs]
    eos = [line for line in eos_log.lines if "epoch" in line.lower()][-20:]
    assert len(written) == len(set(written)), ("a (producer epoch, sequence) written twice", eos)
    twice = {v: cs for v, cs in copies.items() if len(cs) > 1}
    assert all(len({epoch for _, epoch, _ in cs}) == len(cs) for cs in twice.values()), (twice, client_errors, eos)
    assert len(producer.acked) >= 150
