"""The streaming core of ``kactor trace show``: read trace lines one at a time, filter them, follow cause chains.

Traces can hold millions of lines, so nothing here keeps every record: a listing streams, a cause chain keeps one
(cause, byte offset) pair per seq and re-reads only the chain's lines, and an effects tree keeps a small row per
member of the subtree. Payloads stay the codec's JSON (docs/trace-format.md): matching and summaries walk that JSON
instead of decoding it to message classes.
"""

from __future__ import annotations

import heapq
import json
import logging
import os
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any, BinaryIO

import attrs

from kactor.trace.reader import TraceError, read_header
from messages.codec import rawbytes, summary

log = logging.getLogger("kactor.trace.show")

SUMMARY_WIDTH = 100
_SHORT_LIST = 8  # a list of scalars up to this long is shown in full, e.g. isr=[0,1,2]


@attrs.frozen(slots=True)
class Entry:
    """One record line: the parsed record and the line as written (``--json`` prints it unchanged)."""

    process: str
    line: int
    offset: int  # byte offset of the line in its file, for re-reading it
    raw: str
    rec: dict[str, Any]

    @property
    def seq(self) -> int:
        return self.rec["seq"]

    @property
    def ts(self) -> float:
        return self.rec["ts"]

    @property
    def cause(self) -> int | None:
        return self.rec.get("cause")


@attrs.frozen(slots=True)
class Row:
    """What one output row shows; small, so a tree of many rows fits in memory without the payloads."""

    process: str
    seq: int
    ts: float
    sender: str
    receiver: str
    type: str
    summary: str
    depth: int = 0


def row_of(entry: Entry, depth: int = 0) -> Row:
    r = entry.rec
    return Row(entry.process, r["seq"], r["ts"], r["sender"], r["receiver"], r["type"], summarize(r["payload"]),
               depth)


# -- reading ------------------------------------------------------------------------------------------------------


def process_name(path: str) -> str:
    """The file name's stem: the process name (docs/trace-format.md)."""
    base = os.path.basename(path)
    return base[:-len(".jsonl")] if base.endswith(".jsonl") else base


def _parse(text: str) -> dict[str, Any]:
    """A record with the keys every reader needs checked and typed, as kactor.trace.reader.read_records does."""
    d = json.loads(text)
    d["seq"] = int(d["seq"])
    d["ts"] = float(d["ts"])
    for key in ("sender", "receiver", "type"):
        if not isinstance(d[key], str):
            raise TypeError(f"{key} is not a string")
    cause = d.get("cause")
    if cause is not None:
        d["cause"] = int(cause)
    return d


def iter_entries(path: str) -> Iterator[Entry]:
    """Every record after the header, in file order, one line at a time (reader.read_records reads the whole file,
    which a trace of millions of lines must not). Errors and the truncated-last-line rule are the reader's."""
    read_header(path)
    try:
        with open(path, "rb") as f:  # binary: byte offsets let a cause chain seek back to its lines
            yield from _entries(path, f)
    except OSError as e:
        raise TraceError(f"{path}: {e.strerror}") from None


def _entries(path: str, f: BinaryIO) -> Iterator[Entry]:
    process = process_name(path)
    offset = len(f.readline())
    lineno = 1
    for data in f:
        lineno += 1
        try:
            text = data.decode("utf-8")
            rec = _parse(text)
        except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError) as e:
            # only the very last line can lack its newline: a crash cut the writer's last flush short
            if not data.endswith(b"\n"):
                log.warning("%s:%d: truncated last line ignored (the process stopped mid-write)", path, lineno)
                return
            raise TraceError(f"{path}:{lineno}: corrupt trace line ({e.__class__.__name__}: {e})") from None
        yield Entry(process, lineno, offset, text.rstrip("\n"), rec)
        offset += len(data)


