"""A consumer group in `kactor sim`: members that speak the internal requests FindCoordinator, JoinGroup, SyncGroup,
Heartbeat, OffsetCommit and OffsetFetch convert to (core/api/{find_coordinator,group,offsets}.py), each sent with
`Sim.client_request` to the group coordinator actor their ApiSpecs route them to, as a Kafka 2.6 consumer
(AbstractCoordinator / ConsumerCoordinator; librdkafka's cgrp behaves alike) drives them:

- find the coordinator (FindCoordinator to a serving broker), then JoinGroup (protocol type "consumer", the range
  assignor, a ConsumerProtocol v0 subscription of the sim's topic; a dynamic member first answered MEMBER_ID_REQUIRED
  joins again with the id it was given, KIP-394), SyncGroup (the leader computes the range assignment over the
  topic's partitions), then Heartbeat every heartbeat.interval.ms (3 s) and OffsetCommit of its positions every
  auto.commit.interval.ms (5 s) when they moved; OffsetFetch of its partitions after each assignment (its start
  positions: none committed means auto.offset.reset=earliest, 0) and after each move of its coordinator;
- on NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE or a failed connection, find the coordinator again (then go on where
  it was: a join or sync is sent again, a stable member goes on heartbeating); on COORDINATOR_LOAD_IN_PROGRESS, the
  same request again a step later; on REBALANCE_IN_PROGRESS, join again (member id and all); on UNKNOWN_MEMBER_ID or
  ILLEGAL_GENERATION, join again as a new member (AbstractCoordinator.resetGenerationOnResponseError);
- member "ga" is dynamic, member "gb" static (group.instance.id, KIP-345): a FENCED_INSTANCE_ID stops it (fatal, as
  in both clients);
- on a seeded RESTART_SHARE of the steps (a stream of its own) one member, if stable, is restarted: the dynamic one
  closes with LeaveGroup (a rebalance at once) and a new consumer joins without a member id; the static one closes
  without leaving and its new consumer joins under the same group.instance.id (no rebalance: the coordinator gives
  it a new member id and its assignment, fencing the old id, which no process uses any more).

Each member fetches its assigned partitions with a `sim.clients.SimConsumer` of its own (the same fetch logic), its
position set from OffsetFetch; it commits the furthest position it read to (the SimConsumer reads again after a
leader change, which a real consumer does not: its commits never go back). Every generation, assignment, commit and
offset fetched is recorded for `GroupChecks` (sim/invariants.py). Requests go out at step boundaries (one step,
STEP_MS, is 1 s) except a join or sync that follows at once from an answer, one coordinator request in flight per
member, so a member costs a few inputs a step.
"""

from __future__ import annotations

import random
import struct

import attrs

from actors import names
from core.coordinator.group.group_metadata import CONSUMER_PROTOCOL_TYPE, subscription_topics
from messages.common import Errors, TopicPartition
from messages.group import (
    NO_GENERATION,
    UNKNOWN_MEMBER_ID,
    FindCoordinatorRequest,
    HeartbeatRequest,
    JoinGroupProtocol,
    JoinGroupRequest,
    LeaveGroupRequest,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
    SyncGroupAssignment,
    SyncGroupRequest,
)
from sim.clients import CONNECTION_FAILED, SimConsumer
from sim.faults import STEP_MS
from sim.runtime import HOST, START_MS, Sim

SESSION_TIMEOUT_MS = 10000  # session.timeout.ms (Kafka 2.6's consumer default)
REBALANCE_TIMEOUT_MS = 30000  # max.poll.interval.ms, set to 30 s (default 300 s): what the join phase may wait
HEARTBEAT_INTERVAL_MS = 3000  # heartbeat.interval.ms
AUTO_COMMIT_INTERVAL_MS = 5000  # auto.commit.interval.ms
ASSIGNOR = "range"
GROUP_INITIAL_REBALANCE_DELAY_MS = 3000  # the brokers' group.initial.rebalance.delay.ms (Kafka's default)
# How long after the cluster last changed (sim.healthy() since) the group may take to be stable again: a member
# learns of a rebalance or a lost coordinator at its next heartbeat (heartbeat.interval.ms, plus a step: requests go
# out at step boundaries), finds the coordinator (a step), whose load of one small partition takes milliseconds; the
# join phase waits for every known member, a member id nobody uses any more until its session times out, at most the
# rebalance timeout (a new group's first join waits group.initial.rebalance.delay.ms more); a member that does not
# sync is dropped after its session timeout, and the survivors learn of that rebalance at a heartbeat, then join.
STABLE_BOUND_MS = (REBALANCE_TIMEOUT_MS + SESSION_TIMEOUT_MS + GROUP_INITIAL_REBALANCE_DELAY_MS
                   + 2 * (HEARTBEAT_INTERVAL_MS + STEP_MS))
