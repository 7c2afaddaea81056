"""Helpers for the edge tests: test messages and actors, a recording observer, polling, and the Node bundle."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import attrs

from actors.base import KActor
from actors.runtime import Runtime
from core.api import registry
from core.api.registry import ApiSpec
from edges.timer import TimerEdge
from edges.transport import Transport
from messages.common import Errors
from messages.net import NetReply, NetRequest, NetSend
from messages.registry import message
from messages.replication import ProducePartitionResponse, ProduceResponse


@message
class EdgeTestArm:
    """Test input: ask the receiving actor to arm timer ``key``."""

    key: str
    delay_ms: float


@message
class EdgeTestDisarm:
    key: str


@message
class EdgeTestBench:
    """Test input: keep ``window`` requests of ``size`` bytes in flight to echo@host:port until ``total`` answered."""

    host: str
    port: int
    total: int
    window: int
    size: int


# -- test APIs: Kafka APIs kactor does not serve (SASL, delegation tokens) carry test values to the test actors ------
@message
class EdgeEcho:
    """Sent as SaslAuthenticate v1 (``auth_bytes``, UTF-8), routed to the actor "echo"; answered with itself."""

    text: str


@message
class EdgeHole:
    """Sent as SaslHandshake v1 (``mechanism``), routed to the actor "hole" (which never answers)."""

    text: str


@message
class EdgeNobody:
    """Sent as RenewDelegationToken v1, routed to an actor no test process has."""

    n: int


@message
class EdgeHandled:
    """Sent as ExpireDelegationToken v1, routed to the edge handler "test"."""

    n: int


@message
class EdgeFailed:
    """A test API's whole-request error answer."""

    error_code: int


def _echo_response(v: int, r: Any) -> dict[str, Any]:
    body = {"error_code": 0, "error_message": None, "auth_bytes": r.text.encode()}
    return body | {"session_lifetime_ms": 0} if v >= 1 else body


def _hole_response(v: int, r: Any) -> dict[str, Any]:
    return {"error_code": 0, "mechanisms": [r.text]}


def _token_response(v: int, r: Any) -> dict[str, Any]:
    return {"error_code": 0, "expiry_timestamp_ms": r.n, "throttle_time_ms": 0}


def _error_or(make: Callable[[dict[str, Any]], Any]) -> Callable[[int, dict[str, Any]], Any]:
    return lambda v, b: EdgeFailed(b["error_code"]) if b["error_code"] else make(b)


TEST_SPECS = (
    ApiSpec(36, "echo", lambda v, b, c: EdgeEcho(b["auth_bytes"].decode()), _echo_response,
            lambda v, b, e: {"error_code": e, "error_message": None, "auth_bytes": b"", "session_lifetime_ms": 0},
            request_type=EdgeEcho, send_version=1, request_to_wire=lambda r: {"auth_bytes": r.text.encode()},
            response_from_wire=_error_or(lambda b: EdgeEcho(b["auth_bytes"].decode()))),
    ApiSpec(17, "hole", lambda v, b, c: EdgeHole(b["mechanism"]), _hole_response,
            lambda v, b, e: {"error_code": e, "mechanisms": []}, request_type=EdgeHole, send_version=1,
            request_to_wire=lambda r: {"mechanism": r.text},
            response_from_wire=_error_or(lambda b: EdgeHole(b["mechanisms"][0]))),
    ApiSpec(39, "nobody", lambda v, b, c: EdgeNobody(b["renew_period_ms"]), _token_response,
            lambda v, b, e: {"error_code": e, "expiry_timestamp_ms": -1, "throttle_time_ms": 0},
            request_type=EdgeNobody, send_version=1, request_to_wire=lambda r: {"hmac": b"", "renew_period_ms": r.n},
            response_from_wire=_error_or(lambda b: EdgeNobody(b["expiry_timestamp_ms"]))),
    ApiSpec(40, "edge:test", lambda v, b, c: EdgeHandled(b["expiry_time_period_ms"]), _token_response,
            lambda v, b, e: {"error_code": e, "expiry_timestamp_ms": -1, "throttle_time_ms": 0},
            request_type=EdgeHandled, send_version=1,
            request_to_wire=lambda r: {"hmac": b"", "expiry_time_period_ms": r.n},
            response_from_wire=_error_or(lambda b: EdgeHandled(b["expiry_timestamp_ms"]))),
)


def register_test_apis() -> None:
    """Serve the test APIs in this process, in place of the real specs of their keys (the edge tests' fixture undoes
    it; a peer subprocess keeps them)."""
    for spec in TEST_SPECS:
        registry.unregister(spec.api_key)
        registry.register(spec)


