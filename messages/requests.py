"""Controller → broker requests and their responses: LeaderAndIsr, UpdateMetadata, StopReplica, ControlledShutdown.

Fields follow Kafka's JSON message specs (LeaderAndIsrRequest v4, UpdateMetadataRequest v6, StopReplicaRequest v3,
ControlledShutdownRequest v3 — the versions an IBP 2.6 controller sends), in snake_case.
"""

from __future__ import annotations

from messages.common import Broker, Errors, TopicPartition
from messages.registry import message


@message
class LeaderAndIsrPartitionState:
    topic_partition: TopicPartition
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()
    is_new: bool = False


@message
class LeaderAndIsrRequest:
    controller_id: int
    controller_epoch: int
    broker_epoch: int
    partition_states: tuple[LeaderAndIsrPartitionState, ...]
    live_leaders: tuple[Broker, ...]
    principal: str = "User:ANONYMOUS"  # the sender's KafkaPrincipal (inbound: RequestContext's), for the authorizer


@message
class PartitionError:
    topic_partition: TopicPartition
    error: Errors


@message
class LeaderAndIsrResponse:
    error: Errors
    partition_errors: tuple[PartitionError, ...] = ()


@message
class UpdateMetadataPartitionState:
    topic_partition: TopicPartition
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()


@message
class UpdateMetadataRequest:
    controller_id: int
    controller_epoch: int
    broker_epoch: int
    partition_states: tuple[UpdateMetadataPartitionState, ...]
    live_brokers: tuple[Broker, ...]
    principal: str = "User:ANONYMOUS"  # the sender's KafkaPrincipal (inbound: RequestContext's), for the authorizer


@message
class UpdateMetadataResponse:
    error: Errors


@message
class StopReplicaPartitionState:
    topic_partition: TopicPartition
    leader_epoch: int
    delete_partition: bool


@message
class StopReplicaRequest:
    controller_id: int
    controller_epoch: int
    broker_epoch: int
    partition_states: tuple[StopReplicaPartitionState, ...]
    principal: str = "User:ANONYMOUS"  # the sender's KafkaPrincipal (inbound: RequestContext's), for the authorizer


@message
class StopReplicaResponse:
    error: Errors
    partition_errors: tuple[PartitionError, ...] = ()


@message
class ControlledShutdownRequest:
    broker_id: int
    broker_epoch: int
    principal: str = "User:ANONYMOUS"  # the sender's KafkaPrincipal (inbound: RequestContext's), for the authorizer


@message
class ControlledShutdownResponse:
    error: Errors
    remaining_partitions: tuple[TopicPartition, ...] = ()


ControlRequest = LeaderAndIsrRequest | UpdateMetadataRequest | StopReplicaRequest
ControlResponse = LeaderAndIsrResponse | UpdateMetadataResponse | StopReplicaResponse
