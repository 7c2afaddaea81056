"""Port of Kafka's PartitionStateMachineTest (kafka.controller, 3.0.0 test list; 2.6 behaviour), one test per Kafka
test (the Kafka name is in each docstring), plus kactor-specific checks (retries, fencing, batching, metrics)."""

from __future__ import annotations

import json

import pytest

from core.controller.config import StateMachineConfig
from core.controller.context import ControllerContext
from core.controller.election import (
    ControlledShutdownPartitionLeaderElectionStrategy,
    OfflinePartitionLeaderElectionStrategy,
    PreferredReplicaPartitionLeaderElectionStrategy,
    ReassignPartitionLeaderElectionStrategy,
)
from core.controller.errors import ControllerMovedError, StateChangeFailedError
from core.controller.partition_state_machine import ZkPartitionStateMachine
from core.controller.states import (
    NewPartition,
    NonExistentPartition,
    OfflinePartition,
    OnlinePartition,
    PartitionState,
)
from core.effects import StateChange
from messages.common import LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from messages.observability import StateChangeBatch
from messages.requests import LeaderAndIsrRequest, StopReplicaRequest, UpdateMetadataRequest
from messages.zk import GetData, SetData, ZkOpResult
from protocol.zk.paths import TopicPartitionStateZNode
from protocol.zk.znodes import encode_partition_state
from tests.support.controller import broker, sent
from tests.support.fake_zookeeper import FakeZooKeeper, run

CONTROLLER_EPOCH = 50
EPOCH_ZK_VERSION = 7
BROKER_ID = 5
PARTITION = TopicPartition("t", 0)
OFFLINE = OfflinePartitionLeaderElectionStrategy(False)


class Harness:
    def __init__(self, unclean_default: bool = False) -> None:
        self.ctx = ControllerContext()
        self.ctx.epoch = CONTROLLER_EPOCH
        self.ctx.epoch_zk_version = EPOCH_ZK_VERSION
        self.zk = FakeZooKeeper()
        self.zk.setup_controller_epoch(CONTROLLER_EPOCH, EPOCH_ZK_VERSION)
        self.psm = ZkPartitionStateMachine(StateMachineConfig(BROKER_ID, unclean_default), self.ctx)

    def ensure_topic_znodes(self) -> None:
        """The topics' assignment znodes exist (written by the admin that created them)."""
        for topic in self.ctx.partition_assignments:
            if not self.zk.exists(f"/brokers/topics/{topic}"):
                self.zk.create(f"/brokers/topics/{topic}", '{"version":2,"partitions":{}}')

    def handle(self, partitions, target, strategy=None):
        self.ensure_topic_znodes()
        result, effects = run(self.psm.handle_state_changes(partitions, target, strategy), self.zk)
        self.effects = effects
        assert self.psm.batch.is_empty(), "the batch must always be flushed"
        return result

    def state_json(self, tp: TopicPartition = PARTITION) -> dict:
        return json.loads(self.zk.get(TopicPartitionStateZNode.path(tp)))


@pytest.fixture
def h() -> Harness:
    return Harness()


def _leader_record(leader: int, isr: list[int], epoch: int = 0, zk_version: int = 0,
                   controller_epoch: int = CONTROLLER_EPOCH) -> LeaderIsrAndControllerEpoch:
    return LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, epoch, tuple(isr), zk_version), controller_epoch)


def test_nonexistent_partition_to_new_partition_transition(h: Harness) -> None:
    """testNonexistentPartitionToNewPartitionTransition"""
    h.handle([PARTITION], NewPartition)
    assert h.ctx.partition_state(PARTITION) == NewPartition
    assert h.zk.batches == [] and sent(h.effects) == []


def test_invalid_nonexistent_partition_to_online_partition_transition(h: Harness) -> None:
    """testInvalidNonexistentPartitionToOnlinePartitionTransition"""
    h.handle([PARTITION], OnlinePartition, OFFLINE)
    assert h.ctx.partition_state(PARTITION) == NonExistentPartition
    assert sent(h.effects) == []


def test_invalid_nonexistent_partition_to_offline_partition_transition(h: Harness) -> None:
    """testInvalidNonexistentPartitionToOfflinePartitionTransition"""
    h.handle([PARTITION], OfflinePartition)
    assert h.ctx.partition_state(PARTITION) == NonExistentPartition


