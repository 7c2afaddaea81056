"""Bytes a trace line holds as a summary: which lines summarise them, and the summary's value and JSON.

A produced megabyte crosses a broker in several messages — the ProduceRequest that brings it in, the ShardRequest
that hands it to a partition's shard, the ShardReply and the NetReply that carry a fetch's answer out — and written in
full it was in 8 trace lines (recording cost 73 % of a broker's throughput at bulk rates; docs/performance.md).
A replay feeds only the inputs (lines whose sender is an edge or a command-line client) and re-computes every other
line, comparing it with the recorded one. So only an input needs its bytes in full for the trace to replay; in every
other line a bytes value longer than `SUMMARY_MIN` is written as its summary (trace version 3):

    {"@rec":{"size":N,"crc32c":C,"first_offset":F,"last_offset":L}}

``size`` the length, ``crc32c`` the CRC-32C of all of it (Kafka's own checksum of record batches, in hardware here:
0.04 ms a MB where base64 took 2.6), ``first_offset`` / ``last_offset`` the first batch's baseOffset and the last
batch's lastOffset when the bytes are whole v2 record batches, else -1. The replayed message is encoded the same way
and compared with the recorded line byte for byte, so a replayed record batch that differs in any byte still
diverges (unless its CRC-32C collides, 1 in 2^32) — and so do its size and its offsets, which are exact.

A summary decodes to a `RecordsSummary`, which encodes back to the same text; it does not give the bytes back.
"""

from __future__ import annotations

import struct
from typing import Any

import attrs
from crc32c import crc32c

EXTERNAL_SENDERS = ("edge:", "cli")
"""A line is an input (what a replay feeds) when its sender starts with one of these: an edge (actors.names'
``edge:`` senders) or a command-line client. docs/trace-format.md, "Replay"."""

SUMMARY_MIN = 64
"""Bytes up to this long are written in full everywhere: their base64 is no longer than a summary (group members'
protocol metadata, small assignments), and the line keeps them readable."""

TAG = "@rec"


def is_input(sender: str) -> bool:
    """Whether a line with this sender is an input a replay feeds (written in full), not one it compares."""
    return sender.startswith(EXTERNAL_SENDERS)


@attrs.frozen(slots=True)
class RecordsSummary:
    """Bytes as a trace line summarises them (not a message: the codec writes it as ``{"@rec": {...}}``)."""

    size: int
    crc32c: int
    first_offset: int = -1
    last_offset: int = -1


def summarised(value: bytes) -> bool:
    """Whether bytes in a line that is not an input are written as their summary."""
    return len(value) > SUMMARY_MIN


# DefaultRecordBatch's header up to lastOffsetDelta (baseOffset, batchLength, partitionLeaderEpoch, magic, crc,
# attributes, lastOffsetDelta; protocol/records.py reads all of it), its whole size and Records.LOG_OVERHEAD
_BATCH_HEAD = struct.Struct(">qiibIhi")
_BATCH_HEADER_SIZE = 61
_LOG_OVERHEAD = 12
_MAGIC_V2 = 2


def offset_range(data: bytes) -> tuple[int, int] | None:
    """(the first batch's baseOffset, the last batch's lastOffset) when ``data`` is exactly whole v2 batches, else
    None (empty, a magic 0/1 message set, a cut tail, or bytes that are not records at all). Reads only the headers,
    nothing is copied: a trace line's summary of the records it carries, and Partition's offsets of a read."""
    end = len(data)
    if end < _BATCH_HEADER_SIZE:
        return None
    pos, last = 0, -1
    unpack = _BATCH_HEAD.unpack_from
    while pos < end:
        if end - pos < _BATCH_HEADER_SIZE:
            return None
        base, length, _, magic, _, _, delta = unpack(data, pos)[:7]
        if magic != _MAGIC_V2 or length < _BATCH_HEADER_SIZE - _LOG_OVERHEAD:
            return None
        last = base + delta
        pos += _LOG_OVERHEAD + length
    if pos != end:
        return None
    return unpack(data, 0)[0], last


def summary_json(value: bytes) -> dict[str, Any]:
    """The JSON of the summary of ``value`` (long bytes in a line that is not an input)."""
    offsets = offset_range(value)
    first, last = offsets if offsets is not None else (-1, -1)
    return {TAG: {"size": len(value), "crc32c": crc32c(value), "first_offset": first, "last_offset": last}}


def summarise(value: bytes) -> RecordsSummary:
    """The summary of ``value`` as a value (what its line decodes to)."""
    return RecordsSummary(**summary_json(value)[TAG])


def summary_value_json(value: RecordsSummary) -> dict[str, Any]:
    """A decoded summary's JSON: the text it was read from."""
    return {TAG: {"size": value.size, "crc32c": value.crc32c, "first_offset": value.first_offset,
                  "last_offset": value.last_offset}}


_KEYS = ("size", "crc32c", "first_offset", "last_offset")


def summary_from_json(data: dict[str, Any]) -> RecordsSummary | None:
    """The `RecordsSummary` of ``{"@rec": {...}}`` as `summary_json` writes it, None for anything else (the codec
    raises its error)."""
    inner = data.get(TAG)
    if (len(data) != 1 or inner.__class__ is not dict or tuple(inner) != _KEYS
            or any(v.__class__ is not int for v in inner.values())):
        return None
    return RecordsSummary(*inner.values())


def describe(data: dict[str, Any]) -> str:
    """A summary's JSON as one short phrase (`kactor trace show`): ``records 1,048,576 B crc32c 0x1a2b3c4d
    offsets 100-1123``."""
    inner = data.get(TAG) or {}
    text = f"records {inner.get('size', '?'):,} B" if isinstance(inner.get("size"), int) else "records ? B"
    crc = inner.get("crc32c")
    if isinstance(crc, int):
        text += f" crc32c {crc:#010x}"
    first, last = inner.get("first_offset"), inner.get("last_offset")
    if isinstance(first, int) and isinstance(last, int) and first >= 0:
        text += f" offsets {first}-{last}"
    return text
