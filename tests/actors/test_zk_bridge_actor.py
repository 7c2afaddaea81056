"""ZkBridgeActor end to end on a Runtime with the real ZooKeeper: request/response, watch and session fan-out."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient

from actors.base import KActor
from actors.edge_slots import Edges
from actors.runtime import Runtime
from actors.zk_bridge_actor import ZkBridgeActor, path_matches, watcher_of
from kactor.broker_process import wire_zk_events
from messages.zk import (
    OK,
    Create,
    GetChildren,
    GetData,
    ZkBatch,
    ZkRequest,
    ZkResponse,
    ZkSessionEvent,
    ZkWatchEvent,
)
from zk_bridge.executor import ZkExecutor

INBOX: dict[str, list[Any]] = {}


class Sink(KActor):
    """Test actor: keeps everything it receives, per actor name."""

    def on_unhandled(self, body: Any, sender: str) -> None:
        INBOX.setdefault(self.name, []).append((body, sender, self.runtime.current_seq))


@pytest.fixture
def rt(zk: KazooClient) -> Iterator[Runtime]:
    INBOX.clear()
    runtime = Runtime("zk-test")
    executor = ZkExecutor(zk)
    wire_zk_events(runtime, executor)  # as the broker process does
    runtime.edges = Edges(zk=executor)
    runtime.spawn(ZkBridgeActor, "zk")
    runtime.spawn(Sink, "sink")
    runtime.spawn(Sink, "other")
    yield runtime
    executor.close()
    runtime.shutdown()


def pump_until(rt: Runtime, predicate: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rt.run_until_idle()
        if predicate():
            return
        time.sleep(0.005)
    raise AssertionError("timed out pumping the runtime")


def received(name: str, kind: type) -> list[Any]:
    return [m for m in INBOX.get(name, []) if isinstance(m[0], kind)]


def test_request_response(rt: Runtime, zk: KazooClient) -> None:
    zk.create("/x", b"hello")
    seqs: list[int] = []
    rt.observer = lambda seq, ts, sender, receiver, body, cause: seqs.append((seq, body, cause))
    rt.inject("zk", ZkRequest(7, ZkBatch((GetData("/x"), Create("/y", "1"))), "sink"), sender="test")
    pump_until(rt, lambda: received("sink", ZkResponse))
    body, sender, _ = received("sink", ZkResponse)[0]
    assert sender == "edge:zk" and body.request_id == 7
    assert [r.code for r in body.results] == [OK, OK] and body.results[0].data == "hello"
    request_seq = next(seq for seq, b, _ in seqs if isinstance(b, ZkRequest))
    response_cause = next(cause for _, b, cause in seqs if isinstance(b, ZkResponse))
    assert response_cause == request_seq


def test_watches_go_to_the_actor_that_armed_them_and_session_changes_to_both(zk: KazooClient) -> None:
    """/config/changes (the config manager's change listener) → config-manager; any other watch (the controller's
    handlers) → controller; a session change → both, the controller first."""
    INBOX.clear()
    runtime = Runtime("zk-watchers")
    executor = ZkExecutor(zk)
    wire_zk_events(runtime, executor)  # as the broker process does
    runtime.edges = Edges(zk=executor)
    try:
        runtime.spawn(ZkBridgeActor, "zk")
        runtime.spawn(Sink, "controller")
        runtime.spawn(Sink, "config-manager")
        zk.create("/brokers/ids/1", b"{}", makepath=True)
        zk.ensure_path("/config/changes")
        runtime.inject("zk", ZkRequest(1, ZkBatch((GetData("/brokers/ids/1", watch=True),
                                                   GetChildren("/config/changes", watch=True))), "controller"),
                       sender="test")
        pump_until(runtime, lambda: received("controller", ZkResponse))
        zk.set("/brokers/ids/1", b"{1}")
        zk.create("/config/changes/config_change_", b"{}", sequence=True)
        pump_until(runtime, lambda: received("controller", ZkWatchEvent) and received("config-manager", ZkWatchEvent))
        assert [m[0] for m in received("controller", ZkWatchEvent)] == [ZkWatchEvent("/brokers/ids/1", "CHANGED")]
        assert [m[0] for m in received("config-manager", ZkWatchEvent)] == [ZkWatchEvent("/config/changes", "CHILD")]
        executor.on_session(ZkSessionEvent("SUSPENDED", 1))
        pump_until(runtime, lambda: received("controller", ZkSessionEvent) and received("config-manager",
                                                                                       ZkSessionEvent))
        assert len(received("controller", ZkSessionEvent)) == len(received("config-manager", ZkSessionEvent)) == 1
        assert watcher_of("/config/changes/config_change_0000000001") == "config-manager"
        assert watcher_of("/config/topics/t") == "controller"
    finally:
        executor.close()
        runtime.shutdown()


def test_replay_without_executor_skips_submit() -> None:
    INBOX.clear()
    runtime = Runtime("zk-replay")
    try:
        runtime.spawn(ZkBridgeActor, "zk")
        runtime.spawn(Sink, "sink")
        runtime.deliver("zk", ZkRequest(1, ZkBatch((GetData("/x"),)), "sink"), sender="test")
        assert runtime.run_until_idle() == 0 and INBOX == {}
    finally:
        runtime.shutdown()


def test_path_matches() -> None:
    assert path_matches("/brokers/ids/1", "/brokers/ids")
    assert path_matches("/brokers/ids", "/brokers/ids/")
    assert not path_matches("/brokers/ids2", "/brokers/ids")
    assert path_matches("/anything", "/")
