"""Runtime: one process's actor system, its name directory, its trace, and the inbox its edges feed.

The actors run on thespian's simpleSystemBase inside a single driver thread (see docs/architecture.md for why).
Edges — kazoo's threads, the broker transport's sockets, the timer thread — never touch actors: they call
`Runtime.inject`, which queues the input; the driver thread takes inputs one at a time and `tell`s each into the
actor system, which runs the whole cascade it causes before the next input. That order is what a trace records
and what a replay reproduces.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from thespian.actors import ActorExitRequest, ActorSystem

from actors.clock import Clock, ManualClock
from actors.edge_slots import NO_EDGES, Edges
from messages.runtime import ActorInit

log = logging.getLogger("kactor.runtime")

_RUNTIMES: dict[str, Runtime] = {}
_keys = itertools.count(1)

# A hook the replay checker installs to see every message as it is delivered.
Observer = Callable[[int, float, str, str, Any, "int | None"], None]


class TraceSink(Protocol):
    """Where the runtime records every received message: a trace writer (an edge, given by whoever builds the
    runtime: the broker process, a replay recording its run), or none."""

    def append(self, seq: int, ts: float, sender: str, receiver: str, body: Any, cause: int | None) -> None: ...

    def close(self) -> None: ...


class Inbox:
    """The runtime's inbox: what its edges inject, for the one driver thread to take, in order.

    The part of ``queue.Queue`` the runtime uses (``put``, ``get``, ``get_nowait``, ``empty``, and ``queue``, the
    deque itself, which the simulator drains in its own thread), without queue.Queue's Condition: a put there takes
    its lock and notifies on every message (8 % of a producing broker's samples, issue #43). Here a put is a deque
    append (atomic under the GIL), and it wakes the driver only when the driver said it is about to wait: by
    releasing ``_wake``, a plain lock the driver holds while it is not waiting and blocks on to wait. A
    ``threading.Event`` did the same through a Condition (its set, notify_all and wait are Python code around the
    same kind of lock): a wake-up through the bare lock costs ~5 µs less (performance-log.md, "The inbox's
    wake-up"). The driver says it waits, then looks at the deque again, and only then blocks, so no put
    between its look and its block is missed; a release the driver did not wait for (it timed out first) only makes
    its next wait return at once, to look again.
    """

    __slots__ = ("queue", "_wake", "_waiting")

    def __init__(self) -> None:
        self.queue: deque[Any] = deque()
        self._wake = threading.Lock()
        self._wake.acquire()  # held: released only to wake a waiting driver
        self._waiting = False

    def put(self, item: Any) -> None:
        self.queue.append(item)
        if self._waiting:
            self._waiting = False
            try:
                self._wake.release()
            except RuntimeError:  # another writer released it first, between our look and our release
                pass

    def get_nowait(self) -> Any:
        try:
            return self.queue.popleft()
        except IndexError:
            raise queue.Empty from None

    def get(self, timeout: float | None = None) -> Any:
        """The next item, waiting up to ``timeout`` seconds for one (``queue.Empty`` after that); one reader only."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                return self.queue.popleft()
            except IndexError:
                pass
            self._waiting = True
            if self.queue:  # a put after the popleft, before _waiting: it saw nobody waiting and woke nobody
                self._waiting = False
                continue
            if deadline is None:
                self._wake.acquire()
            else:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._waiting = False
                    raise queue.Empty
                self._wake.acquire(True, remaining)
            self._waiting = False

    def empty(self) -> bool:
        return not self.queue

    def qsize(self) -> int:
        return len(self.queue)


class Runtime:
    """One process's actors, their directory, their trace and their inbox."""

    def __init__(self, process_name: str, clock: Clock | None = None, trace: TraceSink | None = None,
                 wall_clock: Callable[[], float] | None = None, actor_system: Any = None) -> None:
        self.process_name = process_name
        self.key = f"{process_name}#{next(_keys)}"
        # Actors see `clock`: live it is a ManualClock set to the wall time of each external input (so a cascade
        # sees one instant, exactly as a replay will); tests and replay may pass their own.
        self.clock: Clock = clock or ManualClock(time.time() * 1000.0)
        self._live_clock = clock is None
        self._wall = wall_clock or (lambda: time.time() * 1000.0)
        self.trace = trace
        self.observer: Observer | None = None
        # logDefs=False: thespian would otherwise dictConfig the root logger on every ActorSystem it creates,
        # replacing the process's own logging set-up (kactor.logging_setup in a broker, the replay command's filter).
        # A replay passes its own `actor_system` (kactor.trace.inline_system: simpleSystemBase's delivery order
        # without its per-message overhead); anything else runs on thespian.
        self.asys = actor_system if actor_system is not None else \
            ActorSystem("simpleSystemBase", logDefs=False, transientUnique=True)
        self._addresses: dict[str, Any] = {}
        # names unregistered on purpose and not registered again (a removed broker's channel): what the edges still
        # answer them is dropped, as Kafka's RequestSendThread, shut down, drops its last responses
        self._retired: set[str] = set()
        # The actor objects by name: simpleSystemBase runs them in this process, so tests, metrics endpoints and
        # `trace replay --dump-state` may read their state (never from another thread while the driver runs).
        self.instances: dict[str, Any] = {}
        # The I/O edges, set once by the process that builds them (kactor.broker_process) before the driver starts;
        # empty in replay, where recorded results stand in for them.
        self.edges: Edges = NO_EDGES
        self.seq = 0
        self.current_seq: int | None = None
        self.inbox = Inbox()
        self._stopped = threading.Event()
        self._driver: threading.Thread | None = None
        _RUNTIMES[self.key] = self

    @staticmethod
    def lookup(key: str) -> Runtime:
        return _RUNTIMES[key]

    # -- actors ---------------------------------------------------------------------------------------------------
    def spawn(self, actor_class: type, name: str) -> Any:
        """Create an actor, name it, and tell it its runtime (ActorInit is not traced: it carries no decision)."""
        if name in self._addresses:
            raise ValueError(f"an actor named {name!r} already exists in {self.process_name}")
        addr = self.asys.createActor(actor_class)
        self._addresses[name] = addr
        self._retired.discard(name)
        self.asys.tell(addr, ActorInit(name, self.key))
        return addr

    def register(self, name: str, addr: Any) -> None:
        """Name an actor that another actor created (e.g. the controller's per-broker channels)."""
        if name in self._addresses:
            raise ValueError(f"an actor named {name!r} already exists in {self.process_name}")
        self._addresses[name] = addr
        self._retired.discard(name)

    def unregister(self, name: str) -> None:
        """Forget an actor being stopped (ControllerChannelManager.removeExistingBroker's channel): an input the
        edges still deliver to its name (the failure of its last request, on the connection its stop closed) is
        dropped, not an error."""
        if self._addresses.pop(name, None) is not None:
            self._retired.add(name)

    def address(self, name: str) -> Any:
        try:
            return self._addresses[name]
        except KeyError:
            raise KeyError(f"no actor named {name!r} in {self.process_name}") from None

    def has_actor(self, name: str) -> bool:
        return name in self._addresses

    def names(self) -> list[str]:
        return list(self._addresses)

    def record(self, sender: str, receiver: str, body: Any, cause: int | None) -> int:
        """Give a received message its seq and append it to the trace.

        Its timestamp is the actors' clock (the instant of the external input being handled), so a replay that sets
        the clock from the trace reproduces every timestamp and every time-derived value exactly.
        """
        self.seq += 1
        ts = self.clock.now_ms()
        if self.trace is not None:
            self.trace.append(self.seq, ts, sender, receiver, body, cause)
        if self.observer is not None:
            self.observer(self.seq, ts, sender, receiver, body, cause)
        return self.seq

    # -- external inputs ------------------------------------------------------------------------------------------
    def inject(self, to: str, body: Any, sender: str, cause: int | None = None) -> None:
        """Queue an input from outside the actor system (thread-safe); the driver delivers it."""
        self.inbox.put((to, body, sender, cause))

    def deliver(self, to: str, body: Any, sender: str, cause: int | None = None,
                at_ms: float | None = None) -> None:
        """Deliver one external input now, in the calling thread, and run everything it causes."""
        if self._live_clock:
            assert isinstance(self.clock, ManualClock)
            # Rounded to the trace's precision (µs), so the recorded value is exactly the value actors saw.
            self.clock.set(round(self._wall(), 3) if at_ms is None else at_ms)
        elif at_ms is not None:
            clock = self.clock
            # the simulator passes the time its clock (this one) already shows: set only a time that moves it
            if isinstance(clock, ManualClock) and clock._now != at_ms:
                clock.set(at_ms)
        addr = self._addresses.get(to)
        if addr is None:
            if to in self._retired:
                log.debug("%s: dropped %s for %s, stopped", self.process_name, type(body).__name__, to)
                return
            addr = self.address(to)  # raises: no actor of that name ever was
        self.asys.tell(addr, (body, sender, cause))  # an Envelope's fields (actors/base.py)

    def run_until_idle(self) -> int:
        """Deliver every queued input (tests and replay drive the runtime this way). Returns how many."""
        n = 0
        while True:
            try:
                to, body, sender, cause = self.inbox.get_nowait()
            except queue.Empty:
                return n
            self.deliver(to, body, sender, cause)
            n += 1

    def start_driver(self) -> None:
        """Run the driver loop in a thread of its own (a broker process does this)."""
        self._driver = threading.Thread(target=self._drive, name=f"{self.process_name}-driver", daemon=True)
        self._driver.start()

    def _drive(self) -> None:
        while not self._stopped.is_set():
            try:
                item = self.inbox.get(timeout=0.2)
            except queue.Empty:
                continue
            if item is None:
                break
            to, body, sender, cause = item
            try:
                self.deliver(to, body, sender, cause)
            except Exception:  # noqa: BLE001 - the driver must outlive any one input
                log.exception("delivering %s to %s failed", type(body).__name__, to)

    def shutdown(self) -> None:
        self._stopped.set()
        self.inbox.put(None)
        if self._driver is not None and self._driver is not threading.current_thread():
            self._driver.join(timeout=10)
        for addr in self._addresses.values():
            try:
                self.asys.tell(addr, ActorExitRequest())
            except Exception:  # noqa: BLE001
                pass
        self.asys.shutdown()
        if self.trace is not None:
            self.trace.close()
        _RUNTIMES.pop(self.key, None)
