"""ZkReplicaStateMachine (kafka.controller.ReplicaStateMachine / ZkReplicaStateMachine, Kafka 2.6; §5.2).

Replicas are grouped by broker and each group is processed in turn within one request batch, as Kafka does. ISR
shrinking for OfflineReplica reads / writes the state znodes of all the group's partitions in one pipelined ZkBatch
per round (BADVERSION rounds repeat).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from core.controller.context import ControllerContext, ordered
from core.controller.errors import ControllerMovedError, IllegalStateError, KeeperError, StateChangeFailedError
from core.controller.request_batch import ControllerBrokerRequestBatch
from core.controller.states import ReplicaState
from core.effects import Proc, StateChange
from core.zk_client import KafkaZkClient, partition_state_or_none
from messages.common import NO_LEADER, LeaderAndIsr, LeaderIsrAndControllerEpoch, PartitionAndReplica, TopicPartition
from messages.observability import ReplicaStateChange, StateChangeBatch
from messages.zk import NONODE, OK
from protocol.zk import paths

log = logging.getLogger("kactor.controller.replica_state_machine")
state_change_log = logging.getLogger("kactor.state.change")

NewReplica = ReplicaState.NewReplica
OnlineReplica = ReplicaState.OnlineReplica
OfflineReplica = ReplicaState.OfflineReplica
ReplicaDeletionStarted = ReplicaState.ReplicaDeletionStarted
ReplicaDeletionSuccessful = ReplicaState.ReplicaDeletionSuccessful
ReplicaDeletionIneligible = ReplicaState.ReplicaDeletionIneligible
NonExistentReplica = ReplicaState.NonExistentReplica


class ZkReplicaStateMachine:
    """Mirrors ZkReplicaStateMachine. ``config`` needs ``broker_id``."""

    def __init__(self, config: Any, ctx: ControllerContext, batch: ControllerBrokerRequestBatch | None = None,
                 zk_client: KafkaZkClient | None = None) -> None:
        self.config = config
        self.controller_id: int = config.broker_id
        self.ctx = ctx
        self.batch = batch if batch is not None else ControllerBrokerRequestBatch(self.controller_id, ctx)
        self.zk_client = zk_client if zk_client is not None else KafkaZkClient()
        self._changes: list[ReplicaStateChange] = []

    # -- lifecycle ---------------------------------------------------------------------------------------------------
    def startup(self) -> Proc[None]:
        """ReplicaStateMachine.startup: initial states, then online replicas → OnlineReplica and offline replicas →
        OfflineReplica."""
        log.info("Initializing replica state")
        self.initialize_replica_state()
        log.info("Triggering online replica state changes")
        online, offline = self.ctx.online_and_offline_replicas()
        yield from self.handle_state_changes(online, OnlineReplica)
        log.info("Triggering offline replica state changes")
        yield from self.handle_state_changes(offline, OfflineReplica)

    def shutdown(self) -> None:
        log.info("Stopped replica state machine")

    def initialize_replica_state(self) -> None:
        """ReplicaStateMachine.initializeReplicaState: online → OnlineReplica, else ReplicaDeletionIneligible."""
        ctx = self.ctx
        for tp in ctx.iter_all_partitions():
            for r in ctx.partition_replica_assignment(tp):
                ctx.put_replica_state(PartitionAndReplica(tp, r),
                                      OnlineReplica if ctx.is_replica_online(r, tp) else ReplicaDeletionIneligible)

    # -- transitions -------------------------------------------------------------------------------------------------
    def handle_state_changes(self, replicas: Iterable[PartitionAndReplica], target_state: ReplicaState) -> Proc[None]:
        """ZkReplicaStateMachine.handleStateChanges: newBatch; per broker, doHandleStateChanges; send.

        ControllerMovedError propagates; any other error is logged and swallowed (as Kafka does)."""
        reps = ordered(replicas)
        if not reps:
            return
        self._changes = []
        try:
            self.batch.new_batch()
            by_broker: dict[int, list[PartitionAndReplica]] = {}
            for r in reps:
                by_broker.setdefault(r.replica, []).append(r)
            for replica_id, group in by_broker.items():
                yield from self._do_handle_state_changes(replica_id, group, target_state)
            yield from self.batch.send_requests_to_brokers(self.ctx.epoch)
        except ControllerMovedError:
            log.error("Controller moved to another broker when moving some replicas to %s state", target_state)
            raise
        except Exception:
            log.error("Error while moving some replicas to %s state", target_state, exc_info=True)
        yield StateChange(StateChangeBatch(self.ctx.epoch, replica_changes=tuple(self._changes)))
        self._changes = []

    def _mark(self, replica: PartitionAndReplica, target: ReplicaState) -> None:
        current = self.ctx.replica_states.get(replica, NonExistentReplica)
        self._changes.append(ReplicaStateChange(replica.topic_partition, replica.replica, current.name, target.name))
        self.ctx.put_replica_state(replica, target)

    def _do_handle_state_changes(self, replica_id: int, replicas: list[PartitionAndReplica],
                                 target_state: ReplicaState) -> Proc[None]:
        """Mirrors ZkReplicaStateMachine.doHandleStateChanges for the replicas of one broker."""
        ctx = self.ctx
        batch = self.batch
        for r in replicas:
            ctx.put_replica_state_if_not_exists(r, NonExistentReplica)
        valid, invalid = ctx.check_valid_replica_state_change(replicas, target_state)
        for r in invalid:
            self._log_invalid_transition(r, target_state)

        if target_state == NewReplica:
            for r in valid:
                tp = r.topic_partition
                info = ctx.partition_leadership_info(tp)
                if info is not None:
                    if info.leader_and_isr.leader == replica_id:
                        e = StateChangeFailedError(f"Replica {replica_id} for partition {tp} cannot be moved to "
                                                   "NewReplica state as it is being requested to become leader")
                        self._log_failed_state_change(r, ctx.replica_states[r], OfflineReplica, e)
                    else:
                        batch.add_leader_and_isr_request_for_brokers((replica_id,), tp, info,
                                                                     ctx.partition_full_replica_assignment(tp), True)
                        self._mark(r, NewReplica)
                else:
                    self._mark(r, NewReplica)

        elif target_state == OnlineReplica:
            for r in valid:
                tp = r.topic_partition
                if ctx.replica_states[r] == NewReplica:
                    assignment = ctx.partition_full_replica_assignment(tp)
                    if replica_id not in assignment.replicas:
                        log.error("Adding replica (%d) that is not part of the assignment %s", replica_id, assignment)
                        ctx.update_partition_full_replica_assignment(
                            tp, type(assignment)((*assignment.replicas, replica_id), assignment.adding_replicas,
                                                 assignment.removing_replicas))
                else:
                    info = ctx.partition_leadership_info(tp)
                    if info is not None:
                        batch.add_leader_and_isr_request_for_brokers((replica_id,), tp, info,
                                                                     ctx.partition_full_replica_assignment(tp), False)
                self._mark(r, OnlineReplica)

        elif target_state == OfflineReplica:
            for r in valid:
                batch.add_stop_replica_request_for_brokers((replica_id,), r.topic_partition, False)
            with_info = [r for r in valid if ctx.partition_leadership_info(r.topic_partition) is not None]
            without_info = [r for r in valid if ctx.partition_leadership_info(r.topic_partition) is None]
            updated = yield from self._remove_replicas_from_isr(replica_id, [r.topic_partition for r in with_info])
            for tp, info in updated.items():
                if state_change_log.isEnabledFor(logging.DEBUG):
                    state_change_log.debug("Partition %s state changed to %s after removing replica %d from the ISR "
                                           "as part of transition to OfflineReplica", tp, info, replica_id)
                if tp.topic not in ctx.topics_to_be_deleted:
                    recipients = [b for b in ctx.partition_replica_assignment(tp) if b != replica_id]
                    batch.add_leader_and_isr_request_for_brokers(recipients, tp, info,
                                                                 ctx.partition_full_replica_assignment(tp), False)
                self._mark(PartitionAndReplica(tp, replica_id), OfflineReplica)
            if without_info:
                live = ctx.live_or_shutting_down_broker_ids_view()
                for r in without_info:
                    batch.add_update_metadata_request_for_brokers(live, (r.topic_partition,))
                    self._mark(r, OfflineReplica)

        elif target_state == ReplicaDeletionStarted:
            for r in valid:
                self._mark(r, ReplicaDeletionStarted)
                batch.add_stop_replica_request_for_brokers((replica_id,), r.topic_partition, True)

        elif target_state in (ReplicaDeletionIneligible, ReplicaDeletionSuccessful):
            for r in valid:
                self._mark(r, target_state)

        elif target_state == NonExistentReplica:
            for r in valid:
                tp = r.topic_partition
                ctx.update_partition_full_replica_assignment(
                    tp, ctx.partition_full_replica_assignment(tp).remove_replica(r.replica))
                self._changes.append(ReplicaStateChange(tp, r.replica, ctx.replica_states[r].name,
                                                        NonExistentReplica.name))
                ctx.remove_replica_state(r)

    def _remove_replicas_from_isr(self, replica_id: int, partitions: list[TopicPartition]
                                  ) -> Proc[dict[TopicPartition, LeaderIsrAndControllerEpoch]]:
        """Mirrors removeReplicasFromIsr: repeat doRemoveReplicasFromIsr until no BADVERSION retries remain."""
        results: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        remaining = partitions
        while remaining:
            finished, to_retry = yield from self._do_remove_replicas_from_isr(replica_id, remaining)
            remaining = to_retry
            for tp, outcome in finished.items():
                if isinstance(outcome, Exception):
                    replica = PartitionAndReplica(tp, replica_id)
                    self._log_failed_state_change(replica, self.ctx.replica_states[replica], OfflineReplica, outcome)
                else:
                    results[tp] = outcome
        return results

    def _do_remove_replicas_from_isr(
        self, replica_id: int, partitions: list[TopicPartition]
    ) -> Proc[tuple[dict[TopicPartition, LeaderIsrAndControllerEpoch | Exception], list[TopicPartition]]]:
        """Mirrors doRemoveReplicasFromIsr: leader −1 if it was the removed replica; the ISR keeps its last member."""
        ctx = self.ctx
        leader_and_isrs, without_state = yield from self._get_topic_partition_states_from_zk(partitions)
        adjusted: dict[TopicPartition, LeaderAndIsr] = {}
        unchanged: dict[TopicPartition, LeaderAndIsr | Exception] = {}
        for tp, outcome in leader_and_isrs.items():
            if isinstance(outcome, LeaderAndIsr) and replica_id in outcome.isr:
                new_leader = NO_LEADER if replica_id == outcome.leader else outcome.leader
                new_isr = outcome.isr if len(outcome.isr) == 1 else tuple(r for r in outcome.isr if r != replica_id)
                adjusted[tp] = outcome.new_leader_and_isr(new_leader, new_isr)
            else:
                unchanged[tp] = outcome
        update = yield from self.zk_client.update_leader_and_isr(adjusted, ctx.epoch, ctx.epoch_zk_version)

        out: dict[TopicPartition, LeaderIsrAndControllerEpoch | Exception] = {}
        for source in (unchanged, update.finished_partitions):
            for tp, outcome in source.items():
                if isinstance(outcome, Exception):
                    out[tp] = outcome
                else:
                    info = LeaderIsrAndControllerEpoch(outcome, ctx.epoch)
                    ctx.put_partition_leadership_info(tp, info)
                    out[tp] = info
        for tp in without_state:
            if tp.topic not in ctx.topics_to_be_deleted:
                out[tp] = StateChangeFailedError(f"Failed to change state of replica {replica_id} for partition {tp} "
                                                 "since the leader and isr path in zookeeper is empty")
        return out, update.partitions_to_retry

    def _get_topic_partition_states_from_zk(
        self, partitions: list[TopicPartition]
    ) -> Proc[tuple[dict[TopicPartition, LeaderAndIsr | Exception], list[TopicPartition]]]:
        """Mirrors getTopicPartitionStatesFromZk: (partition → LeaderAndIsr or error, partitions without a state)."""
        ctx = self.ctx
        try:
            responses = yield from self.zk_client.get_topic_partition_states_raw(partitions)
        except ControllerMovedError:
            raise
        except Exception as e:
            return {tp: e for tp in partitions}, []
        result: dict[TopicPartition, LeaderAndIsr | Exception] = {}
        without_state: list[TopicPartition] = []
        for tp, r in zip(partitions, responses, strict=True):
            if r.code == OK:
                decoded = partition_state_or_none(r, tp)
                if decoded is None:
                    without_state.append(tp)
                elif decoded.controller_epoch > ctx.epoch:
                    result[tp] = StateChangeFailedError(
                        "Leader and isr path written by another controller. This probably means the current "
                        f"controller with epoch {ctx.epoch} went through a soft failure and another controller was "
                        f"elected with epoch {decoded.controller_epoch}. Aborting state change by this controller")
                else:
                    result[tp] = decoded.leader_and_isr
            elif r.code == NONODE:
                without_state.append(tp)
            else:
                result[tp] = KeeperError(r.code, paths.TopicPartitionStateZNode.path(tp))
        return result, without_state

    # -- logging -----------------------------------------------------------------------------------------------------
    def _log_invalid_transition(self, replica: PartitionAndReplica, target: ReplicaState) -> None:
        current = self.ctx.replica_states[replica]
        valid = ",".join(s.name for s in sorted(target.valid_previous_states, key=lambda s: s.value))
        e = IllegalStateError(f"Replica {replica} should be in the {valid} states before moving to {target} state. "
                              f"Instead it is in {current} state")
        self._log_failed_state_change(replica, current, target, e)

    def _log_failed_state_change(self, replica: PartitionAndReplica, current: ReplicaState, target: ReplicaState,
                                 error: BaseException) -> None:
        if state_change_log.isEnabledFor(logging.ERROR):
            state_change_log.error("Controller %d epoch %d initiated state change of replica %d for partition %s from "
                                   "%s to %s failed: %s", self.controller_id, self.ctx.epoch, replica.replica,
                                   replica.topic_partition, current, target, error)
