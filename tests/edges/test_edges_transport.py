"""The network edge: two runtimes in one test process talking Kafka's protocol over loopback (test APIs from
edge_support), raw sockets, a dying peer process, and the blocking client for command-line tools."""

from __future__ import annotations

import errno
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import attrs
import pytest
from edge_support import EdgeEcho, EdgeHandled, EdgeHole, EdgeNobody, EdgeTestBench, Pump, Recorder, poll

from actors import names
from actors.network_actor import NetworkActor
from actors.runtime import Runtime
from edges.transport import BlockingClient, Transport, TransportError, request
from messages.common import Errors
from messages.net import (
    NetClose,
    NetReply,
    NetRequest,
    NetResponse,
    NetSend,
    NetSendFailed,
)
from protocol.framing import RequestHeader, encode_request

REPO = Path(__file__).resolve().parents[2]
LOOPBACK = "127.0.0.1"


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def send(node: Any, msg: NetSend) -> int:
    """Inject a NetSend into node's "net" actor, as an actor would post it; returns the NetSend's seq."""
    node.rt.inject("net", msg, sender="test")
    assert poll(lambda: any(r.body == msg and r.receiver == "net" for r in node.rec.records), 2.0)
    return node.rec.seq_of(msg, "net")


def recv_closed(sock: socket.socket, timeout_s: float = 2.0) -> bool:
    """True if the peer closes ``sock`` (EOF or reset) within the timeout; data received meanwhile is ignored."""
    sock.settimeout(timeout_s)
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            if not sock.recv(65536):
                return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    return False


# -- round trips -------------------------------------------------------------------------------------------------
def test_round_trip_between_two_runtimes_with_cause_chain(make_node: Any) -> None:
    a, b = make_node("a"), make_node("b")
    assert a.port != b.port
    body = EdgeEcho("topic t, partitions 0-2")
    seq = send(a, NetSend(LOOPBACK, b.port, "echo", body, 7, "client"))
    (resp,) = a.rec.wait(NetResponse, "client")
    assert resp.body == NetResponse(7, body)
    assert resp.sender == "edge:net"
    assert resp.cause == seq  # the answer names the NetSend that asked for it
    # The remote side: a NetRequest from the edge (an external input), answered through its own "net".
    (req,) = b.rec.of(NetRequest, "echo")
    assert req.sender == "edge:net" and req.cause is None
    assert req.body.body == body and req.body.reply_expected is True
    # the Kafka header travels with the request: version, client id (the sending process's name), peer host
    assert (req.body.api_version, req.body.client_id, req.body.client_host) == (1, "a", "127.0.0.1")
    (reply,) = b.rec.of(NetReply, "net")
    assert reply.cause == req.seq
    # Both directions reuse connections: a second request opens nothing new.
    send(a, NetSend(LOOPBACK, b.port, "echo", EdgeEcho("again"), 8, "client"))
    assert [r.body.request_id for r in a.rec.wait(NetResponse, "client", count=2)] == [7, 8]
    assert a.net.connection_count() == (0, 1) and b.net.connection_count() == (1, 0)


def test_both_directions_and_many_in_flight(make_node: Any) -> None:
    a, b = make_node("a"), make_node("b")
    for i in range(50):
        a.rt.inject("net", NetSend(LOOPBACK, b.port, "echo", EdgeEcho(f"from-a {i}"), i, "client"), sender="test")
        b.rt.inject("net", NetSend(LOOPBACK, a.port, "echo", EdgeEcho(f"from-b {i}"), i, "client"), sender="test")
    ra = a.rec.wait(NetResponse, "client", count=50)
    rb = b.rec.wait(NetResponse, "client", count=50)
    assert sorted(r.body.request_id for r in ra) == list(range(50))
    assert all(r.body.body == EdgeEcho(f"from-a {r.body.request_id}") for r in ra)
    assert all(r.body.body == EdgeEcho(f"from-b {r.body.request_id}") for r in rb)


def test_one_way_send_arrives_without_reply_expected(make_node: Any) -> None:
    a, b = make_node("a"), make_node("b")
    send(a, NetSend(LOOPBACK, b.port, "echo", EdgeEcho("fire-and-forget"), 1, None))
    (req,) = b.rec.wait(NetRequest, "echo")
    # Kafka answers every request but Produce acks=0: the echo answers, and the sender drops the answer
    assert req.body.reply_expected is True and req.body.body == EdgeEcho("fire-and-forget")
    b.rec.wait(NetReply, "net")
    send(a, NetSend(LOOPBACK, b.port, "echo", EdgeEcho("next"), 2, "client"))
    assert a.rec.wait(NetResponse, "client")[0].body == NetResponse(2, EdgeEcho("next"))
    assert a.rec.of(NetResponse) == a.rec.of(NetResponse, "client") and len(a.rec.of(NetResponse)) == 1


def test_host_names_are_resolved_off_the_network_thread_and_every_address_tried(make_node: Any) -> None:
    """"localhost" may resolve to ::1 first; the server listens on 127.0.0.1 only, so the next address must be
    tried. Several sends queued during the lookup all go out once it finishes."""
    a, b = make_node("a"), make_node("b")
    for i in range(3):
        a.rt.inject("net", NetSend("localhost", b.port, "echo", EdgeEcho(f"via name {i}"), i, "client"),
                    sender="test")
    got = a.rec.wait(NetResponse, "client", count=3)
    assert sorted(r.body.body.text for r in got) == ["via name 0", "via name 1", "via name 2"]


