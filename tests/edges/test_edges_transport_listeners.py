"""A broker with several listeners (Kafka's SocketServer: one acceptor per listener): one Transport binds every
listener's address, and a request that arrives on any of them reaches the same actors."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from edge_support import EdgeEcho

from actors.runtime import Runtime
from edges.transport import ListenError, Transport, request


def test_every_listener_is_bound_and_serves_the_same_actors(make_node: Any) -> None:
    node = make_node("b", host="127.0.0.1", port=0, extra_listeners=(("127.0.0.2", 0),))
    (h1, p1), (h2, p2) = node.net.bound
    assert (h1, h2) == ("127.0.0.1", "127.0.0.2") and p1 > 0 and p2 > 0
    assert (node.net.host, node.net.port) == (h1, p1)
    assert request(h1, p1, EdgeEcho("via 1")) == EdgeEcho("via 1")
    assert request(h2, p2, EdgeEcho("via 2")) == EdgeEcho("via 2")


def test_requests_carry_the_listener_they_came_in_on(make_node: Any) -> None:
    """Metadata answers with the endpoints of the listener the request came in on: the edge tells converters."""
    seen: list[str] = []
    node = make_node("b", extra_listeners=(("127.0.0.2", 0, "INTERNAL"),))
    from edge_support import EdgeHandled

    node.net.add_edge_handler("test", lambda ctx, req: seen.append(ctx.listener) or req)
    (h1, p1), (h2, p2) = node.net.bound
    assert request(h1, p1, EdgeHandled(1)) == EdgeHandled(1)
    assert request(h2, p2, EdgeHandled(2)) == EdgeHandled(2)
    assert seen == ["PLAINTEXT", "INTERNAL"]


def test_a_listener_that_cannot_bind_closes_the_ones_bound_before_it() -> None:
    rt = Runtime("busy")
    taken = Transport(rt, "127.0.0.1", 0)
    with socket.socket() as probe:
        probe.bind(("127.0.0.2", 0))
        free = probe.getsockname()[1]
    try:
        with pytest.raises(ListenError) as e:
            Transport(rt, "127.0.0.2", free, extra_listeners=(("127.0.0.1", taken.port),))
        assert str(e.value).startswith(f"cannot listen on 127.0.0.1:{taken.port}: Address already in use")
        with socket.create_server(("127.0.0.2", free)):  # the first listener's socket was closed
            pass
    finally:
        taken.close()
        rt.shutdown()
