"""Trace lines through orjson's C encoder: the same bytes as `fastcodec.encode_record`, several times faster.

orjson writes str, int, float, bool, None, lists, tuples and (str-keyed) dicts itself and calls ``_default`` for
what it does not know: attrs messages, frozensets, bytes, str/int subclasses. What it would write differently from
the trace format (docs/trace-format.md, i.e. `json.dumps(reference.to_json(x), separators=(",", ":"))`) is
converted in Python first, and only that:
- an Enum: orjson writes its value (an IntEnum as a bare int); the format wants ``{"@e": Class, "v": name}``;
- a dict: the format writes ``{"@m": [[key, value], ...]}`` (keys need not be strings);
- a float below 1e-4 or non-finite: orjson writes ``0.00001`` and ``null`` where json writes ``1e-05`` and ``NaN``;
- a sequence holding any of these.
Strings: json (ensure_ascii) escapes every non-ASCII character and DEL; orjson writes them as UTF-8. A line with a
byte ≥ 0x7f is rare (topic names are ASCII by Kafka's rules) and is re-encoded by the text encoder, as is anything
orjson refuses (an int beyond 64 bits).

Inline: orjson calls back into Python once per value it does not know, and each callback dispatches on the class
again. A value of a class whose text is not kept (`_inlined`: a fetch's FetchPartitionData and FetchPartition, the
wrappers ShardRequest/ShardReply/NetRequest/NetReply/NetSend/NetResponse) is instead written by its class's
generated encoder called right where it is held — as a line's payload, in a field declared Any (a wrapper's body),
or item by item in a list comprehension for a field declared ``tuple[X, ...]``; the text is the same
(tests/messages/test_codec_orjson_lines.py). Re-encoding a live-bench broker's 20,167 lines with real 83-byte
batches (2026-11-25): 5.25 µs a line against 5.8 (orjson callbacks 3.1 a line → 1.3).

Recurring values: frozen values whose declared field types make equal values equal text (partition states,
brokers) are written once and kept by value (see ``_BY_VALUE_MAX``); such a value whose text is long (a whole request)
is kept by identity instead, for the few times the same object is written again (see ``_big``), and so is a long
tuple of them (an UpdateMetadata batch's partition states, shared by its requests: see ``_long_tuple``). Values that
arrived as text (`remember_text`, a network body) are written as that text, keyed by id() while the caller keeps
them alive.
"""

from __future__ import annotations

import enum
import math
import re
import threading
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any

import attrs
import orjson

from messages.codec import fastcodec
from messages.codec.generated import generate
from messages.codec.rawbytes import FILE_MIN, raw_json
from messages.codec.reference import bytes_json
from messages.codec.summary import (
    EXTERNAL_SENDERS,
    SUMMARY_MIN,
    RecordsSummary,
    summary_json,
    summary_value_json,
)
from messages.registry import registered_types

_Fragment = orjson.Fragment
_dumps = orjson.dumps
_OPT = orjson.OPT_PASSTHROUGH_SUBCLASS
_OPT_LINE = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_APPEND_NEWLINE

# Classes orjson writes exactly as the format wants, or hands to _default (which does): a value of one of these
# needs no conversion. Filled lazily with attrs classes, frozenset, bytes and str/int subclasses that are not enums.
_SAFE: set[type] = {str, int, bool, type(None)}
# Conversions for the other classes met (Enum → Fragment, dict → @m, float → checked, tuple/list → scanned).
_CONVERT: dict[type, Callable[[Any], Any]] = {}


# id → Fragment, for the values of the batch being written that arrived as text. One for the process, not per
# thread: an id here belongs to a value the writer holds alive until the batch is written, so in any thread that id
# can only be that value, with that text.
_known: dict[int, Any] = {}


def _float(v: float) -> Any:
    if (1e-4 <= abs(v) < 1e16 or v == 0.0) and math.isfinite(v):
        return v
    return _Fragment(fastcodec._float_text(v))


