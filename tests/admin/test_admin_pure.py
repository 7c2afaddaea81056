"""Pure parts: topic names (Topic.java), topic configs (LogConfig), plan JSON (ReassignPartitionsCommand),
election JSON (PreferredReplicaLeaderElectionCommand), topic filters, describe rendering."""

from __future__ import annotations

import json

import pytest

from core.broker import log_config
from core.broker.log_config import InvalidConfigurationException
from kactor.admin import describe, preferred, reassign, topics
from messages.common import TopicPartition
from zk_bridge.admin import AdminCommandFailedException, AdminOperationException, InvalidTopicException, topic_name


# -- topic names -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["a", "orders", "my.topic", "my_topic", "my-topic", "A1", "x" * 249, "..a"])
def test_valid_topic_names(name: str) -> None:
    topic_name.validate(name)
    assert topic_name.is_valid(name)


@pytest.mark.parametrize(("name", "message"), [
    ("", "Topic name is illegal, it can't be empty"),
    (".", 'Topic name cannot be "." or ".."'),
    ("..", 'Topic name cannot be "." or ".."'),
    ("x" * 250, "Topic name is illegal, it can't be longer than 249 characters"),
    ("bad name", 'Topic name "bad name" is illegal, it contains a character other than ASCII alphanumerics'),
    ("bad/name", "is illegal"),
    ("naïve", "is illegal"),
    ("a:b", "is illegal"),
])
def test_invalid_topic_names(name: str, message: str) -> None:
    with pytest.raises(InvalidTopicException) as e:
        topic_name.validate(name)
    assert message in str(e.value)
    assert not topic_name.is_valid(name)


def test_collisions_and_internal_topics() -> None:
    assert topic_name.has_collision_chars("a.b") and topic_name.has_collision_chars("a_b")
    assert not topic_name.has_collision_chars("a-b")
    assert topic_name.has_collision("a.b", "a_b") and not topic_name.has_collision("a.b", "a-b")
    assert topic_name.is_internal("__consumer_offsets") and topic_name.is_internal("__transaction_state")
    assert not topic_name.is_internal("orders")


# -- topic configs -------------------------------------------------------------------------------------------------
def test_parse_configs_to_add() -> None:
    assert topics.parse_configs_to_add(["retention.ms = 1000", "cleanup.policy=compact,delete"]) == {
        "retention.ms": "1000", "cleanup.policy": "compact,delete"}
    assert topics.parse_configs_to_add([]) == {}


@pytest.mark.parametrize(("pair", "message"), [
    ("retention.ms", 'all configs to be added must be in the format "key=val"'),
    ("retention.ms=", 'all configs to be added must be in the format "key=val"'),
    ("a=b=c", 'all configs to be added must be in the format "key=val"'),
    ("no.such.config=1", "Unknown topic config name: no.such.config"),
    ("retention.ms=abc", "Invalid value abc for configuration retention.ms: Not a number of type LONG"),
    ("min.insync.replicas=0", "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"),
    ("cleanup.policy=zap", "Invalid value zap for configuration cleanup.policy: String must be one of"),
    ("preallocate=yes", "Expected value to be either true or false"),
    ("min.cleanable.dirty.ratio=2", "Value must be no more than 1"),
    ("max.message.bytes=99999999999", "Not a number of type INT"),
])
def test_invalid_configs(pair: str, message: str) -> None:
    with pytest.raises(InvalidConfigurationException) as e:
        topics.parse_configs_to_add([pair])
    assert message in str(e.value)


def test_throttled_replicas_and_delete_names() -> None:
    log_config.validate({"leader.replication.throttled.replicas": "0:1,1:2"})
    log_config.validate({"follower.replication.throttled.replicas": "*"})
    with pytest.raises(InvalidConfigurationException):
        log_config.validate({"leader.replication.throttled.replicas": "x"})
    assert topics.parse_configs_to_delete([" retention.ms "]) == ["retention.ms"]
    with pytest.raises(InvalidConfigurationException, match="Unknown topic config name: nope"):
        topics.parse_configs_to_delete(["nope"])


