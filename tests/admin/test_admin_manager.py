"""AdminManager (the admin APIs' edge handler) on a real ZooKeeper: each request body answered as Kafka 2.6's
AdminManager/KafkaApis answer it, and exactly the znodes Kafka writes.

The controller is not running here: /controller names broker 1 (the AdminManager's broker) or another one, and where
2.6 waits for the controller (leaders of new partitions, a deletion, a preferred election) the test's injected
``sleep`` does what the controller would do, so every wait ends deterministically."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from admin_helpers import snapshot, write_state
from kazoo.client import KazooClient

import core.api.admin  # noqa: F401 - registers the admin APIs
from core.api import registry
from kactor.config import build_config
from messages.common import Errors, TopicPartition
from messages.controller_events import ApiPartitionReassignment, ReplicaLeaderElection
from protocol.api_versions import API_VERSIONS
from protocol.codec import encode_response
from protocol.zk import paths, znodes
from zk_bridge.admin.admin_manager import AdminManager
from zk_bridge.admin.config_entries import DEFAULT_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, TOPIC_CONFIG


class Clock:
    """An injected clock whose sleep advances it and lets the test play the controller."""

    def __init__(self) -> None:
        self.now = 0.0
        self.on_sleep: Callable[[], None] = lambda: None

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.now += s
        self.on_sleep()


@pytest.fixture
def clock() -> Clock:
    return Clock()


class EncodedAdminManager(AdminManager):
    """Every answer is also fitted to each version of its API and encoded with protocol's codec, so a field the
    handler names wrongly fails the test that produced it."""

    def handle(self, api_key: int, version: int, body: dict, ctx: object = None) -> dict:
        response = super().handle(api_key, version, body, ctx)
        r = API_VERSIONS[api_key]
        for v in range(r.min_version, r.max_version + 1):
            encode_response(api_key, v, registry.spec_for_key(api_key).response_to_wire(v, response))
        return response


def manager(zk: KazooClient, clock: Clock, broker_id: int = 1, **overrides: str) -> AdminManager:
    config = build_config({"broker.id": str(broker_id), "zookeeper.connect": "127.0.0.1:1", **overrides})
    return EncodedAdminManager(zk, config, clock=clock, sleep=clock.sleep)


def make_controller(zk: KazooClient, broker_id: int) -> None:
    zk.create(paths.ControllerZNode, znodes.encode_controller(broker_id, 1).encode(), ephemeral=True)


@pytest.fixture
def m(zk: KazooClient, brokers: list[int], clock: Clock) -> AdminManager:
    make_controller(zk, 1)
    return manager(zk, clock)


def get(zk: KazooClient, path: str) -> bytes:
    return zk.get(path)[0]


def create_body(*topics: dict, timeout_ms: int = 0, validate_only: bool = False) -> dict:
    return {"topics": list(topics), "timeout_ms": timeout_ms, "validate_only": validate_only}


def topic(name: str, partitions: int = -1, rf: int = -1, assignments: dict[int, list[int]] | None = None,
          configs: dict[str, str | None] | None = None) -> dict:
    return {"name": name, "num_partitions": partitions, "replication_factor": rf,
            "assignments": [{"partition_index": p, "broker_ids": b} for p, b in (assignments or {}).items()],
            "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()]}


def errors(response: dict, key: str = "topics") -> dict[str, tuple[int, str | None]]:
    return {t["name"]: (t["error_code"], t.get("error_message")) for t in response[key]}


def elect_as_controller(zk: KazooClient, tps: list[TopicPartition], leader_of: Callable[[TopicPartition], int]
                        ) -> Callable[[], None]:
    def act() -> None:
        for tp in tps:
            if zk.exists(paths.TopicZNode.path(tp.topic)):
                write_state(zk, tp.topic, tp.partition, leader_of(tp), [leader_of(tp)])
    return act


# -- CreateTopics --------------------------------------------------------------------------------------------------
def test_create_topics_from_a_broker_that_is_not_the_controller(zk: KazooClient, brokers: list[int],
                                                                clock: Clock) -> None:
    make_controller(zk, 2)
    before = snapshot(zk)
    r = manager(zk, clock).handle(19, 5, create_body(topic("a", 1, 1), topic("b", 1, 1)))
    assert errors(r) == {"a": (Errors.NOT_CONTROLLER, None), "b": (Errors.NOT_CONTROLLER, None)}
    assert snapshot(zk) == before


def test_create_topic_writes_kafkas_znodes_and_waits_for_the_leaders(zk: KazooClient, m: AdminManager,
                                                                     clock: Clock) -> None:
    tps = [TopicPartition("orders", p) for p in (0, 1)]
    clock.on_sleep = elect_as_controller(zk, tps, lambda tp: 2)
    r = m.handle(19, 5, create_body(topic("orders", assignments={0: [2, 3], 1: [3, 1]},
                                          configs={"cleanup.policy": "compact"}), timeout_ms=5000))
    (t,) = r["topics"]
    assert (t["error_code"], t["num_partitions"], t["replication_factor"]) == (0, 2, 2)
    assert get(zk, "/brokers/topics/orders") == \
        b'{"version":2,"partitions":{"0":[2,3],"1":[3,1]},"adding_replicas":{},"removing_replicas":{}}'
    assert get(zk, "/config/topics/orders") == b'{"version":1,"config":{"cleanup.policy":"compact"}}'
    configs = {c["name"]: c for c in t["configs"]}
    assert configs["cleanup.policy"] == {"name": "cleanup.policy", "value": "compact", "read_only": False,
                                         "config_source": TOPIC_CONFIG, "is_sensitive": False}
    assert (configs["segment.bytes"]["value"], configs["segment.bytes"]["config_source"]) == \
        ("1073741824", DEFAULT_CONFIG)
    assert configs["retention.ms"]["value"] == "604800000"
    assert 0 < clock.now < 5


def test_create_topic_places_replicas_on_the_live_brokers_with_the_broker_defaults(
        zk: KazooClient, brokers: list[int], clock: Clock) -> None:
    make_controller(zk, 1)
    m = manager(zk, clock, **{"num.partitions": "4", "default.replication.factor": "3"})
    (t,) = m.handle(19, 4, create_body(topic("d"), timeout_ms=0))["topics"]
    assert t["error_code"] == Errors.REQUEST_TIMED_OUT  # 2.6: timeout_ms <= 0 answers at once
    partitions = json.loads(get(zk, "/brokers/topics/d"))["partitions"]
    assert sorted(partitions) == ["0", "1", "2", "3"]
    assert all(sorted(r) == brokers for r in partitions.values())
    assert not zk.exists("/config/topics/d") or get(zk, "/config/topics/d") == b'{"version":1,"config":{}}'


def test_create_topic_that_gets_no_leader_in_time_is_request_timed_out(zk: KazooClient, m: AdminManager,
                                                                       clock: Clock) -> None:
    (t,) = m.handle(19, 5, create_body(topic("slow", 1, 1), timeout_ms=300))["topics"]
    assert t["error_code"] == Errors.REQUEST_TIMED_OUT
    assert zk.exists("/brokers/topics/slow")
    assert clock.now >= 0.3


def test_validate_only_writes_nothing_and_answers_the_v5_metadata(zk: KazooClient, m: AdminManager) -> None:
    before = snapshot(zk)
    (t,) = m.handle(19, 5, create_body(topic("v", 6, 3, configs={"min.insync.replicas": "2"}),
                                       validate_only=True))["topics"]
    assert (t["error_code"], t["num_partitions"], t["replication_factor"]) == (0, 6, 3)
    assert {c["name"]: c["value"] for c in t["configs"]}["min.insync.replicas"] == "2"
    assert snapshot(zk) == before


def test_create_topics_refusals_carry_kafkas_errors_and_write_nothing(zk: KazooClient, m: AdminManager) -> None:
    m.handle(19, 5, create_body(topic("exists", 1, 1), timeout_ms=0))
    before = snapshot(zk)
    r = m.handle(19, 5, create_body(
        topic("exists", 1, 1), topic("rf4", 1, 4), topic("zero", 0, 1), topic("bad/name", 1, 1),
        topic("badconf", 1, 1, configs={"retention.ms": "soon"}), topic("unknownconf", 1, 1, configs={"x.y": "1"}),
        topic("nullconf", 1, 1, configs={"retention.ms": None}), topic("both", 1, 1, assignments={0: [1]}),
        topic("dup", 1, 1), topic("dup", 2, 1), topic("holes", assignments={0: [1], 2: [2]}),
        topic("twice", assignments={0: [1, 1]}), timeout_ms=1000))
    got = {n: e for n, (e, _) in errors(r).items()}
    assert got == {
        "exists": Errors.TOPIC_ALREADY_EXISTS, "rf4": Errors.INVALID_REPLICATION_FACTOR,
        "zero": Errors.INVALID_PARTITIONS, "bad/name": Errors.INVALID_TOPIC_EXCEPTION,
        "badconf": Errors.INVALID_CONFIG, "unknownconf": Errors.INVALID_CONFIG, "nullconf": Errors.INVALID_REQUEST,
        "both": Errors.INVALID_REQUEST, "dup": Errors.INVALID_REQUEST, "holes": Errors.INVALID_REPLICA_ASSIGNMENT,
        "twice": Errors.INVALID_REPLICA_ASSIGNMENT}
    messages = {n: msg for n, (_, msg) in errors(r).items()}
    assert messages["exists"] == "Topic 'exists' already exists."
    assert messages["rf4"] == "Replication factor: 4 larger than available brokers: 3."
    assert messages["dup"] == "Found multiple entries for this topic."
    assert messages["unknownconf"] == "Unknown topic config name: x.y"
    failed = next(t for t in r["topics"] if t["name"] == "rf4")
    assert (failed["configs"], failed["num_partitions"], failed["replication_factor"]) == ([], -1, -1)
    assert snapshot(zk) == before


# -- DeleteTopics --------------------------------------------------------------------------------------------------
def test_delete_topics_marks_and_waits_for_the_deletion(zk: KazooClient, m: AdminManager, clock: Clock) -> None:
    m.handle(19, 5, create_body(topic("gone", 1, 1), topic("stays", 1, 1), timeout_ms=0))

    def controller_deletes() -> None:
        if zk.exists("/admin/delete_topics/gone"):
            zk.delete("/brokers/topics/gone", recursive=True)
            zk.delete("/admin/delete_topics/gone")

    clock.on_sleep = controller_deletes
    r = m.handle(20, 4, {"topic_names": ["gone", "nope"], "timeout_ms": 5000})
    assert errors(r, "responses") == {"gone": (0, None), "nope": (Errors.UNKNOWN_TOPIC_OR_PARTITION, None)}
    assert not zk.exists("/brokers/topics/gone") and zk.exists("/brokers/topics/stays")


def test_delete_topics_with_no_timeout_marks_and_answers_timed_out(zk: KazooClient, m: AdminManager) -> None:
    m.handle(19, 5, create_body(topic("t", 1, 1), timeout_ms=0))
    r = m.handle(20, 0, {"topic_names": ["t"], "timeout_ms": 0})
    assert errors(r, "responses") == {"t": (Errors.REQUEST_TIMED_OUT, None)}
    assert get(zk, "/admin/delete_topics/t") in (b"", None)
    again = m.handle(20, 0, {"topic_names": ["t"], "timeout_ms": 0})  # already marked: tracked, not an error
    assert errors(again, "responses") == {"t": (Errors.REQUEST_TIMED_OUT, None)}


def test_delete_topics_not_controller_and_disabled(zk: KazooClient, brokers: list[int], clock: Clock) -> None:
    make_controller(zk, 3)
    assert errors(manager(zk, clock).handle(20, 4, {"topic_names": ["x"], "timeout_ms": 1}), "responses") == \
        {"x": (Errors.NOT_CONTROLLER, None)}
    zk.delete(paths.ControllerZNode)
    make_controller(zk, 1)
    off = manager(zk, clock, **{"delete.topic.enable": "false"})
    assert errors(off.handle(20, 4, {"topic_names": ["x"]}), "responses")["x"][0] == Errors.TOPIC_DELETION_DISABLED
    assert errors(off.handle(20, 2, {"topic_names": ["x"]}), "responses")["x"][0] == Errors.INVALID_REQUEST


# -- CreatePartitions ----------------------------------------------------------------------------------------------
def test_create_partitions_with_an_assignment(zk: KazooClient, m: AdminManager, clock: Clock) -> None:
    m.handle(19, 5, create_body(topic("p", assignments={0: [1, 2]}), timeout_ms=0))
    tps = [TopicPartition("p", p) for p in (1, 2)]
    clock.on_sleep = elect_as_controller(zk, tps, lambda tp: 3)
    r = m.handle(37, 2, {"topics": [{"name": "p", "count": 3, "assignments": [{"broker_ids": [3, 1]},
                                                                             {"broker_ids": [2, 3]}]}],
                         "timeout_ms": 5000, "validate_only": False})
    assert errors(r, "results") == {"p": (0, None)}
    assert get(zk, "/brokers/topics/p") == (b'{"version":2,"partitions":{"0":[1,2],"1":[3,1],"2":[2,3]},'
                                           b'"adding_replicas":{},"removing_replicas":{}}')


def test_create_partitions_refusals(zk: KazooClient, m: AdminManager) -> None:
    m.handle(19, 5, create_body(topic("p", assignments={0: [1, 2], 1: [2, 3]}), timeout_ms=0))
    before = snapshot(zk)
    r = m.handle(37, 1, {"topics": [
        {"name": "p", "count": 1, "assignments": None}, {"name": "q", "count": 2, "assignments": None}],
        "timeout_ms": 1000, "validate_only": False})
    assert errors(r, "results") == {
        "p": (Errors.INVALID_PARTITIONS, "Topic currently has 2 partitions, which is higher than the requested 1."),
        "q": (Errors.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'q' does not exist.")}
    r = m.handle(37, 1, {"topics": [{"name": "p", "count": 3, "assignments": [{"broker_ids": [1, 9]}]}],
                         "timeout_ms": 1000, "validate_only": False})
    assert errors(r, "results") == {"p": (Errors.INVALID_REPLICA_ASSIGNMENT,
                                          "Unknown broker(s) in replica assignment: 9.")}
    r = m.handle(37, 1, {"topics": [{"name": "p", "count": 2, "assignments": None}], "timeout_ms": 1000})
    assert errors(r, "results") == {"p": (Errors.INVALID_PARTITIONS, "Topic already has 2 partitions.")}
    assert snapshot(zk) == before


# -- configs -------------------------------------------------------------------------------------------------------
def test_describe_topic_configs_with_sources_and_synonyms(zk: KazooClient, m: AdminManager) -> None:
    m.handle(19, 5, create_body(topic("c", 1, 1, configs={"min.insync.replicas": "2"}), timeout_ms=0))
    zk.create("/config/brokers/<default>", b'{"version":1,"config":{"min.insync.replicas":"3"}}', makepath=True)
    r = m.handle(32, 3, {"resources": [
        {"resource_type": 2, "resource_name": "c", "configuration_keys": ["min.insync.replicas", "segment.bytes"]},
        {"resource_type": 2, "resource_name": "missing", "configuration_keys": None}],
        "include_synonyms": True, "include_documentation": False})
    found, missing = r["results"]
    assert (missing["error_code"], missing["configs"]) == (Errors.UNKNOWN_TOPIC_OR_PARTITION, [])
    entries = {c["name"]: c for c in found["configs"]}
    assert set(entries) == {"min.insync.replicas", "segment.bytes"}
    mir = entries["min.insync.replicas"]
    assert (mir["value"], mir["config_source"]) == ("2", TOPIC_CONFIG)
    assert mir["synonyms"] == [
        {"name": "min.insync.replicas", "value": "2", "source": TOPIC_CONFIG},
        {"name": "min.insync.replicas", "value": "3", "source": DYNAMIC_DEFAULT_BROKER_CONFIG},
        {"name": "min.insync.replicas", "value": "1", "source": DEFAULT_CONFIG}]
    assert entries["segment.bytes"]["synonyms"] == [
        {"name": "log.segment.bytes", "value": "1073741824", "source": DEFAULT_CONFIG}]


def test_describe_broker_configs(zk: KazooClient, m: AdminManager) -> None:
    zk.create("/config/brokers/<default>", b'{"version":1,"config":{"log.cleaner.threads":"2"}}', makepath=True)
    r = m.handle(32, 1, {"resources": [
        {"resource_type": 4, "resource_name": "1", "configuration_keys": ["broker.id", "log.cleaner.threads"]},
        {"resource_type": 4, "resource_name": "", "configuration_keys": None},
        {"resource_type": 4, "resource_name": "2", "configuration_keys": None}], "include_synonyms": False})
    mine, default, other = r["results"]
    assert {c["name"]: (c["value"], c["read_only"]) for c in mine["configs"]} == {"broker.id": ("1", True),
                                                                                 "log.cleaner.threads": ("2", False)}
    assert [(c["name"], c["value"], c["config_source"]) for c in default["configs"]] == \
        [("log.cleaner.threads", "2", DYNAMIC_DEFAULT_BROKER_CONFIG)]
    assert (other["error_code"], other["error_message"]) == (
        Errors.INVALID_REQUEST, "Unexpected broker id, expected 1 or empty string, but received 2")


def test_alter_configs_replaces_the_topic_config_and_notifies(zk: KazooClient, m: AdminManager) -> None:
    m.handle(19, 5, create_body(topic("a", 1, 1, configs={"retention.ms": "1000"}), timeout_ms=0))
    zk.ensure_path("/config/changes")
    r = m.handle(33, 1, {"resources": [{"resource_type": 2, "resource_name": "a", "configs": [
        {"name": "cleanup.policy", "value": "compact"}]}], "validate_only": False})
    assert r["responses"] == [{"error_code": 0, "error_message": None, "resource_type": 2, "resource_name": "a"}]
    assert get(zk, "/config/topics/a") == b'{"version":1,"config":{"cleanup.policy":"compact"}}'
    (change,) = zk.get_children("/config/changes")
    assert get(zk, f"/config/changes/{change}") == b'{"version":2,"entity_path":"topics/a"}'


def test_alter_configs_refusals(zk: KazooClient, m: AdminManager) -> None:
    m.handle(19, 5, create_body(topic("a", 1, 1), timeout_ms=0))
    before = snapshot(zk)
    r = m.handle(33, 0, {"resources": [
        {"resource_type": 2, "resource_name": "a", "configs": [{"name": "retention.ms", "value": "soon"}]},
        {"resource_type": 2, "resource_name": "a", "configs": [{"name": "no.such", "value": "1"}]},
        {"resource_type": 2, "resource_name": "b", "configs": []},
        {"resource_type": 4, "resource_name": "", "configs": [{"name": "broker.id", "value": "7"}]},
        {"resource_type": 3, "resource_name": "g", "configs": []}], "validate_only": False})
    assert [(x["error_code"], x["error_message"]) for x in r["responses"]] == [
        (Errors.INVALID_REQUEST, "Invalid config value for resource ConfigResource(type=TOPIC, name='a'): "
                                 "Invalid value soon for configuration retention.ms: Not a number of type LONG"),
        (Errors.INVALID_CONFIG, "Unknown topic config name: no.such"),
        (Errors.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'b' does not exist."),
        (Errors.INVALID_REQUEST, "Invalid config value for resource ConfigResource(type=BROKER, name=''): "
                                 "Cannot update these configs dynamically: Set(broker.id)"),
        (Errors.INVALID_REQUEST, "AlterConfigs is only supported for topics and brokers, but resource type is "
                                 "GROUP")]
    assert snapshot(zk) == before


def test_incremental_alter_configs(zk: KazooClient, m: AdminManager) -> None:
    m.handle(19, 5, create_body(topic("i", 1, 1, configs={"retention.ms": "1000", "segment.ms": "60000"}),
                                timeout_ms=0))
    r = m.handle(44, 1, {"resources": [{"resource_type": 2, "resource_name": "i", "configs": [
        {"name": "cleanup.policy", "config_operation": 2, "value": "compact"},
        {"name": "retention.ms", "config_operation": 1, "value": None},
        {"name": "segment.ms", "config_operation": 0, "value": "120000"}]},
        {"resource_type": 4, "resource_name": "", "configs": [
            {"name": "log.cleaner.threads", "config_operation": 0, "value": "3"}]},
        {"resource_type": 2, "resource_name": "i", "configs": [
            {"name": "segment.ms", "config_operation": 2, "value": "1"}]}], "validate_only": False})
    assert [(x["error_code"], x["error_message"]) for x in r["responses"]] == [
        (0, None), (0, None),
        (Errors.INVALID_REQUEST, "Config value append is not allowed for config key: segment.ms")]
    assert get(zk, "/config/topics/i") == b'{"version":1,"config":{"segment.ms":"120000","cleanup.policy":' \
                                          b'"delete,compact"}}'
    assert get(zk, "/config/brokers/<default>") == b'{"version":1,"config":{"log.cleaner.threads":"3"}}'


# -- ElectLeaders and reassignments --------------------------------------------------------------------------------
def test_elect_preferred_leaders_through_the_election_znode(zk: KazooClient, m: AdminManager, clock: Clock) -> None:
    m.handle(19, 5, create_body(topic("e", assignments={0: [1, 2], 1: [2, 3]}), timeout_ms=0))
    write_state(zk, "e", 0, 2, [1, 2])
    write_state(zk, "e", 1, 2, [2, 3])
    written: list[bytes] = []

    def controller_elects() -> None:
        if zk.exists(paths.PreferredReplicaElectionZNode):
            written.append(get(zk, paths.PreferredReplicaElectionZNode))
            write_state(zk, "e", 0, 1, [1, 2], leader_epoch=1)
            zk.delete(paths.PreferredReplicaElectionZNode)

    clock.on_sleep = controller_elects
    r = m.handle(43, 2, {"election_type": 0, "timeout_ms": 5000, "topic_partitions": [
        {"topic": "e", "partitions": [0, 1, 7]}]})
    assert r["error_code"] == 0
    (results,) = r["replica_election_results"]
    assert results["topic"] == "e"
    assert [(p["partition_id"], p["error_code"]) for p in results["partition_result"]] == [
        (0, Errors.NONE), (1, Errors.ELECTION_NOT_NEEDED), (7, Errors.UNKNOWN_TOPIC_OR_PARTITION)]
    assert written == [b'{"version":1,"partitions":[{"topic":"e","partition":0}]}']


def test_elect_unclean_leaders_through_the_controllers_event(zk: KazooClient, m: AdminManager) -> None:
    m.handle(19, 5, create_body(topic("u", assignments={0: [2, 3], 1: [9, 8], 2: [1, 2]}), timeout_ms=0))
    write_state(zk, "u", 0, -1, [3])  # no leader, live replicas: electable
    write_state(zk, "u", 1, -1, [9])  # no replica alive: nothing the controller could elect
    write_state(zk, "u", 2, 1, [1, 2])  # a live leader: no election needed
    events = []

    def controller(event: object) -> None:
        events.append(event)
        write_state(zk, "u", 0, 2, [2], leader_epoch=1)

    m.controller_events = controller
    r = m.handle(43, 2, {"election_type": 1, "timeout_ms": 5000, "topic_partitions": [
        {"topic": "u", "partitions": [0, 1, 2]}]})
    assert [(p["partition_id"], p["error_code"], p["error_message"]) for p in
            r["replica_election_results"][0]["partition_result"]] == [
        (0, Errors.NONE, None),
        (1, Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE,
         "Failed to elect leader for partition u-1 under strategy OfflinePartitionLeaderElectionStrategy(true)"),
        (2, Errors.ELECTION_NOT_NEEDED, None)]
    assert events == [ReplicaLeaderElection((TopicPartition("u", 0),), "UNCLEAN", "AdminClientTriggered")]


def test_elect_leaders_from_a_broker_that_is_not_the_controller(zk: KazooClient, brokers: list[int],
                                                                clock: Clock) -> None:
    make_controller(zk, 2)
    r = manager(zk, clock).handle(43, 1, {"election_type": 0, "timeout_ms": 100,
                                          "topic_partitions": [{"topic": "x", "partitions": [0]}]})
    assert r["replica_election_results"] == [{"topic": "x", "partition_result": [
        {"partition_id": 0, "error_code": Errors.NOT_CONTROLLER, "error_message": None}]}]


def test_alter_and_list_partition_reassignments(zk: KazooClient, m: AdminManager) -> None:
    m.handle(19, 5, create_body(topic("r", assignments={0: [1, 2], 1: [2, 3]}), timeout_ms=0))
    r = m.handle(45, 0, {"timeout_ms": 1000, "topics": [{"name": "r", "partitions": [
        {"partition_index": 0, "replicas": [3, 2]}, {"partition_index": 1, "replicas": None},
        {"partition_index": 2, "replicas": [1]}, {"partition_index": 0, "replicas": []}]},
        {"name": "s", "partitions": [{"partition_index": 0, "replicas": [1, 1]}]}]})
    assert r["error_code"] == 0
    got = {(t["name"], p["partition_index"]): (p["error_code"], p["error_message"])
           for t in r["responses"] for p in t["partitions"]}
    assert got == {
        ("r", 0): (Errors.INVALID_REPLICA_ASSIGNMENT, "Empty replica list specified in partition reassignment."),
        ("r", 1): (Errors.NO_REASSIGNMENT_IN_PROGRESS, None),
        ("r", 2): (Errors.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist."),
        ("s", 0): (Errors.INVALID_REPLICA_ASSIGNMENT,
                   "Duplicate replica ids in partition reassignment replica list: [1, 1]")}
    assert not zk.exists(paths.ReassignPartitionsZNode)
    r = m.handle(45, 0, {"timeout_ms": 1000, "topics": [{"name": "r", "partitions": [
        {"partition_index": 0, "replicas": [3, 2]}]}]})
    assert r["responses"] == [{"name": "r", "partitions": [
        {"partition_index": 0, "error_code": 0, "error_message": None}]}]
    assert get(zk, paths.ReassignPartitionsZNode) == \
        b'{"version":1,"partitions":[{"topic":"r","partition":0,"replicas":[3,2]}]}'
    # what the controller writes once it has started it: the full replica set with adding/removing replicas
    zk.set("/brokers/topics/r", b'{"version":2,"partitions":{"0":[3,2,1],"1":[2,3]},"adding_replicas":{"0":[3]},'
                                b'"removing_replicas":{"0":[1]}}')
    listed = m.handle(46, 0, {"timeout_ms": 1000, "topics": None})
    assert listed == {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "topics": [
        {"name": "r", "partitions": [{"partition_index": 0, "replicas": [3, 2, 1], "adding_replicas": [3],
                                      "removing_replicas": [1]}]}]}


def test_reassignment_apis_from_a_broker_that_is_not_the_controller(zk: KazooClient, brokers: list[int],
                                                                    clock: Clock) -> None:
    make_controller(zk, 3)
    m = manager(zk, clock)
    assert m.handle(45, 0, {"timeout_ms": 1, "topics": []})["error_code"] == Errors.NOT_CONTROLLER
    assert m.handle(46, 0, {"timeout_ms": 1, "topics": None})["error_code"] == Errors.NOT_CONTROLLER


def test_cancel_of_a_reassignment_still_moving_goes_to_the_controller(zk: KazooClient, m: AdminManager,
                                                                       clock: Clock) -> None:
    """AlterPartitionReassignments with null replicas while the reassignment moves (its /admin/reassign_partitions
    still there, as it stays until the reassignment completes): the controller's ApiPartitionReassignment event
    (KafkaController.alterPartitionReassignments), answered NONE once the topic znode shows the origin replicas
    back. Through the znode it waited for the move to end, and timed out."""
    m.handle(19, 5, create_body(topic("r", assignments={0: [1], 1: [2]}), timeout_ms=0))
    tp = TopicPartition("r", 0)
    zk.create(paths.ReassignPartitionsZNode, znodes.encode_reassign_partitions({tp: (3,)}).encode(), makepath=True)
    moving = b'{"version":2,"partitions":{"0":[3,1],"1":[2]},"adding_replicas":{"0":[3]},"removing_replicas":{"0":[1]}}'
    zk.set("/brokers/topics/r", moving)
    events: list[object] = []

    def controller(event: object) -> None:
        events.append(event)

    def controller_acts() -> None:  # processApiPartitionReassignment, on the controller's thread, a little later
        if events and get(zk, "/brokers/topics/r") == moving:
            zk.set("/brokers/topics/r", b'{"version":2,"partitions":{"0":[1],"1":[2]},"adding_replicas":{},'
                                        b'"removing_replicas":{}}')
            zk.delete(paths.ReassignPartitionsZNode)

    m.controller_events = controller
    clock.on_sleep = controller_acts
    r = m.handle(45, 0, {"timeout_ms": 30000, "topics": [{"name": "r", "partitions": [
        {"partition_index": 0, "replicas": None}, {"partition_index": 1, "replicas": None}]}]})
    assert r["responses"] == [{"name": "r", "partitions": [
        {"partition_index": 0, "error_code": Errors.NONE, "error_message": None},
        {"partition_index": 1, "error_code": Errors.NO_REASSIGNMENT_IN_PROGRESS, "error_message": None}]}]
    assert events == [ApiPartitionReassignment(((tp, None),))]
    assert clock.now < 1  # answered once the controller acted, not at the request's timeout


def test_reassignments_go_to_the_controller_beside_one_in_progress(zk: KazooClient, m: AdminManager,
                                                                    clock: Clock) -> None:
    """reassign-partitions --execute --additional while another reassignment moves: the controller's event, each
    partition answered once its topic znode shows phase U (or the reassignment complete); one the controller never
    gets to is REQUEST_TIMED_OUT; a cancellation of a reassignment that completed to its target first is
    NO_REASSIGNMENT_IN_PROGRESS."""
    m.handle(19, 5, create_body(topic("a", assignments={0: [1, 2], 1: [1, 3], 2: [2, 3]}), timeout_ms=0))
    zk.create(paths.ReassignPartitionsZNode,
              znodes.encode_reassign_partitions({TopicPartition("a", 2): (3, 1)}).encode(), makepath=True)
    zk.set("/brokers/topics/a", b'{"version":2,"partitions":{"0":[1,2],"1":[1,3],"2":[3,1,2]},'
                                b'"adding_replicas":{"2":[1]},"removing_replicas":{"2":[2]}}')
    events: list[object] = []

    def controller_acts() -> None:
        if events:  # 0 starts (phase U), 1 is complete already (its target in sync), 2 completed to its target first
            zk.set("/brokers/topics/a", b'{"version":2,"partitions":{"0":[3,2,1],"1":[1,2],"2":[3,1]},'
                                        b'"adding_replicas":{"0":[3]},"removing_replicas":{"0":[1]}}')

    m.controller_events = events.append
    clock.on_sleep = controller_acts
    r = m.handle(45, 0, {"timeout_ms": 5000, "topics": [{"name": "a", "partitions": [
        {"partition_index": 0, "replicas": [3, 2]}, {"partition_index": 1, "replicas": [1, 2]},
        {"partition_index": 2, "replicas": None}]}]})
    assert [(p["partition_index"], p["error_code"]) for p in r["responses"][0]["partitions"]] == [
        (0, Errors.NONE), (1, Errors.NONE), (2, Errors.NO_REASSIGNMENT_IN_PROGRESS)]
    assert events == [ApiPartitionReassignment(((TopicPartition("a", 0), (3, 2)), (TopicPartition("a", 1), (1, 2)),
                                                (TopicPartition("a", 2), None)))]
    # a controller that never acts (it moved away meanwhile): the request's timeout
    events.clear()
    clock.on_sleep = lambda: None
    before = clock.now
    r = m.handle(45, 0, {"timeout_ms": 2000, "topics": [{"name": "a", "partitions": [
        {"partition_index": 1, "replicas": [2]}]}]})
    assert r["responses"][0]["partitions"][0]["error_code"] == Errors.REQUEST_TIMED_OUT
    assert 2 <= clock.now - before < 3
