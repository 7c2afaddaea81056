"""Port of Kafka's ReplicaStateMachineTest (kafka.controller, 3.0.0 test list; 2.6 behaviour), one test per Kafka
test (the Kafka name is in each docstring), plus kactor-specific checks."""

from __future__ import annotations

import json

import pytest

from core.controller.config import StateMachineConfig
from core.controller.context import ControllerContext
from core.controller.errors import ControllerMovedError
from core.controller.replica_state_machine import ZkReplicaStateMachine
from core.controller.states import (
    NewReplica,
    NonExistentReplica,
    OfflineReplica,
    OnlineReplica,
    ReplicaDeletionIneligible,
    ReplicaDeletionStarted,
    ReplicaDeletionSuccessful,
    ReplicaState,
)
from core.effects import StateChange
from messages.common import (
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    PartitionAndReplica,
    ReplicaAssignment,
    TopicPartition,
)
from messages.requests import LeaderAndIsrRequest, StopReplicaRequest, UpdateMetadataRequest
from protocol.zk.paths import TopicPartitionStateZNode
from tests.support.controller import broker, sent
from tests.support.fake_zookeeper import FakeZooKeeper, run

CONTROLLER_EPOCH = 50
EPOCH_ZK_VERSION = 3
BROKER_ID = 5
PARTITION = TopicPartition("t", 0)
REPLICA = PartitionAndReplica(PARTITION, BROKER_ID)


class Harness:
    def __init__(self) -> None:
        self.ctx = ControllerContext()
        self.ctx.epoch = CONTROLLER_EPOCH
        self.ctx.epoch_zk_version = EPOCH_ZK_VERSION
        self.zk = FakeZooKeeper()
        self.zk.setup_controller_epoch(CONTROLLER_EPOCH, EPOCH_ZK_VERSION)
        self.rsm = ZkReplicaStateMachine(StateMachineConfig(BROKER_ID), self.ctx)
        self.effects: list = []

    def handle(self, replicas, target) -> None:
        _, self.effects = run(self.rsm.handle_state_changes(replicas, target), self.zk)
        assert self.rsm.batch.is_empty()

    def startup(self) -> None:
        _, self.effects = run(self.rsm.startup(), self.zk)


@pytest.fixture
def h() -> Harness:
    return Harness()


def _record(leader: int, isr: list[int], epoch: int = 0, zk_version: int = 0) -> LeaderIsrAndControllerEpoch:
    return LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, epoch, tuple(isr), zk_version), CONTROLLER_EPOCH)


def _assert_invalid(h: Harness, from_state: ReplicaState | None, to_state: ReplicaState) -> None:
    """An invalid transition leaves the state as it was and sends nothing."""
    if from_state is not None:
        h.ctx.put_replica_state(REPLICA, from_state)
    h.handle([REPLICA], to_state)
    assert h.ctx.replica_state(REPLICA) == (from_state or NonExistentReplica)
    assert sent(h.effects) == [] and h.zk.batches == []


def test_startup_online_partition(h: Harness) -> None:
    """testStartupOnlinePartition"""
    h.ctx.set_live_brokers([broker(BROKER_ID)])
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER_ID,)))
    h.startup()
    assert h.ctx.replica_state(REPLICA) == OnlineReplica


def test_startup_offline_partition(h: Harness) -> None:
    """testStartupOfflinePartition"""
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER_ID,)))
    h.startup()
    assert h.ctx.replica_state(REPLICA) == OfflineReplica


def test_startup_with_replica_without_leader(h: Harness) -> None:
    """testStartupWithReplicaWithoutLeader"""
    shutdown_broker = 100
    offline = PartitionAndReplica(PARTITION, shutdown_broker)
    h.ctx.set_live_brokers([broker(BROKER_ID)])
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((shutdown_broker,)))
    h.startup()
    assert h.ctx.replica_state(offline) == OfflineReplica
    # no leader record: UpdateMetadata (live brokers only) to every live broker
    [um] = sent(h.effects, UpdateMetadataRequest)
    assert um.broker_id == BROKER_ID and um.request.partition_states == ()


def test_nonexistent_replica_to_new_replica_transition(h: Harness) -> None:
    """testNonexistentReplicaToNewReplicaTransition"""
    h.handle([REPLICA], NewReplica)
    assert h.ctx.replica_state(REPLICA) == NewReplica