def test_new_partition_to_online_partition_transition(h: Harness) -> None:
    """testNewPartitionToOnlinePartitionTransition"""
    h.ctx.set_live_brokers([broker(BROKER_ID)])
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER_ID,)))
    h.ctx.put_partition_state(PARTITION, NewPartition)
    h.handle([PARTITION], OnlinePartition, OFFLINE)
    # createTopicPartitionStatesRaw: /partitions, /partitions/0 then the state node, all fenced, in one batch.
    [batch] = h.zk.batches
    assert batch.fence_version == EPOCH_ZK_VERSION
    assert [op.path for op in batch.ops] == ["/brokers/topics/t/partitions", "/brokers/topics/t/partitions/0",
                                             "/brokers/topics/t/partitions/0/state"]
    assert h.zk.get(TopicPartitionStateZNode.path(PARTITION)) == \
        '{"controller_epoch":50,"leader":5,"version":1,"leader_epoch":0,"isr":[5]}'
    [lai] = sent(h.effects, LeaderAndIsrRequest, BROKER_ID)
    assert lai.request.controller_epoch == CONTROLLER_EPOCH
    [ps] = lai.request.partition_states
    assert (ps.topic_partition, ps.leader, ps.leader_epoch, ps.isr, ps.zk_version, ps.replicas, ps.is_new) == \
        (PARTITION, 5, 0, (5,), 0, (5,), True)
    assert len(sent(h.effects, UpdateMetadataRequest, BROKER_ID)) == 1
    assert h.ctx.partition_state(PARTITION) == OnlinePartition
    assert h.ctx.partition_leadership_info(PARTITION) == _leader_record(5, [5])


def test_new_partition_to_online_partition_transition_zoo_keeper_client_exception_from_create_states(
        h: Harness) -> None:
    """testNewPartitionToOnlinePartitionTransitionZooKeeperClientExceptionFromCreateStates"""
    h.ctx.set_live_brokers([broker(BROKER_ID)])
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER_ID,)))
    h.ctx.put_partition_state(PARTITION, NewPartition)
    h.zk.interceptors.append(RuntimeError("ZooKeeperClientException: test"))
    h.handle([PARTITION], OnlinePartition, OFFLINE)
    assert sent(h.effects) == []
    assert h.ctx.partition_state(PARTITION) == NewPartition


def test_new_partition_to_online_partition_transition_error_code_from_create_states(h: Harness) -> None:
    """testNewPartitionToOnlinePartitionTransitionErrorCodeFromCreateStates"""
    h.ctx.set_live_brokers([broker(BROKER_ID)])
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER_ID,)))
    h.ctx.put_partition_state(PARTITION, NewPartition)
    h.zk.put_partition_state(PARTITION, 3, [3])  # → NODEEXISTS
    h.handle([PARTITION], OnlinePartition, OFFLINE)
    assert sent(h.effects, LeaderAndIsrRequest) == []
    assert h.ctx.partition_state(PARTITION) == NewPartition
    assert h.ctx.partition_leadership_info(PARTITION) is None


def test_new_partition_to_online_partition_adopts_its_own_lost_create(h: Harness) -> None:
    """kactor's departure (docs/kafka-2.6-departures.md): the create was applied but its answer was lost to a
    ZooKeeper connection loss, so the re-sent create gets NODEEXISTS; the znode holds exactly the initial state this
    controller wrote (its epoch, leader epoch 0, zkVersion 0), so the partition goes online as if the create had
    answered OK. Anything else in the znode (the Kafka test above) still fails as in 2.6."""
    h.ctx.set_live_brokers([broker(BROKER_ID)])
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER_ID,)))
    h.ctx.put_partition_state(PARTITION, NewPartition)
    h.zk.put_partition_state(PARTITION, BROKER_ID, [BROKER_ID], controller_epoch=h.ctx.epoch)  # → NODEEXISTS
    h.handle([PARTITION], OnlinePartition, OFFLINE)
    assert h.ctx.partition_state(PARTITION) == OnlinePartition
    info = h.ctx.partition_leadership_info(PARTITION)
    assert info == LeaderIsrAndControllerEpoch(LeaderAndIsr(BROKER_ID, 0, (BROKER_ID,), 0), h.ctx.epoch)
    [req] = sent(h.effects, LeaderAndIsrRequest)
    assert [(s.leader, s.leader_epoch, tuple(s.isr), s.is_new) for s in req.request.partition_states] == [
        (BROKER_ID, 0, (BROKER_ID,), True)]


