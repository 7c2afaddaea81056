"""The message codec in plain Python: the format's definition, a type tag plus fields.

Traces and every frame that crosses a process boundary use this format; nothing is ever unpickled from a socket.
What they run is the faster code behind `messages.codec` (the front), proved to give exactly what this gives.

Encoding rules (``to_json`` / ``from_json``):
- a registered attrs message → ``{"@": "ClassName", field: value, ...}``
- a registered Enum → ``{"@e": "EnumName", "v": "MEMBER"}``
- tuple / list → JSON array (decoded as tuple, so frozen values stay hashable)
- dict → ``{"@m": [[key, value], ...]}`` (keys of any encodable type)
- frozenset → ``{"@s": [...]}``
- bytes → ``{"@b64": "<base64>"}`` (trace version 2; version 1's ``{"@b": "<latin-1 text>"}`` still decodes).
  Base64 is plain ASCII, so orjson writes it with no escaping and no second pass: ~1.33× the bytes' size, where
  latin-1 text went through JSON's escaper at up to 4.1× (every byte ≥ 0x80 a six-character escape) and made orjson's
  line non-ASCII, re-encoded by the pure-Python text encoder (docs/performance.md, trace recording).
- int, float, str, bool, None → themselves

A trace line that is not an input writes bytes longer than 64 as their summary (trace version 3):
``{"@rec": {"size", "crc32c", "first_offset", "last_offset"}}``, which decodes to a `summary.RecordsSummary`
(`messages/codec/summary.py`: which lines, why, and the summary's fields). ``record_json`` is one line's JSON data.
A trace writer puts an input's bytes longer than 1 KB (`rawbytes.FILE_MIN`) in the trace's bytes file instead
(trace version 4), the line holding ``{"@bin": {"offset", "size"}}``, which decodes to those bytes while a reader
has that file open (`messages/codec/rawbytes.py`); this encoder, which has no file, writes them as base64, which
every reader takes.
"""

from __future__ import annotations

import binascii
import enum
import json
from typing import Any

import attrs
import pybase64

from messages.codec import rawbytes
from messages.codec.summary import (
    TAG,
    RecordsSummary,
    is_input,
    summarised,
    summary_from_json,
    summary_json,
    summary_value_json,
)
from messages.registry import lookup_enum, lookup_type

_FIELDS_CACHE: dict[type, tuple[str, ...]] = {}


class CodecError(ValueError):
    """A frame or trace line that does not decode to a known message."""


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELDS_CACHE.get(cls)
    if names is None:
        names = tuple(f.name for f in attrs.fields(cls))
        _FIELDS_CACHE[cls] = names
    return names


def set_json(items: list[Any]) -> dict[str, Any]:
    """A set's encoded items as the set's JSON: sorted by their text, so equal sets have equal text."""
    try:
        items.sort(key=lambda x: json.dumps(x, sort_keys=True))
    except TypeError:
        pass
    return {"@s": items}


def bytes_json(value: bytes) -> dict[str, str]:
    """Bytes as the format's JSON: ``{"@b64": standard base64 with padding}`` (every encoder writes this). pybase64:
    the standard library's text, in SIMD (0.04 ms a MB against 1.8: a leader's ProduceRequest and a follower's
    FetchResponse hold their batches in full; tests/messages/test_codec_bytes.py compares it with the stdlib's)."""
    return {"@b64": pybase64.b64encode_as_string(value)}


def bytes_from_json(data: dict[str, Any]) -> bytes:
    """The bytes of ``{"@b64": ...}``, or of version 1's ``{"@b": latin-1 text}``; CodecError for anything else."""
    try:
        if "@b64" in data:
            return pybase64.b64decode(data["@b64"], validate=True)
        return data["@b"].encode("latin-1")
    except (binascii.Error, TypeError, ValueError, AttributeError) as e:
        raise CodecError(f"bad bytes value: {e}") from None


