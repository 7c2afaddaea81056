"""`from_json`: the same values as `reference.from_json`, with one generated decoder per message class.

A replay decodes every external input of the trace (a LeaderAndIsr or UpdateMetadata request holds hundreds of
tagged objects). The codec's decoder is generic: per object a tag lookup through the registry, a dict comprehension
over the keys, then ``cls(**kwargs)``. Here a message class gets a decoder that reads its declared fields by name
and calls the class with them; an enum member is looked up once per (enum, member) name. Whatever the fast path
does not recognise — a missing or extra key, an unknown tag or member, a map (``@m``), a set (``@s``), bytes
(``@b64``; version 1's ``@b``), any value the class refuses — goes to the codec's own decoder, which decodes it or
raises its CodecError, so the result and the errors are the codec's.

tests/messages/test_codec_fastdecode.py checks it against the codec on every record of a real trace.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from messages.codec.generated import generate
from messages.codec.reference import _PRIM
from messages.codec.reference import from_json as _codec_from_json
from messages.common import TopicPartition, wire_topic_partition
from messages.registry import lookup_type, registered_types

_DECODERS: dict[str, Callable[[dict[str, Any]], Any]] = {}  # type tag → decoder
_ENUM_MEMBERS: dict[tuple[str, str], Any] = {}  # (enum name, member name) → member


def from_json(data: Any) -> Any:
    """Decode what ``reference.to_json`` produced back into values (`reference.from_json`'s result)."""
    cls = data.__class__
    if cls is dict:
        tag = data.get("@")
        if tag is not None:
            if tag.__class__ is str:
                dec = _DECODERS.get(tag)
                if dec is None:
                    dec = _decoder(tag)
                return dec(data)
            return _codec_from_json(data)
        name = data.get("@e")
        if name.__class__ is str:
            member = data.get("v")
            if member.__class__ is str:
                value = _ENUM_MEMBERS.get((name, member))
                if value is not None:
                    return value
                value = _codec_from_json(data)  # the member, or the codec's error
                _ENUM_MEMBERS[(name, member)] = value
                return value
        return _codec_from_json(data)
    if cls is list:
        return tuple([v if v.__class__ in _PRIM else from_json(v) for v in data])
    return _codec_from_json(data)


def _decoder(tag: str) -> Callable[[dict[str, Any]], Any]:
    """The decoder of type ``tag``: generated for a registered attrs class whose fields are keyword arguments of the
    same name, the codec's decoder otherwise (it raises the codec's error for an unknown tag). Only a registered
    tag's decoder is kept: the transport decodes what peers send, and a peer's made-up tags must not grow the table
    (nor stand for a type registered later)."""
    mcls = lookup_type(tag)
    dec: Callable[[dict[str, Any]], Any] = _codec_from_json
    if mcls is TopicPartition:
        dec = _topic_partition
    elif mcls is not None and attrs.has(mcls):
        fields = attrs.fields(mcls)
        if all(f.init and getattr(f, "alias", f.name) == f.name and f.name.isidentifier() for f in fields):
            # positionally when every field is a positional parameter of __init__, in field order (attrs puts
            # keyword-only fields last, as keyword-only parameters): cheaper than keywords, the same call
            dec = _generate(mcls, tuple(f.name for f in fields), positional=not any(f.kw_only for f in fields))
    if mcls is not None:
        _DECODERS[tag] = dec
    return dec


def _topic_partition(d: dict[str, Any]) -> Any:
    """A TopicPartition, the same value for the same (topic, partition) each time: a replay's inputs name a few
    hundred partitions thousands of times, and the one value is built once, hashes once (its hash is cached) and
    meets itself in every dict lookup (identity before ``__eq__``). Anything but a str topic and an int partition
    is the codec's to decode or refuse."""
    if len(d) == 3:
        topic, partition = d.get("topic"), d.get("partition")
        if topic.__class__ is str and partition.__class__ is int:
            return wire_topic_partition(topic, partition)
    return _codec_from_json(d)


def _generate(mcls: type, names: tuple[str, ...], positional: bool = False) -> Callable[[dict[str, Any]], Any]:
    n = len(names) + 1  # with "@"
    lines = ["def dec(d):", f"    if len(d) != {n}:", "        return S(d)"]
    if names:
        lines += ["    try:"] + [f"        a{i} = d[{name!r}]" for i, name in enumerate(names)]
        lines += ["    except KeyError:", "        return S(d)"]
    lines += ["    try:"]
    args = ", ".join(("" if positional else f"{name}=") + f"(a{i} if a{i}.__class__ in P else D(a{i}))"
                     for i, name in enumerate(names))
    lines += [f"        return C({args})", "    except TypeError:", "        return S(d)  # the codec's error"]
    namespace: dict[str, Any] = {"S": _codec_from_json, "P": _PRIM, "D": from_json, "C": mcls}
    return generate("\n".join(lines) + "\n", "dec", "from_json", mcls, namespace)


def prepare() -> None:
    """Generate the decoder of every registered message type now (a replay does this before its timed part, as it
    imports the modules)."""
    for tag in registered_types():
        if tag not in _DECODERS:
            _decoder(tag)


__all__ = ["from_json", "prepare"]