def test_new_partition_to_online_partition_nodeexists_of_an_older_epoch_still_fails(h: Harness) -> None:
    """The same initial content written by another controller (an older epoch) is not ours: 2.6's failure stays."""
    h.ctx.set_live_brokers([broker(BROKER_ID)])
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER_ID,)))
    h.ctx.put_partition_state(PARTITION, NewPartition)
    h.zk.put_partition_state(PARTITION, BROKER_ID, [BROKER_ID], controller_epoch=h.ctx.epoch - 1)
    h.handle([PARTITION], OnlinePartition, OFFLINE)
    assert sent(h.effects, LeaderAndIsrRequest) == []
    assert h.ctx.partition_state(PARTITION) == NewPartition


def test_new_partition_to_offline_partition_transition(h: Harness) -> None:
    """testNewPartitionToOfflinePartitionTransition"""
    h.ctx.put_partition_state(PARTITION, NewPartition)
    h.handle([PARTITION], OfflinePartition)
    assert h.ctx.partition_state(PARTITION) == OfflinePartition


def test_invalid_new_partition_to_nonexistent_partition_transition(h: Harness) -> None:
    """testInvalidNewPartitionToNonexistentPartitionTransition"""
    h.ctx.put_partition_state(PARTITION, NewPartition)
    h.handle([PARTITION], NonExistentPartition)
    assert h.ctx.partition_state(PARTITION) == NewPartition


def test_online_partition_to_online_transition(h: Harness) -> None:
    """testOnlinePartitionToOnlineTransition"""
    h.ctx.set_live_brokers([broker(BROKER_ID)])
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER_ID,)))
    h.ctx.put_partition_state(PARTITION, OnlinePartition)
    h.ctx.put_partition_leadership_info(PARTITION, _leader_record(5, [5]))
    h.zk.put_partition_state(PARTITION, 5, [5], controller_epoch=CONTROLLER_EPOCH, zk_version=1)
    result = h.handle([PARTITION], OnlinePartition, PreferredReplicaPartitionLeaderElectionStrategy())
    read, write = h.zk.batches
    assert isinstance(read.ops[0], GetData) and read.fence_version == -1
    assert isinstance(write.ops[0], SetData) and write.ops[0].version == 1 and write.fence_version == EPOCH_ZK_VERSION
    assert h.state_json() == {"controller_epoch": 50, "leader": 5, "version": 1, "leader_epoch": 1, "isr": [5]}
    assert result == {PARTITION: LeaderAndIsr(5, 1, (5,), 2)}
    [lai] = sent(h.effects, LeaderAndIsrRequest, BROKER_ID)
    [ps] = lai.request.partition_states
    assert (ps.leader, ps.leader_epoch, ps.zk_version, ps.is_new) == (5, 1, 2, False)
    assert h.ctx.partition_state(PARTITION) == OnlinePartition


def test_online_partition_to_online_transition_for_controlled_shutdown(h: Harness) -> None:
    """testOnlinePartitionToOnlineTransitionForControlledShutdown"""
    other = BROKER_ID + 1
    h.ctx.set_live_brokers([broker(BROKER_ID), broker(other)])
    h.ctx.shutting_down_broker_ids.add(BROKER_ID)
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER_ID, other)))
    h.ctx.put_partition_state(PARTITION, OnlinePartition)
    h.ctx.put_partition_leadership_info(PARTITION, _leader_record(BROKER_ID, [BROKER_ID, other]))
    h.zk.put_partition_state(PARTITION, BROKER_ID, [BROKER_ID, other], controller_epoch=CONTROLLER_EPOCH)
    result = h.handle([PARTITION], OnlinePartition, ControlledShutdownPartitionLeaderElectionStrategy())
    assert result == {PARTITION: LeaderAndIsr(other, 1, (other,), 1)}
    assert {e.broker_id for e in sent(h.effects, LeaderAndIsrRequest)} == {BROKER_ID, other}
    assert h.state_json()["isr"] == [other]
    assert h.ctx.partition_state(PARTITION) == OnlinePartition


def test_online_partition_to_offline_transition(h: Harness) -> None:
    """testOnlinePartitionToOfflineTransition"""
    h.ctx.put_partition_state(PARTITION, OnlinePartition)
    h.handle([PARTITION], OfflinePartition)
    assert h.ctx.partition_state(PARTITION) == OfflinePartition