def test_a_refused_address_falls_back_to_the_next(make_node: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = make_node("a"), make_node("b")
    dead = free_port()
    real = socket.getaddrinfo

    def two_addresses(host: str, *args: Any, **kw: Any) -> Any:
        if host != "two.example":
            return real(host, *args, **kw)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (LOOPBACK, dead)),
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", (LOOPBACK, b.port))]

    monkeypatch.setattr(socket, "getaddrinfo", two_addresses)
    send(a, NetSend("two.example", b.port, "echo", EdgeEcho("second address"), 1, "client"))
    assert a.rec.wait(NetResponse, "client")[0].body == NetResponse(1, EdgeEcho("second address"))


def test_5mb_body_round_trip(make_node: Any) -> None:
    a, b = make_node("a"), make_node("b")
    body = EdgeEcho("".join(f"partition-{i:07d}-" + "r" * 80 for i in range(50_000)))  # ~5.2 MB
    t0 = time.perf_counter()
    send(a, NetSend(LOOPBACK, b.port, "echo", body, 1, "client"))
    (resp,) = a.rec.wait(NetResponse, "client", timeout_s=10.0)
    elapsed = time.perf_counter() - t0
    assert resp.body.body == body
    print(f"\n5.2 MB round trip: {elapsed * 1000:.0f} ms")


def test_sequential_requests_are_not_delayed(make_node: Any) -> None:
    """Window 1, one after another: each send must wake the network thread at once, never wait for a sweep."""
    a, b = make_node("a", extra={"pump": Pump}), make_node("b")
    t0 = time.perf_counter()
    a.rt.inject("pump", EdgeTestBench(LOOPBACK, b.port, 300, 1, 100), sender="test")
    assert poll(lambda: a.rec.count(NetResponse, "pump") >= 300, 3.0, interval_s=0.005)
    # ~0.1 s normally; a lost wake-up costs up to a 50 ms sweep per request.
    assert time.perf_counter() - t0 < 2.0


# -- failures come back as NetSendFailed -------------------------------------------------------------------------
def test_nothing_listening_fails_with_the_send_as_cause(make_node: Any) -> None:
    a = make_node("a")
    port = free_port()
    seq = send(a, NetSend(LOOPBACK, port, "echo", EdgeEcho("hello"), 3, "client"))
    (failed,) = a.rec.wait(NetSendFailed, "client")
    assert failed.body.request_id == 3 and "refused" in failed.body.error.lower()
    assert failed.cause == seq and failed.sender == "edge:net"
    # A later send reconnects on demand (and fails again, since still nothing listens).
    send(a, NetSend(LOOPBACK, port, "echo", EdgeEcho("hello"), 4, "client"))
    assert a.rec.wait(NetSendFailed, "client", count=2)[1].body.request_id == 4


def test_connect_timeout_fails(make_node: Any) -> None:
    """A destination that never completes the handshake (a full accept queue drops SYNs) fails after the
    connect timeout instead of leaving the request hanging."""
    a = make_node("a", connect_timeout_s=0.3)
    with socket.socket() as full:
        full.bind((LOOPBACK, 0))
        full.listen(0)
        fillers = []
        try:
            for _ in range(4):  # fill the accept queue (never accepted)
                f = socket.socket()
                f.setblocking(False)
                f.connect_ex(full.getsockname())
                fillers.append(f)
            time.sleep(0.05)
            send(a, NetSend(LOOPBACK, full.getsockname()[1], "echo", EdgeEcho("x"), 1, "client"))
            (failed,) = a.rec.wait(NetSendFailed, "client", timeout_s=3.0)
            assert "timed out" in failed.body.error, failed.body.error
        finally:
            for f in fillers:
                f.close()


def test_unresolvable_host_fails(make_node: Any) -> None:
    a = make_node("a")
    send(a, NetSend("no-such-host.invalid", 9, "echo", EdgeEcho("x"), 1, "client"))
    (failed,) = a.rec.wait(NetSendFailed, "client", timeout_s=5.0)
    assert "no-such-host.invalid" in failed.body.error


def test_a_request_for_an_actor_this_process_lacks_closes_its_connection(make_node: Any) -> None:
    """Never UNKNOWN_SERVER_ERROR for a missing actor (clients take -1 as fatal: an idempotent producer fails its
    batch): the connection is closed, as Kafka's stopped SocketServer closes it, and a new one serves."""
    a, b = make_node("a"), make_node("b")
    send(a, NetSend(LOOPBACK, b.port, "nobody", EdgeNobody(1), 5, "client"))
    (failed,) = a.rec.wait(NetSendFailed, "client")
    assert failed.body.request_id == 5 and a.rec.of(NetResponse, "client") == []
    send(a, NetSend(LOOPBACK, b.port, "echo", EdgeEcho("y"), 6, "client"))
    assert a.rec.wait(NetResponse, "client")[0].body == NetResponse(6, EdgeEcho("y"))


