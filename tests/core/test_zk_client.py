"""core/zk_client.py: KafkaZkClient's procedures the controller tests do not already pin — the admin tools' writes,
the broker's notifications and ISR writes, the watch flags — against the in-memory ZooKeeper, exact znode contents."""

from __future__ import annotations

import json

from core.effects import run_sync
from core.zk_client import KafkaZkClient, Watches
from messages.common import LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from messages.zk import BADVERSION, NODEEXISTS, OK, GetChildren, GetData, ZkBatch
from protocol.zk import paths
from tests.support.fake_zookeeper import FakeZooKeeper

TP0, TP1 = TopicPartition("t", 0), TopicPartition("t", 1)


def _zk() -> FakeZooKeeper:
    return FakeZooKeeper().create_top_level_paths()


def test_topic_and_its_config_are_created_in_one_transaction() -> None:
    zk, kzk = _zk(), KafkaZkClient()
    r = run_sync(kzk.create_topic_assignment_with_config(
        "t", {TP0: ReplicaAssignment((1, 2)), TP1: ReplicaAssignment((2, 1))}, {"cleanup.policy": "compact"}, False),
        zk)
    assert r.code == OK
    assert zk.get("/brokers/topics/t") == ('{"version":2,"partitions":{"0":[1,2],"1":[2,1]},"adding_replicas":{},'
                                           '"removing_replicas":{}}')
    assert zk.get("/config/topics/t") == '{"version":1,"config":{"cleanup.policy":"compact"}}'
    # again: the topic exists, so nothing is written (the config would have been overwritten)
    again = run_sync(kzk.create_topic_assignment_with_config("t", {TP0: ReplicaAssignment((3,))}, {}, True), zk)
    assert again.code == NODEEXISTS
    assert zk.get("/config/topics/t") == '{"version":1,"config":{"cleanup.policy":"compact"}}'


def test_config_change_writes_the_config_and_a_sequential_notification() -> None:
    zk, kzk = _zk(), KafkaZkClient()
    written = run_sync(kzk.change_entity_config("brokers", "<default>", {"log.retention.ms": "1000"}, False), zk)
    assert written.code == OK
    assert zk.get("/config/brokers/<default>") == '{"version":1,"config":{"log.retention.ms":"1000"}}'
    (change,) = zk.children("/config/changes")
    assert change.startswith("config_change_")
    assert zk.get(f"/config/changes/{change}") == '{"version":2,"entity_path":"brokers/<default>"}'