def test_invalid_nonexistent_replica_to_online_replica_transition(h: Harness) -> None:
    """testInvalidNonexistentReplicaToOnlineReplicaTransition"""
    _assert_invalid(h, None, OnlineReplica)


def test_invalid_nonexistent_replica_to_offline_replica_transition(h: Harness) -> None:
    """testInvalidNonexistentReplicaToOfflineReplicaTransition"""
    _assert_invalid(h, None, OfflineReplica)


def test_invalid_nonexistent_replica_to_replica_deletion_started_transition(h: Harness) -> None:
    """testInvalidNonexistentReplicaToReplicaDeletionStartedTransition"""
    _assert_invalid(h, None, ReplicaDeletionStarted)


def test_invalid_nonexistent_replica_to_replica_deletion_ineligible_transition(h: Harness) -> None:
    """testInvalidNonexistentReplicaToReplicaDeletionIneligibleTransition"""
    _assert_invalid(h, None, ReplicaDeletionIneligible)


def test_invalid_nonexistent_replica_to_replica_deletion_successful_transition(h: Harness) -> None:
    """testInvalidNonexistentReplicaToReplicaDeletionSuccessfulTransition"""
    _assert_invalid(h, None, ReplicaDeletionSuccessful)


def test_invalid_new_replica_to_nonexistent_replica_transition(h: Harness) -> None:
    """testInvalidNewReplicaToNonexistentReplicaTransition"""
    _assert_invalid(h, NewReplica, NonExistentReplica)


def test_new_replica_to_online_replica_transition(h: Harness) -> None:
    """testNewReplicaToOnlineReplicaTransition"""
    h.ctx.put_replica_state(REPLICA, NewReplica)
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER_ID,)))
    h.handle([REPLICA], OnlineReplica)
    assert h.ctx.replica_state(REPLICA) == OnlineReplica
    assert sent(h.effects) == []


def test_new_replica_to_offline_replica_transition(h: Harness) -> None:
    """testNewReplicaToOfflineReplicaTransition"""
    h.ctx.set_live_brokers([broker(BROKER_ID)])
    h.ctx.put_replica_state(REPLICA, NewReplica)
    h.handle([REPLICA], OfflineReplica)
    [stop] = sent(h.effects, StopReplicaRequest, BROKER_ID)
    [ps] = stop.request.partition_states
    assert (ps.topic_partition, ps.leader_epoch, ps.delete_partition) == (PARTITION, -1, False)
    assert len(sent(h.effects, UpdateMetadataRequest, BROKER_ID)) == 1
    assert h.ctx.replica_state(REPLICA) == OfflineReplica


def test_invalid_new_replica_to_replica_deletion_started_transition(h: Harness) -> None:
    """testInvalidNewReplicaToReplicaDeletionStartedTransition"""
    _assert_invalid(h, NewReplica, ReplicaDeletionStarted)


def test_invalid_new_replica_to_replica_deletion_ineligible_transition(h: Harness) -> None:
    """testInvalidNewReplicaToReplicaDeletionIneligibleTransition"""
    _assert_invalid(h, NewReplica, ReplicaDeletionIneligible)


def test_invalid_new_replica_to_replica_deletion_successful_transition(h: Harness) -> None:
    """testInvalidNewReplicaToReplicaDeletionSuccessfulTransition"""
    _assert_invalid(h, NewReplica, ReplicaDeletionSuccessful)


def test_invalid_online_replica_to_nonexistent_replica_transition(h: Harness) -> None:
    """testInvalidOnlineReplicaToNonexistentReplicaTransition"""
    _assert_invalid(h, OnlineReplica, NonExistentReplica)


def test_invalid_online_replica_to_new_replica_transition(h: Harness) -> None:
    """testInvalidOnlineReplicaToNewReplicaTransition"""
    _assert_invalid(h, OnlineReplica, NewReplica)


