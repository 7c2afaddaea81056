"""Fixtures for the edge tests: live runtimes (driver thread running) that record every delivered message."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from edge_support import Echo, Node, Recorder, poll, register_test_apis

from actors.edge_slots import Edges
from actors.network_actor import NetworkActor
from actors.runtime import Runtime
from actors.timer_actor import TimerActor
from core.api import registry
from edges.timer import TimerEdge
from edges.transport import Transport
from tests.support.actors import Sink


@pytest.fixture(autouse=True)
def test_apis(monkeypatch: pytest.MonkeyPatch) -> None:
    """The edge tests' own APIs (edge_support.TEST_SPECS) beside the real ones, for this test only."""
    monkeypatch.setattr(registry, "_UNITS", dict(registry._UNITS))
    register_test_apis()


@pytest.fixture
def make_node() -> Iterator[Callable[..., Node]]:
    nodes: list[Node] = []

    def make(name: str, *, net: bool = True, timer: bool = False, extra: dict[str, type] | None = None,
             **transport_kw: Any) -> Node:
        rt = Runtime(name)
        rec = Recorder()
        rt.observer = rec
        node = Node(rt, rec, None, None)
        nodes.append(node)
        if net:
            node.net = Transport(rt, **transport_kw)
        if timer:
            node.timer = TimerEdge(rt)
        rt.edges = Edges(net=node.net, timer=node.timer)
        rt.spawn(NetworkActor, "net")
        rt.spawn(TimerActor, "timer")
        rt.spawn(Echo, "echo")
        rt.spawn(Sink, "client")
        rt.spawn(Sink, "hole")
        for actor_name, cls in (extra or {}).items():
            rt.spawn(cls, actor_name)
        rt.start_driver()
        return node

    yield make
    for node in nodes:
        # Edges first (their last injections land in a queue nobody reads any more), then the actor system.
        if node.net is not None:
            node.net.close()
        if node.timer is not None:
            node.timer.close()
        node.rt.shutdown()


@pytest.fixture(autouse=True)
def no_stray_threads() -> Iterator[None]:
    """Every edge thread is a daemon and every test closes what it opened."""
    before = set(threading.enumerate())
    yield
    leftover = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    assert not [t for t in leftover if not t.daemon], f"non-daemon threads left: {leftover}"
    assert poll(lambda: not [t for t in threading.enumerate() if t not in before and t.is_alive()], 2.0), \
        f"threads left running: {[t for t in threading.enumerate() if t not in before and t.is_alive()]}"
