"""Faster `reference.to_json`, and JSON text built in Python: the pure-Python fallback of `orjson_lines` (values
orjson refuses, lines with non-ASCII text) and the text the other encoders are proved equal to.

Same output, value for value, as `reference.to_json` (tests/messages/test_codec_fastcodec.py checks every record
of recorded traces): dispatch on the exact class through a dict instead of a chain of isinstance calls, and one
generated function per attrs message class that reads its fields in declaration order. Classes the dispatch does
not know yet are classified once, in the order codec.to_json tests them (Enum before int, so an IntEnum is an enum).
"""

from __future__ import annotations

import enum
import json
import threading
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from messages.codec.generated import generate
from messages.codec.reference import _PRIM, bytes_json, set_json
from messages.codec.reference import to_json as _reference_to_json
from messages.codec.summary import RecordsSummary, is_input, summarised, summary_json, summary_value_json

_DISPATCH: dict[type, Callable[[Any], Any]] = {}

_LINE_ENCODER = json.JSONEncoder(separators=(",", ":"))
encode_json = _LINE_ENCODER.encode  # json.dumps(x, separators=(",", ":")) without its per-call set-up


def to_json(value: Any) -> Any:
    cls = value.__class__
    if cls in _PRIM:
        return value
    f = _DISPATCH.get(cls)
    if f is None:
        f = _classify(cls)
    return f(value)


def _identity(value: Any) -> Any:
    return value


def _enum(value: enum.Enum) -> dict[str, Any]:
    return {"@e": value.__class__.__name__, "v": value.name}


def _sequence(value: Any) -> list[Any]:
    return [v if v.__class__ in _PRIM else to_json(v) for v in value]


def _mapping(value: dict[Any, Any]) -> dict[str, Any]:
    return {"@m": [[to_json(k), to_json(v)] for k, v in value.items()]}


def _frozenset(value: frozenset[Any]) -> dict[str, Any]:
    return set_json([to_json(v) for v in value])


def _attrs_encoder(cls: type) -> Callable[[Any], Any]:
    names = [f.name for f in attrs.fields(cls)]
    lines = ["def enc(v):"]
    for i, name in enumerate(names):
        lines.append(f"    a{i} = v.{name}")
    items = [f'"@": {cls.__name__!r}']
    items += [f"{name!r}: (a{i} if a{i}.__class__ in P else E(a{i}))" for i, name in enumerate(names)]
    lines.append("    return {" + ", ".join(items) + "}")
    return generate("\n".join(lines) + "\n", "enc", "to_json", cls, {"P": _PRIM, "E": to_json})


def _classify(cls: type) -> Callable[[Any], Any]:
    """Choose the encoder for ``cls`` with codec.to_json's precedence, and remember it."""
    f: Callable[[Any], Any]
    if issubclass(cls, enum.Enum):
        f = _enum
    elif issubclass(cls, (bool, str, int, float)):
        f = _identity
    elif issubclass(cls, (tuple, list)):
        f = _sequence
    elif cls is RecordsSummary:
        f = summary_value_json
    elif attrs.has(cls):
        f = _attrs_encoder(cls)
    elif issubclass(cls, dict):
        f = _mapping
    elif issubclass(cls, frozenset):
        f = _frozenset
    elif issubclass(cls, bytes):
        f = bytes_json
    else:
        return _reference_to_json  # raises codec's CodecError for what it cannot encode; not cached
    _DISPATCH[cls] = f
    return f


# -- trace lines as text --------------------------------------------------------------------------------------------
# The writer's hot path. JSON text is built directly (the C string escaper for str, repr for numbers) rather than a
# JSON value handed to the C encoder, because a trace repeats values: one UpdateMetadataRequest goes to every
# PartitionActor shard, a request travels in SendRequest, NetSend and ChannelResponse. Within one `encode_records`
# call the text of an attrs value met again (the very same object) is reused; the memo is keyed by id(), so it is
# valid only while every value of the batch is alive (the caller holds them) and only in the thread that set it up.
_escape = json.encoder.encode_basestring_ascii  # what json.dumps uses with ensure_ascii=True (the C version)
_float_repr = float.__repr__
_int_repr = int.__repr__


class _Batch(threading.local):
    memo: dict[int, str] | None = None
    memos: tuple[dict[int, str], dict[int, str]] | None = None  # a batch's (input lines', other lines') memo
    summarise = False  # the line being written is not an input: long bytes as their summary


_batch = _Batch()
_TEXT: dict[type, Callable[[Any], str]] = {
    str: _escape,
    int: _int_repr,
    bool: lambda v: "true" if v else "false",
    type(None): lambda v: "null",
}


_INFINITIES = (float("inf"), float("-inf"))


def _float_text(v: float) -> str:
    # json writes NaN and the infinities as bare words; only float itself has float's repr (an int ts has its own)
    return _float_repr(v) if v.__class__ is float and v == v and v not in _INFINITIES else encode_json(v)


_TEXT[float] = _float_text


def to_text(value: Any) -> str:
    """``encode_json(to_json(value))``, faster, with shared attrs values reused within a batch."""
    f = _TEXT.get(value.__class__)
    if f is None:
        f = _classify_text(value.__class__)
    return f(value)


def _sequence_text(value: Any) -> str:
    memo = _batch.memo
    if memo is not None:
        r = memo.get(id(value))
        if r is not None:
            return r
    t = _TEXT
    r = "[" + ",".join([(t.get(v.__class__) or _classify_text(v.__class__))(v) for v in value]) + "]"
    if memo is not None:
        memo[id(value)] = r
    return r


