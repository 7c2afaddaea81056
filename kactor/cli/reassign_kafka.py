"""``kafka-reassign-partitions.sh --bootstrap-server``: Kafka 2.6.3's ReassignPartitionsCommand on the admin API.

``--generate`` proposes a placement from Metadata (the brokers and their racks, the topics' replicas); ``--execute``
prints the current assignment for rollback and sends AlterPartitionReassignments to the controller, refusing while
another reassignment runs (unless ``--additional``); with ``--throttle N`` it first sets
``leader|follower.replication.throttled.rate=N`` on every broker that sends or receives a moving replica and
``leader|follower.replication.throttled.replicas`` on the topics (``calculateMoveMap`` and its leader / follower
throttles), through IncrementalAlterConfigs. ``--verify`` compares ListPartitionReassignments and Metadata with the
file and, once nothing is moving, removes every throttle (unless ``--preserve-throttles``); ``--list`` prints the
ongoing reassignments; ``--cancel`` sends AlterPartitionReassignments with no target replicas for the file's partitions
that are moving. librdkafka sends neither reassignment request: kactor.cli.kafka_wire does.

A plan's ``log_dirs`` (one per replica, "any" for no preference) are replica moves between a broker's log dirs:
``--execute`` sends AlterReplicaLogDirs to each broker after the partition reassignment started, again every 100 ms
while a broker answers REPLICA_NOT_AVAILABLE (the replica is not there yet), until ``--timeout`` (executeMoves);
``--verify`` asks each broker's DescribeLogDirs where the replica and its ``-future`` log are (findLogDirMoveStates).

Errors are printed as the tool prints them: a TerseReassignmentFailureException's message alone, anything else as
"Error: <message>", both on stdout, exit 1.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from core.quota.replication_quota_manager import ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND
from kactor.admin import reassign
from kactor.cli import CliError, kafka_wire
from kactor.cli.client_properties import Servers
from kactor.cli.java_errors import java_exception_text
from kactor.cli.support import read_text_file
from kactor.kafka_clients import KafkaClientError
from messages.common import TopicPartition
from zk_bridge.admin import AdminCommandFailedException, AdminError, AdminOperationException
from zk_bridge.admin.assignment import BrokerMetadata

ALTER = (45, 0)
LIST = (46, 0)
ALTER_REPLICA_LOG_DIRS = (34, 1)  # what Kafka 2.6's admin client sends
DESCRIBE_LOG_DIRS = (35, 1)
REPLICA_NOT_AVAILABLE = 9
MOVE_START_TIMEOUT_S = 10.0  # --timeout's default, 10000 ms (it is given in ms): how long --execute retries to start
# the log-dir moves
MOVE_RETRY_S = 0.1
TIMEOUT_MS = 30000
BROKER_LEADER_THROTTLE = "leader.replication.throttled.rate"
BROKER_FOLLOWER_THROTTLE = "follower.replication.throttled.rate"
BROKER_LOG_DIR_THROTTLE = ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND
BROKER_THROTTLES = (BROKER_LEADER_THROTTLE, BROKER_FOLLOWER_THROTTLE, BROKER_LOG_DIR_THROTTLE)
TOPIC_LEADER_THROTTLE = "leader.replication.throttled.replicas"
TOPIC_FOLLOWER_THROTTLE = "follower.replication.throttled.replicas"
TOPIC_THROTTLES = (TOPIC_LEADER_THROTTLE, TOPIC_FOLLOWER_THROTTLE)
CANNOT_EXECUTE_BECAUSE_OF_EXISTING = ("Cannot execute because there is an existing partition assignment.  Use "
                                      "--additional to override this and create a new partition assignment in "
                                      "addition to the existing one.")
RUN_VERIFY_PERIODICALLY = ("Warning: You must run --verify periodically, until the reassignment completes, to ensure "
                           "the throttle is removed.")
ACTIONS = ("generate", "execute", "verify", "cancel", "list")
REQUIRED = {"verify": ("reassignment_json_file",), "generate": ("topics_to_move_json_file", "broker_list"),
            "execute": ("reassignment_json_file",), "cancel": ("reassignment_json_file",), "list": ()}
PERMITTED = {"verify": ("preserve_throttles",), "generate": ("broker_list", "disable_rack_aware"),
             "execute": ("additional", "throttle", "replica_alter_log_dirs_throttle", "timeout"),
             "cancel": ("preserve_throttles", "timeout"), "list": ()}
# every option a user may give with --bootstrap-server, by dest (the action flags aside)
OPTIONS = ("reassignment_json_file", "topics_to_move_json_file", "broker_list", "disable_rack_aware", "additional",
           "throttle", "replica_alter_log_dirs_throttle", "preserve_throttles", "timeout", "wait")


class TerseFailureError(Exception):
    """ReassignPartitionsCommand.TerseReassignmentFailureException: the message alone, exit 1."""


@attrs.frozen(slots=True)
class Ongoing:
    """One ListPartitionReassignments entry (PartitionReassignment)."""

    replicas: tuple[int, ...]
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()


# -- the pure part -------------------------------------------------------------------------------------------------
def check_options(args: argparse.Namespace, given: Callable[[str], bool]) -> str:
    """ReassignPartitionsCommand.validateAndParseArgs for --bootstrap-server: the one action, its required options,
    and no option another action owns. Each violation is CommandLineUtils.printUsageAndDie's message (exit 1)."""
    actions = [a for a in ACTIONS if getattr(args, a)]
    if len(actions) != 1:
        raise CliError("Command must include exactly one action: --generate, --execute, --verify, --cancel, --list")
    action = actions[0]
    for dest in REQUIRED[action]:
        if not given(dest):
            raise CliError(f'Missing required argument "[{dest.replace("_", "-")}]"')
    for dest in OPTIONS:
        if given(dest) and dest not in REQUIRED[action] and dest not in PERMITTED[action]:
            raise CliError(f'Option "[{dest.replace("_", "-")}]" can\'t be used with action "[{action}]"')
    return action


