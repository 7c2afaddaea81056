"""Controller election, failover, resignation and session expiry (KafkaController.elect / onControllerFailover /
maybeResign / triggerControllerMove; reference §2, §4.1)."""

from __future__ import annotations

import json

from core.controller.config import AUTO_LEADER_REBALANCE_TIMER
from core.effects import AddBrokerChannel, BrokerEpochChanged, Cancel, RemoveBrokerChannel, Schedule, StateChange
from messages import controller_events as ev
from messages.broker_lifecycle import BrokerRegistered
from messages.common import TopicPartition
from messages.observability import ControllerChanged
from messages.requests import LeaderAndIsrRequest, UpdateMetadataRequest
from messages.zk import NONODE, ZkOpResult, ZkSessionEvent, ZkWatchEvent
from protocol.zk import paths
from tests.support.controller_events import Harness, create_topic, setup_cluster


def _cluster(brokers: tuple[int, ...] = (1, 2, 3), topics: dict | None = None) -> Harness:
    h = Harness()
    setup_cluster(h.zk, brokers, topics)
    for b in brokers:
        h.add(b)
    return h


def test_first_controller_gets_epoch_1_and_exact_controller_json() -> None:
    """ControllerIntegrationTest.testEmptyCluster: the first controller has epoch 1 and epoch zkVersion 1."""
    h = _cluster()
    h.process(1, ev.Startup())
    c = h.controllers[1]
    assert c.is_active and c.active_controller_id == 1
    assert c.ctx.epoch == 1 and c.ctx.epoch_zk_version == 1
    assert h.zk.get("/controller_epoch") == "1" and h.zk.version("/controller_epoch") == 1
    assert h.zk.get("/controller") == f'{{"version":1,"brokerid":1,"timestamp":"{h.now_ms}"}}'
    assert h.zk.nodes["/controller"].ephemeral_owner == 1
    assert StateChange(ControllerChanged(1, 1, True)) in h.effects[1]
    # failover: channels to every broker, UpdateMetadata (no partitions) to all, auto-rebalance timer in 5 s
    assert sorted(e.broker.id for e in h.effects[1] if isinstance(e, AddBrokerChannel)) == [1, 2, 3]
    ums = h.sent(1, UpdateMetadataRequest)
    assert sorted(s.broker_id for s in ums) == [1, 2, 3] and all(not s.request.partition_states for s in ums)
    assert Schedule(AUTO_LEADER_REBALANCE_TIMER, 5000) in h.effects[1]
    assert c.gauges().active and c.gauges().controller_epoch == 1


def test_second_candidate_records_the_active_controller() -> None:
    """elect(): /controller exists → record activeControllerId and stop."""
    h = _cluster()
    h.process(1, ev.Startup())
    h.process(2, ev.Startup())
    c2 = h.controllers[2]
    assert not c2.is_active and c2.active_controller_id == 1
    assert h.zk.get("/controller_epoch") == "1"
    assert not c2.gauges().active


def test_second_candidate_sees_nodeexists_in_the_election_multi_and_resigns_to_the_winner() -> None:
    """registerControllerAndIncrementControllerEpoch: NODEEXISTS → /controller holds another id → ControllerMoved →
    maybeResign records the winner."""
    h = _cluster()
    h.process(1, ev.Startup())
    # broker 2 raced: its read of /controller (in elect) saw no controller
    calls = {"n": 0}

    def hide_controller(batch):  # noqa: ANN001, ANN202
        calls["n"] += 1
        if any(getattr(op, "path", None) == "/controller" and type(op).__name__ == "GetData" for op in batch.ops):
            return (ZkOpResult(NONODE),)
        return None

    h.zk.interceptors = [lambda b: None, hide_controller]  # Startup's exists, then elect's read
    h.process(2, ev.Startup())
    c2 = h.controllers[2]
    assert not c2.is_active and c2.active_controller_id == 1
    assert h.zk.get("/controller_epoch") == "1"  # the multi was rolled back
    assert json.loads(h.zk.get("/controller"))["brokerid"] == 1


def test_controller_deleted_triggers_reelect_and_a_new_epoch() -> None:
    """/controller deleted → Reelect on every broker; the next controller gets epoch 2."""
    h = _cluster()
    h.process(1, ev.Startup())
    h.process(2, ev.Startup())
    # broker 1's session dies: its ephemeral /controller disappears
    h.zk.delete("/controller")
    h.deliver_watches()
    assert list(h.queues[2]) == [ev.Reelect()]
    h.queues[1].clear()
    h.process(2, h.queues[2].popleft())
    assert h.controllers[2].is_active and h.controllers[2].ctx.epoch == 2
    assert h.zk.get("/controller_epoch") == "2"


