"""KafkaServerActor (KafkaServer.startup / controlledShutdown): the top-level znodes and the broker's checked
ephemeral registration, then the controller's Startup; on SIGTERM the controlled shutdown — find the controller in
ZooKeeper, send it ControlledShutdownRequest, retry controlled.shutdown.max.retries times
controlled.shutdown.retry.backoff.ms apart — and then the replica manager's shutdown. ZooKeeper is the in-memory
model behind a stand-in "zk"; the network and timer edges are sinks the test plays, on a ManualClock."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from actors.edge_slots import Edges
from actors.kafka_server_actor import SHUTDOWN_DEADLINE_MS, KafkaServerActor
from edges import gc_policy
from messages import controller_events as ev
from messages.broker_lifecycle import BrokerRegistered, BrokerShutdownComplete, BrokerShutdownRequested, BrokerStartup
from messages.common import Broker, EndPoint, Errors, TopicPartition
from messages.net import NetResponse, NetSend, NetSendFailed
from messages.partition import ReplicaManagerShutdown, ReplicaManagerShuttingDown
from messages.requests import ControlledShutdownRequest, ControlledShutdownResponse
from messages.runtime import ScheduleTimer, TimerFired
from messages.server_startup import AuthorizerStarted, AwaitAuthorizer
from protocol.zk import paths, znodes
from tests.support.actors import ActorTestbed, Delivered, ZooKeeperModel
from tests.support.fake_zookeeper import FakeZooKeeper

SERVER = "kafka-server"
T0 = 1_000_000.0
BACKOFF_MS = 200
SESSION_MS = 6_000
REGISTRATION = znodes.encode_broker(Broker(1, (EndPoint("127.0.0.1", 19091),)), timestamp_ms=0)


def startup(max_retries: int = 3) -> BrokerStartup:
    return BrokerStartup(1, REGISTRATION, controlled_shutdown_max_retries=max_retries,
                         controlled_shutdown_retry_backoff_ms=BACKOFF_MS, session_timeout_ms=SESSION_MS)


def out(caused: list[Delivered]) -> list[tuple[str, object]]:
    """What the kafka-server sent, in order, to anyone but ZooKeeper: (receiver, body)."""
    return [(d.receiver, d.body) for d in caused if d.sender == SERVER and d.receiver != "zk"]


def zk_of(bed: ActorTestbed) -> FakeZooKeeper:
    return bed.rt.instances["zk"].zk


@pytest.fixture
def bed() -> Iterator[ActorTestbed]:
    bed = ActorTestbed("broker-1", start_ms=T0, sinks=("net", "timer", "controller", "replica-manager", "metrics"))
    bed.rt.spawn(ZooKeeperModel, "zk")
    bed.rt.spawn(KafkaServerActor, SERVER)
    try:
        yield bed
    finally:
        bed.shutdown()


def _started(bed: ActorTestbed, max_retries: int = 3) -> int:
    """Start the broker with broker 2 as the registered controller; returns the broker epoch."""
    zk = zk_of(bed)
    zk.create(paths.BrokerIdZNode.path(2), znodes.encode_broker(Broker(2, (EndPoint("127.0.0.1", 19092),)),
                                                                timestamp_ms=0))
    zk.create(paths.ControllerZNode, znodes.encode_controller(2, 0))
    bed.deliver(SERVER, startup(max_retries), "edge:process", at_ms=T0)
    return zk.nodes[paths.BrokerIdZNode.path(1)].czxid


def test_startup_creates_the_top_level_paths_registers_and_starts_the_controller(bed: ActorTestbed) -> None:
    caused = bed.deliver(SERVER, startup(), "edge:process", at_ms=T0)
    zk = zk_of(bed)
    assert all(zk.exists(p) for p in paths.PERSISTENT_ZK_PATHS)
    node = zk.nodes[paths.BrokerIdZNode.path(1)]
    assert node.data == REGISTRATION and node.ephemeral_owner == zk.session_id  # the checked ephemeral create
    assert out(caused) == [("replica-manager", BrokerRegistered(1, node.czxid)),
                           ("metrics", BrokerRegistered(1, node.czxid)),
                           ("controller", ev.Startup())]


def test_a_registration_held_by_an_old_session_is_waited_for_then_refused(bed: ActorTestbed) -> None:
    zk_of(bed).create(paths.BrokerIdZNode.path(1), REGISTRATION)  # another session's node
    assert out(bed.deliver(SERVER, startup(), "edge:process", at_ms=T0)) == [
        ("timer", ScheduleTimer("register-retry", 250))]
    assert out(bed.deliver(SERVER, TimerFired("register-retry"), "timer", at_ms=T0 + 250)) == [
        ("timer", ScheduleTimer("register-retry", 250))]
    # 1.5 session timeouts after startup the broker gives up, as Kafka fails at once ("NodeExists")
    caused = out(bed.deliver(SERVER, TimerFired("register-retry"), "timer", at_ms=T0 + 1.5 * SESSION_MS))
    assert caused == [("replica-manager", ReplicaManagerShutdown(BrokerShutdownComplete(
                          False, "registration failed: /brokers/ids/1 is registered by another live broker", True))),
                      ("timer", ScheduleTimer("shutdown-deadline", SHUTDOWN_DEADLINE_MS))]


def test_controlled_shutdown_asks_the_controller_found_in_zookeeper(bed: ActorTestbed) -> None:
    epoch = _started(bed)
    assert out(bed.deliver(SERVER, BrokerShutdownRequested(), "edge:process", at_ms=T0 + 10)) == [
        ("replica-manager", ReplicaManagerShuttingDown()),  # isShuttingDown before controlledShutdown()
        ("net", NetSend("127.0.0.1", 19092, "controller", ControlledShutdownRequest(1, epoch), 1, SERVER))]
    assert out(bed.deliver(SERVER, NetResponse(1, ControlledShutdownResponse(Errors.NONE)), "net")) == [
        ("replica-manager", ReplicaManagerShutdown(BrokerShutdownComplete(True, "controlled shutdown succeeded"))),
        ("timer", ScheduleTimer("shutdown-deadline", SHUTDOWN_DEADLINE_MS))]


def test_controlled_shutdown_retries_after_the_backoff_then_gives_up(bed: ActorTestbed) -> None:
    epoch = _started(bed, max_retries=3)
    request = ControlledShutdownRequest(1, epoch)
    bed.deliver(SERVER, BrokerShutdownRequested(), "edge:process", at_ms=T0)
    # attempt 1: the connection fails
    assert out(bed.deliver(SERVER, NetSendFailed(1, "connection refused"), "net", at_ms=T0 + 5)) == [
        ("timer", ScheduleTimer("controlled-shutdown-retry", BACKOFF_MS))]
    # attempt 2, after the backoff: the controller could not move every leadership
    assert out(bed.deliver(SERVER, TimerFired("controlled-shutdown-retry"), "timer", at_ms=T0 + 205)) == [
        ("net", NetSend("127.0.0.1", 19092, "controller", request, 2, SERVER))]
    stuck = ControlledShutdownResponse(Errors.NONE, (TopicPartition("t", 0),))
    assert out(bed.deliver(SERVER, NetResponse(2, stuck), "net", at_ms=T0 + 210)) == [
        ("timer", ScheduleTimer("controlled-shutdown-retry", BACKOFF_MS))]
    assert out(bed.deliver(SERVER, NetResponse(1, ControlledShutdownResponse(Errors.NONE)), "net")) == []  # stale
    # attempt 3: the controller moved meanwhile and /controller is gone: no request, and no attempt left
    zk_of(bed).delete(paths.ControllerZNode)
    assert out(bed.deliver(SERVER, TimerFired("controlled-shutdown-retry"), "timer", at_ms=T0 + 410)) == [
        ("replica-manager", ReplicaManagerShutdown(BrokerShutdownComplete(False, "no controller (absent)"))),
        ("timer", ScheduleTimer("shutdown-deadline", SHUTDOWN_DEADLINE_MS))]
    # a second SIGTERM starts nothing new
    assert out(bed.deliver(SERVER, BrokerShutdownRequested(), "edge:process")) == []


def test_without_controlled_shutdown_the_replica_manager_stops_at_once(bed: ActorTestbed) -> None:
    bed.deliver(SERVER, BrokerStartup(1, REGISTRATION, controlled_shutdown_enable=False), "edge:process")
    assert out(bed.deliver(SERVER, BrokerShutdownRequested(), "edge:process")) == [
        ("replica-manager", ReplicaManagerShuttingDown()),
        ("replica-manager", ReplicaManagerShutdown(BrokerShutdownComplete(False, "controlled shutdown disabled"))),
        ("timer", ScheduleTimer("shutdown-deadline", SHUTDOWN_DEADLINE_MS))]


def test_startup_leaves_the_gc_policy_to_the_broker_process(bed: ActorTestbed) -> None:
    """The GC policy is the broker process's to install (tests/kactor/test_broker_process.py): a KafkaServerActor's
    startup, even with a process in its edge slots, leaves CPython's default collector."""

    class Process:
        def startup_complete(self) -> None:
            pass

        def stop_processing_requests(self) -> None:
            pass

        def shutdown_complete(self, msg: BrokerShutdownComplete) -> None:
            pass

    gc_policy.uninstall()
    bed.rt.edges = Edges(process=Process())
    bed.deliver(SERVER, startup(), "edge:process")
    assert not gc_policy.installed() and gc.get_freeze_count() == 0


