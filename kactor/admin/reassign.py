"""``kafka-reassign-partitions.sh --zookeeper``: Kafka 2.6's ``ReassignPartitionsCommand`` legacy (ZooKeeper) path.

--generate proposes a placement for whole topics on a broker list; --execute writes /admin/reassign_partitions
(refused while one is pending); --verify reports each partition as complete / still in progress. JSON formats and
messages follow Kafka's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kazoo.exceptions import NodeExistsError

from messages.common import TopicPartition
from zk_bridge.admin import AdminCommandFailedException, AdminOperationException
from zk_bridge.admin.admin_zk import RACK_AWARE_DISABLED, RACK_AWARE_ENFORCED, AdminZkClient
from zk_bridge.admin.assignment import BrokerMetadata, assign_replicas_to_brokers, duplicates

Out = Callable[[str], None]
ANY_LOG_DIR = "any"
EXISTING_ASSIGNMENT_MESSAGE = "There is an existing assignment running."
DEFAULT_WAIT_TIMEOUT_S = 600.0


# -- JSON ----------------------------------------------------------------------------------------------------------
def _load_json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as e:
        raise AdminOperationException(f"The {what} is not valid JSON: {e}") from None


def _version(js: dict[str, Any]) -> int:
    version = js.get("version", 1)
    if version != 1:
        raise AdminOperationException(f"Not supported version field value {version}")
    return 1


def parse_topics_data(text: str) -> list[str]:
    """ReassignPartitionsCommand.parseTopicsData: ``{"topics":[{"topic":"foo"}],"version":1}`` → ["foo"]."""
    js = _load_json(text, "topics-to-move file")
    if not isinstance(js, dict):
        raise AdminOperationException("The topics-to-move JSON must be an object with a \"topics\" list")
    _version(js)
    items = js.get("topics", [])
    if not isinstance(items, list) or not all(isinstance(i, dict) and isinstance(i.get("topic"), str)
                                              for i in items):
        raise AdminOperationException('"topics" must be a list of {"topic": "<name>"} objects')
    return [i["topic"] for i in items]


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise AdminOperationException(f"{what} must be an integer, got {json.dumps(value)}")
    return value


def parse_partition_reassignment_data(text: str) -> tuple[list[tuple[TopicPartition, list[int]]],
                                                          dict[tuple[TopicPartition, int], str]]:
    """ReassignPartitionsCommand.parsePartitionReassignmentData (no de-duplication, so it can be checked):
    the (partition, replicas) list in file order and the non-"any" log dirs per (partition, replica)."""
    js = _load_json(text, "reassignment file")
    if not isinstance(js, dict):
        raise AdminOperationException("The reassignment JSON must be an object with a \"partitions\" list")
    _version(js)
    items = js.get("partitions", [])
    if not isinstance(items, list):
        raise AdminOperationException('"partitions" must be a list')
    parts: list[tuple[TopicPartition, list[int]]] = []
    log_dirs: dict[tuple[TopicPartition, int], str] = {}
    for item in items:
        if not isinstance(item, dict):
            raise AdminOperationException(f"Each partition entry must be an object, got {json.dumps(item)}")
        for key in ("topic", "partition", "replicas"):
            if key not in item:
                raise AdminOperationException(f"Partition entry {json.dumps(item)} has no \"{key}\"")
        topic = item["topic"]
        if not isinstance(topic, str):
            raise AdminOperationException(f"topic must be a string, got {json.dumps(topic)}")
        tp = TopicPartition(topic, _int(item["partition"], "partition"))
        if not isinstance(item["replicas"], list):
            raise AdminOperationException(f"replicas of {tp} must be a list of broker ids")
        replicas = [_int(r, f"replica of {tp}") for r in item["replicas"]]
        dirs = item.get("log_dirs", [ANY_LOG_DIR] * len(replicas))
        if not isinstance(dirs, list) or len(dirs) != len(replicas):
            raise AdminCommandFailedException(f"Size of replicas list {replicas} is different from size of log dirs "
                                              f"list {dirs} for partition {tp}")
        parts.append((tp, replicas))
        log_dirs.update({(tp, r): d for r, d in zip(replicas, dirs, strict=True) if d != ANY_LOG_DIR})
    return parts, log_dirs


def parse_execute_assignment(text: str) -> dict[TopicPartition, list[int]]:
    """The ZooKeeper path's executeAssignment: parseExecuteAssignmentArgs, then log dirs other than "any" refused
    (AlterReplicaLogDirs goes to the brokers: --bootstrap-server)."""
    parts, log_dirs = parse_execute_assignment_args(text)
    if log_dirs:
        raise AdminCommandFailedException("bootstrap-server needs to be provided when replica reassignments are "
                                          "present.")
    return parts


def parse_execute_assignment_args(text: str) -> tuple[dict[TopicPartition, list[int]],
                                                      dict[tuple[TopicPartition, int], str]]:
    """ReassignPartitionsCommand.parseExecuteAssignmentArgs: the partitions' target replicas and the log dir of
    each (partition, broker) replica whose ``log_dirs`` entry is not "any"."""
    parts, log_dirs = parse_partition_reassignment_data(text)
    if not parts:
        raise AdminCommandFailedException("Partition reassignment list cannot be empty")
    if any(not replicas for _, replicas in parts):
        raise AdminCommandFailedException("Partition replica list cannot be empty")
    dup_parts = duplicates([tp for tp, _ in parts])
    if dup_parts:
        raise AdminCommandFailedException("Partition reassignment contains duplicate topic partitions: "
                                          + ",".join(map(str, dup_parts)))
    dup_entries = [(tp, duplicates(r)) for tp, r in parts if duplicates(r)]
    if dup_entries:
        msg = ". ".join(f"{tp} contains multiple entries for {','.join(map(str, d))}" for tp, d in dup_entries)
        raise AdminCommandFailedException(f"Partition replica lists may not contain duplicate entries: {msg}")
    return dict(parts), log_dirs


def format_as_reassignment_json(assignment: Mapping[TopicPartition, Sequence[int]]) -> str:
    """ReassignPartitionsCommand.formatAsReassignmentJson: compact JSON, partitions sorted, ``log_dirs`` all "any"."""
    return json.dumps({"version": 1, "partitions": [
        {"topic": tp.topic, "partition": tp.partition, "replicas": list(replicas),
         "log_dirs": [ANY_LOG_DIR] * len(replicas)}
        for tp, replicas in sorted(assignment.items())]}, separators=(",", ":"))


# -- generate ------------------------------------------------------------------------------------------------------
def parse_broker_list(text: str) -> list[int]:
    """The --broker-list value ``0,1,2`` (ReassignPartitionsCommand.parseGenerateAssignmentArgs)."""
    try:
        brokers = [int(b) for b in text.split(",")]
    except ValueError:
        raise AdminCommandFailedException(f"Invalid --broker-list {text!r}: expected comma-separated broker ids "
                                          "such as 0,1,2") from None
    dup = duplicates(brokers)
    if dup:
        raise AdminCommandFailedException("Broker list contains duplicate entries: " + ",".join(map(str, dup)))
    return brokers


def calculate_assignment(current: Mapping[TopicPartition, Sequence[int]], brokers: Sequence[BrokerMetadata],
                         fixed_start_index: int = -1) -> dict[TopicPartition, list[int]]:
    """ReassignPartitionsCommand.calculateAssignment: a fresh placement per topic (same partition count and
    replication factor as partition's first entry)."""
    by_topic: dict[str, dict[TopicPartition, Sequence[int]]] = {}
    for tp, replicas in current.items():
        by_topic.setdefault(tp.topic, {})[tp] = replicas
    proposed: dict[TopicPartition, list[int]] = {}
    for topic, assignment in sorted(by_topic.items()):
        rf = len(assignment[min(assignment)])
        placed = assign_replicas_to_brokers(brokers, len(assignment), rf, fixed_start_index)
        proposed.update({TopicPartition(topic, p): r for p, r in placed.items()})
    return proposed


def generate_assignment(admin: AdminZkClient, out: Out, topics_json: str, broker_list: str,
                        enable_rack_awareness: bool = True,
                        fixed_start_index: int = -1) -> tuple[dict[TopicPartition, list[int]],
                                                               dict[TopicPartition, list[int]]]:
    """ReassignPartitionsCommand.generateAssignment (ZooKeeper): prints the current and the proposed JSON.
    Writes nothing."""
    brokers_to_use = parse_broker_list(broker_list)
    topics = parse_topics_data(topics_json)
    dup = duplicates(topics)
    if dup:
        raise AdminCommandFailedException("List of topics to reassign contains duplicate entries: "
                                          + ",".join(map(str, dup)))
    missing = [t for t in topics if not admin.topic_exists(t)]
    if missing:
        raise AdminCommandFailedException(f"Topic{'s' if len(missing) > 1 else ''} not found: {', '.join(missing)}")
    current = admin.get_replica_assignment_for_topics(topics)
    metas = admin.get_broker_metadatas(RACK_AWARE_ENFORCED if enable_rack_awareness else RACK_AWARE_DISABLED,
                                       brokers_to_use)
    unknown = sorted(set(brokers_to_use) - {m.id for m in metas})
    if unknown:
        out(f"WARNING: brokers not registered, left out of the proposal: {','.join(map(str, unknown))}")
    proposed = calculate_assignment(current, metas, fixed_start_index)
    out("Current partition replica assignment")
    out(format_as_reassignment_json(current))
    out("")
    out("Proposed partition reassignment configuration")
    out(format_as_reassignment_json(proposed))
    return proposed, current


# -- execute -------------------------------------------------------------------------------------------------------
def verify_replicas_and_brokers(admin: AdminZkClient, proposed: Mapping[TopicPartition, Sequence[int]]) -> None:
    """ReassignPartitionsCommand.verifyReplicasAndBrokersInAssignment."""
    existing = admin.get_replica_assignment_for_topics({tp.topic for tp in proposed})
    missing = sorted(tp for tp in proposed if tp not in existing)
    if missing:
        raise AdminCommandFailedException("The proposed assignment contains non-existent partitions: "
                                          + ",".join(map(str, missing)))
    registered = set(admin.get_sorted_broker_list())
    unknown = sorted({b for replicas in proposed.values() for b in replicas} - registered)
    if unknown:
        raise AdminCommandFailedException("The proposed assignment contains non-existent brokerIDs: "
                                          + ",".join(map(str, unknown)))


def execute_assignment(admin: AdminZkClient, out: Out, reassignment_json: str) -> dict[TopicPartition, list[int]]:
    """ReassignPartitionsCommand.executeAssignment (ZooKeeper): validate, print the current assignment for
    rollback, then create /admin/reassign_partitions."""
    proposed = parse_execute_assignment(reassignment_json)
    verify_replicas_and_brokers(admin, proposed)
    if admin.reassign_partitions_in_progress():
        raise AdminCommandFailedException(EXISTING_ASSIGNMENT_MESSAGE)
    current = admin.get_replica_assignment_for_topics({tp.topic for tp in proposed})
    out("Current partition replica assignment")
    out("")
    out(format_as_reassignment_json({tp: r for tp, r in current.items() if tp in proposed}))
    out("")
    out("Save this to use as the --reassignment-json-file option during rollback")
    try:
        admin.create_partition_reassignment(proposed)
    except NodeExistsError:  # another tool won the race
        raise AdminCommandFailedException(EXISTING_ASSIGNMENT_MESSAGE) from None
    parts = sorted(proposed)
    out(f"Successfully started partition reassignment{'' if len(parts) == 1 else 's'} for "
        + ",".join(map(str, parts)))
    return proposed


# -- verify --------------------------------------------------------------------------------------------------------
def partition_states(admin: AdminZkClient, targets: Mapping[TopicPartition, Sequence[int]]
                     ) -> dict[TopicPartition, tuple[list[int], list[int], bool]]:
    """ReassignPartitionsCommand.findPartitionReassignmentStates (ZooKeeper), stricter: a partition is still in
    progress while it is in /admin/reassign_partitions OR its topic znode holds adding/removing replicas for it.
    Value: (current replicas, target replicas, done)."""
    pending = admin.get_partition_reassignment()
    states: dict[TopicPartition, tuple[list[int], list[int], bool]] = {}
    for topic in sorted({tp.topic for tp in targets}):
        assignment = admin.get_full_replica_assignment(topic)
        for tp in sorted(t for t in targets if t.topic == topic):
            ra = assignment.get(tp.partition)
            current = list(ra.replicas) if ra else []
            reassigning = ra is not None and ra.is_being_reassigned
            states[tp] = (current, list(targets[tp]), tp not in pending and not reassigning)
    return states


def states_to_lines(states: Mapping[TopicPartition, tuple[list[int], list[int], bool]]) -> list[str]:
    """ReassignPartitionsCommand.partitionReassignmentStatesToString."""
    lines = ["Status of partition reassignment:"]
    for tp in sorted(states):
        current, target, done = states[tp]
        if not done:
            lines.append(f"Reassignment of partition {tp} is still in progress.")
        elif current == target:
            lines.append(f"Reassignment of partition {tp} is complete.")
        else:
            lines.append(f"There is no active reassignment of partition {tp}, but replica set is "
                         f"{','.join(map(str, current))} rather than {','.join(map(str, target))}.")
    return lines


def verify_assignment(admin: AdminZkClient, out: Out, reassignment_json: str, *, wait: bool = False,
                      timeout_s: float = DEFAULT_WAIT_TIMEOUT_S, poll_s: float = 0.5,
                      progress: Out | None = None) -> bool:
    """ReassignPartitionsCommand.verifyAssignment (ZooKeeper). Returns True when every listed partition is done.
    With ``wait``, polls (printing a progress line whenever the count changes) until done or ``timeout_s``."""
    parts, log_dirs = parse_partition_reassignment_data(reassignment_json)
    if log_dirs:
        raise AdminCommandFailedException("bootstrap-server needs to be provided when replica reassignments are "
                                          "present.")
    targets = dict(parts)
    states = partition_states(admin, targets)
    if wait:
        deadline = time.monotonic() + timeout_s
        start = time.monotonic()
        last_done = -1
        progress = progress or out
        while True:
            n_done = sum(1 for s in states.values() if s[2])
            if n_done != last_done:
                progress(f"Waiting for reassignment: {n_done}/{len(states)} partitions done "
                         f"({time.monotonic() - start:.1f} s elapsed)")
                last_done = n_done
            if n_done == len(states):
                break
            if time.monotonic() >= deadline:
                for line in states_to_lines(states):
                    out(line)
                left = sorted(tp for tp, s in states.items() if not s[2])
                raise AdminCommandFailedException(
                    f"Timed out after {timeout_s:g} s waiting for the reassignment of "
                    f"{len(left)} partition{'' if len(left) == 1 else 's'}: {','.join(map(str, left))}")
            time.sleep(poll_s)
            states = partition_states(admin, targets)
    for line in states_to_lines(states):
        out(line)
    return all(s[2] for s in states.values())
