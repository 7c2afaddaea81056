"""Reading traces: the header, then one record per line, with errors that name the file and the line.

A truncated last line (a process killed mid-write) is accepted with a warning; any other undecodable line is a
TraceError. Payloads are decoded with the message codec (messages.codec) into the original message values.
"""

from __future__ import annotations

import glob
import json
import logging
import mmap
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import attrs

from messages.codec import TRACE_VERSIONS, CodecError, from_json, known_trace_version, rawbytes
from messages.codec.summary import is_input

log = logging.getLogger("kactor.trace")


class TraceError(ValueError):
    """A trace that cannot be read: one clear line naming the file (and line)."""


@attrs.frozen
class Record:
    seq: int
    ts: float
    sender: str
    receiver: str
    type: str
    payload: Any  # the codec JSON, decoded lazily by `body`
    cause: int | None
    line: int

    @property
    def body(self) -> Any:
        return from_json(self.payload)

    @property
    def external(self) -> bool:
        """An input from outside the actor system (an edge or a command-line client): what a replay feeds."""
        return is_external(self.sender)


def is_external(sender: str) -> bool:
    """An input of the trace: the codec's rule (messages.codec.summary.is_input), which writes such a line's bytes
    in full."""
    return is_input(sender)


def trace_files(trace_dir: str) -> list[str]:
    if not os.path.exists(trace_dir):
        raise TraceError(f"{trace_dir}: no such trace folder")
    if os.path.isfile(trace_dir):
        return [trace_dir]
    files = sorted(glob.glob(os.path.join(trace_dir, "*.jsonl")))
    if not files:
        raise TraceError(f"{trace_dir}: no trace files (*.jsonl) in this folder")
    return files


def trace_file_name(broker_id: int, incarnation: int) -> str:
    """broker-<id>.jsonl for a broker's first run, broker-<id>.<k>.jsonl for its k-th restart."""
    return f"broker-{broker_id}.jsonl" if incarnation == 0 else f"broker-{broker_id}.{incarnation}.jsonl"


def new_trace_path(trace_dir: str, broker_id: int) -> str:
    """The first unused incarnation's file name: a restarted broker never overwrites its previous trace."""
    k = 0
    while os.path.exists(os.path.join(trace_dir, trace_file_name(broker_id, k))):
        k += 1
    return os.path.join(trace_dir, trace_file_name(broker_id, k))


_INCARNATION = re.compile(r"^(broker-\d+)(?:\.(\d+))?\.jsonl$")


def broker_chains(files: list[str]) -> list[list[str]]:
    """Group trace files by broker process, each group in incarnation order (broker-0.jsonl, broker-0.1.jsonl, ...);
    any other file is a group of its own. Groups are ordered by their first file's name."""
    groups: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for f in files:
        m = _INCARNATION.match(os.path.basename(f))
        key = (os.path.dirname(os.path.abspath(f)), m.group(1) if m else os.path.basename(f))
        groups.setdefault(key, []).append((int(m.group(2) or 0) if m else 0, f))
    return [[f for _, f in sorted(g)] for _, g in sorted(groups.items())]


def trace_files_for_broker(trace_dir: str, broker_id: int) -> list[str]:
    """Every incarnation's trace of ``broker_id``, in start order."""
    paths = []
    k = 0
    while os.path.exists(p := os.path.join(trace_dir, trace_file_name(broker_id, k))):
        paths.append(p)
        k += 1
    if not paths:
        available = ", ".join(os.path.basename(f) for f in trace_files(trace_dir))
        raise TraceError(f"{trace_dir}: no trace for broker {broker_id} (found: {available})")
    return paths


def trace_file_for_broker(trace_dir: str, broker_id: int) -> str:
    return trace_files_for_broker(trace_dir, broker_id)[0]


def read_header(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            first = f.readline()
    except OSError as e:
        raise TraceError(f"{path}: {e.strerror}") from None
    try:
        header = json.loads(first)
    except json.JSONDecodeError:
        raise TraceError(f"{path}:1: not a kactor trace (the first line is not a JSON header)") from None
    if not isinstance(header, dict) or "trace_version" not in header:
        raise TraceError(f"{path}:1: not a kactor trace (no trace_version in the header)")
    if not known_trace_version(header["trace_version"]):
        raise TraceError(f"{path}:1: unsupported trace_version {header['trace_version']!r} "
                         f"(this kactor reads versions {', '.join(map(str, TRACE_VERSIONS))})")
    return header


def read_records(path: str) -> Iterator[Record]:
    """Every record after the header, in file order."""
    read_header(path)
    with open(path, encoding="utf-8") as f:
        lines = f.readlines()
    last = len(lines)
    for idx in range(1, last):
        text = lines[idx]
        lineno = idx + 1
        try:
            d = json.loads(text)
            yield Record(int(d["seq"]), float(d["ts"]), d["sender"], d["receiver"], d["type"], d["payload"],
                         d.get("cause"), lineno)
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
            if lineno == last and not text.endswith("\n"):
                log.warning("%s:%d: truncated last line ignored (the process stopped mid-write)", path, lineno)
                return
            raise TraceError(f"{path}:{lineno}: corrupt trace line ({e.__class__.__name__}: {e})") from None


# Every module that registers message types or wire enums for the codec: a trace may name any of them, and a reader
# (replay, `trace show`, a test) may run before the broker's actors have imported them.
# Every module of the `messages` and `core` packages (walked, so a new one cannot be missed): messages register their
# types on import, and core modules define the effects and values that travel inside messages.


def _registering_modules() -> list[str]:
    import pkgutil

    import core
    import messages

    found: list[str] = []
    for package in (messages, core):
        found += sorted(m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + "."))
    return found


_registered = False


def ensure_registered() -> None:
    """Import every message module once, so any type a trace names decodes."""
    global _registered
    if not _registered:
        import importlib

        for name in _registering_modules():
            importlib.import_module(name)
        _registered = True


@contextmanager
def bytes_file(path: str) -> Iterator[None]:
    """Decode payloads of the trace at ``path`` inside the block with its bytes file (``<process>.bin``, trace version
    4: messages/codec/rawbytes.py) mapped, read-only; without one (an older trace) a reference is the codec's error."""
    try:
        f = open(rawbytes.bytes_path(path), "rb")  # noqa: SIM115 - closed below, after the map
    except FileNotFoundError:
        yield
        return
    except OSError as e:
        raise TraceError(f"{rawbytes.bytes_path(path)}: {e.strerror}") from None
    with f:
        size = os.fstat(f.fileno()).st_size
        contents: Any = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        try:
            with rawbytes.source(contents):
                yield
        finally:
            if size:
                contents.close()


def decode_body(path: str, rec: Record) -> Any:
    ensure_registered()
    try:
        with bytes_file(path):
            return rec.body
    except CodecError as e:
        raise TraceError(f"{path}:{rec.line}: {e}") from None