def test_admin_markers_answer_nodeexists_when_pending() -> None:
    zk, kzk = _zk(), KafkaZkClient()
    run_sync(kzk.create_parents(paths.AdminZNode), zk)
    assert run_sync(kzk.create_delete_topic_path("t"), zk).code == OK and zk.get("/admin/delete_topics/t") == ""
    assert run_sync(kzk.create_delete_topic_path("t"), zk).code == NODEEXISTS
    assert run_sync(kzk.create_partition_reassignment({TP0: [2, 3]}), zk).code == OK
    assert json.loads(zk.get("/admin/reassign_partitions")) == {
        "version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [2, 3]}]}
    assert run_sync(kzk.create_preferred_replica_election({TP1, TP0}), zk).code == OK
    assert zk.get("/admin/preferred_replica_election") == (
        '{"version":1,"partitions":[{"topic":"t","partition":0},{"topic":"t","partition":1}]}')
    assert run_sync(kzk.create_preferred_replica_election({TP0}), zk).code == NODEEXISTS


def test_set_topic_assignment_is_conditional() -> None:
    zk, kzk = _zk(), KafkaZkClient()
    zk.create("/brokers/topics/t", "{}")
    assert run_sync(kzk.set_topic_assignment("t", {TP0: ReplicaAssignment((1,))}, 5), zk).code == BADVERSION
    assert zk.get("/brokers/topics/t") == "{}"
    assert run_sync(kzk.set_topic_assignment("t", {TP0: ReplicaAssignment((1,))}, 0), zk).code == OK
    assert zk.version("/brokers/topics/t") == 1


def test_notifications_and_controller_reads() -> None:
    zk, kzk = _zk(), KafkaZkClient()
    assert run_sync(kzk.propagate_isr_changes([TP1, TP0]), zk)
    assert run_sync(kzk.propagate_log_dir_event(3), zk)
    (isr,) = zk.children("/isr_change_notification")
    (log_dir,) = zk.children("/log_dir_event_notification")
    assert zk.get(f"/isr_change_notification/{isr}") == (
        '{"version":1,"partitions":[{"topic":"t","partition":0},{"topic":"t","partition":1}]}')
    assert zk.get(f"/log_dir_event_notification/{log_dir}") == '{"version":1,"broker":3,"event":1}'
    assert run_sync(kzk.get_partitions_from_isr_change_notifications([isr]), zk) == {TP0, TP1}
    assert run_sync(kzk.get_broker_ids_from_log_dir_events([log_dir]), zk) == [3]
    assert run_sync(kzk.get_controller_epoch(), zk) is None
    zk.setup_controller_epoch(7, 3)
    assert run_sync(kzk.get_controller_epoch(), zk) == (7, 3)
    zk.create("/brokers/ids/2", "{}")
    zk.create("/brokers/ids/10", "{}")
    assert run_sync(kzk.get_sorted_broker_list(), zk) == [2, 10]


def test_a_malformed_notification_is_skipped() -> None:
    zk, kzk = _zk(), KafkaZkClient()
    zk.create("/isr_change_notification/isr_change_0000000000", "not json")
    zk.create("/isr_change_notification/isr_change_0000000001",
              '{"version":1,"partitions":[{"topic":"t","partition":1}]}')
    children = run_sync(kzk.get_all_isr_change_notifications(), zk)
    assert run_sync(kzk.get_partitions_from_isr_change_notifications(children), zk) == {TP1}


def test_isr_write_rechecks_badversion_against_the_znode() -> None:
    """ReplicationUtils.updateLeaderAndIsr: a BADVERSION whose znode already holds what was written counts as
    written (with the znode's version); one holding something else fails."""
    zk, kzk = _zk(), KafkaZkClient()
    zk.put_partition_state(TP0, 1, [1, 2], leader_epoch=4, controller_epoch=2, zk_version=6)
    zk.put_partition_state(TP1, 1, [1], leader_epoch=4, controller_epoch=2, zk_version=6)
    wanted0 = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 4, (1, 2), 5), 2)  # stale version, same contents
    wanted1 = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 4, (1, 2), 5), 2)  # stale version, other contents
    assert run_sync(kzk.conditional_update_partition_states([(TP0, wanted0), (TP1, wanted1)]), zk) == [
        (6, OK), (None, BADVERSION)]


class _Registered:
    def watch_data(self, path: str) -> bool:
        return path == "/brokers/topics/t"

    def watch_children(self, path: str) -> bool:
        return path == "/brokers/topics"


def test_reads_arm_a_watch_only_where_a_handler_is_registered() -> None:
    """ZooKeeperClient.shouldWatch: the registry decides the watch flag of each read."""
    seen: list[ZkBatch] = []
    zk = _zk()

    def answer(batch: ZkBatch):  # type: ignore[no-untyped-def]
        seen.append(batch)
        return zk(batch)

    watches: Watches = _Registered()
    kzk = KafkaZkClient(watches)
    run_sync(kzk.get_all_topics_in_cluster(), answer)
    run_sync(kzk.get_full_replica_assignment_for_topics(["t", "u"]), answer)
    assert seen[0].ops == (GetChildren("/brokers/topics", True),)
    assert seen[1].ops == (GetData("/brokers/topics/t", True), GetData("/brokers/topics/u", False))
