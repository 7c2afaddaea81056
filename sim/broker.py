"""One simulated broker id across its incarnations (sim/runtime.py's `Sim` starts, crashes, pauses and restarts it;
sim/network.py's `NetworkModel` reads whether it is up and reading requests)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from actors.runtime import Runtime
from sim.disk import DiskChange, SimDisk


class SimBroker:
    """One broker id across its incarnations: the current runtime (None while down) and its ZooKeeper session."""

    def __init__(self, broker_id: int, log_dir: str) -> None:
        self.id = broker_id
        self.log_dir = log_dir
        self.rt: Runtime | None = None
        self.session = 0
        self.incarnation = 0
        self.serving = False
        self.stopping = False  # told to stop (SIGTERM), its controlled shutdown under way
        self.shard_count: tuple[int, int] | None = None  # (incarnation, its partition shards): sim/invariants.py
        self.paused = False  # SIGSTOPped: its inputs wait in ``held`` until it resumes
        self.pause_armed = False  # to be SIGSTOPped right after its next ZooKeeper request goes out
        self.held: list[tuple[str, Any, str, int | None]] = []
        self.disk: SimDisk | None = None  # its log dirs (sim/disk.py), kept across its incarnations
        # what its disk became since its last incarnation (a power loss, a new disk), for the next one's trace header
        self.disk_change: DiskChange | None = None
        self.reported_dirs: set[int] = set()  # the incarnations whose probe reported its failed log dir
        # Transport.start_processing_requests: requests are read (before, accepted connections wait unread in
        # ``unread``: what reading them does, in the order they came)
        self.processing = False
        self.unread: list[Callable[[], None]] = []
        self.closed = False  # Transport.stop_processing_requests: its listeners closed (a client cannot connect)
        self.registered_epoch: int | None = None  # this incarnation's broker epoch once its start-up has ended

    @property
    def up(self) -> bool:
        return self.rt is not None

    def alive(self, incarnation: int) -> bool:
        return self.rt is not None and self.incarnation == incarnation