def test_invalid_online_partition_to_nonexistent_partition_transition(h: Harness) -> None:
    """testInvalidOnlinePartitionToNonexistentPartitionTransition"""
    h.ctx.put_partition_state(PARTITION, OnlinePartition)
    h.handle([PARTITION], NonExistentPartition)
    assert h.ctx.partition_state(PARTITION) == OnlinePartition


def test_invalid_online_partition_to_new_partition_transition(h: Harness) -> None:
    """testInvalidOnlinePartitionToNewPartitionTransition"""
    h.ctx.put_partition_state(PARTITION, OnlinePartition)
    h.handle([PARTITION], NewPartition)
    assert h.ctx.partition_state(PARTITION) == OnlinePartition


def test_offline_partition_to_online_partition_transition(h: Harness) -> None:
    """testOfflinePartitionToOnlinePartitionTransition"""
    h.ctx.set_live_brokers([broker(BROKER_ID)])
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER_ID,)))
    h.ctx.put_partition_state(PARTITION, OfflinePartition)
    h.ctx.put_partition_leadership_info(PARTITION, _leader_record(-1, [BROKER_ID]))
    h.zk.put_partition_state(PARTITION, -1, [BROKER_ID], controller_epoch=CONTROLLER_EPOCH)
    result = h.handle([PARTITION], OnlinePartition, OFFLINE)
    # a live ISR member exists: no topic config is read
    assert not any(op.path.startswith("/config") for b in h.zk.batches for op in b.ops)
    assert result == {PARTITION: LeaderAndIsr(BROKER_ID, 1, (BROKER_ID,), 1)}
    assert [e.broker_id for e in sent(h.effects, LeaderAndIsrRequest)] == [BROKER_ID]
    assert h.ctx.partition_state(PARTITION) == OnlinePartition
    assert h.ctx.stats.unclean_leader_elections == 0


def test_offline_partition_to_unclean_online_partition_transition(h: Harness) -> None:
    """testOfflinePartitionToUncleanOnlinePartitionTransition"""
    leader_broker = BROKER_ID + 1
    h.ctx.set_live_brokers([broker(BROKER_ID)])
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((leader_broker, BROKER_ID)))
    h.ctx.put_partition_state(PARTITION, OfflinePartition)
    h.ctx.put_partition_leadership_info(PARTITION, _leader_record(leader_broker, [leader_broker]))
    h.zk.put_partition_state(PARTITION, leader_broker, [leader_broker], controller_epoch=CONTROLLER_EPOCH)
    result = h.handle([PARTITION], OnlinePartition, OfflinePartitionLeaderElectionStrategy(True))
    assert not any(op.path.startswith("/config") for b in h.zk.batches for op in b.ops)
    assert result == {PARTITION: LeaderAndIsr(BROKER_ID, 1, (BROKER_ID,), 1)}
    assert [e.broker_id for e in sent(h.effects, LeaderAndIsrRequest)] == [BROKER_ID]
    assert h.ctx.partition_state(PARTITION) == OnlinePartition
    assert h.ctx.stats.unclean_leader_elections == 1
    [scb] = [e.record for e in h.effects if isinstance(e, StateChange)]
    assert scb.elections[0].unclean and scb.elections[0].strategy == "OfflinePartition"


def test_offline_partition_to_online_partition_transition_zoo_keeper_client_exception_from_state_lookup(
        h: Harness) -> None:
    """testOfflinePartitionToOnlinePartitionTransitionZooKeeperClientExceptionFromStateLookup"""
    h.ctx.set_live_brokers([broker(BROKER_ID)])
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER_ID,)))
    h.ctx.put_partition_state(PARTITION, OfflinePartition)
    h.ctx.put_partition_leadership_info(PARTITION, _leader_record(-1, [BROKER_ID]))
    h.zk.interceptors.append(RuntimeError("ZooKeeperClientException: test"))
    result = h.handle([PARTITION], OnlinePartition, OFFLINE)
    assert isinstance(result[PARTITION], RuntimeError)
    assert sent(h.effects) == []
    assert h.ctx.partition_state(PARTITION) == OfflinePartition