def _sequence(v: Any) -> Any:
    classes = set(map(type, v))  # C-level: a request's thousand TopicPartitions cost one pass, no Python loop
    if classes <= _SAFE:
        if v.__class__ is tuple and len(v) >= _LONG_TUPLE and not classes <= _PLAIN_SET and _immutable(classes):
            return _long_tuple(v)
        return v
    return [x if x.__class__ in _SAFE else _convert(x) for x in v]


# A long tuple of frozen values is often held by several values written one after the other: the partition states
# of one UpdateMetadata batch go to every broker in requests that differ only in the broker epoch, each recorded as
# the controller hands it to its channel and again as the channel hands it to the network (a controlled shutdown of
# 5,000 leaders: ten lines of 5,000 states each per batch, half the controller's recording). Its text is kept by
# identity, as a whole request's is (`_by_identity`); only for classes whose text cannot change (`_qualifies`). Plain
# items (ints, strings) are written by orjson in C, faster than looked up.
_LONG_TUPLE = 64
_IMMUTABLE: dict[frozenset[type], bool] = {}


def _immutable(classes: set[type]) -> bool:
    key = frozenset(classes)
    ok = _IMMUTABLE.get(key)
    if ok is None:
        ok = _IMMUTABLE[key] = all(c in _PLAIN_SET or (attrs.has(c) and _qualifies(c)[0]) for c in classes)
    return ok


def _mapping(v: dict[Any, Any]) -> Any:
    """A dict as the format writes it, ``{"@m": [[key, value], ...]}`` in its order, keys and values converted as
    any other value (`fastcodec._mapping`, through orjson: a gauges dict in every ReplicaManagerGauges)."""
    safe = _SAFE
    return {"@m": [[k if k.__class__ in safe else _convert(k), x if x.__class__ in safe else _convert(x)]
                   for k, x in v.items()]}


def _convert(v: Any) -> Any:
    f = _CONVERT.get(v.__class__)
    if f is None:
        f = _classify(v.__class__)
        if f is None:
            return v
    return f(v)


def _classify(cls: type) -> Callable[[Any], Any] | None:
    """The conversion ``cls`` needs before orjson sees it, or None (then cls joins _SAFE)."""
    f: Callable[[Any], Any] | None
    if issubclass(cls, enum.Enum):
        f = _enum_fragments(cls).__getitem__
    elif cls is float:
        f = _float
    elif cls in (tuple, list):
        f = _sequence
    elif cls is dict:
        f = _mapping
    elif issubclass(cls, (dict, tuple, list, float)):  # subclasses as the text encoder writes them
        f = _via_text
    else:
        _SAFE.add(cls)  # attrs, frozenset, bytes, str/int subclasses: orjson calls _default for them
        return None
    _CONVERT[cls] = f
    return f


def _via_text(v: Any) -> Any:
    return _Fragment(fastcodec.to_text(v))


def _enum_fragments(cls: type) -> dict[Any, Any]:
    """Each member of Enum ``cls`` → its text as a Fragment (members are singletons: their text is fixed)."""
    return {m: _Fragment(fastcodec.encode_json(fastcodec.to_json(m))) for m in cls}  # type: ignore[attr-defined]


