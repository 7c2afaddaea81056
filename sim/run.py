"""One seed of `kactor sim`: start the cluster, create an RF-3 topic, then ``steps`` steps of produce + faults,
checking the invariants after each; at the end heal everything, restart every broker, let the cluster settle and
check that nothing acknowledged is lost."""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Callable

import attrs

from core.controller.errors import StateChangeFailedError
from core.coordinator.group.find_coordinator import InternalTopic, assign_replicas, offsets_topic, transaction_topic
from core.zk_client import TOPIC_CONFIG_TYPE
from messages.common import ReplicaAssignment, TopicPartition
from messages.group import GroupCoordinatorConfig
from messages.transaction import TransactionCoordinatorConfig
from messages.zk import Create, Multi
from protocol.zk import paths, znodes
from sim.admin_ops import AdminOps, IsrRejoin, admin_schedule
from sim.client import SimClient, zk_partition_state
from sim.clients import Clients
from sim.coordinator_loads import LoadChecks
from sim.faults import STEP_MS, schedule
from sim.groups import STABLE_BOUND_MS, Group, GroupChecks, grouped
from sim.hostile import HostileChecks, HostileClient
from sim.invariants import Checker, hosted_partition
from sim.runtime import START_MS, Boot, Sim
from sim.transactions import Transactions, transactional
from sim.txn_checker import check as check_transactions
from sim.txn_checker import table
from sim.txn_workload import PARTITIONS as TXN_PARTITIONS
from sim.txn_workload import TOPIC as TXN_TOPIC
from sim.txn_workload import TxnWorkload
from sim.workload import writes

TOPIC = "sim"
PARTITIONS = 2
SETTLE_MS = 20000.0  # the end: time for restarted brokers to catch up and rejoin the ISR, at most
START_MS_MAX = 2000.0  # the start-up: the brokers serving with a controller, then the topic's partitions led, each
SETTLE_CHECK_MS = 500.0  # how often the settling looks whether the cluster has settled
# the schedule's faults that take a broker down (sim/faults.py): --txn-check's coordinator move keeps clear of them
OUTAGES = frozenset({"crash", "power-loss", "logdir-fail", "crash-restart", "stop", "pause", "pause-mid"})
MOVE_QUIET_MS = 10000.0  # and only once the cluster has been whole that long (a restarted broker back in its ISRs)
READ_TO_END_MS = 5000.0  # after it: the read_committed consumer's time to read every partition to its end, at most


# KafkaController.updateLeaderEpoch's abort when a newer controller wrote the partition's state: a zombie controller
# fenced, which Kafka's ControllerEventManager logs as "Error processing event" with the exception, as kactor does
ZOMBIE_FENCED = re.compile(r"Leader and isr path written by another controller\. This probably means the current "
                           r"controller with epoch (\d+) went through a soft failure")


class ActorErrors(logging.Handler):
    """Every error an actor logs with its exception during a run (a handler that raised: KActor, the controller's
    event loop, a shard's procedure catch and log it): a defect whatever the fault, so a violation — but for a
    zombie controller's StateChangeFailedError on a state a newer controller wrote, while /controller_epoch is
    indeed newer than its epoch: Kafka's own fencing (seed 9863: paused controller b1, epoch 2, handles a
    BrokerChange after b0 was elected with epoch 3)."""

    def __init__(self, sim: Sim) -> None:
        super().__init__(logging.ERROR)
        self.sim = sim
        self.found: list[str] = []
        self.fenced: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if not record.exc_info:
            return
        exc = record.exc_info[1]
        fenced = ZOMBIE_FENCED.match(str(exc)) if isinstance(exc, StateChangeFailedError) else None
        at = f"at {self.sim.now - START_MS:.3f} ms: {record.getMessage()}"
        if fenced is not None and self.sim.controller_epoch() > int(fenced.group(1)):
            self.fenced.append(at)
            self.sim.note(f"a zombie controller of epoch {fenced.group(1)} fenced: {record.getMessage()}")
        else:
            self.found.append(at)