def reassignments_to_lines(current: Mapping[TopicPartition, Ongoing]) -> list[str]:
    """ReassignPartitionsCommand.curReassignmentsToString."""
    if not current:
        return ["No partition reassignments found."]
    lines = ["Current partition reassignments:"]
    for tp in sorted(current):
        r = current[tp]
        lines.append(f"{tp}: replicas: {','.join(map(str, r.replicas))}."
                     + (f" adding: {','.join(map(str, r.adding))}." if r.adding else "")
                     + (f" removing: {','.join(map(str, r.removing))}." if r.removing else ""))
    return lines


Replica = tuple[TopicPartition, int]  # TopicPartitionReplica: a partition's replica on a broker


def replica_text(replica: Replica) -> str:
    """TopicPartitionReplica.toString: ``topic-partition-broker``."""
    tp, broker = replica
    return f"{tp.topic}-{tp.partition}-{broker}"


def _replica_order(replica: Replica) -> tuple[str, int, int]:
    """compareTopicPartitionReplicas: by topic, partition, broker."""
    return replica[0].topic, replica[0].partition, replica[1]


def replica_move_lines(targets: Mapping[Replica, str],
                       found: Mapping[Replica, tuple[str | None, str | None]]) -> tuple[list[str], bool]:
    """findLogDirMoveStates + replicaMoveStatesToString: each replica move's state from where its broker holds the
    replica (current dir, future dir; None when not found), and whether every move is done."""
    lines, done = [], True
    for replica in sorted(targets, key=_replica_order):
        target = targets[replica]
        (tp, broker), (current, future) = replica, found.get(replica, (None, None))
        if current is None:
            lines.append(f"Partition {tp} is not found in any live log dir on broker {broker}. There is likely an "
                         "offline log directory on the broker.")
            done = False
        elif future is None:
            if current == target:
                lines.append(f"Reassignment of replica {replica_text(replica)} completed successfully.")
            else:
                lines.append(f"Partition {tp} on broker {broker} is not being moved from log dir {current} to "
                             f"{target}.")
        else:
            done = False
            if future == target:
                lines.append(f"Reassignment of replica {replica_text(replica)} is still in progress.")
            else:
                lines.append(f"Partition {tp} on broker {broker} is being moved to log dir {future} instead of "
                             f"{target}.")
    return lines, done