def test_no_request_is_read_before_start_up_ends(make_node: Any) -> None:
    """SocketServer.startProcessingRequests: a broker's listener accepts at once, but a request sent before its
    start-up has ended (here: before the actor serving it exists) is read only afterwards, and answered by that
    actor — not with UNKNOWN_SERVER_ERROR, as a restarted broker answered before."""
    from edge_support import Echo

    from actors.edge_slots import Edges

    rt = Runtime("starting")
    rec = Recorder()
    rt.observer = rec
    t = Transport(rt, process_requests=False)
    rt.edges = Edges(net=t)
    rt.spawn(NetworkActor, "net")
    rt.start_driver()
    try:
        with socket.create_connection((LOOPBACK, t.port), timeout=3) as s:
            s.sendall(_frame(18, 3, 1, {"client_software_name": "t", "client_software_version": "1"})
                      + _frame(36, 1, 2, {"auth_bytes": b"early"}))
            assert poll(lambda: t.connection_count()[0] == 1, 2.0)  # accepted...
            time.sleep(0.2)
            s.setblocking(False)
            with pytest.raises(BlockingIOError):
                s.recv(1)  # ...but not even ApiVersions is answered yet
            s.setblocking(True)
            assert rec.of(NetRequest) == []
            rt.spawn(Echo, "echo")  # the actors of a broker come up...
            t.start_processing_requests()  # ...then the composition root says start-up has ended
            (_, versions), (corr, echo) = _read_responses(s, [(18, 3), (36, 1)])
        assert versions["error_code"] == 0
        assert (corr, echo["error_code"], echo["auth_bytes"]) == (2, 0, b"early")
    finally:
        t.close()
        rt.shutdown()


def test_stop_processing_requests_closes_every_inbound_connection_and_the_listener(make_node: Any) -> None:
    """SocketServer.stopProcessingRequests (after the controlled shutdown): clients are disconnected, new ones
    refused, a late answer is dropped; the process's own outbound requests still work."""
    a, b = make_node("a"), make_node("b")
    send(a, NetSend(LOOPBACK, b.port, "hole", EdgeHole("parked"), 1, "client"))
    b.rec.wait(NetRequest, "hole")
    a.net.stop_processing_requests()
    send(b, NetSend(LOOPBACK, a.port, "echo", EdgeEcho("in"), 2, "client"))
    (failed,) = b.rec.wait(NetSendFailed, "client")
    assert failed.body.request_id == 2
    b.net.stop_processing_requests()
    (failed,) = a.rec.wait(NetSendFailed, "client")
    assert failed.body.request_id == 1
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((LOOPBACK, b.port), timeout=2).close()
    (req,) = b.rec.of(NetRequest, "hole")
    b.net.reply(req.body.connection_id, req.body.request_id, EdgeHole("late"))  # dropped, nothing breaks
    assert poll(lambda: b.net.connection_count()[0] == 0, 2.0)


def test_a_body_no_kafka_api_sends_fails_at_once(make_node: Any) -> None:
    a = make_node("a")
    seq = send(a, NetSend(LOOPBACK, 9, "echo", {"not": "an api"}, 4, "client"))
    (failed,) = a.rec.wait(NetSendFailed, "client")
    assert failed.cause == seq and "no Kafka API sends a dict" in failed.body.error


def test_edge_handlers_answer_on_their_own_thread_in_request_order(make_node: Any) -> None:
    import threading

    b = make_node("b")
    seen: list[tuple[str, int, str]] = []
    release = threading.Event()

    def handler(ctx: Any, req: EdgeHandled) -> EdgeHandled:
        seen.append((threading.current_thread().name, req.n, ctx.client_id))
        if req.n == 1:
            release.wait(2.0)  # the first answer comes late: the echo behind it must wait for it
        if req.n == 3:
            raise RuntimeError("handler bug")
        return EdgeHandled(req.n * 10)

    b.net.add_edge_handler("test", handler)
    with socket.create_connection((LOOPBACK, b.port), timeout=3) as s:
        frames = [encode_request(RequestHeader(40, 1, 101, "cli"), {"hmac": b"", "expiry_time_period_ms": 1}),
                  encode_request(RequestHeader(36, 1, 102, "cli"), {"auth_bytes": b"second"}),
                  encode_request(RequestHeader(40, 1, 103, "cli"), {"hmac": b"", "expiry_time_period_ms": 3})]
        s.sendall(b"".join(frames))
        assert poll(lambda: len(seen) == 1, 2.0)
        time.sleep(0.1)
        # one request in flight per connection (Kafka mutes it): the echo is not even read before the first answer
        assert b.rec.of(NetRequest) == [] and len(seen) == 1
        s.setblocking(False)
        with pytest.raises(BlockingIOError):
            s.recv(1)
        s.setblocking(True)
        release.set()
        got = _read_responses(s, [(40, 1), (36, 1), (40, 1)])
    assert [c for c, _ in got] == [101, 102, 103]
    assert got[0][1]["expiry_timestamp_ms"] == 10 and got[1][1]["auth_bytes"] == b"second"
    assert got[2][1]["error_code"] == Errors.UNKNOWN_SERVER_ERROR  # the handler's failure: Kafka's error answer
    assert [n for _, n, _ in seen] == [1, 3] and all(t == "b-test" and c == "cli" for t, _, c in seen)


def _read_responses(s: socket.socket, keys: list[tuple[int, int]], timeout_s: float = 3.0) -> list[tuple[int, dict]]:
    from protocol.framing import decode_response

    out, buf = [], b""
    s.settimeout(timeout_s)
    for key, version in keys:
        while len(buf) < 4 or len(buf) < 4 + struct.unpack(">i", buf[:4])[0]:
            data = s.recv(65536)
            assert data, "connection closed"
            buf += data
        n = struct.unpack(">i", buf[:4])[0]
        out.append(decode_response(key, version, buf[4:4 + n]))
        buf = buf[4 + n:]
    return out