def _to_online_with_leader_record(h: Harness, from_state: ReplicaState) -> None:
    h.ctx.set_live_brokers([broker(BROKER_ID)])
    h.ctx.put_replica_state(REPLICA, from_state)
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER_ID,)))
    h.ctx.put_partition_leadership_info(PARTITION, _record(BROKER_ID, [BROKER_ID]))
    h.handle([REPLICA], OnlineReplica)
    [lai] = sent(h.effects, LeaderAndIsrRequest)
    assert lai.broker_id == BROKER_ID
    [ps] = lai.request.partition_states
    assert (ps.leader, ps.isr, ps.controller_epoch, ps.is_new) == (BROKER_ID, (BROKER_ID,), CONTROLLER_EPOCH, False)
    assert h.ctx.replica_state(REPLICA) == OnlineReplica


def test_online_replica_to_online_replica_transition(h: Harness) -> None:
    """testOnlineReplicaToOnlineReplicaTransition"""
    _to_online_with_leader_record(h, OnlineReplica)


def test_online_replica_to_offline_replica_transition(h: Harness) -> None:
    """testOnlineReplicaToOfflineReplicaTransition"""
    other = BROKER_ID + 1
    h.ctx.set_live_brokers([broker(BROKER_ID), broker(other)])
    h.ctx.put_replica_state(REPLICA, OnlineReplica)
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER_ID, other)))
    h.ctx.put_partition_leadership_info(PARTITION, _record(BROKER_ID, [BROKER_ID, other]))
    h.zk.put_partition_state(PARTITION, BROKER_ID, [BROKER_ID, other], controller_epoch=CONTROLLER_EPOCH)
    h.handle([REPLICA], OfflineReplica)
    [stop] = sent(h.effects, StopReplicaRequest)
    assert stop.broker_id == BROKER_ID and not stop.request.partition_states[0].delete_partition
    read, write = h.zk.batches
    assert write.fence_version == EPOCH_ZK_VERSION and write.ops[0].version == 0
    assert json.loads(h.zk.get(TopicPartitionStateZNode.path(PARTITION))) == \
        {"controller_epoch": CONTROLLER_EPOCH, "leader": -1, "version": 1, "leader_epoch": 1, "isr": [other]}
    assert h.ctx.partition_leadership_info(PARTITION) == _record(-1, [other], epoch=1, zk_version=1)
    [lai] = sent(h.effects, LeaderAndIsrRequest)
    assert lai.broker_id == other
    [ps] = lai.request.partition_states
    assert (ps.leader, ps.leader_epoch, ps.isr, ps.zk_version) == (-1, 1, (other,), 1)
    assert h.ctx.replica_state(REPLICA) == OfflineReplica


def test_invalid_online_replica_to_replica_deletion_started_transition(h: Harness) -> None:
    """testInvalidOnlineReplicaToReplicaDeletionStartedTransition"""
    _assert_invalid(h, OnlineReplica, ReplicaDeletionStarted)


def test_invalid_online_replica_to_replica_deletion_ineligible_transition(h: Harness) -> None:
    """testInvalidOnlineReplicaToReplicaDeletionIneligibleTransition"""
    _assert_invalid(h, OnlineReplica, ReplicaDeletionIneligible)


def test_invalid_online_replica_to_replica_deletion_successful_transition(h: Harness) -> None:
    """testInvalidOnlineReplicaToReplicaDeletionSuccessfulTransition"""
    _assert_invalid(h, OnlineReplica, ReplicaDeletionSuccessful)


def test_invalid_offline_replica_to_nonexistent_replica_transition(h: Harness) -> None:
    """testInvalidOfflineReplicaToNonexistentReplicaTransition"""
    _assert_invalid(h, OfflineReplica, NonExistentReplica)


def test_invalid_offline_replica_to_new_replica_transition(h: Harness) -> None:
    """testInvalidOfflineReplicaToNewReplicaTransition"""
    _assert_invalid(h, OfflineReplica, NewReplica)


def test_offline_replica_to_online_replica_transition(h: Harness) -> None:
    """testOfflineReplicaToOnlineReplicaTransition"""
    _to_online_with_leader_record(h, OfflineReplica)


def test_offline_replica_to_replica_deletion_started_transition(h: Harness) -> None:
    """testOfflineReplicaToReplicaDeletionStartedTransition"""
    h.ctx.set_live_brokers([broker(BROKER_ID)])
    h.ctx.put_replica_state(REPLICA, OfflineReplica)
    h.handle([REPLICA], ReplicaDeletionStarted)
    [stop] = sent(h.effects, StopReplicaRequest, BROKER_ID)
    assert stop.request.partition_states[0].delete_partition
    assert h.ctx.replica_state(REPLICA) == ReplicaDeletionStarted


