"""Payloads of Kafka's znodes: exact bytes of each encoder, decoder tolerance, errors naming the path, round trips."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from messages.common import (
    Broker,
    EndPoint,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicPartition,
)
from messages.zk import ZStat
from protocol.zk import paths
from protocol.zk import znodes as z
from protocol.zk.znodes import ZnodeDecodeError

TP = TopicPartition


# -- exact encodings (Kafka's documented examples) -----------------------------------------------------------------
def test_controller_exact() -> None:
    assert z.encode_controller(2, 1624383127432) == '{"version":1,"brokerid":2,"timestamp":"1624383127432"}'
    assert z.decode_controller('{"version":1,"brokerid":2,"timestamp":"1624383127432"}') == 2
    assert z.decode_controller(None) is None
    # v2 (3.4+) adds kraftControllerEpoch: only brokerid is read, so it still decodes
    assert z.decode_controller('{"version":2,"brokerid":5,"timestamp":"1","kraftControllerEpoch":-1}') == 5


def test_controller_epoch_exact() -> None:
    assert z.encode_controller_epoch(5) == "5"
    assert z.decode_controller_epoch("5") == 5
    with pytest.raises(ZnodeDecodeError, match="/controller_epoch"):
        z.decode_controller_epoch("five")


def test_partition_state_exact() -> None:
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2, 3), 0), 1)
    assert z.encode_partition_state(state) == \
        '{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2,3]}'


def test_partition_state_decode_takes_zk_version_from_stat() -> None:
    data = '{"controller_epoch":3,"leader":2,"version":1,"leader_epoch":7,"isr":[2,1]}'
    got = z.decode_partition_state(data, ZStat(version=12))
    assert got == LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 7, (2, 1), 12), 3)
    assert z.decode_partition_state(data, 4).leader_and_isr.zk_version == 4
    assert z.decode_partition_state(None, 0) is None
    # 3.2+ leader_recovery_state is ignored
    assert z.decode_partition_state(data[:-1] + ',"leader_recovery_state":1}', 0) is not None


def test_topic_assignment_exact_v2() -> None:
    a = {TP("t", 1): ReplicaAssignment((2, 3, 1)),
         TP("t", 0): ReplicaAssignment((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3))}
    assert z.encode_topic_assignment(a) == (
        '{"version":2,"partitions":{"0":[4,5,6,1,2,3],"1":[2,3,1]},'
        '"adding_replicas":{"0":[4,5,6]},"removing_replicas":{"0":[1,2,3]}}')
    assert z.encode_topic_assignment({TP("t", 0): ReplicaAssignment((1, 2))}) == \
        '{"version":2,"partitions":{"0":[1,2]},"adding_replicas":{},"removing_replicas":{}}'


def test_topic_assignment_decode_tolerates_v1_v3_missing_keys_and_missing_node() -> None:
    assert z.decode_topic_assignment("t", '{"version":1,"partitions":{"0":[1,2]}}') == \
        {TP("t", 0): ReplicaAssignment((1, 2))}
    v3 = ('{"version":3,"partitions":{"0":[4,5,6,1,2,3],"1":[2,3,1]},"adding_replicas":{"0":[4,5,6]},'
          '"removing_replicas":{"0":[1,2,3]},"topic_id":"mKJ3vR6lRRmUo-d2cVJrBw"}')
    assert z.decode_topic_assignment("t", v3) == {
        TP("t", 0): ReplicaAssignment((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3)),
        TP("t", 1): ReplicaAssignment((2, 3, 1))}
    assert z.decode_topic_assignment("t", '{"version":2}') == {}
    assert z.decode_topic_assignment("t", None) == {}


def test_broker_v4_exact() -> None:
    b = Broker(1, (EndPoint("host1", 9092), EndPoint("host1", 9093, "SSL", "SSL")), rack="dc1", epoch=77)
    assert z.encode_broker(b, timestamp_ms=1624383127432) == (
        '{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT","SSL":"SSL"},'
        '"endpoints":["PLAINTEXT://host1:9092","SSL://host1:9093"],"jmx_port":-1,"port":9092,"host":"host1",'
        '"version":4,"timestamp":"1624383127432","rack":"dc1"}')
    no_rack = z.encode_broker(Broker(1, (EndPoint("h", 1),)), timestamp_ms=5, jmx_port=9999)
    assert "rack" not in json.loads(no_rack)
    assert json.loads(no_rack)["jmx_port"] == 9999


def test_broker_without_plaintext_has_null_host_and_port_minus_one() -> None:
    js = json.loads(z.encode_broker(Broker(1, (EndPoint("h", 9093, "SSL", "SSL"),)), timestamp_ms=1))
    assert js["host"] is None and js["port"] == -1


def test_broker_decode_v1_to_v5() -> None:
    v1 = '{"version":1,"host":"localhost","port":9092,"jmx_port":9999,"timestamp":"2233345666"}'
    assert z.decode_broker(0, v1, epoch=10) == Broker(0, (EndPoint("localhost", 9092),), None, 10)
    v2 = ('{"version":2,"host":"localhost","port":9092,"jmx_port":9999,"timestamp":"2233345666",'
          '"endpoints":["PLAINTEXT://host1:9092","SSL://host1:9093"]}')
    assert z.decode_broker(3, v2).endpoints == (EndPoint("host1", 9092), EndPoint("host1", 9093, "SSL", "SSL"))
    v4 = ('{"version":4,"host":"localhost","port":9092,"jmx_port":9999,"timestamp":"2233345666",'
          '"endpoints":["CLIENT://host1:9092","REPLICATION://host1:9093"],"rack":"dc1",'
          '"listener_security_protocol_map":{"CLIENT":"SSL","REPLICATION":"PLAINTEXT"}}')
    b = z.decode_broker(4, v4, epoch=99)
    assert b.rack == "dc1" and b.epoch == 99
    assert b.endpoints == (EndPoint("host1", 9092, "CLIENT", "SSL"), EndPoint("host1", 9093, "REPLICATION",
                                                                               "PLAINTEXT"))
    v5 = ('{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
          '"endpoints":["PLAINTEXT://host1:9092"],"jmx_port":-1,"port":9092,"host":"host1","version":5,'
          '"timestamp":"1624383127432","rack":"dc1"}')
    assert z.decode_broker(5, v5) == Broker(5, (EndPoint("host1", 9092),), "dc1", -1)
    ipv6 = '{"version":4,"jmx_port":-1,"endpoints":["PLAINTEXT://[::1]:9092"]}'
    assert z.decode_broker(6, ipv6).endpoints == (EndPoint("::1", 9092),)


def test_broker_decode_errors_name_the_path() -> None:
    with pytest.raises(ZnodeDecodeError, match="/brokers/ids/7") as e:
        z.decode_broker(7, '{"version":0,"host":"h","port":1}')
    assert e.value.path == "/brokers/ids/7"
    with pytest.raises(ZnodeDecodeError, match="no security protocol"):
        z.decode_broker(7, '{"version":4,"endpoints":["CLIENT://h:1"]}')
    with pytest.raises(ZnodeDecodeError, match="missing key 'version'"):
        z.decode_broker(7, '{"host":"h"}')


def test_admin_and_notification_payloads_exact() -> None:
    assert z.encode_reassign_partitions({TP("foo", 0): [1, 2, 3]}) == \
        '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2,3]}]}'
    assert z.encode_preferred_replica_election([TP("foo", 0)]) == \
        '{"version":1,"partitions":[{"topic":"foo","partition":0}]}'
    assert z.encode_isr_change([TP("topic-b", 0), TP("topic-a", 0)]) == \
        '{"version":1,"partitions":[{"topic":"topic-a","partition":0},{"topic":"topic-b","partition":0}]}'
    assert z.encode_log_dir_event(3) == '{"version":1,"broker":3,"event":1}'
    assert z.encode_config_entity({"cleanup.policy": "compact"}) == \
        '{"version":1,"config":{"cleanup.policy":"compact"}}'
    assert z.encode_config_change("topics/foo") == '{"version":2,"entity_path":"topics/foo"}'
    assert z.encode_cluster_id("abc") == '{"version":"1","id":"abc"}'


def test_admin_and_notification_decoders() -> None:
    assert z.decode_reassign_partitions(
        '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2,3]}]}') == {TP("foo", 0): (1, 2, 3)}
    assert z.decode_preferred_replica_election(
        '{"version":1,"partitions":[{"topic":"foo","partition":0}]}') == {TP("foo", 0)}
    assert z.decode_isr_change(
        '{"version":1,"partitions":[{"topic":"topic-a","partition":0},{"topic":"topic-b","partition":0}]}') == \
        {TP("topic-a", 0), TP("topic-b", 0)}
    assert z.decode_log_dir_event('{"version":1,"broker":3,"event":1}') == 3
    assert z.decode_config_entity('{"version":1,"config":{"a":"b"}}') == {"a": "b"}
    assert z.decode_config_entity(None) == {}
    assert z.decode_config_entity('{"version":1}') == {}
    assert z.decode_config_change('{"version":2,"entity_path":"topics/foo"}') == ("topics", "foo")
    assert z.decode_config_change('{"version":1,"entity_type":"topics","entity_name":"foo"}') == ("topics", "foo")
    assert z.decode_cluster_id('{"version":"1","id":"abc"}') == "abc"


@pytest.mark.parametrize("decode, path", [
    (lambda d: z.decode_reassign_partitions(d), paths.ReassignPartitionsZNode),
    (lambda d: z.decode_preferred_replica_election(d), paths.PreferredReplicaElectionZNode),
    (lambda d: z.decode_topic_assignment("orders", d), "/brokers/topics/orders"),
    (lambda d: z.decode_controller(d), "/controller"),
    (lambda d: z.decode_cluster_id(d), "/cluster/id"),
    (lambda d: z.decode_isr_change(d, "/isr_change_notification/isr_change_0000000003"),
     "/isr_change_notification/isr_change_0000000003"),
    (lambda d: z.decode_partition_state(d, 0, "/brokers/topics/t/partitions/0/state"),
     "/brokers/topics/t/partitions/0/state"),
])
def test_malformed_json_raises_naming_the_path(decode, path) -> None:  # noqa: ANN001
    with pytest.raises(ZnodeDecodeError) as e:
        decode("{not json")
    assert e.value.path == path and path in str(e.value)
    assert isinstance(e.value, ValueError)
    with pytest.raises(ZnodeDecodeError, match=path):
        decode("[1,2]")


def test_wrong_shapes_raise() -> None:
    with pytest.raises(ZnodeDecodeError, match="partition key 'x'"):
        z.decode_topic_assignment("t", '{"version":2,"partitions":{"x":[1]}}')
    with pytest.raises(ZnodeDecodeError, match="replicas of partition 0"):
        z.decode_topic_assignment("t", '{"version":2,"partitions":{"0":[true]}}')
    with pytest.raises(ZnodeDecodeError, match="missing key 'isr'"):
        z.decode_partition_state('{"controller_epoch":1,"leader":1,"leader_epoch":0}', 0, "/p")
    with pytest.raises(ZnodeDecodeError, match="partitions must be a list"):
        z.decode_reassign_partitions('{"version":1,"partitions":{}}')


# -- round trips -----------------------------------------------------------------------------------------------------
_ids = st.integers(min_value=0, max_value=10_000)
_replicas = st.lists(_ids, min_size=1, max_size=6, unique=True).map(tuple)


@st.composite
def _assignment(draw: st.DrawFn) -> dict[TopicPartition, ReplicaAssignment]:
    topic = draw(st.text(st.characters(whitelist_categories=("Ll", "Lu", "Nd"), whitelist_characters="._-"),
                         min_size=1, max_size=20))
    n = draw(st.integers(min_value=0, max_value=8))
    out = {}
    for p in draw(st.lists(st.integers(0, 500), min_size=n, max_size=n, unique=True)):
        replicas = draw(_replicas)
        adding = tuple(r for r in replicas if draw(st.booleans()))
        removing = tuple(r for r in replicas if r not in adding and draw(st.booleans()))
        out[TopicPartition(topic, p)] = ReplicaAssignment(replicas, adding, removing)
    return out


@given(_assignment())
def test_topic_assignment_round_trip(assignment: dict[TopicPartition, ReplicaAssignment]) -> None:
    topic = next(iter(assignment)).topic if assignment else "t"
    assert z.decode_topic_assignment(topic, z.encode_topic_assignment(assignment)) == assignment


@given(leader=st.integers(-2, 10_000), epoch=st.integers(-2, 2**31 - 1), isr=st.lists(_ids, max_size=6).map(tuple),
       controller_epoch=st.integers(0, 2**31 - 1), version=st.integers(0, 2**31 - 1))
def test_partition_state_round_trip(leader: int, epoch: int, isr: tuple[int, ...], controller_epoch: int,
                                    version: int) -> None:
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, epoch, isr, version), controller_epoch)
    assert z.decode_partition_state(z.encode_partition_state(state), ZStat(version=version)) == state


@given(broker_id=_ids, port=st.integers(1, 65535), rack=st.none() | st.text(min_size=1, max_size=10),
       czxid=st.integers(1, 2**62))
def test_broker_round_trip(broker_id: int, port: int, rack: str | None, czxid: int) -> None:
    b = Broker(broker_id, (EndPoint("h", port), EndPoint("h", port + 1 if port < 65535 else 1, "SSL", "SSL")),
               rack, czxid)
    assert z.decode_broker(broker_id, z.encode_broker(b, timestamp_ms=1), epoch=czxid) == b


# -- paths -----------------------------------------------------------------------------------------------------------
def test_paths() -> None:
    tp = TP("orders", 3)
    assert paths.TopicPartitionStateZNode.path(tp) == "/brokers/topics/orders/partitions/3/state"
    assert paths.topic_partition_from_state_path("/brokers/topics/my-topic/partitions/12/state") == \
        TP("my-topic", 12)
    assert paths.BrokerIdZNode.path(4) == "/brokers/ids/4"
    assert paths.broker_id_from_path("/brokers/ids/4") == 4
    assert paths.topic_from_path("/brokers/topics/orders") == "orders"
    assert paths.DeleteTopicsTopicZNode.path("x") == "/admin/delete_topics/x"
    assert paths.ConfigEntityZNode.path("topics", "x") == "/config/topics/x"
    assert paths.IsrChangeNotificationSequenceZNode.path() == "/isr_change_notification/isr_change_"
    assert paths.IsrChangeNotificationSequenceZNode.sequence_number(
        "/isr_change_notification/isr_change_0000000042") == "0000000042"
    assert paths.ConfigEntityChangeNotificationSequenceZNode.create_path() == "/config/changes/config_change_"
    assert paths.PERSISTENT_ZK_PATHS[0] == "/consumers" and len(paths.PERSISTENT_ZK_PATHS) == 14
    with pytest.raises(ValueError, match="not a partition state path"):
        paths.topic_partition_from_state_path("/brokers/topics/x")


# -- /latest_producer_id_block -------------------------------------------------------------------------------------
def test_producer_id_block_exact() -> None:
    """ProducerIdManager.generateProducerIdBlockJson's bytes (a Scala Map4 keeps its order: version, broker, start,
    end; both ends as strings)."""
    assert z.encode_producer_id_block(2, 1000, 1999) == \
        '{"version":1,"broker":2,"block_start":"1000","block_end":"1999"}'
    assert z.decode_producer_id_block('{"version":1,"broker":2,"block_start":"1000","block_end":"1999"}') == \
        (2, 1000, 1999)


def test_producer_id_block_empty_node_is_no_block() -> None:
    assert z.decode_producer_id_block(None) is None
    assert z.decode_producer_id_block("") is None


@pytest.mark.parametrize("data", ['{"version":1,"broker":1,"block_start":0,"block_end":"9"}',
                                  '{"version":1,"broker":1,"block_start":"x","block_end":"9"}',
                                  '{"version":1,"block_start":"0","block_end":"9"}', "[1]"])
def test_producer_id_block_malformed_names_the_path(data: str) -> None:
    with pytest.raises(ZnodeDecodeError, match="/latest_producer_id_block"):
        z.decode_producer_id_block(data)
