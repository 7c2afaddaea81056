"""TraceWriter: appends every received message to a per-process JSON-lines file.

Each received message is encoded to its line as it is recorded, in the thread that records it, and the line is
buffered; a background thread writes the buffer every second, and close writes the rest, so a crash loses at most
the last second. Encoding at once rather than in the background costs the same CPU, and keeps the message bodies
out of the buffer: held for a second, every body would survive into the garbage collector's older generations and be
walked by its collections (measured: a tenth of what recording costs).
"""

from __future__ import annotations

import collections
import json
import os
import threading
from typing import Any

from messages.codec import TRACE_VERSION, encode_record_bytes, notes

__all__ = ["TraceWriter"]


_CODE_PACKAGES = ("actors", "core", "edges", "messages", "kactor", "zk_bridge")
_digest: str | None = None


def code_digest() -> str:
    """A short digest of the decision-making source (actors, core, edges, messages, kactor, zk_bridge): written in the
    header, so a replay can say when the code changed since the recording (a divergence may then be the change)."""
    global _digest
    if _digest is None:
        import hashlib

        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the folder holding the packages
        h = hashlib.sha256()
        for pkg in _CODE_PACKAGES:
            for dirpath, dirnames, filenames in os.walk(os.path.join(root, pkg)):
                dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
                for name in sorted(filenames):
                    if name.endswith(".py"):
                        path = os.path.join(dirpath, name)
                        h.update(os.path.relpath(path, root).encode())
                        with open(path, "rb") as f:
                            h.update(f.read())
        _digest = h.hexdigest()[:16]
    return _digest


class TraceWriter:
    """Buffered, thread-safe writer of one process's trace."""

    def __init__(self, path: str, header: dict[str, Any], flush_interval_s: float = 1.0) -> None:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self.path = path
        self._file = open(path, "wb")  # noqa: SIM115 - closed in close(); lines are ASCII bytes
        header = {"code": code_digest(), **header}
        line = json.dumps({"trace_version": TRACE_VERSION, **header}, separators=(",", ":")) + "\n"
        self._file.write(line.encode())
        self._file.flush()
        self._buf: collections.deque[bytes] = collections.deque()
        notes.hold()  # bodies an edge decodes from text are written as that text (messages.codec.note_text)
        self._write_lock = threading.Lock()
        self._closed = threading.Event()
        self.records = 0
        self._interval = flush_interval_s
        self._thread = threading.Thread(target=self._run, name="trace-flusher", daemon=True)
        self._thread.start()

    def append(self, seq: int, ts: float, sender: str, receiver: str, body: Any, cause: int | None) -> None:
        # a deque: append and popleft are atomic, no lock on the recording thread
        self._buf.append(encode_record_bytes(seq, ts, sender, receiver, body, cause))

    def flush(self) -> None:
        with self._write_lock:
            notes.release()  # the values noted so far are recorded: their lines are in the buffer
            q = self._buf
            pop = q.popleft
            lines = [pop() for _ in range(len(q))]  # only what is there now: a racing append waits for the next
            if not lines or self._file.closed:
                return
            self._file.write(b"".join(lines))
            self._file.flush()
            self.records += len(lines)

    def _run(self) -> None:
        while not self._closed.wait(self._interval):
            self.flush()

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        self._thread.join(timeout=5)
        self.flush()
        self._file.close()
        notes.unhold()
