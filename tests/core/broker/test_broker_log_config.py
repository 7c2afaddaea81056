"""A log's effective config (topic overrides over the broker's log defaults, dynamic ones included) and
min.insync.replicas on the leader: NOT_ENOUGH_REPLICAS before an acks=all append, NOT_ENOUGH_REPLICAS_AFTER_APPEND
when the ISR shrank below it while the produce waited (Partition.appendRecordsToLeader /
checkEnoughReplicasReachOffset), with configs read when a partition is first hosted and changed without a restart."""

from __future__ import annotations

import pytest

from core.broker.log_config import LogConfig, LogConfigs, effective_broker_config, log_defaults_from_broker_config
from messages.common import Errors, TopicPartition
from messages.zk import GetData
from protocol.zk import znodes
from tests.support.broker import broker_zk, drive, emitted, lai_request, lai_state, make_rm, produce_request
from tests.support.fake_zookeeper import FakeZooKeeper

TP = TopicPartition("foo", 0)
BAR = TopicPartition("bar", 0)
T0 = 1_000_000.0


def test_override_wins_over_defaults_and_bad_values_are_refused() -> None:
    config = LogConfig.from_props({"min.insync.replicas": "1", "unclean.leader.election.enable": "false"},
                                  {"min.insync.replicas": " 3 ", "unclean.leader.election.enable": "True"})
    assert (config.min_insync_replicas, config.unclean_leader_election_enable) == (3, True)
    with pytest.raises(ValueError, match="Invalid value 0 for configuration min.insync.replicas: Value must be at "
                                         "least 1"):
        LogConfig.from_props({}, {"min.insync.replicas": "0"})
    with pytest.raises(ValueError, match="Expected value to be either true or false"):
        LogConfig.from_props({"unclean.leader.election.enable": "yes"}, {})


def test_dynamic_broker_configs_layer_over_static_and_rename_to_topic_names() -> None:
    static = {"min.insync.replicas": "1", "unclean.leader.election.enable": "false"}
    dynamic_default = {"min.insync.replicas": "2", "log.retention.ms": "5", "num.io.threads": "9"}
    merged = effective_broker_config(static, dynamic_default, {"min.insync.replicas": "3"})
    assert merged == {"min.insync.replicas": "3", "unclean.leader.election.enable": "false",
                      "log.retention.ms": "5"}
    assert log_defaults_from_broker_config(merged) == {"min.insync.replicas": "3",
                                                       "unclean.leader.election.enable": "false",
                                                       "retention.ms": "5"}


def _leader(tmp_path, zk: FakeZooKeeper, isr=(0, 1, 2)):
    rm = make_rm(tmp_path)
    resp = drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 0, isr, [0, 1, 2], is_new=True)]), T0), zk)
    assert resp.error == Errors.NONE
    return rm


def _produce(rm, zk=None, acks=-1, effects=None, now=T0):
    """The partition's answer (None: waiting in the produce purgatory)."""
    resp = drive(rm.handle_produce(produce_request(TP, "a", "b", acks=acks), now, "client"), zk, effects)
    return None if resp is None else resp.partitions[0]


def test_the_topic_config_is_read_once_when_its_partition_is_first_hosted(tmp_path) -> None:
    zk = broker_zk()
    zk.create("/config/topics/foo", znodes.encode_config_entity({"min.insync.replicas": "3"}))
    rm = _leader(tmp_path, zk, isr=(0, 1))
    assert [b.ops for b in zk.batches] == [(GetData("/config/topics/foo"),)]
    assert rm.online_partition(TP).min_insync_replicas == 3
    resp = _produce(rm)
    assert resp.error == Errors.NOT_ENOUGH_REPLICAS  # ISR 2 < 3, refused before the append
    assert rm.online_partition(TP).log_end_offset == 0
    assert _produce(rm, acks=1).error == Errors.NONE  # acks=1 is not checked
    zk.batches.clear()
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 1, (0, 1), [0, 1, 2])]), T0), zk)
    assert zk.batches == []  # hosted already: not read again


def test_a_topic_config_change_takes_effect_on_the_leader_without_a_restart(tmp_path) -> None:
    rm = _leader(tmp_path, broker_zk(), isr=(0, 1))  # no /config/topics/foo: the broker default, 1
    assert rm.online_partition(TP).min_insync_replicas == 1
    configs: LogConfigs = rm.log_configs
    assert configs.update_topic("foo", {"min.insync.replicas": "3"}, rm.online_partitions())
    assert _produce(rm).error == Errors.NOT_ENOUGH_REPLICAS
    assert not configs.update_topic("foo", {"min.insync.replicas": "x"}, rm.online_partitions())  # refused, kept
    assert rm.online_partition(TP).min_insync_replicas == 3
    assert not configs.update_topic("bar", {"min.insync.replicas": "2"}, rm.online_partitions())  # not hosted
    assert "bar" not in configs.overrides
    configs.reconfigure_defaults({"min.insync.replicas": "2"}, rm.online_partitions())
    assert rm.online_partition(TP).min_insync_replicas == 3  # the topic's override still wins
    configs.update_topic("foo", {}, rm.online_partitions())
    assert rm.online_partition(TP).min_insync_replicas == 2  # now the dynamic default
    assert _produce(rm) is None  # ISR 2 >= 2: appended, waiting for the follower
    assert rm.online_partition(TP).log_end_offset == 2


