"""The timer edge: one daemon thread and one heap for every timer of a process.

Actors never sleep. They post ScheduleTimer to the actor "timer", which calls `TimerEdge.schedule`; when the
deadline passes this thread injects ``TimerFired(key)`` into the owner, with the ScheduleTimer's seq as cause (so a
trace shows which decision armed the timer).

Replacing or cancelling a timer marks its heap entry dead instead of searching the heap (lazy deletion); dead
entries are dropped when they reach the top, and the heap is rebuilt when they outnumber the live ones, so
100,000 pending timers cost one heap push each and bounded memory.

Deadlines use ``time.monotonic`` (real time; a wall-clock jump must not fire or delay timers). Tests of timing
*logic* drive actors with TimerFired directly and an injected clock instead.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from typing import Any

from actors import names
from messages.runtime import TimerFired

log = logging.getLogger("kactor.edges.timer")


# Heap entry layout (a list so "alive" can be flipped in place; deadline then a unique counter decide the order,
# so later fields are never compared and equal deadlines fire in scheduling order).
_DEADLINE, _ORDER, _OWNER, _KEY, _CAUSE, _ALIVE = range(6)

# Rebuild the heap when at least this many dead entries exist and they outnumber the live ones.
_COMPACT_MIN_DEAD = 1024


class TimerEdge:
    """Delivers ``TimerFired(key)`` to actor ``owner`` after a delay; one (owner, key) has at most one timer.

    Thread-safe; ``schedule``/``cancel`` never block beyond a short lock. The ``timer`` slot of ``runtime.edges``.
    """

    def __init__(self, runtime: Any) -> None:
        self._runtime = runtime
        self._cond = threading.Condition(threading.Lock())
        self._heap: list[list[Any]] = []
        self._live: dict[tuple[str, str], list[Any]] = {}
        self._dead = 0
        self._order = itertools.count()
        self._closed = False
        name = getattr(runtime, "process_name", "kactor")
        self._thread = threading.Thread(target=self._run, name=f"{name}-timer", daemon=True)
        self._thread.start()

    # -- API ------------------------------------------------------------------------------------------------------
    def schedule(self, owner: str, key: str, delay_ms: float, cause: int | None = None) -> None:
        """Fire ``TimerFired(key)`` at ``owner`` after ``delay_ms`` (<= 0: as soon as possible), replacing any
        pending timer of the same (owner, key)."""
        deadline = time.monotonic() + max(0.0, float(delay_ms)) / 1000.0
        with self._cond:
            if self._closed:
                return
            self._kill(self._live.pop((owner, key), None))
            entry = [deadline, next(self._order), owner, key, cause, True]
            self._live[(owner, key)] = entry
            heapq.heappush(self._heap, entry)
            # Only a new earliest deadline shortens the thread's wait; otherwise don't wake it.
            if self._heap[0] is entry:
                self._cond.notify()
            self._maybe_compact()

    def cancel(self, owner: str, key: str) -> bool:
        """Cancel the pending (owner, key) timer; True if there was one.

        A TimerFired already injected (but not yet delivered) cannot be recalled: actors must tolerate a stale one.
        """
        with self._cond:
            entry = self._live.pop((owner, key), None)
            self._kill(entry)
            self._maybe_compact()
            return entry is not None

    def cancel_owner(self, owner: str) -> int:
        """Cancel every pending timer of ``owner`` (e.g. an actor that stopped); returns how many. O(pending)."""
        with self._cond:
            keys = [k for k in self._live if k[0] == owner]
            for k in keys:
                self._kill(self._live.pop(k))
            self._maybe_compact()
            return len(keys)

    def pending(self) -> int:
        """How many timers are waiting to fire."""
        with self._cond:
            return len(self._live)

    def close(self, timeout_s: float = 5.0) -> None:
        """Stop the thread; pending timers are dropped. Idempotent."""
        with self._cond:
            self._closed = True
            self._heap.clear()
            self._live.clear()
            self._dead = 0
            self._cond.notify()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout_s)

    # -- internals (call with the lock held) ------------------------------------------------------------------------
    def _kill(self, entry: list[Any] | None) -> None:
        if entry is not None:
            entry[_ALIVE] = False
            self._dead += 1

    def _maybe_compact(self) -> None:
        if self._dead >= _COMPACT_MIN_DEAD and self._dead > len(self._live):
            self._heap = [e for e in self._heap if e[_ALIVE]]
            heapq.heapify(self._heap)
            self._dead = 0
            self._cond.notify()  # the head may have changed

    def _run(self) -> None:
        heap_pop = heapq.heappop
        with self._cond:
            while not self._closed:
                heap = self._heap
                while heap and not heap[0][_ALIVE]:
                    heap_pop(heap)
                    self._dead -= 1
                if not heap:
                    self._cond.wait()
                    continue
                now = time.monotonic()
                wait = heap[0][_DEADLINE] - now
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                while heap and heap[0][_DEADLINE] <= now:
                    entry = heap_pop(heap)
                    if not entry[_ALIVE]:
                        self._dead -= 1
                        continue
                    entry[_ALIVE] = False
                    del self._live[(entry[_OWNER], entry[_KEY])]
                    # Inject under the lock (inject is a non-blocking queue put) so that once cancel() returns, no
                    # TimerFired for that timer can still be injected.
                    try:
                        self._runtime.inject(entry[_OWNER], TimerFired(entry[_KEY]), sender=names.EDGE_TIMER,
                                             cause=entry[_CAUSE])
                    except Exception:  # noqa: BLE001 - the timer thread must outlive a broken runtime
                        log.exception("injecting TimerFired(%s) into %s failed", entry[_KEY], entry[_OWNER])
