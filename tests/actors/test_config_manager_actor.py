"""The config-manager actor over its core, and the controller actor taking the dynamic log defaults: a change
notification posted by an admin reaches the replica manager and the controller of the same process."""

from __future__ import annotations

from typing import Any

from actors.base import KActor
from actors.clock import ManualClock
from actors.config_manager_actor import ConfigManagerActor
from actors.controller_actor import ControllerActor
from actors.runtime import Runtime
from core.controller.config import ControllerConfig
from messages import controller_events as ev
from messages.broker_lifecycle import ControllerInit
from messages.credentials import UserCredentialsChanged
from messages.dynamic_config import ConfigManagerInit, LogConfigDefaultsChanged, TopicConfigChanged
from messages.security import AclAuthorizerInit, AuthorizerChanged
from messages.server_startup import AuthorizerStarted
from messages.zk import ZkWatchEvent
from protocol.zk import znodes
from tests.support.actors import ReleaseHeldZkRequests, ZooKeeperModel
from tests.support.broker import broker_zk
from tests.support.fake_zookeeper import FakeZooKeeper

STATIC = (("min.insync.replicas", "1"), ("unclean.leader.election.enable", "false"))


class _Recorder(KActor):
    def on_start(self) -> None:
        self.received: list[Any] = []

    def on_unhandled(self, body: Any, sender: str) -> None:
        self.received.append(body)


def _runtime() -> Runtime:
    rt = Runtime("broker-1", clock=ManualClock(1_000.0))
    for name in ("timer", "metrics", "replica-manager", "controller"):
        rt.spawn(_Recorder, name)
    rt.spawn(ZooKeeperModel, "zk")
    rt.instances["zk"].zk = broker_zk()
    rt.spawn(ConfigManagerActor, "config-manager")
    return rt


def _notify(fake: FakeZooKeeper, topic: str, config: dict[str, str]) -> None:
    fake.create(f"/config/topics/{topic}", znodes.encode_config_entity(config))
    fake.create("/config/changes/config_change_", znodes.encode_config_change(f"topics/{topic}"), sequential=True)


def test_a_notification_reaches_the_replica_manager_and_the_controller() -> None:
    rt = _runtime()
    try:
        rt.deliver("config-manager", ConfigManagerInit(1, STATIC), "edge:process")
        zk = rt.instances["zk"].zk
        assert zk.exists("/config/changes")
        _notify(zk, "t", {"unclean.leader.election.enable": "true", "min.insync.replicas": "2"})
        rt.deliver("config-manager", ZkWatchEvent("/config/changes", "CHILD"), "zk")
        assert rt.instances["replica-manager"].received == [
            TopicConfigChanged("t", (("unclean.leader.election.enable", "true"), ("min.insync.replicas", "2")))]
        assert rt.instances["controller"].received == [ev.TopicUncleanLeaderElectionEnable("t")]
        rt.deliver("config-manager", ZkWatchEvent("/brokers/ids", "CHILD"), "zk")  # not its node: nothing
        assert len(rt.instances["replica-manager"].received) == 1
    finally:
        rt.shutdown()


def test_changes_during_a_run_make_one_more_run_not_one_each() -> None:
    rt = _runtime()
    try:
        rt.deliver("config-manager", ConfigManagerInit(1, STATIC), "edge:process")
        zk = rt.instances["zk"]
        zk.hold = True
        _notify(zk.zk, "a", {"min.insync.replicas": "2"})
        rt.deliver("config-manager", ZkWatchEvent("/config/changes", "CHILD"), "zk")
        before = len(zk.requests)
        for _ in range(3):  # more watches while the run waits for ZooKeeper: one queued run (addChangeNotification)
            rt.deliver("config-manager", ZkWatchEvent("/config/changes", "CHILD"), "zk")
        assert len(zk.requests) == before
        _notify(zk.zk, "b", {"min.insync.replicas": "3"})
        rt.deliver("zk", ReleaseHeldZkRequests(), "test")
        assert [m.topic for m in rt.instances["replica-manager"].received] == ["a", "b"]
        assert rt.instances["config-manager"].manager.last_executed_change == 1
        assert not rt.instances["config-manager"].running
    finally:
        rt.shutdown()