def test_offline_replica_to_replica_deletion_ineligible_transition(h: Harness) -> None:
    """testOfflineReplicaToReplicaDeletionIneligibleTransition"""
    h.ctx.put_replica_state(REPLICA, OfflineReplica)
    h.handle([REPLICA], ReplicaDeletionIneligible)
    assert h.ctx.replica_state(REPLICA) == ReplicaDeletionIneligible
    assert sent(h.effects) == []


def test_invalid_offline_replica_to_replica_deletion_successful_transition(h: Harness) -> None:
    """testInvalidOfflineReplicaToReplicaDeletionSuccessfulTransition"""
    _assert_invalid(h, OfflineReplica, ReplicaDeletionSuccessful)


def test_invalid_replica_deletion_started_to_nonexistent_replica_transition(h: Harness) -> None:
    """testInvalidReplicaDeletionStartedToNonexistentReplicaTransition"""
    _assert_invalid(h, ReplicaDeletionStarted, NonExistentReplica)


def test_invalid_replica_deletion_started_to_new_replica_transition(h: Harness) -> None:
    """testInvalidReplicaDeletionStartedToNewReplicaTransition"""
    _assert_invalid(h, ReplicaDeletionStarted, NewReplica)


def test_invalid_replica_deletion_started_to_online_replica_transition(h: Harness) -> None:
    """testInvalidReplicaDeletionStartedToOnlineReplicaTransition"""
    _assert_invalid(h, ReplicaDeletionStarted, OnlineReplica)


def test_invalid_replica_deletion_started_to_offline_replica_transition(h: Harness) -> None:
    """testInvalidReplicaDeletionStartedToOfflineReplicaTransition"""
    _assert_invalid(h, ReplicaDeletionStarted, OfflineReplica)


def test_replica_deletion_started_to_replica_deletion_ineligible_transition(h: Harness) -> None:
    """testReplicaDeletionStartedToReplicaDeletionIneligibleTransition"""
    h.ctx.put_replica_state(REPLICA, ReplicaDeletionStarted)
    h.handle([REPLICA], ReplicaDeletionIneligible)
    assert h.ctx.replica_state(REPLICA) == ReplicaDeletionIneligible


def test_replica_deletion_started_to_replica_deletion_successful_transition(h: Harness) -> None:
    """testReplicaDeletionStartedToReplicaDeletionSuccessfulTransition"""
    h.ctx.put_replica_state(REPLICA, ReplicaDeletionStarted)
    h.handle([REPLICA], ReplicaDeletionSuccessful)
    assert h.ctx.replica_state(REPLICA) == ReplicaDeletionSuccessful


def test_replica_deletion_successful_to_nonexistent_replica_transition(h: Harness) -> None:
    """testReplicaDeletionSuccessfulToNonexistentReplicaTransition"""
    h.ctx.put_replica_state(REPLICA, ReplicaDeletionSuccessful)
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER_ID,)))
    h.handle([REPLICA], NonExistentReplica)
    assert h.ctx.partition_replica_assignment(PARTITION) == ()
    assert REPLICA not in h.ctx.replica_states


def test_invalid_replica_deletion_successful_to_new_replica_transition(h: Harness) -> None:
    """testInvalidReplicaDeletionSuccessfulToNewReplicaTransition"""
    _assert_invalid(h, ReplicaDeletionSuccessful, NewReplica)


def test_invalid_replica_deletion_successful_to_online_replica_transition(h: Harness) -> None:
    """testInvalidReplicaDeletionSuccessfulToOnlineReplicaTransition"""
    _assert_invalid(h, ReplicaDeletionSuccessful, OnlineReplica)


def test_invalid_replica_deletion_successful_to_offline_replica_transition(h: Harness) -> None:
    """testInvalidReplicaDeletionSuccessfulToOfflineReplicaTransition"""
    _assert_invalid(h, ReplicaDeletionSuccessful, OfflineReplica)


