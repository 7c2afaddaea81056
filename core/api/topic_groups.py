"""What many Kafka bodies share: partitions grouped under their topic, error codes read from a peer, and the
controller's requests' common parts (their header and topic states, their per-partition error answers).

Kafka's generated requests group partitions by topic (``topics[].partitions[]``) while kactor's internal messages
carry flat tuples of per-partition values that each name their ``TopicPartition``; these helpers go between the two,
keeping the order of first appearance (so a flat tuple already grouped by topic survives a round trip unchanged).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from messages.common import Errors, TopicPartition
from messages.requests import PartitionError

T = TypeVar("T")

_ERRORS: dict[int, Errors] = {int(e): e for e in Errors}


def error_of(code: int) -> Errors:
    """``Errors.forCode``: a code this broker does not know reads as UNKNOWN_SERVER_ERROR (Kafka logs and does the
    same), so an answer from a newer peer never fails to decode."""
    return _ERRORS.get(code, Errors.UNKNOWN_SERVER_ERROR)


def group_by_topic(items: Iterable[T], tp_of: Callable[[T], TopicPartition]) -> list[tuple[str, list[T]]]:
    """``items`` under their topics, topics in order of first appearance, items in their order within a topic."""
    groups: dict[str, list[T]] = {}
    for item in items:
        topic = tp_of(item).topic
        group = groups.get(topic)
        if group is None:
            groups[topic] = [item]
        else:
            group.append(item)
    return list(groups.items())


def topic_partition_of(state: Any) -> TopicPartition:
    return state.topic_partition


def control_request_to_wire(request: Any, state_to_wire: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
    """The part the controller's grouped requests share (LeaderAndIsr v2+, UpdateMetadata v5+, StopReplica v3):
    controller id and epoch, the receiver's broker epoch, ``topic_states[topic_name partition_states[...]]``."""
    return {
        "controller_id": request.controller_id, "controller_epoch": request.controller_epoch,
        "broker_epoch": request.broker_epoch,
        "topic_states": [{"topic_name": topic, "partition_states": [state_to_wire(s) for s in states]}
                         for topic, states in group_by_topic(request.partition_states, topic_partition_of)],
    }


def partition_errors_response_to_wire(version: int, response: Any) -> dict[str, Any]:
    """A LeaderAndIsr or StopReplica response: ``error_code`` + ``partition_errors[topic_name partition_index
    error_code]``, the same fields in every version of both APIs Kafka 2.6 serves."""
    return {"error_code": int(response.error), "partition_errors": [
        {"topic_name": e.topic_partition.topic, "partition_index": e.topic_partition.partition,
         "error_code": int(e.error)} for e in response.partition_errors]}


def partition_errors_response_from_wire(response_type: Callable[[Errors, tuple[PartitionError, ...]], T],
                                        body: dict[str, Any]) -> T:
    return response_type(error_of(body["error_code"]), tuple(
        PartitionError(TopicPartition(e["topic_name"], e["partition_index"]), error_of(e["error_code"]))
        for e in body["partition_errors"]))


def every_partition_failed(response_type: Callable[[Errors, tuple[PartitionError, ...]], T], request: Any,
                           error: int) -> T:
    """``getErrorResponse`` of LeaderAndIsr / StopReplica: the error at the top and for every partition."""
    e = error_of(error)
    return response_type(e, tuple(PartitionError(s.topic_partition, e) for s in request.partition_states))