def test_request_timeout_fails_and_net_close_fails_pending(make_node: Any) -> None:
    a, b = make_node("a"), make_node("b")
    seq = send(a, NetSend(LOOPBACK, b.port, "hole", EdgeHole("never answered"), 1, "client", timeout_ms=150))
    (failed,) = a.rec.wait(NetSendFailed, "client")
    assert failed.body.request_id == 1 and "timed out" in failed.body.error and failed.cause == seq
    send(a, NetSend(LOOPBACK, b.port, "echo", EdgeEcho("x"), 3, "client"))  # answered: not failed by the close
    a.rec.wait(NetResponse, "client")
    send(a, NetSend(LOOPBACK, b.port, "hole", EdgeHole("also never answered"), 2, "client"))
    b.rec.wait(NetRequest, "hole", count=2)
    send(a, NetClose(LOOPBACK, b.port))  # type: ignore[arg-type]
    failed = a.rec.wait(NetSendFailed, "client", count=2)[1]
    assert failed.body.request_id == 2 and "NetClose" in failed.body.error
    # The next send reconnects.
    send(a, NetSend(LOOPBACK, b.port, "echo", EdgeEcho("after close"), 4, "client"))
    assert a.rec.wait(NetResponse, "client", count=2)[1].body == NetResponse(4, EdgeEcho("after close"))


def test_each_sending_actor_has_its_own_connection_so_a_parked_request_holds_back_no_other(make_node: Any) -> None:
    """A peer answers one connection's requests in order (Kafka's muted channel). Kafka gives each fetcher thread
    its own NetworkClient; so does the transport, per sending actor: a request parked at the peer (a follower
    shard's long-poll Fetch) must not hold back another actor's answer (another shard's Fetch carrying records) —
    sharing one connection made every acks=all produce wait replica.fetch.wait.max.ms. NetClose closes them all."""
    a, b = make_node("a"), make_node("b")
    send(a, NetSend(LOOPBACK, b.port, "hole", EdgeHole("parked"), 1, "hole"))
    b.rec.wait(NetRequest, "hole")
    send(a, NetSend(LOOPBACK, b.port, "echo", EdgeEcho("answered at once"), 2, "client"))
    (resp,) = a.rec.wait(NetResponse, "client")
    assert resp.body == NetResponse(2, EdgeEcho("answered at once"))
    assert a.net.connection_count() == (0, 2) and b.net.connection_count() == (2, 0)
    send(a, NetSend(LOOPBACK, b.port, "echo", EdgeEcho("same sender"), 3, "client"))  # reuses its connection
    assert a.rec.wait(NetResponse, "client", count=2)[1].body == NetResponse(3, EdgeEcho("same sender"))
    assert a.net.connection_count() == (0, 2)
    send(a, NetClose(LOOPBACK, b.port))  # type: ignore[arg-type]
    (failed,) = a.rec.wait(NetSendFailed, "hole")
    assert failed.body.request_id == 1 and "NetClose" in failed.body.error
    assert poll(lambda: a.net.connection_count() == (0, 0), 2.0)


def test_closing_the_transport_fails_pending_and_later_sends(make_node: Any) -> None:
    a, b = make_node("a"), make_node("b")
    send(a, NetSend(LOOPBACK, b.port, "hole", EdgeHole("pending"), 1, "client"))
    b.rec.wait(NetRequest, "hole")
    a.net.close()
    send(a, NetSend(LOOPBACK, b.port, "echo", EdgeEcho("too late"), 2, "client"))
    failed = a.rec.wait(NetSendFailed, "client", count=2)
    assert {f.body.request_id for f in failed} == {1, 2}
    assert all("transport closed" in f.body.error for f in failed)


def test_request_size_limit_closes_the_connection(make_node: Any) -> None:
    """socket.request.max.bytes: a request above it closes its connection (Kafka's InvalidReceiveException), so the
    sender's request fails; the server keeps serving requests within the limit."""
    a = make_node("a")
    small = make_node("small", max_request_bytes=10_000)
    send(a, NetSend(LOOPBACK, small.port, "echo", EdgeEcho("z" * 20_000), 2, "client"))
    assert a.rec.wait(NetSendFailed, "client")[0].body.request_id == 2
    send(a, NetSend(LOOPBACK, small.port, "echo", EdgeEcho("ok"), 3, "client"))
    assert a.rec.wait(NetResponse, "client")[0].body == NetResponse(3, EdgeEcho("ok"))


_PEER = """
import sys, time
from actors.base import KActor
from actors.network_actor import NetworkActor
from actors.edge_slots import Edges
from actors.runtime import Runtime
from edges.transport import Transport
sys.path.insert(0, "tests/edges")
from edge_support import register_test_apis
register_test_apis()

class Hole(KActor):
    def on_NetRequest(self, msg, sender):
        print("got", msg.request_id, flush=True)   # ...and never answer

rt = Runtime("peer")
rt.edges = Edges(net=(t := Transport(rt)))
rt.spawn(NetworkActor, "net")
rt.spawn(Hole, "hole")
rt.start_driver()
print("port", t.port, flush=True)
time.sleep(60)
"""