@attrs.frozen
class Rec:
    """One delivered message, as the runtime's observer saw it."""

    seq: int
    sender: str
    receiver: str
    body: Any
    cause: int | None


class Recorder:
    """The runtime observer: keeps every delivered message (appended from the driver thread)."""

    def __init__(self) -> None:
        self.records: list[Rec] = []
        # (type name, receiver) → how many: lets a poll loop check progress without scanning every record.
        self.counts: dict[tuple[str, str], int] = {}

    def __call__(self, seq: int, ts: float, sender: str, receiver: str, body: Any, cause: int | None) -> None:
        self.records.append(Rec(seq, sender, receiver, body, cause))
        k = (type(body).__name__, receiver)
        self.counts[k] = self.counts.get(k, 0) + 1

    def count(self, body_type: type, receiver: str) -> int:
        return self.counts.get((body_type.__name__, receiver), 0)

    def of(self, body_type: type, receiver: str | None = None) -> list[Rec]:
        return [r for r in list(self.records)
                if isinstance(r.body, body_type) and (receiver is None or r.receiver == receiver)]

    def wait(self, body_type: type, receiver: str | None = None, count: int = 1, timeout_s: float = 3.0) -> list[Rec]:
        """Poll until ``count`` messages of ``body_type`` reached ``receiver``; fail the test on the deadline."""
        ok = poll(lambda: len(self.of(body_type, receiver)) >= count, timeout_s)
        found = self.of(body_type, receiver)
        assert ok, f"only {len(found)} of {count} {body_type.__name__} reached {receiver} within {timeout_s}s"
        return found

    def seq_of(self, body: Any, receiver: str) -> int:
        return next(r.seq for r in list(self.records) if r.body == body and r.receiver == receiver)


def poll(pred: Callable[[], bool], timeout_s: float = 3.0, interval_s: float = 0.002) -> bool:
    """True as soon as ``pred()`` holds; False after ``timeout_s`` (short sleeps between checks)."""
    deadline = time.monotonic() + timeout_s
    while True:
        if pred():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval_s)


# -- test actors ---------------------------------------------------------------------------------------------------
class Echo(KActor):
    """Answers every NetRequest with its own body (an EdgeEcho)."""

    def on_NetRequest(self, msg: NetRequest, sender: str) -> None:
        if msg.reply_expected:
            self.post("net", NetReply(msg.connection_id, msg.request_id, msg.body))


class Arming(KActor):
    """Arms and cancels timers on request, through the "timer" actor like any production actor."""

    def on_EdgeTestArm(self, msg: EdgeTestArm, sender: str) -> None:
        self.schedule(msg.key, msg.delay_ms)

    def on_EdgeTestDisarm(self, msg: EdgeTestDisarm, sender: str) -> None:
        self.cancel_timer(msg.key)

    def on_TimerFired(self, msg: Any, sender: str) -> None:
        pass


class Pump(KActor):
    """Keeps a window of requests in flight for the throughput figure."""

    def on_EdgeTestBench(self, msg: EdgeTestBench, sender: str) -> None:
        self.cfg, self.sent, self.done = msg, 0, 0
        self.payload = EdgeEcho("x" * msg.size)
        for _ in range(msg.window):
            self._next()

    def _next(self) -> None:
        if self.sent < self.cfg.total:
            self.sent += 1
            self.post("net", NetSend(self.cfg.host, self.cfg.port, "echo", self.payload, self.sent, self.name))

    def on_NetResponse(self, msg: Any, sender: str) -> None:
        self.done += 1
        self._next()

    def on_NetSendFailed(self, msg: Any, sender: str) -> None:
        self.done += 1
        self._next()


@attrs.define
class Node:
    """One "process": a runtime with its driver running, a transport, and the standard actors."""

    rt: Runtime
    rec: Recorder
    net: Transport | None
    timer: TimerEdge | None

    @property
    def port(self) -> int:
        assert self.net is not None
        return self.net.port


class AnsweringRuntime:
    """A runtime whose "replica-manager" answers every Produce at once, with no error (the quota tests: what is
    measured is the network edge's, not the log's)."""

    process_name = "quota-test"

    def __init__(self) -> None:
        self.transport: Transport | None = None

    def has_actor(self, name: str) -> bool:
        return True

    def inject(self, to: str, body: Any, sender: str = "", cause: int | None = None) -> None:
        assert isinstance(body, NetRequest) and self.transport is not None
        parts = tuple(ProducePartitionResponse(p.tp, Errors.NONE, 0) for p in body.body.partitions)
        self.transport.reply(body.connection_id, body.request_id, ProduceResponse(parts))
