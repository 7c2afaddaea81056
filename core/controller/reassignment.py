"""Partition reassignment (KIP-455, Kafka 2.4–2.6; reference §8.2): KafkaController's reassignment procedures.

RS = current replicas, ORS = origin, TRS = target, AR = adding, RR = removing.

* Phase U (updateCurrentReassignment): if the assignment changes, write the topic znode first (U1, fenced), then the
  context (U2), then stop replicas no longer needed (U3). Register the ISR-change handler of the partition's state
  znode (armed by the next read) and mark the partition as being reassigned.
* Phase A (TRS ⊄ ISR): A1 bump the leader epoch and send LeaderAndIsr to RS; A2 AR → NewReplica.
* Phase B (TRS ⊆ ISR): B1 AR → OnlineReplica; B2 context := TRS; B3 move the leader if it is not in TRS or dead
  (Reassign strategy), else bump the epoch; B4/B5 RR → Offline → DeletionStarted → DeletionSuccessful → NonExistent;
  B6 write the topic znode with TRS (fenced); B7 drop the ISR handler and the partition from
  /admin/reassign_partitions; B8 UpdateMetadata for the partition, resume deletion of its topic.

Entry points: ZkPartitionReassignment (/admin/reassign_partitions), ApiPartitionReassignment, the state znode watch
(PartitionReassignmentIsrChange), broker startup and controller failover.

Cancellation (KIP-455; ApiPartitionReassignment with a null target): maybeBuildReassignment makes it
reassignTo(ORS) — RS = ORS, nothing adding or removing — and onPartitionReassignment takes it like any other: U1/U2
write the origin replicas (the /admin/reassign_partitions entry of a ZooKeeper-submitted one is removed first, the
latest request winning), U3 stops the adding replicas (Offline, out of the ISR; DeletionStarted, StopReplica with
deletePartition; NonExistent) — after a leader-epoch bump when none of them is in the ISR, kactor's own
(fence_unneeded_replicas: without it their brokers ignore the StopReplica and keep the log) — and as the origin
replicas are complete at once, phase B follows in the same event (B3: the leader, one of ORS, keeps leading with a
new epoch; B7, B8). A ReassignmentProgress(Cancelled) record marks it.

/admin/reassign_partitions handling: JSON that does not parse is logged and treated as an empty reassignment (as Kafka);
entries that cannot start (unknown partition, topic being deleted, an empty / duplicate / negative replica list) are
dropped from the znode with a log line and a ReassignmentProgress(Dropped) record.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from core.controller.context import ControllerContext
from core.controller.election import OfflinePartitionLeaderElectionStrategy, ReassignPartitionLeaderElectionStrategy
from core.controller.errors import ControllerMovedError, IllegalStateError, KeeperError, StateChangeFailedError
from core.controller.request_batch import ControllerBrokerRequestBatch
from core.controller.states import (
    NewReplica,
    NonExistentReplica,
    OfflineReplica,
    OnlinePartition,
    OnlineReplica,
    ReplicaDeletionStarted,
    ReplicaDeletionSuccessful,
)
from core.controller.zk_watches import (
    ZNodeChangeHandler,
    partition_reassignment_handler,
    partition_reassignment_isr_change_handler,
)
from core.effects import Enqueue, Proc, StateChange
from core.zk_client import KafkaZkClient
from messages import controller_events as ev
from messages.common import (
    Errors,
    LeaderIsrAndControllerEpoch,
    PartitionAndReplica,
    ReplicaAssignment,
    TopicPartition,
)
from messages.observability import ReassignmentProgress
from messages.zk import NONODE, OK
from protocol.zk import paths

log = logging.getLogger("kactor.controller.reassignment")

ApiError = tuple[Errors, str]
NONE_ERROR: ApiError = (Errors.NONE, "")


class ReassignmentClient(Protocol):
    """The KafkaController operations PartitionReassignment needs (a seam like deletion's DeletionClient): whether
    it is the active controller, ZooKeeperClient's handler registry, sendUpdateMetadataRequest and
    handleIllegalState. (Kafka's reassignment code is part of KafkaController; here it has a module of its own and
    this is its only way back into the controller.)"""

    @property
    def is_active(self) -> bool: ...

    def register_node_handler(self, handler: ZNodeChangeHandler) -> None: ...

    def unregister_node_handler(self, path: str) -> None: ...

    def register_node_handler_and_check_existence(self, handler: ZNodeChangeHandler) -> Proc[bool]: ...

    def send_update_metadata_request(self, brokers: Iterable[int], partitions: Iterable[TopicPartition]
                                     ) -> Proc[None]: ...

    def handle_illegal_state(self, e: Exception) -> Proc[None]: ...


class PartitionReassignment:
    """The reassignment part of KafkaController (same method names). It is given the controller's context, request
    batch, state machines, deletion manager and KafkaZkClient, and reaches the rest of the controller only through
    ``client``."""

    def __init__(self, ctx: ControllerContext, broker_request_batch: ControllerBrokerRequestBatch,
                 replica_state_machine: Any, partition_state_machine: Any, topic_deletion_manager: Any,
                 zk_client: KafkaZkClient, client: ReassignmentClient) -> None:
        self.ctx = ctx
        self.broker_request_batch = broker_request_batch
        self.replica_state_machine = replica_state_machine
        self.partition_state_machine = partition_state_machine
        self.topic_deletion_manager = topic_deletion_manager
        self.zk_client = zk_client
        self.client = client

    # -- events ------------------------------------------------------------------------------------------------------
    def process_zk_partition_reassignment(self) -> Proc[set[TopicPartition]]:
        """processZkPartitionReassignment: start every reassignment listed in /admin/reassign_partitions (re-arming
        its exists watch); entries that fail are removed from the znode. Returns the partitions started."""
        c = self.client
        if not c.is_active:
            return set()
        exists = yield from c.register_node_handler_and_check_existence(partition_reassignment_handler())
        if not exists:
            return set()
        results: dict[TopicPartition, ApiError] = {}
        to_reassign: dict[TopicPartition, ReplicaAssignment] = {}
        zk_reassignment = yield from self.zk_client.get_partition_reassignment()
        for tp, target in sorted(zk_reassignment.items()):
            invalid = self.validate_replica_list(target)
            if invalid is not None:
                results[tp] = invalid
                continue
            built = self.maybe_build_reassignment(tp, target)
            if built is None:
                results[tp] = (Errors.NO_REASSIGNMENT_IN_PROGRESS, "")
            else:
                to_reassign[tp] = built
        results.update((yield from self.maybe_trigger_partition_reassignment(to_reassign)))
        failed = {tp: e for tp, e in results.items() if e[0] != Errors.NONE}
        if failed:
            log.warning("Failed reassignment through zk with the following errors: %s",
                        {str(tp): f"{e.name}: {m}" for tp, (e, m) in sorted(failed.items())})
            for tp, (e, m) in sorted(failed.items()):
                yield StateChange(ReassignmentProgress(tp, "Dropped", tuple(zk_reassignment.get(tp, ())),
                                                                  f"{e.name}: {m}".rstrip(": ")))
            yield from self.maybe_remove_from_zk_reassignment(lambda tp, _replicas: tp in failed)
        return {tp for tp, e in results.items() if e[0] == Errors.NONE}

    def process_api_partition_reassignment(
            self, reassignments: Iterable[tuple[TopicPartition, tuple[int, ...] | None]]
    ) -> Proc[ev.AlterReassignmentsReply]:
        """processApiPartitionReassignment (AlterPartitionReassignments): validate, cancel (None) or start; the latest
        request wins over a ZooKeeper-submitted reassignment of the same partition."""
        if not self.client.is_active:
            return ev.AlterReassignmentsReply(Errors.NOT_CONTROLLER)
        results: dict[TopicPartition, ApiError] = {}
        to_reassign: dict[TopicPartition, ReplicaAssignment] = {}
        for tp, target in reassignments:
            err = self.validate_replicas(tp, target) if target is not None else None
            if err is not None:
                results[tp] = err
                continue
            built = self.maybe_build_reassignment(tp, target)
            if built is None:
                results[tp] = (Errors.NO_REASSIGNMENT_IN_PROGRESS, "")
            else:
                to_reassign[tp] = built
        yield from self.maybe_remove_from_zk_reassignment(lambda tp, _replicas: tp in to_reassign)
        results.update((yield from self.maybe_trigger_partition_reassignment(to_reassign)))
        return ev.AlterReassignmentsReply(Errors.NONE, tuple(
            ev.PartitionReassignmentResult(tp, e, m) for tp, (e, m) in sorted(results.items())))

    def process_list_partition_reassignments(self, partitions: Iterable[TopicPartition] | None
                                             ) -> Proc[ev.ListReassignmentsReply]:
        """processListPartitionReassignments"""
        if not self.client.is_active:
            return ev.ListReassignmentsReply(Errors.NOT_CONTROLLER)
        to_list = self.ctx.partitions_being_reassigned if partitions is None else set(partitions)
        out = []
        for tp in sorted(to_list):
            assignment = self.ctx.partition_full_replica_assignment(tp)
            if assignment.is_being_reassigned:
                out.append((tp, assignment))
        return ev.ListReassignmentsReply(Errors.NONE, tuple(out))
        yield  # pragma: no cover

    def process_partition_reassignment_isr_change(self, tp: TopicPartition) -> Proc[None]:
        """processPartitionReassignmentIsrChange: complete the reassignment once TRS ⊆ ISR."""
        if not self.client.is_active:
            return
        if tp in self.ctx.partitions_being_reassigned:
            reassignment = self.ctx.partition_full_replica_assignment(tp)
            if (yield from self.is_reassignment_complete(tp, reassignment)):
                log.info("Target replicas %s have all caught up with the leader for reassigning partition %s",
                         reassignment.target_replicas, tp)
                yield from self.on_partition_reassignment(tp, reassignment)

    # -- failover / broker startup -----------------------------------------------------------------------------------
    def initialize_partition_reassignments(self) -> Proc[None]:
        """initializePartitionReassignments: the ZooKeeper ones first, then resume the others from the context."""
        zk_resumed = yield from self.process_zk_partition_reassignment()
        yield from self.maybe_resume_reassignments(lambda tp, _a: tp not in zk_resumed)

    def maybe_resume_reassignments(self, should_resume: Callable[[TopicPartition, ReplicaAssignment], bool]
                                   ) -> Proc[None]:
        """maybeResumeReassignments"""
        for tp in sorted(self.ctx.partitions_being_reassigned):
            current = self.ctx.partition_full_replica_assignment(tp)
            if should_resume(tp, current):
                yield from self.on_partition_reassignment(tp, current)

    # -- validation --------------------------------------------------------------------------------------------------
    @staticmethod
    def validate_replica_list(replicas: tuple[int, ...]) -> ApiError | None:
        """The structural part of validateReplicas: non-empty, no duplicates, no negative id."""
        if not replicas:
            return Errors.INVALID_REPLICA_ASSIGNMENT, "Empty replica list specified in partition reassignment."
        if len(set(replicas)) != len(replicas):
            return (Errors.INVALID_REPLICA_ASSIGNMENT,
                    f"Duplicate replica ids in partition reassignment replica list: {list(replicas)}")
        if any(r < 0 for r in replicas):
            return Errors.INVALID_REPLICA_ASSIGNMENT, f"Invalid broker id in replica list: {list(replicas)}"
        return None

    def validate_replicas(self, tp: TopicPartition, replicas: tuple[int, ...]) -> ApiError | None:
        """validateReplicas (API requests): the structural checks plus "every adding replica is a live broker"."""
        err = self.validate_replica_list(replicas)
        if err is not None:
            return err
        new_assignment = self.ctx.partition_full_replica_assignment(tp).reassign_to(tuple(replicas))
        live = self.ctx.live_broker_ids()
        if not set(new_assignment.adding_replicas) <= live:
            return (Errors.INVALID_REPLICA_ASSIGNMENT,
                    f"Replica assignment has brokers that are not alive. Replica list: "
                    f"{list(new_assignment.adding_replicas)}, live broker list: {sorted(live)}")
        return None

    def maybe_build_reassignment(self, tp: TopicPartition, target: tuple[int, ...] | None
                                 ) -> ReplicaAssignment | None:
        """maybeBuildReassignment: current.reassignTo(target); a cancel (None) targets the origin replicas."""
        current = self.ctx.partition_full_replica_assignment(tp)
        if current.is_being_reassigned:
            return current.reassign_to(tuple(target) if target is not None else current.origin_replicas)
        if target is None:
            return None
        return current.reassign_to(tuple(target))

    def maybe_trigger_partition_reassignment(self, reassignments: Mapping[TopicPartition, ReplicaAssignment]
                                             ) -> Proc[dict[TopicPartition, ApiError]]:
        """maybeTriggerPartitionReassignment: topics being deleted / unknown partitions → UNKNOWN_TOPIC_OR_PARTITION;
        ControllerMovedError propagates; any other failure → UNKNOWN_SERVER_ERROR."""
        out: dict[TopicPartition, ApiError] = {}
        for tp, reassignment in sorted(reassignments.items()):
            if self.topic_deletion_manager.is_topic_queued_up_for_deletion(tp.topic):
                log.info("Skipping reassignment of %s since the topic is currently being deleted", tp)
                out[tp] = (Errors.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")
            elif self.ctx.partition_replica_assignment(tp):
                previous = self.ctx.partition_full_replica_assignment(tp)
                try:
                    yield from self.on_partition_reassignment(tp, reassignment)
                    out[tp] = NONE_ERROR
                except GeneratorExit:
                    raise
                except ControllerMovedError:
                    log.info("Failed completing reassignment of partition %s because controller has moved to "
                             "another broker", tp)
                    raise
                except Exception as e:
                    log.error("Error completing reassignment of partition %s: %s", tp, e, exc_info=True)
                    out[tp] = (Errors.UNKNOWN_SERVER_ERROR, str(e))
                    yield from self.roll_back_reassignment(tp, previous)
            else:
                out[tp] = (Errors.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")
        return out

    # -- the reassignment procedure ----------------------------------------------------------------------------------
    def on_partition_reassignment(self, tp: TopicPartition, reassignment: ReplicaAssignment) -> Proc[None]:
        """KafkaController.onPartitionReassignment (phases U, A, B)."""
        rsm, tdm = self.replica_state_machine, self.topic_deletion_manager
        # While a reassignment is in progress, deletion is not allowed
        yield from tdm.mark_topic_ineligible_for_deletion({tp.topic}, "topic reassignment in progress")
        if self.ctx.partition_leadership_info(tp) is None:
            yield from self.reassign_never_led_partition(tp, reassignment)
            return
        started = tp not in self.ctx.partitions_being_reassigned
        yield from self.update_current_reassignment(tp, reassignment)
        if started and reassignment.is_being_reassigned:
            yield StateChange(ReassignmentProgress(tp, "Started", reassignment.target_replicas))
        adding = reassignment.adding_replicas
        removing = reassignment.removing_replicas
        if not (yield from self.is_reassignment_complete(tp, reassignment)):
            # A1. Send LeaderAndIsr request to every replica in ORS + TRS (with the new RS, AR and RR).
            yield from self.update_leader_epoch_and_send_request(tp, reassignment)
            # A2. replicas in AR -> NewReplica
            yield from self.start_new_replicas_for_reassigned_partition(tp, adding)
        else:
            # B1. replicas in AR -> OnlineReplica
            yield from rsm.handle_state_changes([PartitionAndReplica(tp, r) for r in adding], OnlineReplica)
            # B2. Set RS = TRS, AR = [], RR = [] in memory.
            completed = ReplicaAssignment(reassignment.target_replicas)
            self.ctx.update_partition_full_replica_assignment(tp, completed)
            # B3. a new leader if the current one is not in TRS or dead, else bump the leader epoch
            yield from self.move_reassigned_partition_leader_if_required(tp, completed)
            # B4. replicas in RR -> Offline (force those replicas out of isr)
            # B5. replicas in RR -> NonExistentReplica (force those replicas to be deleted)
            yield from self.stop_removed_replicas_of_reassigned_partition(tp, removing)
            # B6. Update ZK with RS = TRS, AR = [], RR = [].
            yield from self.update_replica_assignment_for_partition(tp, completed)
            # B7. Remove the ISR reassign listener and maybe update the /admin/reassign_partitions path in ZK
            yield from self.remove_partition_from_reassigning_partitions(tp, completed)
            # B8. resend the update metadata request to every broker
            yield from self.client.send_update_metadata_request(self.ctx.live_or_shutting_down_broker_ids(), (tp,))
            if reassignment.is_being_reassigned:
                yield StateChange(ReassignmentProgress(tp, "Completed", completed.replicas))
            elif not started:
                # a reassignment in progress reverted (AlterPartitionReassignments' null target, which
                # maybeBuildReassignment makes reassignTo(origin)): its adding replicas were stopped and deleted in U3
                yield StateChange(ReassignmentProgress(tp, "Cancelled", completed.replicas))
            # signal delete topic thread if reassignment for some partitions belonging to topics being deleted completed
            yield from tdm.resume_deletion_for_topics({tp.topic})

    def reassign_never_led_partition(self, tp: TopicPartition, reassignment: ReplicaAssignment) -> Proc[None]:
        """kactor's own, not in Kafka 2.6: the reassignment of a partition that has never had a leader (no state
        znode: created while all its replicas were offline, still NewPartition).

        Kafka 2.6 runs phase U, then A1's updateLeaderEpoch fails ("leaderAndIsr path is empty"), leaving the topic
        znode with adding/removing replicas, an adding replica without a replica state, and a topic that can never be
        deleted. Such a partition holds no data anywhere, so there is nothing to move: RS := TRS at once (topic znode
        then context), the removed replicas are stopped and dropped, the added ones go New → (partition
        NewPartition → OnlinePartition, elected among the live target replicas as at creation) → Online. If no
        target replica is live the partition stays NewPartition and comes online when one registers
        (onBrokerStartup's triggerOnlinePartitionStateChange), as a new partition does."""
        c = self.client
        rsm, psm = self.replica_state_machine, self.partition_state_machine
        started = tp not in self.ctx.partitions_being_reassigned
        current = self.ctx.partition_full_replica_assignment(tp)
        target = ReplicaAssignment(reassignment.target_replicas)
        if started and reassignment.is_being_reassigned:
            yield StateChange(ReassignmentProgress(tp, "Started", target.replicas))
        log.info("Partition %s being reassigned from %s to %s has never had a leader: applying the target replicas "
                 "directly", tp, list(current.replicas), list(target.replicas))
        if current != target:
            yield from self.update_replica_assignment_for_partition(tp, target)
            self.ctx.update_partition_full_replica_assignment(tp, target)
        yield from self.stop_removed_replicas_of_reassigned_partition(
            tp, [r for r in current.replicas if r not in target.replicas])
        added = [PartitionAndReplica(tp, r) for r in target.replicas
                 if PartitionAndReplica(tp, r) not in self.ctx.replica_states]
        yield from rsm.handle_state_changes(added, NewReplica)
        yield from psm.handle_state_changes([tp], OnlinePartition, OfflinePartitionLeaderElectionStrategy(False))
        yield from rsm.handle_state_changes(added, OnlineReplica)
        c.unregister_node_handler(paths.TopicPartitionStateZNode.path(tp))
        yield from self.maybe_remove_from_zk_reassignment(
            lambda p, replicas: p == tp and tuple(replicas) == target.replicas)
        self.ctx.partitions_being_reassigned.discard(tp)
        yield from c.send_update_metadata_request(self.ctx.live_or_shutting_down_broker_ids(), (tp,))
        yield StateChange(ReassignmentProgress(tp, "Completed", target.replicas))
        yield from self.topic_deletion_manager.resume_deletion_for_topics({tp.topic})

    def roll_back_reassignment(self, tp: TopicPartition, previous: ReplicaAssignment) -> Proc[None]:
        """kactor's own, not in Kafka 2.6 (which leaves a failed reassignment half-applied): after a reassignment
        step failed, restore the assignment it started from, in ZooKeeper (fenced) and in the context, so no
        adding/removing replicas outlive it. Replicas the attempt added are stopped and dropped. Every replica of
        the assignment left in force gets a replica state (NewReplica for those the attempt dropped or never
        started), so the context stays consistent even when the rollback's own write fails: the partition then
        stays reassigning, to be resumed by a target broker's startup or the next controller. A
        ControllerMovedError propagates (the next controller reads the topic znode afresh)."""
        c = self.client
        ctx = self.ctx
        current = ctx.partition_full_replica_assignment(tp)
        try:
            if current != previous:
                log.info("Rolling back the reassignment of partition %s: %s -> %s", tp, current, previous)
                yield from self.update_replica_assignment_for_partition(tp, previous)
                ctx.update_partition_full_replica_assignment(tp, previous)
                yield from self.stop_removed_replicas_of_reassigned_partition(
                    tp, [r for r in current.replicas if r not in previous.replicas
                         and PartitionAndReplica(tp, r) in ctx.replica_states])
        except GeneratorExit:
            raise
        except ControllerMovedError:
            raise
        except Exception as e:
            log.error("Failed to roll back the reassignment of partition %s: %s", tp, e, exc_info=True)
        in_force = ctx.partition_full_replica_assignment(tp)
        yield from self.replica_state_machine.handle_state_changes(
            [PartitionAndReplica(tp, r) for r in in_force.replicas
             if PartitionAndReplica(tp, r) not in ctx.replica_states], NewReplica)
        if in_force.is_being_reassigned:
            ctx.partitions_being_reassigned.add(tp)
            c.register_node_handler(partition_reassignment_isr_change_handler(tp))
        else:
            c.unregister_node_handler(paths.TopicPartitionStateZNode.path(tp))
            ctx.partitions_being_reassigned.discard(tp)
            yield from self.topic_deletion_manager.resume_deletion_for_topics({tp.topic})

    def update_current_reassignment(self, tp: TopicPartition, reassignment: ReplicaAssignment) -> Proc[None]:
        """updateCurrentReassignment: ZooKeeper before memory (U1, U2); stop replicas no longer needed (U3)."""
        current = self.ctx.partition_full_replica_assignment(tp)
        if current != reassignment:
            log.debug("Updating assignment of partition %s from %s to %s", tp, current, reassignment)
            # U1. Update assignment state in zookeeper
            yield from self.update_replica_assignment_for_partition(tp, reassignment)
            # U2. Update assignment state in memory
            self.ctx.update_partition_full_replica_assignment(tp, reassignment)
            # U3. adding replicas of a replaced reassignment may be eligible for immediate removal
            unneeded = [r for r in current.replicas if r not in reassignment.replicas]
            if unneeded:
                yield from self.fence_unneeded_replicas(tp, reassignment, unneeded)
                yield from self.stop_removed_replicas_of_reassigned_partition(tp, unneeded)
        self.client.register_node_handler(partition_reassignment_isr_change_handler(tp))
        self.ctx.partitions_being_reassigned.add(tp)

    def fence_unneeded_replicas(self, tp: TopicPartition, reassignment: ReplicaAssignment,
                                unneeded: Iterable[int]) -> Proc[None]:
        """kactor's own, not in Kafka 2.6: before U3 stops the replicas a cancelled (or replaced) reassignment no
        longer needs, bump the leader epoch (LeaderAndIsr to the replicas that stay) when none of them is in the ISR.

        Their StopReplica carries the partition's leader epoch (KIP-570), and a broker stops a replica only for an
        epoch above the one it has (2.6's ReplicaManager.stopReplicas; later Kafka accepts an equal one). An adding
        replica has the epoch of phase A1's LeaderAndIsr, and the OfflineReplica transition bumps the epoch only when
        it takes a replica out of the ISR: for adding replicas that never caught up, Kafka 2.6 sends StopReplica at
        that same epoch, their brokers ignore it ("matches the current leader epoch") and the cancelled move's log
        stays on them, its fetcher fenced. With the bump first, their StopReplica (delete=true) goes through and the
        logs are deleted (docs/kafka-2.6-departures.md). A leader among the unneeded replicas, or one offline, is left
        to the OfflineReplica transition and B3, which elect and bump as 2.6 does."""
        info = self.ctx.partition_leadership_info(tp)
        if info is None:
            return
        leader_and_isr = info.leader_and_isr
        if any(r in leader_and_isr.isr for r in unneeded):
            return  # OfflineReplica takes it out of the ISR with a new leader epoch before the deleting StopReplica
        if leader_and_isr.leader in reassignment.replicas and self.ctx.is_replica_online(leader_and_isr.leader, tp):
            yield from self.update_leader_epoch_and_send_request(tp, reassignment)

    def unregister_partition_reassignment_isr_change_handlers(self) -> None:
        """unregisterPartitionReassignmentIsrChangeHandlers"""
        for tp in self.ctx.partitions_being_reassigned:
            self.client.unregister_node_handler(paths.TopicPartitionStateZNode.path(tp))

    def is_reassignment_complete(self, tp: TopicPartition, assignment: ReplicaAssignment) -> Proc[bool]:
        """isReassignmentComplete: not being reassigned, or TRS ⊆ ISR as read from ZooKeeper (the read arms the
        partition's ISR-change watch)."""
        if not assignment.is_being_reassigned:
            return True
        states = yield from self.zk_client.get_topic_partition_states((tp,))
        info = states.get(tp)
        return info is not None and set(assignment.target_replicas) <= set(info.leader_and_isr.isr)

    def move_reassigned_partition_leader_if_required(self, tp: TopicPartition,
                                                     new_assignment: ReplicaAssignment) -> Proc[None]:
        """moveReassignedPartitionLeaderIfRequired (B3)."""
        psm = self.partition_state_machine
        info = self.ctx.partition_leadership_info(tp)
        current_leader = info.leader_and_isr.leader if info is not None else -1
        replicas = new_assignment.replicas
        if current_leader not in replicas:
            log.info("Leader %d for partition %s being reassigned, is not in the new list of replicas %s. Re-electing "
                     "leader", current_leader, tp, list(replicas))
            yield from psm.handle_state_changes([tp], OnlinePartition, ReassignPartitionLeaderElectionStrategy())
        elif self.ctx.is_replica_online(current_leader, tp):
            log.info("Leader %d for partition %s being reassigned, is already in the new list of replicas %s and is "
                     "alive", current_leader, tp, list(replicas))
            yield from self.update_leader_epoch_and_send_request(tp, new_assignment)
        else:
            log.info("Leader %d for partition %s being reassigned, is already in the new list of replicas %s but is "
                     "dead", current_leader, tp, list(replicas))
            yield from psm.handle_state_changes([tp], OnlinePartition, ReassignPartitionLeaderElectionStrategy())

    def stop_removed_replicas_of_reassigned_partition(self, tp: TopicPartition,
                                                      removed: Iterable[int]) -> Proc[None]:
        """stopRemovedReplicasOfReassignedPartition (B4, B5, U3): Offline → DeletionStarted → DeletionSuccessful →
        NonExistent, without waiting for the StopReplica responses."""
        rsm = self.replica_state_machine
        replicas = [PartitionAndReplica(tp, r) for r in removed]
        if not replicas:
            return
        yield from rsm.handle_state_changes(replicas, OfflineReplica)
        yield from rsm.handle_state_changes(replicas, ReplicaDeletionStarted)
        yield from rsm.handle_state_changes(replicas, ReplicaDeletionSuccessful)
        yield from rsm.handle_state_changes(replicas, NonExistentReplica)

    def update_replica_assignment_for_partition(self, tp: TopicPartition, assignment: ReplicaAssignment) -> Proc[None]:
        """updateReplicaAssignmentForPartition: write the topic znode with this partition's new assignment (fenced)."""
        topic_assignment = self.ctx.partition_full_replica_assignment_for_topic(tp.topic)
        topic_assignment[tp] = assignment
        r = yield from self.zk_client.set_topic_assignment_raw(tp.topic, topic_assignment, self.ctx.epoch_zk_version)
        if r.code == OK:
            log.info("Successfully updated assignment of partition %s to %s", tp, assignment)
        elif r.code == NONODE:
            raise IllegalStateError(f"Failed to update assignment for {tp} since the topic has no current assignment")
        else:
            raise KeeperError(r.code, paths.TopicZNode.path(tp.topic))

    def start_new_replicas_for_reassigned_partition(self, tp: TopicPartition, new_replicas: Iterable[int]
                                                    ) -> Proc[None]:
        """startNewReplicasForReassignedPartition (A2): AR → NewReplica (LeaderAndIsr isNew=true to each)."""
        yield from self.replica_state_machine.handle_state_changes(
            [PartitionAndReplica(tp, r) for r in new_replicas], NewReplica)

    def update_leader_epoch_and_send_request(self, tp: TopicPartition, assignment: ReplicaAssignment) -> Proc[None]:
        """updateLeaderEpochAndSendRequest (A1, B3): bump the leader epoch, LeaderAndIsr to RS (isNew=false)."""
        batch = self.broker_request_batch
        updated = yield from self.update_leader_epoch(tp)
        if updated is None:
            log.error("Failed to send LeaderAndIsr request with new replica assignment %s to leader for partition "
                      "being reassigned %s", assignment, tp)
            return
        try:
            batch.new_batch()
            batch.add_leader_and_isr_request_for_brokers(assignment.replicas, tp, updated, assignment, False)
            yield from batch.send_requests_to_brokers(self.ctx.epoch)
        except IllegalStateError as e:
            yield from self.client.handle_illegal_state(e)

    def update_leader_epoch(self, tp: TopicPartition) -> Proc[LeaderIsrAndControllerEpoch | None]:
        """updateLeaderEpoch: same leader and ISR, epoch + 1, conditional write (retried on BADVERSION); aborted if a
        newer controller wrote the state; IllegalStateError if the state znode is missing."""
        zk = self.zk_client
        ctx = self.ctx
        while True:
            states = yield from zk.get_topic_partition_states((tp,))
            info = states.get(tp)
            if info is None:
                raise IllegalStateError(f"Cannot update leader epoch for partition {tp} as leaderAndIsr path is empty. "
                                        "This could mean we somehow tried to reassign a partition that doesn't exist")
            if info.controller_epoch > ctx.epoch:
                raise StateChangeFailedError(
                    "Leader and isr path written by another controller. This probably means the current controller "
                    f"with epoch {ctx.epoch} went through a soft failure and another controller was elected with "
                    f"epoch {info.controller_epoch}. Aborting state change by this controller")
            new_lai = info.leader_and_isr.new_epoch_and_zk_version()
            result = yield from zk.update_leader_and_isr({tp: new_lai}, ctx.epoch, ctx.epoch_zk_version)
            outcome = result.finished_partitions.get(tp)
            if outcome is None:
                continue  # BADVERSION: re-read and retry
            if isinstance(outcome, Exception):
                raise outcome
            updated = LeaderIsrAndControllerEpoch(outcome, ctx.epoch)
            ctx.put_partition_leadership_info(tp, updated)
            log.info("Updated leader epoch for partition %s to %d", tp, outcome.leader_epoch)
            return updated

    def remove_partition_from_reassigning_partitions(self, tp: TopicPartition,
                                                     assignment: ReplicaAssignment) -> Proc[None]:
        """removePartitionFromReassigningPartitions (B7)."""
        if tp not in self.ctx.partitions_being_reassigned:
            raise IllegalStateError("Cannot remove a reassigning partition because it is not present in memory")
        self.client.unregister_node_handler(paths.TopicPartitionStateZNode.path(tp))
        yield from self.maybe_remove_from_zk_reassignment(
            lambda p, replicas: p == tp and tuple(replicas) == tuple(assignment.replicas))
        self.ctx.partitions_being_reassigned.discard(tp)

    def remove_deleted_topic(self, topic: str) -> Proc[None]:
        """The reassignments of a topic being deleted end with it. Kafka 2.6's processTopicDeletion marks a topic with
        a reassignment in progress ineligible *before* queueing it, which marks nothing (markTopicIneligibleForDeletion
        only halts queued topics), so the deletion goes ahead and the partition's entry stays in
        /admin/reassign_partitions until a later controller skips it as UNKNOWN_TOPIC_OR_PARTITION — no reassignment
        completes meanwhile (kactor chaos seed 2: a partition reassigned 20 ms before its topic's deletion). kactor
        removes the entries, and their ISR watches, when the topic's znodes are deleted
        (docs/kafka-2.6-departures.md)."""
        gone = {tp for tp in self.ctx.partitions_being_reassigned if tp.topic == topic}
        if not gone:
            return
        for tp in gone:
            self.client.unregister_node_handler(paths.TopicPartitionStateZNode.path(tp))
        yield from self.maybe_remove_from_zk_reassignment(lambda p, _replicas: p.topic == topic)
        self.ctx.partitions_being_reassigned -= gone

    # -- /admin/reassign_partitions ----------------------------------------------------------------------------------
    def maybe_remove_from_zk_reassignment(self, should_remove: Callable[[TopicPartition, tuple[int, ...]], bool]
                                          ) -> Proc[None]:
        """maybeRemoveFromZkReassignment: rewrite /admin/reassign_partitions without the matching partitions; delete
        it (fenced) when it becomes empty and enqueue ZkPartitionReassignment to re-arm its creation watch."""
        zk = self.zk_client
        if not (yield from zk.reassign_partitions_in_progress()):
            return
        current = yield from zk.get_partition_reassignment()
        removing = {tp for tp, replicas in current.items() if should_remove(tp, replicas)}
        remaining = {tp: replicas for tp, replicas in current.items() if tp not in removing}
        log.info("Removing partitions %s from the list of reassigned partitions in zookeeper", sorted(removing))
        if not remaining:
            log.info("No more partitions need to be reassigned. Deleting zk path %s", paths.ReassignPartitionsZNode)
            yield from zk.delete_partition_reassignment(self.ctx.epoch_zk_version)
            # Ensure we detect future reassignments
            yield Enqueue(ev.ZkPartitionReassignment())
        elif removing:
            yield from zk.set_or_create_partition_reassignment(remaining, self.ctx.epoch_zk_version)