def _field_expr(i: int, t: Any, namespace: dict[str, Any]) -> str:
    """The expression for field ``a{i}`` of declared type ``t``: as orjson must be handed it. A value of the declared
    Enum is its Fragment, and one of a declared small class (TopicPartition) with fields of their declared plain types
    is its dict, right here — without orjson calling back into `_default` and `_convert` for it (a fetch's line holds
    one of each per partition: the live bench's lines are mostly fetches). Any other value takes the general way, so
    the text is the same."""
    general = f"(a{i} if a{i}.__class__ in S else C(a{i}))"
    if t is Any:  # a wrapper's body (ShardRequest, NetReply...): a class written inline is called right here
        return f"(e(a{i}) if (e := I(a{i}.__class__)) is not None else {general})"
    if isinstance(t, type) and issubclass(t, enum.Enum):
        namespace[f"E{i}"], namespace[f"F{i}"] = t, _enum_fragments(t)
        return f"(F{i}[a{i}] if a{i}.__class__ is E{i} else {general})"
    try:
        small = isinstance(t, type) and attrs.has(t) and t is not RecordsSummary and _small(t)
    except Exception:  # noqa: BLE001 - an annotation that does not resolve: the general way
        small = False
    if not small:
        item = _declared_item(t)
        if item in _PLAIN_SET:
            # tuple[int, ...] (an ISR, a replica list): handed to orjson as it is when every item is plain, checked in
            # C (issuperset iterates, building no set) instead of two calls into `_convert` per field (three such
            # fields in each of a controlled shutdown's 100,000 partition states)
            namespace["P"], namespace["TYPE"] = _PLAIN_SET.issuperset, type
            return f"(a{i} if a{i}.__class__ is tuple and P(map(TYPE, a{i})) else {general})"
        if item is not None and _inlined(item):  # tuple[X, ...] of a class written inline (a fetch's partitions)
            namespace[f"T{i}"], namespace[f"N{i}"] = item, _encoder(item)
            return (f"([N{i}(x) if x.__class__ is T{i} else (x if x.__class__ in S else C(x)) for x in a{i}] "
                    f"if a{i}.__class__ is tuple else {general})")
        if isinstance(t, type) and _inlined(t):
            namespace[f"T{i}"], namespace[f"N{i}"] = t, _encoder(t)
            return f"(N{i}(a{i}) if a{i}.__class__ is T{i} else {general})"
        return general
    hints = typing.get_type_hints(t)
    names = [f.name for f in attrs.fields(t)]
    namespace[f"T{i}"] = t
    checks = " and ".join([f"a{i}.__class__ is T{i}"] + [f"a{i}.{n}.__class__ is {hints[n].__name__}" for n in names
                                                        if hints[n] is not type(None)])
    items = ", ".join([f'"@": {t.__name__!r}'] + [f"{n!r}: a{i}.{n}" for n in names])
    return f"({{{items}}} if {checks} else {general})"


def _declared_item(t: Any) -> Any:
    """X of a field declared ``tuple[X, ...]``, else None."""
    if typing.get_origin(t) is tuple:
        args = typing.get_args(t)
        if len(args) == 2 and args[1] is Ellipsis:
            return args[0]
    return None


_ENCODERS: dict[type, Callable[[Any], Any]] = {}  # cls → its generated dict encoder (`_attrs_default`)
# The classes met so far that are written inline (`_inlined`) → their encoder: a line's payload and a field declared
# Any (a wrapper's body) call it at once, where orjson would call `_default` for the value.
_INLINE: dict[type, Callable[[Any], Any]] = {}
_generating: set[type] = set()  # classes whose encoder is being generated: a class holding itself is not inlined


def _encoder(cls: type) -> Callable[[Any], Any]:
    f = _ENCODERS.get(cls)
    if f is None:
        f = _ENCODERS[cls] = _attrs_default(cls)
    return f


def _inlined(cls: Any) -> bool:
    """Whether a value of attrs class ``cls`` held in a declared field is written by ``cls``'s encoder called right
    in the holder's (a list comprehension for ``tuple[cls, ...]``), not by orjson calling back into `_default` once
    per value: a class `_default` keeps no text of (`_kept`), not the summary. A fetch's partitions
    (FetchPartitionData, FetchPartition), a produce's: the live bench's lines are mostly fetches, ~4 callbacks a
    line before."""
    try:
        return (isinstance(cls, type) and attrs.has(cls) and cls is not RecordsSummary and cls not in _generating
                and not _small(cls) and (cls in _DEMOTED or not _kept(cls)))
    except Exception:  # noqa: BLE001 - an annotation that does not resolve: the general way
        return False


