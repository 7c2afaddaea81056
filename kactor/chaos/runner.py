"""One seed of `kactor chaos` against real processes: a ZooKeeper (standalone or an ensemble), N broker processes,
a producer recording every acknowledged record, a sampler of the cluster's state, the seed's steps, healing, and
the checks.

The run's own timeline (events.log), the samples, the acknowledged records and the violations are written into the
seed's folder with the brokers' traces and logs; the folder is removed when the seed is clean unless asked to keep
it. Everything started here is stopped in `close()`, also when the run is interrupted.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

import attrs
from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from edges.net_faults import FAULTS_ENV, endpoint, write_rules
from kactor.chaos import checks, cluster_state
from kactor.chaos.answers import broker_log_answers
from kactor.chaos.checks import check_data, check_duplicates, check_safety, check_server_errors, stuck_operations
from kactor.chaos.client import DataClient, ProduceError
from kactor.chaos.cluster_state import final_partitions, partition_state, sample_cluster, snapshot_cluster
from kactor.chaos.delay_proxy import DelayProxy, ProxiedCluster, delay_draws, proxied_cluster, proxies_bootstrap
from kactor.chaos.gaps import ack_gaps, check_gaps, faults_behind, gap_bound_s, longest
from kactor.chaos.history import (
    TP,
    Ack,
    ClusterSnapshot,
    ErrorAnswer,
    FinalPartition,
    MinIsrSetting,
    Outage,
    Read,
    Sample,
    Send,
    Violation,
)
from kactor.chaos.hostile import ChaosHostileClient, hostile_step
from kactor.chaos.kafka_client import bootstrap, kafka_data_client, security
from kactor.chaos.loads import failed_loads
from kactor.chaos.schedule import Step, make_schedule
from kactor.chaos.slips import SLIP_EXIT_S, SlipOutcome, judge, slip_args, slip_broker_id
from kactor.chaos.txn_check import TxnCheckWorkload
from kactor.chaos.txn_workload import TxnWorkload
from kactor.cluster import LocalCluster
from kactor.kafka_clients import CLOSE_TIMEOUT_S
from messages.common import TopicPartition
from protocol.zk import paths, znodes

log = logging.getLogger("kactor.chaos")

SAMPLE_INTERVAL_S = 0.2
PRODUCE_PAUSE_S = 0.03
ZK_TICK_MS = 500  # ZooKeeper grants sessions from 2 ticks (1 s) and elects a new leader within a second or two
@attrs.frozen(slots=True)
class ChaosConfig:
    seed: int
    steps: int
    brokers: int = 3
    zk_servers: int = 1
    session_timeout_ms: int = 3000
    replica_lag_time_max_ms: int = 3000  # a cut or frozen follower leaves the ISR within the fault
    request_timeout_s: float = 30.0  # the producer's request.timeout.ms: Kafka's default, what an application waits
    settle_s: float = 30.0  # after a step: every broker back and registered
    # before the first step: nothing is measured yet, and on a loaded machine (load 15: seven seeds of one campaign)
    # three brokers and a ZooKeeper ensemble took over 30 s to start and register
    startup_s: float = 120.0
    liveness_s: float = 90.0  # after healing: deletions, reassignments, elections done and every partition led
    quiesce_s: float = 30.0  # then: full ISRs with equal logs, before the logs are read
    trace: bool = True
    transactions: bool = True  # a consume-transform-produce loop with transactions beside the producer
    # the Jepsen-style transactional workload judged by sim/txn_checker.py (kactor/chaos/txn_check.py), and (on a
    # PLAINTEXT cluster) the connection delays of its producers through the proxies (kactor/chaos/delay_proxy.py)
    txn_check: bool = True
    security: str = "plaintext"  # the brokers' listener, between them too (LocalCluster's, kactor cluster's)


@attrs.frozen(slots=True)
class SeedResult:
    seed: int
    steps: int
    faults: dict[str, int]
    acked: int
    violations: tuple[Violation, ...]
    duration_s: float
    folder: str | None  # kept folder (traces, logs, events) or None
    error: str | None = None  # the run itself failed (not an invariant)
    longest_gap_s: float | None = None  # the producer's longest acknowledgement gap (kactor/chaos/gaps.py)
    gap_bound_s: float | None = None
    # the transaction checker's (kactor/chaos/txn_check.py): outcomes counted, its anomalies' table (None: clean)
    txn_outcomes: dict[str, int] | None = None
    anomaly_table: str | None = None
    delays: int = 0  # the checked producers' connections held (kactor/chaos/delay_proxy.py)
    known_anomalies: int = 0  # the checker's anomalies a 2.6 client cannot be kept from (in the table, not violations)
    client_resends: int = 0  # extra copies the producer itself re-sent under a new epoch (checks.client_resends)

    @property
    def ok(self) -> bool:
        return not self.violations and self.error is None

    def count(self, kind: str) -> int:
        return sum(1 for v in self.violations if v.kind == kind)


# Kafka's Topic.isInternal: the brokers' own topics, which no client produces to (the group coordinator creates
# __consumer_offsets when the data client's consumer looks its coordinator up)


class Interrupted(Exception):  # noqa: N818 - a stop request, not an error
    pass


class ChaosRun:
    """Runs one seed; `run()` returns its SeedResult. ``on_step(i)`` is called after each step (progress)."""

    def __init__(self, config: ChaosConfig, folder: str, *, keep: bool = False,
                 client_factory: Callable[[LocalCluster], DataClient] | None = None,
                 on_step: Callable[[int], None] | None = None) -> None:
        self.cfg = config
        self.folder = os.path.abspath(folder)
        self.keep = keep
        self.client_factory = client_factory or (
            lambda cluster: kafka_data_client(cluster, config.request_timeout_s))
        self.on_step = on_step or (lambda i: None)
        self.cluster: LocalCluster | None = None
        self.zk: KazooClient | None = None
        self.fault_file = os.path.join(self.folder, "net-faults.json")
        self._t0 = time.monotonic()
        self._events = open(os.devnull, "w")  # noqa: SIM115 - replaced in run()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._traffic_done = threading.Event()
        self._producer: threading.Thread | None = None
        self.txn: TxnWorkload | None = None
        self._threads: list[threading.Thread] = []
        self.samples: list[Sample] = []
        self.acks: list[Ack] = []
        self.reads: list[Read] = []
        self.produce_failures = 0
        self.sends: list[Send] = []
        self.outages: list[Outage] = []
        self.fault_starts: list[float] = []  # the run's time each fault struck (a gap's bound counts them)
        self._down: dict[int, tuple[float, str]] = {}  # broker → (since, cause), until seen registered again
        self._continued_ms: dict[int, float] = {}  # a frozen broker's SIGCONT: up once registered after it
        self.min_isr: list[MinIsrSetting] = []
        self.live_topics: dict[str, int] = {}  # topic → partitions, as the producer targets them
        self.deleted: set[str] = set()
        self.faults: dict[str, int] = {}
        self._moved_log_dir: tuple[str, str] | None = None
        self._started_ms: dict[int, float] = {}
        self._stopped_broker: int | None = None
        self._env_before = os.environ.get(FAULTS_ENV)
        self.slip_violations: list[Violation] = []  # operators' slips not refused as Kafka refuses them
        self.slips: dict[str, int] = {}  # the slips made, by kind
        self.hostile_violations: list[Violation] = []  # the hostile client's answers that are not Kafka's
        self.hostile_notes: list[str] = []  # what it was answered
        self._hostile_step = hostile_step(config.seed, config.steps)
        self.proxies: dict[int, DelayProxy] = {}
        self.check: TxnCheckWorkload | None = None
        self._delays = delay_draws(config.seed, config.steps, config.brokers)
        self.delays_held: list[str] = []
        self._faults_on = 0  # faults in progress (the cluster is not whole meanwhile)
        self._whole_since = 0.0  # run seconds: when the last fault healed or the last outage ended
        self._delay_until = 0.0  # run seconds: the end of the last connection delay
        self._txn_outcomes: dict[str, int] | None = None
        self._anomaly_table: str | None = None
        self._known_anomalies = 0
        self._client_resends = 0

    # -- the run ----------------------------------------------------------------------------------------------------
    def run(self) -> SeedResult:
        cfg = self.cfg
        schedule = make_schedule(cfg.seed, cfg.steps, cfg.brokers, cfg.zk_servers)
        os.makedirs(self.folder, exist_ok=True)
        self._events = open(os.path.join(self.folder, "events.log"), "w", encoding="utf-8")  # noqa: SIM115
        violations: list[Violation] = []
        figures: dict[str, float] = {}
        error = None
        try:
            self._start()
            for step in schedule:
                self._step(step)
                self.on_step(step.index + 1)
            self._heal_all()
            self._stop_traffic()
            snap = self._wait_liveness()
            violations += stuck_operations(snap)
            final, logs, producers, hws = self._quiesce_and_read_logs()
            self._stop.set()
            for t in self._threads:
                t.join(10)
            resent = checks.client_resends(final, logs, producers)
            violations = check_safety(self.samples) + check_data(self.acks, final, logs, hws, self.reads) \
                + violations + check_duplicates(final, logs, self.reads, resent) + self.slip_violations \
                + self.hostile_violations
            self._client_resends = sum(len(offsets) - 1 for values in resent.values() for offsets in values.values())
            for line in checks.resend_events(resent):
                self._event(line)
            if self.txn is not None:
                violations += self._check_transactions()
            if self.check is not None:
                violations += self._check_anomalies()
            gaps = ack_gaps(self.sends, self.samples, self._all_outages(), self.min_isr)
            bound = gap_bound_s(cfg.session_timeout_ms, cfg.replica_lag_time_max_ms)
            violations += check_gaps(gaps, bound, self.fault_starts)
            g = longest(gaps)
            # the longest gap's own bound: one bound for each fault behind it (what check_gaps held it to)
            figures = {"longest_gap_s": 0.0 if g is None else g.seconds,
                       "gap_bound_s": bound if g is None else bound * faults_behind(g, self.fault_starts, bound)}
        except Interrupted:
            raise
        except Exception as e:  # noqa: BLE001 - the seed fails with its reason; the next seed still runs
            log.exception("seed %d: the run failed", cfg.seed)
            error = f"{type(e).__name__}: {e}"
            self._event(f"run failed: {error}")
        finally:
            self.close()
        if error is None:
            violations += check_server_errors(self.error_answers()) + self.failed_loads()
        duration = time.monotonic() - self._t0
        result = SeedResult(cfg.seed, cfg.steps, dict(self.faults), len(self.acks), tuple(violations), duration,
                            self.folder, error, figures.get("longest_gap_s"), figures.get("gap_bound_s"),
                            self._txn_outcomes, self._anomaly_table, len(self.delays_held), self._known_anomalies,
                            self._client_resends)
        self._write_artifacts(result)
        if result.ok and not self.keep:
            shutil.rmtree(self.folder, ignore_errors=True)
            result = attrs.evolve(result, folder=None)
        return result

    def error_answers(self) -> list[ErrorAnswer]:
        """The UNKNOWN_SERVER_ERROR answers: the client's (in the run's time) and those in the brokers' logs."""
        client = getattr(self, "client", None)
        txn_answers = (*(self.txn.error_answers() if self.txn is not None else ()),
                       *(self.check.error_answers() if self.check is not None else ()))
        out = [attrs.evolve(a, ts=None if a.ts is None else a.ts - self._t0)
               for a in (*(client.error_answers() if client is not None else ()), *txn_answers)]
        for b in range(self.cfg.brokers):
            path = os.path.join(self.folder, "cluster", f"broker-{b}.log")
            if os.path.exists(path):
                with open(path, encoding="utf-8", errors="replace") as f:
                    out += broker_log_answers(b, f)
        return out

    def failed_loads(self) -> list[Violation]:
        """The coordinators' loads that failed at a batch they could not pass, from the brokers' logs
        (kactor/chaos/loads.py)."""
        out: list[Violation] = []
        for b in range(self.cfg.brokers):
            path = os.path.join(self.folder, "cluster", f"broker-{b}.log")
            if os.path.exists(path):
                with open(path, encoding="utf-8", errors="replace") as f:
                    out += failed_loads(b, f)
        return out

    def _event(self, text: str) -> None:
        line = f"{time.monotonic() - self._t0:8.2f}s {text}"
        log.info("seed %d: %s", self.cfg.seed, text)
        with self._lock:
            if not self._events.closed:
                self._events.write(line + "\n")
                self._events.flush()

    def _check_stop(self) -> None:
        if self._stop.is_set():
            raise Interrupted()

    def interrupt(self) -> None:
        self._stop.set()

    def _start(self) -> None:
        cfg = self.cfg
        write_rules(self.fault_file, [])
        os.environ[FAULTS_ENV] = self.fault_file  # inherited by every broker process this run starts
        overrides = [f"zookeeper.session.timeout.ms={cfg.session_timeout_ms}",
                     "controlled.shutdown.retry.backoff.ms=200",
                     f"replica.lag.time.max.ms={cfg.replica_lag_time_max_ms}",
                     "replica.high.watermark.checkpoint.interval.ms=500",
                     # the data client's consumer makes the group coordinator create __consumer_offsets: Kafka's
                     # 50 partitions would outnumber the schedule's own
                     "offsets.topic.num.partitions=3",
                     # the transactional loop's one transactional id needs one of these; 50 would outnumber the rest
                     "transaction.state.log.num.partitions=3",
                     f"transaction.state.log.replication.factor={min(3, cfg.brokers)}",
                     f"transaction.state.log.min.isr={min(2, cfg.brokers)}"]
        kwargs: dict[str, Any] = dict(base_dir=os.path.join(self.folder, "cluster"),
                                      trace_dir=os.path.join(self.folder, "traces") if cfg.trace else None,
                                      overrides=overrides, zk_tick_ms=ZK_TICK_MS, zookeeper_ensemble=cfg.zk_servers,
                                      security=cfg.security)
        if cfg.txn_check and cfg.security == "plaintext":
            # the checked producers reach every broker through a proxy of the run's, whose delays are the
            # anomalies' delayed requests (the proxy speaks PLAINTEXT: a secured run's producers go direct)
            from zk_bridge.server import free_port

            self.cluster, self.proxies = proxied_cluster(cfg.brokers, free_port, **kwargs)
        else:
            self.cluster = LocalCluster(cfg.brokers, **kwargs)
        self._started_ms = {b: time.time() * 1000 for b in range(cfg.brokers)}
        self.cluster.start()
        self.zk = KazooClient(hosts=self.cluster.connect_string, timeout=10.0)
        self.zk.start(timeout=15)
        # a broker that gave up on the ensemble as it began serving is started again once (LocalCluster's)
        self._wait(lambda: self.cluster.restart_brokers_that_gave_up() or self._all_registered(), cfg.startup_s,
                   f"{cfg.brokers} brokers registered", fatal=True)
        self._event(f"started: ZooKeeper {self.cluster.connect_string} ({cfg.zk_servers} server(s)), "
                    f"{cfg.brokers} brokers")
        self.client = self.client_factory(self.cluster)
        self._producer = self._spawn(self._produce_loop, "chaos-producer")
        if cfg.transactions:
            self._start_transactions()
        if cfg.txn_check:
            self._start_txn_check()
        self._spawn(self._sample_loop, "chaos-sampler")

    def _start_transactions(self) -> None:
        """The transactional loop's input and output topics (RF 3 where there are 3 brokers), then the loop."""
        from kactor.chaos import txn_workload as tw
        from zk_bridge.admin.admin_zk import AdminZkClient
        from zk_bridge.admin.assignment import assign_replicas_to_brokers

        assert self.cluster is not None
        admin = AdminZkClient(self.zk)
        brokers = list(range(self.cfg.brokers))
        for i, topic in enumerate((tw.INPUT, tw.OUTPUT)):
            admin.create_topic_with_assignment(
                topic, {}, assign_replicas_to_brokers(brokers, tw.PARTITIONS, min(3, len(brokers)), i))
        # librdkafka assigned a partition before it has a leader may not fetch it for the whole run
        self._wait(lambda: all((st := partition_state(self.zk, t, p)) is not None and st.leader >= 0  # type: ignore[arg-type]
                               for t in (tw.INPUT, tw.OUTPUT) for p in range(tw.PARTITIONS)),
                   30, "the transactional loop's topics led")
        self.txn = TxnWorkload(bootstrap(self.cluster), self.cfg.seed, self._stop, security(self.cluster)).start()
        self._event(f"transactional loop started: {tw.INPUT} → {tw.OUTPUT}, group {tw.GROUP}")

    def _start_txn_check(self) -> None:
        """The checked workload's topic (RF 3 where there are 3 brokers), then its producers and sampler."""
        from kactor.chaos import txn_check as tc
        from zk_bridge.admin.admin_zk import AdminZkClient
        from zk_bridge.admin.assignment import assign_replicas_to_brokers

        assert self.cluster is not None
        brokers = list(range(self.cfg.brokers))
        AdminZkClient(self.zk).create_topic_with_assignment(
            tc.TOPIC, {}, assign_replicas_to_brokers(brokers, tc.PARTITIONS, min(3, len(brokers)), 2))
        self._wait(lambda: all((st := partition_state(self.zk, tc.TOPIC, p)) is not None  # type: ignore[arg-type]
                               and st.leader >= 0 for p in range(tc.PARTITIONS)), 30, "the checked topic led")
        direct = bootstrap(self.cluster)
        via = proxies_bootstrap(self.proxies) if self.proxies else direct
        self.check = TxnCheckWorkload(via, direct, self.cfg.seed, lambda: self._now() * 1000,
                                      self._healthy_since_ms, security(self.cluster)).start()
        self._event(f"transaction checker's workload started: {tc.PRODUCERS} producers on {tc.TOPIC} "
                    f"({tc.PARTITIONS} partitions), " + (f"through the proxies {via}" if self.proxies else
                                                          "direct (no proxy on a secured listener)"))

    def _healthy_since_ms(self) -> float | None:
        """Since when (run ms) the cluster has been whole: no fault on, every broker serving, no connection held;
        None while it is not (a last stable offset held back then is the fault's)."""
        with self._lock:
            now = self._now()
            if self._faults_on or self._down or now < self._delay_until:
                return None
            return max(self._whole_since, self._delay_until) * 1000

    def _check_anomalies(self) -> list[Violation]:
        """The checked workload's History judged by sim/txn_checker.py: each anomaly a violation of kind
        ``anomaly``, the table (with the seed's replay command) in the events log and the seed's lines."""
        from kactor.chaos import txn_check as tc
        from kactor.chaos.replay import replay_command
        from sim.txn_checker import check, counts, table

        assert self.check is not None
        history = self.check.finish(lambda: tc.delivered_end_txns(
            (s for p in self.proxies.values() for s in p.stray_requests), self._t0))
        self._write_history(history)
        self._txn_outcomes = tc.summary(self.check.records)
        anomalies = check(history)
        self._known_anomalies = sum(1 for a in anomalies if a.known)
        found = {k: n for k, n in counts(anomalies).items() if n}
        self._event(f"transaction checker: {len(history.txns)} transactions ({self._txn_outcomes['committed']} "
                    f"committed, {self._txn_outcomes['aborted']} aborted, {self._txn_outcomes['unknown']} unknown), "
                    f"{len(history.committed)} records read committed, {len(history.uncommitted)} uncommitted, "
                    f"{len(history.offset_reads)} group offsets read, {len(history.samples)} stable-offset samples, "
                    f"{len(self.delays_held)} connections held, "
                    f"{sum(p.strays for p in self.proxies.values())} of them delivering after their client left; "
                    + (", ".join(f"{k} {n}" for k, n in found.items()) if found else "no anomaly")
                    + (f" ({self._known_anomalies} known: KIP-890 part 2)" if self._known_anomalies else ""))
        for e in self.check.errors[:30]:
            self._event(f"  {e}")
        if self.check.stuck:
            self._event(f"  producers still inside librdkafka at the end: {', '.join(self.check.stuck)}")
        if not anomalies:
            return []
        rerun = replay_command(self.cfg.seed, self.cfg.steps, self.cfg.brokers, self.cfg.zk_servers)
        self._anomaly_table = table(anomalies, f"seed {self.cfg.seed}: {len(anomalies)} transaction anomalies",
                                    rerun)
        self._event(self._anomaly_table)
        return [Violation("anomaly", str(a)) for a in anomalies if not a.known]

    def _write_history(self, history: Any) -> None:
        """The checker's input beside the seed's other records (txn-history.json), to judge again by hand."""
        with open(os.path.join(self.folder, "txn-history.json"), "w", encoding="utf-8") as f:
            json.dump(attrs.asdict(history, value_serializer=lambda _i, _a, v: sorted(v) if isinstance(
                v, frozenset) else v), f)

    def _delay(self, index: int) -> None:
        """The step's connection delay, if it has one: a checked producer's connection through broker b's proxy
        held past its request timeout (the proxy's own timer: the step goes on meanwhile)."""
        draw = self._delays[index] if index < len(self._delays) else None
        if draw is None or not self.proxies:
            return
        broker, hold, pick = draw
        what = self.proxies[broker].hold(hold, lambda n: int(pick * n))
        if what is None:
            self._event(f"  delay: no connection open through {broker}'s proxy")
            return
        with self._lock:
            self._delay_until = max(self._delay_until, self._now() + hold)
        self.delays_held.append(what)
        self._event(f"  delay: {what}")

    def _check_transactions(self) -> list[Violation]:
        """The transactional loop's output against its input and the group's offsets (txn_workload.py)."""
        from kactor.chaos import txn_workload as tw

        assert self.cluster is not None and self.txn is not None
        servers, settings = bootstrap(self.cluster), security(self.cluster)
        inputs = tw.read_topic(servers, tw.INPUT, "read_uncommitted", security=settings)
        committed = tw.committed_offsets(servers, security=settings)
        output = tw.read_topic(servers, tw.OUTPUT, "read_committed", security=settings)
        outcomes = dict(self.txn.outcomes)
        counts = {o: sum(1 for v in outcomes.values() if v == o) for o in (tw.COMMITTED, tw.ABORTED, tw.UNKNOWN)}
        self._event(f"transactions: {counts[tw.COMMITTED]} committed, {counts[tw.ABORTED]} aborted, "
                    f"{counts[tw.UNKNOWN]} of unknown outcome (timed out, fenced or in flight at the end); "
                    f"{len(self.txn.errors)} errors recovered from; "
                    f"group {tw.GROUP} at {committed} of {({p: len(v) for p, v in inputs.items()})} input records")
        for e in self.txn.errors[:20]:
            self._event(f"  {e}")
        return tw.check_transactions(inputs, committed, output, outcomes)

    def _spawn(self, fn: Callable[[], None], name: str) -> threading.Thread:
        t = threading.Thread(target=fn, name=name, daemon=True)
        t.start()
        self._threads.append(t)
        return t

    def _wait(self, predicate: Callable[[], Any], timeout_s: float, what: str, fatal: bool = False) -> bool:
        deadline = time.monotonic() + timeout_s
        while True:
            self._check_stop()
            try:
                if predicate():
                    return True
            except Exception:  # noqa: BLE001 - ZooKeeper reconnecting, a znode mid-change: poll again
                pass
            if time.monotonic() >= deadline:
                self._event(f"timed out after {timeout_s:.0f}s waiting for {what}")
                if fatal:
                    raise RuntimeError(f"timed out after {timeout_s:.0f}s waiting for {what}")
                return False
            time.sleep(0.1)

    # -- steps -------------------------------------------------------------------------------------------------------
    def _step(self, step: Step) -> None:
        self._check_stop()
        self._event(f"step {step.index}: {step.describe()}")
        self._delay(step.index)
        try:
            self._operation(step)
        except Exception as e:  # noqa: BLE001 - an operation the cluster refuses is part of the story
            self._event(f"  {step.op} {step.topic} not done: {type(e).__name__}: {e}")
        if step.fault is not None:
            self._fault(step)
        if step.slip is not None:
            self._slip(step)
        self._settle()
        if step.index == self._hostile_step:
            self._hostile()

    def _operation(self, step: Step) -> None:
        from zk_bridge.admin.admin_zk import AdminZkClient
        from zk_bridge.admin.assignment import assign_replicas_to_brokers

        admin = AdminZkClient(self.zk)
        topic = step.topic
        if step.op == "create":
            partitions, rf = int(step.args[0]), int(step.args[1])
            start = (self.cfg.seed + step.index) % self.cfg.brokers
            assignment = assign_replicas_to_brokers(list(range(self.cfg.brokers)), partitions, rf, start)
            admin.create_topic_with_assignment(topic, {}, assignment)
            with self._lock:
                self.live_topics[topic] = partitions
        elif step.op == "delete":
            with self._lock:  # nothing more is produced to it; its records are expected nowhere once it is marked
                partitions = self.live_topics.pop(topic, None)
            try:
                admin.delete_topic(topic)
            except Exception:
                if not self.zk.exists(paths.DeleteTopicsTopicZNode.path(topic)):  # type: ignore[union-attr]
                    with self._lock:
                        if partitions is not None:
                            self.live_topics[topic] = partitions
                    raise
            with self._lock:
                self.deleted.add(topic)
        elif step.op == "reassign":
            partition, replicas = int(step.args[0]), [int(r) for r in step.args[1:]]
            if partition not in admin.get_full_replica_assignment(topic):
                raise ValueError(f"{topic}-{partition} does not exist")
            admin.create_partition_reassignment({TopicPartition(topic, partition): replicas})
        elif step.op == "preferred":
            partitions = admin.get_full_replica_assignment(topic)
            admin.create_preferred_replica_election({TopicPartition(topic, p) for p in partitions})
        elif step.op == "expand":
            existing = admin.get_full_replica_assignment(topic)
            admin.add_partitions(topic, existing, admin.get_broker_metadatas(), int(step.args[0]))
            with self._lock:
                if topic in self.live_topics:
                    self.live_topics[topic] = int(step.args[0])
        elif step.op == "config":
            admin.change_topic_config(topic, {str(step.args[0]): str(step.args[1])})
            if step.args[0] == "min.insync.replicas":
                with self._lock:
                    self.min_isr.append(MinIsrSetting(self._now(), topic, int(step.args[1])))

    def _fault(self, step: Step) -> None:
        with self._lock:
            self._faults_on += 1
        try:
            self._apply_fault(step)
        finally:
            with self._lock:
                self._faults_on -= 1
                self._whole_since = self._now()

    def _apply_fault(self, step: Step) -> None:
        assert self.cluster is not None and self.cluster.zk is not None
        fault, hold = step.fault, step.hold_s
        assert fault is not None
        self.faults[fault] = self.faults.get(fault, 0) + 1
        self.fault_starts.append(self._now())
        c = self.cluster
        if fault == "kill-controller":
            ctrl = c.controller_id(self.zk)
            if ctrl is None:
                self._event("  no controller to kill")
                return
            self._event(f"  SIGKILL controller {ctrl}")
            self._down_from(ctrl, fault)
            c.kill_broker(ctrl)
            self._hold(hold)
            self._restart(ctrl)
        elif fault == "sigkill":
            (b,) = step.targets
            self._down_from(b, fault)
            c.kill_broker(b)
            self._hold(hold)
            self._restart(b)
        elif fault == "sigterm":
            (b,) = step.targets
            self._down_from(b, fault)
            code = c.stop_broker(b, timeout=60.0)
            self._event(f"  broker {b} stopped with exit code {code}")
            self._hold(hold)
            self._restart(b)
        elif fault == "sigstop":
            (b,) = step.targets
            self._stopped_broker = b
            self._down_from(b, fault)
            c.signal_broker(b, signal.SIGSTOP)
            self._hold(self.cfg.session_timeout_ms / 1000.0 + hold)
            c.signal_broker(b, signal.SIGCONT)
            self._continued_ms[b] = time.time() * 1000
            self._stopped_broker = None
        elif fault == "partition":
            a, b = step.targets
            ends = (self._endpoint(a), self._endpoint(b))
            self._event(f"  partition {a} ({ends[0]}) <-> {b} ({ends[1]})")
            write_rules(self.fault_file, [ends])
            self._hold(hold)
            write_rules(self.fault_file, [])
        elif fault == "logdir":
            (b,) = step.targets
            self._down_from(b, fault)
            self._break_log_dir(b)
            self._hold(hold)
            self._heal_log_dir(b)
        elif fault in ("zk-kill", "zk-kill-leader"):
            ensemble = self.cluster.zk
            index = ensemble.leader() if fault == "zk-kill-leader" else step.targets[0]
            self._event(f"  kill ZooKeeper server {index}" + (" (the leader)" if fault == "zk-kill-leader" else ""))
            ensemble.kill(index)
            self._hold(hold)
            ensemble.restart(index)
        self._event(f"  {fault} healed")

    def _slip(self, step: Step) -> None:
        """An operator's slip (kactor/chaos/slips.py): a second broker process on broker ``step.slip_target``'s live
        log dir, watched until it exits (SLIP_EXIT_S at most, then killed): its registration looked for in ZooKeeper
        meanwhile, its output kept beside the brokers' logs."""
        from edges.children import spawn
        from zk_bridge.server import free_port

        assert self.cluster is not None and self.zk is not None and step.slip is not None
        c, kind, t = self.cluster, step.slip, step.slip_target
        if c.layout is not None or c.procs.get(t) is None or c.procs[t].poll() is not None:
            self._event(f"  {kind} on broker {t}'s log dir not done (broker not running, or brokers in namespaces)")
            return
        # not counted among self.faults: those are the schedule's faults (a slip strikes no running broker)
        self.slips[kind] = self.slips.get(kind, 0) + 1
        port = free_port()
        base = c.plain_broker_args(t) if isinstance(c, ProxiedCluster) else c.broker_args(t)
        args = slip_args(base, kind, t, f"{c.listener_name}://127.0.0.1:{port}",
                         free_port() if t in c.metrics_ports else None)
        out_path = os.path.join(c.base_dir, f"slip-{step.index}-{kind}-broker-{t}.log")
        self._event(f"  {kind}: broker {slip_broker_id(kind, t)} started on broker {t}'s log dir {self._log_dir(t)}")
        with open(out_path, "wb") as out:
            proc = spawn(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         env=dict(os.environ, PYTHONHASHSEED="0", **c.broker_env))
        registered = False
        deadline = time.monotonic() + SLIP_EXIT_S
        while proc.poll() is None and time.monotonic() < deadline:
            registered = registered or self._slip_registered(kind, t, port)
            time.sleep(0.2)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
            code = None
        else:
            code = proc.returncode
        registered = registered or self._slip_registered(kind, t, port)
        with open(out_path, encoding="utf-8", errors="replace") as f:
            output = f.read()
        outcome = SlipOutcome(kind, t, code, output, registered, c.procs[t].poll() is None)
        found = judge(outcome, self._log_dir(t))
        self.slip_violations += found
        self._event(f"  {kind} exited with {code}" + ("" if not found else f": {'; '.join(v.detail for v in found)}"))

    def _hostile(self) -> None:
        """The seed's hostile client (kactor/chaos/hostile.py), once, with every broker registered; skipped, and said
        so, on a TLS or SASL listener: it speaks PLAINTEXT only (edges/net/blocking_client.py), so no broker would
        answer it and it would only wait out 20 s a request."""
        if self.cfg.security != "plaintext":
            note = f"skipped: it speaks PLAINTEXT only and the brokers' listener is {self.cfg.security}"
            self._event(f"  hostile client {note}")
            self.hostile_notes = [note]
            return
        assert self.zk is not None
        zk = self.zk

        def brokers() -> dict[int, tuple[str, int]]:
            out = {}
            for b in range(self.cfg.brokers):
                try:
                    data, _ = zk.get(paths.BrokerIdZNode.path(b))
                except NoNodeError:
                    continue
                ep = znodes.decode_broker(b, data.decode()).endpoints[0]
                out[b] = (ep.host, ep.port)
            return out

        def leader(topic: str, partition: int) -> tuple[str, int] | None:
            try:
                state = partition_state(zk, topic, partition)
            except NoNodeError:
                return None
            return None if state is None or state.leader < 0 else brokers().get(state.leader)

        topics = sorted(t for t in self.live_topics if t not in self.deleted)
        client = ChaosHostileClient(self.cfg.seed, brokers, leader,
                                    lambda t: zk.exists(paths.TopicZNode.path(t)) is not None,
                                    (topics[0], 0) if topics else None)
        self._event("  hostile client")
        client.run()
        for note in client.notes:
            self._event(f"  hostile {note}")
        self.hostile_violations += client.violations
        self.hostile_notes = client.notes

    def _slip_registered(self, kind: str, target: int, port: int) -> bool:
        """The slip's broker id registered by the slip's process (another broker's id, or the target's own id with
        the slip's port in it)."""
        assert self.zk is not None
        try:
            data, _ = self.zk.get(paths.BrokerIdZNode.path(slip_broker_id(kind, target)))
        except NoNodeError:
            return False
        return kind == "other-dir" or any(ep.port == port for ep in znodes.decode_broker(target, data.decode())
                                          .endpoints)

    def _now(self) -> float:
        """Seconds of the run: the clock of samples, sends and outages."""
        return time.monotonic() - self._t0

    def _all_outages(self) -> list[Outage]:
        """The outages, those still open (a broker never seen back) ending with the run."""
        with self._lock:
            return [*self.outages, *(Outage(b, since, None, cause) for b, (since, cause) in self._down.items())]

    def _down_from(self, broker: int, cause: str) -> None:
        """``broker`` stops serving now, until it is seen registered again by a running process."""
        with self._lock:
            self._down.setdefault(broker, (self._now(), cause))

    def _hold(self, seconds: float) -> None:
        """The fault's duration: the cluster runs with it meanwhile."""
        if self._stop.wait(seconds):
            raise Interrupted()

    def _endpoint(self, broker_id: int) -> str:
        data, _ = self.zk.get(paths.BrokerIdZNode.path(broker_id))  # type: ignore[union-attr]
        ep = znodes.decode_broker(broker_id, data.decode()).endpoints[0]
        return endpoint(ep.host, ep.port)

    def _log_dir(self, broker_id: int) -> str:
        assert self.cluster is not None
        return os.path.join(self.cluster.base_dir, f"broker-{broker_id}")

    def _break_log_dir(self, b: int) -> None:
        """The dir is moved away and a file takes its place: unusable even for root (chmod is not, for root)."""
        path = self._log_dir(b)
        away = f"{path}.unusable"
        os.rename(path, away)
        with open(path, "w") as f:
            f.write("log dir made unusable by kactor chaos\n")
        self._moved_log_dir = (path, away)
        self._event(f"  log dir of broker {b} made unusable")

    def _heal_log_dir(self, b: int) -> None:
        """As an operator replaces a failed disk: stop the broker, put the dir back, start it."""
        assert self.cluster is not None
        self.cluster.kill_broker(b)
        self._restore_log_dir()
        self._restart(b)

    def _restore_log_dir(self) -> None:
        if self._moved_log_dir is None:
            return
        path, away = self._moved_log_dir
        if os.path.isfile(path):
            os.unlink(path)
        os.rename(away, path)
        self._moved_log_dir = None

    def _settle(self) -> None:
        """Every broker process running and registered before the next step (so faults do not pile up)."""
        assert self.cluster is not None
        c = self.cluster
        for b, proc in list(c.procs.items()):
            if proc.poll() is not None:
                self._event(f"  broker {b} exited with {proc.returncode}; starting it again")
                self._down_from(b, "exited")
                self._restart(b)
        self._wait(self._all_registered, self.cfg.settle_s, "every broker registered by its current process")

    def _restart(self, b: int) -> None:
        assert self.cluster is not None
        self._started_ms[b] = time.time() * 1000
        self.cluster.start_broker(b)

    def _all_registered(self) -> bool:
        """Every broker registered by the process running now: a crashed broker's znode lingers until its
        session expires, so the registration's timestamp must be later than the process's start. A broker down
        since a fault is up again from the first poll that finds it registered so (and, if frozen, continued)."""
        registered = True
        for b in range(self.cfg.brokers):
            # the znode's creation time: the registration of a broker process is created after that process started
            stat = self.zk.exists(paths.BrokerIdZNode.path(b))  # type: ignore[union-attr]
            if stat is None or stat.ctime < self._started_ms[b]:
                registered = False
            elif b in self._down and self._stopped_broker != b and stat.ctime >= self._continued_ms.get(b, 0):
                with self._lock:
                    since, cause = self._down.pop(b)
                    self.outages.append(Outage(b, since, self._now(), cause))
                    self._whole_since = self._now()
        return registered

    def _heal_all(self) -> None:
        write_rules(self.fault_file, [])
        self._restore_log_dir()
        self._settle()
        self._event("healed")

    def _stop_traffic(self) -> None:
        """The producer finishes its request in flight and stops: nothing is appended from here on."""
        self._traffic_done.set()
        if self._producer is not None:
            self._producer.join(60)
        if self.check is not None:
            self.check.stop_producers()
        if self.txn is not None:
            stuck = self.txn.stop()
            if stuck is not None:
                self._event(f"transactional loop not stopped: {stuck}; its transaction is left to the "
                            f"coordinator (transaction.timeout.ms)")
        fatal = getattr(getattr(self, "client", None), "fatal_errors", 0)
        self._event(f"producer stopped: {len(self.acks)} records acknowledged, {self.produce_failures} "
                    f"requests not acknowledged" + (f", {fatal} fatal producer errors (producer replaced)"
                                                    if fatal else ""))

    # -- producer and sampler threads ---------------------------------------------------------------------------
    def _produce_loop(self) -> None:
        n = 0
        turn = 0
        while not self._stop.is_set() and not self._traffic_done.is_set():
            with self._lock:
                targets = [(t, p) for t, count in sorted(self.live_topics.items()) for p in range(count)]
            if not targets:
                self._stop.wait(0.1)
                continue
            topic, partition = targets[turn % len(targets)]
            turn += 1
            values = tuple(f"s{self.cfg.seed}-{n + k}" for k in range(1 + turn % 3))
            n += len(values)
            start = self._now()
            try:
                base = self.client.produce(topic, partition, values)
            except ProduceError:
                with self._lock:
                    self.sends.append(Send(start, self._now(), topic, partition, len(values), False))
                self.produce_failures += 1
                self._stop.wait(0.1)
                continue
            with self._lock:
                self.sends.append(Send(start, self._now(), topic, partition, len(values), True))
                self.acks.extend(Ack(topic, partition, base + k, v) for k, v in enumerate(values))
            if turn % 10 == 0:  # a consumer reading committed records now and then
                records, _ = self.client.read(topic, partition, 0)
                with self._lock:
                    self.reads.extend(Read(topic, partition, o, v, f"a consumer at {time.monotonic() - self._t0:.1f}s")
                                      for o, v in enumerate(records))
            self._stop.wait(PRODUCE_PAUSE_S)

    def _sample_loop(self) -> None:
        zk = KazooClient(hosts=self.cluster.connect_string, timeout=10.0)  # type: ignore[union-attr]
        try:
            zk.start(timeout=15)
            while not self._stop.wait(SAMPLE_INTERVAL_S):
                try:
                    sample = sample_cluster(zk, time.monotonic() - self._t0)
                except Exception:  # noqa: BLE001 - ZooKeeper unavailable for a moment: next sample
                    continue
                with self._lock:
                    self.samples.append(sample)
        finally:
            zk.stop()
            zk.close()

    # -- after healing --------------------------------------------------------------------------------------------
    def _wait_liveness(self) -> ClusterSnapshot:
        snap = ClusterSnapshot()

        written: set[TP] = set()

        def done() -> bool:
            nonlocal snap
            snap = snapshot_cluster(self.zk, self.deleted)  # type: ignore[arg-type]
            # "has a leader" as a client sees it: one acks=all record accepted by every surviving partition
            partitions = final_partitions(self.zk, self.deleted)  # type: ignore[arg-type]
            for tp in sorted(set(partitions) - written):
                value = f"s{self.cfg.seed}-probe-{tp[0]}-{tp[1]}"
                try:
                    offset = self.client.produce(tp[0], tp[1], (value,))
                except ProduceError:
                    continue
                written.add(tp)
                with self._lock:
                    self.acks.append(Ack(tp[0], tp[1], offset, value))
            snap = attrs.evolve(snap, unwritable=tuple(sorted(set(partitions) - written)))
            return not stuck_operations(snap)
        t0 = time.monotonic()
        if self._wait(done, self.cfg.liveness_s, "deletions, reassignments and elections to complete"):
            self._event(f"live: every operation complete, every partition led and written to "
                        f"({time.monotonic() - t0:.1f}s)")
        return snap

    def _quiesce_and_read_logs(self) -> tuple[dict[TP, FinalPartition], dict[tuple[int, TP], tuple[str, ...]],
                                              dict[tuple[int, TP], tuple[tuple[int, int], ...]],
                                              dict[tuple[int, TP], int]]:
        """Wait for full ISRs whose logs are equal, then copy every replica's partition dir (a consistent prefix:
        nothing is produced any more) and read the copies with the broker's own log reader (each offset's value,
        and its producer id and epoch); the high watermark of each partition from its leader (a consumer fetch,
        before the copy: every ISR replica holds at least that much), with the replicas' checkpoints."""
        final: dict[TP, FinalPartition] = {}
        logs: dict[tuple[int, TP], tuple[str, ...]] = {}
        producers: dict[tuple[int, TP], tuple[tuple[int, int], ...]] = {}
        hws: dict[tuple[int, TP], int] = {}

        def settled() -> bool:
            nonlocal final, logs, producers, hws
            final = final_partitions(self.zk, self.deleted)  # type: ignore[arg-type]
            leader_hws = {tp: self.client.read(tp[0], tp[1], 0)[1] for tp in final}
            logs, producers, hws = cluster_state.read_final_logs(
                [self._log_dir(b) for b in range(self.cfg.brokers)], os.path.join(self.folder, "log-snapshot"), final)
            for tp, part in final.items():
                for b in part.isr:
                    hws[(b, tp)] = max(hws.get((b, tp), 0), leader_hws[tp])
            full = all(set(p.isr) == set(p.replicas) for p in final.values())
            equal = all(len({len(logs.get((b, tp), ())) for b in p.isr}) == 1 for tp, p in final.items())
            return full and equal
        if self._wait(settled, self.cfg.quiesce_s, "full ISRs with equal logs"):
            self._event(f"quiet: {len(final)} partitions with full ISRs and equal logs; logs read")
        else:
            self._event("reading the logs as they are")
        return final, logs, producers, hws

    # -- the end ----------------------------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop everything this run started: threads, brokers (a frozen one is continued first), ZooKeeper, the
        proxies; put back a log dir and the environment."""
        self._stop.set()
        for t in self._threads:
            t.join(10)
        if self.check is not None:
            self.check.abandon()
        client = getattr(self, "client", None)
        if client is not None:
            try:
                if client.close() is False:
                    self._event(f"the data client's consumer did not close within {CLOSE_TIMEOUT_S:.0f} s "
                                f"(librdkafka): left behind")
            except Exception:  # noqa: BLE001
                pass
        if self.zk is not None:
            self.zk.stop()
            self.zk.close()
            self.zk = None
        try:
            write_rules(self.fault_file, [])
        except OSError:
            pass
        if self.cluster is not None:
            for proc in self.cluster.procs.values():
                if proc.poll() is None:
                    proc.send_signal(signal.SIGCONT)
                    proc.kill()
                    proc.wait()
            self.cluster.stop()  # no broker left running: ZooKeeper
            self.cluster = None
        for proxy in self.proxies.values():
            proxy.close()
        self._restore_log_dir()
        if self._env_before is None:
            os.environ.pop(FAULTS_ENV, None)
        else:
            os.environ[FAULTS_ENV] = self._env_before
        with self._lock:
            self._events.close()

    def _write_artifacts(self, result: SeedResult) -> None:
        with open(os.path.join(self.folder, "result.json"), "w", encoding="utf-8") as f:
            json.dump({"seed": result.seed, "steps": result.steps, "faults": result.faults, "acked": result.acked,
                       "duration_s": round(result.duration_s, 1), "error": result.error,
                       "longest_gap_s": None if result.longest_gap_s is None else round(result.longest_gap_s, 3),
                       "gap_bound_s": result.gap_bound_s, "duplicates": result.count("duplicate"),
                       "server_errors": result.count("server-error"),
                       "outages": [attrs.asdict(o) for o in self._all_outages()],
                       "min_insync_replicas": [attrs.asdict(m) for m in self.min_isr],
                       "txn_outcomes": result.txn_outcomes, "delays": self.delays_held,
                       "violations": [attrs.asdict(v) for v in result.violations]}, f, indent=1)
        with open(os.path.join(self.folder, "acks.jsonl"), "w", encoding="utf-8") as f:
            for a in self.acks:
                f.write(json.dumps(attrs.astuple(a)) + "\n")
        with open(os.path.join(self.folder, "sends.jsonl"), "w", encoding="utf-8") as f:
            for send in self.sends:
                f.write(json.dumps([round(send.start, 3), round(send.end, 3), *attrs.astuple(send)[2:]]) + "\n")
        with open(os.path.join(self.folder, "samples.jsonl"), "w", encoding="utf-8") as f:
            for s in self.samples:
                f.write(json.dumps({"ts": round(s.ts, 3), "controller_epoch": s.controller_epoch, "partitions": {
                    f"{t}-{p}": [ps.leader, ps.leader_epoch, list(ps.isr), sorted(ps.replicas)]
                    for (t, p), ps in sorted(s.partitions.items())}}) + "\n")