MoveMap = dict[str, dict[int, tuple[set[int], set[int]]]]  # topic -> partition -> (sources, destinations)


def calculate_move_map(current_reassignments: Mapping[TopicPartition, Ongoing],
                       proposed: Mapping[TopicPartition, Sequence[int]],
                       current_parts: Mapping[TopicPartition, Sequence[int]]) -> MoveMap:
    """ReassignPartitionsCommand.calculateMoveMap: per moving partition, the brokers that hold its data (sources)
    and those that will fetch it (destinations, minus the sources)."""
    moves: MoveMap = {}
    for tp, r in current_reassignments.items():
        sources, destinations = set(r.replicas), set(r.replicas) | set(r.adding)
        destinations -= set(r.removing)
        moves.setdefault(tp.topic, {})[tp.partition] = (sources, destinations)
    for tp, replicas in proposed.items():
        moves.setdefault(tp.topic, {})[tp.partition] = (set(), set(replicas))
    for topic, parts in moves.items():
        for p, (sources, destinations) in parts.items():
            sources.update(current_parts.get(TopicPartition(topic, p), ()))
            destinations -= sources
    return moves


def leader_throttles(moves: MoveMap) -> dict[str, str]:
    """calculateLeaderThrottles: ``partition:broker`` for every source, sorted as strings (Scala's TreeSet)."""
    return {topic: ",".join(sorted(f"{p}:{b}" for p, (sources, _) in parts.items() for b in sources))
            for topic, parts in moves.items()}


def follower_throttles(moves: MoveMap) -> dict[str, str]:
    """calculateFollowerThrottles: ``partition:broker`` for every destination that is not a source."""
    return {topic: ",".join(sorted(f"{p}:{b}" for p, (sources, dests) in parts.items() for b in dests
                                   if b not in sources))
            for topic, parts in moves.items()}


def reassigning_brokers(moves: MoveMap) -> set[int]:
    """calculateReassigningBrokers: every source and destination."""
    return {b for parts in moves.values() for sources, dests in parts.values() for b in sources | dests}


def reassignment_states(targets: Sequence[tuple[TopicPartition, Sequence[int]]],
                        current: Mapping[TopicPartition, Ongoing],
                        replicas_now: Callable[[TopicPartition], list[int]]
                        ) -> dict[TopicPartition, tuple[list[int], list[int], bool]]:
    """findPartitionReassignmentStates: a partition still moving is not done; otherwise its replicas now (none for
    a partition that does not exist) against the target."""
    states = {}
    for tp, target in targets:
        if tp in current:
            states[tp] = (list(current[tp].replicas), list(target), False)
        else:
            states[tp] = (replicas_now(tp), list(target), True)
    return states


def _plural(n: int, word: str) -> str:
    return word if n == 1 else word + "s"


def _set(items: Iterable[Any]) -> str:
    return ",".join(map(str, items))