def entry_at(path: str, offset: int, line: int) -> Entry:
    """Re-read the one record line at ``offset`` (found by an earlier pass of iter_entries)."""
    with open(path, "rb") as f:
        f.seek(offset)
        text = f.readline().decode("utf-8")
    return Entry(process_name(path), line, offset, text.rstrip("\n"), _parse(text))


def merged_entries(paths: list[str]) -> Iterator[Entry]:
    """Several processes' records in (ts, process, seq) order, streaming: a k-way merge of the files, each already
    in ts order (records are written as received). A wall clock stepping back inside one file breaks that premise;
    the merge then stays streaming and keeps each file in seq order rather than sorting millions of lines."""
    for p in paths:
        read_header(p)  # every file's header error before the first row is printed
    if len(paths) == 1:
        return iter_entries(paths[0])
    return heapq.merge(*(iter_entries(p) for p in paths), key=lambda e: (e.ts, e.process, e.seq))


def start_ms(paths: list[str]) -> float | None:
    """The earliest process start: a listing's times are relative to it."""
    starts = [h.get("started_ms") for h in map(read_header, paths)]
    numbers = [s for s in starts if isinstance(s, (int, float)) and not isinstance(s, bool)]
    return min(numbers) if numbers else None


# -- filters ------------------------------------------------------------------------------------------------------


def parse_partition(text: str) -> tuple[str, int]:
    """``topic-3`` → ("topic", 3); the last dash splits, since topic names may contain dashes."""
    topic, sep, number = text.rpartition("-")
    if not sep or not topic or not number.isdigit():
        raise ValueError(f"{text!r} is not TOPIC-PARTITION (e.g. orders-3)")
    return topic, int(number)


def mentions_partition(value: Any, topic: str, partition: int) -> bool:
    """Whether codec JSON holds the TopicPartition(topic, partition) object anywhere."""
    stack = [value]
    while stack:  # iterative: a payload nests a few levels but may hold thousands of partition states
        v = stack.pop()
        if isinstance(v, dict):
            if v.get("@") == "TopicPartition" and v.get("topic") == topic and v.get("partition") == partition:
                return True
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


# The fields by which a transport or wrapper message carries another one: the controller sends a LeaderAndIsrRequest
# as SendRequest.request, the channel as NetSend.body, the broker receives it as NetRequest.body and its shards as
# ShardRequest.body; `--type LeaderAndIsrRequest` should find all of them.
_CARRIER_FIELDS = ("request", "body")


def carried_type(payload: Any) -> str | None:
    """The type tag of the message ``payload`` carries (see _CARRIER_FIELDS), or None."""
    if isinstance(payload, dict):
        for key in _CARRIER_FIELDS:
            inner = payload.get(key)
            if isinstance(inner, dict) and "@" in inner:
                return str(inner["@"])
    return None


def record_filter(types: Iterable[str] | None, partition: tuple[str, int] | None) -> Callable[[Entry], bool]:
    wanted = frozenset(types or ())
    topic_text = partition[0] if partition else ""

    def keep(entry: Entry) -> bool:
        if wanted and entry.rec["type"] not in wanted and carried_type(entry.rec["payload"]) not in wanted:
            return False
        if partition is None:
            return True
        # a cheap text test first: most lines do not name the topic at all (Kafka topic names need no JSON escaping)
        return topic_text in entry.raw and mentions_partition(entry.rec["payload"], *partition)

    return keep


# -- summaries ----------------------------------------------------------------------------------------------------


def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, (bool, int, float, str))


