"""Record batches, magic v2 (``DefaultRecordBatch``/``DefaultRecord``): read, check, build, and re-offset in place.

A Produce request's ``records`` bytes are one or more batches. The broker keeps each batch's bytes as received and
only rewrites the two fields the CRC does not cover — ``baseOffset`` and ``partitionLeaderEpoch`` — when it appends
(``LogValidator.validateMessagesAndAssignOffsets``, the in-place path). ``check_batch`` is ``ensureValid`` plus the
checks Kafka makes before that: size, magic, compression codec, then the records themselves.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence

import attrs
from crc32c import crc32c

from protocol import compression
from protocol.errors import CorruptRecordError, InvalidRecordError, ProtocolError
from protocol.primitives import read_uvarint, read_varint, read_varlong, write_varint, write_varlong

try:
    from protocol._records_check import records_valid as _records_valid
except ImportError:  # built without a C compiler (pyproject's extension is optional): the Python walk alone
    _records_valid = None

MAGIC_V2 = 2
# baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta, firstTimestamp,
# maxTimestamp, producerId, producerEpoch, baseSequence, recordsCount
_HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = _HEADER.size  # 61
LOG_OVERHEAD = 12  # baseOffset + batchLength
_CRC_START = 21  # attributes onward
_EPOCH_AT = 12
_Q = struct.Struct(">q")
_I = struct.Struct(">i")
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1

TIMESTAMP_TYPE_BIT = 0x08
TRANSACTIONAL_BIT = 0x10
CONTROL_BIT = 0x20


@attrs.frozen
class Header:
    key: str
    value: bytes | None


@attrs.frozen
class Record:
    """``DefaultRecord``: offsets and timestamps are deltas from the batch's base."""

    offset_delta: int
    timestamp_delta: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()
    attributes: int = 0


