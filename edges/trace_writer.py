"""TraceWriter: appends every received message to a per-process JSON-lines file.

Each received message is encoded to its line as it is recorded, in the thread that records it, and the line is
buffered; a background thread writes the buffer every second, and close writes the rest, so a crash loses at most
the last second. Encoding at once rather than in the background costs the same CPU, and keeps the message bodies
out of the buffer: held for a second, every body would survive into the garbage collector's older generations and be
walked by its collections (measured: a tenth of what recording costs).

An input's bytes longer than 1 KB (a produced batch, a fetched one) go as they are to the trace's bytes file,
``<process>.bin`` (trace version 4, messages/codec/rawbytes.py), through a buffered file: a big batch is written
straight from its bytes object, in the recording thread, with the GIL released; small ones are gathered. A flush
writes that file out before the lines it takes, so a written line never names bytes the file does not hold yet.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import fcntl
import json
import mmap
import os
import threading
import time
from typing import Any

from messages.codec import TRACE_VERSION, encode_record_bytes, notes
from messages.codec.orjson_lines import bytes_file_default
from messages.codec.rawbytes import bytes_path

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
        self._bytes = _BytesFile(bytes_path(path))
        self._to_file = bytes_file_default(self._bytes.put)
        notes.hold()  # bodies an edge decodes from text are written as that text (messages.codec.note_text)
        self._write_lock = threading.Lock()
        self._closed = threading.Event()
        self.records = 0
        self._interval = flush_interval_s
        self._thread = threading.Thread(target=self._run, name="trace-flusher", daemon=True)
        self._thread.start()

    def append(self, seq: int, ts: float, sender: str, receiver: str, body: Any, cause: int | None) -> None:
        # a deque: append and popleft are atomic, no lock on the recording thread
        self._buf.append(encode_record_bytes(seq, ts, sender, receiver, body, cause, None, self._to_file))

    def flush(self) -> None:
        with self._write_lock:
            notes.release()  # the values noted so far are recorded: their lines are in the buffer
            q = self._buf
            pop = q.popleft
            lines = [pop() for _ in range(len(q))]  # only what is there now: a racing append waits for the next
            if not lines or self._file.closed:
                return
            self._bytes.write_all()  # every byte these lines name was put before its line was appended
            self._file.write(b"".join(lines))
            self._file.flush()
            self.records += len(lines)

    def _run(self) -> None:
        interval = self._interval
        due = time.monotonic() + interval
        while not self._closed.is_set():
            self._bytes.wake.wait(max(0.0, due - time.monotonic()))
            if self._closed.is_set():
                break
            self._bytes.write_full()  # woken by full buffers: written out as they come, not once a second
            if time.monotonic() >= due:
                self.flush()
                due = time.monotonic() + interval

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        self._bytes.wake.set()
        self._thread.join(timeout=5)
        self.flush()
        self._file.close()
        self._bytes.close()
        notes.unhold()


class _BytesFile:
    """The trace's bytes file, written around the page cache (O_DIRECT) from a few reused aligned buffers.

    Through the page cache every MB recorded took new pages: on the bench machine, a VM whose memory the host backs
    as it is first used, that was 2-3 ms of system time a MB in the recording broker against 0.25 for pages used
    before (2026-11-25: a traced cluster with the write left out cost what an untraced one did), and at a data path's
    rate the trace would push the log segments consumers read out of the cache. The file is written once and read
    back only by a later replay: here ``put`` copies the bytes into the current buffer (a memcpy, in the recording
    thread), a full buffer is written by the flusher thread, woken for it, and ``write_all`` (a flush, before the
    lines it writes) writes the buffer in progress too, padded to the alignment O_DIRECT wants and written again
    once it fills. ``close`` cuts the file to its length. Where O_DIRECT is refused (tmpfs) the same writes go
    through the page cache."""

    SIZE = 4 << 20  # a buffer: ~4 produced batches of 1 MB
    ALIGN = 4096  # O_DIRECT's alignment of offsets and lengths (a page: what any block device accepts)
    SPARE = 4  # buffers kept for reuse
    BEHIND = 16  # full buffers waiting for the flusher: beyond that, put writes them itself

    def __init__(self, path: str) -> None:
        # Created at the first write: a trace whose inputs never carry more than FILE_MIN bytes (a controller's,
        # a live cluster's single-record batches) has no bytes file beside it. One left by an earlier trace of the
        # same name goes now, as the .jsonl it belonged to is overwritten.
        self.path = path
        self.fd: int | None = None
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        self.lock = threading.Lock()  # put: an offset and its copy go together, whichever thread records
        self.write_lock = threading.Lock()  # the writes, in file order
        self.wake = threading.Event()
        self.pos = 0  # the file's length: every byte put
        self.buf = mmap.mmap(-1, self.SIZE)  # page-aligned, as O_DIRECT needs
        self.start = 0  # the file offset of buf[0] (a multiple of SIZE)
        self.fill = 0
        self.full: collections.deque[tuple[mmap.mmap, int]] = collections.deque()  # (buffer, its file offset)
        self.spare: list[mmap.mmap] = []

    def put(self, value: bytes) -> int:
        """Append ``value``; its offset in the file."""
        view = memoryview(value)
        with self.lock:
            offset = self.pos
            self.pos += len(view)
            while view:
                k = min(len(view), self.SIZE - self.fill)
                self.buf[self.fill:self.fill + k] = view[:k]
                self.fill += k
                view = view[k:]
                if self.fill == self.SIZE:
                    self.full.append((self.buf, self.start))
                    self.buf = self.spare.pop() if self.spare else mmap.mmap(-1, self.SIZE)
                    self.start += self.SIZE
                    self.fill = 0
            behind = len(self.full)
        if behind:
            self.wake.set()
            if behind > self.BEHIND:  # the flusher is far behind (a slow disk): the recording thread helps
                self.write_full()
        return offset

    def write_full(self) -> None:
        """Write the full buffers (the flusher thread, woken by put)."""
        self.wake.clear()
        self._write(current=False)

    def write_all(self) -> None:
        """Write every byte put so far: the full buffers, then the one in progress, padded to the alignment (and
        written again as it fills)."""
        self._write(current=True)

    def _write(self, current: bool) -> None:
        with self.write_lock:  # one writer at a time, so a buffer goes back to the spares only once written
            with self.lock:  # what was put until now; put goes on meanwhile, after it
                full = list(self.full)
                self.full.clear()
                buf, start, fill = self.buf, self.start, self.fill
            for b, at in full:
                self._pwrite(b, at)
            # The buffer in progress, without holding put back for a disk write: bytes before `fill` do not change
            # any more; those after it may be landing as this reads them, and are written again, whole, later.
            if current and fill:
                padded = (fill + self.ALIGN - 1) // self.ALIGN * self.ALIGN
                self._pwrite(memoryview(buf)[:padded], start)
            with self.lock:
                self.spare.extend(b for b, _ in full[:max(0, self.SPARE - len(self.spare))])

    def _open(self) -> int:
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        try:
            self.fd = os.open(self.path, flags | getattr(os, "O_DIRECT", 0), 0o644)
        except OSError:
            self.fd = os.open(self.path, flags, 0o644)
        return self.fd

    def _pwrite(self, data: Any, at: int) -> None:
        if self.fd is None:  # under write_lock: one opener
            self._open()
        assert self.fd is not None
        try:
            os.pwrite(self.fd, data, at)
        except OSError as e:  # O_DIRECT opened but refused on write (some file systems): the page cache after all
            direct = getattr(os, "O_DIRECT", 0)
            if e.errno != errno.EINVAL or not fcntl.fcntl(self.fd, fcntl.F_GETFL) & direct:
                raise
            fcntl.fcntl(self.fd, fcntl.F_SETFL, fcntl.fcntl(self.fd, fcntl.F_GETFL) & ~direct)
            os.pwrite(self.fd, data, at)

    def close(self) -> None:
        self.write_all()
        if self.fd is None:  # nothing was ever put
            return
        os.ftruncate(self.fd, self.pos)  # the padding of the last buffer
        os.close(self.fd)
