"""ElectLeaders, AlterPartitionReassignments and ListPartitionReassignments: Kafka 2.6 hands these to the controller
(``KafkaController.electLeaders`` / ``alterPartitionReassignments`` / ``listPartitionReassignments``); `AdminManager`
answers them on the controller's broker (NOT_CONTROLLER elsewhere, as the controller's ``isActive`` check does) and
reaches the controller through ZooKeeper, the route 2.6's tools take:

* a preferred election is written to ``/admin/preferred_replica_election`` (the controller's ZK-triggered
  ReplicaLeaderElection, which deletes the znode when done), and each partition is answered from its state znode
  afterwards, as ``processReplicaLeaderElection`` answers (ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE, ...);
* a reassignment, or its cancellation (null replicas), is the controller's own ApiPartitionReassignment event, as
  2.6's ``KafkaController.alterPartitionReassignments`` makes it, injected into this broker's controller actor as an
  input from the network; the answer comes once the topic znode shows what the controller did (phase U's full
  replica set with the adding / removing replicas, a reassignment already complete, or — for a cancellation — the
  origin replicas back with nothing adding or removing). Through ``/admin/reassign_partitions`` (the only route
  when the manager has no controller to hand events to) a cancellation could never be taken up while the
  reassignment it cancels still moves: the controller acts on that znode's creation only, and the znode lives until
  the reassignment completes;
* ongoing reassignments are read from the topics' znodes (their adding / removing replicas, which the controller
  writes for every reassignment).

An UNCLEAN election has no ZooKeeper route in 2.6: it is the controller's own ReplicaLeaderElection event
(AdminClientTriggered), injected likewise.
"""

from __future__ import annotations

from collections.abc import Iterable

from kazoo.exceptions import NodeExistsError

from core.controller.reassignment import PartitionReassignment
from messages import controller_events as ev
from messages.common import NO_LEADER, Errors, ReplicaAssignment, TopicPartition
from protocol.zk import paths
from zk_bridge.admin.api_errors import AdminOps, Body

PREFERRED = 0  # ElectionType.PREFERRED
UNCLEAN = 1  # ElectionType.UNCLEAN
Answer = tuple[Errors, str | None]


def _by_topic(results: dict[TopicPartition, Answer]) -> list[Body]:
    topics: dict[str, list[Body]] = {}
    for tp, (error, message) in sorted(results.items()):
        topics.setdefault(tp.topic, []).append(
            {"partition_id": tp.partition, "error_code": error, "error_message": message})
    return [{"topic": t, "partition_result": ps} for t, ps in topics.items()]


# -- ElectLeaders ------------------------------------------------------------------------------------------------------
def elect_leaders(m: AdminOps, version: int, body: Body) -> Body:
    """KafkaApis.handleElectReplicaLeader + KafkaController.processReplicaLeaderElection (AdminClientTriggered): one
    answer per partition; with no partitions named (every partition), those that needed no election are left out."""
    election_type = body.get("election_type", PREFERRED)
    requested = body.get("topic_partitions")
    if requested is None:
        partitions = m.admin.get_all_partitions()
    else:
        partitions = {TopicPartition(t["topic"], p) for t in requested for p in t["partitions"]}
    if not m.is_controller():
        results = {tp: (Errors.NOT_CONTROLLER, None) for tp in partitions} if requested is not None else {}
    else:
        results = _elect(m, partitions, election_type, int(body.get("timeout_ms", 60000)))
    if requested is None:
        results = {tp: r for tp, r in results.items() if r[0] != Errors.ELECTION_NOT_NEEDED}
    return {"throttle_time_ms": 0, "error_code": 0, "replica_election_results": _by_topic(results)}