VERSIONS = {"FindCoordinator": 2, "JoinGroup": 5, "SyncGroup": 3, "Heartbeat": 3, "OffsetCommit": 7,
            "OffsetFetch": 5, "LeaveGroup": 4}
RESTART_SHARE = 0.05  # of the steps: one member, if stable, is restarted (a consumer process bounced)
# of the seeds: those with the consumer group (and __consumer_offsets), a draw of a stream of its own; a group costs
# about a tenth of a seed's actor inputs (its internal partition's replication, heartbeats, fetches, commits), and
# issue #28's 10,000 seeds must fit in 30 minutes
GROUP_SHARE = 1 / 3
# the answers after which a member looks for its coordinator again (AbstractCoordinator.markCoordinatorUnknown)
COORDINATOR_GONE = frozenset({CONNECTION_FAILED, Errors.NOT_COORDINATOR.name, Errors.COORDINATOR_NOT_AVAILABLE.name})
# the answers after which a member joins again as a new member
RESET = frozenset({Errors.UNKNOWN_MEMBER_ID.name, Errors.ILLEGAL_GENERATION.name})


def subscription(topics: list[str]) -> bytes:
    """ConsumerProtocol.serializeSubscription v0: int16 version, the topics (int16-length strings), null user data."""
    out = struct.pack(">hi", 0, len(topics))
    for t in topics:
        out += struct.pack(">h", len(t.encode())) + t.encode()
    return out + struct.pack(">i", -1)


def encode_assignment(tps: list[TopicPartition]) -> bytes:
    """ConsumerProtocol.serializeAssignment v0: int16 version, per topic its name and int32 partitions, null user
    data."""
    by_topic: dict[str, list[int]] = {}
    for tp in tps:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    out = struct.pack(">hi", 0, len(by_topic))
    for t, ps in sorted(by_topic.items()):
        out += struct.pack(">h", len(t.encode())) + t.encode() + struct.pack(f">i{len(ps)}i", len(ps), *sorted(ps))
    return out + struct.pack(">i", -1)


def decode_assignment(data: bytes) -> list[TopicPartition]:
    """ConsumerProtocol.deserializeAssignment (an empty assignment, as a member left out gets, is no partitions)."""
    if not data:
        return []
    (count,) = struct.unpack_from(">i", data, 2)
    pos, out = 6, []
    for _ in range(count):
        (n,) = struct.unpack_from(">h", data, pos)
        topic = data[pos + 2:pos + 2 + n].decode()
        pos += 2 + n
        (k,) = struct.unpack_from(">i", data, pos)
        out += [TopicPartition(topic, p) for p in struct.unpack_from(f">{k}i", data, pos + 4)]
        pos += 4 + 4 * k
    return out


def range_assign(members: dict[str, set[str]], partitions: dict[str, int]) -> dict[str, list[TopicPartition]]:
    """RangeAssignor.assign: per topic, its partitions in order split over its subscribers sorted by member id, the
    first (partitions mod members) one more each."""
    out: dict[str, list[TopicPartition]] = {m: [] for m in members}
    for topic, count in sorted(partitions.items()):
        subscribers = sorted(m for m, topics in members.items() if topic in topics)
        if not subscribers:
            continue
        per, extra = divmod(count, len(subscribers))
        start = 0
        for i, m in enumerate(subscribers):
            n = per + (1 if i < extra else 0)
            out[m] += [TopicPartition(topic, p) for p in range(start, start + n)]
            start += n
    return out


