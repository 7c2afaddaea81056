"""The broker's DynamicConfigManager core: ZkNodeChangeNotificationListener's processing of /config/changes
(sequence numbers, one re-read per change, purge after 15 minutes) and the topic / broker config handlers' effects,
under a frozen clock."""

from __future__ import annotations

import time

import pytest
from freezegun import freeze_time

from core.broker.dynamic_config import ConfigManager, NotificationError, change_number, entity_of_notification
from messages import controller_events as ev
from messages.dynamic_config import LogConfigDefaultsChanged, TopicConfigChanged
from messages.quota import ReplicationQuotasChanged
from messages.zk import GetChildren
from protocol.zk import znodes
from tests.support.broker import drive, emitted
from tests.support.fake_zookeeper import FakeZooKeeper

STATIC = {"min.insync.replicas": "1", "unclean.leader.election.enable": "false"}
MINUTE_MS = 60_000
LONG_MAX = (1 << 63) - 1


def timed_zk() -> FakeZooKeeper:
    """A broker's ZooKeeper whose nodes' ctime is the frozen clock's (the purge of old notifications reads it)."""
    return FakeZooKeeper(clock=lambda: time.time() * 1000).create_top_level_paths()


def notify(zk: FakeZooKeeper, entity_path: str) -> None:
    """What AdminZkClient.changeEntityConfig's createConfigChangeNotification writes."""
    zk.create("/config/changes/config_change_", znodes.encode_config_change(entity_path), sequential=True)


def set_config(zk: FakeZooKeeper, entity_type: str, name: str, config: dict[str, str]) -> None:
    path = f"/config/{entity_type}/{name}"
    if zk.exists(path):
        zk.set(path, znodes.encode_config_entity(config))
    else:
        zk.create(path, znodes.encode_config_entity(config))


def manager(broker_id: int = 1) -> ConfigManager:
    return ConfigManager(broker_id, STATIC, lambda: time.time() * 1000)


def run(mgr: ConfigManager, zk: FakeZooKeeper, proc=None) -> list:
    effects: list = []
    drive(proc if proc is not None else mgr.process_notifications(), zk, effects)
    return effects


def test_change_numbers_and_notification_formats() -> None:
    assert change_number("config_change_0000000042") == 42
    assert entity_of_notification('{"version":2,"entity_path":"topics/orders"}') == ("topics", "orders")
    assert entity_of_notification('{"version":2,"entity_path":"brokers/<default>"}') == ("brokers", "<default>")
    assert entity_of_notification('{"version":1,"entity_type":"topics","entity_name":"t"}') == ("topics", "t")
    assert entity_of_notification("not json") is None  # the deprecated TopicConfigManager's: ignored
    for bad, message in [('{"version":3}', "unsupported version '3'"),
                         ('{"version":2,"entity_path":"groups/g"}', "must have 'entity_path' starting with one of"),
                         ('{"version":1,"entity_type":"brokers","entity_name":"1"}', "'clients' or 'topics'"),
                         ("[1]", "unexpected value")]:
        with pytest.raises(NotificationError, match=message):
            entity_of_notification(bad)


def test_topic_change_reaches_the_replica_manager_and_unclean_reaches_the_controller() -> None:
    with freeze_time("2026-01-01 00:00:00"):
        zk, mgr = timed_zk(), manager()
        set_config(zk, "topics", "a", {"min.insync.replicas": "2"})
        set_config(zk, "topics", "b", {"unclean.leader.election.enable": "TRUE"})
        notify(zk, "topics/a")
        notify(zk, "topics/b")
        effects = run(mgr, zk)
        assert zk.batches[0].ops == (GetChildren("/config/changes", watch=True),)  # the child watch is re-armed
        assert emitted(effects, "replica-manager") == [TopicConfigChanged("a", (("min.insync.replicas", "2"),)),
                                                       TopicConfigChanged("b", (("unclean.leader.election.enable",
                                                                                 "TRUE"),))]
        assert emitted(effects, "controller") == [ev.TopicUncleanLeaderElectionEnable("b")]
        assert mgr.last_executed_change == 1


