"""The message codec's one front: messages to JSON and back, for the transport's frames and the trace's lines.

The format is `reference` (a type tag plus fields; its docstring has the rules, docs/trace-format.md the trace's
lines); nothing is ever unpickled. Everything here gives exactly what `reference` gives — the same values, the same
text byte for byte (tests/messages/test_codec_*.py check every record of recorded traces) — only faster:

- ``dumps_bytes(value)``: a value's JSON text as ASCII bytes (a transport frame), made by orjson (`orjson_lines`);
  ``dumps`` the same as str, ``loads`` / ``from_json`` back (one generated decoder per class, `fastdecode`);
- ``encode_record_bytes(seq, ts, sender, receiver, body, cause)``: one trace line, newline included (`orjson_lines`;
  frozen values that recur are written from their kept text); ``encode_record`` the same as str without newline;
  in a line that is not an input, long bytes are their summary (`summary`: which lines, and the summary's fields);
- ``note_text(value, text)``: ``value`` was decoded from this text; trace lines write the text while a trace writer
  is open (``noting_texts()``; `notes`);
- ``to_json`` (`fastcodec`): a value as JSON data; ``encode_json``: JSON data as compact text;
- ``prepare()``: generate every registered class's decoder and line encoder now (a replay, before its clock).

The generated functions' source is in `linecache` (`generated`): a debugger steps into them.
"""

from __future__ import annotations

from typing import Any

from messages.codec import notes, rawbytes
from messages.codec.fastcodec import encode_json, to_json
from messages.codec.fastdecode import from_json
from messages.codec.notes import note_text
from messages.codec.notes import wanted as noting_texts
from messages.codec.orjson_lines import encode_record, encode_record_bytes, encode_value_bytes
from messages.codec.reference import CodecError

TRACE_VERSION = 4
"""The version of the trace format (docs/trace-format.md) this codec writes: a trace's header carries it.
4: as 3, and a trace writer puts an input's bytes longer than 1 KB in the trace's bytes file, the line holding
``{"@bin": {"offset": O, "size": N}}`` (`rawbytes`); 3: in a line that is not an input, bytes longer than 64 as their
summary ``{"@rec": {...}}`` (`summary`); 2: bytes as ``{"@b64": base64}`` in every line; 1: bytes as
``{"@b": latin-1 text}``. The decoders read all four."""

TRACE_VERSIONS = (1, 2, 3, 4)
"""Every trace version a reader accepts (the reader, replay, `trace show`, the Spark summary)."""


def known_trace_version(version: Any) -> bool:
    """Whether a header's ``trace_version`` is one of `TRACE_VERSIONS` (an int: JSON's true is not version 1)."""
    return version.__class__ is int and version in TRACE_VERSIONS


def dumps_bytes(value: Any) -> bytes:
    """``reference.dumps(value)`` as ASCII bytes."""
    return encode_value_bytes(value)


def dumps(value: Any) -> str:
    """``reference.dumps(value)``: the compact JSON text of a value."""
    return encode_value_bytes(value).decode("ascii")


def loads(text: str | bytes) -> Any:
    """``reference.loads(text)``: the value of a JSON text, CodecError for anything else."""
    from messages.codec.reference import parse

    return from_json(parse(text))


def prepare() -> None:
    """Generate every registered message class's decoder and trace line encoder now, as their first use would."""
    from messages.codec import fastdecode, orjson_lines

    fastdecode.prepare()
    orjson_lines.prepare()


__all__ = ["TRACE_VERSION", "TRACE_VERSIONS", "CodecError", "dumps", "dumps_bytes", "encode_json", "encode_record",
           "encode_record_bytes", "from_json", "known_trace_version", "loads", "note_text", "notes", "noting_texts",
           "prepare", "rawbytes", "to_json"]
