"""Controller events (Kafka 2.6 `kafka.controller.ControllerEvent` subclasses) and `ControllerState`.

Every trigger of the controller — a ZooKeeper watch, a session change, a broker response, an admin request, a timer —
becomes one of these values and is processed, one at a time, by `core.controller.kafka_controller.KafkaController`.
Names follow KafkaController.scala (2.6); callbacks are not part of the values: the reply of an event that has one
(ControlledShutdown, ReplicaLeaderElection, ApiPartitionReassignment, ListPartitionReassignments) is the return value
of ``KafkaController.process``.
"""

from __future__ import annotations

import enum

from messages.common import Errors, ReplicaAssignment, TopicPartition
from messages.registry import message, wire_enum
from messages.requests import LeaderAndIsrResponse, PartitionError, UpdateMetadataResponse


@wire_enum
class ControllerState(enum.IntEnum):
    """kafka.controller.ControllerState (2.6): the state the event thread is in while processing an event."""

    Idle = 0
    ControllerChange = 1
    BrokerChange = 2
    TopicChange = 3
    TopicDeletion = 4
    AlterPartitionReassignment = 5
    AutoLeaderBalance = 6
    ManualLeaderBalance = 7
    ControlledShutdown = 8
    IsrChange = 9
    LeaderAndIsrResponseReceived = 10
    LogDirChange = 11
    ControllerShutdown = 12
    UncleanLeaderElectionEnable = 13
    TopicUncleanLeaderElectionEnable = 14
    ListPartitionReassignment = 15
    UpdateMetadataResponseReceived = 16

    @property
    def rate_and_time_metric_name(self) -> str | None:
        """Kafka's ``kafka.controller:type=ControllerStats,name=<this>`` timer of the state (None: no timer)."""
        return _RATE_AND_TIME.get(self)


_RATE_AND_TIME: dict[ControllerState, str] = {
    ControllerState.ControllerChange: "ControllerChangeRateAndTimeMs",
    ControllerState.BrokerChange: "LeaderElectionRateAndTimeMs",
    ControllerState.TopicChange: "TopicChangeRateAndTimeMs",
    ControllerState.TopicDeletion: "TopicDeletionRateAndTimeMs",
    ControllerState.AlterPartitionReassignment: "PartitionReassignmentRateAndTimeMs",
    ControllerState.AutoLeaderBalance: "AutoLeaderBalanceRateAndTimeMs",
    ControllerState.ManualLeaderBalance: "ManualLeaderBalanceRateAndTimeMs",
    ControllerState.ControlledShutdown: "ControlledShutdownRateAndTimeMs",
    ControllerState.IsrChange: "IsrChangeRateAndTimeMs",
    ControllerState.LeaderAndIsrResponseReceived: "LeaderAndIsrResponseReceivedRateAndTimeMs",
    ControllerState.LogDirChange: "LogDirChangeRateAndTimeMs",
    ControllerState.ControllerShutdown: "ControllerShutdownRateAndTimeMs",
    ControllerState.UncleanLeaderElectionEnable: "UncleanLeaderElectionEnableRateAndTimeMs",
    ControllerState.TopicUncleanLeaderElectionEnable: "TopicUncleanLeaderElectionEnableRateAndTimeMs",
    ControllerState.ListPartitionReassignment: "ListPartitionReassignmentRateAndTimeMs",
}

# kafka.common.ElectionType / kafka.controller.ElectionTrigger names
PREFERRED = "PREFERRED"
UNCLEAN = "UNCLEAN"
ZK_TRIGGERED = "ZkTriggered"
AUTO_TRIGGERED = "AutoTriggered"
ADMIN_CLIENT_TRIGGERED = "AdminClientTriggered"


# -- controller election / session ---------------------------------------------------------------------------------

@message
class Startup:
    """The controller module started: register the /controller handler and elect()."""


@message
class ControllerChange:
    """/controller was created or its data changed: maybeResign()."""


@message
class Reelect:
    """/controller was deleted: maybeResign(); elect()."""


@message
class RegisterBrokerAndReelect:
    """A new ZooKeeper session after expiry: re-register /brokers/ids/<id>, then Reelect."""


@message
class Expire:
    """The ZooKeeper session expired (beforeInitializingSession): resign."""


@message
class ShutdownEventThread:
    """Stops the event thread; never processed by KafkaController.process (logged if it gets there)."""


# -- brokers and topics --------------------------------------------------------------------------------------------

@message
class BrokerChange:
    """Children of /brokers/ids changed."""


@message
class BrokerModifications:
    """Data of /brokers/ids/<broker_id> changed."""

    broker_id: int


@message
class TopicChange:
    """Children of /brokers/topics changed."""


@message
class PartitionModifications:
    """Data of /brokers/topics/<topic> changed (partitions added, or a reassignment written)."""

    topic: str


@message
class TopicDeletion:
    """Children of /admin/delete_topics changed."""


@message
class TopicDeletionStopReplicaResponseReceived:
    """A StopReplica(delete=true) response for partitions of topics whose deletion started."""

    replica_id: int
    request_error: Errors
    partition_errors: tuple[PartitionError, ...]


# -- reassignment --------------------------------------------------------------------------------------------------

@message
class ZkPartitionReassignment:
    """/admin/reassign_partitions was created (also enqueued by the controller after deleting it)."""


@message
class ApiPartitionReassignment:
    """AlterPartitionReassignments: per partition a target replica list, or None to cancel."""

    reassignments: tuple[tuple[TopicPartition, tuple[int, ...] | None], ...]