def test_remote_process_dying_mid_request_fails(make_node: Any) -> None:
    a = make_node("a")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    peer = subprocess.Popen([sys.executable, "-c", _PEER], cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert peer.stdout is not None
        line = peer.stdout.readline()
        assert line.startswith("port "), line
        port = int(line.split()[1])
        seq = send(a, NetSend(LOOPBACK, port, "hole", EdgeHole("work"), 11, "client"))
        assert peer.stdout.readline().startswith("got")  # the request is in the peer, unanswered
        peer.send_signal(signal.SIGKILL)
        (failed,) = a.rec.wait(NetSendFailed, "client")
        assert failed.body.request_id == 11 and failed.cause == seq
        assert "closed by the peer" in failed.body.error or "failed" in failed.body.error
    finally:
        peer.kill()
        peer.wait(5)
        if peer.stdout is not None:
            peer.stdout.close()


# -- the server side ------------------------------------------------------------------------------------------------
def test_binds_loopback_only_by_default() -> None:
    rt = Runtime("bind")
    t = Transport(rt)
    try:
        assert t._listener.getsockname()[0] == "127.0.0.1"
        assert t.host == "127.0.0.1" and t.port == t._listener.getsockname()[1] and t.port > 0
    finally:
        t.close()
        rt.shutdown()


def test_port_in_use_is_a_clear_oserror() -> None:
    rt = Runtime("inuse")
    t = Transport(rt)
    try:
        with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{t.port}: .*in use") as info:
            Transport(rt, port=t.port)
        assert info.value.errno == errno.EADDRINUSE and "in use" in info.value.strerror
    finally:
        t.close()
        rt.shutdown()


def _frame(key: int, version: int, corr: int, body: dict) -> bytes:
    return encode_request(RequestHeader(key, version, corr, "bad-input-test"), body)


_ECHO = _frame(36, 1, 1, {"auth_bytes": b"fine"})


@pytest.mark.parametrize("garbage", [
    pytest.param(struct.pack(">i", 5) + b"hello", id="truncated header"),
    pytest.param(_ECHO[:4] + _ECHO[4:12] + b"\x00\x00", id="truncated body"),
    pytest.param(struct.pack(">i", 8) + struct.pack(">hhi", 999, 0, 1), id="unknown api key"),
    pytest.param(struct.pack(">i", 10) + struct.pack(">hhih", 36, 9, 1, -1), id="version out of range"),
    pytest.param(_frame(21, 1, 1, {"topics": [], "timeout_ms": 1}), id="a known api this broker does not serve"),
    pytest.param(struct.pack(">i", -1), id="negative size"),
    pytest.param(struct.pack(">I", 0x7FFFFFFF), id="over socket.request.max.bytes"),
    pytest.param(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", id="a stray HTTP client (a ~1.2 GB size)"),
])
def test_bad_input_closes_that_connection_and_the_server_keeps_serving(make_node: Any, garbage: bytes) -> None:
    a, b = make_node("a"), make_node("b")
    # A good connection opened before the garbage arrives must survive it.
    send(a, NetSend(LOOPBACK, b.port, "echo", EdgeEcho("before"), 1, "client"))
    a.rec.wait(NetResponse, "client")
    with socket.create_connection((LOOPBACK, b.port), timeout=2) as bad:
        bad.sendall(garbage)
        bad.shutdown(socket.SHUT_WR)  # a truncated request is cut short by EOF, as a client dying mid-write
        assert recv_closed(bad), "the server did not close the connection that sent garbage"
    send(a, NetSend(LOOPBACK, b.port, "echo", EdgeEcho("after"), 2, "client"))
    assert a.rec.wait(NetResponse, "client", count=2)[1].body == NetResponse(2, EdgeEcho("after"))
    assert request(LOOPBACK, b.port, EdgeEcho("new connection"), timeout_s=2.0) == EdgeEcho("new connection")
    assert poll(lambda: b.net.connection_count()[0] == 1, 2.0)  # only a's connection is left


def test_a_converter_refusing_a_request_is_answered_with_the_apis_error(make_node: Any,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """request_from_wire raising (an impossible request): the whole request answered with the API's error
    response, and the same connection keeps working."""
    b = make_node("b")

    class RefusedError(Exception):
        error = Errors.INVALID_REQUEST

    from core.api import registry

    spec = registry.spec_for_key(36)

    def picky(v: int, body: dict, ctx: Any) -> EdgeEcho:
        if body["auth_bytes"] == b"bad":
            raise RefusedError("no")
        return EdgeEcho(body["auth_bytes"].decode())

    monkeypatch.setitem(registry._UNITS, 36, attrs.evolve(spec, request_from_wire=picky))
    with socket.create_connection((LOOPBACK, b.port), timeout=2) as s:
        s.sendall(_frame(36, 1, 5, {"auth_bytes": b"bad"}) + _frame(36, 1, 6, {"auth_bytes": b"good"}))
        got = _read_responses(s, [(36, 1), (36, 1)])
    assert [(c, b["error_code"], b["auth_bytes"]) for c, b in got] == [(5, Errors.INVALID_REQUEST, b""),
                                                                      (6, 0, b"good")]


# -- the blocking client ---------------------------------------------------------------------------------------------
def test_blocking_client_against_a_runtime(make_node: Any) -> None:
    b = make_node("b")
    assert request(LOOPBACK, b.port, EdgeEcho("q"), timeout_s=2.0) == EdgeEcho("q")
    with pytest.raises(TransportError, match="closed before the answer"):
        request(LOOPBACK, b.port, EdgeNobody(1), timeout_s=2.0)
    with pytest.raises(TransportError, match="no Kafka API sends a str"):
        request(LOOPBACK, b.port, "x", timeout_s=2.0)
    t0 = time.monotonic()
    with pytest.raises(TransportError, match="within 0.3s"):
        request(LOOPBACK, b.port, EdgeHole("x"), timeout_s=0.3)
    assert time.monotonic() - t0 < 1.5
    with BlockingClient(LOOPBACK, b.port) as c:
        assert c.request(EdgeEcho("first"), 2.0) == EdgeEcho("first")
        assert c.request(EdgeEcho("second")) == EdgeEcho("second")
        assert c.request_raw(36, 0, {"auth_bytes": b"raw"}) == {"error_code": 0, "error_message": None,
                                                                "auth_bytes": b"raw"}
        versions = c.request_raw(18, 3, {"client_software_name": "t", "client_software_version": "1"})
        assert {k["api_key"] for k in versions["api_keys"]} >= {17, 18, 36, 39, 40}
    port = free_port()
    with pytest.raises(TransportError, match=f"connection refused by 127.0.0.1:{port}"):
        request(LOOPBACK, port, EdgeEcho("x"), timeout_s=1.0)


# -- replay ------------------------------------------------------------------------------------------------------------
def test_network_actor_without_a_transport_does_nothing() -> None:
    rt = Runtime("replay")
    rec = Recorder()
    rt.observer = rec
    try:
        rt.spawn(NetworkActor, "net")
        rt.inject("net", NetSend(LOOPBACK, 1, "x", EdgeEcho("y"), 1, "client"), sender="test")
        rt.inject("net", NetReply(1, 1, EdgeEcho("y")), sender="test")
        rt.inject("net", NetClose(LOOPBACK, 1), sender="test")
        assert rt.run_until_idle() == 3
        assert len(rec.records) == 3 and rt.inbox.empty()
    finally:
        rt.shutdown()


# -- throughput (printed, not asserted) -------------------------------------------------------------------------------
@pytest.mark.parametrize("window,total", [(1, 2_000), (100, 10_000)])
def test_throughput_1kb(make_node: Any, window: int, total: int) -> None:
    a = make_node("a", extra={"pump": Pump})
    b = make_node("b")
    t0 = time.perf_counter()
    a.rt.inject("pump", EdgeTestBench(LOOPBACK, b.port, total, window, 1024), sender="test")
    done = lambda: a.rec.count(NetResponse, "pump") + a.rec.count(NetSendFailed, "pump")  # noqa: E731
    assert poll(lambda: done() >= total, 30.0, interval_s=0.005)
    elapsed = time.perf_counter() - t0
    assert a.rec.of(NetSendFailed, "pump") == []
    print(f"\nthroughput, 1 KB bodies, window {window}: {total / elapsed:,.0f} requests/s "
          f"({total} in {elapsed:.2f}s, mean {elapsed / total * 1e6:.0f} us each)")


def test_a_request_kafka_does_not_answer_gets_no_answer(make_node: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Produce acks=0's rule (ApiSpec.reply_expected): the actor gets NetRequest(reply_expected=False), nothing is
    written for it, and the connection's next answer is the next request's."""
    b = make_node("b")
    from core.api import registry

    spec = registry.spec_for_key(36)
    monkeypatch.setitem(registry._UNITS, 36, attrs.evolve(spec, reply_expected=lambda v, body: body["auth_bytes"]
                                                           != b"quiet"))
    with socket.create_connection((LOOPBACK, b.port), timeout=2) as s:
        s.sendall(_frame(36, 1, 21, {"auth_bytes": b"quiet"}) + _frame(36, 1, 22, {"auth_bytes": b"loud"}))
        got = _read_responses(s, [(36, 1)])
    assert [(c, body["auth_bytes"]) for c, body in got] == [(22, b"loud")]
    quiet, loud = b.rec.wait(NetRequest, "echo", count=2)
    assert quiet.body.reply_expected is False and loud.body.reply_expected is True


def test_an_unanswered_request_whose_answer_failed_closes_only_its_connection(make_node: Any,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Produce acks=0's rule (ApiSpec.failed, KafkaApis.handleProduceRequest's closeConnection): the route answers
    (NetRequest.reply_expected True), a clean answer writes nothing and the connection's next answer is the next
    request's; an answer ``failed`` calls an error closes that connection, after the answers owed before it."""
    b = make_node("b")
    from core.api import registry

    spec = registry.spec_for_key(36)
    monkeypatch.setitem(registry._UNITS, 36, attrs.evolve(
        spec, reply_expected=lambda v, body: not body["auth_bytes"].startswith(b"quiet"),
        failed=lambda r: r.text.endswith("error")))
    with socket.create_connection((LOOPBACK, b.port), timeout=2) as other, \
            socket.create_connection((LOOPBACK, b.port), timeout=2) as s:
        s.sendall(_frame(36, 1, 21, {"auth_bytes": b"quiet ok"}) + _frame(36, 1, 22, {"auth_bytes": b"loud"}))
        assert [(c, body["auth_bytes"]) for c, body in _read_responses(s, [(36, 1)])] == [(22, b"loud")]
        s.sendall(_frame(36, 1, 23, {"auth_bytes": b"loud 2"}) + _frame(36, 1, 24, {"auth_bytes": b"quiet error"})
                  + _frame(36, 1, 25, {"auth_bytes": b"never answered"}))
        assert [(c, body["auth_bytes"]) for c, body in _read_responses(s, [(36, 1)])] == [(23, b"loud 2")]
        assert recv_closed(s), "the failed unanswered request did not close its connection"
        # the other connection is untouched
        other.sendall(_frame(36, 1, 31, {"auth_bytes": b"still here"}))
        assert [(c, body["auth_bytes"]) for c, body in _read_responses(other, [(36, 1)])] == [(31, b"still here")]
    reqs = b.rec.wait(NetRequest, "echo", count=4)
    assert [(r.body.body.text, r.body.reply_expected) for r in reqs[:4]] == [
        ("quiet ok", True), ("loud", True), ("loud 2", True), ("quiet error", True)]


def test_an_answers_edge_task_runs_on_its_handler_after_the_answer(make_node: Any,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """ApiSpec.edge_task (Metadata's auto-creation): the answer is written, and the work it asks for reaches the
    named edge handler's thread; an answer asking nothing runs nothing."""
    import threading

    b = make_node("b")
    from core.api import registry

    spec = registry.spec_for_key(36)
    monkeypatch.setitem(registry._UNITS, 36, attrs.evolve(
        spec, edge_task=lambda r: ("maker", r.text.upper()) if r.text.startswith("make") else None))
    tasks: list[tuple[str, str, int]] = []
    b.net.add_edge_handler("maker", lambda ctx, req: tasks.append((threading.current_thread().name, req,
                                                                   ctx.correlation_id)))
    with socket.create_connection((LOOPBACK, b.port), timeout=2) as s:
        s.sendall(_frame(36, 1, 41, {"auth_bytes": b"nothing"}) + _frame(36, 1, 42, {"auth_bytes": b"make t"}))
        got = _read_responses(s, [(36, 1), (36, 1)])
    assert [(c, body["auth_bytes"]) for c, body in got] == [(41, b"nothing"), (42, b"make t")]
    assert poll(lambda: len(tasks) == 1, 2.0)
    assert tasks == [("b-maker", "MAKE T", 42)]


# -- one request in flight per connection (Kafka's Processor mutes a channel until its response is sent) ------------
def test_a_connection_is_not_read_while_one_of_its_requests_is_in_flight(make_node: Any) -> None:
    """A pipelining client's second request is read only once the first is answered (kafkajs sends several
    JoinGroups of one member on one connection: they must not be handled concurrently); another connection is
    served meanwhile; the answers come in request order."""
    b = make_node("b")
    with socket.create_connection((LOOPBACK, b.port), timeout=3) as s, \
            socket.create_connection((LOOPBACK, b.port), timeout=3) as other:
        s.sendall(_frame(17, 1, 1, {"mechanism": "parked"}) + _frame(36, 1, 2, {"auth_bytes": b"behind"})
                  + _frame(36, 1, 3, {"auth_bytes": b"last"}))
        (parked,) = b.rec.wait(NetRequest, "hole")
        other.sendall(_frame(36, 1, 9, {"auth_bytes": b"other"}))
        assert [(c, r["auth_bytes"]) for c, r in _read_responses(other, [(36, 1)])] == [(9, b"other")]
        time.sleep(0.1)
        assert [r.body.body for r in b.rec.of(NetRequest, "echo")] == [EdgeEcho("other")]  # s is muted
        b.net.reply(parked.body.connection_id, parked.body.request_id, EdgeHole("answered"))
        got = _read_responses(s, [(17, 1), (36, 1), (36, 1)])
    assert [c for c, _ in got] == [1, 2, 3] and got[0][1]["mechanisms"] == ["answered"]
    assert [r.body.body for r in b.rec.of(NetRequest, "echo")] == [EdgeEcho("other"), EdgeEcho("behind"),
                                                                  EdgeEcho("last")]


def test_a_client_that_never_reads_costs_the_broker_one_answer_not_a_queue_of_them(
        make_node: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A client pipelines 60 small requests whose answers are 1 MB each and reads nothing: the connection stays
    muted while an answer is unwritten, so only the answers the sockets' buffers take are made (before: all 60,
    60 MB queued in the broker). Once the client reads, every answer comes, in order."""
    from core.api import registry

    spec = registry.spec_for_key(36)
    big = b"x" * (1 << 20)
    monkeypatch.setitem(registry._UNITS, 36, attrs.evolve(
        spec, response_to_wire=lambda v, r: {"error_code": 0, "error_message": None,
                                             "auth_bytes": r.text.encode() + big, "session_lifetime_ms": 0}))
    b = make_node("b")
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        s.connect((LOOPBACK, b.port))
        s.sendall(b"".join(_frame(36, 1, i, {"auth_bytes": str(i).encode()}) for i in range(60)))
        assert poll(lambda: b.rec.count(NetRequest, "echo") >= 1, 2.0)
        time.sleep(0.5)  # time enough for the broker to make every answer, were it not muted
        handled = b.rec.count(NetRequest, "echo")
        assert handled <= 12, f"{handled} of 60 requests handled while the client read nothing"
        got = _read_responses(s, [(36, 1)] * 60, timeout_s=20)
    assert [c for c, _ in got] == list(range(60))
    assert all(r["auth_bytes"] == str(i).encode() + big for i, (_, r) in enumerate(got))


def test_queued_max_requests_bounds_the_requests_in_flight_over_every_connection(make_node: Any) -> None:
    """queued.max.requests: with that many requests handed on and unanswered, no connection is read; one answer
    lets the next request in."""
    b = make_node("b", queued_max_requests=2)
    socks = [socket.create_connection((LOOPBACK, b.port), timeout=3) for _ in range(3)]
    try:
        for i, s in enumerate(socks):
            s.sendall(_frame(17, 1, i, {"mechanism": f"m{i}"}))
        first = b.rec.wait(NetRequest, "hole", count=2)
        time.sleep(0.2)
        assert len(b.rec.of(NetRequest, "hole")) == 2
        b.net.reply(first[0].body.connection_id, first[0].body.request_id, EdgeHole("done"))
        b.rec.wait(NetRequest, "hole", count=3)
        assert sorted(r.body.body.text for r in b.rec.of(NetRequest, "hole")) == ["m0", "m1", "m2"]
    finally:
        for s in socks:
            s.close()

def _fetch_frame(corr: int, replica_id: int) -> bytes:
    from core.api import fetch
    from messages.common import TopicPartition
    from messages.replication import FetchPartition, FetchRequest

    req = FetchRequest(replica_id=replica_id, partitions=(FetchPartition(TopicPartition("t", 0), 0, 1, 0, 1048576),),
                       max_wait_ms=500, min_bytes=1, max_bytes=10485760, isolation_level=0, session_id=0,
                       session_epoch=0)
    return _frame(1, 11, corr, fetch.request_to_wire(req))


def test_queued_max_requests_never_holds_back_a_followers_fetch(make_node: Any) -> None:
    """queued.max.requests reached by parked client requests (acks=all produces, long polls): a follower's fetch on
    another connection is still read, handled and answered, and read again after that, so a parked produce can
    always be completed by its followers; the replica fetch takes no place in the count (one client answer lets
    the held consumer fetch in although a replica fetch is parked too), while a client's fetch waits for a place."""
    from tests.support.actors import Sink

    b = make_node("b", queued_max_requests=2, extra={names.REPLICA_MANAGER: Sink})
    socks = [socket.create_connection((LOOPBACK, b.port), timeout=3) for _ in range(4)]
    parked1, parked2, follower, consumer = socks
    try:
        parked1.sendall(_frame(17, 1, 1, {"mechanism": "p1"}))
        parked2.sendall(_frame(17, 1, 2, {"mechanism": "p2"}))
        held = b.rec.wait(NetRequest, "hole", count=2)  # the cap is reached
        follower.sendall(_fetch_frame(7, replica_id=1))
        (fetch1,) = b.rec.wait(NetRequest, names.REPLICA_MANAGER)
        assert (fetch1.body.body.replica_id, fetch1.body.request_id > 0) == (1, True)
        consumer.sendall(_fetch_frame(9, replica_id=-1))
        time.sleep(0.2)
        assert b.rec.count(NetRequest, names.REPLICA_MANAGER) == 1  # the consumer's fetch waits for a place
        b.net.reply_error(fetch1.body.connection_id, fetch1.body.request_id, int(Errors.NOT_LEADER_OR_FOLLOWER))
        [(corr, answer)] = _read_responses(follower, [(1, 11)])
        assert corr == 7 and answer["responses"][0]["partitions"][0]["error_code"] == Errors.NOT_LEADER_OR_FOLLOWER
        follower.sendall(_fetch_frame(8, replica_id=1))  # the follower's next fetch: read, and left parked
        fetches = b.rec.wait(NetRequest, names.REPLICA_MANAGER, count=2)
        assert [f.body.body.replica_id for f in fetches] == [1, 1]
        b.net.reply(held[0].body.connection_id, held[0].body.request_id, EdgeHole("done"))
        fetches = b.rec.wait(NetRequest, names.REPLICA_MANAGER, count=3)
        assert [f.body.body.replica_id for f in fetches] == [1, 1, -1]
    finally:
        for s in socks:
            s.close()


@pytest.mark.parametrize(("payload", "inter_broker"), [
    pytest.param(struct.pack(">hhih", 4, 4, 1, -1), True, id="LeaderAndIsr"),
    pytest.param(struct.pack(">hhih", 5, 3, 1, -1), True, id="StopReplica"),
    pytest.param(struct.pack(">hhih", 6, 6, 1, -1), True, id="UpdateMetadata"),
    pytest.param(struct.pack(">hhi", 7, 0, 1), True, id="ControlledShutdown v0 (no client id)"),
    pytest.param(_fetch_frame(1, replica_id=2)[4:], True, id="a follower's Fetch"),
    pytest.param(_fetch_frame(1, replica_id=-1)[4:], False, id="a consumer's Fetch"),
    pytest.param(_fetch_frame(1, replica_id=2)[4:22], False, id="a Fetch cut before its replica id"),
    pytest.param(_frame(17, 1, 1, {"mechanism": "x"})[4:], False, id="a client request"),
    pytest.param(b"\x00\x04", False, id="too short to tell"),
])
def test_inter_broker_requests_are_told_from_their_first_bytes(payload: bytes, inter_broker: bool) -> None:
    from edges.net.framing import inter_broker_request

    buf = bytearray(b"junk" + payload + b"next frame")
    assert inter_broker_request(buf, 4, 4 + len(payload)) is inter_broker
