"""The deterministic runtime of `kactor sim` (issue #28): N brokers' real actors in one thread on simulated time.

Every broker is the same `actors.broker.spawn_broker_actors` set a live broker spawns, on a `Runtime` with replay's
`InlineActorSystem` (simpleSystemBase's delivery order) and one shared `ManualClock`. What a live broker's edges do
from their threads, `Sim` does as events of one discrete-event loop ordered by (simulated time, sequence):

- ZooKeeper: each broker's "zk" edge runs its batch on the `sim.zookeeper.ZooKeeperModel` (one session per broker
  incarnation) after ``ZK_LATENCY_MS``; the watch and session events the model hands a session are delivered to that
  broker's ZkBridgeActor, as `kactor.broker_process.wire_zk_events` injects kazoo's;
- timers: ScheduleTimer becomes an event at now + delay (a replaced or cancelled one is dropped when it comes up);
- network: sim/network.py's `NetworkModel`, which `Sim` is: a NetSend encoded to its Kafka request frame, decoded on
  the other side with the live transport's own functions and routed as a ``NetRequest`` after the link's seeded
  latency, in order per connection; sends to a broker down or cut off answered ``NetSendFailed``; what reaches a
  broker whose start-up has not ended held unread until the kafka-server actor says it has (``startup_complete``);
  requests' deadlines, one-way cuts, slow links and resets;
- log dirs: each broker's `sim.disk.SimDisk`, in memory, handed in the ``disk`` edge slot. A crash keeps every byte
  written (the page cache outlives the process); `Sim.power_loss` keeps only what the disk's power loss keeps (the
  fsynced bytes and a seeded share of the rest); `Sim.fail_log_dir` makes the dir raise EIO (the broker halts, and
  restarts on a new disk).

The run's event log (`Sim.events`: one line per external input delivered and per fault) is deterministic for a seed.
It is kept as the lines' fields and written out only when asked for (a digest, a test, a failing seed): a
10,000-seed campaign never reads it, and formatting a line as each input came was a hundredth of a seed's CPU.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import os
import random
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from actors import names
from actors.broker import spawn_broker_actors
from actors.clock import ManualClock
from actors.edge_slots import Edges
from actors.runtime import _RUNTIMES, Runtime
from messages.broker_lifecycle import BrokerShutdownRequested
from messages.common import Errors, TopicPartition
from messages.partition import LogAppendFailed, LogDirFailure
from messages.runtime import TimerFired
from messages.zk import Create, Delete, Multi, SetData, ZkRequest
from protocol.zk import znodes
from protocol.zk.paths import ControllerEpochZNode, TopicsZNode
from sim.broker import SimBroker
from sim.disk import NEW_DISK, SimDisk
from sim.network import BASE_PORT, HOST, REQUEST_TIMEOUT_MS, NetworkModel
from sim.rounding import round_ms
from sim.zookeeper import OPEN, ZooKeeperModel

log = logging.getLogger("kactor.sim")

START_MS = 1_700_000_000_000.0  # the simulated epoch every run starts at
# where a double is a whole number of 2**-12 ms (START_MS and the run's times lie there): `Sim.at`'s exact range
_EXACT_LO, _EXACT_HI = float(2**40), float(2**41)
ZK_LATENCY_MS = 1.0
SESSION_TIMEOUT_MS = 6000  # zookeeper.session.timeout.ms of the simulated brokers (kactor/sim_boot.py)
TRACE_ROOT = "/sim-root"  # what a trace names the run's temp dir
# kactor.broker_process builds its Transport with process_requests=False: bound at once, but no request read before
# the kafka-server actor says start-up has ended (SocketServer.startProcessingRequests; fix 6b9b8e9). The sim's
# network follows the same signal; sim/mutations.py's serve-before-startup sets this to read them from the start.
PROCESS_REQUESTS_AT_START = False
_WRITE_OPS = (Create, SetData, Delete, Multi)


def scratch_base() -> str | None:
    """Where a run's log dirs go: tmpfs when there is one (else the system's temp dir)."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


class Boot(Protocol):
    """What builds one simulated broker, given by the composition root (kactor/sim_boot.py): the sim sits below the
    shell (tests/test_layers.py), so the config parser, the start-up inputs a broker process sends its actors and
    the actor system replay runs on are handed in, not imported."""

    def config(self, broker_id: int, log_dir: str) -> Any:
        """The broker's KafkaConfig: ``listeners`` on HOST:BASE_PORT + broker_id, ``log.dirs`` ``log_dir``."""
        ...

    def actor_system(self) -> Any:
        """A deterministic in-process actor system (kactor.trace.inline_system.InlineActorSystem)."""
        ...

    def startup_inputs(self, config: Any, now_ms: int) -> list[tuple[str, Any]]:
        """(actor name, body) of every input BrokerProcess.start sends its actors, in its order."""
        ...