def _brief(v: Any, nested: bool) -> str:
    if isinstance(v, str):
        return v if v else '""'
    if _scalar(v):
        return json.dumps(v)
    if isinstance(v, list):
        return _brief_items(v, "[", "]")
    if not isinstance(v, dict):
        return "?"
    if "@e" in v:
        return str(v.get("v"))
    if "@s" in v and isinstance(v["@s"], list):
        return _brief_items(v["@s"], "{", "}")
    if "@m" in v and isinstance(v["@m"], list):
        return f"{{{len(v['@m'])} entries}}"
    if summary.TAG in v:  # trace version 3: bytes a line that is not an input summarises
        return f"<{summary.describe(v)}>"
    if "@b64" in v or "@b" in v or rawbytes.TAG in v:  # base64 (version 2 on), latin-1 text (1), the bytes file (4)
        return f"<{_bytes_size(v)} bytes>"
    tag = v.get("@")
    if tag == "TopicPartition":
        return f"{v.get('topic')}-{v.get('partition')}"
    if tag is None:
        return "{…}"
    # one level of a nested message is worth showing (a NetRequest's body, a ZkRequest's batch), deeper is noise
    return str(tag) if nested else f"{tag}({_fields(v, nested=True)})"


def _brief_items(items: list[Any], open_: str, close: str) -> str:
    if len(items) <= _SHORT_LIST and all(_scalar(i) for i in items):
        return open_ + ",".join(_brief(i, True) for i in items) + close
    tags = {i.get("@") if isinstance(i, dict) else None for i in items}
    if len(tags) == 1 and (tag := tags.pop()) is not None:
        return f"{open_}{len(items)}×{tag}{close}"  # e.g. partition_states=[20×LeaderAndIsrPartitionState]
    return f"{open_}{len(items)}{close}"


def _fields(obj: dict[str, Any], nested: bool) -> str:
    return " ".join(f"{k}={_brief(v, nested)}" for k, v in obj.items() if k != "@")


def _bytes_size(v: dict[str, Any]) -> int | None:
    """The size of a bytes value's JSON in any trace version (a summary's ``size``), None for other JSON."""
    if "@b64" in v:
        text = str(v["@b64"])
        return len(text) * 3 // 4 - text[-2:].count("=")
    if "@b" in v:
        return len(str(v["@b"]))
    if rawbytes.TAG in v:
        return rawbytes.size_of(v)
    if summary.TAG in v:
        inner = v[summary.TAG]
        return inner.get("size") if isinstance(inner, dict) and isinstance(inner.get("size"), int) else None
    return None


def _nested_records(payload: Any) -> str:
    """What a payload carries in bytes below its own fields (a FetchResponse's partitions in a NetReply, a
    ProduceRequest's in a ShardRequest), which its row would not show: ``records 1,334 B in 2 offsets 10-14``
    (non-empty values; offsets where the line summarised whole record batches), or ""."""
    sizes: list[int] = []
    offsets: list[tuple[int, int]] = []
    stack = [v for k, v in payload.items() if k != "@"] if isinstance(payload, dict) and "@" in payload else []
    stack = [c for v in stack for c in (v if isinstance(v, list) else v.values() if isinstance(v, dict) else ())]
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, dict):
            size = _bytes_size(v)
            if size is None:
                stack.extend(v.values())
                continue
            if size:  # a partition with nothing to say holds b""
                sizes.append(size)
            inner = v.get(summary.TAG)
            if isinstance(inner, dict) and isinstance(inner.get("first_offset"), int) and inner["first_offset"] >= 0:
                offsets.append((inner["first_offset"], inner["last_offset"]))
    if not sizes:
        return ""
    text = f"records {sum(sizes):,} B" + (f" in {len(sizes)}" if len(sizes) > 1 else "")
    if offsets:
        text += f" offsets {min(o[0] for o in offsets)}-{max(o[1] for o in offsets)}"
    return f"<{text}> "


def summarize(payload: Any, width: int = SUMMARY_WIDTH) -> str:
    """A one-line summary of a codec payload: the bytes it carries below its fields (if any), its top-level fields,
    long lists as counts, cut to ``width``."""
    text = _fields(payload, nested=False) if isinstance(payload, dict) and "@" in payload else _brief(payload, False)
    text = _nested_records(payload) + text
    return text if len(text) <= width else text[:width - 1].rstrip() + "…"


# -- cause chains -------------------------------------------------------------------------------------------------