# -- the cluster ---------------------------------------------------------------------------------------------------
class Cluster:
    """What the tool asks the brokers, through confluent-kafka's AdminClient and kactor.cli.kafka_wire."""

    def __init__(self, admin: Any, bootstrap: kafka_wire.Bootstrap, timeout_s: float) -> None:
        self.admin = admin
        self.bootstrap = bootstrap
        self.timeout_s = timeout_s

    def metadata(self) -> Any:
        return self.admin.list_topics(timeout=self.timeout_s)

    def brokers(self) -> dict[int, str | None]:
        """Broker id -> rack (DescribeCluster's nodes)."""
        meta = kafka_wire.metadata(self.bootstrap, self.timeout_s)
        return {b["node_id"]: b.get("rack") for b in meta["brokers"]}

    def assignment(self, topics: Iterable[str]) -> dict[TopicPartition, list[int]]:
        """getReplicaAssignmentForTopics: UnknownTopicOrPartitionException for a topic the cluster lacks."""
        meta = self.metadata()
        out: dict[TopicPartition, list[int]] = {}
        for topic in topics:
            info = meta.topics.get(topic)
            if info is None or info.error is not None:
                raise AdminOperationException(java_exception_text(3))
            for p in info.partitions.values():
                out[TopicPartition(topic, p.id)] = list(p.replicas)
        return out

    def list_reassignments(self, partitions: Iterable[TopicPartition] | None = None) -> dict[TopicPartition, Ongoing]:
        topics = None
        if partitions is not None:
            by_topic: dict[str, list[int]] = {}
            for tp in partitions:
                by_topic.setdefault(tp.topic, []).append(tp.partition)
            topics = [{"name": t, "partition_indexes": sorted(ps)} for t, ps in sorted(by_topic.items())]
        answer = kafka_wire.controller_request(self.bootstrap, *LIST, {"timeout_ms": TIMEOUT_MS, "topics": topics},
                                               self.timeout_s)
        if answer["error_code"]:
            raise AdminOperationException(java_exception_text(answer["error_code"], answer.get("error_message")))
        return {TopicPartition(t["name"], p["partition_index"]):
                Ongoing(tuple(p["replicas"]), tuple(p["adding_replicas"]), tuple(p["removing_replicas"]))
                for t in answer["topics"] for p in t["partitions"]}

    def alter(self, targets: Mapping[TopicPartition, Sequence[int] | None]) -> dict[TopicPartition, str]:
        """AlterPartitionReassignments (None cancels); each failed partition's message (Throwable.getMessage)."""
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for tp, replicas in sorted(targets.items()):
            by_topic.setdefault(tp.topic, []).append(
                {"partition_index": tp.partition, "replicas": None if replicas is None else list(replicas)})
        body = {"timeout_ms": TIMEOUT_MS, "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()]}
        answer = kafka_wire.controller_request(self.bootstrap, *ALTER, body, self.timeout_s)
        if answer["error_code"]:
            message = _message(answer["error_code"], answer.get("error_message"))
            return {tp: message for tp in targets}
        return {TopicPartition(t["name"], p["partition_index"]): _message(p["error_code"], p.get("error_message"))
                for t in answer["responses"] for p in t["partitions"] if p["error_code"]}

    def alter_replica_log_dirs(self, moves: Mapping[Replica, str]) -> dict[Replica, int]:
        """AdminClient.alterReplicaLogDirs: one AlterReplicaLogDirs per broker; each replica's error code."""
        by_broker: dict[int, dict[str, dict[str, list[int]]]] = {}
        for (tp, broker), log_dir in sorted(moves.items(), key=lambda m: _replica_order(m[0])):
            by_broker.setdefault(broker, {}).setdefault(log_dir, {}).setdefault(tp.topic, []).append(tp.partition)
        errors: dict[Replica, int] = {}
        for broker, dirs in sorted(by_broker.items()):
            body = {"dirs": [{"path": d, "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]}
                             for d, topics in dirs.items()]}
            answer = kafka_wire.node_request(self.bootstrap, broker, *ALTER_REPLICA_LOG_DIRS, body, self.timeout_s)
            for t in answer["results"]:
                for p in t["partitions"]:
                    errors[(TopicPartition(t["topic_name"], p["partition_index"]), broker)] = p["error_code"]
        return errors

    def describe_replica_log_dirs(self, replicas: Iterable[Replica]) -> dict[Replica, tuple[str | None, str | None]]:
        """AdminClient.describeReplicaLogDirs: DescribeLogDirs of each replica's broker for its partitions; the
        (current, future) dir holding each replica (None where there is none)."""
        by_broker: dict[int, list[TopicPartition]] = {}
        for tp, broker in replicas:
            by_broker.setdefault(broker, []).append(tp)
        found: dict[Replica, tuple[str | None, str | None]] = {}
        for broker, tps in sorted(by_broker.items()):
            topics: dict[str, list[int]] = {}
            for tp in tps:
                topics.setdefault(tp.topic, []).append(tp.partition)
            body = {"topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()]}
            answer = kafka_wire.node_request(self.bootstrap, broker, *DESCRIBE_LOG_DIRS, body, self.timeout_s)
            for d in answer["results"]:
                if d["error_code"]:
                    continue
                for t in d["topics"]:
                    for p in t["partitions"]:
                        replica = (TopicPartition(t["name"], p["partition_index"]), broker)
                        current, future = found.get(replica, (None, None))
                        found[replica] = (current, d["log_dir"]) if p["is_future_key"] else (d["log_dir"], future)
        return found

    def alter_configs(self, kind: str, changes: Mapping[str, Sequence[tuple[str, str | None]]]) -> None:
        """IncrementalAlterConfigs: SET a value, DELETE for None, per resource of ``kind`` (BROKER, TOPIC)."""
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import (
            AlterConfigOpType,
            ConfigEntry,
            ConfigResource,
            ResourceType,
        )

        resources = []
        for name, ops in changes.items():
            entries = [ConfigEntry(key, value, incremental_operation=AlterConfigOpType.SET if value is not None
                                   else AlterConfigOpType.DELETE) for key, value in ops]
            if entries:
                resources.append(ConfigResource(ResourceType[kind], name, incremental_configs=entries))
        # one call per broker resource: librdkafka sends a broker's configs to that broker, one per request
        batches = [[r] for r in resources] if kind == "BROKER" else [resources] if resources else []
        for batch in batches:
            for future in self.admin.incremental_alter_configs(batch, request_timeout=self.timeout_s).values():
                try:
                    future.result(self.timeout_s + 5)
                except KafkaException as e:
                    err = e.args[0]
                    text = err.str()
                    raise AdminOperationException(java_exception_text(
                        err.code(), None if text.startswith("Broker: ") else text)) from None


def _message(code: int, message: str | None) -> str:
    from kactor.cli.java_errors import JAVA_ERRORS

    return message if message is not None else (JAVA_ERRORS.get(code, ("", f"error {code}"))[1] or "")


# -- the actions ---------------------------------------------------------------------------------------------------
def generate(cluster: Cluster, out: Callable[[str], None], topics_json: str, broker_list: str,
             rack_aware: bool) -> None:
    """ReassignPartitionsCommand.generateAssignment (admin client)."""
    brokers_to_use = reassign.parse_broker_list(broker_list)
    topics = reassign.parse_topics_data(topics_json)
    dup = sorted({t for t in topics if topics.count(t) > 1})
    if dup:
        raise AdminCommandFailedException("List of topics to reassign contains duplicate entries: " + ",".join(dup))
    current = cluster.assignment(topics)
    racks = cluster.brokers()
    metas = [BrokerMetadata(b, racks[b] if rack_aware else None) for b in brokers_to_use if b in racks]
    if rack_aware and any(m.rack for m in metas) and not all(m.rack for m in metas):
        raise AdminOperationException("Not all brokers have rack information. Add --disable-rack-aware in "
                                      "command line to make replica assignment without rack information.")
    proposed = reassign.calculate_assignment(current, metas)
    out("Current partition replica assignment\n" + reassign.format_as_reassignment_json(current) + "\n")
    out("Proposed partition reassignment configuration\n" + reassign.format_as_reassignment_json(proposed))


def execute(cluster: Cluster, out: Callable[[str], None], reassignment_json: str, additional: bool,
            throttle: int, move_timeout_s: float = MOVE_START_TIMEOUT_S, log_dir_throttle: int = -1) -> None:
    """ReassignPartitionsCommand.executeAssignment (admin client), its log-dir moves last (executeMoves); with
    ``log_dir_throttle`` ≥ 0 every broker with a log-dir move gets that replica.alter.log.dirs.io.max.bytes.per.second
    (modifyLogDirThrottle)."""
    proposed, replica_moves = reassign.parse_execute_assignment_args(reassignment_json)
    current_reassignments = cluster.list_reassignments()
    if not additional and current_reassignments:
        raise TerseFailureError(CANNOT_EXECUTE_BECAUSE_OF_EXISTING)
    nodes = cluster.brokers()
    for broker in sorted({b for replicas in proposed.values() for b in replicas}):
        if broker not in nodes:
            raise AdminCommandFailedException(f"Unknown broker id {broker}")
    current_parts = {tp: r for tp, r in cluster.assignment({tp.topic for tp in proposed}).items() if tp in proposed}
    missing = [tp for tp in sorted(proposed) if tp not in current_parts]
    if missing:
        raise AdminOperationException(java_exception_text(3))
    out("Current partition replica assignment\n\n" + reassign.format_as_reassignment_json(current_parts)
        + "\n\nSave this to use as the --reassignment-json-file option during rollback")
    if throttle >= 0 or log_dir_throttle >= 0:
        out(RUN_VERIFY_PERIODICALLY)
    if throttle >= 0:
        moves = calculate_move_map(current_reassignments, proposed, current_parts)
        leaders, followers = leader_throttles(moves), follower_throttles(moves)
        cluster.alter_configs("TOPIC", {t: [(TOPIC_LEADER_THROTTLE, leaders[t]), (TOPIC_FOLLOWER_THROTTLE,
                                                                                  followers[t])]
                                        for t in sorted(moves)})
        cluster.alter_configs("BROKER", {str(b): [(BROKER_LEADER_THROTTLE, str(throttle)),
                                                  (BROKER_FOLLOWER_THROTTLE, str(throttle))]
                                         for b in sorted(reassigning_brokers(moves))})
        out(f"The inter-broker throttle limit was set to {throttle} B/s")
    if log_dir_throttle >= 0:
        moving_brokers = sorted({broker for _, broker in replica_moves})  # calculateMovingBrokers
        cluster.alter_configs("BROKER", {str(b): [(BROKER_LOG_DIR_THROTTLE, str(log_dir_throttle))]
                                         for b in moving_brokers})
        out(f"The replica-alter-dir throttle limit was set to {log_dir_throttle} B/s")
    errors = cluster.alter(proposed)
    if errors:
        raise TerseFailureError("Error reassigning partition(s):\n"
                                + "\n".join(f"{tp}: {errors[tp]}" for tp in sorted(errors)))
    parts = sorted(proposed)
    out(f"Successfully started {_plural(len(parts), 'partition reassignment')} for {_set(parts)}")
    if replica_moves:
        execute_moves(cluster, out, replica_moves, move_timeout_s)


def execute_moves(cluster: Cluster, out: Callable[[str], None], moves: Mapping[Replica, str], timeout_s: float,
                  sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> None:
    """ReassignPartitionsCommand.executeMoves: AlterReplicaLogDirs for the pending replicas until each is started;
    REPLICA_NOT_AVAILABLE (the replica is not on its broker yet) is asked again after 100 ms, until ``timeout_s``;
    any other error fails the command (AdminCommandFailedException "Failed to alter dir for ...")."""
    start = clock()
    pending = dict(moves)
    while True:
        errors = cluster.alter_replica_log_dirs(pending)
        failed = sorted((r for r, code in errors.items() if code not in (0, REPLICA_NOT_AVAILABLE)),
                        key=_replica_order)
        if failed:
            code = errors[failed[0]]
            raise AdminCommandFailedException(f"Failed to alter dir for {replica_text(failed[0])}: "
                                              f"{java_exception_text(code)}")
        completed = sorted((r for r in pending if errors.get(r) == 0), key=_replica_order)
        if completed:
            out(f"Successfully started {_plural(len(completed), 'log directory move')} for: "
                + ",".join(map(replica_text, completed)))
        for r in completed:
            del pending[r]
        if not pending:
            return
        if clock() >= start + timeout_s:
            left = sorted(pending, key=_replica_order)
            raise TerseFailureError(f"Timed out before {_plural(len(left), 'log directory move')} could be started "
                                    "for: " + ",".join(map(replica_text, left)))
        sleep(MOVE_RETRY_S)


def clear_all_throttles(cluster: Cluster, out: Callable[[str], None],
                        targets: Sequence[tuple[TopicPartition, Sequence[int]]]) -> None:
    """ReassignPartitionsCommand.clearAllThrottles: every live broker and every target replica's broker, every topic
    of the file."""
    brokers = sorted(set(cluster.brokers()) | {b for _, replicas in targets for b in replicas})
    out(f"Clearing broker-level throttles on {_plural(len(brokers), 'broker')} {_set(brokers)}")
    cluster.alter_configs("BROKER", {str(b): [(k, None) for k in BROKER_THROTTLES] for b in brokers})
    topics = sorted({tp.topic for tp, _ in targets})
    out(f"Clearing topic-level throttles on {_plural(len(topics), 'topic')} {_set(topics)}")
    cluster.alter_configs("TOPIC", {t: [(k, None) for k in TOPIC_THROTTLES] for t in topics})


def verify(cluster: Cluster, out: Callable[[str], None], reassignment_json: str, preserve_throttles: bool) -> bool:
    """ReassignPartitionsCommand.verifyAssignment (admin client): True when nothing moves any more — no partition
    reassignment, no replica between log dirs (verifyReplicaMoves)."""
    targets, moves = reassign.parse_partition_reassignment_data(reassignment_json)
    current = cluster.list_reassignments()
    meta = cluster.metadata()

    def replicas_now(tp: TopicPartition) -> list[int]:
        info = meta.topics.get(tp.topic)
        if info is None or info.error is not None or tp.partition not in info.partitions:
            return []
        return list(info.partitions[tp.partition].replicas)

    states = reassignment_states(targets, current, replicas_now)
    out("\n".join(reassign.states_to_lines(states)))
    moves_done = True
    if moves:
        lines, moves_done = replica_move_lines(moves, cluster.describe_replica_log_dirs(moves))
        out("\n".join(lines))
    if not current and moves_done and not preserve_throttles:
        clear_all_throttles(cluster, out, targets)
    return not current and moves_done


def cancel(cluster: Cluster, out: Callable[[str], None], reassignment_json: str, preserve_throttles: bool) -> None:
    """ReassignPartitionsCommand.cancelAssignment (admin client)."""
    targets, _ = reassign.parse_partition_reassignment_data(reassignment_json)
    moving = sorted(tp for tp, r in cluster.list_reassignments([tp for tp, _ in targets]).items()
                    if r.adding or r.removing)
    if moving:
        errors = cluster.alter({tp: None for tp in moving})
        if errors:
            raise TerseFailureError(f"Error cancelling {_plural(len(errors), 'partition reassignment')} for:\n"
                                    + "\n".join(f"{tp}: {errors[tp]}" for tp in sorted(errors)))
        out(f"Successfully cancelled {_plural(len(moving), 'partition reassignment')} for: {_set(moving)}")
    else:
        out("None of the specified partition reassignments are active.")
    out("None of the specified partition moves are active.")
    if not preserve_throttles:
        clear_all_throttles(cluster, out, targets)


def run(args: argparse.Namespace, servers: Servers, given: Callable[[str], bool]) -> int:
    """The --bootstrap-server form: Kafka's checks, then the action; failures printed as the tool prints them."""
    from confluent_kafka import KafkaException

    from kactor.kafka_clients import admin_client, cluster_metadata, error_text

    action = check_options(args, given)
    if args.throttle is not None and args.throttle < 0:
        args.throttle = -1
    log_dir_throttle = args.replica_alter_log_dirs_throttle
    if log_dir_throttle is None or log_dir_throttle < 0:
        log_dir_throttle = -1
    texts = {dest: read_text_file(getattr(args, dest), dest.replace("_", "-").replace("-file", " file"))
             for dest in ("reassignment_json_file", "topics_to_move_json_file") if getattr(args, dest)}

    def out(text: str) -> None:
        print(text, flush=True)
    try:
        admin = admin_client(servers.bootstrap, "kactor-reassign-partitions", servers.librdkafka())
        cluster_metadata(admin, servers.bootstrap, 10.0)
        cluster = Cluster(admin, servers, 30.0)
        if action == "generate":
            generate(cluster, out, texts["topics_to_move_json_file"], args.broker_list, not args.disable_rack_aware)
        elif action == "execute":
            execute(cluster, out, texts["reassignment_json_file"], args.additional,
                    -1 if args.throttle is None else args.throttle,
                    args.timeout / 1000.0 if given("timeout") else MOVE_START_TIMEOUT_S, log_dir_throttle)
        elif action == "verify":
            verify(cluster, out, texts["reassignment_json_file"], args.preserve_throttles)
        elif action == "cancel":
            cancel(cluster, out, texts["reassignment_json_file"], args.preserve_throttles)
        else:
            out("\n".join(reassignments_to_lines(cluster.list_reassignments())))
    except TerseFailureError as e:
        out(str(e))
        return 1
    except (AdminError, KafkaClientError) as e:
        out(f"Error: {e}")
        return 1
    except KafkaException as e:
        out(f"Error: {error_text(e)}")
        return 1
    return 0
