"""actors.edge_slots: each actor hands its I/O to its typed slot of ``runtime.edges`` (the cause seq with it), and
with the slot empty — a replay, a unit test — it records the message and does nothing else."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest

from actors import edge_slots
from actors.base import KActor
from actors.clock import ManualClock
from actors.edge_slots import NO_EDGES, Edges
from actors.kafka_server_actor import KafkaServerActor
from actors.metrics_actor import MetricsActor
from actors.network_actor import NetworkActor
from actors.replica_manager_actor import ReplicaManagerActor
from actors.runtime import Runtime
from actors.timer_actor import TimerActor
from actors.zk_bridge_actor import ZkBridgeActor
from messages.broker_lifecycle import BrokerRegistered, BrokerShutdownComplete
from messages.net import NetClose, NetReply, NetSend
from messages.partition import ReplicaManagerShutdown
from messages.runtime import ActorFailed, CancelTimer, ScheduleTimer
from messages.zk import OK, GetData, ZkBatch, ZkOpResult, ZkRequest, ZkResponse, ZStat


class Sink(KActor):
    def on_unhandled(self, body: Any, sender: str) -> None:
        pass


class Calls:
    """A slot that records every call made on it: (method, args...)."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def __getattr__(self, method: str) -> Callable[..., None]:
        if method.startswith("_"):
            raise AttributeError(method)
        return lambda *args, **kwargs: self.calls.append((method, *args, *sorted(kwargs.items())))


@pytest.fixture
def rt() -> Iterator[Runtime]:
    runtime = Runtime("broker-0", clock=ManualClock(1_000.0))
    seen: list[tuple[int, str, str, Any, int | None]] = []
    runtime.observer = lambda seq, ts, sender, receiver, body, cause: seen.append((seq, sender, receiver, body, cause))
    runtime.seen = seen  # type: ignore[attr-defined]
    try:
        yield runtime
    finally:
        runtime.shutdown()


def _seq_of(rt: Runtime, body: Any) -> int:
    return next(seq for seq, _, _, b, _ in rt.seen if b == body)  # type: ignore[attr-defined]


def _failures(rt: Runtime) -> list[Any]:
    return [b for _, _, _, b, _ in rt.seen if isinstance(b, ActorFailed)]  # type: ignore[attr-defined]


def test_edges_are_one_frozen_value_empty_by_default() -> None:
    assert Runtime("x").edges is NO_EDGES
    assert attrs.astuple(NO_EDGES) == (None,) * len(attrs.fields(Edges))
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        NO_EDGES.zk = object()  # type: ignore[misc]


def test_timer_actor_arms_and_cancels_through_the_timer_slot(rt: Runtime) -> None:
    timers = Calls()
    rt.edges = Edges(timer=timers)
    rt.spawn(TimerActor, "timer")
    rt.deliver("timer", ScheduleTimer("fetch", 250.0), "partition-0")
    rt.deliver("timer", CancelTimer("fetch"), "partition-0")
    # the owner is the sender; the ScheduleTimer's seq becomes the TimerFired's cause
    assert timers.calls == [("schedule", "partition-0", "fetch", 250.0, _seq_of(rt, ScheduleTimer("fetch", 250.0))),
                            ("cancel", "partition-0", "fetch")]


def test_network_actor_sends_replies_and_closes_through_the_net_slot(rt: Runtime) -> None:
    net = Calls()
    rt.edges = Edges(net=net)
    rt.spawn(NetworkActor, "net")
    send = NetSend("127.0.0.1", 9092, "replica-manager", "body", 7, "channel-1", timeout_ms=500.0)
    rt.deliver("net", send, "channel-1")
    rt.deliver("net", NetReply(3, 4, "answer"), "replica-manager")
    rt.deliver("net", NetClose("127.0.0.1", 9092), "channel-1")
    assert net.calls == [
        ("send", "127.0.0.1", 9092, "replica-manager", "body", 7, "channel-1",
         ("cause", _seq_of(rt, send)), ("timeout_ms", 500.0)),
        ("reply", 3, 4, "answer"),
        ("close_destination", "127.0.0.1", 9092)]


def test_metrics_actor_publishes_to_the_metrics_slot(rt: Runtime) -> None:
    metrics = Calls()
    rt.edges = Edges(metrics=metrics)
    rt.spawn(MetricsActor, "metrics")
    rt.deliver("metrics", BrokerRegistered(3, 42), "kafka-server")
    [(method, snapshot)] = metrics.calls
    assert method == "publish" and (snapshot.broker_id, snapshot.broker_epoch) == (3, 42)