def _flat(cls: type) -> bool:
    """Fields all plain (int, str, bool, None) or of a small class (TopicPartition): a FetchPartition. Its dict is
    built for less than the value is hashed and compared (attrs' __hash__ and __eq__ in Python, the TopicPartition's
    too), so it is written each time rather than kept by value."""
    hints = typing.get_type_hints(cls)
    return all(hints[f.name] in _PLAIN or (isinstance(hints[f.name], type) and attrs.has(hints[f.name])
                                           and _small(hints[f.name])) for f in attrs.fields(cls))


def _kept(cls: type) -> bool:
    """Whether `_default` keeps the text of a ``cls`` value (by value, or by identity once it is long)."""
    return _qualifies(cls)[0] and not _small(cls) and not _flat(cls)


def _attrs_default(cls: type) -> Callable[[Any], Any]:
    """A generated function returning the dict orjson writes for an instance of ``cls`` (fields in order)."""
    _generating.add(cls)
    try:
        return _attrs_default_source(cls)
    finally:
        _generating.discard(cls)


def _attrs_default_source(cls: type) -> Callable[[Any], Any]:
    fields = attrs.fields(cls)
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - an annotation that does not resolve: every field the general way
        hints = {}
    namespace: dict[str, Any] = {"S": _SAFE, "C": _convert, "I": _INLINE.get}
    lines = ["def enc(v):"]
    items = [f'"@": {cls.__name__!r}']
    for i, f in enumerate(fields):
        lines.append(f"    a{i} = v.{f.name}")
        items.append(f"{f.name!r}: {_field_expr(i, hints.get(f.name), namespace)}")
    lines.append("    return {" + ", ".join(items) + "}")
    return generate("\n".join(lines) + "\n", "enc", "orjson default", cls, namespace)


_DEFAULT: dict[type, Callable[[Any], Any]] = {}


def _make_default(summarising: bool, put: Callable[[bytes], int] | None = None) -> Callable[[Any], Any]:
    """What orjson calls for a value it does not know. ``summarising``: for a line that is not an input — long bytes
    as their summary (messages/codec/summary.py), and no remembered wire text (it holds its bytes in full). ``put``:
    for an input line of a trace writer (trace version 4, `bytes_file_default`) — bytes longer than
    `rawbytes.FILE_MIN` appended to its bytes file, the line holding their place."""

    def default(v: Any) -> Any:
        cls = v.__class__
        if cls is bytes:  # before the kept values: bytes are never kept, and a fetch's line holds some
            if summarising:
                return _summary(v) if len(v) > SUMMARY_MIN else bytes_json(v)
            if put is not None and len(v) > FILE_MIN:
                return raw_json(put(v), len(v))
            return bytes_json(v)
        entry = _VALUES.get(cls)  # looked up here rather than in a function of the class's: most values hit
        if entry is not None:
            cache, guard, hits = entry
            if guard is None or guard(v):
                r = cache.get(v)
                if r is not None:
                    hits[0] += 1
                    return r
        if _known and not summarising:  # values that arrived as text (a live broker's network bodies)
            r = _known.get(id(v))
            if r is not None:
                return r
        f = _DEFAULT.get(cls)
        if f is None:
            f = _classify_default(cls)
        if summarising and f is bytes_json:  # a bytes subclass
            return summary_json(v) if len(v) > SUMMARY_MIN else bytes_json(v)
        return f(v)

    return default


def _summary(v: bytes) -> Any:
    """The summary of long bytes, kept by identity for the next line that holds the same object: a fetch's answer
    goes from the shard (ShardReply) to the network (NetReply) with the same bytes, and each summary is a CRC-32C
    and a walk of the batch headers in Python (`offset_range`)."""
    r = _recent.get(id(v))
    if r is not None and r[0] is v:
        return r[1]
    return _remember_recent(v, summary_json(v))


_default = _make_default(False)
_default_summarising = _make_default(True)


