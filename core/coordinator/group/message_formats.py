"""The records of ``__consumer_offsets``, byte for byte as Kafka 2.6's GroupMetadataManager writes them.

Keys: an offset commit is key version 1 (``group`` string, ``topic`` string, ``partition`` int32); a group's
metadata is key version 2 (``group`` string). Values: an offset commit is value v3 (``offset`` int64,
``leader_epoch`` int32, ``metadata`` string, ``commit_timestamp`` int64), or v1 when the commit carries an expire
timestamp (``offset``, ``metadata``, ``commit_timestamp``, ``expire_timestamp``) — offsetCommitValue at
inter.broker.protocol.version 2.6; a group is value v3 (``protocol_type`` string, ``generation`` int32,
``protocol`` nullable string, ``leader`` nullable string, ``current_state_timestamp`` int64, ``members`` array of
member v3: ``member_id``, ``group_instance_id`` nullable, ``client_id``, ``client_host``, ``rebalance_timeout``,
``session_timeout`` int32s, ``subscription``, ``assignment`` bytes). Every value starts with its int16 version.
A tombstone (null value) removes the key. Older versions (keys v0, offset values v0-v2, group values v0-v2) are
read as GroupMetadataManager reads them.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import attrs

from messages.common import TopicPartition
from protocol.records import TRANSACTIONAL_BIT, Record, build_batch

OFFSET_KEY_VERSION = 1  # CURRENT_OFFSET_KEY_SCHEMA_VERSION
GROUP_KEY_VERSION = 2  # CURRENT_GROUP_KEY_SCHEMA_VERSION
GROUP_VALUE_VERSION = 3  # groupMetadataValue at apiVersion >= KAFKA_2_3_IV0

_H = struct.Struct(">h")
_I = struct.Struct(">i")
_Q = struct.Struct(">q")


class FormatError(ValueError):
    """A record of __consumer_offsets that does not decode (Kafka: IllegalStateException / SchemaException)."""


@attrs.frozen
class OffsetAndMetadata:
    """kafka.common.OffsetAndMetadata."""

    offset: int
    leader_epoch: int = -1  # Optional.empty as RecordBatch.NO_PARTITION_LEADER_EPOCH
    metadata: str = ""
    commit_timestamp: int = -1
    expire_timestamp: int | None = None


@attrs.frozen
class MemberRecord:
    """One member in a group's metadata value."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes


@attrs.frozen
class GroupRecord:
    """A group's metadata value (what readGroupMessageValue builds a GroupMetadata from)."""

    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int
    members: tuple[MemberRecord, ...]


@attrs.frozen
class OffsetKey:
    group: str
    tp: TopicPartition


@attrs.frozen
class GroupMetadataKey:
    group: str


# -- writing (Kafka's Struct.writeTo for these schemas) ------------------------------------------------------------
def _string(s: str) -> bytes:
    b = s.encode("utf-8")
    if len(b) > 32767:
        raise FormatError(f"string too long for an int16 length: {len(b)} bytes")
    return _H.pack(len(b)) + b


def _nullable_string(s: str | None) -> bytes:
    return _H.pack(-1) if s is None else _string(s)


def _bytes(b: bytes) -> bytes:
    return _I.pack(len(b)) + b


def offset_commit_key(group: str, tp: TopicPartition) -> bytes:
    """GroupMetadataManager.offsetCommitKey."""
    return _H.pack(OFFSET_KEY_VERSION) + _string(group) + _string(tp.topic) + _I.pack(tp.partition)


def group_metadata_key(group: str) -> bytes:
    """GroupMetadataManager.groupMetadataKey."""
    return _H.pack(GROUP_KEY_VERSION) + _string(group)


def offset_commit_value(om: OffsetAndMetadata) -> bytes:
    """GroupMetadataManager.offsetCommitValue at inter.broker.protocol.version 2.6: v1 if the commit has an expire
    timestamp (OffsetCommit v2-v4 with a retention time), else v3."""
    if om.expire_timestamp is not None:
        return (_H.pack(1) + _Q.pack(om.offset) + _string(om.metadata) + _Q.pack(om.commit_timestamp)
                + _Q.pack(om.expire_timestamp))
    return (_H.pack(3) + _Q.pack(om.offset) + _I.pack(om.leader_epoch) + _string(om.metadata)
            + _Q.pack(om.commit_timestamp))