def test_offline_partition_to_online_partition_transition_error_code_from_state_lookup(h: Harness) -> None:
    """testOfflinePartitionToOnlinePartitionTransitionErrorCodeFromStateLookup"""
    h.ctx.set_live_brokers([broker(BROKER_ID)])
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER_ID,)))
    h.ctx.put_partition_state(PARTITION, OfflinePartition)
    h.ctx.put_partition_leadership_info(PARTITION, _leader_record(-1, [BROKER_ID]))
    result = h.handle([PARTITION], OnlinePartition, OFFLINE)  # no state znode → NONODE
    assert isinstance(result[PARTITION], StateChangeFailedError)
    assert "LeaderAndIsr information doesn't exist" in str(result[PARTITION])
    assert sent(h.effects) == []
    assert h.ctx.partition_state(PARTITION) == OfflinePartition


def test_offline_partition_to_nonexistent_partition_transition(h: Harness) -> None:
    """testOfflinePartitionToNonexistentPartitionTransition"""
    h.ctx.put_partition_state(PARTITION, OfflinePartition)
    h.handle([PARTITION], NonExistentPartition)
    assert h.ctx.partition_state(PARTITION) == NonExistentPartition


def test_invalid_offline_partition_to_new_partition_transition(h: Harness) -> None:
    """testInvalidOfflinePartitionToNewPartitionTransition"""
    h.ctx.put_partition_state(PARTITION, OfflinePartition)
    h.handle([PARTITION], NewPartition)
    assert h.ctx.partition_state(PARTITION) == OfflinePartition


def _four_partitions(h: Harness) -> list[TopicPartition]:
    h.ctx.set_live_brokers([broker(BROKER_ID)])
    partitions = [TopicPartition("test", p) for p in range(4)]
    for tp in partitions:
        h.ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment((BROKER_ID,)))
    return partitions


def test_updating_offline_partitions_count(h: Harness) -> None:
    """testUpdatingOfflinePartitionsCount"""
    partitions = _four_partitions(h)
    for tp in partitions:  # prepareMockToElectLeaderForPartitions
        h.zk.put_partition_state(tp, BROKER_ID, [BROKER_ID], controller_epoch=CONTROLLER_EPOCH)
    h.handle(partitions, NewPartition)
    h.handle(partitions, OfflinePartition)
    assert h.ctx.offline_partition_count == 4
    h.handle(partitions, OnlinePartition, OFFLINE)
    assert h.ctx.offline_partition_count == 0


def test_no_offline_partitions_change_for_topics_being_deleted(h: Harness) -> None:
    """testNoOfflinePartitionsChangeForTopicsBeingDeleted"""
    partitions = _four_partitions(h)
    h.ctx.topics_to_be_deleted.add("test")
    h.ctx.topics_with_deletion_started.add("test")
    h.handle(partitions, NewPartition)
    h.handle(partitions, OfflinePartition)
    assert h.ctx.offline_partition_count == 0


def test_updating_offline_partitions_count_during_topic_deletion(h: Harness) -> None:
    """testUpdatingOfflinePartitionsCountDuringTopicDeletion — TopicDeletionManager.enqueueTopicsForDeletion's
    partition steps (queueTopicDeletion; partitions → Offline → NonExistent; beginTopicDeletion) are replayed here,
    the manager itself being another module."""
    from core.controller.states import OfflineReplica
    from messages.common import PartitionAndReplica
    partitions = _four_partitions(h)
    h.handle(partitions, NewPartition)
    h.handle(partitions, OfflinePartition)
    for tp in partitions:
        h.ctx.put_replica_state(PartitionAndReplica(tp, BROKER_ID), OfflineReplica)
    assert h.ctx.offline_partition_count == 4
    h.ctx.queue_topic_deletion({"test"})
    h.handle(partitions, OfflinePartition)
    h.handle(partitions, NonExistentPartition)
    h.ctx.begin_topic_deletion({"test"})
    assert h.ctx.offline_partition_count == 0


