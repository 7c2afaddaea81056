"""An input line's long bytes in the trace's bytes file (trace version 4): the reference a line holds, and its
decoding.

A replay feeds the inputs and needs their bytes in full (`summary` covers every other line). Written into the line
as base64 they were 1.33x the produced bytes, encoded, copied by orjson into a growing line, scanned for non-ASCII
and joined again at the flush: recording cost the data path 27-33 % of a broker's throughput (docs/performance.md).
Now an input's bytes longer than `FILE_MIN` go, as they are, to ``<process>.bin`` beside
``<process>.jsonl``, and the line holds where they are:

    {"@bin":{"offset":O,"size":N}}

The writer (edges.trace_writer) appends them to that file in recording order and writes them out before any line
that names them, so a line never points past what its file holds unless the file was damaged. A reader (replay,
`kactor trace show`, kactor.trace.reader) makes the file's contents the `source` while it decodes that trace's
payloads; `from_json` of a reference then gives the bytes back, and a reference read without its file, or past its
end, is the codec's error.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

TAG = "@bin"
SUFFIX = ".bin"
FILE_MIN = 1024
"""An input's bytes longer than this go to the bytes file; shorter ones stay in the line as base64, as in version 3
(`summary.SUMMARY_MIN` and up: a live broker's single-record batches, group metadata). For those the file saves
nothing: on the live bench (83-byte batches) appending each to the file — a lock, a copy, the offset — and the extra
callback cost more than its base64 (py-spy, 2026-11-25: about 5 % of what recording cost a broker)."""

_source: Any = None  # the bytes file's contents (bytes, or an mmap) while a reader decodes its trace's payloads


def bytes_path(trace_path: str) -> str:
    """The bytes file of the trace at ``trace_path``: ``broker-0.jsonl`` → ``broker-0.bin``."""
    root, ext = os.path.splitext(trace_path)
    return (root if ext == ".jsonl" else trace_path) + SUFFIX


def raw_json(offset: int, size: int) -> dict[str, Any]:
    """The reference a line holds for ``size`` bytes at ``offset`` of its bytes file."""
    return {TAG: {"offset": offset, "size": size}}


@contextmanager
def source(contents: Any) -> Iterator[None]:
    """Decode references against ``contents`` (a trace's bytes file: bytes, or an mmap of it) inside the block."""
    global _source
    before, _source = _source, contents
    try:
        yield
    finally:
        _source = before


_KEYS = ("offset", "size")


def raw_from_json(data: dict[str, Any]) -> bytes:
    """The bytes a reference names, from the current `source`; ValueError (the codec's error, from the codec) for a
    malformed reference, one read with no bytes file, or one past its end."""
    inner = data.get(TAG)
    if (len(data) != 1 or inner.__class__ is not dict or tuple(inner) != _KEYS
            or any(v.__class__ is not int or v < 0 for v in inner.values())):
        raise ValueError(f"bad bytes reference {data!r}"[:200])
    offset, size = inner["offset"], inner["size"]
    if _source is None:
        raise ValueError("bytes in the trace's bytes file (<process>.bin), read without it")
    if offset + size > len(_source):
        raise ValueError(f"bytes reference past the end of the trace's bytes file ({offset}+{size} > "
                         f"{len(_source)}: the file is cut short or another trace's)")
    return bytes(_source[offset:offset + size])


def size_of(data: dict[str, Any]) -> int | None:
    """The size a reference names (`kactor trace show`), None if it is malformed."""
    inner = data.get(TAG)
    size = inner.get("size") if isinstance(inner, dict) else None
    return size if isinstance(size, int) else None