def test_invalid_replica_deletion_successful_to_replica_deletion_started_transition(h: Harness) -> None:
    """testInvalidReplicaDeletionSuccessfulToReplicaDeletionStartedTransition"""
    _assert_invalid(h, ReplicaDeletionSuccessful, ReplicaDeletionStarted)


def test_invalid_replica_deletion_successful_to_replica_deletion_ineligible_transition(h: Harness) -> None:
    """testInvalidReplicaDeletionSuccessfulToReplicaDeletionIneligibleTransition"""
    _assert_invalid(h, ReplicaDeletionSuccessful, ReplicaDeletionIneligible)


def test_invalid_replica_deletion_ineligible_to_nonexistent_replica_transition(h: Harness) -> None:
    """testInvalidReplicaDeletionIneligibleToNonexistentReplicaTransition"""
    _assert_invalid(h, ReplicaDeletionIneligible, NonExistentReplica)


def test_invalid_replica_deletion_ineligible_to_new_replica_transition(h: Harness) -> None:
    """testInvalidReplicaDeletionIneligibleToNewReplicaTransition"""
    _assert_invalid(h, ReplicaDeletionIneligible, NewReplica)


def test_replica_deletion_ineligible_to_online_replica_transition(h: Harness) -> None:
    """testReplicaDeletionIneligibleToOnlineReplicaTransition"""
    _to_online_with_leader_record(h, ReplicaDeletionIneligible)


def test_invalid_replica_deletion_ineligible_to_replica_deletion_started_transition(h: Harness) -> None:
    """testInvalidReplicaDeletionIneligibleToReplicaDeletionStartedTransition"""
    _assert_invalid(h, ReplicaDeletionIneligible, ReplicaDeletionStarted)


def test_invalid_replica_deletion_ineligible_to_replica_deletion_successful_transition(h: Harness) -> None:
    """testInvalidReplicaDeletionIneligibleToReplicaDeletionSuccessfulTransition"""
    _assert_invalid(h, ReplicaDeletionIneligible, ReplicaDeletionSuccessful)


# -- kactor-specific ---------------------------------------------------------------------------------------------------
def test_offline_replica_keeps_last_isr_member_with_no_leader(h: Harness) -> None:
    """removeReplicasFromIsr: an ISR of one keeps its member; the leader becomes −1."""
    h.ctx.set_live_brokers([broker(6)])
    h.ctx.put_replica_state(REPLICA, OnlineReplica)
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER_ID, 6)))
    h.ctx.put_partition_leadership_info(PARTITION, _record(BROKER_ID, [BROKER_ID], epoch=4, zk_version=9))
    h.zk.put_partition_state(PARTITION, BROKER_ID, [BROKER_ID], leader_epoch=4, controller_epoch=10, zk_version=9)
    h.handle([REPLICA], OfflineReplica)
    assert json.loads(h.zk.get(TopicPartitionStateZNode.path(PARTITION))) == \
        {"controller_epoch": CONTROLLER_EPOCH, "leader": -1, "version": 1, "leader_epoch": 5, "isr": [BROKER_ID]}
    assert h.ctx.partition_leadership_info(PARTITION) == _record(-1, [BROKER_ID], epoch=5, zk_version=10)
    assert h.ctx.replica_state(REPLICA) == OfflineReplica
    assert [e.broker_id for e in sent(h.effects, LeaderAndIsrRequest)] == [6]


def test_offline_replica_not_in_isr_is_not_written(h: Harness) -> None:
    h.ctx.set_live_brokers([broker(6)])
    h.ctx.put_replica_state(REPLICA, OnlineReplica)
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((6, BROKER_ID)))
    h.ctx.put_partition_leadership_info(PARTITION, _record(6, [6]))
    h.zk.put_partition_state(PARTITION, 6, [6], leader_epoch=2, controller_epoch=CONTROLLER_EPOCH, zk_version=3)
    h.handle([REPLICA], OfflineReplica)
    assert len(h.zk.batches) == 1  # read only
    assert h.ctx.partition_leadership_info(PARTITION) == _record(6, [6], epoch=2, zk_version=3)
    assert h.ctx.replica_state(REPLICA) == OfflineReplica