@message
class ListPartitionReassignments:
    """ListPartitionReassignments: the given partitions, or None for every reassigning partition."""

    partitions: tuple[TopicPartition, ...] | None = None


@message
class PartitionReassignmentIsrChange:
    """The state znode of a reassigning partition changed (its ISR may now contain the target replicas)."""

    topic_partition: TopicPartition


# -- notifications -------------------------------------------------------------------------------------------------

@message
class IsrChangeNotification:
    """Children of /isr_change_notification changed."""


@message
class LogDirEventNotification:
    """Children of /log_dir_event_notification changed."""


# -- leader elections ----------------------------------------------------------------------------------------------

@message
class ReplicaLeaderElection:
    """A preferred/unclean election: from /admin/preferred_replica_election (partitions None, ZkTriggered),
    the ElectLeaders API (AdminClientTriggered) or the auto rebalance (AutoTriggered)."""

    partitions: tuple[TopicPartition, ...] | None = None
    election_type: str = PREFERRED
    trigger: str = ZK_TRIGGERED


@message
class AutoPreferredReplicaLeaderElection:
    """The auto-leader-rebalance timer fired."""


@message
class UncleanLeaderElectionEnable:
    """unclean.leader.election.enable was turned on as a dynamic broker default."""


@message
class TopicUncleanLeaderElectionEnable:
    """unclean.leader.election.enable was turned on for ``topic``."""

    topic: str


# -- broker requests and responses ---------------------------------------------------------------------------------

@message
class ControlledShutdown:
    """A ControlledShutdown request from ``broker_id`` (-1 = unknown broker epoch)."""

    broker_id: int
    broker_epoch: int = -1


@message
class LeaderAndIsrResponseReceived:
    response: LeaderAndIsrResponse
    broker_id: int


@message
class UpdateMetadataResponseReceived:
    response: UpdateMetadataResponse
    broker_id: int


# -- replies -------------------------------------------------------------------------------------------------------

@message
class ReplicaElectionResult:
    """One partition's result of a ReplicaLeaderElection (Kafka's Either[ApiError, Int]): leader, or an error."""

    topic_partition: TopicPartition
    error: Errors
    leader: int = -1
    message: str = ""


@message
class PartitionReassignmentResult:
    """One partition's result of an ApiPartitionReassignment (Kafka's ApiError)."""

    topic_partition: TopicPartition
    error: Errors
    message: str = ""


@message
class AlterReassignmentsReply:
    """The reply to ApiPartitionReassignment: a top-level error (NOT_CONTROLLER) or one result per partition."""

    error: Errors
    results: tuple[PartitionReassignmentResult, ...] = ()


@message
class ListReassignmentsReply:
    """The reply to ListPartitionReassignments: a top-level error or the reassigning partitions' assignments."""

    error: Errors
    reassignments: tuple[tuple[TopicPartition, ReplicaAssignment], ...] = ()


ControllerEvent = (
    Startup | ControllerChange | Reelect | RegisterBrokerAndReelect | Expire | ShutdownEventThread
    | BrokerChange | BrokerModifications | TopicChange | PartitionModifications | TopicDeletion
    | TopicDeletionStopReplicaResponseReceived | ZkPartitionReassignment | ApiPartitionReassignment
    | ListPartitionReassignments | PartitionReassignmentIsrChange | IsrChangeNotification | LogDirEventNotification
    | ReplicaLeaderElection | AutoPreferredReplicaLeaderElection | UncleanLeaderElectionEnable
    | TopicUncleanLeaderElectionEnable | ControlledShutdown | LeaderAndIsrResponseReceived
    | UpdateMetadataResponseReceived
)

# ControllerEvent.state for every event type (names of ControllerState members)
CONTROLLER_STATE_OF: dict[type, str] = {
    Startup: "ControllerChange",
    ControllerChange: "ControllerChange",
    Reelect: "ControllerChange",
    RegisterBrokerAndReelect: "ControllerChange",
    Expire: "ControllerChange",
    ShutdownEventThread: "ControllerShutdown",
    BrokerChange: "BrokerChange",
    BrokerModifications: "BrokerChange",
    TopicChange: "TopicChange",
    PartitionModifications: "TopicChange",
    TopicDeletion: "TopicDeletion",
    TopicDeletionStopReplicaResponseReceived: "TopicDeletion",
    ZkPartitionReassignment: "AlterPartitionReassignment",
    ApiPartitionReassignment: "AlterPartitionReassignment",
    PartitionReassignmentIsrChange: "AlterPartitionReassignment",
    ListPartitionReassignments: "ListPartitionReassignment",
    IsrChangeNotification: "IsrChange",
    LogDirEventNotification: "LogDirChange",
    ReplicaLeaderElection: "ManualLeaderBalance",
    AutoPreferredReplicaLeaderElection: "AutoLeaderBalance",
    UncleanLeaderElectionEnable: "UncleanLeaderElectionEnable",
    TopicUncleanLeaderElectionEnable: "TopicUncleanLeaderElectionEnable",
    ControlledShutdown: "ControlledShutdown",
    LeaderAndIsrResponseReceived: "LeaderAndIsrResponseReceived",
    UpdateMetadataResponseReceived: "UpdateMetadataResponseReceived",
}

CONTROLLER_EVENT_TYPES: tuple[type, ...] = tuple(CONTROLLER_STATE_OF)
