"""One thread serving a queue of jobs in order, off the inbound I/O thread: the edge handlers' threads
(edges/net/edge_workers.py) and the SASL token thread (edges/net/sasl.py) are each one of these."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

log = logging.getLogger("kactor.edges.transport")

Job = TypeVar("Job")


class QueueWorker(Generic[Job]):
    """``serve(job)`` for each job submitted, one at a time, in submission order, on a daemon thread named ``name``.
    A job that raises is logged and the next one served: one bad request must not stop the thread."""

    __slots__ = ("_serve", "_queue", "_thread")

    def __init__(self, name: str, serve: Callable[[Job], None]) -> None:
        self._serve = serve
        self._queue: queue.SimpleQueue[tuple[Job] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, job: Job) -> None:
        self._queue.put((job,))  # boxed: a job may itself be None

    def close(self, wait: float | None = None) -> None:
        """Stop after the jobs already submitted; ``wait``: seconds to wait for that (None: return at once)."""
        self._queue.put(None)
        if wait is not None:
            self._thread.join(wait)

    def _run(self) -> None:
        get, serve = self._queue.get, self._serve
        while (item := get()) is not None:
            try:
                serve(item[0])
            except Exception:  # noqa: BLE001 - logged; the thread serves the next job
                log.exception("%s failed on a job", self._thread.name)