class RecordingProcess:
    """The broker process's handle: what the kafka-server told it, in order."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def startup_complete(self) -> None:
        self.calls.append("startup_complete")

    def stop_processing_requests(self) -> None:
        self.calls.append("stop_processing_requests")

    def shutdown_complete(self, msg: BrokerShutdownComplete) -> None:
        self.calls.append(f"shutdown_complete: {msg.reason}")


def test_requests_are_processed_only_once_registered_and_no_more_after_the_controlled_shutdown(
        bed: ActorTestbed) -> None:
    """KafkaServer.startup ends with socketServer.startProcessingRequests, after registerBroker; KafkaServer.shutdown
    calls socketServer.stopProcessingRequests after controlledShutdown, before replicaManager.shutdown."""
    process = RecordingProcess()
    bed.rt.edges = Edges(process=process)
    zk = zk_of(bed)
    zk.create(paths.BrokerIdZNode.path(2), znodes.encode_broker(Broker(2, (EndPoint("127.0.0.1", 19092),)),
                                                                timestamp_ms=0))
    zk.create(paths.ControllerZNode, znodes.encode_controller(2, 0))
    zk.create(paths.BrokerIdZNode.path(1), REGISTRATION)  # a previous session's registration
    bed.deliver(SERVER, startup(), "edge:process", at_ms=T0)
    assert process.calls == []  # still waiting for the old session to expire: no request read yet
    zk.delete(paths.BrokerIdZNode.path(1))
    bed.deliver(SERVER, TimerFired("register-retry"), "timer", at_ms=T0 + 250)
    assert process.calls == ["startup_complete"]
    bed.deliver(SERVER, BrokerShutdownRequested(), "edge:process")
    assert process.calls == ["startup_complete"]  # the controlled shutdown still serves clients
    caused = bed.deliver(SERVER, NetResponse(1, ControlledShutdownResponse(Errors.NONE)), "net")
    assert process.calls == ["startup_complete", "stop_processing_requests"]
    assert out(caused) == [
        ("replica-manager", ReplicaManagerShutdown(BrokerShutdownComplete(True, "controlled shutdown succeeded"))),
        ("timer", ScheduleTimer("shutdown-deadline", SHUTDOWN_DEADLINE_MS))]


def test_controlled_shutdown_after_a_session_expiry_sends_the_epoch_of_the_new_registration(
        bed: ActorTestbed) -> None:
    """After a session expiry the controller re-registers the broker (processRegisterBrokerAndReelect: a new czxid,
    a new broker epoch) and tells the broker side; the controlled shutdown then sends that epoch, as
    KafkaServer.controlledShutdown reads kafkaController.brokerEpoch — the old one is refused STALE_BROKER_EPOCH."""
    first = _started(bed)
    zk = zk_of(bed)
    zk.delete(paths.BrokerIdZNode.path(1))  # the session expired; the controller's re-registration:
    zk.create(paths.BrokerIdZNode.path(1), REGISTRATION)
    second = zk.nodes[paths.BrokerIdZNode.path(1)].czxid
    assert second > first
    assert out(bed.deliver(SERVER, BrokerRegistered(1, second), "controller", at_ms=T0 + 5)) == []
    sent = out(bed.deliver(SERVER, BrokerShutdownRequested(), "edge:process", at_ms=T0 + 10))
    assert sent[-1] == ("net", NetSend("127.0.0.1", 19092, "controller", ControlledShutdownRequest(1, second), 1,
                                       SERVER))
    # an epoch older than the one the broker holds (a late message) changes nothing
    bed.deliver(SERVER, BrokerRegistered(1, first), "controller")
    bed.deliver(SERVER, NetSendFailed(1, "connection refused"), "net", at_ms=T0 + 20)
    assert out(bed.deliver(SERVER, TimerFired("controlled-shutdown-retry"), "timer", at_ms=T0 + 220)) == [
        ("net", NetSend("127.0.0.1", 19092, "controller", ControlledShutdownRequest(1, second), 2, SERVER))]


def test_with_an_authorizer_requests_are_processed_only_once_its_acls_are_loaded(bed: ActorTestbed) -> None:
    """KafkaServer.startup hands the authorizer's start futures to socketServer.startProcessingRequests: a broker
    with authorizer.class.name set reads no request, the controller's first UpdateMetadata included, before its
    ACL cache is loaded, whichever of the registration and the load ends first."""
    for load_first in (False, True):
        process = RecordingProcess()
        server = f"kafka-server-{load_first}"
        bed.rt.spawn(KafkaServerActor, server)
        bed.rt.edges = Edges(process=process)
        if zk_of(bed).exists(paths.BrokerIdZNode.path(1)):  # the first round's registration
            zk_of(bed).delete(paths.BrokerIdZNode.path(1))
        bed.deliver(server, AwaitAuthorizer(), "edge:process")
        if load_first:
            bed.deliver(server, AuthorizerStarted(), "config-manager")
            assert process.calls == []
        bed.deliver(server, startup(), "edge:process", at_ms=T0)
        assert zk_of(bed).exists(paths.BrokerIdZNode.path(1))  # registered...
        if not load_first:
            assert process.calls == []  # ...but the ACLs are not loaded yet: no request read
            bed.deliver(server, AuthorizerStarted(), "config-manager")
        assert process.calls == ["startup_complete"]
        bed.deliver(server, AuthorizerStarted(), "config-manager")  # told twice: started once
        assert process.calls == ["startup_complete"]


def test_an_authorizer_that_cannot_load_its_acls_fails_the_start_up(bed: ActorTestbed) -> None:
    """AclAuthorizer.configure throwing ends KafkaServer.startup: the broker stops, with an error, having served
    nothing."""
    process = RecordingProcess()
    bed.rt.edges = Edges(process=process)
    bed.deliver(SERVER, AwaitAuthorizer(), "edge:process")
    bed.deliver(SERVER, startup(), "edge:process", at_ms=T0)
    caused = bed.deliver(SERVER, AuthorizerStarted("KeeperError: CONNECTIONLOSS"), "config-manager")
    assert process.calls == ["stop_processing_requests"]
    assert out(caused)[0] == ("replica-manager", ReplicaManagerShutdown(BrokerShutdownComplete(
        False, "authorizer start-up failed: KeeperError: CONNECTIONLOSS", True)))