@attrs.frozen
class SeedResult:
    seed: int
    steps: int
    violations: tuple[str, ...]
    acks: int
    answers: int
    delivered: int
    sim_ms: float
    wall_s: float
    event_digest: str
    cpu_s: float = 0.0  # the process's CPU time for the seed (wall_s less what other work took of the cores)
    txn_report: str = ""  # --txn-check: the checker's table of the seed's anomalies ("" when clean or off)
    txn_summary: str = ""  # --txn-check: what the workload did (transactions, faults), one line
    # --txn-check: anomalies a 2.6 client cannot be kept from (sim/txn_checker.py's ``known``), which do not fail it
    txn_known: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.violations


def create_topic(sim: Sim, topic: str, partitions: int, rf: int) -> dict[TopicPartition, tuple[int, ...]]:
    """kafka-topics --create --zookeeper: the assignment znode (replicas rotated over the brokers)."""
    n = len(sim.brokers)
    assignment = {TopicPartition(topic, p): tuple((p + r) % n for r in range(rf)) for p in range(partitions)}
    data = znodes.encode_topic_assignment({tp: ReplicaAssignment(r) for tp, r in assignment.items()})
    sim.zk_admin(Create(paths.TopicZNode.path(topic), data))
    sim.note(f"create topic {topic} {partitions}x{rf}")
    return assignment


def create_internal_topic(sim: Sim, topic: InternalTopic) -> dict[TopicPartition, tuple[int, ...]]:
    """An internal topic (``__consumer_offsets``, ``__transaction_state``) as a live cluster ends up with it once a
    client's FindCoordinator made a coordinator create it (KafkaApis.createInternalTopic through
    core/coordinator/group/find_coordinator.py's create_internal_topic: AdminZkClient.createTopicWithAssignment's
    topic config and assignment in one transaction, the coordinator's configs and placement), created up front so the
    coordinator is loaded before the clients ask. ``topic``: find_coordinator's offsets_topic or transaction_topic of
    the brokers' own config (kactor/sim_boot.py's SIM_PROPERTIES: 1 partition, RF 3)."""
    rf = min(topic.replication_factor, len(sim.brokers))
    placed = assign_replicas(sorted(sim.brokers), topic.num_partitions, rf, topic.name)
    sim.zk_admin(Multi((Create(paths.ConfigEntityZNode.path(TOPIC_CONFIG_TYPE, topic.name),
                               znodes.encode_config_entity(dict(topic.configs))),
                        Create(paths.TopicZNode.path(topic.name), znodes.encode_topic_assignment(placed)))))
    sim.note(f"create topic {topic.name} {topic.num_partitions}x{rf}")
    return {tp: r.replicas for tp, r in placed.items()}


def create_offsets_topic(sim: Sim) -> dict[TopicPartition, tuple[int, ...]]:
    """``__consumer_offsets``, of the brokers' offsets.topic.* settings: the sim's group has a coordinator from the
    start."""
    b = min(sim.brokers)
    return create_internal_topic(sim, offsets_topic(GroupCoordinatorConfig.from_kafka_config(
        sim.boot.config(b, sim.brokers[b].log_dir))))


def create_transaction_state_topic(sim: Sim) -> dict[TopicPartition, tuple[int, ...]]:
    """``__transaction_state``, of the brokers' transaction.state.log.* settings (a transactional seed's)."""
    b = min(sim.brokers)
    return create_internal_topic(sim, transaction_topic(TransactionCoordinatorConfig.from_kafka_config(
        sim.boot.config(b, sim.brokers[b].log_dir))))


def _restart(sim: Sim, due: list[int]) -> list[int]:
    """Start the brokers due that are down and whose last session is gone; the others stay due (a stop still
    running its controlled shutdown is ended by a kill first, as an operator's script would)."""
    later = []
    for b in dict.fromkeys(due):  # once each: an outage scheduled while a deferred restart waited adds it again
        broker = sim.brokers[b]
        if broker.up and broker.stopping:
            sim.crash(b, reason="killed (its controlled shutdown still running)")
        if broker.up:
            continue  # running already: nothing to start (an entry left from a crash or stop that found it down)
        if not sim.session_gone(b):
            later.append(b)
        else:
            sim.start(b)
    return later


