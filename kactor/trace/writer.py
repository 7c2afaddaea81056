"""TraceWriter: appends every received message to a per-process JSON-lines file.

The driver thread only appends (seq, ts, sender, receiver, body, cause) to an in-memory list; the bodies are frozen
values, so a background thread can encode them later without copying. The buffer is flushed every second and on
close, so a crash loses at most the last second.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from kactor.trace import TRACE_VERSION
from kactor.trace.fastcodec import encode_record, encode_records

__all__ = ["TraceWriter", "encode_record"]


_CODE_PACKAGES = ("actors", "core", "messages", "kactor", "zk_bridge")
_digest: str | None = None


def code_digest() -> str:
    """A short digest of the decision-making source (actors, core, messages, kactor, zk_bridge): written in the
    header, so a replay can say when the code changed since the recording (a divergence may then be the change)."""
    global _digest
    if _digest is None:
        import hashlib

        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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
        self._file = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        header = {"code": code_digest(), **header}
        self._file.write(json.dumps({"trace_version": TRACE_VERSION, **header}, separators=(",", ":")) + "\n")
        self._file.flush()
        self._buf: list[tuple] = []
        self._known: dict[int, tuple[Any, str]] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._closed = threading.Event()
        self.records = 0
        self._interval = flush_interval_s
        self._thread = threading.Thread(target=self._run, name="trace-flusher", daemon=True)
        self._thread.start()

    def append(self, seq: int, ts: float, sender: str, receiver: str, body: Any, cause: int | None) -> None:
        with self._lock:
            self._buf.append((seq, ts, sender, receiver, body, cause))

    def note_text(self, value: Any, text: str) -> None:
        """``value`` arrived as this JSON ``text`` (an edge decoded it): the next flush writes the text instead of
        encoding the value again. Kept (with the value, so its id stays unique) until that flush only."""
        with self._lock:
            self._known[id(value)] = (value, text)

    def flush(self) -> None:
        with self._write_lock:
            with self._lock:
                buf, self._buf = self._buf, []
                known, self._known = self._known, {}
            if not buf or self._file.closed:
                return
            self._file.write(encode_records(buf, {k: text for k, (_, text) in known.items()}))
            del known  # only now may those values go
            self._file.flush()
            self.records += len(buf)

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