def bytes_file_default(put: Callable[[bytes], int]) -> Callable[[Any], Any]:
    """What orjson calls in an input line of a trace writer whose bytes file ``put`` appends to (trace version 4,
    `rawbytes`): ``put(value)`` gives their offset there; the line holds the reference. Everything else as
    `_default`. Only exact bytes: a subclass, or bytes inside a value whose text is kept, stays base64, which decodes
    the same."""
    return _make_default(False, put)


# Frozen values that recur everywhere are kept by value, across batches: a partition's state goes in every
# UpdateMetadata and LeaderAndIsr until it changes (in the scenario trace 7,254 UpdateMetadataPartitionStates hold
# 560 distinct values), a timer key fires again and again. Equal values must have equal text, and Python's == is
# looser than that (1 == True == 1.0, Errors.NONE == 0, 0.0 == -0.0), so a class qualifies by its declared field
# types: ints, strings, bools, None, tuples of those and of qualifying classes. A field declared as an Enum or a
# float qualifies too, guarded: a value is kept and looked up only while that field holds exactly that Enum (or a
# non-zero float), so an int where an Errors belongs, or 5 where 5.0 does, never meets another's text; a class
# holding such values deeper down (a FetchResponse's partitions) checks them all the same.
_BY_VALUE_MAX = 50_000  # per class; about the partitions a broker knows, cleared when it grows past that
_BIG = 1024  # bytes: a class whose text is longer (a whole request) is not kept, it rarely recurs
_PLAIN = (int, str, bool, type(None))
_PLAIN_SET = frozenset(_PLAIN)
_eligible: dict[type, tuple[bool, tuple[str, ...]]] = {}  # cls → (qualifies, guard expressions)


def _field_ok(expr: str, t: Any) -> tuple[bool, str | None]:
    """(does a value of declared type ``t``, found at ``expr``, qualify; the guard it needs, an expression)."""
    origin = typing.get_origin(t)
    if origin in (typing.Union, types.UnionType):
        oks = [_field_ok(expr, x) for x in typing.get_args(t)]
        return all(ok and guard is None for ok, guard in oks), None
    if origin is tuple:
        args = typing.get_args(t)
        if len(args) == 2 and args[1] is Ellipsis:  # tuple[X, ...]: X's guard on every item
            ok, guard = _field_ok("x", args[0])
            return ok, None if guard is None else f"all({guard} for x in {expr})"
        return all(_field_ok("x", x) == (True, None) for x in args), None
    if t in _PLAIN:
        return True, None
    if t is float:
        return True, f"({expr}.__class__ is float and {expr} != 0.0)"
    if isinstance(t, type) and issubclass(t, enum.Enum):
        _ENUMS[f"E{id(t)}"] = t
        return True, f"{expr}.__class__ is E{id(t)}"
    if isinstance(t, type) and attrs.has(t):
        ok, guards = _qualifies(t)
        # its guards are written on v.<field>: on this value they read <expr>.<field>
        return ok, "(" + " and ".join(re.sub(r"\bv\.", expr + ".", g) for g in guards) + ")" if guards else None
    return False, None


_ENUMS: dict[str, type] = {}  # the Enum classes guards name


def _qualifies(cls: type) -> tuple[bool, tuple[str, ...]]:
    known = _eligible.get(cls)
    if known is not None:
        return known
    _eligible[cls] = (False, ())  # a class that holds itself does not qualify
    result: tuple[bool, tuple[str, ...]] = (False, ())
    try:
        hints = typing.get_type_hints(cls)
        if attrs.has(cls) and cls.__hash__ is not None and attrs.inspect(cls).is_frozen:
            checks = [_field_ok(f"v.{f.name}", hints[f.name]) for f in attrs.fields(cls)]
            if all(ok for ok, _ in checks):
                result = (True, tuple(guard for _, guard in checks if guard is not None))
    except Exception:  # noqa: BLE001 - an annotation that does not resolve: not by value
        pass
    _eligible[cls] = result
    return result