def test_only_notifications_after_the_last_processed_one_are_processed_and_each_rereads_the_config() -> None:
    with freeze_time("2026-01-01 00:00:00"):
        zk, mgr = timed_zk(), manager()
        set_config(zk, "topics", "a", {"min.insync.replicas": "2"})
        notify(zk, "topics/a")
        run(mgr, zk)
        assert run(mgr, zk) == []  # a watch fired for nothing new
        set_config(zk, "topics", "a", {"min.insync.replicas": "3"})
        notify(zk, "topics/a")
        notify(zk, "topics/a")  # two changes of one topic: two reads of its current config, as Kafka
        effects = run(mgr, zk)
        assert emitted(effects) == [TopicConfigChanged("a", (("min.insync.replicas", "3"),))] * 2
        assert mgr.last_executed_change == 2


def test_notifications_older_than_fifteen_minutes_are_purged() -> None:
    with freeze_time("2026-01-01 00:00:00") as clock:
        zk, mgr = timed_zk(), manager()
        set_config(zk, "topics", "a", {})
        notify(zk, "topics/a")
        clock.tick(10 * 60)
        notify(zk, "topics/a")
        run(mgr, zk)
        assert zk.children("/config/changes") == ["config_change_0000000000", "config_change_0000000001"]
        clock.tick(5 * 60 + 1)  # the first is now 15 min 1 s old, the second 5 min 1 s
        run(mgr, zk)
        assert zk.children("/config/changes") == ["config_change_0000000001"]
        clock.tick(10 * 60)
        run(mgr, zk)
        assert zk.children("/config/changes") == []


def test_a_bad_notification_is_skipped_and_the_next_one_processed() -> None:
    with freeze_time("2026-01-01 00:00:00"):
        zk, mgr = timed_zk(), manager()
        zk.create("/config/changes/config_change_", '{"version":9}', sequential=True)
        zk.create("/config/changes/config_change_", "{not json", sequential=True)
        zk.create("/config/topics/broken", '{"version":1,"config":{"a":1}}')  # a value that is not text
        notify(zk, "topics/broken")
        set_config(zk, "topics", "good", {"min.insync.replicas": "2"})
        notify(zk, "topics/good")
        effects = run(mgr, zk)
        assert emitted(effects) == [TopicConfigChanged("good", (("min.insync.replicas", "2"),))]
        assert mgr.last_executed_change == 3


def test_broker_default_turning_unclean_on_tells_the_controller_once() -> None:
    with freeze_time("2026-01-01 00:00:00"):
        zk, mgr = timed_zk(), manager(broker_id=1)
        set_config(zk, "brokers", "<default>", {"unclean.leader.election.enable": "true", "custom.thing": "x"})
        notify(zk, "brokers/<default>")
        effects = run(mgr, zk)
        defaults = LogConfigDefaultsChanged((("min.insync.replicas", "1"), ("unclean.leader.election.enable", "true")))
        assert emitted(effects, "replica-manager") == [defaults]
        assert emitted(effects, "controller") == [defaults, ev.UncleanLeaderElectionEnable()]
        notify(zk, "brokers/<default>")  # the same config again: nothing changes
        assert run(mgr, zk) == []


def test_broker_config_applies_only_to_its_broker_and_wins_over_the_default() -> None:
    with freeze_time("2026-01-01 00:00:00"):
        zk, mgr = timed_zk(), manager(broker_id=1)
        set_config(zk, "brokers", "2", {"min.insync.replicas": "3"})
        notify(zk, "brokers/2")
        assert run(mgr, zk) == []  # another broker's config
        set_config(zk, "brokers", "<default>", {"min.insync.replicas": "2"})
        set_config(zk, "brokers", "1", {"min.insync.replicas": "3"})
        notify(zk, "brokers/<default>")
        notify(zk, "brokers/1")
        effects = run(mgr, zk)
        assert [dict(m.config)["min.insync.replicas"] for m in log_defaults(effects)] == ["2", "3"]
        assert mgr.log_defaults["min.insync.replicas"] == "3"
        set_config(zk, "brokers", "1", {})  # the broker's own value removed: the cluster default again
        notify(zk, "brokers/1")
        assert [dict(m.config)["min.insync.replicas"] for m in log_defaults(run(mgr, zk))] == ["2"]