def test_kafka_server_tells_the_process_slot_once_that_shutdown_is_complete(rt: Runtime) -> None:
    process = Calls()
    rt.edges = Edges(process=process)
    for name in ("timer", "replica-manager"):
        rt.spawn(Sink, name)
    rt.spawn(KafkaServerActor, "kafka-server")
    done = BrokerShutdownComplete(True, "controlled shutdown", False)
    rt.deliver("kafka-server", done, "replica-manager")
    rt.deliver("kafka-server", done, "replica-manager")
    assert process.calls == [("shutdown_complete", done)]


def test_replica_manager_shutdown_stops_the_log_dir_probe(rt: Runtime) -> None:
    """ReplicaManager.shutdown stops its LogDirFailureHandler: no dir goes offline after it."""
    probe = Calls()
    rt.edges = Edges(log_dirs=probe)
    rt.spawn(Sink, "kafka-server")
    rt.spawn(ReplicaManagerActor, "replica-manager")
    complete = BrokerShutdownComplete(False, "stop", False)
    rt.deliver("replica-manager", ReplicaManagerShutdown(complete), "kafka-server")
    assert probe.calls == [("close",)]
    # no shards: the completion goes straight back
    assert [(r, b) for _, _, r, b, _ in rt.seen if r == "kafka-server"] == [("kafka-server", complete)]  # type: ignore[attr-defined]


def test_zk_bridge_submits_to_the_zk_slot_and_injects_the_answer_to_the_requester(rt: Runtime) -> None:
    zk = Calls()
    rt.edges = Edges(zk=zk)
    rt.spawn(ZkBridgeActor, "zk")
    rt.spawn(Sink, "controller")
    batch = ZkBatch((GetData("/controller"),))
    request = ZkRequest(5, batch, "controller")
    rt.deliver("zk", request, "controller")
    [(method, submitted, reply)] = zk.calls
    assert (method, submitted) == ("submit", batch)
    result = ZkOpResult(OK, '{"brokerid":1}', ZStat(1, 1, 0, 0, 0))
    reply((result,))  # what the executor does from a kazoo thread: the answer is queued, not delivered
    assert rt.run_until_idle() == 1
    assert rt.seen[-1][1:] == ("edge:zk", "controller", ZkResponse(5, (result,)),  # type: ignore[attr-defined]
                               _seq_of(rt, request))


def test_with_every_slot_empty_the_actors_record_and_do_nothing(rt: Runtime) -> None:
    assert rt.edges is NO_EDGES
    for cls, name in ((TimerActor, "timer"), (NetworkActor, "net"), (MetricsActor, "metrics"),
                      (ZkBridgeActor, "zk"), (KafkaServerActor, "kafka-server"),
                      (ReplicaManagerActor, "replica-manager")):
        rt.spawn(cls, name)
    inputs = [("timer", ScheduleTimer("k", 1.0)), ("timer", CancelTimer("k")),
              ("net", NetSend("127.0.0.1", 1, "x", "b", 1, "kafka-server")), ("net", NetReply(1, 1, "b")),
              ("net", NetClose("127.0.0.1", 1)), ("metrics", BrokerRegistered(0, 1)),
              ("zk", ZkRequest(1, ZkBatch((GetData("/x"),)), "kafka-server")),
              ("replica-manager", ReplicaManagerShutdown(BrokerShutdownComplete(False, "stop", False))),
              ("kafka-server", BrokerShutdownComplete(False, "stop", False))]
    for to, body in inputs:
        rt.deliver(to, body, "test")
    assert _failures(rt) == []
    assert [(r, b) for _, s, r, b, _ in rt.seen if s == "test"] == inputs  # type: ignore[attr-defined]


def _params(fn: Any) -> list[tuple[str, Any]]:
    return [(p.name, p.default) for p in inspect.signature(fn).parameters.values() if p.name != "self"]


@pytest.mark.parametrize(("protocol", "edge"), [
    ("ZooKeeper", "zk_bridge.executor.ZkExecutor"),
    ("Timers", "edges.timer.TimerEdge"),
    ("Network", "edges.transport.Transport"),
    ("MetricsPublisher", "edges.metrics_http.MetricsEdge"),
    ("LogDirFailureHandler", "edges.log_dirs.LogDirProbe"),
    ("BrokerProcessHandle", "kactor.broker_process.BrokerProcess"),
])
def test_the_edges_the_broker_process_builds_fill_their_slots(protocol: str, edge: str) -> None:
    """Each slot's Protocol is what its edge offers: every method, its parameters by name and order (an edge may
    add optional ones at the end)."""
    proto = getattr(edge_slots, protocol)
    module, _, name = edge.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    methods = [m for m in vars(proto) if not m.startswith("_") and callable(getattr(proto, m))]
    assert methods
    for method in methods:
        wanted, offered = _params(getattr(proto, method)), _params(getattr(cls, method))
        assert [n for n, _ in offered[:len(wanted)]] == [n for n, _ in wanted], (edge, method)
        assert all(d is not inspect.Parameter.empty for _, d in offered[len(wanted):]), (edge, method)