def _event_line(entry: tuple[Any, ...]) -> str:
    """One line of `Sim.events` from its fields in `Sim._log`."""
    if len(entry) == 2:
        return f"{entry[0] - START_MS:.3f} {entry[1]}"
    line = f"{entry[0] - START_MS:.3f} b{entry[1]} {entry[2]}>{entry[3]} {entry[4].__name__}"
    return line + entry[5] if len(entry) == 6 else line


class _Edge:
    """What every simulated edge of one broker incarnation knows: its cluster, broker and incarnation."""

    def __init__(self, sim: Sim, broker: SimBroker) -> None:
        self.sim = sim
        self.broker = broker
        self.incarnation = broker.incarnation


class SimZooKeeper(_Edge):
    """The "zk" slot: a ZkBatch run on the model on this incarnation's session, answered after ZK_LATENCY_MS."""

    def submit(self, batch: Any, callback: Callable[[tuple[Any, ...]], None]) -> None:
        deciding = self._controller_epoch(batch)
        # the session the request goes out on: kazoo's when it is sent (one sent on a connection the server has closed
        # for an expired session fails SESSIONEXPIRED, as kazoo fails it; a resumed broker's client has its new
        # session before its actors handle what waited: Sim.resume)
        session = self.broker.session

        def run() -> None:
            if not self.broker.alive(self.incarnation):
                return
            results = self.sim.zk.execute(session, batch)
            if deciding is not None:
                self.sim.check_controller_write(self.broker, deciding, batch, results)
            callback(results)
            self.sim.drain(self.broker, self.incarnation)

        self.sim.at(ZK_LATENCY_MS, run)
        if self.broker.pause_armed:
            # the process is stopped right after this request went out (the rest of the message it was handling
            # runs first: the pause lands at the end of that handler), so the request reaches the server and its
            # answer waits, with the rest, until the process resumes
            self.broker.pause_armed = False
            broker_id = self.broker.id
            self.sim.at(0.0, lambda: self.sim.pause(broker_id))

    def _controller_epoch(self, batch: Any) -> int | None:
        """The epoch of the active controller asking for ``batch`` if it writes (None: not the controller's, or
        only reads). The requester is the ZkRequest the ZkBridgeActor is handling (a local of a calling frame): the
        sim's own view, the broker's code has no need of it."""
        for op in batch.ops:  # (any of a generator: two calls and a frame per batch)
            if isinstance(op, _WRITE_OPS):
                break
        else:
            return None
        # the broker's controller first: not active (most brokers), no need to look for the requester
        rt = self.broker.rt
        actor = rt.instances.get(names.CONTROLLER) if rt is not None else None
        controller = getattr(actor, "controller", None)
        if controller is None or not controller.is_active:
            return None
        frame, req = sys._getframe(1), None
        while frame is not None and not isinstance(req, ZkRequest):
            req, frame = frame.f_locals.get("req"), frame.f_back
        if not isinstance(req, ZkRequest) or req.reply_to != names.CONTROLLER:
            return None
        return int(controller.epoch)


class SimTimers(_Edge):
    """The "timer" slot: TimerFired(key) into ``owner`` after ``delay_ms`` of simulated time; one per (owner, key)."""

    def __init__(self, sim: Sim, broker: SimBroker) -> None:
        super().__init__(sim, broker)
        self.live: dict[tuple[str, str], int] = {}
        self._tokens = itertools.count(1)

    def schedule(self, owner: str, key: str, delay_ms: float, cause: int | None = None) -> None:
        token = next(self._tokens)
        live = self.live
        slot = (owner, key)
        live[slot] = token

        def fire() -> None:
            if live.get(slot) != token:
                return
            del live[slot]
            self.sim.deliver(self.broker, self.incarnation, owner, TimerFired(key), names.EDGE_TIMER, cause)

        # max(0.0, float(delay_ms)) without the builtins' calls (a NaN is 0.0 as max makes it): a shard arms a timer
        # after most of its steps
        if delay_ms.__class__ is not float:
            delay_ms = float(delay_ms)
        self.sim.at(delay_ms if delay_ms > 0.0 else 0.0, fire)

    def cancel(self, owner: str, key: str) -> bool:
        return self.live.pop((owner, key), None) is not None