def test_offline_replica_missing_state_znode(h: Harness) -> None:
    """Missing state znode: a failure (replica not transitioned), silently skipped for topics queued for deletion."""
    h.ctx.put_replica_state(REPLICA, OnlineReplica)
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER_ID,)))
    h.ctx.put_partition_leadership_info(PARTITION, _record(BROKER_ID, [BROKER_ID]))
    h.handle([REPLICA], OfflineReplica)
    assert h.ctx.replica_state(REPLICA) == OnlineReplica
    h.ctx.queue_topic_deletion({"t"})
    h.handle([REPLICA], OfflineReplica)
    assert h.ctx.replica_state(REPLICA) == OnlineReplica


def test_offline_replica_retries_on_bad_version(h: Harness) -> None:
    h.ctx.set_live_brokers([broker(6), broker(7)])
    h.ctx.put_replica_state(REPLICA, OnlineReplica)
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER_ID, 6, 7)))
    h.ctx.put_partition_leadership_info(PARTITION, _record(6, [6, BROKER_ID, 7]))
    h.zk.put_partition_state(PARTITION, 6, [6, BROKER_ID, 7], controller_epoch=CONTROLLER_EPOCH)

    def leader_shrinks_isr(batch):
        from protocol.zk.znodes import encode_partition_state
        h.zk.set(TopicPartitionStateZNode.path(PARTITION), encode_partition_state(_record(6, [6, BROKER_ID])))

    h.zk.interceptors += [lambda b: None, leader_shrinks_isr]
    h.handle([REPLICA], OfflineReplica)
    assert len(h.zk.batches) == 4
    assert json.loads(h.zk.get(TopicPartitionStateZNode.path(PARTITION)))["isr"] == [6]
    assert h.ctx.partition_leadership_info(PARTITION).leader_and_isr == LeaderAndIsr(6, 1, (6,), 2)


def test_offline_replica_controller_moved(h: Harness) -> None:
    h.ctx.put_replica_state(REPLICA, OnlineReplica)
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((BROKER_ID, 6)))
    h.ctx.put_partition_leadership_info(PARTITION, _record(BROKER_ID, [BROKER_ID, 6]))
    h.zk.put_partition_state(PARTITION, BROKER_ID, [BROKER_ID, 6], controller_epoch=CONTROLLER_EPOCH)
    h.zk.setup_controller_epoch(CONTROLLER_EPOCH + 1, EPOCH_ZK_VERSION + 1)
    with pytest.raises(ControllerMovedError):
        run(h.rsm.handle_state_changes([REPLICA], OfflineReplica), h.zk)


def test_new_replica_with_leader_record_gets_is_new_leader_and_isr(h: Harness) -> None:
    h.ctx.set_live_brokers([broker(BROKER_ID), broker(6)])
    h.ctx.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment((6, BROKER_ID)))
    h.ctx.put_partition_leadership_info(PARTITION, _record(6, [6]))
    h.handle([REPLICA], NewReplica)
    [lai] = sent(h.effects, LeaderAndIsrRequest)
    assert lai.broker_id == BROKER_ID and lai.request.partition_states[0].is_new
    # the leader itself cannot become NewReplica
    leader_replica = PartitionAndReplica(PARTITION, 6)
    h.handle([leader_replica], NewReplica)
    assert h.ctx.replica_state(leader_replica) == NonExistentReplica


def test_replicas_grouped_by_broker_in_one_batch(h: Harness) -> None:
    h.ctx.set_live_brokers([broker(b) for b in (1, 2, 3)])
    parts = [TopicPartition("x", p) for p in range(6)]
    replicas = [PartitionAndReplica(tp, b) for tp in parts for b in (1, 2, 3)]
    for r in replicas:
        h.ctx.put_replica_state(r, OfflineReplica)
    h.handle(replicas, ReplicaDeletionStarted)
    stops = sent(h.effects, StopReplicaRequest)
    assert sorted(s.broker_id for s in stops) == [1, 2, 3]
    assert all(len(s.request.partition_states) == 6 for s in stops)
    [record] = [e.record for e in h.effects if isinstance(e, StateChange)]
    assert len(record.replica_changes) == 18


def test_replica_state_values() -> None:
    assert [s.value for s in ReplicaState] == [1, 2, 3, 4, 5, 6, 7]