@attrs.frozen
class Generation:
    """A member's SyncGroup answered: it is in ``generation`` with ``assignment``."""

    member: str
    member_id: str
    generation: int
    assignment: tuple[TopicPartition, ...]
    at_ms: float


@attrs.frozen
class Commit:
    """An OffsetCommit answer for one partition."""

    member: str
    tp: TopicPartition
    offset: int
    generation: int
    error: str
    sent_ms: float
    answered_ms: float


@attrs.frozen
class Fetched:
    """An OffsetFetch answer for one partition (offset -1: nothing committed)."""

    member: str
    tp: TopicPartition
    offset: int
    error: str
    coordinator: int
    sent_ms: float
    answered_ms: float


@attrs.frozen
class Fenced:
    """A FENCED_INSTANCE_ID answer: ``confirmed`` when the member id it used had been answered a SyncGroup (so the
    group, with it, was in ``__consumer_offsets``)."""

    member: str
    member_id: str
    confirmed: bool
    coordinator: int
    at_ms: float


class GroupMember:
    """One consumer of the group; ``state`` is "find" (no coordinator), "join", "sync", "stable" or "fenced"."""

    def __init__(self, sim: Sim, group: Group, name: str, instance_id: str | None) -> None:
        self.sim = sim
        self.group = group
        self.name = name
        self.client_id = f"sim-{name}"
        self.instance_id = instance_id
        self.state = "find"
        self.after_find = "join"  # what a member that found its coordinator does next ("join", "sync" or "stable")
        self.coordinator = -1
        self.last_coordinator = -1
        self.member_id = UNKNOWN_MEMBER_ID
        self.generation = NO_GENERATION
        self.leader = False
        self.members: tuple = ()  # the JoinGroup answer's members (the leader's)
        self.assignment: tuple[TopicPartition, ...] = ()
        self.confirmed = ""  # the member id a SyncGroup last answered NONE (written with the group by then)
        self.busy = False  # a coordinator request in flight
        self.retry_at = 0.0  # no request before (a backoff)
        self.last_heartbeat = 0.0
        self.last_commit = 0.0
        self.committed: dict[TopicPartition, int] = {}  # what this member last had acknowledged
        self.reached: dict[TopicPartition, int] = {}  # the furthest position read to, per partition
        self.refetch = False  # an OffsetFetch due (a new coordinator)
        self.positioned: set[TopicPartition] = set()  # partitions whose start position OffsetFetch gave
        self.consumer = SimConsumer(sim, prefix=name)

    # -- sending -----------------------------------------------------------------------------------------------------
    def _send(self, what: str, target: int, body: object, answered: object) -> None:
        self.busy = True
        sent = self.sim.now

        def on_answer(answer: object) -> None:
            self.busy = False
            error = CONNECTION_FAILED if answer is None else self._error(answer)
            self.group.answers.append((what, self.name, error))
            answered(answer, error, sent)  # type: ignore[operator]

        self.sim.client_request(target, body, VERSIONS[what], on_answer, client_id=self.client_id,
                                route=names.GROUP_COORDINATOR)

    @staticmethod
    def _error(answer: object) -> str:
        error = getattr(answer, "error", None)
        if error is not None:
            return error.name
        errors = [p.error for p in getattr(answer, "partitions", ())]
        return next((e.name for e in errors if e != Errors.NONE), Errors.NONE.name)

    def _lost_coordinator(self, error: str) -> None:
        """AbstractCoordinator.markCoordinatorUnknown: find it again, then go on with what was under way."""
        self.sim.note(f"group {self.name}: coordinator b{self.coordinator} lost ({error})")
        if self.state != "find":
            self.after_find = self.state
        self.state = "find"
        self.coordinator = -1
        self.retry_at = self.sim.now + 100.0  # retry.backoff.ms

    def _rejoin(self, reset: bool) -> None:
        if reset:
            self.member_id, self.generation = UNKNOWN_MEMBER_ID, NO_GENERATION
        self.state = "join"
        self.assignment = ()

    # -- the member's loop -------------------------------------------------------------------------------------------
    def tick(self) -> None:
        """What is due now: at most one coordinator request, and a fetch of one assigned partition."""
        if self.state in ("fenced", "closed") or self.busy or self.sim.now < self.retry_at:
            return
        if self.state == "find":
            self._find()
        elif self.state == "join":
            self._join()
        elif self.state == "sync":
            self._sync()
        elif self.refetch or any(tp not in self.positioned for tp in self.assignment):
            self._offset_fetch()
        elif self.sim.now - self.last_commit >= AUTO_COMMIT_INTERVAL_MS and any(
                self.reached.get(tp, 0) > self.committed.get(tp, -1) for tp in self.assignment):
            self._commit()
        elif self.sim.now - self.last_heartbeat >= HEARTBEAT_INTERVAL_MS:
            self._heartbeat()

    def close(self) -> None:
        """The consumer's close(): a dynamic member leaves the group (LeaveGroup, a rebalance at once); a static one
        does not (KIP-345: its instance id keeps its assignment until its session times out or it comes back)."""
        if self.instance_id is None and self.coordinator >= 0 and self.member_id:
            request = LeaveGroupRequest(self.group.group_id, (MemberIdentity(self.member_id),))
            self.sim.note(f"group {self.name}: LeaveGroup {self.member_id} at b{self.coordinator}")
            self._send("LeaveGroup", self.coordinator, request, lambda answer, error, sent: None)
        self.state = "closed"

    def fetch(self, i: int) -> None:
        """A fetch of the ``i``-th assigned partition (in turn), from where OffsetFetch put it."""
        if self.state == "stable" and self.assignment:
            tp = self.assignment[i % len(self.assignment)]
            if tp in self.positioned:
                self.consumer.fetch(tp)
                self.reached[tp] = max(self.reached.get(tp, 0), self.consumer.positions.get(tp, 0))

    def _find(self) -> None:
        serving = [b for b, br in sorted(self.sim.brokers.items()) if br.serving]
        if not serving:
            return
        target = self.group.rng.choice(serving)
        self._send("FindCoordinator", target, FindCoordinatorRequest(self.group.group_id, listener="PLAINTEXT"),
                   self._found)

    def _found(self, answer: object, error: str, sent: float) -> None:
        if error != "NONE":
            self.retry_at = self.sim.now + 100.0
            return
        self.coordinator = answer.node_id  # type: ignore[attr-defined]
        self.sim.note(f"group {self.name}: coordinator b{self.coordinator}")
        if self.last_coordinator >= 0 and self.coordinator != self.last_coordinator:
            self.refetch = True  # a moved coordinator: read back what was committed
        self.last_coordinator = self.coordinator
        self.state = self.after_find
        self.tick()

    def _join(self) -> None:
        request = JoinGroupRequest(
            self.group.group_id, SESSION_TIMEOUT_MS, REBALANCE_TIMEOUT_MS, self.member_id, CONSUMER_PROTOCOL_TYPE,
            (JoinGroupProtocol(ASSIGNOR, subscription([self.group.topic])),), self.instance_id,
            self.instance_id is None, self.client_id, HOST)
        self.sim.note(f"group {self.name}: JoinGroup {self.member_id or '(new)'} at b{self.coordinator}")
        self._send("JoinGroup", self.coordinator, request, self._joined)

    def _common_errors(self, error: str) -> bool:
        """The answers every group request handles alike; True when ``error`` was one."""
        if self.state == "closed":
            return True
        if error in COORDINATOR_GONE:
            self._lost_coordinator(error)
        elif error == Errors.COORDINATOR_LOAD_IN_PROGRESS.name:
            self.retry_at = self.sim.now + 100.0
        elif error == Errors.REBALANCE_IN_PROGRESS.name:
            self._rejoin(reset=False)
            self.tick()
        elif error in RESET:
            self._rejoin(reset=True)
            self.tick()
        elif error == Errors.FENCED_INSTANCE_ID.name:
            self.sim.note(f"group {self.name}: fenced ({self.instance_id}, member id {self.member_id}"
                          f"{'' if self.member_id == self.confirmed else ', never synced'})")
            self.group.fenced.append(Fenced(self.name, self.member_id, self.member_id == self.confirmed,
                                            self.coordinator, self.sim.now - START_MS))
            self.state = "fenced"
        else:
            return False
        return True

    def _joined(self, answer: object, error: str, sent: float) -> None:
        if self.state != "join":
            return
        if error == Errors.MEMBER_ID_REQUIRED.name:
            self.member_id = answer.member_id  # type: ignore[attr-defined]
            self.tick()
            return
        if error != "NONE":
            if not self._common_errors(error):
                self.retry_at = self.sim.now + 100.0
            return
        a = answer
        self.member_id, self.generation = a.member_id, a.generation_id  # type: ignore[attr-defined]
        self.leader = a.leader == a.member_id  # type: ignore[attr-defined]
        self.members = a.members  # type: ignore[attr-defined]
        self.state = "sync"
        self.sim.note(f"group {self.name}: joined generation {self.generation} as {self.member_id}"
                      f"{' (leader)' if self.leader else ''}")
        self.tick()

    def _sync(self) -> None:
        assignments: tuple[SyncGroupAssignment, ...] = ()
        if self.leader:
            topics = {m.member_id: subscription_topics(m.metadata) for m in self.members}
            plan = range_assign(topics, {self.group.topic: len(self.group.partitions)})
            assignments = tuple(SyncGroupAssignment(m, encode_assignment(tps)) for m, tps in sorted(plan.items()))
        request = SyncGroupRequest(self.group.group_id, self.generation, self.member_id, assignments,
                                   self.instance_id, CONSUMER_PROTOCOL_TYPE, ASSIGNOR)
        self._send("SyncGroup", self.coordinator, request, self._synced)

    def _synced(self, answer: object, error: str, sent: float) -> None:
        if self.state != "sync":
            return
        if error != "NONE":
            if not self._common_errors(error):
                self.retry_at = self.sim.now + 100.0
            return
        self.assignment = tuple(sorted(decode_assignment(answer.assignment)))  # type: ignore[attr-defined]
        self.confirmed = self.member_id  # stored with the group in __consumer_offsets before this answer
        self.positioned = set()
        self.state = "stable"
        self.last_heartbeat = self.last_commit = self.sim.now
        self.group.generations.append(Generation(self.name, self.member_id, self.generation, self.assignment,
                                                 self.sim.now - START_MS))
        self.sim.note(f"group {self.name}: generation {self.generation} assigned "
                      f"{[tp.partition for tp in self.assignment]}")
        self.tick()

    def _heartbeat(self) -> None:
        self.last_heartbeat = self.sim.now
        request = HeartbeatRequest(self.group.group_id, self.generation, self.member_id, self.instance_id)
        self._send("Heartbeat", self.coordinator, request, self._heartbeat_answered)

    def _heartbeat_answered(self, answer: object, error: str, sent: float) -> None:
        if error != "NONE" and self.state == "stable":
            self._common_errors(error)

    def _offset_fetch(self) -> None:
        tps = self.assignment
        self.refetch = False
        self._send("OffsetFetch", self.coordinator, OffsetFetchRequest(self.group.group_id, tps),
                   lambda answer, error, sent: self._offsets(tps, answer, error, sent))

    def _offsets(self, tps: tuple[TopicPartition, ...], answer: object, error: str, sent: float) -> None:
        if error != "NONE" or answer is None:
            self.refetch = True
            if self.state == "stable":
                self._common_errors(error)
            return
        coordinator = self.coordinator
        for p in answer.partitions:  # type: ignore[attr-defined]
            if p.error != Errors.NONE:
                self.refetch = True
            self.group.fetched.append(Fetched(self.name, p.tp, p.offset, p.error.name, coordinator,
                                              sent - START_MS, self.sim.now - START_MS))
            if (p.error == Errors.NONE and self.state == "stable" and p.tp in self.assignment
                    and p.tp not in self.positioned):
                start = max(p.offset, 0)  # nothing committed: auto.offset.reset=earliest
                self.consumer.positions[p.tp] = start
                self.consumer.leaders.pop(p.tp, None)
                self.reached[p.tp] = start
                self.committed[p.tp] = p.offset
                self.positioned.add(p.tp)

    def _commit(self) -> None:
        self.last_commit = self.sim.now
        offsets = {tp: self.reached.get(tp, 0) for tp in self.assignment if tp in self.positioned}
        request = OffsetCommitRequest(self.group.group_id,
                                      tuple(OffsetCommitPartition(tp, o) for tp, o in sorted(offsets.items())),
                                      self.generation, self.member_id, self.instance_id)
        generation = self.generation
        self.sim.note(f"group {self.name}: commit {sorted((tp.partition, o) for tp, o in offsets.items())} "
                      f"generation {generation}")
        self._send("OffsetCommit", self.coordinator, request,
                   lambda answer, error, sent: self._committed(offsets, generation, answer, error, sent))

    def _committed(self, offsets: dict[TopicPartition, int], generation: int, answer: object, error: str,
                   sent: float) -> None:
        parts = {} if answer is None else {p.tp: p.error.name for p in answer.partitions}  # type: ignore[attr-defined]
        for tp, offset in sorted(offsets.items()):
            e = parts.get(tp, error)
            self.group.commits.append(Commit(self.name, tp, offset, generation, e, sent - START_MS,
                                             self.sim.now - START_MS))
            if e == "NONE":
                self.committed[tp] = max(self.committed.get(tp, -1), offset)
        if error != "NONE" and self.state == "stable":
            self._common_errors(error)



