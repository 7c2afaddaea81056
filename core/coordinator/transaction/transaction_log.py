"""The records of ``__transaction_state``, byte for byte as Kafka 2.6.3's TransactionLog writes them: the one home of
their codecs.

Key (``TransactionLog.keyToBytes``): int16 version 0, then ``transactional_id`` string. Value (``valueToBytes``):
int16 version 0, then ``producer_id`` int64, ``producer_epoch`` int16, ``transaction_timeout`` int32,
``transaction_status`` int8 (`TransactionState`'s byte), ``transaction_partitions`` nullable array of {``topic``
string, ``partition_ids`` array of int32} (null for Empty; grouped by topic), ``transaction_entry_timestamp`` int64
(the last update), ``transaction_start_timestamp`` int64. A tombstone (null value) is a transactional id that expired.
Every record goes in one uncompressed magic-v2 batch without producer id (TransactionLog.EnforcedCompressionType
NONE), stamped with the time of the write.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

import attrs

from messages.common import TopicPartition
from protocol.records import HEADER_SIZE, Record, build_batch, encode_record

KEY_VERSION = 0  # TransactionLog.KeySchema.CURRENT_VERSION
VALUE_VERSION = 0  # TransactionLog.ValueSchema.CURRENT_VERSION

_H = struct.Struct(">h")
_B = struct.Struct(">b")
_I = struct.Struct(">i")
_Q = struct.Struct(">q")


class TxnLogFormatError(ValueError):
    """A record of __transaction_state that does not decode (Kafka: IllegalStateException / SchemaException)."""


@attrs.frozen
class TxnLogValue:
    """What a value record says of one transactional id (TransactionLog.readTxnRecordValue's fields)."""

    producer_id: int
    producer_epoch: int
    txn_timeout_ms: int
    state_byte: int
    topic_partitions: frozenset[TopicPartition]
    txn_last_update_timestamp: int
    txn_start_timestamp: int


def _string(s: str) -> bytes:
    raw = s.encode("utf-8")
    return _H.pack(len(raw)) + raw


def key_to_bytes(transactional_id: str) -> bytes:
    """TransactionLog.keyToBytes."""
    return _H.pack(KEY_VERSION) + _string(transactional_id)


def value_to_bytes(value: TxnLogValue, empty_state_byte: int = 0) -> bytes:
    """TransactionLog.valueToBytes: the partitions are null in state Empty (which must have none), else grouped by
    topic (topics and partitions sorted here, so that equal states write equal bytes)."""
    out = bytearray(_H.pack(VALUE_VERSION))
    out += _Q.pack(value.producer_id) + _H.pack(value.producer_epoch) + _I.pack(value.txn_timeout_ms)
    out += _B.pack(value.state_byte)
    if value.state_byte == empty_state_byte:
        if value.topic_partitions:
            raise ValueError(f"Transaction is not expected to have any partitions since its state is Empty: "
                             f"{sorted(value.topic_partitions)}")
        out += _I.pack(-1)
    else:
        by_topic: dict[str, list[int]] = {}
        for tp in value.topic_partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        out += _I.pack(len(by_topic))
        for topic in sorted(by_topic):
            out += _string(topic) + _I.pack(len(by_topic[topic]))
            out += b"".join(_I.pack(p) for p in sorted(by_topic[topic]))
    out += _Q.pack(value.txn_last_update_timestamp) + _Q.pack(value.txn_start_timestamp)
    return bytes(out)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise TxnLogFormatError(f"truncated record: {n} bytes wanted at {self.pos} of {len(self.data)}")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def unpack(self, s: struct.Struct) -> int:
        return s.unpack(self.take(s.size))[0]

    def string(self) -> str:
        n = self.unpack(_H)
        if n < 0:
            raise TxnLogFormatError("null string in a transaction log record")
        try:
            return self.take(n).decode("utf-8")
        except UnicodeDecodeError as e:
            raise TxnLogFormatError(str(e)) from e


def read_txn_record_key(data: bytes) -> str:
    """TransactionLog.readTxnRecordKey: the transactional id of a key of version 0."""
    r = _Reader(data)
    version = r.unpack(_H)
    if version != KEY_VERSION:
        raise TxnLogFormatError(f"Unknown version {version} from the transaction log message key")
    return r.string()


def read_txn_record_value(data: bytes) -> TxnLogValue:
    """TransactionLog.readTxnRecordValue for a value of version 0."""
    r = _Reader(data)
    version = r.unpack(_H)
    if version != VALUE_VERSION:
        raise TxnLogFormatError(f"Unknown version {version} from the transaction log message value")
    producer_id, epoch, timeout, state = r.unpack(_Q), r.unpack(_H), r.unpack(_I), r.unpack(_B)
    partitions: set[TopicPartition] = set()
    n_topics = r.unpack(_I)
    for _ in range(max(n_topics, 0)):
        topic = r.string()
        n = r.unpack(_I)
        partitions.update(TopicPartition(topic, r.unpack(_I)) for _ in range(max(n, 0)))
    last_update, start = r.unpack(_Q), r.unpack(_Q)
    return TxnLogValue(producer_id, epoch, timeout, state, frozenset(partitions), last_update, start)


def records_batch(entries: Iterable[tuple[bytes, bytes | None]], timestamp_ms: int) -> bytes:
    """TransactionStateManager.appendTransactionToLog's MemoryRecords.withRecords(NONE, SimpleRecord(timestamp, key,
    value)): one uncompressed magic-v2 batch without producer id."""
    return build_batch([Record(i, 0, key, value) for i, (key, value) in enumerate(entries)],
                       first_timestamp=timestamp_ms)


class TombstoneBatchBuilder:
    """MemoryRecordsBuilder as TransactionStateManager.removeExpiredTransactionalIds uses it: tombstones of expired
    transactional ids in one uncompressed batch whose size stays within ``max_batch_size`` (the partition's
    max.message.bytes), except that its first record always fits (``hasRoomFor``)."""

    def __init__(self, max_batch_size: int, timestamp_ms: int) -> None:
        self.max_batch_size = max_batch_size
        self.timestamp_ms = timestamp_ms
        self.keys: list[bytes] = []
        self.size_in_bytes = HEADER_SIZE  # estimatedBytesWritten: the batch header, then each record

    def _record_size(self, key: bytes) -> int:
        return len(encode_record(Record(len(self.keys), 0, key, None)))

    def has_room_for(self, key: bytes) -> bool:
        """MemoryRecordsBuilder.hasRoomFor(timestamp, key, null)."""
        return not self.keys or self.size_in_bytes + self._record_size(key) <= self.max_batch_size

    def append(self, key: bytes) -> None:
        self.size_in_bytes += self._record_size(key)
        self.keys.append(key)

    def build(self) -> bytes:
        return records_batch([(key, None) for key in self.keys], self.timestamp_ms)
