"""messages.codec's front gives the reference codec's results; its generated functions show their source (linecache);
only frozen attrs classes have their text kept by value (attrs.inspect, no attrs internals)."""

from __future__ import annotations

import inspect
import linecache
import traceback
from typing import Any

import attrs
import pytest

import messages.codec
from kactor.trace.reader import ensure_registered
from messages.codec import fastcodec, fastdecode, orjson_lines
from messages.codec import reference as codec
from messages.common import Errors, TopicPartition
from messages.requests import UpdateMetadataPartitionState


def test_front_equals_the_reference() -> None:
    ensure_registered()
    state = UpdateMetadataPartitionState(TopicPartition("t", 0), 1, 0, 3, (0, 1), 4, (0, 1))
    for v in [state, (Errors.NONE, 1.5, "é"), {TopicPartition("t", 1): frozenset({1, 2})}, b"\x00", 10**30, None]:
        assert messages.codec.dumps(v) == codec.dumps(v), v
        assert messages.codec.dumps_bytes(v) == codec.dumps(v).encode("ascii"), v
        assert messages.codec.loads(codec.dumps(v)) == codec.loads(codec.dumps(v)) == v
        assert messages.codec.to_json(v) == codec.to_json(v)
    for bad in ("{", '{"@": "NoSuchMessage"}', b"\xff"):
        with pytest.raises(messages.codec.CodecError) as want:
            codec.loads(bad)
        with pytest.raises(messages.codec.CodecError) as got:
            messages.codec.loads(bad)
        assert str(got.value) == str(want.value)
    with pytest.raises(messages.codec.CodecError):
        messages.codec.dumps(object())


@attrs.frozen
class _Frozen:
    n: int
    name: str


@attrs.define(unsafe_hash=True)
class _MutableHashable:
    n: int
    name: str


def _generated() -> list[Any]:
    """One function of each kind the codec generates: encoders (to_json, to_text, orjson's), a decoder, a guard."""
    from messages.requests import PartitionError

    ensure_registered()
    messages.codec.prepare()
    fastcodec.to_text(_Frozen(1, "a"))
    fastcodec.to_json(_Frozen(1, "a"))
    # kept by value under a guard (its Errors field): the guard is generated
    orjson_lines.encode_record_bytes(1, 1.0, "a", "b", PartitionError(TopicPartition("t", 0), Errors.NONE), None)
    return [fastcodec._DISPATCH[_Frozen], fastcodec._TEXT[_Frozen], fastdecode._DECODERS["PartitionAndReplica"],
            orjson_lines._DEFAULT[TopicPartition], orjson_lines._VALUES[PartitionError][1]]


def test_generated_source_is_in_linecache() -> None:
    """A debugger steps into a generated encoder, decoder or guard: its file name has its source, as attrs' have."""
    for f in _generated():
        filename = f.__code__.co_filename
        assert filename.startswith("<messages.codec "), filename
        lines = linecache.getlines(filename)
        assert lines and lines[0].startswith(f"def {f.__name__}("), (filename, lines)
        assert inspect.getsource(f) == "".join(lines)


def test_a_traceback_through_a_generated_decoder_shows_its_line() -> None:
    ensure_registered()

    class BoomError(Exception):
        pass

    def explode(_: Any) -> Any:
        raise BoomError

    dec = fastdecode._DECODERS.get("PartitionAndReplica") or fastdecode._decoder("PartitionAndReplica")
    dec.__globals__["D"], saved = explode, dec.__globals__["D"]  # the generated code's own name for from_json
    try:
        with pytest.raises(BoomError) as e:
            dec({"@": "PartitionAndReplica", "topic_partition": ["not", "a", "partition"], "replica": 1})
    finally:
        dec.__globals__["D"] = saved
    frames = traceback.extract_tb(e.value.__traceback__)
    generated = [fr for fr in frames if fr.filename.startswith("<messages.codec from_json")]
    assert generated and "return C(" in (generated[0].line or ""), frames


def test_only_frozen_classes_are_kept_by_value() -> None:
    """The by-value cache needs values that cannot change: a hashable but mutable attrs class is written afresh."""
    assert orjson_lines._qualifies(_Frozen) == (True, ())
    assert orjson_lines._qualifies(_MutableHashable) == (False, ())
    assert orjson_lines._qualifies(UpdateMetadataPartitionState)[0]
    m = _MutableHashable(1, "a")
    first = orjson_lines.encode_record(1, 1.0, "a", "b", m, None)
    m.name = "b"
    assert orjson_lines.encode_record(1, 1.0, "a", "b", m, None) == first.replace('"name":"a"', '"name":"b"')