def to_json(value: Any, summarise: bool = False) -> Any:
    """Encode a message (or any field value) into JSON-compatible data; with ``summarise`` (a line that is not an
    input), bytes longer than `summary.SUMMARY_MIN` as their summary."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, enum.Enum):
        return {"@e": type(value).__name__, "v": value.name}
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, (tuple, list)):
        return [to_json(v, summarise) for v in value]
    cls = type(value)
    if cls is RecordsSummary:
        return summary_value_json(value)
    if attrs.has(cls):
        out: dict[str, Any] = {"@": cls.__name__}
        for name in _field_names(cls):
            out[name] = to_json(getattr(value, name), summarise)
        return out
    if isinstance(value, dict):
        return {"@m": [[to_json(k, summarise), to_json(v, summarise)] for k, v in value.items()]}
    if isinstance(value, frozenset):
        return set_json([to_json(v, summarise) for v in value])
    if isinstance(value, bytes):
        return summary_json(value) if summarise and summarised(value) else bytes_json(value)
    raise CodecError(f"cannot encode {cls.__name__} value {value!r}")


def record_json(seq: int, ts: float, sender: str, receiver: str, body: Any, cause: int | None) -> dict[str, Any]:
    """One trace line's JSON data (docs/trace-format.md): the payload summarises long bytes unless the line is an
    input (`summary.is_input`)."""
    return {"seq": seq, "ts": round(ts, 3), "sender": sender, "receiver": receiver, "type": type(body).__name__,
            "payload": to_json(body, not is_input(sender)), "cause": cause}


# Exact classes that decode to themselves: tested with one set lookup instead of a call per value (the trace reader
# and replay decode every input with this; the fast encoders and decoder share it).
_PRIM: frozenset[type] = frozenset({str, int, float, bool, type(None)})


def from_json(data: Any) -> Any:
    """Decode what ``to_json`` produced back into values."""
    cls = data.__class__
    if cls is list or (cls is not dict and isinstance(data, list)):
        return tuple([v if v.__class__ in _PRIM else from_json(v) for v in data])
    if not isinstance(data, dict):
        return data
    tag = data.get("@")
    if tag is not None:
        mcls = lookup_type(tag)
        if mcls is None:
            raise CodecError(f"unknown message type {tag!r}")
        kwargs = {k: (v if v.__class__ in _PRIM else from_json(v)) for k, v in data.items() if k != "@"}
        try:
            return mcls(**kwargs)
        except TypeError as e:
            raise CodecError(f"bad fields for {tag}: {e}") from None
    if "@e" in data:
        ecls = lookup_enum(data["@e"])
        if ecls is None:
            raise CodecError(f"unknown enum type {data['@e']!r}")
        try:
            return ecls[data["v"]]
        except KeyError:
            raise CodecError(f"unknown {data['@e']} member {data['v']!r}") from None
    if "@m" in data:
        return {from_json(k): from_json(v) for k, v in data["@m"]}
    if "@s" in data:
        return frozenset(from_json(v) for v in data["@s"])
    if "@b64" in data or "@b" in data:
        return bytes_from_json(data)
    if rawbytes.TAG in data:  # trace version 4: an input's bytes in the trace's bytes file
        try:
            return rawbytes.raw_from_json(data)
        except ValueError as e:
            raise CodecError(str(e)) from None
    if TAG in data:
        summary = summary_from_json(data)
        if summary is None:
            raise CodecError(f"bad records summary {data!r}"[:200])
        return summary
    raise CodecError(f"untagged object {sorted(data)!r}")


def dumps(value: Any) -> str:
    """Encode to a compact JSON string."""
    return json.dumps(to_json(value), separators=(",", ":"))


def parse(text: str | bytes) -> Any:
    """JSON text as JSON data; CodecError if it is not JSON."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CodecError(f"not JSON: {e}") from None


def loads(text: str | bytes) -> Any:
    """Decode a JSON string produced by ``dumps``; CodecError on anything else."""
    return from_json(parse(text))