def log_defaults(effects: list) -> list:
    return [m for m in emitted(effects, "replica-manager") if isinstance(m, LogConfigDefaultsChanged)]


def test_replication_rates_come_from_the_brokers_own_config_only() -> None:
    """BrokerConfigHandler (2.6.3): the rates of /config/brokers/<id>, Long.MaxValue when absent; <default> and
    another broker's config set none; a value that is no long is refused and the log defaults still apply."""
    with freeze_time("2026-01-01 00:00:00"):
        zk, mgr = timed_zk(), manager(broker_id=1)
        set_config(zk, "brokers", "<default>", {"leader.replication.throttled.rate": "5"})
        notify(zk, "brokers/<default>")
        set_config(zk, "brokers", "2", {"leader.replication.throttled.rate": "6"})
        notify(zk, "brokers/2")
        assert run(mgr, zk) == []
        set_config(zk, "brokers", "1", {"leader.replication.throttled.rate": "1000000",
                                        "follower.replication.throttled.rate": "2000000"})
        notify(zk, "brokers/1")
        assert emitted(run(mgr, zk), "replica-manager") == [ReplicationQuotasChanged(1000000, 2000000)]
        set_config(zk, "brokers", "1", {"follower.replication.throttled.rate": "7"})
        notify(zk, "brokers/1")
        assert emitted(run(mgr, zk), "replica-manager") == [ReplicationQuotasChanged(LONG_MAX, 7)]
        set_config(zk, "brokers", "1", {"replica.alter.log.dirs.io.max.bytes.per.second": "3000"})
        notify(zk, "brokers/1")
        assert emitted(run(mgr, zk), "replica-manager") == [ReplicationQuotasChanged(LONG_MAX, LONG_MAX, 3000)]
        set_config(zk, "brokers", "1", {"follower.replication.throttled.rate": "x", "min.insync.replicas": "2"})
        notify(zk, "brokers/1")
        assert [type(m) for m in emitted(run(mgr, zk), "replica-manager")] == [LogConfigDefaultsChanged]


def test_startup_creates_the_changes_node_and_bootstraps_existing_configs() -> None:
    with freeze_time("2026-01-01 00:00:00"):
        zk, mgr = FakeZooKeeper(clock=lambda: time.time() * 1000), manager(broker_id=1)  # no /config/changes yet
        set_config(zk, "topics", "plain", {"retention.ms": "5"})
        set_config(zk, "topics", "loose", {"unclean.leader.election.enable": "true"})
        set_config(zk, "brokers", "1", {"min.insync.replicas": "2"})
        assert not zk.exists("/config/changes")
        effects = run(mgr, zk, mgr.startup())
        assert zk.exists("/config/changes")
        assert emitted(effects, "controller") == [
            ev.TopicUncleanLeaderElectionEnable("loose"),
            LogConfigDefaultsChanged((("min.insync.replicas", "2"), ("unclean.leader.election.enable", "false")))]
        assert emitted(effects, "replica-manager") == [
            ReplicationQuotasChanged(LONG_MAX, LONG_MAX),  # the broker's own config bootstraps its rates (none)
            LogConfigDefaultsChanged((("min.insync.replicas", "2"), ("unclean.leader.election.enable", "false")))]


def test_an_unusable_dynamic_default_is_refused_and_the_old_defaults_kept() -> None:
    with freeze_time("2026-01-01 00:00:00"):
        zk, mgr = timed_zk(), manager()
        set_config(zk, "brokers", "<default>", {"min.insync.replicas": "zero"})
        notify(zk, "brokers/<default>")
        assert run(mgr, zk) == []
        assert mgr.log_defaults == {"min.insync.replicas": "1", "unclean.leader.election.enable": "false"}