def grouped(seed: int) -> bool:
    """Whether the seed runs the consumer group (and has `__consumer_offsets`): a draw of its own stream."""
    return random.Random(f"group-share-{seed}").random() < GROUP_SHARE


class Group:
    """The sim's consumer group: ``group.id`` one per seed, a dynamic member "a" and a static member "b"; driven a
    step at a time (`step`); ``answers`` every answer as (what, member, error), ``generations``, ``commits`` and
    ``fetched`` what `GroupChecks` reads."""

    def __init__(self, sim: Sim, topic: str, partitions: list[TopicPartition]) -> None:
        self.sim = sim
        self.topic = topic
        self.partitions = partitions
        self.group_id = f"sim-group-{sim.seed}"
        self.rng = random.Random(f"group-{sim.seed}")  # which broker a FindCoordinator goes to
        self.answers: list[tuple[str, str, str]] = []
        self.generations: list[Generation] = []
        self.commits: list[Commit] = []
        self.fetched: list[Fetched] = []
        self.fenced: list[Fenced] = []
        self.members = [GroupMember(sim, self, "ga", None), GroupMember(sim, self, "gb", f"sim-static-{sim.seed}")]
        self.restarts = random.Random(f"group-restart-{sim.seed}")  # which steps restart which member
        self.last_restart_ms = sim.now

    def restart(self, i: int) -> None:
        """Member ``i``'s process bounced: it closes, and a new consumer with the same config (the same
        group.instance.id for the static member) starts: no member id, no positions."""
        old = self.members[i]
        old.close()
        self.members[i] = GroupMember(self.sim, self, old.name, old.instance_id)
        self.last_restart_ms = self.sim.now
        self.sim.note(f"group {old.name}: restarted")

    def step(self, step: int) -> None:
        """A seeded restart of one member (if stable: RESTART_SHARE of the steps), then each member's due
        coordinator request; on odd steps (the Clients' consumer fetches on even ones), one member fetches one of its
        partitions, the members in turn."""
        if self.restarts.random() < RESTART_SHARE:
            i = self.restarts.randrange(len(self.members))
            if self.members[i].state == "stable":
                self.restart(i)
        self.tick()
        if step % 2 == 1:
            self.members[(step // 2) % len(self.members)].fetch(step // (2 * len(self.members)))

    def tick(self) -> None:
        """Each member's due coordinator request (the end's settling: no fetches); a fenced member's process, which
        both clients end with a fatal error, is started again (a supervisor's restart)."""
        for i, m in enumerate(self.members):
            if m.state == "fenced":
                self.restart(i)
        for m in self.members:
            m.tick()

    def stable(self) -> str | None:
        """None when every member is in the same generation, stable, and their assignments cover every partition
        exactly once; else what is not."""
        gens = {m.name: (m.state, m.generation) for m in self.members}
        if any(state != "stable" for state, _ in gens.values()) or len({g for _, g in gens.values()}) != 1:
            return f"members {gens}"
        owned = sorted(tp for m in self.members for tp in m.assignment)
        if owned != sorted(self.partitions):
            return f"assignment {[(m.name, [tp.partition for tp in m.assignment]) for m in self.members]}"
        return None


class GroupChecks:
    """The invariants on the consumer group (each step's look only at what is new, plus the group's state):

    - (a) the group is stable (every member in the same generation, their assignments covering every partition of
      the topic exactly once) once the cluster has been healthy for STABLE_BOUND_MS;
    - (b) an offset fetched back (OffsetFetch: after an assignment and after each coordinator move) is never below an
      offset of that partition whose commit had been acknowledged before the fetch was sent: an acknowledged commit
      (appended with acks=all to ``__consumer_offsets``) is never lost, nor shadowed by an older one;
    - (c) no answer is UNKNOWN_SERVER_ERROR;
    - (d) the static member is never fenced (FENCED_INSTANCE_ID) under a member id a SyncGroup had answered (the group
      was written to ``__consumer_offsets`` with that id before the answer, so a coordinator that loads it later knows
      it): it is one process that never runs twice, so only a coordinator confusing its member ids could fence it.
      An id a JoinGroup gave but no SyncGroup confirmed may be fenced as Kafka 2.6.3 does: a coordinator that lost
      its partition (a paused broker, its write failing NOT_LEADER_OR_FOLLOWER) answered the JoinGroup, and the new
      coordinator loads the group with the old id (seed 246); the fenced process is then started again;
    - (e) at the end, with the cluster settled, the group is stable.
    """

    def __init__(self, group: Group) -> None:
        self.group = group
        self.found: list[str] = []
        self._answers = 0
        self._fetched = 0
        self._commits = 0
        self._fenced = 0
        self.acked: dict[TopicPartition, list[Commit]] = {}  # acknowledged commits, in the order answered

    def check(self) -> list[str]:
        g, sim = self.group, self.group.sim
        for what, member, error in g.answers[self._answers:]:
            if error == Errors.UNKNOWN_SERVER_ERROR.name:
                self.found.append(f"group {member}: {what} answered UNKNOWN_SERVER_ERROR")
        self._answers = len(g.answers)
        for f in g.fenced[self._fenced:]:
            if f.confirmed:
                self.found.append(f"group {f.member}: fenced (FENCED_INSTANCE_ID) by b{f.coordinator} at "
                                  f"{f.at_ms:.0f} ms under member id {f.member_id}, which a SyncGroup had confirmed")
        self._fenced = len(g.fenced)
        for c in g.commits[self._commits:]:
            if c.error == "NONE":
                self.acked.setdefault(c.tp, []).append(c)
        self._commits = len(g.commits)
        for f in g.fetched[self._fetched:]:
            if f.error != "NONE":
                continue
            before = [c for c in self.acked.get(f.tp, ()) if c.answered_ms <= f.sent_ms]
            if before:
                best = max(before, key=lambda c: c.offset)
                if f.offset < best.offset:
                    self.found.append(
                        f"group {f.member}: OffsetFetch of {f.tp.topic}-{f.tp.partition} sent at {f.sent_ms:.0f} ms "
                        f"to b{f.coordinator} answered offset {f.offset}, below {best.offset} committed by "
                        f"{best.member} (generation {best.generation}) and acknowledged at {best.answered_ms:.0f} ms")
        self._fetched = len(g.fetched)
        out = list(self.found)
        since = max(sim.last_fault_ms, g.last_restart_ms)
        if sim.healthy() and sim.now - since >= STABLE_BOUND_MS:
            unstable = g.stable()
            if unstable is not None:
                out.append(f"group not stable {STABLE_BOUND_MS:.0f} ms after the cluster or the group was last "
                           f"changed ({(since - START_MS):.0f} ms): {unstable}")
        return out

    def check_final(self) -> list[str]:
        unstable = self.group.stable()
        return [] if unstable is None else [f"group not stable at the end: {unstable}"]