def test_failover_reads_a_prepared_layout() -> None:
    """onControllerFailover: context from ZooKeeper, leaders elected for partitions without state, existing states
    kept, LeaderAndIsr for every partition to its replicas."""
    h = _cluster(topics={"foo": {0: [1, 2, 3], 1: [2, 3, 1]}})
    foo0, foo1 = TopicPartition("foo", 0), TopicPartition("foo", 1)
    h.zk.put_partition_state(foo0, leader=2, isr=(2, 3), leader_epoch=4, controller_epoch=0, zk_version=3)
    h.process(1, ev.Startup())
    h.drain()  # /controller's creation fired broker 1's exists watch: ControllerChange (still active) re-arms it
    c = h.controllers[1]
    assert c.ctx.all_topics == {"foo"}
    assert c.ctx.partition_replica_assignment(foo1) == (2, 3, 1)
    # foo-0 kept its state (leader 2 online); foo-1 had none → initialized: leader 2 (first live), epoch 0
    assert c.ctx.partition_leadership_info(foo0).leader_and_isr.leader == 2
    assert c.ctx.partition_leadership_info(foo0).leader_and_isr.leader_epoch == 4
    s1 = h.zk.state(foo1)
    assert (s1.leader_and_isr.leader, s1.leader_and_isr.leader_epoch, s1.leader_and_isr.isr) == (2, 0, (2, 3, 1))
    assert s1.controller_epoch == 1
    lair = [s for s in h.sent(1, LeaderAndIsrRequest)]
    assert {s.broker_id for s in lair} == {1, 2, 3}
    assert c.gauges().global_partitions == 2 and c.gauges().global_topics == 1
    # the watches Kafka arms on failover
    for p in (paths.BrokerIdsZNode, paths.TopicsZNode, paths.DeleteTopicsZNode, paths.IsrChangeNotificationZNode,
              paths.LogDirEventNotificationZNode):
        assert 1 in h.zk.child_watches.get(p, set()), p
    for p in (paths.ReassignPartitionsZNode, paths.PreferredReplicaElectionZNode, "/brokers/topics/foo",
              "/brokers/ids/2", "/controller"):
        assert 1 in h.zk.data_watches.get(p, set()), p


def test_failover_deletes_stale_notifications() -> None:
    """onControllerFailover step 4: stale ISR-change / log-dir notifications are deleted (fenced)."""
    h = _cluster()
    h.zk.create("/isr_change_notification/isr_change_0000000000", '{"version":1,"partitions":[]}')
    h.zk.create("/log_dir_event_notification/log_dir_event_0000000000", '{"version":1,"broker":1,"event":1}')
    h.process(1, ev.Startup())
    assert h.zk.nodes["/isr_change_notification"].children == set()
    assert h.zk.nodes["/log_dir_event_notification"].children == set()


def test_fenced_write_controller_moved_resigns() -> None:
    """A CONTROLLER_MOVED result of an epoch-fenced write → maybeResign → onControllerResignation."""
    h = _cluster(topics={"foo": {0: [1, 2]}})
    h.process(1, ev.Startup())
    c = h.controllers[1]
    # another controller bumped /controller_epoch and took /controller
    h.zk.set("/controller_epoch", "2")
    h.zk.nodes["/controller"].data = '{"version":1,"brokerid":2,"timestamp":"1"}'
    h.clear_effects(1)
    create_topic(h.zk, "bar", {0: [1, 2]})
    h.zk.fired.clear()
    h.process(1, ev.TopicChange())  # creating bar's partition state is fenced → CONTROLLER_MOVED
    assert not c.is_active and c.active_controller_id == 2
    assert Cancel(AUTO_LEADER_REBALANCE_TIMER) in h.effects[1]
    assert sorted(e.broker_id for e in h.effects[1] if isinstance(e, RemoveBrokerChannel)) == [1, 2, 3]
    assert StateChange(ControllerChanged(1, -1, False)) in h.effects[1]
    assert c.ctx.all_topics == set() and c.ctx.epoch == 0
    assert not c.gauges().active