def _attrs_text_encoder(cls: type) -> Callable[[Any], str]:
    names = [f.name for f in attrs.fields(cls)]
    head = encode_json({"@": cls.__name__})[:-1]  # '{"@":"Name"'
    lines = ["def enc(v):",
             "    memo = B.memo",
             "    if memo is not None:",
             "        r = memo.get(id(v))",
             "        if r is not None:",
             "            return r"]
    parts = [repr(head)]
    for i, name in enumerate(names):
        lines.append(f"    a{i} = v.{name}")
        parts.append(repr("," + encode_json(name) + ":"))
        parts.append(f"(T.get(a{i}.__class__) or C(a{i}.__class__))(a{i})")
    lines.append("    r = " + " + ".join(parts) + " + '}'")
    lines += ["    if memo is not None:", "        memo[id(v)] = r", "    return r"]
    return generate("\n".join(lines) + "\n", "enc", "to_text", cls, {"T": _TEXT, "C": _classify_text, "B": _batch})


def _bytes_text(value: bytes) -> str:
    return encode_json(summary_json(value) if _batch.summarise and summarised(value) else bytes_json(value))


def _classify_text(cls: type) -> Callable[[Any], str]:
    """The text encoder for ``cls``: generated for attrs classes and sequences, else through `to_json`."""
    f: Callable[[Any], str]
    if issubclass(cls, bytes):
        f = _bytes_text
    elif cls is RecordsSummary:
        f = lambda v: encode_json(summary_value_json(v))  # noqa: E731
    elif issubclass(cls, enum.Enum):
        texts = {m: encode_json(to_json(m)) for m in cls}  # members are singletons: their text is fixed
        f = texts.__getitem__
    elif not issubclass(cls, (tuple, list)) and not attrs.has(cls):
        if cls in (str, int, float, bool):
            return _TEXT[cls]
        f = lambda v: encode_json(to_json(v))  # noqa: E731 - enums, dicts, frozensets, bytes, str/int subclasses
        if _classify(cls) is _reference_to_json:
            return f  # not cacheable: codec.to_json raises for it
    elif issubclass(cls, (tuple, list)):
        f = _sequence_text
    elif cls.__name__ in _BY_VALUE:
        f = _by_value(_attrs_text_encoder(cls))
    else:
        f = _attrs_text_encoder(cls)
    _TEXT[cls] = f
    return f


# Small hashable values met in almost every request (TopicPartition has a cached hash): their text is kept by value,
# across batches; the cache is bounded by the partitions a broker knows and cleared if it ever grows past that.
_BY_VALUE = frozenset({"TopicPartition"})
_BY_VALUE_MAX = 200_000


def _by_value(enc: Callable[[Any], str]) -> Callable[[Any], str]:
    cache: dict[Any, str] = {}

    def f(v: Any) -> str:
        r = cache.get(v)
        if r is None:
            if len(cache) >= _BY_VALUE_MAX:
                cache.clear()
            r = cache[v] = enc(v)
        return r

    return f


# A cascade of messages shares one instant (the runtime's clock is set per external input, and hands out that very
# float object): its text is reused. Identity, not ==, so 5 and 5.0 or 0.0 and -0.0 never share a text.
_last_ts: tuple[Any, str] = (None, "")


def _ts_text(ts: float) -> str:
    global _last_ts
    last = _last_ts
    if last[0] is ts:
        return last[1]
    text = _float_text(round(ts, 3))
    _last_ts = (ts, text)
    return text


def encode_record(seq: int, ts: float, sender: str, receiver: str, body: Any, cause: int | None,
                  summarise: bool | None = None) -> str:
    """One trace line (without its newline), exactly as docs/trace-format.md specifies: the text
    ``encode_json(reference.record_json(seq, ts, sender, receiver, body, cause))`` gives — long bytes as their summary
    unless the line is an input. ``summarise`` False writes them in full whatever the sender (trace version 2)."""
    batch = _batch
    outer = batch.summarise, batch.memo
    batch.summarise = s = not is_input(sender) if summarise is None else summarise
    if batch.memos is not None:
        batch.memo = batch.memos[s]  # a value's text differs between the two kinds of line
    try:
        return ('{"seq":' + _int_repr(seq) + ',"ts":' + _ts_text(ts) + ',"sender":' + _escape(sender)
                + ',"receiver":' + _escape(receiver) + ',"type":' + _escape(body.__class__.__name__)
                + ',"payload":' + to_text(body) + ',"cause":' + ("null" if cause is None else _int_repr(cause))
                + "}")
    finally:
        batch.summarise, batch.memo = outer


def encode_records(records: Iterable[tuple[int, float, str, str, Any, int | None]],
                   known: dict[int, str] | None = None) -> str:
    """Trace lines for ``records`` (seq, ts, sender, receiver, body, cause), each followed by a newline, with the
    text of shared values built once (see ``_batch``). ``known``: id(value) → its JSON text, for values that arrived
    as text (a network request's body): used as is in input lines (other lines may summarise its bytes). The caller
    keeps those values alive while this runs."""
    _batch.memos = (dict(known) if known else {}), {}
    try:
        return "".join([encode_record(*r) + "\n" for r in records])
    finally:
        _batch.memos = None
