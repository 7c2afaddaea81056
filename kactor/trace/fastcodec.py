"""Faster ``messages.codec.to_json`` / ``from_json`` for the trace hot paths (writer flusher, replay comparison).

Same output, value for value, as `messages.codec.to_json` (tests/trace/test_trace_fastcodec.py checks every record
of recorded traces): dispatch on the exact class through a dict instead of a chain of isinstance calls, and one
generated function per attrs message class that reads its fields in declaration order. Classes the dispatch does
not know yet are classified once, in the order codec.to_json tests them (Enum before int, so an IntEnum is an enum).
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable
from typing import Any

import attrs

from messages.codec import CodecError
from messages.codec import to_json as _reference_to_json
from messages.registry import lookup_enum, lookup_type

_PRIM: frozenset[type] = frozenset({str, int, float, bool, type(None)})
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
    items = [to_json(v) for v in value]
    try:
        items.sort(key=lambda x: json.dumps(x, sort_keys=True))
    except TypeError:
        pass
    return {"@s": items}


def _bytes(value: bytes) -> dict[str, Any]:
    return {"@b": value.decode("latin-1")}


def _attrs_encoder(cls: type) -> Callable[[Any], Any]:
    names = [f.name for f in attrs.fields(cls)]
    lines = ["def enc(v):"]
    for i, name in enumerate(names):
        lines.append(f"    a{i} = v.{name}")
    items = [f'"@": {cls.__name__!r}']
    items += [f"{name!r}: (a{i} if a{i}.__class__ in P else E(a{i}))" for i, name in enumerate(names)]
    lines.append("    return {" + ", ".join(items) + "}")
    namespace: dict[str, Any] = {"P": _PRIM, "E": to_json}
    exec(compile("\n".join(lines), f"<fastcodec {cls.__name__}>", "exec"), namespace)  # noqa: S102 - our own code
    return namespace["enc"]  # type: ignore[no-any-return]


def _classify(cls: type) -> Callable[[Any], Any]:
    """Choose the encoder for ``cls`` with codec.to_json's precedence, and remember it."""
    f: Callable[[Any], Any]
    if issubclass(cls, enum.Enum):
        f = _enum
    elif issubclass(cls, (bool, str, int, float)):
        f = _identity
    elif issubclass(cls, (tuple, list)):
        f = _sequence
    elif attrs.has(cls):
        f = _attrs_encoder(cls)
    elif issubclass(cls, dict):
        f = _mapping
    elif issubclass(cls, frozenset):
        f = _frozenset
    elif issubclass(cls, bytes):
        f = _bytes
    else:
        return _reference_to_json  # raises codec's CodecError for what it cannot encode; not cached
    _DISPATCH[cls] = f
    return f


def encode_record(seq: int, ts: float, sender: str, receiver: str, body: Any, cause: int | None) -> str:
    """One trace line (without its newline), exactly as docs/trace-format.md specifies."""
    return encode_json({"seq": seq, "ts": round(ts, 3), "sender": sender, "receiver": receiver,
                        "type": body.__class__.__name__, "payload": to_json(body), "cause": cause})


def from_json(data: Any) -> Any:
    """messages.codec.from_json, with exact-class tests and without rebuilding primitives."""
    cls = data.__class__
    if cls is list:
        return tuple([v if v.__class__ in _PRIM else from_json(v) for v in data])
    if cls is not dict:
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
    if "@b" in data:
        return data["@b"].encode("latin-1")
    raise CodecError(f"untagged object {sorted(data)!r}")