@attrs.define
class Cluster:
    """A started cluster with its topic, before the seed's faults."""

    sim: Sim
    errors: ActorErrors
    assignment: dict[TopicPartition, tuple[int, ...]]
    loads: LoadChecks | None = None  # every coordinator load of the run, checked as it ends (sim/coordinator_loads.py)

    def close(self) -> None:
        logging.getLogger().removeHandler(self.errors)
        if self.loads is not None:
            self.loads.close()
        self.sim.close()


def run_until(sim: Sim, ready: Callable[[], bool], most_ms: float, every_ms: float = 100.0) -> None:
    """Run the simulation until ``ready()`` holds, looking every ``every_ms``, for ``most_ms`` at most."""
    end = sim.now + most_ms
    while sim.now < end:
        sim.run_for(min(every_ms, end - sim.now))
        if ready():
            return


def topic_ready(sim: Sim, assignment: dict[TopicPartition, tuple[int, ...]]) -> bool:
    """Every partition led, its ISR all its replicas, its leader leading it at ZooKeeper's epoch and each follower
    hosting it."""
    for tp, replicas in assignment.items():
        state = zk_partition_state(sim, tp)
        if state is None or state.leader < 0 or sorted(state.isr) != sorted(replicas):
            return False
        for b in replicas:
            p = hosted_partition(sim, b, tp)
            if p is None or p.leader_epoch != state.leader_epoch or p.is_leader != (b == state.leader):
                return False
    return True


def start_cluster(seed: int, boot: Boot, brokers: int = 3, trace_dir: str | None = None,
                  scratch: str | None = None, txn_check: bool = False) -> Cluster:
    """Start ``brokers`` brokers on an empty ZooKeeper, wait for them to serve with a controller, create the topic
    and wait for its partitions to be led with every replica in sync (a few hundred ms of simulated time).
    ``txn_check``: also the transactional workload's topic and both internal topics (sim/txn_workload.py)."""
    sim = Sim(seed, boot, brokers, trace_dir=trace_dir, scratch=scratch)
    errors = ActorErrors(sim)
    logging.getLogger().addHandler(errors)
    loads = LoadChecks(sim).install()
    try:
        for b in sim.brokers:
            sim.start(b)
        run_until(sim, lambda: all(b.serving for b in sim.brokers.values()) and paths.ControllerZNode in sim.zk.nodes,
                  START_MS_MAX)
        assignment = create_topic(sim, TOPIC, PARTITIONS, min(3, brokers))
        # at once: the seed's steps start when they started before they existed
        internal = {**(create_offsets_topic(sim) if grouped(seed) or txn_check else {}),
                    **(create_transaction_state_topic(sim) if transactional(seed) or txn_check else {})}
        if txn_check:
            internal.update(create_topic(sim, TXN_TOPIC, TXN_PARTITIONS, min(3, brokers)))
        run_until(sim, lambda: topic_ready(sim, {**assignment, **internal}), START_MS_MAX)
    except BaseException:
        logging.getLogger().removeHandler(errors)
        loads.close()
        sim.close()
        raise
    return Cluster(sim, errors, assignment, loads)


def run_seed(seed: int, steps: int, boot: Boot, brokers: int = 3, trace_dir: str | None = None,
             tamper: Callable[[Sim, int], None] | None = None, fast: bool = True,
             scratch: str | None = None, txn_check: bool = False, digest: bool = True) -> SeedResult:
    """One seed from scratch: the cluster started, then `play`. ``tamper(sim, step)``, for tests: called before each
    step's check (a deliberately broken run). ``fast=False`` runs the plain path of what has a faster one (the
    checks' parsed-batch cache), to prove them equal. ``scratch``: the folder the run's log dirs go under (default
    tmpfs). ``txn_check``: the transactional workload and its checker too (sim/txn_workload.py, sim/txn_checker.py),
    whose anomalies fail the seed. ``digest`` False: no event digest (`SeedResult.event_digest` empty)."""
    t0, c0 = time.perf_counter(), time.process_time()
    cluster = start_cluster(seed, boot, brokers, trace_dir=trace_dir, scratch=scratch, txn_check=txn_check)
    try:
        return play(cluster, seed, steps, tamper=tamper, fast=fast, t0=t0, c0=c0, txn_check=txn_check,
                    digest=digest)
    finally:
        cluster.close()


