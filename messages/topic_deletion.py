"""Messages between the ControllerActor and the TopicDeletionActor (Kafka's TopicDeletionManager and the
DeletionClient it calls back).

Kafka's TopicDeletionManager runs synchronously inside a controller event. kactor keeps that: a controller procedure
yields a `DeletionStimulus` (one of the manager's public calls, with the facts of the topics involved) and waits for
the deletion actor's `TopicDeletionReply`, as it waits for ZooKeeper; no other controller event runs meanwhile. The
deletion actor decides, and each step it needs from the controller (a replica or partition state transition, a znode
delete, an UpdateMetadata) is a `DeletionInstruction` it waits on in turn (`ControllerInstructionRequest` /
`ControllerInstructionReply`). Replica states are core.controller.states.ReplicaState / PartitionState values
(registered enums, carried by name).
"""

from __future__ import annotations

from typing import Any

from messages.common import PartitionAndReplica, TopicPartition
from messages.registry import message

# -- facts the controller gives with each stimulus ---------------------------------------------------------------------


@message
class ReplicaFact:
    """One replica as the controller's context has it: its ReplicaState (NonExistentReplica if it has none) and
    isReplicaOnline."""

    replica: PartitionAndReplica
    state: Any
    online: bool


@message
class PartitionFacts:
    """One partition: its assigned replicas, each one's ReplicaState and isReplicaOnline, in assignment order."""

    partition: int
    replicas: tuple[int, ...]
    states: tuple[Any, ...]
    online: tuple[bool, ...]


@message
class TopicFacts:
    """A topic's partitions (partitionsForTopic) with every replica of their assignments (replicasForTopic)."""

    topic: str
    partitions: tuple[PartitionFacts, ...]


@message
class DeletionQueueChange:
    """How the deletion actor's queue (topicsToBeDeleted, topicsWithDeletionStarted, topicsIneligibleForDeletion)
    changed since it last told the controller: sent with every instruction and reply, so the controller's context
    shows the queue as it is when it carries out an instruction or resumes."""

    queued: tuple[str, ...] = ()
    dequeued: tuple[str, ...] = ()
    deletion_started: tuple[str, ...] = ()
    deletion_start_cleared: tuple[str, ...] = ()
    ineligible: tuple[str, ...] = ()
    eligible_again: tuple[str, ...] = ()


@message
class RaisedError:
    """An exception crossing between the two actors (ControllerMovedError, KeeperError, ...), by class name."""

    kind: str
    text: str
    code: str | None = None
    path: str | None = None


# -- the stimuli: TopicDeletionManager's public calls ---------------------------------------------------------------


@message
class InitTopicDeletion:
    """TopicDeletionManager.init (controller failover)."""

    topics_to_be_deleted: tuple[str, ...]
    topics_ineligible_for_deletion: tuple[str, ...]


@message
class TryTopicDeletion:
    """TopicDeletionManager.tryTopicDeletion (controller failover)."""


@message
class EnqueueTopicsForDeletion:
    """TopicDeletionManager.enqueueTopicsForDeletion (TopicDeletion event)."""

    topics: tuple[str, ...]


@message
class ResumeDeletionForTopics:
    """TopicDeletionManager.resumeDeletionForTopics (broker startup, reassignment completed)."""

    topics: tuple[str, ...]


@message
class FailReplicaDeletion:
    """TopicDeletionManager.failReplicaDeletion (StopReplica error, replicas gone offline)."""

    replicas: tuple[PartitionAndReplica, ...]


@message
class CompleteReplicaDeletion:
    """TopicDeletionManager.completeReplicaDeletion (StopReplica answered without error)."""

    replicas: tuple[PartitionAndReplica, ...]


@message
class MarkTopicIneligibleForDeletion:
    """TopicDeletionManager.markTopicIneligibleForDeletion (reassignment started)."""

    topics: tuple[str, ...]
    reason: str


@message
class DeletionStimulus:
    """What a controller procedure yields to call the deletion manager: ``call`` (one of the classes above), the
    facts of the queued topics and of those it names, and the controller epoch (a new epoch is a new controllership:
    the deletion actor starts from an empty queue)."""

    controller_epoch: int
    call: Any
    facts: tuple[TopicFacts, ...] = ()


# -- the instructions: what the deletion manager asks of the controller -----------------------------------------------


@message
class ReplicaStateChanges:
    """replicaStateMachine.handleStateChanges(replicas, target); answered with the ReplicaFacts of the replicas that
    are not in ``target`` after it (usually none: an invalid transition is logged and skipped)."""

    replicas: tuple[PartitionAndReplica, ...]
    target: Any


@message
class PartitionStateChanges:
    """partitionStateMachine.handleStateChanges(partitions, target); answered with None."""

    partitions: tuple[TopicPartition, ...]
    target: Any


@message
class MutePartitionModifications:
    """DeletionClient.mutePartitionModifications."""

    topic: str


@message
class DeleteTopic:
    """DeletionClient.deleteTopic (its znodes, epoch-fenced), then controllerContext.removeTopic."""

    topic: str


@message
class DeleteTopicDeletions:
    """DeletionClient.deleteTopicDeletions: the /admin/delete_topics/<t> markers (epoch-fenced)."""

    topics: tuple[str, ...]


@message
class SendMetadataUpdate:
    """DeletionClient.sendMetadataUpdate (UpdateMetadata to every live broker)."""

    partitions: tuple[TopicPartition, ...]


@message
class DeletionInstruction:
    """What the deletion manager yields to have the controller carry out ``op``; ``change``: its queue's change."""

    op: Any
    change: DeletionQueueChange


# -- on the wire between the two actors -----------------------------------------------------------------------------


@message
class TopicDeletionManagerInit:
    """Give the TopicDeletionActor its broker's configuration (sent by the ControllerActor on its ControllerInit)."""

    broker_id: int
    delete_topic_enable: bool


@message
class TopicDeletionRequest:
    """ControllerActor → TopicDeletionActor: run ``stimulus``; the controller's procedure waits for the reply."""

    request_id: int
    stimulus: DeletionStimulus
    reply_to: str


@message
class TopicDeletionReply:
    """TopicDeletionActor → ControllerActor: the stimulus is done (its queue's change), or the error it raised."""

    request_id: int
    change: DeletionQueueChange
    error: RaisedError | None = None


@message
class ControllerInstructionRequest:
    """TopicDeletionActor → ControllerActor: carry out ``instruction`` (served while the event waits)."""

    request_id: int
    instruction: DeletionInstruction
    reply_to: str


@message
class ControllerInstructionReply:
    """ControllerActor → TopicDeletionActor: the instruction's result, or the error it raised."""

    request_id: int
    result: Any = None
    error: RaisedError | None = None