class SimNetwork(_Edge):
    """The "net" slot: the broker's outbound requests (Kafka's NetworkClient) and its answers to inbound ones."""

    def send(self, host: str, port: int, to: str, body: Any, request_id: int, reply_to: str | None,
             cause: int | None = None, timeout_ms: float | None = None) -> None:
        self.sim.net_send(self.broker, self.incarnation, port - BASE_PORT, body, request_id, reply_to, cause,
                          timeout_ms)

    def reply(self, connection_id: int, request_id: int, body: Any) -> None:
        self.sim.net_reply(self.broker, request_id, body)

    def close_destination(self, host: str, port: int) -> None:
        dst = port - BASE_PORT
        self.sim.fail_in_flight(lambda p: p.src is self.broker and p.dst == dst, "connection closed")
        self.sim.forget_lanes(self.broker.id, dst)


class SimLogDirs(_Edge):
    """The "log_dirs" slot: edges/log_dirs.py's LogDirProbe, poked by a shard's I/O error: a dir its SimDisk
    fails (`Sim.fail_log_dir`) is reported once, as the probe's LogDirFailure to the replica manager; a refused
    append is still an input."""

    def poke(self) -> None:
        broker, disk = self.broker, self.broker.disk
        if disk is None or not disk.failed or self.incarnation in broker.reported_dirs:
            return
        broker.reported_dirs.add(self.incarnation)  # the broker has one log dir (kactor/sim_boot.py)
        failure = LogDirFailure(0, broker.log_dir)
        self.sim.at(0.0, lambda: self.sim.deliver(broker, self.incarnation, names.REPLICA_MANAGER, failure,
                                                  names.EDGE_LOG_DIRS))

    def append_failed(self, shard: str, dir_index: int, seq: int) -> None:
        self.sim.at(0.0, lambda: self.sim.deliver(self.broker, self.incarnation, shard,
                                                  LogAppendFailed(dir_index, seq), names.EDGE_LOG_DIRS))

    def append_refused(self, dir_index: int, seq: int) -> bool:
        return False

    def close(self) -> None:
        pass


class SimProcess(_Edge):
    """The "process" slot: what `kactor.broker_process.BrokerProcess` is told by the kafka-server actor."""

    def startup_complete(self) -> None:
        if self.broker.alive(self.incarnation):
            self.broker.serving = True
            self.sim.note(f"b{self.broker.id} serving")
            self.sim.start_processing_requests(self.broker)

    def stop_processing_requests(self) -> None:
        if self.broker.alive(self.incarnation):
            self.broker.serving = False
            self.broker.closed = True

    def shutdown_complete(self, msg: Any) -> None:
        if self.broker.alive(self.incarnation):
            # the reason may name the log dir: the run's temp dir is written as the traces write it (determinism)
            self.sim.note(f"b{self.broker.id} shutdown complete: {msg.reason.replace(self.sim.root, TRACE_ROOT)}")
            if self.sim.on_stopped is not None:
                self.sim.on_stopped(self.broker.id, msg)
            # the process exits once the cascade that told it is over (BrokerProcess.run's wait), not inside it
            self.sim.at(0.0, lambda: self.sim.crash(self.broker.id, reason="stopped"))