def test_the_controller_takes_the_dynamic_unclean_default_at_once() -> None:
    rt = Runtime("broker-0", clock=ManualClock(1_000.0))
    try:
        for name in ("timer", "metrics", "zk", "state-change-log"):
            rt.spawn(_Recorder, name)
        rt.spawn(ControllerActor, "controller")
        rt.deliver("controller", ControllerInit(ControllerConfig(broker_id=0)), "edge:process")
        core = rt.instances["controller"].controller
        defaults = LogConfigDefaultsChanged((("min.insync.replicas", "1"), ("unclean.leader.election.enable", "true")))
        rt.deliver("controller", defaults, "config-manager")
        assert core.config.unclean_leader_election_enable is True
        assert core.partition_state_machine.config is core.config  # what the elections read
        assert core.replica_state_machine.config is core.config
        rt.deliver("controller", LogConfigDefaultsChanged((("unclean.leader.election.enable", "maybe"),)),
                   "config-manager")
        assert core.config.unclean_leader_election_enable is True  # an unusable value is refused
    finally:
        rt.shutdown()


def test_a_users_credentials_reach_the_network_edge() -> None:
    """UserConfigHandler → CredentialProvider: the user's SCRAM credentials, from start-up's read and from each user
    change notification, go to the "net" actor, whose network edge holds the SASL listeners' CredentialCache."""
    cred = "salt=c2FsdA==,stored_key=c3RvcmVk,server_key=c2VydmVy,iterations=4096"
    rt = _runtime()
    rt.spawn(_Recorder, "net")
    try:
        zk = rt.instances["zk"].zk
        zk.create("/config/users/alice", znodes.encode_config_entity({"SCRAM-SHA-512": cred}))
        rt.deliver("config-manager", ConfigManagerInit(1, STATIC), "edge:process")
        got = [m for m in rt.instances["net"].received if isinstance(m, UserCredentialsChanged)]
        assert got == [UserCredentialsChanged("alice", (("SCRAM-SHA-512", cred),))]
        zk.set("/config/users/alice", znodes.encode_config_entity({}))
        zk.create("/config/changes/config_change_", znodes.encode_config_change("users/alice"), sequential=True)
        rt.deliver("config-manager", ZkWatchEvent("/config/changes", "CHILD"), "zk")
        assert rt.instances["net"].received[-1] == UserCredentialsChanged("alice", ())
    finally:
        rt.shutdown()


class _InOrder(KActor):
    """A recorder writing (its name, what it got) into one list shared by every instance: the delivery order."""

    log: list[tuple[str, Any]] = []

    def on_unhandled(self, body: Any, sender: str) -> None:
        _InOrder.log.append((self.name, body))


def test_the_kafka_server_hears_the_authorizer_started_after_the_authorizing_actors_got_the_acls() -> None:
    """AclAuthorizer.start's futures complete once the cache is loaded: the kafka-server (which then lets the
    listeners read requests) is told after every authorizing actor holds the loaded cache."""
    rt = Runtime("broker-1", clock=ManualClock(1_000.0))
    _InOrder.log = []
    for name in ("timer", "metrics", "replica-manager", "controller", "group-coordinator",
                 "transaction-coordinator", "kafka-server"):
        rt.spawn(_InOrder, name)
    rt.spawn(ZooKeeperModel, "zk")
    rt.instances["zk"].zk = broker_zk()
    rt.spawn(ConfigManagerActor, "config-manager")
    try:
        rt.deliver("config-manager", AclAuthorizerInit(None, True), "edge:process")
        told = [(name, body) for name, body in _InOrder.log if name not in ("timer", "metrics")]
        assert told[-1] == ("kafka-server", AuthorizerStarted())
        assert sorted(name for name, body in told[:-1]) == ["controller", "group-coordinator", "replica-manager",
                                                            "transaction-coordinator"]
        assert all(isinstance(body, AuthorizerChanged) and body.loaded for _, body in told[:-1])
    finally:
        rt.shutdown()