# -- kactor-specific ---------------------------------------------------------------------------------------------------
def test_election_retries_on_bad_version(h: Harness) -> None:
    """electLeaderForPartitions re-reads and retries partitions whose conditional write hit BADVERSION."""
    h.ctx.set_live_brokers([broker(1), broker(2)])
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((1, 2)))
    h.ctx.put_partition_state(PARTITION, OfflinePartition)
    h.zk.put_partition_state(PARTITION, -1, [1, 2], leader_epoch=3, controller_epoch=CONTROLLER_EPOCH, zk_version=4)

    def leader_changes_isr(batch):  # between our read and our write, the leader shrinks the ISR (zkVersion 4 → 5)
        h.zk.set(TopicPartitionStateZNode.path(PARTITION),
                 encode_partition_state(_leader_record(-1, [2], epoch=3, zk_version=4)))
        return None

    h.zk.interceptors += [lambda b: None, leader_changes_isr]
    result = h.handle([PARTITION], OnlinePartition, OFFLINE)
    assert result == {PARTITION: LeaderAndIsr(2, 4, (2,), 6)}
    assert len(h.zk.batches) == 4  # read, failed write, re-read, write
    assert h.state_json() == {"controller_epoch": 50, "leader": 2, "version": 1, "leader_epoch": 4, "isr": [2]}


def test_election_aborted_when_state_written_by_newer_controller(h: Harness) -> None:
    h.ctx.set_live_brokers([broker(1)])
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((1,)))
    h.ctx.put_partition_state(PARTITION, OfflinePartition)
    h.zk.put_partition_state(PARTITION, -1, [1], controller_epoch=CONTROLLER_EPOCH + 1)
    result = h.handle([PARTITION], OnlinePartition, OFFLINE)
    assert isinstance(result[PARTITION], StateChangeFailedError)
    assert "already written by another controller" in str(result[PARTITION])
    assert len(h.zk.batches) == 1 and h.ctx.partition_state(PARTITION) == OfflinePartition


def test_controller_moved_propagates(h: Harness) -> None:
    """A failed /controller_epoch fence raises ControllerMovedError out of handle_state_changes."""
    h.ctx.set_live_brokers([broker(BROKER_ID)])
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER_ID,)))
    h.ctx.put_partition_state(PARTITION, NewPartition)
    h.zk.setup_controller_epoch(CONTROLLER_EPOCH + 1, EPOCH_ZK_VERSION + 1)
    with pytest.raises(ControllerMovedError):
        run(h.psm.handle_state_changes([PARTITION], OnlinePartition, OFFLINE), h.zk)
    assert not h.zk.exists(TopicPartitionStateZNode.path(PARTITION))


@pytest.mark.parametrize(("override", "default", "expect_leader"), [
    (None, False, None), (None, True, 2),
    ('{"version":1,"config":{"unclean.leader.election.enable":"true"}}', False, 2),
    ('{"version":1,"config":{"unclean.leader.election.enable":"false"}}', True, None),
])
def test_unclean_election_from_topic_config(override: str | None, default: bool, expect_leader: int | None) -> None:
    """collectUncleanLeaderElectionState: /config/topics/<t> merged over the broker default."""
    h = Harness(unclean_default=default)
    h.ctx.set_live_brokers([broker(2)])
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((1, 2)))
    h.ctx.put_partition_state(PARTITION, OfflinePartition)
    h.zk.put_partition_state(PARTITION, -1, [1], controller_epoch=CONTROLLER_EPOCH)
    if override is not None:
        h.zk.create("/config/topics/t", override)
    result = h.handle([PARTITION], OnlinePartition, OFFLINE)
    assert any(op.path == "/config/topics/t" for b in h.zk.batches for op in b.ops)
    if expect_leader is None:
        assert isinstance(result[PARTITION], StateChangeFailedError)
        assert h.ctx.partition_state(PARTITION) == OfflinePartition
    else:
        assert result[PARTITION] == LeaderAndIsr(2, 1, (2,), 1)
        assert h.ctx.stats.unclean_leader_elections == 1


def test_reassign_strategy_sends_to_target_replicas(h: Harness) -> None:
    h.ctx.set_live_brokers([broker(b) for b in (1, 2, 3, 4)])
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((1, 2)).reassign_to((3, 4)))
    h.ctx.put_partition_state(PARTITION, OnlinePartition)
    h.zk.put_partition_state(PARTITION, 1, [1, 2, 3, 4], controller_epoch=CONTROLLER_EPOCH)
    result = h.handle([PARTITION], OnlinePartition, ReassignPartitionLeaderElectionStrategy())
    assert result == {PARTITION: LeaderAndIsr(3, 1, (1, 2, 3, 4), 1)}
    assert sorted(e.broker_id for e in sent(h.effects, LeaderAndIsrRequest)) == [3, 4]


def test_missing_strategy_fails_every_partition(h: Harness) -> None:
    h.ctx.put_partition_state(PARTITION, OnlinePartition)
    result = h.handle([PARTITION], OnlinePartition)
    assert isinstance(result[PARTITION], ValueError)


