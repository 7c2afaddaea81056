"""The edges an actor may hand I/O to, as typed slots: what an actor needs of each edge, and nothing about how it
is built.

A broker process (``kactor.broker_process``, the composition root) creates every edge, wires it and sets
``runtime.edges`` once, before the driver delivers the first input. A replay or a unit test leaves a slot None:
the actor in front of it then does nothing, and the recorded inputs (ZkResponse, TimerFired, NetResponse...) stand
in for the edge. So an actor never asks whether it runs in a live broker; it only finds a slot empty or not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import attrs

if TYPE_CHECKING:
    from core.disk import Disk
    from messages.broker_lifecycle import BrokerShutdownComplete
    from messages.zk import ZkBatch, ZkOpResult


class ZooKeeper(Protocol):
    """ZkBridgeActor's edge (``zk_bridge.executor.ZkExecutor``): runs a batch, calls ``reply`` from its own thread."""

    def submit(self, batch: ZkBatch, callback: Callable[[tuple[ZkOpResult, ...]], None]) -> None: ...


class Timers(Protocol):
    """TimerActor's edge (``edges.timer.TimerEdge``): injects TimerFired(key) into ``owner`` after ``delay_ms``."""

    def schedule(self, owner: str, key: str, delay_ms: float, cause: int | None = None) -> None: ...

    def cancel(self, owner: str, key: str) -> bool: ...


class Network(Protocol):
    """NetworkActor's edge (``edges.transport.Transport``): requests to other processes and replies to theirs."""

    def send(self, host: str, port: int, to: str, body: Any, request_id: int, reply_to: str | None,
             cause: int | None = None, timeout_ms: float | None = None) -> None: ...

    def reply(self, connection_id: int, request_id: int, body: Any) -> None: ...

    def close_destination(self, host: str, port: int) -> None: ...


class MetricsPublisher(Protocol):
    """MetricsActor's edge (``edges.metrics_http.MetricsEdge``): serves the latest snapshot (an
    ``actors.metrics_actor.MetricsSnapshot``, not named here: that module imports the runtime, which imports this)."""

    def publish(self, snapshot: Any) -> None: ...


class LogDirFailureHandler(Protocol):
    """The replica manager's log-dir watcher (``edges.log_dirs.LogDirProbe``; Kafka's ReplicaManager
    LogDirFailureHandler): ``poke`` asks for a check now, ``close`` stops it (ReplicaManager.shutdown);
    ``append_failed`` records a refused append as an input, ``append_refused`` says whether the file system refuses
    one (live: the write itself answers, so False; a replay's ``RecordedLogDirs``: what the trace recorded)."""

    def poke(self) -> None: ...

    def append_failed(self, shard: str, dir_index: int, seq: int) -> None: ...

    def append_refused(self, dir_index: int, seq: int) -> bool: ...

    def close(self) -> None: ...


class LogCleaner(Protocol):
    """The log cleaner's threads (``edges.log_cleaner.LogCleanerEdge``; Kafka's LogCleaner): a partition shard
    registers the LogManager whose logs it hosts, and answers each LogCleaned with ``swapped``. Absent in a replay:
    the shard then redoes the cleaning from the recorded plan."""

    def register_shard(self, shard: str, log_manager: Any) -> None: ...

    def swapped(self, tp: Any, ok: bool) -> None: ...


class BrokerProcessHandle(Protocol):
    """The process a KafkaServerActor runs in: told when the broker's start-up has ended (its listeners start
    reading requests), when its controlled shutdown is over (they stop), and when its shutdown is complete, so it
    may exit."""

    def startup_complete(self) -> None: ...

    def stop_processing_requests(self) -> None: ...

    def shutdown_complete(self, msg: BrokerShutdownComplete) -> None: ...


@attrs.frozen(slots=True)
class Edges:
    """One process's edges; None = absent (a replay, a unit test, or a broker without a metrics port)."""

    zk: ZooKeeper | None = None
    timer: Timers | None = None
    net: Network | None = None
    metrics: MetricsPublisher | None = None
    log_dirs: LogDirFailureHandler | None = None
    process: BrokerProcessHandle | None = None
    log_cleaner: LogCleaner | None = None
    # the file system the replica manager's logs are on (core/disk.py's Disk): None = the OS's (a live broker, a
    # replay); the simulator's SimDisk (sim/disk.py) keeps them in memory with fsync semantics
    disk: Disk | None = None


NO_EDGES = Edges()