def group_metadata_value(group: GroupRecord) -> bytes:
    """GroupMetadataManager.groupMetadataValue, version 3."""
    out = [_H.pack(GROUP_VALUE_VERSION), _string(group.protocol_type), _I.pack(group.generation),
           _nullable_string(group.protocol), _nullable_string(group.leader), _Q.pack(group.current_state_timestamp),
           _I.pack(len(group.members))]
    for m in group.members:
        out += [_string(m.member_id), _nullable_string(m.group_instance_id), _string(m.client_id),
                _string(m.client_host), _I.pack(m.rebalance_timeout_ms), _I.pack(m.session_timeout_ms),
                _bytes(m.subscription), _bytes(m.assignment)]
    return b"".join(out)


def records_batch(entries: Sequence[tuple[bytes, bytes | None]], timestamp_ms: int, producer_id: int = -1,
                  producer_epoch: int = -1) -> bytes:
    """One magic-v2 batch of (key, value) records, all stamped ``timestamp_ms``, uncompressed: what storeGroup /
    storeOffsets hand to appendRecords (offsets.topic.compression.codec's default, none). Without a producer id; with
    one (a TxnOffsetCommit), transactional, with its epoch and base sequence 0 (storeOffsets' MemoryRecords.builder
    with isTransactional)."""
    records = [Record(i, 0, key, value) for i, (key, value) in enumerate(entries)]
    if producer_id < 0:
        return build_batch(records, first_timestamp=timestamp_ms)
    return build_batch(records, first_timestamp=timestamp_ms, producer_id=producer_id, producer_epoch=producer_epoch,
                       base_sequence=0, attributes=TRANSACTIONAL_BIT)


# -- reading -------------------------------------------------------------------------------------------------------
class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise FormatError(f"truncated record: {n} bytes wanted at {self.pos} of {len(self.data)}")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def int16(self) -> int:
        return _H.unpack(self.take(2))[0]

    def int32(self) -> int:
        return _I.unpack(self.take(4))[0]

    def int64(self) -> int:
        return _Q.unpack(self.take(8))[0]

    def string(self) -> str:
        n = self.int16()
        if n < 0:
            raise FormatError("null where a string is required")
        return self.take(n).decode("utf-8")

    def nullable_string(self) -> str | None:
        n = self.int16()
        return None if n < 0 else self.take(n).decode("utf-8")

    def bytes_(self) -> bytes:
        n = self.int32()
        if n < 0:
            raise FormatError("null where bytes are required")
        return self.take(n)


def read_message_key(key: bytes) -> OffsetKey | GroupMetadataKey:
    """GroupMetadataManager.readMessageKey."""
    r = _Reader(key)
    version = r.int16()
    if version in (0, 1):
        return OffsetKey(r.string(), TopicPartition(r.string(), r.int32()))
    if version == GROUP_KEY_VERSION:
        return GroupMetadataKey(r.string())
    raise FormatError(f"Unknown group metadata message version: {version}")


def read_offset_message_value(value: bytes) -> OffsetAndMetadata:
    """GroupMetadataManager.readOffsetMessageValue (a tombstone is handled by the caller)."""
    r = _Reader(value)
    version = r.int16()
    if version == 0:
        offset, metadata, ts = r.int64(), r.string(), r.int64()
        return OffsetAndMetadata(offset, -1, metadata, ts)
    if version == 1:
        offset, metadata, ts, expire = r.int64(), r.string(), r.int64(), r.int64()
        return OffsetAndMetadata(offset, -1, metadata, ts, None if expire == -1 else expire)
    if version == 2:
        offset, metadata, ts = r.int64(), r.string(), r.int64()
        return OffsetAndMetadata(offset, -1, metadata, ts)
    if version == 3:
        offset, epoch, metadata, ts = r.int64(), r.int32(), r.string(), r.int64()
        return OffsetAndMetadata(offset, epoch, metadata, ts)
    raise FormatError(f"Unknown offset message version: {version}")


def read_group_message_value(value: bytes) -> GroupRecord:
    """GroupMetadataManager.readGroupMessageValue (a tombstone is handled by the caller)."""
    r = _Reader(value)
    version = r.int16()
    if not 0 <= version <= 3:
        raise FormatError(f"Unknown group metadata message version: {version}")
    protocol_type, generation = r.string(), r.int32()
    protocol, leader = r.nullable_string(), r.nullable_string()
    state_ts = r.int64() if version >= 2 else -1
    members = []
    for _ in range(r.int32()):
        member_id = r.string()
        instance = r.nullable_string() if version >= 3 else None
        client_id, client_host = r.string(), r.string()
        rebalance = r.int32() if version >= 1 else None
        session = r.int32()
        members.append(MemberRecord(member_id, instance, client_id, client_host,
                                    session if rebalance is None else rebalance, session, r.bytes_(), r.bytes_()))
    return GroupRecord(protocol_type, generation, protocol, leader, state_ts, tuple(members))