# -- reassignment JSON ---------------------------------------------------------------------------------------------
def test_topics_to_move_json() -> None:
    assert reassign.parse_topics_data('{"topics":[{"topic":"foo"},{"topic":"bar"}],"version":1}') == ["foo", "bar"]
    assert reassign.parse_topics_data('{"topics":[]}') == []
    for bad, msg in (("{", "not valid JSON"), ('{"topics":[{"topic":1}]}', '"topics" must be a list'),
                     ('{"version":2,"topics":[]}', "Not supported version field value 2"),
                     ("[]", "must be an object")):
        with pytest.raises(AdminOperationException, match=msg):
            reassign.parse_topics_data(bad)


def test_reassignment_json_round_trip() -> None:
    plan = {TopicPartition("foo", 1): [2, 3], TopicPartition("foo", 0): [1, 2], TopicPartition("bar", 0): [3]}
    text = reassign.format_as_reassignment_json(plan)
    assert text == ('{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[3],"log_dirs":["any"]},'
                    '{"topic":"foo","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},'
                    '{"topic":"foo","partition":1,"replicas":[2,3],"log_dirs":["any","any"]}]}')
    assert reassign.parse_execute_assignment(text) == plan
    # log_dirs are optional; kafka-utils writes none
    assert reassign.parse_execute_assignment(
        '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2]}]}') == {
        TopicPartition("foo", 0): [1, 2]}


@pytest.mark.parametrize(("text", "message"), [
    ('{"version":1,"partitions":[]}', "Partition reassignment list cannot be empty"),
    ('{"version":1}', "Partition reassignment list cannot be empty"),
    ('{"partitions":[{"topic":"a","partition":0,"replicas":[]}]}', "Partition replica list cannot be empty"),
    ('{"partitions":[{"topic":"a","partition":0,"replicas":[1]},{"topic":"a","partition":0,"replicas":[2]}]}',
     "Partition reassignment contains duplicate topic partitions: a-0"),
    ('{"partitions":[{"topic":"a","partition":0,"replicas":[1,2,1]}]}',
     "Partition replica lists may not contain duplicate entries: a-0 contains multiple entries for 1"),
    ('{"partitions":[{"topic":"a","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}',
     "Size of replicas list [1, 2] is different from size of log dirs list"),
    ('{"partitions":[{"topic":"a","partition":0,"replicas":[1],"log_dirs":["/d1"]}]}',
     "bootstrap-server needs to be provided"),
    ('{"partitions":[{"topic":"a","replicas":[1]}]}', 'has no "partition"'),
    ('{"partitions":[{"topic":"a","partition":"0","replicas":[1]}]}', "partition must be an integer"),
    ("not json", "not valid JSON"),
])
def test_reassignment_json_errors(text: str, message: str) -> None:
    with pytest.raises((AdminOperationException, AdminCommandFailedException)) as e:
        reassign.parse_execute_assignment(text)
    assert message in str(e.value)


def test_broker_list_and_states_text() -> None:
    assert reassign.parse_broker_list("3,1,2") == [3, 1, 2]
    with pytest.raises(AdminCommandFailedException, match="Broker list contains duplicate entries: 1"):
        reassign.parse_broker_list("1,2,1")
    with pytest.raises(AdminCommandFailedException, match="Invalid --broker-list"):
        reassign.parse_broker_list("1,a")
    lines = reassign.states_to_lines({TopicPartition("t", 1): ([1, 2], [1, 2], True),
                                      TopicPartition("t", 0): ([1, 2, 3], [3], False),
                                      TopicPartition("s", 0): ([1], [2], True)})
    assert lines == ["Status of partition reassignment:",
                     "There is no active reassignment of partition s-0, but replica set is 1 rather than 2.",
                     "Reassignment of partition t-0 is still in progress.",
                     "Reassignment of partition t-1 is complete."]


def test_calculate_assignment_keeps_partition_count_and_rf() -> None:
    from zk_bridge.admin.assignment import BrokerMetadata
    current = {TopicPartition("a", p): [1, 2] for p in range(4)} | {TopicPartition("b", 0): [1]}
    proposed = reassign.calculate_assignment(current, [BrokerMetadata(3), BrokerMetadata(4)], 0)
    assert proposed == {TopicPartition("a", 0): [3, 4], TopicPartition("a", 1): [4, 3],
                        TopicPartition("a", 2): [3, 4], TopicPartition("a", 3): [4, 3], TopicPartition("b", 0): [3]}