@attrs.frozen
class RecordBatch:
    """One batch's header fields and its bytes exactly as received (``raw``)."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    first_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int
    raw: bytes = attrs.field(repr=False)

    @property
    def compression(self) -> int:
        return self.attributes & 0x07

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_BIT)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_BIT)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    def records(self) -> list[Record]:
        """Decompress and read every record; ``CorruptRecordError`` if they do not add up to ``records_count``."""
        return read_records(self)


def read_batch_header(data: bytes, pos: int = 0) -> RecordBatch:
    """The batch starting at ``pos`` (its ``raw`` is a copy of its bytes). Raises ``TruncatedError``-like
    ``CorruptRecordError`` when fewer bytes than its header or its stated length remain, ``InvalidRecordError``
    for a magic other than 2."""
    if len(data) - pos < HEADER_SIZE:
        raise CorruptRecordError(f"record batch header needs {HEADER_SIZE} bytes, {len(data) - pos} left")
    fields = _HEADER.unpack_from(data, pos)
    batch_length = fields[1]
    magic = fields[3]
    if magic != MAGIC_V2:
        raise InvalidRecordError(f"record batch magic {magic}: Kafka 2.6 brokers store only magic v2 from produce v3+")
    size = LOG_OVERHEAD + batch_length
    if batch_length < HEADER_SIZE - LOG_OVERHEAD:
        raise CorruptRecordError(f"record batch length {batch_length} is shorter than its header")
    if len(data) - pos < size:
        raise CorruptRecordError(f"record batch of {size} bytes but only {len(data) - pos} left")
    return RecordBatch(*fields, raw=bytes(data[pos : pos + size]))


RECORD_OVERHEAD_V0 = 14  # LegacyRecord.RECORD_OVERHEAD_V0: the smallest size a batch's size field may hold


def first_batch_size(data: bytes) -> int | None:
    """The size of the whole batch ``data`` begins with, as ByteBufferLogInputStream.nextBatch finds one (the size
    field, then whether the bytes hold that many; the magic only after): None when there is none."""
    if len(data) < LOG_OVERHEAD:
        return None
    size = LOG_OVERHEAD + int.from_bytes(data[8:LOG_OVERHEAD], "big", signed=True)
    return size if LOG_OVERHEAD + RECORD_OVERHEAD_V0 <= size <= len(data) else None


def produce_records_error(data: bytes) -> tuple[int, str] | None:
    """What 2.6.3's KafkaApis.handleProduceRequest answers a client's partition whose records hold no whole first
    batch (ProduceRequest.validateRecords over ByteBufferLogInputStream.nextBatch, `first_batch_size`):
    (INVALID_RECORD, its message) for bytes whose size field runs past their end, (CORRUPT_MESSAGE, its message) for
    a size below a record's overhead; None when a whole batch is there (or no size field at all), for the log's own
    validation to judge."""
    if len(data) < LOG_OVERHEAD or first_batch_size(data) is not None:
        return None
    size = int.from_bytes(data[8:LOG_OVERHEAD], "big", signed=True)
    if size < RECORD_OVERHEAD_V0:
        return 2, f"Record size {size} is less than the minimum record overhead ({RECORD_OVERHEAD_V0})"
    return 87, "Produce requests must have at least one record batch"


def iter_batches(data: bytes) -> Iterator[RecordBatch]:
    """Every batch in a ``records`` field (``MemoryRecords.batches``); trailing bytes that cannot be a whole batch
    raise ``CorruptRecordError``."""
    pos = 0
    while pos < len(data):
        batch = read_batch_header(data, pos)
        pos += len(batch.raw)
        yield batch


def check_batch(batch: RecordBatch) -> None:
    """``DefaultRecordBatch.ensureValid`` and the codec check: CRC-32C over attributes..end, a known codec, and
    records that parse to exactly ``records_count`` entries."""
    computed = crc32c(memoryview(batch.raw)[_CRC_START:])
    if computed != batch.crc:
        raise CorruptRecordError(f"record batch CRC {batch.crc:#010x} does not match computed {computed:#010x}")
    if batch.compression > compression.ZSTD:
        raise compression.UnsupportedCompressionError(f"unknown compression codec {batch.compression}")
    if batch.compression == compression.NONE:
        # the records read where they are: no copy of the batch's body (a produced batch is up to a MB)
        check_records(batch.raw, batch.records_count, HEADER_SIZE)
    else:
        check_records(compression.decompress(batch.compression, batch.raw[HEADER_SIZE:]), batch.records_count)


def check_records(body: bytes, count: int, start: int = 0) -> None:
    """`read_records`' checks of a batch's (decompressed) records without building them (`check_records_walk`):
    compiled (protocol/_records_check.c: 100 records of 1 KB in ~0.5 us, where the Python walk takes ~75 us), which
    answers only whether the walk accepts them; a refusal is the walk's, so that it raises Kafka's error with its
    message."""
    if _records_valid is not None and _records_valid(body, count, start):
        return
    check_records_walk(body, count, start)


def check_records_walk(body: bytes, count: int, start: int = 0) -> None:
    """`read_records`' checks of a batch's (decompressed) records without building them: every record's fields
    fit its length, the lengths add up to the body, and there are ``count`` of them. On a leader this runs for every
    produced record (LogValidator.assignOffsetsNonCompressed reads each record of an uncompressed batch), so it
    reads the one- and two-byte varints (nearly all of them: a 1-KB record's length and value size take two, an
    offset delta from 64 on two) inline, and a null key (one byte, 1) first: ~5× faster than read_records, which
    builds Record values and copies keys and values. Raises what read_records raises for the same bytes. The
    records begin at ``start`` (a whole batch's HEADER_SIZE: its records read in place) and run to the end."""
    n = len(body)
    pos = start
    i = 0
    try:
        for i in range(count):  # noqa: B007 - i names the bad record in the errors below
            b = body[pos]  # length
            if b < 0x80:
                length = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                c = body[pos + 1]
                if c < 0x80:
                    raw = (b & 0x7F) | (c << 7)
                    pos += 2
                else:
                    raw, pos = read_uvarint(body, pos)
                length = (raw >> 1) ^ -(raw & 1)
            end = pos + length
            if length < 0 or end > n:
                raise CorruptRecordError(f"record length {length} runs past the end of the batch")
            # attributes at pos; the timestamp delta (a varlong) after it
            if body[pos + 1] < 0x80:
                p = pos + 2
            elif body[pos + 2] < 0x80:
                p = pos + 3
            else:
                p = read_varlong(body, pos + 1)[1]
            b = body[p]  # offset delta
            if b < 0x80:
                p += 1
            elif body[p + 1] < 0x80:
                p += 2
            else:
                p = read_uvarint(body, p)[1]
            b = body[p]  # key: 1 is null (zig-zag -1), the common case
            if b != 1:
                if b < 0x80:
                    raw = b
                    p += 1
                elif body[p + 1] < 0x80:
                    raw = (b & 0x7F) | (body[p + 1] << 7)
                    p += 2
                else:
                    raw, p = read_uvarint(body, p)
                if not raw & 1:  # zig-zag: odd is negative (null)
                    p += raw >> 1
                    if p > n:
                        raise CorruptRecordError("record field runs past the end of the batch")
            else:
                p += 1
            b = body[p]  # value
            if b < 0x80:
                raw = b
                p += 1
            elif body[p + 1] < 0x80:
                raw = (b & 0x7F) | (body[p + 1] << 7)
                p += 2
            else:
                raw, p = read_uvarint(body, p)
            if not raw & 1:
                p += raw >> 1
                if p > n:
                    raise CorruptRecordError("record field runs past the end of the batch")
            if body[p]:  # a header count other than 0
                p = _check_headers(body, p)
            else:
                p += 1
            if p != end:
                raise CorruptRecordError(f"record declares {length} bytes but its fields take {p - pos}")
            pos = end
    except IndexError:
        raise CorruptRecordError(f"record {i} of {count}: the record runs past the end of the batch") from None
    except ProtocolError as e:
        raise CorruptRecordError(f"record {i} of {count}: {e}") from None
    if pos != n:
        raise CorruptRecordError(f"{n - pos} bytes after the batch's {count} records")


def _check_headers(body: bytes, p: int) -> int:
    """The headers of a record at ``p`` (their count first), as _read_record reads them; the position after."""
    count, p = read_varint(body, p)
    if count < 0:
        raise CorruptRecordError(f"record header count {count}")
    for _ in range(count):
        hkey, p = _read_bytes(body, p)
        if hkey is None:
            raise CorruptRecordError("record header key is null")
        try:
            hkey.decode()
        except UnicodeDecodeError:
            raise CorruptRecordError("record header key is not UTF-8") from None
        _, p = _read_bytes(body, p)
    return p


def read_records(batch: RecordBatch) -> list[Record]:
    body = compression.decompress(batch.compression, batch.raw[HEADER_SIZE:])
    out: list[Record] = []
    pos = 0
    try:
        for _ in range(batch.records_count):
            record, pos = _read_record(body, pos)
            out.append(record)
    except IndexError:  # a zero-length record at the very end has no attributes byte
        raise CorruptRecordError(f"record {len(out)} of {batch.records_count}: the record runs past the end of the "
                                 "batch") from None
    except ProtocolError as e:
        raise CorruptRecordError(f"record {len(out)} of {batch.records_count}: {e}") from None
    if pos != len(body):
        raise CorruptRecordError(f"{len(body) - pos} bytes after the batch's {batch.records_count} records")
    return out


def _read_bytes(body: bytes, pos: int) -> tuple[bytes | None, int]:
    n, pos = read_varint(body, pos)
    if n < 0:
        return None, pos
    if pos + n > len(body):
        raise CorruptRecordError("record field runs past the end of the batch")
    return body[pos : pos + n], pos + n


def _read_record(body: bytes, pos: int) -> tuple[Record, int]:
    length, pos = read_varint(body, pos)
    end = pos + length
    if length < 0 or end > len(body):
        raise CorruptRecordError(f"record length {length} runs past the end of the batch")
    attributes = body[pos]
    timestamp_delta, p = read_varlong(body, pos + 1)
    offset_delta, p = read_varint(body, p)
    key, p = _read_bytes(body, p)
    value, p = _read_bytes(body, p)
    n_headers, p = read_varint(body, p)
    if n_headers < 0:
        raise CorruptRecordError(f"record header count {n_headers}")
    headers = []
    for _ in range(n_headers):
        hkey, p = _read_bytes(body, p)
        if hkey is None:
            raise CorruptRecordError("record header key is null")
        hvalue, p = _read_bytes(body, p)
        try:
            headers.append(Header(hkey.decode(), hvalue))
        except UnicodeDecodeError:
            raise CorruptRecordError("record header key is not UTF-8") from None
    if p != end:
        raise CorruptRecordError(f"record declares {length} bytes but its fields take {p - pos}")
    return Record(offset_delta, timestamp_delta, key, value, tuple(headers), attributes), end


def _write_bytes(out: bytearray, b: bytes | None) -> None:
    if b is None:
        write_varint(out, -1)
    else:
        write_varint(out, len(b))
        out += b


def encode_record(record: Record) -> bytes:
    """``DefaultRecord.writeTo``."""
    body = bytearray([record.attributes])
    write_varlong(body, record.timestamp_delta)
    write_varint(body, record.offset_delta)
    _write_bytes(body, record.key)
    _write_bytes(body, record.value)
    write_varint(body, len(record.headers))
    for h in record.headers:
        _write_bytes(body, h.key.encode())
        _write_bytes(body, h.value)
    out = bytearray()
    write_varint(out, len(body))
    return bytes(out + body)


def build_batch(
    records: Sequence[Record],
    *,
    base_offset: int = 0,
    first_timestamp: int = 0,
    compression_codec: int = compression.NONE,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    attributes: int = 0,
    last_offset_delta: int | None = None,
    max_timestamp: int | None = None,
) -> bytes:
    """A magic-v2 batch as ``MemoryRecordsBuilder`` writes it, CRC included. ``last_offset_delta``:
    MemoryRecordsBuilder.overrideLastOffset (a cleaned batch keeps its original last offset, so the producer's last
    sequence stays where it was); by default its last record's. ``max_timestamp``: by default the records' (an
    empty batch the log cleaner keeps carries its original's, DefaultRecordBatch.writeEmptyHeader)."""
    body = compression.compress(compression_codec, b"".join(encode_record(r) for r in records))
    if last_offset_delta is None:
        last_offset_delta = max((r.offset_delta for r in records), default=0)
    if max_timestamp is None:
        max_timestamp = first_timestamp + max((r.timestamp_delta for r in records), default=0)
    attrs_ = (attributes & ~0x07) | compression_codec
    size = HEADER_SIZE + len(body)
    head = bytearray(
        _HEADER.pack(base_offset, size - LOG_OVERHEAD, partition_leader_epoch, MAGIC_V2, 0, attrs_, last_offset_delta,
                     first_timestamp, max_timestamp, producer_id, producer_epoch, base_sequence, len(records))
    )  # fmt: skip
    out = head + body
    struct.pack_into(">I", out, 17, crc32c(memoryview(out)[_CRC_START:]))
    return bytes(out)


def assign_offsets(buf: bytearray, pos: int, base_offset: int, partition_leader_epoch: int | None = None) -> int:
    """Set the batch at ``buf[pos:]``'s base offset (and the leader's epoch) in place, as the log does on append;
    the CRC stays valid (it does not cover these fields). Returns the offset after the batch's last record."""
    _Q.pack_into(buf, pos, base_offset)
    if partition_leader_epoch is not None:
        _I.pack_into(buf, pos + _EPOCH_AT, partition_leader_epoch)
    (last_offset_delta,) = _I.unpack_from(buf, pos + 23)
    return base_offset + last_offset_delta + 1


# ------------------------------------------------------------------------------------------------ control records
# ControlRecordType (its key: version int16 0, type int16) and EndTransactionMarker (its value: version int16 0,
# coordinator epoch int32), as org.apache.kafka.common.record writes and reads them.
CONTROL_ABORT = 0  # ControlRecordType.ABORT
CONTROL_COMMIT = 1  # ControlRecordType.COMMIT
CONTROL_UNKNOWN = -1  # ControlRecordType.UNKNOWN: any other type id
CONTROL_RECORD_KEY_VERSION = 0  # ControlRecordType.CURRENT_CONTROL_RECORD_KEY_VERSION
END_TXN_MARKER_VERSION = 0  # EndTransactionMarker.CURRENT_END_TXN_MARKER_VERSION
_CONTROL_KEY = struct.Struct(">hh")
_END_TXN_VALUE = struct.Struct(">hi")


@attrs.frozen(slots=True)
class EndTransactionMarker:
    """org.apache.kafka.common.record.EndTransactionMarker: COMMIT or ABORT, by the coordinator of ``epoch``."""

    control_type: int
    coordinator_epoch: int

    @property
    def is_abort(self) -> bool:
        return self.control_type == CONTROL_ABORT


def control_record_type(key: bytes | None) -> int:
    """ControlRecordType.parse: the type id of a control record's key (CONTROL_UNKNOWN for one Kafka 2.6 does not
    know); InvalidRecordError for a key shorter than 4 bytes or of a negative version."""
    if key is None or len(key) < _CONTROL_KEY.size:
        raise InvalidRecordError(f"Invalid value size found for end control record key. Must have at least "
                                 f"{_CONTROL_KEY.size} bytes, but found only {0 if key is None else len(key)}")
    version, type_id = _CONTROL_KEY.unpack_from(key)
    if version < 0:
        raise InvalidRecordError(f"Invalid version found for control record: {version}. May indicate data "
                                 "corruption")
    return type_id if type_id in (CONTROL_ABORT, CONTROL_COMMIT) else CONTROL_UNKNOWN


def encode_control_key(control_type: int) -> bytes:
    """ControlRecordType.recordKey written out."""
    return _CONTROL_KEY.pack(CONTROL_RECORD_KEY_VERSION, control_type)


def encode_end_txn_marker_value(marker: EndTransactionMarker) -> bytes:
    """EndTransactionMarker.serializeValue."""
    return _END_TXN_VALUE.pack(END_TXN_MARKER_VERSION, marker.coordinator_epoch)


def end_txn_marker(record: Record) -> EndTransactionMarker | None:
    """EndTransactionMarker.deserialize of a control record: None for a control record that is no marker (an
    unknown type, skipped as Kafka's readers skip it); InvalidRecordError for a value too short or of a negative
    version."""
    control_type = control_record_type(record.key)
    if control_type == CONTROL_UNKNOWN:
        return None
    value = record.value
    if value is None or len(value) < _END_TXN_VALUE.size:
        raise InvalidRecordError(f"Invalid value size found for end transaction marker. Must have at least "
                                 f"{_END_TXN_VALUE.size} bytes, but found only {0 if value is None else len(value)}")
    version, coordinator_epoch = _END_TXN_VALUE.unpack_from(value)
    if version < 0:
        raise InvalidRecordError(f"Invalid version found for end transaction marker: {version}. May indicate data "
                                 "corruption")
    return EndTransactionMarker(control_type, coordinator_epoch)


def batch_end_txn_marker(batch: RecordBatch) -> EndTransactionMarker | None:
    """The marker of a control batch (its first record), None for an empty control batch (a transaction the
    cleaner removed whole) or a control record of an unknown type."""
    records = batch.records()
    return end_txn_marker(records[0]) if records else None


def build_end_txn_marker_batch(producer_id: int, producer_epoch: int, marker: EndTransactionMarker,
                               timestamp: int, base_offset: int = 0,
                               partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH) -> bytes:
    """MemoryRecords.withEndTransactionMarker: one transactional control batch of one record (key: the control
    type, value: the marker), no sequence, CREATE_TIME ``timestamp``."""
    record = Record(0, 0, encode_control_key(marker.control_type), encode_end_txn_marker_value(marker))
    return build_batch([record], base_offset=base_offset, first_timestamp=timestamp,
                       partition_leader_epoch=partition_leader_epoch, producer_id=producer_id,
                       producer_epoch=producer_epoch, base_sequence=NO_SEQUENCE,
                       attributes=TRANSACTIONAL_BIT | CONTROL_BIT)
