"""The admin operations of a `kactor sim` seed and their invariants (issue #28: "every deletion and reassignment
completes", "a follower rejoins the ISR within a bound after healing").

A seed's admin operations are a pure function of the seed, drawn from a stream of their own (``admin-ops-<seed>``),
so the fault schedule and the planned writes of every seed are the ones they had before. Each seed:

- creates an extra topic ``sim-x1`` (1 partition, RF 2, replicas rotated from a seeded broker), as
  ``kafka-topics --create --zookeeper`` does (its assignment znode, on the tools' own session), and writes a few
  records to it (acks=all, min.insync.replicas=2: both replicas) so that a replica added later has something to catch
  up;
- reassigns its partition a few steps later, as ``kafka-reassign-partitions --zookeeper --execute`` does (the
  /admin/reassign_partitions znode): one replica kept, the other moved to the third broker, in a seeded order, so the
  controller's reassignment state machine adds a replica, waits for it to catch up (its ISR watch), may move the
  leadership, and removes the old one (StopReplica with deletion);
- deletes the topic some steps later still (three seeds in four), as ``kafka-topics --delete`` does (the
  /admin/delete_topics/<topic> znode) — possibly while the reassignment is still running (Kafka's
  TopicDeletionManager holds the deletion until it completes).

`sim`'s topic is not touched: its acks=all produces stay satisfiable under the faults.

The invariants (`AdminChecks`, called by sim/invariants.py's Checker each step and at the end):

- a deletion completes: once the cluster has been healthy (every broker serving, none paused, stopping or with a
  failed log dir, no link cut) for DELETION_BOUND_MS — and the deletion asked for that long —, the topic's znode and
  its /admin/delete_topics child are gone; under an outage a deletion legitimately waits (a replica on a dead broker
  makes the topic ineligible for deletion in Kafka's TopicDeletionManager, resumed at the broker's startup). When
  it is first seen complete, none of its replicas' brokers that is up hosts a partition of it or keeps its log (the
  controller completes a deletion only once every replica answered its StopReplica(delete=true); a broker that was
  a replica no more may keep a stray one, as in Kafka 2.6: see `check`); once the cluster has been healthy for the
  bound after that, no live broker's metadata names it. At the end (every broker up, every link healed, the cluster
  settled): complete, always;
- a reassignment completes likewise (REASSIGNMENT_BOUND_MS): its /admin/reassign_partitions entry gone, the
  assignment znode the target (nothing adding or removing), the ISR within the target and the leader in it; when it
  completes with the cluster healthy, its removed replica's broker hosts no partition of it and keeps no log of it
  once the bound has passed (a removed replica on a broker down at completion keeps its log in Kafka 2.6: the
  StopReplica goes to live brokers only, and nothing deletes a stray log later);
- a follower rejoins the ISR within ISR_REJOIN_BOUND_MS (`IsrRejoin`).
"""

from __future__ import annotations

import functools
import random
from typing import Any

import attrs

from messages.common import ReplicaAssignment, TopicPartition
from messages.zk import Create
from protocol.zk import paths, znodes
from sim.client import SimClient, zk_partition_state
from sim.invariants import hosted_partition, value_at
from sim.runtime import START_MS, Sim

EXTRA_TOPIC = "sim-x1"
EXTRA_RF = 2
EXTRA_RECORDS = 3  # records written to the extra topic, one a step from the step after its creation
KEEP_SHARE = 0.25  # of the seeds: the extra topic is not deleted (the end checks its reassignment and its ISR)
# of the seeds: those with admin operations at all (a created topic costs its replicas' fetches while it lives: in
# every seed, +14% actor inputs over seeds 1-20 x 50 steps; in half, about +7%)
ADMIN_SHARE = 0.25

