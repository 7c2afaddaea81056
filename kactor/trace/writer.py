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
from messages.codec import to_json


def encode_record(seq: int, ts: float, sender: str, receiver: str, body: Any, cause: int | None) -> str:
    return json.dumps(
        {
            "seq": seq,
            "ts": round(ts, 3),
            "sender": sender,
            "receiver": receiver,
            "type": type(body).__name__,
            "payload": to_json(body),
            "cause": cause,
        },
        separators=(",", ":"),
    )


class TraceWriter:
    """Buffered, thread-safe writer of one process's trace."""

    def __init__(self, path: str, header: dict[str, Any], flush_interval_s: float = 1.0) -> None:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self.path = path
        self._file = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self._file.write(json.dumps({"trace_version": TRACE_VERSION, **header}, separators=(",", ":")) + "\n")
        self._file.flush()
        self._buf: list[tuple] = []
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

    def flush(self) -> None:
        with self._write_lock:
            with self._lock:
                buf, self._buf = self._buf, []
            if not buf or self._file.closed:
                return
            self._file.write("".join(encode_record(*r) + "\n" for r in buf))
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