def play(cluster: Cluster, seed: int, steps: int, tamper: Callable[[Sim, int], None] | None = None,
         fast: bool = True, t0: float | None = None, c0: float | None = None, txn_check: bool = False,
         digest: bool = True) -> SeedResult:
    """A seed's faults, produces and checks on a started cluster, then the healing, the settling and the final
    checks."""
    t0 = time.perf_counter() if t0 is None else t0
    c0 = time.process_time() if c0 is None else c0
    sim, errors, assignment = cluster.sim, cluster.errors, cluster.assignment
    client = SimClient(sim)
    clients = Clients(sim)  # the idempotent, acks=1 and acks=0 producers and the consumer (sim/clients.py)
    # the transactional producer and the read_committed consumer (sim/transactions.py), on a share of the seeds
    txns = Transactions(sim) if transactional(seed) else None
    partitions = sorted(assignment)
    # a consumer group's two members (sim/groups.py), on a share of the seeds
    group = Group(sim, TOPIC, partitions) if grouped(seed) else None
    # the seed's admin operations (sim/admin_ops.py: an extra topic created, reassigned, deleted) and the checks that
    # each completes and that a follower able to rejoin its ISR does
    admin = AdminOps(sim, admin_schedule(seed, steps, len(sim.brokers)))
    # the hostile client (sim/hostile.py), started by the seed's "hostile" fault if it has one
    hostile = HostileClient(sim, partitions, transactional(seed))
    checker = Checker(sim, client, partitions, assignment, fast=fast, clients=clients, txns=txns,
                      groups=GroupChecks(group) if group is not None else None, admin=admin, rejoin=IsrRejoin(sim),
                      hostile=HostileChecks(hostile), loads=cluster.loads)
    faults = schedule(seed, steps, len(sim.brokers))
    plan = writes(seed, steps, len(assignment))
    at_step = [0]
    # --txn-check: the transactional workload (sim/txn_workload.py); it moves a coordinator only while the cluster is
    # healthy and no outage of the schedule comes within a restart's time, so at most one broker is down at a time
    workload = TxnWorkload(sim, [TopicPartition(TXN_TOPIC, p) for p in range(TXN_PARTITIONS)],
                           lambda: sim.healthy() and sim.now - sim.last_fault_ms >= MOVE_QUIET_MS
                           and not any(f.kind in OUTAGES and 0 <= f.step - at_step[0] <= 9 for f in faults)
                           ) if txn_check else None
    violations: list[str] = []
    txn_report = txn_summary = ""
    txn_known: tuple[str, ...] = ()
    restarts: list[int] = []  # brokers due to start again (once down, and their old session gone)
    for step in range(steps):
        at_step[0] = step
        restarts = _restart(sim, restarts)
        for f in (f for f in faults if f.step == step):
            if f.kind == "crash":
                sim.crash(f.a)
            elif f.kind == "power-loss":
                sim.power_loss(f.a)
            elif f.kind == "logdir-fail":
                sim.fail_log_dir(f.a)
            elif f.kind == "crash-restart":
                sim.crash(f.a)
                sim.at(f.after_ms, lambda b=f.a: None if sim.brokers[b].up else sim.start(b))
            elif f.kind == "stop":
                sim.stop(f.a)
            elif f.kind == "restart":
                restarts.append(f.a)
            elif f.kind == "pause":
                sim.pause(f.a)
            elif f.kind == "pause-mid":
                sim.pause_at_next_zk_request(f.a, STEP_MS)
            elif f.kind == "resume":
                sim.resume(f.a)
            elif f.kind == "partition":
                sim.partition(f.a, f.b)
            elif f.kind == "one-way":
                sim.one_way_cut(f.a, f.b)
            elif f.kind == "slow-link":
                sim.slow_link(f.a, f.b, f.latency_ms)
            elif f.kind == "reset":
                sim.reset_link(f.a, f.b)
            elif f.kind == "hostile":
                hostile.start(lambda: create_transaction_state_topic(sim))
            else:
                sim.heal(f.a, f.b)
        restarts = _restart(sim, restarts)
        admin.apply(step)
        for tp, write in zip(partitions, plan[step], strict=True):
            if write:
                client.produce(tp)
        clients.step(step, partitions)
        if txns is not None:
            txns.step(step, partitions)
        if group is not None:
            group.step(step)
        if workload is not None:
            workload.step(step)
        sim.run_for(STEP_MS)
        if tamper is not None:
            tamper(sim, step)
        violations = [f"an actor raised {e}" for e in errors.found] + checker.check()
        if violations:
            break
    if workload is not None:
        workload.end_faults()  # the steps are over: no more coordinator moves while the cluster heals and settles
    if not violations:
        for a, b in sim.faulty_links():
            sim.heal(a, b)
        for b in [b for b, br in sim.brokers.items() if br.paused]:
            sim.resume(b)
        # a broker whose log dir failed and that has not halted yet (no I/O since) will: the operator stops it, and
        # it restarts on a new disk with the others (seed 64: b0's dir fails at 48.2 s, it halts at 51.2 s)
        for b, br in sim.brokers.items():
            if br.up and br.disk is not None and br.disk.failed:
                sim.crash(b, reason="killed (its log dir failed)")
        # a broker still in its controlled shutdown is about to be down too: it restarts with the others
        down = [b for b, br in sim.brokers.items() if not br.up or br.stopping or b in restarts]
        # each down broker starts as soon as its old session is gone (a crashed one's expires within the session
        # timeout), then the cluster settles until it is as the final checks want it, SETTLE_MS at most
        while down:
            down = _restart(sim, down)
            if down:
                if group is not None:
                    group.tick()  # the group's members go on heartbeating through the end (no fetches, no commits due)
                sim.run_for(STEP_MS)
        settle_end = max(sim.now, sim.drained_ms) + SETTLE_MS  # a healed slow link's frames arrive first
        while sim.now < settle_end:
            if group is not None:
                group.tick()
            sim.run_for(min(SETTLE_CHECK_MS, settle_end - sim.now))
            if checker.settled():
                break
        # the group may need longer than the brokers (a member id left from before the faults times out): its own
        # bound, from when the cluster was whole again, its members still stepping
        while (group is not None and group.stable() is not None
               and sim.now - max(sim.last_fault_ms, group.last_restart_ms) < STABLE_BOUND_MS):
            group.tick()
            sim.run_for(STEP_MS)
        read_to_end = txns is None or txns.read_to_end(partitions, READ_TO_END_MS)
        violations = [f"an actor raised {e}" for e in errors.found] + checker.check_final(read_to_end)
        if workload is not None:
            workload.finish()
            anomalies = check_transactions(workload.history())
            violations += [f"txn-check: {a}" for a in anomalies if not a.known]
            txn_known = tuple(str(a) for a in anomalies if a.known)
            if anomalies:
                txn_report = table(anomalies, head=f"txn-check seed {seed}: {len(anomalies)} anomalies"
                                                   f"{f', {len(txn_known)} known' if txn_known else ''}")
    if workload is not None:
        txn_summary = workload.summary()
    # the event log written out only for a digest asked for (scripts/sim_digests.py, the tests): `kactor sim` shows none
    event_digest = hashlib.sha256("\n".join(sim.events).encode()).hexdigest()[:16] if digest else ""
    return SeedResult(seed, steps, tuple(violations), len(client.acks), len(client.answers), sim.delivered,
                      sim.now - START_MS, time.perf_counter() - t0, event_digest, time.process_time() - c0, txn_report,
                      txn_summary, txn_known)