def test_isr_shrinking_below_min_while_waiting_answers_not_enough_replicas_after_append(tmp_path) -> None:
    zk = broker_zk()
    zk.create("/config/topics/foo", znodes.encode_config_entity({"min.insync.replicas": "2"}))
    zk.put_partition_state(TP, leader=0, isr=[0, 1], leader_epoch=0, controller_epoch=0)
    rm = make_rm(tmp_path, replica_lag_time_max_ms=1000)
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 0, (0, 1), [0, 1], is_new=True)]), T0), zk)
    effects: list = []
    assert _produce(rm, zk, effects=effects) is None  # appended, waiting for follower 1
    drive(rm.run_scheduled_tasks(T0 + 5000), zk, effects)  # follower 1 lagged: the ISR shrinks to [0]
    assert rm.online_partition(TP).isr == (0,)
    (resp,) = emitted(effects, "client")
    assert [(r.tp, r.error, r.base_offset) for r in resp.partitions] == [
        (TP, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, 0)]


def test_the_brokers_log_properties_are_every_logs_defaults(tmp_path) -> None:
    """KafkaServer.copyKafkaConfigToLog: server.properties' log.segment.bytes / log.retention.minutes reach a log
    without an override of its own (log.retention.minutes wins over the default hours), a topic override wins over
    them, and segments roll at the broker's size."""
    props = (("log.retention.hours", "168"), ("log.retention.minutes", "5"), ("log.segment.bytes", "200"))
    rm = make_rm(tmp_path, log_props=props)
    zk = broker_zk()
    zk.create("/config/topics/bar", znodes.encode_config_entity({"segment.bytes": "100000"}))
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 0, (0,), [0], is_new=True),
                                                lai_state(BAR, 0, 0, (0,), [0], is_new=True)]), T0), zk)
    log = rm.online_partition(TP).log
    assert (log.config.segment_bytes, log.config.retention_ms) == (200, 300_000)
    assert rm.online_partition(BAR).log.config.segment_bytes == 100000
    for i in range(4):
        drive(rm.handle_produce(produce_request(TP, "x" * 100), T0 + i), zk)
    assert len(log.segments) == 4  # each 160-byte batch would pass 200 bytes in the segment before it


def _derived(configs: LogConfigs, topic: str) -> LogConfig:
    """What for_topic must answer: the topic's config derived afresh from the current defaults and overrides."""
    try:
        return LogConfig.from_props(configs.defaults, configs.overrides.get(topic, {}))
    except ValueError:
        return LogConfig.from_props(configs.defaults, {})


def test_a_topics_config_is_built_once_per_change_and_always_equals_a_fresh_one(tmp_path) -> None:
    """LogConfigs.for_topic keeps each topic's LogConfig until its overrides or the defaults change (a LeaderAndIsr
    of many partitions of one topic built it once a partition): the same object between changes, and after every
    kind of change (an override set, refused, removed; new defaults; the config read from ZooKeeper) equal to one
    derived afresh."""
    zk = broker_zk()
    zk.create("/config/topics/foo", znodes.encode_config_entity({"min.insync.replicas": "3"}))
    rm = _leader(tmp_path, zk, isr=(0, 1))
    configs: LogConfigs = rm.log_configs
    first = configs.for_topic("foo")
    assert first.min_insync_replicas == 3 and first == _derived(configs, "foo")
    assert configs.for_topic("foo") is first  # no change: not built again
    hosted = list(rm.online_partitions())
    steps = [
        lambda: configs.update_topic("foo", {"min.insync.replicas": "2", "retention.ms": "5"}, hosted),
        lambda: configs.update_topic("foo", {"min.insync.replicas": "x"}, hosted),  # refused: kept
        lambda: configs.reconfigure_defaults({**configs.defaults, "retention.ms": "7"}, hosted),
        lambda: configs.reconfigure_defaults({"min.insync.replicas": "0"}, hosted),  # refused: kept
        lambda: configs.update_topic("foo", {}, hosted),
        lambda: configs.update_topic("foo", {"cleanup.policy": "compact"}, []),  # not hosted: the override goes
    ]
    seen: list[tuple[int, ...]] = [(first.min_insync_replicas, first.retention_ms)]
    for step in steps:
        step()
        config = configs.for_topic("foo")
        assert config == _derived(configs, "foo")
        seen.append((config.min_insync_replicas, config.retention_ms, rm.online_partition(TP).min_insync_replicas))
    # the partition takes each change too, but for the last (an override of a topic not hosted is not kept)
    assert seen == [(3, 604800000), (2, 5, 2), (2, 5, 2), (2, 5, 2), (2, 5, 2), (1, 7, 1), (1, 7, 1)]
    configs.overrides["foo"] = {"min.insync.replicas": "2"}  # what fetch_topic_configs reads anew replaces it
    zk.set("/config/topics/foo", znodes.encode_config_entity({"min.insync.replicas": "2"}))
    drive(configs.fetch_topic_configs(hosted), zk)
    assert configs.for_topic("foo") == _derived(configs, "foo") and configs.for_topic("foo").min_insync_replicas == 2