def test_session_expiry_expire_then_register_broker_and_reelect() -> None:
    """Session expiry: EXPIRED → Expire (resign); REESTABLISHED → RegisterBrokerAndReelect (re-register
    /brokers/ids/<id>, new broker epoch, elect again)."""
    h = _cluster()
    c = h.add(1, broker_registration='{"version":4,"host":"host1","port":9091,"jmx_port":-1,"timestamp":"0",'
                                     '"endpoints":["PLAINTEXT://host1:9091"],'
                                     '"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"}}')
    h.process(1, ev.Startup())
    assert c.is_active
    assert c.events_for_session(ZkSessionEvent("EXPIRED")) == [ev.Expire()]
    assert c.events_for_session(ZkSessionEvent("REESTABLISHED")) == [ev.RegisterBrokerAndReelect()]
    assert c.events_for_session(ZkSessionEvent("CONNECTED")) == []
    h.process(1, ev.Expire())
    assert not c.is_active and c.active_controller_id == -1
    # the old session's ephemerals are gone
    h.zk.delete("/controller")
    h.zk.delete("/brokers/ids/1")
    h.zk.fired.clear()
    h.clear_effects(1)
    h.process(1, ev.RegisterBrokerAndReelect())
    assert h.zk.exists("/brokers/ids/1")
    assert c.broker_epoch == h.zk.nodes["/brokers/ids/1"].czxid
    # the broker side and the metrics learn the new broker epoch
    registered = BrokerRegistered(1, c.broker_epoch)
    assert [e for e in h.effects[1] if isinstance(e, BrokerEpochChanged)] == [BrokerEpochChanged(registered)]
    assert c.is_active and c.ctx.epoch == 2


def test_events_for_watch_maps_through_registered_handlers_only() -> None:
    """ZNodeChangeHandler / ZNodeChildChangeHandler registration decides which watch becomes which event."""
    h = _cluster(topics={"foo": {0: [1, 2]}})
    c = h.controllers[1]
    assert c.events_for_watch(ZkWatchEvent("/brokers/ids", "CHILD")) == []
    h.process(1, ev.Startup())
    w = c.events_for_watch
    assert w(ZkWatchEvent("/controller", "CREATED")) == [ev.ControllerChange()]
    assert w(ZkWatchEvent("/controller", "CHANGED")) == [ev.ControllerChange()]
    assert w(ZkWatchEvent("/controller", "DELETED")) == [ev.Reelect()]
    assert w(ZkWatchEvent("/brokers/ids", "CHILD")) == [ev.BrokerChange()]
    assert w(ZkWatchEvent("/brokers/ids/2", "CHANGED")) == [ev.BrokerModifications(2)]
    assert w(ZkWatchEvent("/brokers/topics", "CHILD")) == [ev.TopicChange()]
    assert w(ZkWatchEvent("/brokers/topics/foo", "CHANGED")) == [ev.PartitionModifications("foo")]
    assert w(ZkWatchEvent("/admin/delete_topics", "CHILD")) == [ev.TopicDeletion()]
    assert w(ZkWatchEvent("/admin/reassign_partitions", "CREATED")) == [ev.ZkPartitionReassignment()]
    assert w(ZkWatchEvent("/admin/reassign_partitions", "DELETED")) == []
    assert w(ZkWatchEvent("/admin/preferred_replica_election", "CREATED")) == [
        ev.ReplicaLeaderElection(None, "PREFERRED", "ZkTriggered")]
    assert w(ZkWatchEvent("/isr_change_notification", "CHILD")) == [ev.IsrChangeNotification()]
    assert w(ZkWatchEvent("/log_dir_event_notification", "CHILD")) == [ev.LogDirEventNotification()]
    assert w(ZkWatchEvent("/config/topics/foo", "CHANGED")) == []  # 2.6's controller does not watch topic configs
    assert w(ZkWatchEvent("/brokers/topics/foo/partitions/0/state", "CHANGED")) == []  # not reassigning
    assert w(ZkWatchEvent("/brokers/topics/nope", "CHANGED")) == []
    h.process(1, ev.Expire())
    assert w(ZkWatchEvent("/brokers/ids", "CHILD")) == []
    assert w(ZkWatchEvent("/controller", "DELETED")) == [ev.Reelect()]


def test_process_rejects_unknown_event_types_and_states_are_named() -> None:
    h = _cluster()
    c = h.controllers[1]
    import pytest

    with pytest.raises(TypeError):
        next(c.process(object()))
    assert c.controller_state(ev.BrokerChange()) == "BrokerChange"
    assert c.controller_state(ev.ZkPartitionReassignment()) == "AlterPartitionReassignment"
    assert ev.ControllerState["AutoLeaderBalance"].value == 6
    assert ev.ControllerState.BrokerChange.rate_and_time_metric_name == "LeaderElectionRateAndTimeMs"
    assert ev.ControllerState.UpdateMetadataResponseReceived.rate_and_time_metric_name is None