# The bounds, all from Kafka's behaviour with every broker serving and connected (no timer of Kafka's is involved:
# the controller's work advances on events; the slowest step is a request retried every 100 ms by the controller's
# channel, a follower's fetch backing off replica.fetch.backoff.ms = 1 s after an error, a fetch parked
# replica.fetch.wait.max.ms = 500 ms):
# - a deletion: the TopicDeletionManager resumes it at a broker's startup (BrokerChange) or as soon as it is asked,
#   then StopReplica(deletePartition=false) and (true) to every replica, the state and topic znodes deleted — a few
#   round trips, well under a second; a StopReplica answered in error (a broker that had not registered yet,
#   STALE_BROKER_EPOCH) makes the topic ineligible until the next broker startup, which comes within the session
#   timeout (6 s) of the crash that caused it; so 6 s + the round trips, doubled for the checks' 1 s granularity;
DELETION_BOUND_MS = 15000.0
# - a reassignment: the new replica is started by LeaderAndIsr, truncates (OffsetsForLeaderEpoch), fetches the few
#   records (a fetch backed off 1 s after an error, at most a few times while the leader learns its LeaderAndIsr),
#   the leader expands the ISR in ZooKeeper at once (Partition.maybeExpandIsr), the controller sees it through its
#   watch on the state znode (PartitionReassignmentIsrChangeHandler, not the 2.5 s + 5 s isr_change notification)
#   and completes: a few seconds; a controller failover meanwhile resumes it (onControllerFailover); the bound as
#   the deletion's;
REASSIGNMENT_BOUND_MS = 15000.0
# - a follower's rejoining: see IsrRejoin.
ISR_REJOIN_BOUND_MS = 15000.0


@attrs.frozen
class AdminOp:
    step: int
    kind: str  # "create", "reassign", "delete"
    topic: str
    replicas: tuple[int, ...] = ()  # a create's assignment, a reassignment's target

    def __str__(self) -> str:
        return f"{self.kind} {self.topic}" + (f" {list(self.replicas)}" if self.replicas else "")