# -- preferred replica election JSON -------------------------------------------------------------------------------
def test_preferred_replica_election_json() -> None:
    assert preferred.parse_preferred_replica_election_data(
        '{"partitions":[{"topic":"foo","partition":1},{"topic":"bar","partition":0}]}') == {
        TopicPartition("foo", 1), TopicPartition("bar", 0)}
    for bad, msg in (("", "Preferred replica election data is empty"), ("{}", "Preferred replica election data is "
                                                                            "empty"),
                     ('{"partitions":[{"topic":"a","partition":0},{"topic":"a","partition":0}]}',
                      "Preferred replica election data contains duplicate partitions: a-0"),
                     ('{"partitions":[{"topic":"a"}]}', "Invalid partition entry")):
        with pytest.raises(AdminOperationException, match=msg):
            preferred.parse_preferred_replica_election_data(bad)


# -- topic filter, describe lines ----------------------------------------------------------------------------------
def test_topic_filter_is_a_full_match_regex_with_commas() -> None:
    f = topics.topic_filter("orders,audit.*")
    assert f.fullmatch("orders") and f.fullmatch("audit-x") and not f.fullmatch("orders2")
    assert topics.topic_filter('"a.b"').fullmatch("a.b")
    with pytest.raises(AdminCommandFailedException, match="is an invalid regex"):
        topics.topic_filter("(")


def test_partition_lines_like_kafka() -> None:
    p = topics.PartitionInfo("t", 0, 1, (1, 2), (1,))
    assert p.line() == "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1"
    assert p.is_under_replicated and not p.is_unavailable({1, 2}) and p.is_unavailable({2})
    q = topics.PartitionInfo("t", 1, None, (3, 1, 2), (1, 2), adding=(3,), removing=(2,))
    assert q.line(marked_for_deletion=True) == ("\tTopic: t\tPartition: 1\tLeader: none\tReplicas: 3,1,2\tIsr: 1,2"
                                                "\tAdding Replicas: 3\tRemoving Replicas: 2\tMarkedForDeletion: true")
    assert topics.topic_line("t", [p], {"retention.ms": "1"}, False) == (
        "Topic: t\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: retention.ms=1")


def _view() -> describe.ClusterView:
    ok = topics.PartitionInfo("t", 0, 1, (1, 2), (1, 2), leader_epoch=3, controller_epoch=1)
    urp = topics.PartitionInfo("t", 1, 2, (2, 1), (2,), leader_epoch=0, controller_epoch=1)
    off = topics.PartitionInfo("t", 2, None, (3,), (3,), leader_epoch=5, controller_epoch=1)
    moving = topics.PartitionInfo("t", 3, 1, (3, 1, 2), (1, 2), adding=(3,), removing=(2,))
    parts = (describe.PartitionView(ok, False, False, False), describe.PartitionView(urp, True, False, False),
             describe.PartitionView(off, False, True, False),
             describe.PartitionView(moving, True, False, True, (3, 1)))
    return describe.ClusterView("zk:1/x", 1, 4, (describe.BrokerView(1, ("PLAINTEXT://h:1",), None, 10),
                                                 describe.BrokerView(2, ("PLAINTEXT://h:2",), "r1", 11)),
                                (describe.TopicView("t", False, {}, parts),),
                                {TopicPartition("t", 3): (3, 1)}, frozenset())


def test_describe_json_and_render() -> None:
    view = _view()
    js = describe.to_json(view)
    assert js["controller"] == {"id": 1, "epoch": 4}
    assert js["summary"] == {"topics": 1, "partitions": 4, "under_replicated": 2, "offline": 1, "reassigning": 1}
    assert [b["controller"] for b in js["brokers"]] == [True, False]
    assert js["topics"][0]["partitions"][3]["reassignment_target"] == [3, 1]
    json.dumps(js)
    from rich.console import Console
    console = Console(width=160, record=True, color_system=None)
    console.print(describe.render(view))
    text = console.export_text()
    for needle in ("Controller: broker 1", "Controller epoch: 4", "PLAINTEXT://h:1", "controller",
                   "under-replicated", "offline", "reassigning → 3,1", "(+3 -2)"):
        assert needle in text, needle