def _elect(m: AdminOps, partitions: Iterable[TopicPartition], election_type: int,
           timeout_ms: int) -> dict[TopicPartition, Answer]:
    results: dict[TopicPartition, Answer] = {}
    deleting = set(m.admin.get_topic_deletions())
    live = set(m.admin.get_sorted_broker_list())
    assignments: dict[str, dict[int, ReplicaAssignment]] = {}
    electable: dict[TopicPartition, int] = {}  # partition -> its preferred replica
    unclean: list[TopicPartition] = []
    for tp in sorted(partitions):
        if tp.topic not in assignments:
            assignments[tp.topic] = m.admin.get_full_replica_assignment(tp.topic) if _legal(tp.topic) else {}
        ra = assignments[tp.topic].get(tp.partition)
        if ra is None:
            results[tp] = (Errors.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")
            continue
        if tp.topic in deleting:
            results[tp] = (Errors.INVALID_TOPIC_EXCEPTION, "The topic is being deleted")
            continue
        state = m.admin.get_topic_partition_state(tp)
        leader = state.leader_and_isr.leader if state is not None else NO_LEADER
        unclean_needed = leader == NO_LEADER or leader not in live
        needed = leader != ra.replicas[0] if election_type == PREFERRED else unclean_needed
        if not needed:
            results[tp] = (Errors.ELECTION_NOT_NEEDED, None)
        elif election_type == PREFERRED:
            electable[tp] = ra.replicas[0]
        elif not set(ra.replicas) & live:
            results[tp] = (Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE, f"Failed to elect leader for partition {tp} under "
                           "strategy OfflinePartitionLeaderElectionStrategy(true)")
        else:
            unclean.append(tp)
    if electable:
        results.update(_elect_preferred(m, electable, timeout_ms))
    if unclean:
        results.update(_elect_unclean(m, unclean, timeout_ms))
    return results


def _elect_unclean(m: AdminOps, partitions: list[TopicPartition], timeout_ms: int) -> dict[TopicPartition, Answer]:
    """KafkaController.electLeaders(UNCLEAN): the controller's own ReplicaLeaderElection(AdminClientTriggered) event
    (Kafka 2.6 has no ZooKeeper route for it), then DelayedElectLeader's wait: each partition answered NONE once its
    state znode shows a live leader, REQUEST_TIMED_OUT if not within ``timeout_ms``."""
    if m.controller_events is None:
        return {tp: (Errors.INVALID_REQUEST, "no controller to elect unclean leaders in this process")
                for tp in partitions}
    m.controller_events(ev.ReplicaLeaderElection(tuple(partitions), ev.UNCLEAN, ev.ADMIN_CLIENT_TRIGGERED))
    pending = set(partitions)

    def done() -> bool:
        live = set(m.admin.get_sorted_broker_list())
        for tp in sorted(pending):
            state = m.admin.get_topic_partition_state(tp)
            if state is not None and state.leader_and_isr.leader in live:
                pending.discard(tp)
        return not pending

    m.wait_until(done, timeout_ms)
    return {tp: (Errors.REQUEST_TIMED_OUT, None) if tp in pending else (Errors.NONE, None) for tp in partitions}


def _legal(topic: str) -> bool:
    from zk_bridge.admin import topic_name

    return topic_name.is_valid(topic)


def _elect_preferred(m: AdminOps, electable: dict[TopicPartition, int],
                     timeout_ms: int) -> dict[TopicPartition, Answer]:
    """The ZK-triggered preferred election for ``electable``: wait for a pending one to finish, write ours, wait for
    the controller to remove the znode (its election done), then answer from each partition's leader."""
    timed_out = {tp: (Errors.REQUEST_TIMED_OUT, None) for tp in electable}
    znode = paths.PreferredReplicaElectionZNode
    deadline_ms = timeout_ms
    started = m.clock()
    while True:
        if not m.wait_until(lambda: not m.admin.exists(znode), deadline_ms):
            return timed_out
        try:
            m.admin.create_preferred_replica_election(set(electable))
            break
        except NodeExistsError:  # another election was written meanwhile: wait for it too
            deadline_ms = max(0, timeout_ms - int((m.clock() - started) * 1000))
    remaining = max(0, timeout_ms - int((m.clock() - started) * 1000))
    if not m.wait_until(lambda: not m.admin.exists(znode), remaining):
        return timed_out
    results: dict[TopicPartition, Answer] = {}
    for tp, preferred in electable.items():
        state = m.admin.get_topic_partition_state(tp)
        if state is not None and state.leader_and_isr.leader == preferred:
            results[tp] = (Errors.NONE, None)
        else:
            results[tp] = (Errors.PREFERRED_LEADER_NOT_AVAILABLE,
                           f"Failed to elect leader for partition {tp} under strategy "
                           "PreferredReplicaPartitionLeaderElectionStrategy")
    return results


# -- AlterPartitionReassignments --------------------------------------------------------------------------------------
def alter_partition_reassignments(m: AdminOps, version: int, body: Body) -> Body:
    """KafkaApis.handleAlterPartitionReassignmentsRequest + KafkaController.processApiPartitionReassignment."""
    if not m.is_controller():
        return {"throttle_time_ms": 0, "error_code": Errors.NOT_CONTROLLER, "error_message": None, "responses": []}
    live = set(m.admin.get_sorted_broker_list())
    deleting = set(m.admin.get_topic_deletions())
    results: dict[TopicPartition, Answer] = {}
    targets: dict[TopicPartition, tuple[int, ...] | None] = {}  # None: cancel
    currents: dict[TopicPartition, ReplicaAssignment] = {}
    requested: dict[TopicPartition, list[int] | None] = {}  # the request as a map: a later entry wins, as 2.6's toMap
    for topic in body.get("topics") or []:
        for p in topic.get("partitions") or []:
            requested[TopicPartition(topic["name"], p["partition_index"])] = p.get("replicas")
    assignments: dict[str, dict[int, ReplicaAssignment]] = {}
    for tp, replicas in requested.items():
        if tp.topic not in assignments:
            assignments[tp.topic] = m.admin.get_full_replica_assignment(tp.topic) if _legal(tp.topic) else {}
        current = assignments[tp.topic].get(tp.partition)
        error = _validate_replicas(replicas, current, live) if replicas is not None else None
        if error is not None:
            results[tp] = (Errors.INVALID_REPLICA_ASSIGNMENT, error)
        elif current is None or tp.topic in deleting:
            results[tp] = (Errors.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")
        elif replicas is None and not (current.is_being_reassigned):
            results[tp] = (Errors.NO_REASSIGNMENT_IN_PROGRESS, None)
        else:
            targets[tp] = tuple(replicas) if replicas is not None else None
            currents[tp] = current
    timeout_ms = int(body.get("timeout_ms", 60000))
    if targets and m.controller_events is not None:
        results.update(_reassign_through_controller(m, targets, currents, timeout_ms))
    elif targets:
        written = _write_reassignment(
            m, {tp: t if t is not None else currents[tp].origin_replicas for tp, t in targets.items()}, timeout_ms)
        results.update({tp: (Errors.NONE, None) if written else (Errors.REQUEST_TIMED_OUT, None) for tp in targets})
    responses: dict[str, list[Body]] = {}
    for tp, (error, message) in sorted(results.items()):
        responses.setdefault(tp.topic, []).append(
            {"partition_index": tp.partition, "error_code": error, "error_message": message})
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
            "responses": [{"name": t, "partitions": ps} for t, ps in responses.items()]}


def _validate_replicas(replicas: list[int], current: ReplicaAssignment | None, live: set[int]) -> str | None:
    """KafkaController.validateReplicas: the controller's own structural checks, then the adding replicas' liveness
    against /brokers/ids."""
    err = PartitionReassignment.validate_replica_list(tuple(replicas))
    if err is not None:
        return err[1]
    adding = (current or ReplicaAssignment(())).reassign_to(tuple(replicas)).adding_replicas
    if not set(adding) <= live:
        return (f"Replica assignment has brokers that are not alive. Replica list: {list(adding)}, live broker list: "
                f"{sorted(live)}")
    return None


def _reassign_through_controller(m: AdminOps, targets: dict[TopicPartition, tuple[int, ...] | None],
                                 currents: dict[TopicPartition, ReplicaAssignment],
                                 timeout_ms: int) -> dict[TopicPartition, Answer]:
    """KafkaController.alterPartitionReassignments: the ApiPartitionReassignment event (a target, or None to cancel)
    to this broker's controller, then each partition answered from its topic znode once the controller's
    processApiPartitionReassignment shows there (the answer 2.6 sends from the event's callback):

    * a reassignment: NONE once the znode holds ``current.reassignTo(target)`` (phase U) or, complete already, the
      target replicas alone;
    * a cancellation: NONE once the znode holds the origin replicas with nothing adding or removing (the cancel's
      reassignTo(origin), completed at once); NO_REASSIGNMENT_IN_PROGRESS if the reassignment completed to its
      target before the controller took the cancellation up (its "no reassignment in progress" answer).

    A partition whose topic went away meanwhile is UNKNOWN_TOPIC_OR_PARTITION; one the controller did not get to
    within ``timeout_ms`` (another broker became controller, say) is REQUEST_TIMED_OUT."""
    assert m.controller_events is not None
    m.controller_events(ev.ApiPartitionReassignment(tuple(sorted(targets.items()))))
    answers: dict[TopicPartition, Answer] = {}

    def done() -> bool:
        topics: dict[str, dict[int, ReplicaAssignment]] = {}
        for tp in sorted(set(targets) - set(answers)):
            if tp.topic not in topics:
                topics[tp.topic] = m.admin.get_full_replica_assignment(tp.topic)
            now = topics[tp.topic].get(tp.partition)
            answer = _reassignment_answer(targets[tp], currents[tp], now)
            if answer is not None:
                answers[tp] = answer
        return len(answers) == len(targets)

    m.wait_until(done, timeout_ms)
    return {tp: answers.get(tp, (Errors.REQUEST_TIMED_OUT, None)) for tp in targets}


def _reassignment_answer(target: tuple[int, ...] | None, current: ReplicaAssignment,
                         now: ReplicaAssignment | None) -> Answer | None:
    """The answer to one partition's reassignment (or cancellation, ``target`` None) from its topic znode ``now``;
    None while the controller has not acted on it yet."""
    if now is None:
        return Errors.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist."
    if target is None:
        if now.is_being_reassigned:
            return None
        if now.replicas == current.origin_replicas:
            return Errors.NONE, None
        return Errors.NO_REASSIGNMENT_IN_PROGRESS, None
    if now == current.reassign_to(target) or (not now.is_being_reassigned and now.replicas == target):
        return Errors.NONE, None
    return None


def _write_reassignment(m: AdminOps, targets: dict[TopicPartition, tuple[int, ...]], timeout_ms: int) -> bool:
    """/admin/reassign_partitions with ``targets``, once a reassignment written there before is taken up (the
    controller acts on the znode's creation only). False if that did not happen within ``timeout_ms``."""
    znode = paths.ReassignPartitionsZNode
    started = m.clock()
    while True:
        remaining = max(0, timeout_ms - int((m.clock() - started) * 1000))
        if not m.wait_until(lambda: not m.admin.exists(znode), remaining):
            return False
        try:
            m.admin.create_partition_reassignment(targets)
            return True
        except NodeExistsError:
            continue


# -- ListPartitionReassignments ---------------------------------------------------------------------------------------
def list_partition_reassignments(m: AdminOps, version: int, body: Body) -> Body:
    """KafkaApis.handleListPartitionReassignmentsRequest + KafkaController.processListPartitionReassignments: the
    partitions (of those named, else all) whose topic znode shows adding or removing replicas."""
    if not m.is_controller():
        return {"throttle_time_ms": 0, "error_code": Errors.NOT_CONTROLLER, "error_message": None, "topics": []}
    requested = body.get("topics")
    if requested is None:
        wanted = {t: None for t in m.admin.get_all_topics_in_cluster()}
    else:
        wanted = {t["name"]: set(t["partition_indexes"]) for t in requested}
    topics = []
    for topic, parts in wanted.items():
        assignment = m.admin.get_full_replica_assignment(topic) if _legal(topic) else {}
        ongoing = [{"partition_index": p, "replicas": list(ra.replicas), "adding_replicas": list(ra.adding_replicas),
                    "removing_replicas": list(ra.removing_replicas)}
                   for p, ra in sorted(assignment.items())
                   if (parts is None or p in parts) and (ra.adding_replicas or ra.removing_replicas)]
        if ongoing:
            topics.append({"name": topic, "partitions": ongoing})
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "topics": topics}