class CauseIndex:
    """seq → (cause, byte offset, line) for one file, in flat arrays: three machine ints per record, since seqs run
    1, 2, 3… (a dict of tuples would cost ~10× as much over millions of lines). Seqs that break that pattern, in a
    hand-edited trace, go to a dict."""

    _NONE = -1  # cause null; seqs start at 1

    def __init__(self) -> None:
        self._cause = array("q")
        self._offset = array("q")
        self._line = array("q")
        self._other: dict[int, tuple[int | None, int, int]] = {}

    def add(self, seq: int, cause: int | None, offset: int, line: int) -> None:
        if not self._other and seq == len(self._cause) + 1:
            self._cause.append(self._NONE if cause is None else cause)
            self._offset.append(offset)
            self._line.append(line)
        else:
            self._other[seq] = (cause, offset, line)

    def get(self, seq: int) -> tuple[int | None, int, int] | None:
        if seq in self._other:
            return self._other[seq]
        if 1 <= seq <= len(self._cause):
            cause = self._cause[seq - 1]
            return (None if cause == self._NONE else cause), self._offset[seq - 1], self._line[seq - 1]
        return None


def _unknown_seq(path: str, seq: int, last: int | None) -> TraceError:
    extent = f"its seqs end at {last}" if last is not None else "it has no records"
    return TraceError(f"{path}: no message with seq {seq} ({extent})")


def cause_chain(path: str, seq: int) -> list[Entry]:
    """The records from the root external input (cause null) down to ``seq``, root first.

    Two passes: the first indexes (cause, offset) up to ``seq`` (a cause always precedes its effects, so nothing
    after it matters); the second re-reads only the chain's lines."""
    index = CauseIndex()
    last: int | None = None
    found = False
    for e in iter_entries(path):
        index.add(e.seq, e.cause, e.offset, e.line)
        last = e.seq
        if e.seq == seq:
            found = True
            break
    if not found:
        raise _unknown_seq(path, seq, last)
    chain: list[Entry] = []
    seen: set[int] = set()
    current: int | None = seq
    while current is not None and current not in seen:  # `seen`: a hand-made trace may loop its causes
        seen.add(current)
        hit = index.get(current)
        if hit is None:
            log.warning("%s: seq %d's cause %d is not in this trace; the chain starts at seq %d",
                        path, chain[-1].seq, current, chain[-1].seq)
            break
        cause, offset, line = hit
        chain.append(entry_at(path, offset, line))
        current = cause
    chain.reverse()
    return chain


def effects(path: str, seq: int) -> Iterator[tuple[Entry, int]]:
    """Every record whose cause chain reaches ``seq`` (``seq`` itself first), in file order, with its depth below
    ``seq``. One pass: a cause precedes its effects, so a record belongs iff its cause already does. Only the
    subtree's seqs are kept."""
    depth: dict[int, int] = {}
    last: int | None = None
    for e in iter_entries(path):
        last = e.seq
        if e.seq == seq:
            depth[seq] = 0
        elif e.cause is not None and e.cause in depth:
            depth[e.seq] = depth[e.cause] + 1
        else:
            if not depth and e.seq > seq:  # seqs increase: ``seq`` is not in this file
                break
            continue
        yield e, depth[e.seq]
    if not depth:
        raise _unknown_seq(path, seq, last)


def tree_order(rows: Iterable[tuple[Row, int | None]]) -> list[Row]:
    """(row, cause) pairs of an effects tree in file order → depth-first order, each record right under its cause,
    siblings by seq: how a tree reads, where file order interleaves the branches."""
    children: dict[int | None, list[Row]] = {}
    for row, cause in rows:
        children.setdefault(cause if row.depth else None, []).append(row)
    out: list[Row] = []
    stack = list(reversed(children.get(None, [])))
    while stack:
        row = stack.pop()
        out.append(row)
        stack.extend(reversed(children.get(row.seq, [])))
    return out
