"""A broker restarted under load: its listener binds at once but reads no request before its start-up has ended
(Kafka's SocketServer.startProcessingRequests), so no client is answered UNKNOWN_SERVER_ERROR by a broker whose
actors do not exist yet, and an idempotent producer fails no send."""

from __future__ import annotations

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
    producer = ProducerThread(bootstrap(c), TOPIC, extra={
        "enable.idempotence": True, "reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 100,
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
    assert [(o, v) for o, v in producer.acked if offsets.get(o) != v] == []
    values = [v for _, v in log]
    assert len(values) == len(set(values)), "a record written twice by the idempotent producer"
    assert len(producer.acked) >= 150