def admin_schedule(seed: int, steps: int, brokers: int) -> list[AdminOp]:
    """The seed's admin operations by step (none with fewer than 3 brokers or 6 steps: nowhere to move a replica,
    no time to do it)."""
    if brokers < 3 or steps < 6:
        return []
    rng = random.Random(f"admin-ops-{seed}")
    if rng.random() >= ADMIN_SHARE:
        return []
    create = rng.randint(1, max(1, steps // 4))
    first = rng.randrange(brokers)
    replicas = tuple((first + r) % brokers for r in range(EXTRA_RF))
    kept = rng.choice(replicas)
    added = next(b for b in range((first + EXTRA_RF) % brokers, brokers + first + EXTRA_RF)
                 if b % brokers not in replicas) % brokers
    target = (added, kept) if rng.random() < 0.5 else (kept, added)  # the new replica preferred leader, or not
    reassign = create + rng.randint(EXTRA_RECORDS, EXTRA_RECORDS + 4)
    delete = reassign + rng.randint(0, 8)
    keep = rng.random() < KEEP_SHARE
    ops = [AdminOp(create, "create", EXTRA_TOPIC, replicas)]
    if reassign < steps:
        ops.append(AdminOp(reassign, "reassign", EXTRA_TOPIC, target))
    if not keep and delete < steps:
        ops.append(AdminOp(delete, "delete", EXTRA_TOPIC))
    return ops


# A step's checks read each topic's assignment znode once a partition, and it seldom changes: decoded once per distinct
# (topic, data), a few hundred kept, as sim/client.py's partition states (0.6 % of a seed's time went to decoding it,
# cProfile of seeds 1-40 x 50, 2026-11-27). The answer is shared: not to be changed.
_DECODED_ASSIGNMENTS: dict[tuple[str, str | None], dict[TopicPartition, ReplicaAssignment]] = {}
_DECODED_ASSIGNMENTS_MAX = 512
# the topics' and brokers' znode paths, built once (the checks look them up every step; a path is three calls)
_topic_path = functools.lru_cache(maxsize=_DECODED_ASSIGNMENTS_MAX)(paths.TopicZNode.path)
_broker_path = functools.lru_cache(maxsize=64)(paths.BrokerIdZNode.path)


def _assignment(sim: Sim, topic: str) -> dict[TopicPartition, ReplicaAssignment] | None:
    node = sim.zk.nodes.get(_topic_path(topic))
    if node is None:
        return None
    key = (topic, node.data)
    decoded = _DECODED_ASSIGNMENTS.get(key)
    if decoded is None:
        if len(_DECODED_ASSIGNMENTS) >= _DECODED_ASSIGNMENTS_MAX:
            _DECODED_ASSIGNMENTS.clear()
        decoded = _DECODED_ASSIGNMENTS[key] = znodes.decode_topic_assignment(topic, node.data)
    return decoded


def _reassigning(sim: Sim) -> dict[TopicPartition, tuple[int, ...]]:
    node = sim.zk.nodes.get(paths.ReassignPartitionsZNode)
    if node is None:
        return {}
    try:
        return znodes.decode_reassign_partitions(node.data)
    except ValueError:  # Kafka treats an unparsable znode as no reassignment
        return {}


def _shard_rm(sim: Sim, broker_id: int, tp: TopicPartition) -> Any:
    """The replica manager of the shard ``tp`` lives in on a live broker, or None."""
    from actors import names
    from core.broker.shards import shard_of

    rt = sim.brokers[broker_id].rt
    if rt is None:
        return None
    count = sum(1 for n in rt.instances if n.startswith(names.SHARD_PREFIX))
    if not count:
        return None
    return getattr(rt.instances.get(names.shard(shard_of(tp, count))), "rm", None)


def hosts(sim: Sim, broker_id: int, tp: TopicPartition) -> str | None:
    """What a live broker still holds of ``tp``: its partition (online or offline) or its log; None if nothing."""
    rm = _shard_rm(sim, broker_id, tp)
    if rm is None:
        return None
    if tp in rm.all_partitions:
        return "a partition"
    if rm.log_manager.get_log(tp) is not None:
        return "a log"
    return None


def metadata_topics(sim: Sim, broker_id: int) -> set[str]:
    """The topics a live broker's metadata cache (its replica-manager actor's: what Metadata answers) names."""
    from actors import names

    rt = sim.brokers[broker_id].rt
    ra = None if rt is None else rt.instances.get(names.REPLICA_MANAGER)
    cache = getattr(ra, "metadata_cache", None)
    return set() if cache is None else set(cache.snapshot.partition_states)


def broker_ok(sim: Sim, b: int) -> bool:
    """Serving, not paused, not stopping, its log dir not failed, and registered on its current session."""
    br = sim.brokers[b]
    if not br.serving or br.paused or br.stopping or (br.disk is not None and br.disk.failed):
        return False
    node = sim.zk.nodes.get(_broker_path(b))
    return node is not None and node.ephemeral_owner == br.session


class AdminOps:
    """Applies a seed's admin operations at their steps and checks that each completes."""

    def __init__(self, sim: Sim, ops: list[AdminOp]) -> None:
        self.sim = sim
        self.ops = ops
        self.client = SimClient(sim)  # the extra topic's writer (its acks are checked here, not by the Checker)
        self.created: dict[str, tuple[int, ...]] = {}
        self.writes: dict[str, int] = {}  # records still to write, by topic
        self.deletions: dict[str, float] = {}  # topic -> when its deletion was asked
        # deletions asked while the topic's reassignment was still running: Kafka 2.6 starts them at once (below)
        self.during_reassignment: set[str] = set()
        self.replica_sets: dict[str, set[int]] = {}  # a topic being deleted: its replicas when last seen (any adding)
        self.deleted: dict[str, float] = {}  # topic -> when first seen deleted
        self.metadata_checked: set[str] = set()  # deleted topics whose absence from the metadata was looked at
        self.reported: set[object] = set()  # deletions and reassignments reported overdue (once each)
        self.reassignments: dict[TopicPartition, tuple[tuple[int, ...], tuple[int, ...], float]] = {}  # (from, to, at)
        self.reassigned: dict[TopicPartition, float] = {}  # first seen complete
        self.removed_watch: dict[tuple[TopicPartition, int], float] = {}  # removed replica -> completion time
        self.found: list[str] = []
        self.healthy_since: float | None = None
        self._healthy_mark: float | None = None
        self.waited: dict[str, float] = {}  # the longest healthy wait seen per kind (for calibrating the bounds)

    # -- the operations ---------------------------------------------------------------------------------------------
    def apply(self, step: int) -> None:
        for op in self.ops:
            if op.step != step:
                continue
            if op.kind == "create":
                self._create(op)
            elif op.kind == "reassign":
                self._reassign(op)
            else:
                self._delete(op)
        for topic, left in list(self.writes.items()):
            if topic in self.deletions or left <= 0:
                continue
            if self.client.produce(TopicPartition(topic, 0)):
                self.writes[topic] = left - 1

    def _create(self, op: AdminOp) -> None:
        """kafka-topics --create --zookeeper: AdminZkClient.createTopicWithAssignment writes the assignment znode."""
        tp = TopicPartition(op.topic, 0)
        data = znodes.encode_topic_assignment({tp: ReplicaAssignment(op.replicas)})
        self.sim.zk_admin(Create(paths.TopicZNode.path(op.topic), data))
        self.sim.note(f"admin: create topic {op.topic} {list(op.replicas)}")
        self.created[op.topic] = op.replicas
        self.writes[op.topic] = EXTRA_RECORDS

    def _reassign(self, op: AdminOp) -> None:
        """kafka-reassign-partitions --zookeeper --execute: ZkUtils/AdminZkClient creates /admin/reassign_partitions
        with the target replicas (the current assignment read first, as the tool prints it for a rollback)."""
        tp = TopicPartition(op.topic, 0)
        current = _assignment(self.sim, op.topic)
        if current is None or tp not in current or op.topic in self.deletions:
            return
        self.sim.zk_admin(Create(paths.ReassignPartitionsZNode, znodes.encode_reassign_partitions({tp: op.replicas})))
        self.sim.note(f"admin: reassign {tp.topic}-{tp.partition} {list(current[tp].replicas)} -> {list(op.replicas)}")
        self.reassignments[tp] = (current[tp].replicas, op.replicas, self.sim.now)

    def _delete(self, op: AdminOp) -> None:
        """kafka-topics --delete --zookeeper: AdminZkClient.deleteTopic creates /admin/delete_topics/<topic>."""
        self._note_replicas(op.topic)  # (a deletion may complete before the next check)
        self.sim.zk_admin(Create(paths.DeleteTopicsTopicZNode.path(op.topic), None))
        if any(tp.topic == op.topic and tp not in self.reassigned for tp in self.reassignments):
            self.during_reassignment.add(op.topic)
        self.sim.note(f"admin: delete topic {op.topic}")
        self.deletions[op.topic] = self.sim.now

    def _note_replicas(self, topic: str) -> None:
        ras = (_assignment(self.sim, topic) or {}).values()
        self.replica_sets[topic] = {b for ra in ras for b in ra.replicas + ra.adding_replicas}

    # -- what the other checks need ---------------------------------------------------------------------------------
    def live_partitions(self) -> list[TopicPartition]:
        """The extra topics' partitions not asked to be deleted (whose followers must rejoin their ISR)."""
        return [TopicPartition(t, 0) for t in sorted(self.created) if t not in self.deletions]

    # -- the invariants ---------------------------------------------------------------------------------------------
    def _update_health(self) -> None:
        sim = self.sim
        # no link cut either way, slow, or still delivering what it held (sim.healthy): a one-way cut or a slow link
        # stalls the controller's requests and the fetches as a cut does (seeds 434, 591, 594, 724, 818, 955)
        ok = sim.healthy() and all(broker_ok(sim, b) for b in sim.brokers)
        if not ok:
            self.healthy_since = self._healthy_mark = None
        elif self._healthy_mark != sim.last_fault_ms or self.healthy_since is None:
            # healthy since the later of the last fault and this check's first sight of it (a broker's registration
            # or a failed log dir is seen at the checks only)
            self._healthy_mark = sim.last_fault_ms
            self.healthy_since = sim.now

    def _overdue(self, asked: float, bound: float, kind: str) -> float | None:
        """How long a thing asked at ``asked`` has waited with the cluster healthy, if past ``bound``."""
        if self.healthy_since is None:
            return None
        waited = self.sim.now - max(asked, self.healthy_since)
        self.waited[kind] = max(self.waited.get(kind, 0.0), waited)
        return waited if waited > bound else None

    def deletion_done(self, topic: str) -> bool:
        nodes = self.sim.zk.nodes
        return paths.TopicZNode.path(topic) not in nodes and paths.DeleteTopicsTopicZNode.path(topic) not in nodes

    def reassignment_done(self, tp: TopicPartition, target: tuple[int, ...]) -> str | None:
        """None if complete, else what is not."""
        if tp in _reassigning(self.sim):
            return "its /admin/reassign_partitions entry is still there"
        assignment = _assignment(self.sim, tp.topic) or {}
        ra = assignment.get(tp)
        if ra is None:
            return "its topic has no assignment"
        if ra.replicas != target or ra.adding_replicas or ra.removing_replicas:
            return (f"its assignment is {list(ra.replicas)} (adding {list(ra.adding_replicas)}, removing "
                    f"{list(ra.removing_replicas)}), not the target {list(target)}")
        state = zk_partition_state(self.sim, tp)
        if state is None:
            return "it has no state znode"
        if not set(state.isr) <= set(target) or (state.leader >= 0 and state.leader not in target):
            return f"its leader b{state.leader} / ISR {list(state.isr)} not within the target {list(target)}"
        return None

    def check(self) -> list[str]:
        sim, now = self.sim, self.sim.now
        self._update_health()
        for topic, asked in sorted(self.deletions.items()):
            if topic in self.deleted:
                continue
            if not self.deletion_done(topic):
                self._note_replicas(topic)
            else:
                self.deleted[topic] = now
                # Kafka 2.6's processTopicDeletion marks a topic being reassigned ineligible for deletion before it
                # enqueues it, and markTopicIneligibleForDeletion only marks queued topics: the deletion starts at
                # once, deletes the replicas it can, and a reassignment resumed at a broker's startup then sends
                # LeaderAndIsr to its replicas again (the NewReplica transition of a ReplicaDeletionSuccessful
                # replica fails, the request goes anyway): those brokers keep a partition of the deleted topic
                # (seed 4). kactor does as 2.6 does; not asserted then
                if topic in self.during_reassignment:
                    continue
                # only its replicas': a broker that was one but had been removed from it while down (a reassignment
                # completes without the dead removed replica, whose StopReplica is never sent) keeps its log, and
                # a partition if a LeaderAndIsr for it was waiting in a paused broker's socket; Kafka 2.6 in ZooKeeper
                # mode never deletes such a stray log (seeds 45 and 68)
                for b in sorted(self.replica_sets.get(topic, ())):
                    held = None if sim.brokers[b].paused else hosts(sim, b, TopicPartition(topic, 0))
                    if held is not None:
                        self.found.append(f"topic {topic} deleted at {now - START_MS:.0f} ms but b{b} still holds "
                                          f"{held} of {topic}-0")
                continue
            waited = self._overdue(asked, DELETION_BOUND_MS, "deletion")
            if waited is not None and topic not in self.reported:
                self.reported.add(topic)
                self.found.append(f"topic {topic}: deletion asked at {asked - START_MS:.0f} ms not complete after "
                                  f"{waited:.0f} ms with the cluster healthy")
        for topic, at in sorted(self.deleted.items()):
            if topic in self.metadata_checked or self._overdue(at, DELETION_BOUND_MS, "metadata") is None:
                continue
            self.metadata_checked.add(topic)
            for b in sorted(sim.brokers):
                if sim.brokers[b].up and topic in metadata_topics(sim, b):
                    self.found.append(f"topic {topic} deleted at {at - START_MS:.0f} ms still in b{b}'s metadata "
                                      f"with the cluster healthy since {self.healthy_since - START_MS:.0f} ms")
        for tp, (origin, target, asked) in sorted(self.reassignments.items()):
            if tp in self.reassigned or tp in self.reported or tp.topic in self.deleted:
                continue
            missing = self.reassignment_done(tp, target)
            if missing is None:
                self.reassigned[tp] = now
                if self.healthy_since is not None and self.healthy_since < now - 1000.0:
                    for r in origin:
                        if r not in target:
                            self.removed_watch[(tp, r)] = now
                continue
            waited = self._overdue(asked, REASSIGNMENT_BOUND_MS, "reassignment")
            if waited is not None:
                self.reported.add(tp)
                self.found.append(f"{tp.topic}-{tp.partition}: reassignment {list(origin)} -> {list(target)} asked at "
                                  f"{asked - START_MS:.0f} ms not complete after {waited:.0f} ms with the cluster "
                                  f"healthy: {missing}")
        for (tp, r), at in sorted(self.removed_watch.items()):
            if self.healthy_since is None or self.healthy_since > at:
                del self.removed_watch[(tp, r)]  # a fault since: its StopReplica may have been lost with it
            elif now - at > REASSIGNMENT_BOUND_MS:
                del self.removed_watch[(tp, r)]
                held = hosts(sim, r, tp)
                if held is not None:
                    self.found.append(f"{tp.topic}-{tp.partition}: replica b{r} removed by the reassignment completed "
                                      f"at {at - START_MS:.0f} ms still holds {held} of it with the cluster healthy")
        return list(self.found)

    def settled(self) -> bool:
        """Every deletion and reassignment complete, the extra topics' writes answered."""
        if self.client.outstanding:
            return False
        if any(not self.deletion_done(t) for t in self.deletions):
            return False
        if not all(self.reassignment_done(tp, target) is None for tp, (_, target, _) in self.reassignments.items()
                   if tp.topic not in self.deletions):
            return False
        for tp in self.live_partitions():
            ra = (_assignment(self.sim, tp.topic) or {}).get(tp)
            state = zk_partition_state(self.sim, tp)
            if ra is None or state is None or state.leader < 0 or sorted(state.isr) != sorted(ra.replicas):
                return False
        return True

    def check_final(self) -> list[str]:
        """At the end (every broker up, every link healed, the cluster settled; `check` ran just before): every
        deletion and reassignment complete, the extra topics left in sync and their acknowledged records on their
        leader."""
        out = []
        for topic in sorted(self.deletions):
            if not self.deletion_done(topic):
                out.append(f"topic {topic}: deletion asked at {self.deletions[topic] - START_MS:.0f} ms not complete "
                           f"at the end")
        for tp, (origin, target, _) in sorted(self.reassignments.items()):
            if tp.topic in self.deletions:
                continue
            missing = self.reassignment_done(tp, target)
            if missing is not None:
                out.append(f"{tp.topic}-{tp.partition}: reassignment {list(origin)} -> {list(target)} not complete at "
                           f"the end: {missing}")
        for tp in self.live_partitions():
            ra = (_assignment(self.sim, tp.topic) or {}).get(tp)
            state = zk_partition_state(self.sim, tp)
            isr = [] if state is None else sorted(state.isr)
            if ra is None or isr != sorted(ra.replicas):
                out.append(f"{tp.topic}-{tp.partition}: ISR {isr} at the end, not every replica "
                           f"{None if ra is None else sorted(ra.replicas)}")
        for ack in self.client.acks:
            if ack.tp.topic in self.deletions:
                continue
            state = zk_partition_state(self.sim, ack.tp)
            p = None if state is None or state.leader < 0 else hosted_partition(self.sim, state.leader, ack.tp)
            found = None if p is None or p.log is None else value_at(p.log, ack.offset)
            if found != ack.value and self.sim.lost_to_power(ack.tp, ack.answered_ms) is None:
                out.append(f"{ack.tp.topic}-{ack.tp.partition}: acknowledged {ack.value!r} at offset {ack.offset}, "
                           f"its leader has {found!r} at the end")
        return out


class IsrRejoin:
    """A follower rejoins the ISR within ISR_REJOIN_BOUND_MS once it can.

    A follower f of a partition whose state znode names leader L, with /controller naming C: once f, L and C are
    each serving (not paused, not stopping, their log dirs working, registered on their current sessions) and the
    links f-L, f-C and L-C are not cut, with the same L, C and incarnations, for ISR_REJOIN_BOUND_MS (measured from
    the first check that saw it so), f must be in the ISR in ZooKeeper. Why that long, from Kafka's behaviour:

    - f follows only once C's LeaderAndIsr reaches it (after its startup, C's BrokerChange sends it; the channel
      retries every 100 ms until it is answered), then truncates (OffsetsForLeaderEpoch) and fetches; a fetch that
      fails (L has not had its own LeaderAndIsr yet: NOT_LEADER_OR_FOLLOWER, a fenced epoch) backs off
      replica.fetch.backoff.ms (1 s) and the fetcher retries;
    - L adds f once f's log end reaches L's high watermark and L's leader-epoch start (Partition.maybeExpandIsr, at
      f's fetch; fetches parked replica.fetch.wait.max.ms, 500 ms) and writes the state znode itself (not through the
      2.5 s + 5 s isr_change notification, which only tells the controller for UpdateMetadata); a write refused for
      a stale zkVersion (C changed the znode meanwhile) waits for C's LeaderAndIsr carrying the new version, which
      C sends with every change it makes;
    - replica.lag.time.max.ms (30 s) bounds only the leaving of the ISR, not the rejoining: a follower connected to
      its leader that is out must be catching up.

    So a few seconds: 15 s allows three fetch back-offs, a LeaderAndIsr retried for seconds and a controller
    failover (a new controller's onControllerFailover sends every partition's LeaderAndIsr) on top of the checks'
    1 s granularity. The partitions looked at: `sim`'s and the extra topics' not being deleted; the replicas: the
    assignment's, less any a reassignment is removing.
    """

    def __init__(self, sim: Sim) -> None:
        self.sim = sim
        self.since: dict[tuple[TopicPartition, int], tuple[tuple[int, ...], float]] = {}
        self.found: list[str] = []
        self.reported: set[tuple[TopicPartition, int, tuple[int, ...]]] = set()
        self.waited = 0.0  # the longest wait seen (for calibrating the bound)
        self._controller: tuple[str | None, int | None] = (None, None)  # /controller's data and its broker id

    def check(self, partitions: list[TopicPartition]) -> list[str]:
        sim, now = self.sim, self.sim.now
        node = sim.zk.nodes.get(paths.ControllerZNode)
        data = node.data if node is not None else None
        if data != self._controller[0]:  # decoded once a change of /controller (the same text decodes the same)
            self._controller = (data, znodes.decode_controller(data))
        controller = self._controller[1]
        ok = {b: broker_ok(sim, b) for b in sim.brokers}
        # every link's link_ok at once while no link is cut or slow (the common case): whether what was held or
        # slowed has drained
        all_links_ok = None if sim.cut or sim.one_way or sim.slow else now >= sim.drained_ms
        brokers = sim.brokers
        seen: set[tuple[TopicPartition, int]] = set()
        assignments: dict[str, dict[TopicPartition, ReplicaAssignment] | None] = {}
        for tp in partitions:
            state = zk_partition_state(sim, tp)
            if tp.topic not in assignments:
                assignments[tp.topic] = _assignment(sim, tp.topic)
            ra = (assignments[tp.topic] or {}).get(tp)
            if state is None or ra is None or state.leader < 0 or controller is None:
                continue
            leader = state.leader
            for f in ra.replicas:
                if f == leader or f in ra.removing_replicas:
                    continue
                if not (ok.get(f, False) and ok.get(leader, False) and ok.get(controller, False)
                        and (all_links_ok if all_links_ok is not None else sim.link_ok(f, leader)
                             and sim.link_ok(f, controller) and sim.link_ok(leader, controller))):
                    continue
                key = (tp, f)
                sig = (leader, controller, brokers[f].incarnation, brokers[leader].incarnation,
                       brokers[controller].incarnation)
                seen.add(key)
                first = self.since.get(key)
                if first is None or first[0] != sig:
                    self.since[key] = first = (sig, now)
                if f in state.isr:
                    continue
                waited = now - first[1]
                self.waited = max(self.waited, waited)
                if waited > ISR_REJOIN_BOUND_MS and (tp, f, sig) not in self.reported:
                    self.reported.add((tp, f, sig))
                    self.found.append(f"{tp.topic}-{tp.partition}: follower b{f} out of the ISR {list(state.isr)} for "
                                      f"{waited:.0f} ms while it, leader b{leader} and controller b{controller} were "
                                      f"serving and connected")
        for key in [k for k in self.since if k not in seen]:
            del self.since[key]
        return list(self.found)


__all__ = ["AdminOp", "AdminOps", "IsrRejoin", "admin_schedule", "DELETION_BOUND_MS", "REASSIGNMENT_BOUND_MS",
           "ISR_REJOIN_BOUND_MS", "EXTRA_TOPIC"]