def _guard(cls: type, guards: tuple[str, ...]) -> Callable[[Any], bool] | None:
    if not guards:
        return None
    namespace: dict[str, Any] = dict(_ENUMS)
    src = "def guard(v):\n    return " + " and ".join(guards) + "\n"
    return generate(src, "guard", "orjson guard", cls, namespace)  # type: ignore[return-value]


# class → (value → Fragment, guard, [hits since the last look at the misses])
_VALUES: dict[type, tuple[dict[Any, Any], Callable[[Any], bool] | None, list[int]]] = {}

# A class whose values do not recur is written plainly, like a class that does not qualify: a produce's answer
# (ProduceResponse, ProducePartitionResponse: each a new base offset), a timer's delay. Looking each value up
# (attrs' __hash__ in Python, its fields' too), writing it apart and keeping it cost more than writing it in its line:
# on the live bench, where a leader answers every record, they were about 7 % of what recording cost a broker
# (py-spy, 2026-11-25). After every `_SAMPLE` misses, a class with fewer than one hit for `_MISSES_PER_HIT` misses
# is no longer kept (`_demote`); the text is the same either way.
_SAMPLE = 512
_MISSES_PER_HIT = 8
_DEMOTED: set[type] = set()


def _demote(cls: type, enc: Callable[[Any], Any]) -> None:
    _DEMOTED.add(cls)
    entry = _VALUES.pop(cls, None)
    if entry is not None:
        entry[0].clear()
    _DEFAULT[cls] = enc
    if _inlined(cls):  # now written in its holder's line where that holder's encoder asks (a wrapper's body)
        _INLINE[cls] = enc


def _memo_by_value(cls: type, enc: Callable[[Any], Any], guards: tuple[str, ...]) -> Callable[[Any], Any]:
    """What `_default` calls for a value of ``cls`` not in the cache: writes it, and keeps it if its guard allows."""
    cache: dict[Any, Any] = {}
    guard = _guard(cls, guards)
    hits = [0]
    _VALUES[cls] = (cache, guard, hits)
    misses = 0

    def f(v: Any) -> Any:
        nonlocal misses
        misses += 1
        if misses >= _SAMPLE:
            if hits[0] * _MISSES_PER_HIT < misses:
                _demote(cls, enc)
            misses = hits[0] = 0
        text = _dumps(enc(v), _default, _OPT)
        if len(text) > _BIG:  # hashing it again each time would cost about what writing it does
            _DEFAULT[cls] = _by_identity(enc)
            _VALUES.pop(cls, None)
            cache.clear()
            return _remember_big(v, text)
        if guard is None or guard(v):
            if len(cache) >= _BY_VALUE_MAX:
                cache.clear()
            cache[v] = _Fragment(text)
        return _Fragment(text)
    return f


# The same big value written again: a request is recorded as the controller hands it to a channel (SendRequest),
# as the channel hands it to the network (NetSend), and encoded once more as the transport's frame; an
# UpdateMetadata with every partition went to each broker. Kept by identity, with a reference, so the id cannot be
# reused while it is here; only classes whose declared field types are immutable (`_qualifies`), so the text
# cannot go stale. A FIFO bounded by the bytes of text it keeps: a channel sends its next request only once the
# broker has answered the one before (ControllerChannelManager's RequestSendThread), a cascade or more after it was
# recorded as a SendRequest; kept by count alone (16), a controlled shutdown's queued UpdateMetadata requests were
# written afresh as NetSends, 154,300 partition states in its window.
_BIG_RECENT_BYTES = 16 << 20
_BIG_RECENT_MAX = 1024
_big: dict[int, tuple[Any, Any, int]] = {}  # id → (value, its text as a Fragment, the text's length); oldest first
_big_bytes = 0
_big_lock = threading.Lock()


