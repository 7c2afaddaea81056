"""The simulated network of `kactor sim` (sim/runtime.py's `Sim` is one): the links between the brokers and the
requests on them, on simulated time.

A NetSend is encoded to its Kafka request frame and decoded on the other side with the live transport's own
functions (edges/net/framing.py, the ApiSpec's converters) and reaches the route actor as a ``NetRequest`` after the
link's seeded latency, in order per connection (a *lane*: sender, destination, sending actor); the answer goes back the
same way. A send to a broker that is down or cut off by a partition, and every request in flight on a link when it is
cut or its target crashes, is answered ``NetSendFailed`` (as the transport's connection errors). What reaches a broker
whose start-up has not ended waits unread until it has (Transport.start_processing_requests). A request awaiting an
answer has the transport's deadline (its sender's timeout, else request.timeout.ms): unanswered by then it fails "timed
out" and its connection closes, failing the rest on it (Outbound.sweep); an answer coming later is dropped. A one-way
cut holds what is sent in its dead direction (TCP retransmitting it) until it heals; a slow link adds latency to both
directions until it heals; a reset fails what is in flight on a link's connections.

`NetworkModel` holds the links' state and these methods; the event loop, the brokers and their delivery
(``at``, ``note``, ``deliver``, ``brokers``, ``zk``, ``check_broker_epoch``) are `Sim`'s, which inherits it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from actors import names
from actors.core_effects import actor_for
from core.api.registry import RequestContext, spec_for_key
from edges.net.framing import (
    decode_inbound,
    decode_outbound,
    encode_inbound_response,
    encode_outbound,
    outbound_spec,
)
from messages.net import NetRequest, NetResponse, NetSendFailed
from messages.requests import LeaderAndIsrRequest, StopReplicaRequest, UpdateMetadataRequest
from protocol.zk.paths import BrokerIdZNode
from sim.broker import SimBroker
from sim.rounding import round_ms

if TYPE_CHECKING:
    from random import Random

    from actors.clock import ManualClock
    from sim.zookeeper import ZooKeeperModel

CLIENT_LATENCY_MS = 0.5
BASE_PORT = 9092  # broker b listens (in name only: nothing is bound) on 127.0.0.1:BASE_PORT + b
HOST = "127.0.0.1"
REQUEST_TIMEOUT_MS = 30000.0  # the live transport's request.timeout.ms (edges/transport.py DEFAULT_REQUEST_TIMEOUT_S)
TCP_RTO_MS = 200.0  # Linux's minimum retransmission timeout, doubled at each retransmission of a segment
_CONTROL_REQUESTS = (LeaderAndIsrRequest, UpdateMetadataRequest, StopReplicaRequest)  # carry a broker epoch


class Pending:
    """A request on its way or being handled: who waits for its answer and how to decode it."""

    __slots__ = ("src", "incarnation", "dst", "reply_to", "request_id", "cause", "spec", "version", "corr",
                 "on_answer", "lane", "broker_epoch")

    def __init__(self, src: SimBroker | None, incarnation: int, dst: int, reply_to: str | None, request_id: int,
                 cause: int | None, spec: Any, version: int, corr: int,
                 on_answer: Callable[[Any], None] | None = None) -> None:
        self.src, self.incarnation, self.dst, self.reply_to = src, incarnation, dst, reply_to
        self.request_id, self.cause, self.spec, self.version, self.corr = request_id, cause, spec, version, corr
        self.on_answer = on_answer  # a simulated client's request: its callback (None: failed)
        self.lane = (src.id if src is not None else -1, dst, reply_to or "")
        self.broker_epoch: int | None = None  # a controller request's: the broker epoch it was sent for


class NetworkModel:
    """The links between the brokers (seeded latencies; cuts two-way and one-way, slow links, resets) and the
    requests in flight on them."""

    # Sim's, which this is part of
    rng: Random
    brokers: dict[int, SimBroker]
    zk: ZooKeeperModel
    now: float
    drained_ms: float
    last_fault_ms: float
    at: Callable[[float, Callable[[], None]], None]
    at_time: Callable[[float, Callable[[], None]], None]
    clock: ManualClock
    note: Callable[[str], None]
    deliver: Callable[..., None]
    check_broker_epoch: Callable[[SimBroker, int, Any], None]

    def _init_network(self) -> None:
        """The links as a run starts: every one up, at a seeded latency (ms, both directions alike)."""
        self.latency = {(a, b): round(self.rng.uniform(0.2, 3.0), 3) for a in self.brokers for b in self.brokers}
        self.cut: set[frozenset[int]] = set()
        self.one_way: set[tuple[int, int]] = set()  # (from, to): that direction of the link dead (`one_way_cut`)
        self.stuck: list[tuple[int, int, tuple[Any, ...], float, Callable[[], None]]] = []  # sent into a dead way
        self.slow: dict[frozenset[int], tuple[float, float]] = {}  # a slow link: its two directions' own latencies
        self._request_ids = itertools.count(1)
        self._lane_free: dict[tuple[Any, ...], float] = {}
        self.pending: dict[int, Pending] = {}  # by the inbound request id the target's actors answer with

    def partition(self, a: int, b: int) -> None:
        """Cut the link between brokers a and b both ways; what is in flight on it fails."""
        self.cut.add(frozenset((a, b)))
        self.note(f"partition b{a}|b{b}")
        self.last_fault_ms = self.now
        self.fail_in_flight(lambda p: p.src is not None and frozenset((p.src.id, p.dst)) == frozenset((a, b)),
                            "connection lost (partitioned)")

    def reset_link(self, a: int, b: int) -> None:
        """Every connection between brokers a and b dropped on its own (a reset: a middlebox's idle timeout, a peer's
        NIC): the requests in flight on them fail as the transport's connection errors fail them, and the next ones
        go on new connections; nothing is cut."""
        key = frozenset((a, b))
        self.note(f"connection reset b{a}|b{b}")
        self.last_fault_ms = self.now
        self.fail_in_flight(lambda p: p.src is not None and frozenset((p.src.id, p.dst)) == key,
                            "connection reset by peer")
        self.forget_lanes(a, b)
        self.forget_lanes(b, a)

    def one_way_cut(self, a: int, b: int) -> None:
        """Cut the link's a->b direction only (b->a still works): nothing is reset, as with TCP when one way's
        packets are lost — what a sends to b (its requests, its answers to b's) is held, retransmitted until the way
        heals, so a's requests to b and b's to a go unanswered, failing at their request timeout if it comes first."""
        self.one_way.add((a, b))
        self.note(f"one-way cut b{a}>b{b}")
        self.last_fault_ms = self.now

    def slow_link(self, a: int, b: int, extra_ms: float) -> None:
        """The link a|b slows down: ``extra_ms`` more latency both ways until it heals (what is sent meanwhile keeps
        its slow arrival, a later frame on the same connection arriving after it)."""
        key = frozenset((a, b))
        if key in self.slow:
            return
        self.slow[key] = (self.latency[(a, b)], self.latency[(b, a)])
        self.latency[(a, b)] = round(self.latency[(a, b)] + extra_ms, 3)
        self.latency[(b, a)] = round(self.latency[(b, a)] + extra_ms, 3)
        self.note(f"slow link b{a}|b{b} +{extra_ms:.0f} ms")
        self.last_fault_ms = self.now

    def faulty_links(self) -> list[tuple[int, int]]:
        """Every link cut (either way) or slow, as (lower, higher) broker id pairs in order."""
        links = {tuple(sorted(c)) for c in self.cut} | {tuple(sorted(d)) for d in self.one_way}
        return sorted(links | {tuple(sorted(k)) for k in self.slow})  # type: ignore[arg-type]

    def heal(self, a: int, b: int) -> None:
        self.cut.discard(frozenset((a, b)))
        self.note(f"heal b{a}|b{b}")
        self.last_fault_ms = self.now
        if self.one_way or self.slow:
            self._heal_link(a, b)

    def _heal_link(self, a: int, b: int) -> None:
        """A one-way cut or a slow link healed: what was held goes at its next retransmission (TCP's timeout,
        TCP_RTO_MS doubled at each one since it was first sent), the latencies come back; the cluster counts as
        healthy again once what was held or slowed has arrived."""
        key = frozenset((a, b))
        if key in self.slow:
            self.latency[(a, b)], self.latency[(b, a)] = self.slow.pop(key)
        self.one_way.discard((a, b))
        self.one_way.discard((b, a))
        held = [s for s in self.stuck if frozenset(s[:2]) == key]
        self.stuck = [s for s in self.stuck if frozenset(s[:2]) != key]
        for x, y, lane, sent, land in held:
            wait, again = TCP_RTO_MS, sent + TCP_RTO_MS
            while again < self.now:
                wait *= 2
                again += wait
            self.at_time(self._lane_arrival(lane, again - self.now + self.latency[(x, y)]), land)
        until = max([t for k, t in self._lane_free.items() if frozenset(k[-3:-1]) == key] + [self.now])
        if until > self.drained_ms:
            self.drained_ms = until

            def drained() -> None:
                if self.now >= self.drained_ms:
                    self.note(f"link b{a}|b{b} drained")
                    self.last_fault_ms = self.now

            self.at(until - self.now, drained)

    def link_ok(self, a: int, b: int) -> bool:
        """The link between ``a`` and ``b`` works both ways at its usual latency: not cut either way, not slow, and
        nothing it held or slowed still on its way (`drained_ms`, kept for all links)."""
        if not (self.cut or self.one_way or self.slow):  # (no fault is the common case: no pair built to look up)
            return self.clock.now_ms() >= self.drained_ms
        return (frozenset((a, b)) not in self.cut and (a, b) not in self.one_way and (b, a) not in self.one_way
                and frozenset((a, b)) not in self.slow and self.clock.now_ms() >= self.drained_ms)

    def reachable(self, a: int, b: int) -> bool:
        """b is up and the link from a is not cut (no cut is the common case: no pair built to look up)."""
        return self.brokers[b].rt is not None and not (self.cut and frozenset((a, b)) in self.cut)

    def _lane_arrival(self, lane: tuple[Any, ...], latency: float) -> float:
        """When a frame sent now on ``lane`` arrives (rounded as `Sim.at` rounds): in order within a connection,
        never before what was sent on it earlier. (`Sim.at_time` of it is the event `Sim.at` of ``arrive - now`` made
        before: that difference and the sum back are exact at a run's clock values, and a rounded time rounds to
        itself.)"""
        arrive = round_ms(self.clock.now_ms() + latency)
        free = self._lane_free.get(lane)
        if free is not None and free > arrive:
            arrive = free
        self._lane_free[lane] = arrive
        return arrive

    def net_send(self, src: SimBroker, incarnation: int, dst: int, body: Any, request_id: int, reply_to: str | None,
                 cause: int | None, timeout_ms: float | None = None) -> None:
        """Outbound.send: the frame encoded now; it arrives after the link's latency unless the link is cut. A
        request awaiting an answer fails at its deadline (``timeout_ms``, else request.timeout.ms) if still
        unanswered: `_timed_out`."""
        corr = next(self._request_ids)
        spec = outbound_spec(body)
        frame = encode_outbound(spec, body, corr, f"broker-{src.id}")
        pending = Pending(src, incarnation, dst, reply_to, request_id, cause, spec, spec.send_version, corr)
        if dst not in self.brokers or not self.reachable(src.id, dst):
            self._fail(pending, f"cannot connect to {HOST}:{BASE_PORT + dst}")
            return
        rid = corr
        self.pending[rid] = pending
        if reply_to is not None:  # a one-way request never times out (Outbound.send: its deadline is infinite)
            self.at(REQUEST_TIMEOUT_MS if timeout_ms is None else float(timeout_ms), lambda: self._timed_out(rid))
        self._transmit(pending.lane, src.id, dst, lambda: self._arrive(rid, frame))

    def client_request(self, dst: int, body: Any, version: int, on_answer: Callable[[Any], None],
                       client_id: str = "sim-client", route: str = names.REPLICA_MANAGER,
                       expects: bool = True, timeout_ms: float | None = None) -> None:
        """A simulated client's request, already the internal request its Kafka request converts to, to ``route``
        (the actor its ApiSpec routes it to); the answer (the route's internal response, or None when the connection
        failed) goes to ``on_answer``. ``expects`` False (a Produce with acks=0): no answer is awaited, and
        ``on_answer`` hears only of a connection that failed before the request went out. ``timeout_ms``: the
        client's request.timeout.ms (None: it waits for ever); unanswered by then, it hears None and its connection
        closes (the client's NetworkClient), failing the rest on it."""
        rid = next(self._request_ids)
        pending = Pending(None, 0, dst, None, rid, None, None, version, rid, on_answer)
        pending.lane = (-1, dst, client_id)
        if not self._accepting(self.brokers[dst]):
            self.at(CLIENT_LATENCY_MS, lambda: on_answer(None))
            return
        if expects:
            self.pending[rid] = pending
            if timeout_ms is not None:
                self.at(float(timeout_ms), lambda: self._timed_out(rid))

        def arrive() -> None:
            target = self.brokers[dst]
            if expects and rid not in self.pending or not self._accepting(target):
                if expects and self.pending.pop(rid, None) is not None:
                    on_answer(None)
                return
            if not target.processing:
                target.unread.append(arrive)
                return
            self.deliver(target, target.incarnation, route,
                         NetRequest(rid, rid, body, expects, version, client_id, HOST), names.EDGE_NET)

        self.at_time(self._lane_arrival(pending.lane, CLIENT_LATENCY_MS), arrive)

    def _arrive(self, rid: int, frame: bytes) -> None:
        """Inbound.on_request on the target: decoded, converted and routed as a NetRequest."""
        pending = self.pending.get(rid)
        if pending is None:
            return
        target = self.brokers[pending.dst]
        assert pending.src is not None
        if not self.reachable(pending.src.id, pending.dst):
            del self.pending[rid]
            self._fail(pending, "connection lost")
            return
        if not target.processing:
            target.unread.append(lambda: self._arrive(rid, frame))
            return
        request = decode_inbound(frame[4:])  # without its size, as cut_frame hands it on
        header = request.header
        spec = spec_for_key(header.request_api_key)
        ctx = RequestContext(header.request_api_version, header.correlation_id, header.client_id or "", HOST, rid,
                             "PLAINTEXT")
        internal = spec.request_from_wire(header.request_api_version, request.body, ctx)
        if isinstance(internal, _CONTROL_REQUESTS):
            pending.broker_epoch = internal.broker_epoch
        expects = spec.route_answers(header.request_api_version, request.body)
        if not expects:
            del self.pending[rid]
        route = actor_for(spec.route)
        self.deliver(target, target.incarnation, route,
                     NetRequest(rid, rid, internal, expects, header.request_api_version, header.client_id or "",
                                HOST), names.EDGE_NET)

    @staticmethod
    def _accepting(broker: SimBroker) -> bool:
        """A client connects: the broker is up and has not stopped processing requests (serving, or still starting:
        its listeners are bound from the start, SocketServer.startup)."""
        return broker.up and not broker.closed

    def start_processing_requests(self, broker: SimBroker) -> None:
        """Transport.start_processing_requests: the requests that waited unread are read now, in the order they
        came (the transport registers their connections for reading; the next select reads them)."""
        node = self.zk.nodes.get(BrokerIdZNode.path(broker.id))
        if node is not None and node.ephemeral_owner == broker.session:
            broker.registered_epoch = node.czxid
        broker.processing = True
        unread, broker.unread = broker.unread, []
        for read in unread:
            self.at(0.0, read)

    def net_reply(self, broker: SimBroker, rid: int, body: Any) -> None:
        """Inbound.reply then Outbound's answer: encoded by the target, decoded by the sender after the latency."""
        pending = self.pending.get(rid)
        if pending is None or pending.dst != broker.id:
            return
        if pending.broker_epoch is not None:
            self.check_broker_epoch(broker, pending.broker_epoch, body)
        if pending.src is None:
            del self.pending[rid]
            callback = pending.on_answer
            assert callback is not None
            self.at(CLIENT_LATENCY_MS, lambda: callback(body))
            return
        wire = pending.spec.response_to_wire(pending.version, body)
        frame = encode_inbound_response(pending.spec, pending.version, pending.corr, wire)
        src = pending.src

        def back() -> None:
            if self.pending.pop(rid, None) is None:
                return
            if not self.reachable(pending.dst, src.id):
                self._fail(pending, "connection lost")
                return
            _, answer = decode_outbound(pending.spec, frame[4:])
            if pending.reply_to is not None:
                self.deliver(src, pending.incarnation, pending.reply_to, NetResponse(pending.request_id, answer),
                             names.EDGE_NET, pending.cause)

        self._transmit(("reply", *pending.lane), pending.dst, src.id, back)

    def _transmit(self, lane: tuple[Any, ...], a: int, b: int, land: Callable[[], None]) -> None:
        """A frame from broker a to broker b on ``lane``: ``land`` after the link's latency, in order on the lane;
        held while the a->b direction is dead (`one_way_cut`: TCP keeps retransmitting it, the connection stays)."""
        if self.one_way and (a, b) in self.one_way:
            self.stuck.append((a, b, lane, self.now, land))
            return
        self.at_time(self._lane_arrival(lane, self.latency[(a, b)]), land)

    def _timed_out(self, rid: int) -> None:
        """Outbound.sweep at a request's deadline: still unanswered, it fails "timed out" and its connection is
        closed, failing every other request on it (NetworkClient's disconnect); an answer coming later finds no
        request waiting and is dropped (Outbound._on_response)."""
        pending = self.pending.pop(rid, None)
        if pending is None:
            return
        peer = f"{HOST}:{BASE_PORT + pending.dst}"
        src = f"b{pending.src.id}" if pending.src is not None else "client"
        self.note(f"{src}>b{pending.dst} request timed out")
        self.last_fault_ms = self.now
        self._fail(pending, f"request to {peer} timed out")
        lane = pending.lane
        self.fail_in_flight(lambda p: p.lane == lane, f"connection to {peer} closed after a request timed out")
        self._lane_free.pop(lane, None)  # what is sent next goes on a new connection, behind nothing
        self._lane_free.pop(("reply", *lane), None)

    def forget_lanes(self, src: int, dst: int) -> None:
        """src's connections to dst closed: what it sends next goes on new ones, behind nothing of the old."""
        for key in [k for k in self._lane_free if k[-3:-1] == (src, dst)]:
            del self._lane_free[key]

    def fail_in_flight(self, which: Callable[[Pending], bool], error: str) -> None:
        for rid in sorted(rid for rid, p in self.pending.items() if which(p)):
            self._fail(self.pending.pop(rid), error)

    def _fail(self, pending: Pending, error: str) -> None:
        if pending.src is None:
            callback = pending.on_answer
            assert callback is not None
            self.at(0.0, lambda: callback(None))
            return
        if pending.reply_to is None:
            return
        src, inc = pending.src, pending.incarnation
        self.at(0.0, lambda: self.deliver(src, inc, pending.reply_to, NetSendFailed(pending.request_id, error),
                                          names.EDGE_NET, pending.cause))


__all__ = ["BASE_PORT", "HOST", "REQUEST_TIMEOUT_MS", "NetworkModel", "Pending"]
