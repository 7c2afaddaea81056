"""ControllerBrokerRequestBatch (kafka.controller.AbstractControllerBrokerRequestBatch), for IBP 2.6:
LeaderAndIsr v4, UpdateMetadata v6, StopReplica v3 (one request per broker, per-partition leader epoch and delete
flag). Reference §7.3.

The batch collects per-broker entries; `send_requests_to_brokers` is a procedure yielding one `SendRequest` effect
per request, in the order LeaderAndIsr → UpdateMetadata → StopReplica, only to live-or-shutting-down brokers.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from core.controller.context import ControllerContext
from core.controller.errors import IllegalStateError
from core.effects import Proc, SendRequest
from messages.common import (
    EPOCH_DURING_DELETE,
    INITIAL_LEADER_EPOCH,
    INITIAL_ZK_VERSION,
    LEADER_DURING_DELETE,
    NO_EPOCH,
    Errors,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicPartition,
)
from messages.requests import (
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    StopReplicaPartitionState,
    StopReplicaRequest,
    StopReplicaResponse,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
)

log = logging.getLogger("kactor.controller.request_batch")
state_change_log = logging.getLogger("kactor.state.change")


class ControllerBrokerRequestBatch:
    """Mirrors ControllerBrokerRequestBatch (the IBP 2.6 request versions)."""

    def __init__(self, controller_id: int, ctx: ControllerContext) -> None:
        self.controller_id = controller_id
        self.ctx = ctx
        self.leader_and_isr_request_map: dict[int, dict[TopicPartition, LeaderAndIsrPartitionState]] = {}
        self.stop_replica_request_map: dict[int, dict[TopicPartition, StopReplicaPartitionState]] = {}
        self.update_metadata_request_broker_set: dict[int, None] = {}  # an insertion-ordered set
        self.update_metadata_request_partition_info_map: dict[TopicPartition, UpdateMetadataPartitionState] = {}

    def new_batch(self) -> None:
        """newBatch: IllegalStateError if the previous batch still holds unsent entries."""
        if self.leader_and_isr_request_map:
            raise IllegalStateError("Controller to broker state change requests batch is not empty while creating a "
                                    f"new one. Some LeaderAndIsr state changes {self.leader_and_isr_request_map} "
                                    "might be lost ")
        if self.stop_replica_request_map:
            raise IllegalStateError("Controller to broker state change requests batch is not empty while creating a "
                                    f"new one. Some StopReplica state changes {self.stop_replica_request_map} "
                                    "might be lost ")
        if self.update_metadata_request_broker_set:
            raise IllegalStateError("Controller to broker state change requests batch is not empty while creating a "
                                    "new one. Some UpdateMetadata state changes to brokers "
                                    f"{list(self.update_metadata_request_broker_set)} with partition info "
                                    f"{self.update_metadata_request_partition_info_map} might be lost ")

    def clear(self) -> None:
        self.leader_and_isr_request_map.clear()
        self.stop_replica_request_map.clear()
        self.update_metadata_request_broker_set.clear()
        self.update_metadata_request_partition_info_map.clear()

    def is_empty(self) -> bool:
        return not (self.leader_and_isr_request_map or self.stop_replica_request_map
                    or self.update_metadata_request_broker_set)

    # -- adding ------------------------------------------------------------------------------------------------------
    def add_leader_and_isr_request_for_brokers(self, broker_ids: Iterable[int], tp: TopicPartition,
                                               leader_isr_and_controller_epoch: LeaderIsrAndControllerEpoch,
                                               replica_assignment: ReplicaAssignment, is_new: bool) -> None:
        """addLeaderAndIsrRequestForBrokers: isNew is sticky within the batch; always adds an UpdateMetadata for tp to
        every live-or-shutting-down broker."""
        lai = leader_isr_and_controller_epoch.leader_and_isr
        for broker_id in broker_ids:
            if broker_id < 0:
                continue
            result = self.leader_and_isr_request_map.setdefault(broker_id, {})
            existing = result.get(tp)
            already_new = existing is not None and existing.is_new
            result[tp] = LeaderAndIsrPartitionState(
                topic_partition=tp,
                controller_epoch=leader_isr_and_controller_epoch.controller_epoch,
                leader=lai.leader,
                leader_epoch=lai.leader_epoch,
                isr=lai.isr,
                zk_version=lai.zk_version,
                replicas=replica_assignment.replicas,
                adding_replicas=replica_assignment.adding_replicas,
                removing_replicas=replica_assignment.removing_replicas,
                is_new=is_new or already_new,
            )
        self.add_update_metadata_request_for_brokers(self.ctx.live_or_shutting_down_broker_ids_view(), (tp,))

    def add_stop_replica_request_for_brokers(self, broker_ids: Iterable[int], tp: TopicPartition,
                                             delete_partition: bool) -> None:
        """addStopReplicaRequestForBrokers: leader epoch −2 if the topic is queued for deletion, else the cached leader
        epoch, else −1; deletePartition is sticky within the batch."""
        if self.ctx.is_topic_queued_up_for_deletion(tp.topic):
            leader_epoch = EPOCH_DURING_DELETE
        else:
            info = self.ctx.partition_leadership_info(tp)
            leader_epoch = info.leader_and_isr.leader_epoch if info is not None else NO_EPOCH
        for broker_id in broker_ids:
            if broker_id < 0:
                continue
            result = self.stop_replica_request_map.setdefault(broker_id, {})
            existing = result.get(tp)
            already_delete = existing is not None and existing.delete_partition
            result[tp] = StopReplicaPartitionState(tp, leader_epoch, already_delete or delete_partition)

    def add_update_metadata_request_for_brokers(self, broker_ids: Iterable[int],
                                                partitions: Iterable[TopicPartition] = ()) -> None:
        """addUpdateMetadataRequestForBrokers: partitions without a leader record are skipped; partitions of topics
        queued for deletion carry leader −2, epoch 0, zkVersion 0 (ISR kept)."""
        broker_set = self.update_metadata_request_broker_set
        for b in broker_ids:
            if b >= 0:
                broker_set[b] = None
        ctx = self.ctx
        for tp in partitions:
            info = ctx.partition_leadership_info(tp)
            if info is None:
                if log.isEnabledFor(logging.INFO):
                    log.info("Leader not yet assigned for partition %s. Skip sending UpdateMetadataRequest.", tp)
                continue
            lai = info.leader_and_isr
            replicas = ctx.partition_replica_assignment(tp)
            offline = tuple(r for r in replicas if not ctx.is_replica_online(r, tp))
            if tp.topic in ctx.topics_to_be_deleted:  # LeaderAndIsr.duringDelete(isr)
                leader, leader_epoch, zk_version = LEADER_DURING_DELETE, INITIAL_LEADER_EPOCH, INITIAL_ZK_VERSION
            else:
                leader, leader_epoch, zk_version = lai.leader, lai.leader_epoch, lai.zk_version
            self.update_metadata_request_partition_info_map[tp] = UpdateMetadataPartitionState(
                topic_partition=tp, controller_epoch=info.controller_epoch, leader=leader, leader_epoch=leader_epoch,
                isr=lai.isr, zk_version=zk_version, replicas=replicas, offline_replicas=offline)

    # -- sending -----------------------------------------------------------------------------------------------------
    def send_requests_to_brokers(self, controller_epoch: int) -> Proc[None]:
        """sendRequestsToBrokers: LeaderAndIsr, then UpdateMetadata, then StopReplica; each map is cleared once sent.
        A failure is logged with the unsent content and raised as IllegalStateError."""
        try:
            yield from self._send_leader_and_isr_request(controller_epoch)
            yield from self._send_update_metadata_requests(controller_epoch)
            yield from self._send_stop_replica_requests(controller_epoch)
        except GeneratorExit:
            raise
        except Exception as e:
            if self.leader_and_isr_request_map:
                log.error("Haven't been able to send leader and isr requests, current state of the map is %s. "
                          "Exception message: %s", self.leader_and_isr_request_map, e)
            if self.update_metadata_request_broker_set:
                log.error("Haven't been able to send metadata update requests to brokers %s, current state of the "
                          "partition info is %s. Exception message: %s", list(self.update_metadata_request_broker_set),
                          self.update_metadata_request_partition_info_map, e)
            if self.stop_replica_request_map:
                log.error("Haven't been able to send stop replica requests, current state of the map is %s. "
                          "Exception message: %s", self.stop_replica_request_map, e)
            raise IllegalStateError(e) from e

    def _send_leader_and_isr_request(self, controller_epoch: int) -> Proc[None]:
        ctx = self.ctx
        for broker, states in self.leader_and_isr_request_map.items():
            if not ctx.is_live_or_shutting_down(broker):
                continue
            leader_ids = {s.leader for s in states.values()}
            leaders = tuple(b for b in ctx.live_or_shutting_down_brokers() if b.id in leader_ids)
            if state_change_log.isEnabledFor(logging.INFO):
                n_leaders = sum(1 for s in states.values() if s.leader == broker)
                state_change_log.info("Sending LeaderAndIsr request to broker %d with %d become-leader and %d "
                                      "become-follower partitions", broker, n_leaders, len(states) - n_leaders)
            yield SendRequest(broker, LeaderAndIsrRequest(
                controller_id=self.controller_id, controller_epoch=controller_epoch,
                broker_epoch=ctx.live_broker_epoch(broker), partition_states=tuple(states.values()),
                live_leaders=leaders))
        self.leader_and_isr_request_map.clear()

    def _send_update_metadata_requests(self, controller_epoch: int) -> Proc[None]:
        ctx = self.ctx
        if state_change_log.isEnabledFor(logging.INFO) and self.update_metadata_request_broker_set:
            state_change_log.info("Sending UpdateMetadata request to brokers %s for %d partitions",
                                  list(self.update_metadata_request_broker_set),
                                  len(self.update_metadata_request_partition_info_map))
        partition_states = tuple(self.update_metadata_request_partition_info_map.values())
        live_brokers = tuple(ctx.live_or_shutting_down_brokers())
        for broker in self.update_metadata_request_broker_set:
            if not ctx.is_live_or_shutting_down(broker):
                continue
            yield SendRequest(broker, UpdateMetadataRequest(
                controller_id=self.controller_id, controller_epoch=controller_epoch,
                broker_epoch=ctx.live_broker_epoch(broker), partition_states=partition_states,
                live_brokers=live_brokers))
        self.update_metadata_request_broker_set.clear()
        self.update_metadata_request_partition_info_map.clear()

    def _send_stop_replica_requests(self, controller_epoch: int) -> Proc[None]:
        ctx = self.ctx
        for broker, states in self.stop_replica_request_map.items():
            if not ctx.is_live_or_shutting_down(broker):
                continue
            # v3 groups partitions by topic (StopReplicaTopicState); keep that order in the flat tuple.
            by_topic: dict[str, list[StopReplicaPartitionState]] = {}
            for tp, s in states.items():
                by_topic.setdefault(tp.topic, []).append(s)
            ordered = tuple(s for group in by_topic.values() for s in group)
            if state_change_log.isEnabledFor(logging.INFO):
                state_change_log.info("Sending StopReplica request for %d replicas to broker %d", len(states), broker)
            yield SendRequest(broker, StopReplicaRequest(
                controller_id=self.controller_id, controller_epoch=controller_epoch,
                broker_epoch=ctx.live_broker_epoch(broker), partition_states=ordered))
        self.stop_replica_request_map.clear()


def stop_replica_partition_errors_for_deleting_topics(
    ctx: ControllerContext, request: StopReplicaRequest, response: StopReplicaResponse
) -> dict[TopicPartition, Errors]:
    """The StopReplica response callback's filter (sendStopReplicaRequests.responseCallback): errors of partitions
    whose topic deletion has started and that were sent with deletePartition=true. Non-empty → the controller enqueues
    TopicDeletionStopReplicaResponseReceived(broker, response.error, these errors)."""
    deleted: Mapping[TopicPartition, bool] = {s.topic_partition: s.delete_partition for s in request.partition_states}
    return {pe.topic_partition: pe.error for pe in response.partition_errors
            if ctx.is_topic_deletion_in_progress(pe.topic_partition.topic) and deleted.get(pe.topic_partition, False)}