class Sim(NetworkModel):
    """One seeded run: the event loop, the ZooKeeper model, the brokers and the links between them."""

    def __init__(self, seed: int, boot: Boot, brokers: int = 3, trace_dir: str | None = None,
                 scratch: str | None = None) -> None:
        self.seed = seed
        self.boot = boot
        self.rng = random.Random(seed)
        self.clock = ManualClock(START_MS)
        # a fresh ensemble: the brokers create the persistent paths themselves (KafkaZkClient.createTopLevelPaths)
        self.zk = ZooKeeperModel(clock_ms=lambda: int(self.clock.now_ms()))
        self.admin_session = self.zk.open_session(SESSION_TIMEOUT_MS)  # the tools' own (kafka-topics --zookeeper)
        self.root = tempfile.mkdtemp(prefix=f"kactor-sim-{seed}-", dir=scratch or scratch_base())
        self.trace_dir = trace_dir
        self.brokers = {b: SimBroker(b, os.path.join(self.root, f"broker-{b}")) for b in range(brokers)}
        for broker in self.brokers.values():  # what a power loss keeps: a stream per broker, apart from self.rng
            broker.disk = SimDisk(random.Random(f"disk-{seed}-{broker.id}"), lambda: self.clock.now_ms() / 1000,
                                  mount=self.root)
        self._init_network()  # sim/network.py: the links, at seeded latencies
        self.drained_ms = START_MS  # what was held or slowed on a healed link has arrived (or timed out) by then
        self.pauses: list[list[float]] = []  # [broker, paused at, resumed at (inf: still paused)] of every pause
        # the event log's lines as their fields, formatted by `events` (`_event_line`): (time, text) for a note,
        # (time, broker, sender, receiver, message class[, " dropped"]) for an input
        self._log: list[tuple[Any, ...]] = []
        self._queue: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()
        self.delivered = 0
        self.zombie_writes: list[str] = []  # check_controller_write's findings, for sim/invariants.py
        self.stale_applied: list[str] = []  # check_broker_epoch's findings, for sim/invariants.py
        self.last_fault_ms = START_MS  # when a broker last started, stopped or crashed, or a link was cut or healed
        # (when, broker, what it lost, the partitions whose ISR in ZooKeeper was that broker alone) at each power loss
        # and each start on a replaced disk
        self.sole_isr_losses: list[tuple[float, int, str, frozenset[TopicPartition]]] = []
        # told when a broker's orderly stop completes, before its process exits: (broker id, BrokerShutdownComplete)
        self.on_stopped: Callable[[int, Any], None] | None = None

    # -- the event loop ---------------------------------------------------------------------------------------------
    @property
    def now(self) -> float:
        return self.clock.now_ms()

    def at(self, delay_ms: float, fn: Callable[[], None]) -> None:
        # rounded to the trace's precision (µs), as a live runtime rounds its clock: a replay sets the clock from the
        # recorded timestamp, so the actors must have seen exactly that value. The clock only ever holds a rounded
        # time (START_MS, an event's, run_for's end), and a rounded time in [2**40, 2**41) ms plus a whole number of
        # ms is exact and rounds to itself: most delays are whole (a request's timeout, a ZooKeeper answer, most
        # timers), so round_ms is skipped for them (tests/sim/test_sim_rounding.py holds the two equal)
        t = self.clock._now + delay_ms
        if delay_ms % 1.0 != 0.0 or not _EXACT_LO <= t < _EXACT_HI:
            t = round_ms(t)
        heapq.heappush(self._queue, (t, next(self._seq), fn))

    def at_time(self, at_ms: float, fn: Callable[[], None]) -> None:
        """`at` for a time already rounded (`round_ms`), not before now: ``fn`` at ``at_ms`` itself."""
        heapq.heappush(self._queue, (at_ms, next(self._seq), fn))

    def run_for(self, ms: float) -> None:
        """Run every event due within the next ``ms`` of simulated time; the clock ends at now + ms."""
        clock = self.clock
        end = round_ms(clock._now + ms)
        queue = self._queue
        pop = heapq.heappop
        # ManualClock.set's store without its call: an event's time is a float already (`at`, `at_time`)
        while queue and queue[0][0] <= end:
            t, _, fn = pop(queue)
            clock._now = t
            fn()
        clock.set(end)

    def note(self, text: str) -> None:
        self._log.append((self.clock.now_ms(), text))

    @property
    def events(self) -> list[str]:
        """The run's event log so far, a line per input delivered (``"<ms> b<id> <sender>><to> <Message>"``) and per
        note, in order."""
        return [_event_line(e) for e in self._log]

    def last_events(self) -> Iterator[str]:
        """The event log's lines from the newest back, formatted as they are read."""
        return map(_event_line, reversed(self._log))

    def deliver(self, broker: SimBroker, incarnation: int, to: str, body: Any, sender: str,
                cause: int | None = None) -> None:
        """One external input into a live broker incarnation, and everything it causes; what its edges inject on the
        way (the "zk" edge's callback) follows at once, then the ZooKeeper events the cascade fired."""
        rt = broker.rt
        if rt is None or broker.incarnation != incarnation:  # (broker.alive, inline: one call per input)
            return
        if broker.paused:  # as a stopped process's sockets, timers and ZooKeeper client: read once it resumes
            broker.held.append((to, body, sender, cause))
            return
        now = self.clock._now  # (ManualClock.now_ms without its call: an input's time)
        if to not in rt._addresses:  # (Runtime.has_actor, inline: one call per input)
            # an answer for an actor stopped meanwhile (a controller's channel after it resigned): the live driver
            # drops it too (Runtime._drive logs the KeyError)
            self._log.append((now, broker.id, sender, to, body.__class__, " dropped"))
            return
        self._log.append((now, broker.id, sender, to, body.__class__))
        self.delivered += 1
        rt.deliver(to, body, sender, cause, now)  # (at_ms)
        if rt.inbox.queue:
            self.drain(broker, incarnation)
        elif self.zk.told:  # (`pump_zk_events`'s own first look, inline: nothing told is the common case)
            self.pump_zk_events()

    def drain(self, broker: SimBroker, incarnation: int) -> None:
        """Deliver what the broker's edges injected (`Runtime.inject`: the "zk" edge's answers), in order, then
        hand the ZooKeeper events fired so far to their sessions."""
        rt = broker.rt
        # the inbox's deque itself: this loop is its only reader and the edges that fill it run in this thread
        pending = rt.inbox.queue if rt is not None else None
        if broker.paused and pending:
            broker.held.extend(pending)
            pending.clear()
        clock = self.clock
        # (broker.alive(incarnation) and the clock's now_ms, inline: calls per input)
        while rt is not None and broker.rt is not None and broker.incarnation == incarnation and pending:
            to, body, sender, cause = pending.popleft()
            now = clock._now
            self._log.append((now, broker.id, sender, to, body.__class__))
            self.delivered += 1
            rt.deliver(to, body, sender, cause, now)  # (at_ms)
        self.pump_zk_events()

    def pump_zk_events(self) -> None:
        """The watch and session events every live session has been handed, to its broker's ZkBridgeActor."""
        zk = self.zk
        if not zk.told:  # nothing handed to any session since the last look (the common case: one check)
            return
        # what stays is a dead broker's old session's: no broker takes it again (a start opens a new session, a
        # renewal too, handing it REESTABLISHED)
        zk.told = False
        sessions = zk.sessions
        for broker in self.brokers.values():
            session = sessions.get(broker.session) if broker.rt is not None else None
            if session is not None and session.events:  # (none is the common case: no list to swap)
                for event in self.zk.events(broker.session):
                    inc = broker.incarnation
                    self.at(ZK_LATENCY_MS, lambda b=broker, i=inc, e=event:
                            self.deliver(b, i, names.ZK, e, names.EDGE_ZK))

    # -- brokers -----------------------------------------------------------------------------------------------
    def start(self, broker_id: int) -> None:
        """BrokerProcess.start without sockets or threads: a new session, the actors, their start-up inputs."""
        broker = self.brokers[broker_id]
        assert not broker.up
        os.makedirs(broker.log_dir, exist_ok=True)
        if broker.disk is not None and broker.disk.failed:  # a failed disk was replaced: a new, empty one
            broker.disk = SimDisk(random.Random(f"disk-{self.seed}-{broker_id}-{broker.incarnation}"),
                                  broker.disk.clock, mount=broker.disk.mount)
            broker.disk_change = NEW_DISK
            self.sole_isr_losses.append((self.now, broker_id, "started on a new disk", self._led_alone(broker_id)))
        cfg = self.boot.config(broker_id, broker.log_dir)
        broker.incarnation += 1
        trace = None
        if self.trace_dir is not None:
            from edges.trace_writer import TraceWriter

            os.makedirs(self.trace_dir, exist_ok=True)
            suffix = "" if broker.incarnation == 1 else f".{broker.incarnation - 1}"
            header = {"process": f"broker-{broker_id}", "broker_id": broker_id, "started_ms": round(self.now),
                      "config": cfg.non_default(), "sim_seed": self.seed}
            if broker.disk_change is not None:  # what a replay does to its scratch log dir first (trace-format.md)
                header["disk"] = broker.disk_change.header(broker.log_dir)
            trace = TraceWriter(os.path.join(self.trace_dir, f"broker-{broker_id}{suffix}.jsonl"), header)
        broker.disk_change = None
        rt = Runtime(f"broker-{broker_id}", clock=self.clock, trace=trace, actor_system=self.boot.actor_system())
        broker.rt = rt
        broker.serving = False
        broker.stopping = False
        broker.processing = PROCESS_REQUESTS_AT_START
        broker.unread.clear()
        broker.closed = False
        broker.registered_epoch = None
        broker.session = self.zk.open_session(cfg["zookeeper.session.timeout.ms"])
        rt.edges = Edges(zk=SimZooKeeper(self, broker), timer=SimTimers(self, broker), net=SimNetwork(self, broker),
                         log_dirs=SimLogDirs(self, broker), process=SimProcess(self, broker), disk=broker.disk)
        self.note(f"b{broker_id} start (incarnation {broker.incarnation})")
        self.last_fault_ms = self.now
        spawn_broker_actors(rt)
        inc = broker.incarnation
        inputs = self.boot.startup_inputs(cfg, int(self.now))
        for to, body in inputs:
            self.at(0.0, lambda to=to, body=body: self.deliver(broker, inc, to, body, names.EDGE_PROCESS))

    def stop(self, broker_id: int) -> None:
        """SIGTERM: the process edge's BrokerShutdownRequested (a controlled shutdown, then the session closed and
        the process gone once the kafka-server actor says so)."""
        broker = self.brokers[broker_id]
        if not broker.up or broker.stopping:
            return
        self.note(f"b{broker_id} stop")
        self.last_fault_ms = self.now
        broker.stopping = True
        self.deliver(broker, broker.incarnation, names.KAFKA_SERVER, BrokerShutdownRequested(), names.EDGE_PROCESS)

    def session_gone(self, broker_id: int) -> bool:
        """The broker's last ZooKeeper session is closed or expired (a new incarnation can register)."""
        session = self.zk.sessions.get(self.brokers[broker_id].session)
        return session is None or session.state != OPEN

    def crash(self, broker_id: int, reason: str = "crash") -> None:
        """The process dies: every actor and in-memory value is gone, its files stay as written; its ZooKeeper
        session lives on until the server expires it (its timeout later); its connections break."""
        broker = self.brokers[broker_id]
        if not broker.up:
            return
        rt = broker.rt
        assert rt is not None
        self.note(f"b{broker_id} {reason}")
        self.last_fault_ms = self.now
        broker.rt = None
        broker.serving = False
        if broker.paused:
            self._pause_ended(broker_id)
        broker.paused = False
        broker.pause_armed = False
        broker.held.clear()
        broker.unread.clear()
        self._close_trace(rt)
        _RUNTIMES.pop(rt.key, None)
        if reason == "stopped":  # an orderly stop closes the session: the ephemerals go at once
            self.zk.close_session(broker.session)
        else:
            sid = broker.session
            self.zk.disconnect(sid)
            self.at(self.zk.sessions[sid].timeout_ms + 1.0, self._expire_check)
            self.zk.events(sid)  # what the dead client would have been told
        self.pump_zk_events()
        self.fail_in_flight(lambda p: p.dst == broker_id or p.src is broker, "connection reset")

    def power_loss(self, broker_id: int) -> None:
        """The broker's machine loses power: the process dies as in `crash`, and its disk keeps only what a power
        loss keeps (sim/disk.py: the fsynced bytes, a seeded share of the rest, torn at any byte)."""
        broker = self.brokers[broker_id]
        if not broker.up:
            return
        self.sole_isr_losses.append((self.now, broker_id, "lost power", self._led_alone(broker_id)))
        self.crash(broker_id, reason="power loss")
        assert broker.disk is not None
        broker.disk_change = change = broker.disk.power_loss()
        self.note(f"b{broker_id} disk after the power loss: {change.lost_files} files and {change.lost_bytes} bytes "
                  "lost")

    def _led_alone(self, broker_id: int) -> frozenset[TopicPartition]:
        """The partitions whose ISR in ZooKeeper is ``broker_id`` alone (an observer's read of the state znodes)."""
        prefix = TopicsZNode + "/"
        alone = set()
        for path, node in self.zk.nodes.items():
            if not (path.startswith(prefix) and path.endswith("/state")) or node.data is None:
                continue
            state = znodes.decode_partition_state(node.data, node.version)
            if state is not None and tuple(state.leader_and_isr.isr) == (broker_id,):
                _, _, _, topic, _, partition, _ = path.split("/")
                alone.add(TopicPartition(topic, int(partition)))
        return frozenset(alone)

    def lost_to_power(self, tp: TopicPartition, since_ms: float) -> str | None:
        """Why a record of ``tp`` acknowledged (or read) at ``since_ms`` may be gone by Kafka's own rules, or None: a
        broker lost power, or started on a new disk after its log dir failed, after it while the partition's ISR was
        that broker alone. Kafka does not fsync a record before acknowledging it (log.flush.interval.messages is
        unbounded: durability is replication's), so the sole ISR member's power loss takes what its page cache held,
        and a replaced disk everything; the broker is still elected, cleanly, when it comes back (seed 1792:
        sim-x1-0's ISR [0] behind a slow link, b0's power loss; seed 7012: sim-0's ISR [2], b2 on a new disk)."""
        for at, b, what, alone in self.sole_isr_losses:
            if at >= since_ms and tp in alone:
                return f"b{b} {what} at {at - START_MS:.0f} ms as its sole ISR member"
        return None

    def lost_any_to_power(self) -> bool:
        """Whether any partition lost records that way so far (an answer that cannot name its partition, such as an
        idempotent producer's OUT_OF_ORDER_SEQUENCE_NUMBER after the records it follows were lost, is then Kafka's
        too)."""
        return any(alone for _, _, _, alone in self.sole_isr_losses)

    def fail_log_dir(self, broker_id: int) -> None:
        """The disk under the broker's log dir goes bad: every call there raises EIO from now on (its logs defer the
        errors, its probe reports the dir, and with no live dir left the broker halts, as Kafka's
        LogManager.handleLogDirFailure); when it starts again, it is on a new, empty disk (the operator replaced
        it) and fetches its replicas from scratch."""
        broker = self.brokers[broker_id]
        if not broker.up:
            return
        assert broker.disk is not None
        self.note(f"b{broker_id} log dir fails")
        broker.disk.fail_dir(broker.log_dir)

    def pause(self, broker_id: int) -> None:
        """SIGSTOP: the process handles nothing (what reaches it waits: requests, answers, timers, ZooKeeper's
        events) and its ZooKeeper client stops heartbeating: the server expires its session after the timeout, and
        its ephemerals (the registration, /controller if it held it) go while the process still believes in them."""
        broker = self.brokers[broker_id]
        broker.pause_armed = False
        if not broker.up or broker.paused:
            return
        self.note(f"b{broker_id} pause")
        self.last_fault_ms = self.now
        broker.paused = True
        self.pauses.append([broker_id, self.now, float("inf")])
        sid = broker.session
        # the server hears no more heartbeats, but the connection stays up until the session expires: requests
        # already sent are answered and watch events sent, all waiting in the socket until the process runs again
        self.zk.silence(sid)
        self.at(self.zk.sessions[sid].timeout_ms + 1.0, self._expire_check)
        self.pump_zk_events()

    def _pause_ended(self, broker_id: int) -> None:
        for p in self.pauses:
            if p[0] == broker_id and p[2] == float("inf"):
                p[2] = self.now

    def paused_ms(self, broker_id: int, since_ms: float) -> float:
        """How long the broker has been paused since ``since_ms`` (what it was sent waited that long unread: a
        request's own timeout, a DelayedProduce's, runs from when the broker reads it)."""
        return sum(max(0.0, min(end, self.now) - max(start, since_ms))
                   for b, start, end in self.pauses if b == broker_id and end > since_ms)

    def pause_at_next_zk_request(self, broker_id: int, most_ms: float) -> None:
        """SIGSTOP landing in the middle of the broker's work: right after its next ZooKeeper request goes out
        (between a decision and the writes that follow from its answer), or after ``most_ms`` if it sends none."""
        broker = self.brokers[broker_id]
        if not broker.up or broker.paused:
            return
        self.note(f"b{broker_id} pause armed")
        broker.pause_armed = True
        inc = broker.incarnation

        def deadline() -> None:
            if broker.pause_armed and broker.alive(inc):
                self.pause(broker_id)

        self.at(most_ms, deadline)

    def resume(self, broker_id: int) -> None:
        """SIGCONT: everything that waited is handled, in the order it came (the answers of the ZooKeeper requests it
        had sent and the watch events the server sent it before the session expired among them, as kazoo reads them
        from its socket); then the ZooKeeper client learns what became of its session as kazoo does: still alive
        (nothing to tell: the connection never went), or expired (the server closed the connection: SUSPENDED, then
        EXPIRED on reconnecting; a new session, REESTABLISHED, already open for the requests the actors send while
        they handle what waited)."""
        broker = self.brokers[broker_id]
        if not broker.up or not broker.paused:
            return
        self.note(f"b{broker_id} resume")
        self.last_fault_ms = self.now
        broker.paused = False
        self._pause_ended(broker_id)
        held, broker.held = broker.held, []
        inc = broker.incarnation
        sid = broker.session
        told: list[Any] = []
        if not self.zk.wake(sid):
            # kazoo's thread finds the connection closed, reconnects, hears of the expiry and opens a new session
            # while the actors work through what waited (its SUSPENDED, EXPIRED and REESTABLISHED reach them after
            # it): a request they send meanwhile goes out on the new session — the interleaving in which only the
            # controller epoch fences a zombie controller's writes
            told = self.zk.events(sid)
            broker.session = self.zk.renew_session(sid)
            told += self.zk.events(broker.session)
        for to, body, sender, cause in held:
            self.deliver(broker, inc, to, body, sender, cause)
        for event in told:
            self.at(ZK_LATENCY_MS, lambda e=event: self.deliver(broker, inc, names.ZK, e, names.EDGE_ZK))
        self.pump_zk_events()

    def controller_epoch(self) -> int:
        """/controller_epoch as the model holds it now (-1: none yet)."""
        node = self.zk.nodes.get(ControllerEpochZNode)
        return int(node.data) if node is not None and node.data else -1

    def check_controller_write(self, broker: SimBroker, epoch: int, batch: Any, results: tuple[Any, ...]) -> None:
        """A controller's write takes effect only while its epoch is current (Kafka's
        wrapRequestWithControllerEpochCheck): a deposed controller that has not heard of it yet (a zombie) must have
        its writes refused."""
        current = self.controller_epoch()
        if current <= epoch:
            return
        for op, result in zip(batch.ops, results, strict=True):
            if isinstance(op, _WRITE_OPS) and result.code == "OK":
                path = getattr(op, "path", None) or ",".join(getattr(o, "path", "?") for o in op.ops)
                self.zombie_writes.append(
                    f"b{broker.id}'s controller of epoch {epoch} wrote {type(op).__name__} {path} at "
                    f"{self.now - START_MS:.3f} ms, /controller_epoch being {current}: a zombie controller's write "
                    f"took effect")

    def check_broker_epoch(self, broker: SimBroker, broker_epoch: int, answer: Any) -> None:
        """A controller request is applied only by the broker incarnation it was sent for (KIP-380's broker epoch:
        KafkaApis.isBrokerEpochStale): one naming an epoch older than this incarnation's registration — its
        predecessor's — must be refused STALE_BROKER_EPOCH, and an incarnation whose start-up has not ended (not
        registered yet: every epoch so far is a predecessor's) must not have read it at all."""
        if broker_epoch < 0 or getattr(answer, "error", None) != Errors.NONE:
            return
        mine = broker.registered_epoch
        if mine is None or broker_epoch < mine:
            self.stale_applied.append(
                f"b{broker.id} (incarnation {broker.incarnation}, "
                f"{'start-up not ended' if mine is None else f'broker epoch {mine}'}) applied the "
                f"{type(answer).__name__[:-len('Response')]} request sent for broker epoch {broker_epoch} at "
                f"{self.now - START_MS:.3f} ms: a request meant for an earlier incarnation")

    def _close_trace(self, rt: Runtime) -> None:
        """Close an incarnation's trace, its per-run temp dir's name replaced by TRACE_ROOT: the only bytes of a
        trace that differ between two runs of a seed (a replay points the log dirs at a scratch dir anyway)."""
        trace = rt.trace
        if trace is None:
            return
        trace.close()
        path = trace.path  # type: ignore[attr-defined]
        with open(path, "rb") as f:
            text = f.read()
        with open(path, "wb") as f:
            f.write(text.replace(self.root.encode(), TRACE_ROOT.encode()))

    def _expire_check(self) -> None:
        self.zk.tick()
        self.pump_zk_events()

    def zk_admin(self, op: Any) -> Any:
        """A request on the tools' own session (kafka-topics --zookeeper), its watch events pumped."""
        reply = self.zk.request(self.admin_session, op)
        self.zk.events(self.admin_session)
        self.pump_zk_events()
        return reply

    # -- network -----------------------------------------------------------------------------------------------
    def healthy(self) -> bool:
        """Every broker up and serving (not paused, not in its controlled shutdown), no link cut. A broker shutting
        down starts no fetcher for what it comes to follow (Kafka's ReplicaManager.makeFollowers once isShuttingDown
        is set) yet stays in those partitions' ISR until its next ControlledShutdown attempt, so an acks=all produce
        can wait for it (seeds 1633 and 1928)."""
        return (not self.cut and not self.one_way and not self.slow and self.now >= self.drained_ms
                and all(b.serving and not b.paused and not b.stopping for b in self.brokers.values()))

    # -- the end ---------------------------------------------------------------------------------------------------
    def close(self) -> None:
        for broker in self.brokers.values():
            if broker.rt is not None:
                self._close_trace(broker.rt)
                _RUNTIMES.pop(broker.rt.key, None)
                broker.rt = None
        self._queue.clear()
        shutil.rmtree(self.root, ignore_errors=True)


# BASE_PORT, HOST and REQUEST_TIMEOUT_MS are the network's (sim/network.py), named here too for what reads them here
__all__ = ["BASE_PORT", "HOST", "REQUEST_TIMEOUT_MS", "Boot", "Sim", "SimBroker", "scratch_base"]