def test_startup_initializes_states_and_elects(h: Harness) -> None:
    """PartitionStateMachine.startup: New / Online / Offline from leadership info, then New+Offline → Online."""
    h.ctx.set_live_brokers([broker(1)])
    new, online, offline = (TopicPartition("a", p) for p in range(3))
    for tp in (new, online, offline):
        h.ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment((1, 2)))
    h.ctx.put_partition_leadership_info(online, _leader_record(1, [1, 2]))
    h.ctx.put_partition_leadership_info(offline, _leader_record(2, [2, 1]))
    h.zk.put_partition_state(offline, 2, [2, 1], controller_epoch=CONTROLLER_EPOCH)
    result, effects = run(h.psm.startup(), h.zk)
    assert result == {offline: LeaderAndIsr(1, 1, (1,), 1)}
    assert {tp: h.ctx.partition_state(tp) for tp in (new, online, offline)} == dict.fromkeys(
        (new, online, offline), OnlinePartition)
    assert h.ctx.partition_leadership_info(new).leader_and_isr == LeaderAndIsr(1, 0, (1,), 0)
    assert h.ctx.offline_partition_count == 0


def test_trigger_online_partition_state_change_skips_topics_queued_for_deletion(h: Harness) -> None:
    h.ctx.set_live_brokers([broker(1)])
    a, b = TopicPartition("a", 0), TopicPartition("b", 0)
    for tp in (a, b):
        h.ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment((1,)))
        h.ctx.put_partition_state(tp, NewPartition)
    h.ctx.queue_topic_deletion({"b"})
    h.ensure_topic_znodes()
    run(h.psm.trigger_online_partition_state_change(), h.zk)
    assert h.ctx.partition_state(a) == OnlinePartition and h.ctx.partition_state(b) == NewPartition
    h.ctx.put_partition_state(a, OfflinePartition)
    h.zk.put_partition_state(a, -1, [1], controller_epoch=CONTROLLER_EPOCH, zk_version=0)
    result, _ = run(h.psm.trigger_online_partition_state_change("a"), h.zk)
    assert result == {a: LeaderAndIsr(1, 1, (1,), 1)}


def test_state_change_batch_emitted(h: Harness) -> None:
    h.handle([PARTITION], NewPartition)
    [record] = [e.record for e in h.effects if isinstance(e, StateChange)]
    assert isinstance(record, StateChangeBatch) and record.controller_epoch == CONTROLLER_EPOCH
    assert [(c.topic_partition, c.from_state, c.to_state) for c in record.partition_changes] == \
        [(PARTITION, "NonExistentPartition", "NewPartition")]


def test_many_partitions_one_batch_per_step() -> None:
    """10,000 new partitions on 3 brokers: one fenced create batch, one LeaderAndIsr and one UpdateMetadata per
    broker; then an election for all of them is one read batch and one write batch."""
    h = Harness()
    h.ctx.set_live_brokers([broker(b) for b in (1, 2, 3)])
    parts = [TopicPartition(f"topic{t}", p) for t in range(100) for p in range(100)]
    for i, tp in enumerate(parts):
        h.ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment(((i % 3) + 1, ((i + 1) % 3) + 1)))
    h.handle(parts, NewPartition)
    h.handle(parts, OnlinePartition, OFFLINE)
    assert len(h.zk.batches) == 1
    assert len(sent(h.effects, LeaderAndIsrRequest)) == 3 and len(sent(h.effects, UpdateMetadataRequest)) == 3
    assert sent(h.effects, StopReplicaRequest) == []
    assert all(s == OnlinePartition for s in h.ctx.partition_states.values())
    h.zk.batches.clear()
    h.ctx.shutting_down_broker_ids.add(1)
    result = h.handle(parts, OnlinePartition, ControlledShutdownPartitionLeaderElectionStrategy())
    assert len(h.zk.batches) == 2
    assert all(isinstance(v, LeaderAndIsr) and v.leader != 1 for v in result.values())
    assert h.ctx.preferred_replica_imbalance_count == sum(
        1 for tp in parts if h.ctx.partition_replica_assignment(tp)[0] == 1)


def test_partition_state_values() -> None:
    """Kafka's byte codes."""
    assert [s.value for s in PartitionState] == [0, 1, 2, 3]
    assert ZkOpResult  # the module's imports are used
