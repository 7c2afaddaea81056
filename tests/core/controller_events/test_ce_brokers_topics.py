"""BrokerChange, TopicChange, PartitionModifications, ControlledShutdown, elections, notifications
(KafkaController process* methods; reference §3.4, §4.3–4.7, §8.3–8.5)."""

from __future__ import annotations

from core.controller.config import AUTO_LEADER_REBALANCE_TIMER
from core.effects import AddBrokerChannel, RemoveBrokerChannel, Schedule
from messages import controller_events as ev
from messages.common import Errors, ReplicaAssignment, TopicPartition
from messages.requests import (
    ControlledShutdownResponse,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    PartitionError,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from messages.zk import Create
from protocol.zk import paths, znodes
from tests.support.controller_events import Harness, active_cluster, create_topic, register_broker, setup_cluster

FOO0, FOO1 = TopicPartition("foo", 0), TopicPartition("foo", 1)


_active = active_cluster


def test_new_topic_creation() -> None:
    """TopicChange → onNewPartitionCreation: leader = first live replica, epoch 0, exact state JSON, LeaderAndIsr
    isNew=true to the ISR members, UpdateMetadata to every broker."""
    h = _active()
    create_topic(h.zk, "foo", {0: [2, 1, 3], 1: [3, 2, 1]})
    h.drain()
    c = h.controllers[1]
    assert c.ctx.all_topics == {"foo"}
    assert h.zk.get("/brokers/topics/foo/partitions/0/state") == \
        '{"controller_epoch":1,"leader":2,"version":1,"leader_epoch":0,"isr":[2,1,3]}'
    assert h.zk.version("/brokers/topics/foo/partitions/0/state") == 0
    lair = h.sent(1, LeaderAndIsrRequest)
    assert {s.broker_id for s in lair} == {1, 2, 3}
    states = [ps for s in lair for ps in s.request.partition_states if ps.topic_partition == FOO0]
    assert len(states) == 3 and all(ps.is_new and ps.leader == 2 and ps.leader_epoch == 0 for ps in states)
    um = [s for s in h.sent(1, UpdateMetadataRequest) if s.request.partition_states]
    assert {s.broker_id for s in um} == {1, 2, 3}
    assert c.ctx.partition_states[FOO0].name == "OnlinePartition"
    assert 1 in h.zk.data_watches["/brokers/topics/foo"]


def test_new_topic_with_a_dead_replica_leads_from_the_first_live_one() -> None:
    h = _active(brokers=(1, 2))
    create_topic(h.zk, "foo", {0: [3, 2, 1]})
    h.drain()
    s = h.zk.state(FOO0)
    assert (s.leader_and_isr.leader, s.leader_and_isr.isr) == (2, (2, 1))


def test_partition_expansion() -> None:
    """PartitionModifications: partitions added to the topic znode are created."""
    h = _active(topics={"foo": {0: [1, 2]}})
    h.zk.set("/brokers/topics/foo", znodes.encode_topic_assignment(
        {FOO0: ReplicaAssignment((1, 2)), FOO1: ReplicaAssignment((2, 3))}))
    h.drain()
    assert h.processed[1][-1] == ev.PartitionModifications("foo")
    s = h.zk.state(FOO1)
    assert (s.leader_and_isr.leader, s.leader_and_isr.isr, s.leader_and_isr.leader_epoch) == (2, (2, 3), 0)
    assert h.controllers[1].ctx.partition_replica_assignment(FOO1) == (2, 3)


def test_broker_death_moves_leaders_and_shrinks_isr() -> None:
    """BrokerChange with a dead broker: its led partitions get a new leader (epoch + 1), it leaves every ISR; a
    partition whose only ISR member dies keeps it with leader −1 (onBrokerFailure, OfflineReplica)."""
    h = _active(topics={"foo": {0: [2, 1, 3], 1: [3, 2]}, "solo": {0: [2, 3]}})
    solo = TopicPartition("solo", 0)
    h.zk.leader_writes_isr(solo, (2,))
    h.zk.fired.clear()
    c = h.controllers[1]
    c.ctx.put_partition_leadership_info(solo, h.zk.state(solo))
    h.zk.delete("/brokers/ids/2")
    h.drain()
    assert ev.BrokerChange() in h.processed[1]
    assert RemoveBrokerChannel(2) in h.effects[1]
    s0 = h.zk.state(FOO0)
    assert (s0.leader_and_isr.leader, s0.leader_and_isr.leader_epoch, s0.leader_and_isr.isr) == (1, 1, (1, 3))
    s1 = h.zk.state(FOO1)  # leader 3 stays, 2 removed from the ISR by OfflineReplica: epoch + 1
    assert (s1.leader_and_isr.leader, s1.leader_and_isr.leader_epoch, s1.leader_and_isr.isr) == (3, 1, (3,))
    ss = h.zk.state(solo)  # no live ISR member, unclean disabled: leader −1, the last ISR member kept
    assert ss.leader_and_isr.leader == -1 and ss.leader_and_isr.isr == (2,)
    assert c.ctx.offline_partition_count == 1
    assert c.ctx.live_broker_ids() == {1, 3}


def test_broker_restart_and_bounce() -> None:
    """A new broker gets a channel, UpdateMetadata with all partitions and LeaderAndIsr for its replicas; a bounced
    broker (higher czxid) is failed then started again."""
    h = _active(brokers=(1, 2), topics={"foo": {0: [1, 3]}})
    register_broker(h.zk, 3)
    h.drain()
    assert any(isinstance(e, AddBrokerChannel) and e.broker.id == 3 for e in h.effects[1])
    assert any(s.request.partition_states for s in h.sent(1, UpdateMetadataRequest, to=3))
    assert h.sent(1, LeaderAndIsrRequest, to=3)
    h.clear_effects(1)
    # bounce: the registration is re-created (new czxid) between two BrokerChange events
    h.zk.delete("/brokers/ids/3")
    register_broker(h.zk, 3)
    h.drain()
    chans = h.channels(1)
    assert chans[0] == RemoveBrokerChannel(3) and isinstance(chans[1], AddBrokerChannel)
    assert h.controllers[1].ctx.live_broker_epoch(3) == h.zk.nodes["/brokers/ids/3"].czxid


def test_controlled_shutdown() -> None:
    """ControlledShutdown: leaders move off the broker (ControlledShutdown strategy), StopReplica for followed
    partitions, the broker leaves the ISRs; the response lists the partitions it still leads (RF 1 excluded)."""
    h = _active(topics={"foo": {0: [2, 1], 1: [1, 2]}, "rf1": {0: [2]}})
    c = h.controllers[1]
    epoch2 = c.ctx.live_broker_epoch(2)
    resp = h.process(1, ev.ControlledShutdown(2, epoch2))
    assert resp == ControlledShutdownResponse(Errors.NONE, ())
    s0 = h.zk.state(FOO0)
    assert (s0.leader_and_isr.leader, s0.leader_and_isr.isr, s0.leader_and_isr.leader_epoch) == (1, (1,), 1)
    s1 = h.zk.state(FOO1)
    assert (s1.leader_and_isr.leader, s1.leader_and_isr.isr) == (1, (1,))
    stops = h.sent(1, StopReplicaRequest, to=2)
    assert any(ps.topic_partition == FOO1 and not ps.delete_partition
               for s in stops for ps in s.request.partition_states)
    assert 2 in c.ctx.shutting_down_broker_ids
    # stale epoch / unknown broker (BrokerNotAvailableException → BROKER_NOT_AVAILABLE, with or without an epoch) /
    # not the controller
    assert h.process(1, ev.ControlledShutdown(2, epoch2 - 1)).error == Errors.STALE_BROKER_EPOCH
    assert h.process(1, ev.ControlledShutdown(9, -1)) == ControlledShutdownResponse(Errors.BROKER_NOT_AVAILABLE)
    assert h.process(1, ev.ControlledShutdown(9, 12345)) == ControlledShutdownResponse(Errors.BROKER_NOT_AVAILABLE)
    h.add(3)
    h.process(3, ev.Startup())
    assert h.process(3, ev.ControlledShutdown(2, -1)).error == Errors.STALE_CONTROLLER_EPOCH


def test_controlled_shutdown_with_no_other_isr_member_keeps_the_leader() -> None:
    h = _active(topics={"foo": {0: [2, 1]}})
    h.zk.leader_writes_isr(FOO0, (2,))
    h.drain()
    h.controllers[1].ctx.put_partition_leadership_info(FOO0, h.zk.state(FOO0))
    resp = h.process(1, ev.ControlledShutdown(2, -1))
    assert resp == ControlledShutdownResponse(Errors.NONE, (FOO0,))


def test_preferred_replica_election_from_znode() -> None:
    """/admin/preferred_replica_election created → ReplicaLeaderElection(ZkTriggered): preferred leaders elected, the
    znode deleted, the event re-enqueued to re-arm the exists watch."""
    h = _active(topics={"foo": {0: [1, 2], 1: [2, 1]}})
    # move foo-1's leadership away from its preferred replica 2
    h.process(1, ev.ControlledShutdown(2, -1))
    h.zk.delete("/brokers/ids/2")
    h.drain()
    register_broker(h.zk, 2)
    h.drain()
    h.zk.leader_writes_isr(FOO1, (1, 2))
    h.drain()
    assert h.zk.state(FOO1).leader_and_isr.leader == 1
    h.zk.create(paths.PreferredReplicaElectionZNode, znodes.encode_preferred_replica_election({FOO1, FOO0}))
    h.drain()
    assert h.zk.state(FOO1).leader_and_isr.leader == 2
    assert not h.zk.exists(paths.PreferredReplicaElectionZNode)
    assert ev.ReplicaLeaderElection(None, "PREFERRED", "ZkTriggered") in h.processed[1]
    assert 1 in h.zk.data_watches[paths.PreferredReplicaElectionZNode]


def test_admin_preferred_election_results() -> None:
    """ElectLeaders (AdminClientTriggered): ELECTION_NOT_NEEDED / UNKNOWN_TOPIC_OR_PARTITION / new leader."""
    h = _active(topics={"foo": {0: [1, 2]}})
    res = h.process(1, ev.ReplicaLeaderElection((FOO0, TopicPartition("nope", 0)), "PREFERRED",
                                                "AdminClientTriggered"))
    by_tp = {r.topic_partition: r.error for r in res}
    assert by_tp == {FOO0: Errors.ELECTION_NOT_NEEDED, TopicPartition("nope", 0): Errors.UNKNOWN_TOPIC_OR_PARTITION}
    h.add(2)
    res = h.process(2, ev.ReplicaLeaderElection((FOO0,), "PREFERRED", "AdminClientTriggered"))
    assert [r.error for r in res] == [Errors.NOT_CONTROLLER]


def _imbalanced(n_moved: int, n_total: int = 10) -> Harness:
    """n_total partitions preferring broker 1; the first n_moved are led by broker 2 (state znodes prepared)."""
    h = Harness()
    topics = {"t": {p: [1, 2] for p in range(n_total)}}
    setup_cluster(h.zk, (1, 2), topics)
    for p in range(n_total):
        h.zk.put_partition_state(TopicPartition("t", p), leader=2 if p < n_moved else 1, isr=(1, 2),
                                 controller_epoch=0)
    h.add(1)
    h.process(1, ev.Startup())
    h.drain()
    h.clear_effects(1)
    return h


def test_auto_rebalance_at_exactly_ten_percent_does_nothing() -> None:
    """checkAndTriggerAutoLeaderRebalance: ratio must be strictly greater than 10%."""
    h = _imbalanced(1)
    h.process(1, ev.AutoPreferredReplicaLeaderElection())
    assert h.zk.state(TopicPartition("t", 0)).leader_and_isr.leader == 2
    assert Schedule(AUTO_LEADER_REBALANCE_TIMER, 300_000) in h.effects[1]


def test_auto_rebalance_above_threshold_moves_leaders_back() -> None:
    h = _imbalanced(2)
    h.process(1, ev.AutoPreferredReplicaLeaderElection())
    for p in range(2):
        s = h.zk.state(TopicPartition("t", p))
        assert s.leader_and_isr.leader == 1 and s.leader_and_isr.leader_epoch == 1
    assert Schedule(AUTO_LEADER_REBALANCE_TIMER, 300_000) in h.effects[1]
    assert h.controllers[1].ctx.preferred_replica_imbalance_count == 0


def test_auto_rebalance_one_election_per_imbalanced_broker() -> None:
    """Kafka 2.6 calls onReplicaElection once per imbalanced broker (reference Corrections 11): partitions preferring
    1 (led by 2) and partitions preferring 2 (led by 1) are moved back in two elections, so broker 3 (a follower of
    all of them) gets two LeaderAndIsr requests, one per preferred broker, not one for all four partitions."""
    h = Harness()
    topics = {"a": {0: [1, 2, 3], 1: [1, 2, 3]}, "b": {0: [2, 1, 3], 1: [2, 1, 3]}}
    setup_cluster(h.zk, (1, 2, 3), topics)
    for p in range(2):
        h.zk.put_partition_state(TopicPartition("a", p), leader=2, isr=(1, 2, 3), controller_epoch=0)
        h.zk.put_partition_state(TopicPartition("b", p), leader=1, isr=(1, 2, 3), controller_epoch=0)
    h.add(1)
    h.process(1, ev.Startup())
    h.drain()
    h.clear_effects(1)
    h.process(1, ev.AutoPreferredReplicaLeaderElection())
    to3 = [sorted((ps.topic_partition, ps.leader) for ps in s.request.partition_states)
           for s in h.sent(1, LeaderAndIsrRequest, to=3)]
    assert to3 == [[(TopicPartition("a", 0), 1), (TopicPartition("a", 1), 1)],
                   [(TopicPartition("b", 0), 2), (TopicPartition("b", 1), 2)]]
    assert h.controllers[1].ctx.preferred_replica_imbalance_count == 0


def _offline_with_dead_isr(topic_override: str | None = None, **config: object) -> Harness:
    """foo-0 on [2, 3] with ISR [2] (and the topic's unclean.leader.election.enable override, if given); broker 2
    dies: no live ISR member, the partition is offline (leader -1) unless unclean election is enabled."""
    h = _active(topics={"foo": {0: [2, 3]}}, **config)
    if topic_override is not None:
        h.zk.create("/config/topics/foo",
                    znodes.encode_config_entity({"unclean.leader.election.enable": topic_override}))
    h.zk.leader_writes_isr(FOO0, (2,))
    h.drain()
    h.controllers[1].ctx.put_partition_leadership_info(FOO0, h.zk.state(FOO0))
    h.zk.delete("/brokers/ids/2")
    h.drain()
    return h


def test_unclean_election_enabled_by_topic_config() -> None:
    """Kafka 2.6's controller does not watch /config/topics/<t> (reference Corrections 9): writing the topic's
    unclean.leader.election.enable enqueues nothing and arms no watch of the controller's; the broker's config
    manager then sends TopicUncleanLeaderElectionEnable, and the re-election reads the topic's config: unclean
    leader 3, ISR [3]."""
    h = _offline_with_dead_isr()
    assert h.zk.state(FOO0).leader_and_isr.leader == -1
    assert "/config/topics/foo" not in h.zk.data_watches
    h.zk.create("/config/topics/foo", znodes.encode_config_entity({"unclean.leader.election.enable": "true"}))
    h.drain()
    assert h.processed[1][-1] == ev.BrokerChange()
    assert h.zk.state(FOO0).leader_and_isr.leader == -1
    h.process(1, ev.TopicUncleanLeaderElectionEnable("foo"))
    s = h.zk.state(FOO0)
    assert (s.leader_and_isr.leader, s.leader_and_isr.isr) == (3, (3,))
    assert h.controllers[1].ctx.stats.unclean_leader_elections == 1


def test_unclean_config_topic_override_over_broker_config() -> None:
    """The election reads unclean.leader.election.enable as the topic's override over the broker's config (the
    controller's config carries the broker's effective value, static or dynamic): broker true + topic false → no
    unclean leader, on the broker's death nor on UncleanLeaderElectionEnable; the override removed, the next
    UncleanLeaderElectionEnable elects 3. Broker false + topic true → the broker's death elects 3 at once."""
    h = _offline_with_dead_isr("false", unclean_leader_election_enable=True)
    assert h.zk.state(FOO0).leader_and_isr.leader == -1
    h.process(1, ev.UncleanLeaderElectionEnable())
    assert h.zk.state(FOO0).leader_and_isr.leader == -1
    h.zk.delete("/config/topics/foo")
    h.process(1, ev.UncleanLeaderElectionEnable())
    s = h.zk.state(FOO0)
    assert (s.leader_and_isr.leader, s.leader_and_isr.isr) == (3, (3,))
    h = _offline_with_dead_isr("true")
    s = h.zk.state(FOO0)
    assert (s.leader_and_isr.leader, s.leader_and_isr.isr) == (3, (3,))


def test_isr_change_notification() -> None:
    """IsrChangeNotification: the cache is refreshed from ZooKeeper, UpdateMetadata sent, notifications deleted."""
    h = _active(topics={"foo": {0: [1, 2, 3]}})
    h.zk.leader_writes_isr(FOO0, (1, 2))
    h.zk._apply(Create("/isr_change_notification/isr_change_", znodes.encode_isr_change({FOO0}), sequential=True))
    assert h.zk.nodes["/isr_change_notification"].children == {"isr_change_0000000000"}
    h.drain()
    assert ev.IsrChangeNotification() in h.processed[1]
    assert h.controllers[1].ctx.partition_leadership_info(FOO0).leader_and_isr.isr == (1, 2)
    um = [s for s in h.sent(1, UpdateMetadataRequest) if s.request.partition_states]
    assert {s.broker_id for s in um} == {1, 2, 3}
    assert um[0].request.partition_states[0].isr == (1, 2)
    assert h.zk.nodes["/isr_change_notification"].children == set()


def test_log_dir_failure_marks_replicas_offline() -> None:
    """LogDirEventNotification → LeaderAndIsr probes; KAFKA_STORAGE_ERROR in the response → replicas offline →
    leader moves."""
    h = _active(topics={"foo": {0: [2, 1]}})
    h.zk.create("/log_dir_event_notification/log_dir_event_0000000000", znodes.encode_log_dir_event(2))
    h.drain()
    assert h.sent(1, LeaderAndIsrRequest, to=2)
    assert h.zk.nodes["/log_dir_event_notification"].children == set()
    h.process(1, ev.LeaderAndIsrResponseReceived(
        LeaderAndIsrResponse(Errors.NONE, (PartitionError(FOO0, Errors.KAFKA_STORAGE_ERROR),)), 2))
    s = h.zk.state(FOO0)
    assert s.leader_and_isr.leader == 1 and 2 not in s.leader_and_isr.isr
    assert h.controllers[1].ctx.replicas_on_offline_dirs[2] == {FOO0}