def _remember_big(v: Any, text: bytes) -> Any:
    global _big_bytes
    fragment = _Fragment(text)
    with _big_lock:
        old = _big.pop(id(v), None)
        if old is not None:
            _big_bytes -= old[2]
        _big[id(v)] = (v, fragment, len(text))
        _big_bytes += len(text)
        while len(_big) > 1 and (_big_bytes > _BIG_RECENT_BYTES or len(_big) > _BIG_RECENT_MAX):
            _big_bytes -= _big.pop(next(iter(_big)))[2]  # a plain dict's first key: the oldest
    return fragment


# A long bytes' summary (a fetch's records) is kept by identity for the next line or two: a short FIFO, on the
# produce path's every answer.
_RECENT_MAX = 16
_recent: dict[int, tuple[Any, Any]] = {}  # insertion-ordered: the oldest first


def _remember_recent(v: Any, fragment: Any) -> Any:
    _recent[id(v)] = (v, fragment)
    if len(_recent) > _RECENT_MAX:
        try:
            del _recent[next(iter(_recent))]  # a plain dict's first key: cheaper than an OrderedDict's popitem
        except (KeyError, StopIteration, RuntimeError):  # another thread emptied or changed it meanwhile
            pass
    return fragment


def _by_identity(enc: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def f(v: Any) -> Any:
        r = _big.get(id(v))
        if r is not None and r[0] is v:
            return r[1]
        return _remember_big(v, _dumps(enc(v), _default, _OPT))
    return f


# a long tuple of qualifying items (`_sequence`) written as it is: its items hold no bytes, so the text is the same
# whichever line's default writes it
_long_tuple = _by_identity(lambda v: v)


def _small(cls: type) -> bool:
    """One or two plain fields (TopicPartition): written faster than looked up by value (a hash, then __eq__)."""
    fields = attrs.fields(cls)
    hints = typing.get_type_hints(cls)
    return len(fields) <= 2 and all(hints[f.name] in _PLAIN for f in fields)


def _classify_default(cls: type) -> Callable[[Any], Any]:
    f: Callable[[Any], Any]
    if cls is RecordsSummary:  # a summary read from a trace, written back as it was read
        f = summary_value_json
    elif attrs.has(cls):
        f = _encoder(cls)
        if _kept(cls):
            f = _memo_by_value(cls, f, _qualifies(cls)[1])
        elif _inlined(cls):
            _INLINE[cls] = f
    elif issubclass(cls, str):
        f = str
    elif issubclass(cls, int):
        f = int
    elif issubclass(cls, bytes):
        f = bytes_json  # base64 is ASCII: orjson writes the str as is, the line stays on the fast path
    elif issubclass(cls, frozenset):
        f = _via_text
    else:
        f = fastcodec._reference_to_json  # raises the codec's error for what the format cannot hold
    _DEFAULT[cls] = f
    return f


# A cascade of messages shares one instant (the runtime hands out the very same float object): rounded once.
_last_ts: tuple[Any, Any] = (None, None)
_EXACT_MS = float(1 << 42)  # below it half an ulp is < 0.0005 ms: a float that is k/1000 is its own round(_, 3)


def _ts(ts: Any) -> Any:
    """``round(ts, 3)`` as the line holds it. The runtime's clock already gives whole microseconds (ms with three
    decimals), so the common case is proved with a multiply and a divide instead of round's decimal conversion
    (which costs more than writing a small line): if ts·1000 is a whole number k and k/1000 gives ts back, ts is
    the double nearest k/1000, and so (half an ulp being under 0.0005) round(ts, 3) is ts itself."""
    global _last_ts
    if ts.__class__ is float and -_EXACT_MS < ts < _EXACT_MS:
        k = ts * 1000.0
        if k == int(k) and int(k) / 1000.0 == ts:
            t = _float(ts)
            _last_ts = (ts, t)
            return t
    t = round(ts, 3)
    if t.__class__ is float:
        t = _float(t)
    _last_ts = (ts, t)
    return t


def _record_bytes(seq: int, ts: float, sender: str, receiver: str, body: Any, cause: int | None,
                  summarise: bool | None = None, to_file: Callable[[Any], Any] | None = None) -> bytes:
    """One line. Long bytes are written as their summary unless the line is an input (messages/codec/summary.py);
    ``summarise`` False writes them in full whatever the sender (trace version 2, which a replay of such a trace
    compares with). ``to_file``: a writer's `bytes_file_default`, which puts an input line's long bytes in its bytes
    file (trace version 4); without it they are base64 in the line."""
    last = _last_ts
    if summarise is None:
        summarise = not sender.startswith(EXTERNAL_SENDERS)
    try:
        out = _dumps({"seq": seq, "ts": last[1] if last[0] is ts else _ts(ts), "sender": sender,
                      "receiver": receiver, "type": body.__class__.__name__,
                      "payload": e(body) if (e := _INLINE_GET(body.__class__)) is not None else
                      body if body.__class__ in _SAFE else _convert(body), "cause": cause},
                     _default_summarising if summarise else to_file or _default, _OPT_LINE)  # positional: orjson parses
        # keywords at a cost per call. 127 as an int: `b"\x7f" in out` first tries the bytes as an index, and raises
        # and clears a TypeError
        if out.isascii() and 127 not in out:
            return out
    except orjson.JSONEncodeError:
        pass  # an int beyond 64 bits: the text encoder writes it
    # (bytes this line put in the bytes file before it went here stay there unnamed: the text encoder writes them as
    # base64, which decodes the same)
    return (fastcodec.encode_record(seq, ts, sender, receiver, body, cause, summarise) + "\n").encode("ascii")


def encode_value_bytes(value: Any) -> bytes:
    """``messages.codec.dumps(value)`` as ASCII bytes (the transport's frames): the same text as
    `fastcodec.to_text`, made by orjson where it can."""
    try:
        out = _dumps(value if value.__class__ in _SAFE else _convert(value), _default, _OPT)
        if out.isascii() and 127 not in out:
            return out
    except orjson.JSONEncodeError:
        pass
    return fastcodec.to_text(value).encode("utf-8")


def remember_text(value: Any, text: str) -> None:
    """``value`` arrived as this JSON ``text``: lines write it as is. The caller keeps ``value`` alive until it
    calls `forget_texts` (its id must stay that value's)."""
    _known[id(value)] = _Fragment(text)


def forget_texts(ids: Iterable[int]) -> None:
    pop = _known.pop
    for k in ids:
        pop(k, None)


_INLINE_GET = _INLINE.get
encode_record_bytes = _record_bytes  # one line, newline included, as ASCII bytes


def encode_record(seq: int, ts: float, sender: str, receiver: str, body: Any, cause: int | None,
                  summarise: bool | None = None) -> str:
    """One trace line without its newline: the text `fastcodec.encode_record` gives."""
    return _record_bytes(seq, ts, sender, receiver, body, cause, summarise)[:-1].decode("ascii")


def encode_records(records: Iterable[tuple[int, float, str, str, Any, int | None]],
                   known: dict[int, str] | None = None) -> bytes:
    """Trace lines for ``records`` (seq, ts, sender, receiver, body, cause), each ending in a newline, as ASCII
    bytes. ``known``: id(value) → its JSON text, for values that arrived as text; the caller keeps every value of
    the batch alive while this runs."""
    known = known or {}
    for k, text in known.items():
        _known[k] = _Fragment(text)
    try:
        return b"".join([_record_bytes(*r) for r in records])
    finally:
        forget_texts(known)  # only its own: a live writer's remembered texts stay


def prepare() -> None:
    """Generate the line encoder of every registered message class now, as its first line would (a replay does
    this before it forks its workers and starts its clock)."""
    for cls in registered_types().values():
        if cls not in _DEFAULT:
            _classify_default(cls)
