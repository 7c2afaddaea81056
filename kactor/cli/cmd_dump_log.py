"""``kactor dump-log``: Kafka 2.6.3's ``kafka-dump-log.sh`` (kafka.tools.DumpLogSegments) over a kactor broker's log
files, which are Kafka's formats: ``.log`` segments (a line per batch, with ``--deep-iteration`` or
``--print-data-log`` a ``| offset: ...`` line per record), ``.index`` and ``.timeindex`` entries (checked against the
segment, ``--verify-index-only``, ``--index-sanity-check``), ``.txnindex`` aborted transactions and producer-state
``.snapshot`` entries — every line as DumpLogSegments prints it, read with the broker's own readers
(core/broker/log_segment.py, offset_index.py, transaction_index.py, producer_state.py). The files are only read.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import sys
from collections.abc import Callable

import attrs

from core.broker.log_segment import INDEX_FILE_SUFFIX, LOG_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, crc_valid, frames_in
from core.broker.offset_index import CorruptIndexError, OffsetIndex, TimeIndex
from core.broker.producer_state import (
    SNAPSHOT_FILE_SUFFIX,
    CorruptSnapshotError,
    decode_snapshot,
    increment_sequence,
)
from core.broker.transaction_index import ABORTED_TXN_VERSION, ENTRY_SIZE, TXN_INDEX_FILE_SUFFIX, decode_entries
from core.coordinator.group.message_formats import (
    FormatError,
    OffsetKey,
    read_group_message_value,
    read_message_key,
    read_offset_message_value,
)
from core.coordinator.transaction.transaction_log import (
    TxnLogFormatError,
    read_txn_record_key,
    read_txn_record_value,
)
from core.coordinator.transaction.transaction_metadata import IllegalTxnStateError, TransactionState
from kactor.cli import CliError, kafka_options
from protocol.errors import ProtocolError
from protocol.records import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    TIMESTAMP_TYPE_BIT,
    RecordBatch,
    control_record_type,
    end_txn_marker,
    read_batch_header,
)

RECORD_INDENT = "|"  # DumpLogSegments.RecordIndent
STRING_DECODER = "kafka.serializer.StringDecoder"
NO_SEQUENCE = -1
NO_TIMESTAMP = -1
COMPRESSION_NAMES = ("NONE", "GZIP", "SNAPPY", "LZ4", "ZSTD")  # CompressionType.name by id
CONTROL_NAMES = {CONTROL_ABORT: "ABORT", CONTROL_COMMIT: "COMMIT"}
Out = Callable[[str], None]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "dump-log",
        description="This tool helps to parse a log file and dump its contents to the console, useful for debugging "
                    "a seemingly corrupt log segment.")
    p.add_argument("--print-data-log", action="store_true",
                   help="if set, printing the messages content when dumping data logs. Automatically set if any "
                        "decoder option is specified.")
    p.add_argument("--verify-index-only", action="store_true",
                   help="if set, just verify the index log without printing its content.")
    p.add_argument("--index-sanity-check", action="store_true",
                   help="if set, just checks the index sanity without printing its content. This is the same check "
                        "that is executed on broker startup to determine if an index needs rebuilding or not.")
    p.add_argument("--files", required=True, metavar="file1, file2, ...",
                   help="REQUIRED: The comma separated list of data and index log files to be dumped.")
    p.add_argument("--max-message-size", type=int, default=5 * 1024 * 1024, metavar="size",
                   help="Size of largest message.")
    p.add_argument("--deep-iteration", action="store_true",
                   help="if set, uses deep instead of shallow iteration. Automatically set if print-data-log is "
                        "enabled.")
    for option, what in (("--value-decoder-class", "messages"), ("--key-decoder-class", "keys")):
        p.add_argument(option, nargs="?", const=STRING_DECODER, default=None, metavar="CLASS",
                       help=f"if set, used to deserialize the {what}: only {STRING_DECODER} (UTF-8 text, the "
                            "default) — kactor loads no Java classes.")
    p.add_argument("--offsets-decoder", action="store_true",
                   help="if set, log data will be parsed as offset data from the __consumer_offsets topic.")
    p.add_argument("--transaction-log-decoder", action="store_true",
                   help="if set, log data will be parsed as transaction metadata from the __transaction_state topic.")
    kafka_options.add_refusals(p, "dump-log")
    p.set_defaults(func=run, _parser=p)


@attrs.define
class DumpErrors:
    """What DumpLogSegments gathers while dumping and prints on stderr at the end, per file (absolute path)."""

    index_mismatches: dict[str, list[tuple[int, int]]] = attrs.Factory(dict)
    time_mismatches: dict[str, list[tuple[int, int]]] = attrs.Factory(dict)
    out_of_order: dict[str, list[tuple[int, int]]] = attrs.Factory(dict)
    not_found: dict[str, list[tuple[int, int]]] = attrs.Factory(dict)
    non_consecutive: dict[str, list[tuple[int, int]]] = attrs.Factory(dict)

    def lines(self) -> list[str]:
        """DumpLogSegments.main's closing reports (the index and log lists were prepended to: newest first)."""
        out = []
        for name, pairs in self.index_mismatches.items():
            out.append(f"Mismatches in :{name}")
            out += [f"  Index offset: {a}, log offset: {b}" for a, b in reversed(pairs)]
        for name, pairs in self.time_mismatches.items():
            out.append(f"Found timestamp mismatch in :{name}")
            out += [f"  Index timestamp: {a}, log timestamp: {b}" for a, b in pairs]
        for name, pairs in self.out_of_order.items():
            out.append(f"Found out of order timestamp in :{name}")
            out += [f"  Index timestamp: {a}, Previously indexed timestamp: {b}" for a, b in pairs]
        for pairs in self.not_found.values():
            out.append("The following indexed offsets are not found in the log.")
            out += [f"Indexed offset: {a}, found log offset: {b}" for a, b in pairs]
        for name, pairs in self.non_consecutive.items():
            out.append(f"Non-consecutive offsets in {name}")
            out += [f"  {a} is followed by {b}" for a, b in reversed(pairs)]
        return out


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise CliError(f"Cannot read {path}: {e.strerror or e}") from None


def _base_offset(path: str) -> int:
    """``file.getName.split("\\.")(0).toLong``."""
    name = os.path.basename(path).split(".")[0]
    try:
        return int(name)
    except ValueError:
        raise CliError(f'For input string: "{name}" ({path} is not named for its base offset)') from None


def _batches(data: bytes) -> list[RecordBatch]:
    """FileRecords.batches: the whole v2 batches from the start (a cut or foreign tail ends the walk)."""
    out = []
    for position, *_ in frames_in(data):
        try:
            out.append(read_batch_header(data, position))
        except ProtocolError:  # a batch of another magic: kactor's logs hold v2 only, the rest is reported
            break
    return out


def _timestamp_type(batch: RecordBatch) -> str:
    return "LogAppendTime" if batch.attributes & TIMESTAMP_TYPE_BIT else "CreateTime"


def _record_timestamps(batch: RecordBatch) -> list[int]:
    """DefaultRecordBatch's records' timestamps: the batch's max under LogAppendTime, else first + delta."""
    records = batch.records()
    if batch.attributes & TIMESTAMP_TYPE_BIT:
        return [batch.max_timestamp] * len(records)
    return [batch.first_timestamp + r.timestamp_delta for r in records]


def batch_line(batch: RecordBatch, position: int) -> str:
    """DumpLogSegments.printBatchLevel of a v2 batch."""
    last_seq = NO_SEQUENCE if batch.base_sequence == NO_SEQUENCE else \
        increment_sequence(batch.base_sequence, batch.last_offset_delta)
    codec = COMPRESSION_NAMES[batch.compression] if batch.compression < len(COMPRESSION_NAMES) else \
        str(batch.compression)
    return (f"baseOffset: {batch.base_offset} lastOffset: {batch.last_offset} count: {batch.records_count} "
            f"baseSequence: {batch.base_sequence} lastSequence: {last_seq} producerId: {batch.producer_id} "
            f"producerEpoch: {batch.producer_epoch} partitionLeaderEpoch: {batch.partition_leader_epoch} "
            f"isTransactional: {str(batch.is_transactional).lower()} isControl: {str(batch.is_control).lower()}"
            f" position: {position} {_timestamp_type(batch)}: {batch.max_timestamp} size: {len(batch.raw)} "
            f"magic: {batch.magic} compresscodec: {codec} crc: {batch.crc} "
            f"isvalid: {str(crc_valid(batch)).lower()}")


def _text(data: bytes) -> str:
    """kafka.serializer.StringDecoder: new String(bytes, UTF-8)."""
    return data.decode("utf-8", errors="replace")


def _hex(data: bytes) -> str:
    """GroupMetadataManager.hex: "%X".format(BigInt(1, bytes)), empty for no bytes."""
    return f"{int.from_bytes(data, 'big'):X}" if data else ""


def _consumer_assignment(data: bytes) -> str:
    """ConsumerProtocol.deserializeAssignment's partitions (List.toString) and, when there is some, its user data in
    hex: ``[t-0, t-1]`` or ``[t-0]:0A0B``."""
    pos = 2  # the version
    parts: list[str] = []

    def take(fmt: str) -> int:
        nonlocal pos
        size = struct.calcsize(fmt)
        if pos + size > len(data):
            raise FormatError("the assignment is cut short")
        (value,) = struct.unpack_from(fmt, data, pos)
        pos += size
        return int(value)

    for _ in range(max(take(">i"), 0)):
        n = take(">h")
        topic = data[pos:pos + n].decode("utf-8", errors="replace")
        pos += n
        parts += [f"{topic}-{take('>i')}" for _ in range(max(take(">i"), 0))]
    user_data = b""
    if pos + 4 <= len(data):
        n = take(">i")
        user_data = data[pos:pos + n] if n > 0 else b""
    text = f"[{', '.join(parts)}]"
    return f"{text}:{_hex(user_data)}" if user_data else text


def offsets_key_and_value(key: bytes | None, value: bytes | None) -> tuple[str, str]:
    """GroupMetadataManager.formatRecordKeyAndValue (--offsets-decoder): a record of __consumer_offsets."""
    if key is None:
        raise CliError("Failed to decode message using offset topic decoder (message had a missing key)")
    try:
        parsed = read_message_key(key)
        if isinstance(parsed, OffsetKey):
            text = f"offset_commit::group={parsed.group},partition={parsed.tp.topic}-{parsed.tp.partition}"
            if value is None:
                return text, "<DELETE>"
            offset = read_offset_message_value(value)
            return text, f"offset={offset.offset}" + (f",metadata={offset.metadata}" if offset.metadata else "")
        text = f"group_metadata::group={parsed.group}"
        if value is None:
            return text, "<DELETE>"
        group = read_group_message_value(value)
    except FormatError as e:
        raise CliError(f"Failed to decode message using offset topic decoder: {e}") from None
    protocol_type = group.protocol_type
    assignment = ",".join(
        f"{m.member_id}={_consumer_assignment(m.assignment) if protocol_type == 'consumer' else _hex(m.assignment)}"
        for m in group.members)
    return text, json.dumps({"protocolType": protocol_type, "protocol": group.protocol,
                             "generationId": group.generation, "assignment": f"{{{assignment}}}"},
                            separators=(",", ":"), ensure_ascii=False)


def transaction_key_and_value(key: bytes | None, value: bytes | None) -> tuple[str, str]:
    """TransactionLog.formatRecordKeyAndValue (--transaction-log-decoder): a record of __transaction_state."""
    try:
        text = f"transaction_metadata::transactionalId={read_txn_record_key(key or b'')}"
        if value is None:
            return text, "<DELETE>"
        txn = read_txn_record_value(value)
        state = TransactionState.from_byte(txn.state_byte).kafka_name
    except (TxnLogFormatError, IllegalTxnStateError) as e:
        raise CliError(f"Failed to decode message using transaction log decoder: {e}") from None
    partitions = ",".join(f"{tp.topic}-{tp.partition}" for tp in sorted(txn.topic_partitions))
    return text, (f"producerId:{txn.producer_id},producerEpoch:{txn.producer_epoch},state={state},"
                  f"partitions=[{partitions}],txnLastUpdateTimestamp={txn.txn_last_update_timestamp},"
                  f"txnTimeoutMs={txn.txn_timeout_ms}")


Parser = Callable[[bytes | None, bytes | None], tuple[str | None, str | None]]


def string_key_and_value(key: bytes | None, value: bytes | None) -> tuple[str | None, str | None]:
    """DecoderMessageParser with StringDecoder for both."""
    return None if key is None else _text(key), None if value is None else _text(value)


def record_lines(batch: RecordBatch, print_contents: bool,
                 parser: Parser = string_key_and_value) -> list[tuple[int, str]]:
    """(offset, line) of each record of ``batch`` as DumpLogSegments.dumpLog's deep iteration prints it."""
    out = []
    kind = _timestamp_type(batch)
    for record, timestamp in zip(batch.records(), _record_timestamps(batch), strict=True):
        offset = batch.base_offset + record.offset_delta
        sequence = NO_SEQUENCE if batch.base_sequence < 0 else \
            increment_sequence(batch.base_sequence, record.offset_delta)
        line = (f"{RECORD_INDENT} offset: {offset} {kind}: {timestamp} "
                f"keysize: {-1 if record.key is None else len(record.key)} "
                f"valuesize: {-1 if record.value is None else len(record.value)} sequence: {sequence} "
                f"headerKeys: [{','.join(h.key for h in record.headers)}]")
        if batch.is_control:
            type_id = control_record_type(record.key)
            if type_id in CONTROL_NAMES:
                marker = end_txn_marker(record)
                assert marker is not None
                line += f" endTxnMarker: {CONTROL_NAMES[type_id]} coordinatorEpoch: {marker.coordinator_epoch}"
            else:
                raw_id = int.from_bytes((record.key or b"\0\0\0\0")[2:4], "big", signed=True)
                line += f" controlType: UNKNOWN({raw_id})"
        elif print_contents:
            key, payload = parser(record.key, record.value)
            if key is not None:
                line += f" key: {key}"
            if payload is not None:
                line += f" payload: {payload}"
        out.append((offset, line))
    return out


def dump_log(path: str, out: Out, errors: DumpErrors, deep: bool, print_contents: bool,
             parser: Parser = string_key_and_value) -> None:
    """DumpLogSegments.dumpLog."""
    out(f"Starting offset: {_base_offset(path)}")
    data = _read(path)
    valid_bytes = 0
    last_offset = -1
    for batch in _batches(data):
        out(batch_line(batch, valid_bytes))
        if deep:
            try:
                lines = record_lines(batch, print_contents, parser)
            except ProtocolError as e:
                raise CliError(f"Record batch at offset {batch.base_offset} of {path} cannot be read: {e}") from None
            for offset, line in lines:
                if last_offset != -1 and offset != last_offset + 1:
                    errors.non_consecutive.setdefault(os.path.abspath(path), []).append((last_offset, offset))
                last_offset = offset
                out(line)
        valid_bytes += len(batch.raw)
    trailing = len(data) - valid_bytes
    if trailing > 0:
        out(f"Found {trailing} invalid bytes at the end of {os.path.basename(path)}")


def _index_entries(index: OffsetIndex | TimeIndex, path: str) -> list[tuple[int, int]]:
    """AbstractIndex.entry(i) for every whole entry of the file, in the index's own entry format (read as they are:
    out-of-order keys are for the checks to report, not a reason to stop)."""
    entry = index._ENTRY  # noqa: SLF001 — the index's on-disk entry (Kafka's OffsetIndex/TimeIndex.entrySize)
    data = _read(path)
    return list(entry.iter_unpack(data[:len(data) - len(data) % entry.size]))


def _segment_of(path: str, suffix: str) -> str:
    return os.path.join(os.path.dirname(os.path.abspath(path)), os.path.basename(path).split(".")[0] + suffix)


def dump_index(path: str, out: Out, errors: DumpErrors, sanity_only: bool, verify_only: bool) -> None:
    """DumpLogSegments.dumpIndex."""
    base = _base_offset(path)
    size = len(_read(path))
    index = OffsetIndex(os.path.dirname(os.path.abspath(path)), base)
    if sanity_only:
        # OffsetIndex.sanityCheck
        if size % 8:
            raise CliError(f"Index file {os.path.abspath(path)} is corrupt, found {size} bytes which is neither "
                           "positive nor a multiple of 8.")
        entries = _index_entries(index, path)
        if entries and base + entries[-1][0] < base:
            raise CliError(f"Corrupt index found, index file ({os.path.abspath(path)}) has non-zero size but the last "
                           f"offset is {base + entries[-1][0]} which is less than the base offset {base}.")
        out(f"{path} passed sanity check.")
        return
    log = _read(_segment_of(path, LOG_FILE_SUFFIX))
    for i, (relative, position) in enumerate(_index_entries(index, path)):
        offset = base + relative
        if offset == base and i > 0:  # a preallocated file's zero entries: the end of the real ones
            return
        batches = _batches(log[position:])
        first_last = batches[0].last_offset if batches else -1
        if first_last != offset:
            errors.index_mismatches.setdefault(os.path.abspath(path), []).append((offset, first_last))
        if not verify_only:
            out(f"offset: {offset} position: {position}")


def dump_time_index(path: str, out: Out, errors: DumpErrors, sanity_only: bool, verify_only: bool) -> None:
    """DumpLogSegments.dumpTimeIndex."""
    base = _base_offset(path)
    size = len(_read(path))
    directory = os.path.dirname(os.path.abspath(path))
    time_index = TimeIndex(directory, base)
    if sanity_only:
        # TimeIndex.sanityCheck
        if size % 12:
            raise CliError(f"Time index file {os.path.abspath(path)} is corrupt, found {size} bytes which is neither "
                           "positive nor a multiple of 12.")
        entries = _index_entries(time_index, path)
        if entries and entries[-1][0] < entries[0][0]:
            raise CliError(f"Corrupt time index found, time index file ({os.path.abspath(path)}) has non-zero size "
                           f"but the last timestamp is {entries[-1][0]} which is less than the first timestamp "
                           f"{entries[0][0]}")
        if entries and base + entries[-1][1] < base:
            raise CliError(f"Corrupt time index found, time index file ({os.path.abspath(path)}) has non-zero size "
                           f"but the last offset is {base + entries[-1][1]} which is less than the first offset "
                           f"{base}")
        out(f"{path} passed sanity check.")
        return
    log = _read(_segment_of(path, LOG_FILE_SUFFIX))
    offsets = OffsetIndex(directory, base)
    offsets.load(in_memory=True)
    name = os.path.abspath(path)
    previous = NO_TIMESTAMP
    for i, (timestamp, relative) in enumerate(_index_entries(time_index, path)):
        offset = base + relative
        if offset == base and i > 0:
            return
        position = offsets.lookup(offset)[1]
        batch = next((b for b in _batches(log[position:]) if b.last_offset >= offset), None)
        if batch is None:
            errors.not_found.setdefault(name, []).append((offset, -1))
        elif batch.last_offset != offset:
            errors.not_found.setdefault(name, []).append((offset, batch.last_offset))
        else:
            max_timestamp = max(_record_timestamps(batch), default=NO_TIMESTAMP)
            if max_timestamp != timestamp:
                errors.time_mismatches.setdefault(name, []).append((timestamp, max_timestamp))
            if previous >= timestamp:
                errors.out_of_order.setdefault(name, []).append((timestamp, previous))
        if not verify_only:
            out(f"timestamp: {timestamp} offset: {offset}")
        previous = timestamp


def dump_txn_index(path: str, out: Out) -> None:
    """DumpLogSegments.dumpTxnIndex: TransactionIndex.allAbortedTxns."""
    data = _read(path)
    for txn in decode_entries(data[:len(data) - len(data) % ENTRY_SIZE]):
        out(f"version: {ABORTED_TXN_VERSION} producerId: {txn.producer_id} firstOffset: {txn.first_offset} "
            f"lastOffset: {txn.last_offset} lastStableOffset: {txn.last_stable_offset}")


def dump_producer_snapshot(path: str, out: Out, err: Out) -> None:
    """DumpLogSegments.dumpProducerIdSnapshot: ProducerStateManager.readSnapshot's entries."""
    try:
        entries = decode_snapshot(_read(path))
    except CorruptSnapshotError as e:
        err(str(e))
        return
    for e in entries:
        txn = "None" if e.current_txn_first_offset is None else f"Some({e.current_txn_first_offset})"
        line = (f"producerId: {e.producer_id} producerEpoch: {e.producer_epoch} coordinatorEpoch: "
                f"{e.coordinator_epoch} currentTxnFirstOffset: {txn} ")
        if e.batches:
            b = e.batches[0]
            line += (f"firstSequence: {b.first_seq} lastSequence: {b.last_seq} lastOffset: {b.last_offset} "
                     f"offsetDelta: {b.last_offset - b.first_offset} timestamp: {b.timestamp}")
        out(line)


def dump(files: list[str], out: Out, err: Out, *, print_contents: bool = False, deep: bool = False,
         verify_only: bool = False, sanity_only: bool = False, parser: Parser = string_key_and_value) -> None:
    """DumpLogSegments.main over ``files``."""
    errors = DumpErrors()
    for path in files:
        out(f"Dumping {path}")
        name = os.path.basename(path)
        suffix = name[name.rfind("."):] if "." in name else ""
        try:
            if suffix == LOG_FILE_SUFFIX:
                dump_log(path, out, errors, deep or print_contents, print_contents, parser)
            elif suffix == INDEX_FILE_SUFFIX:
                dump_index(path, out, errors, sanity_only, verify_only)
            elif suffix == TIME_INDEX_FILE_SUFFIX:
                dump_time_index(path, out, errors, sanity_only, verify_only)
            elif suffix == SNAPSHOT_FILE_SUFFIX:
                dump_producer_snapshot(path, out, err)
            elif suffix == TXN_INDEX_FILE_SUFFIX:
                dump_txn_index(path, out)
            else:
                err(f"Ignoring unknown file {path}")
        except (ProtocolError, CorruptIndexError) as e:
            raise CliError(f"{path}: {e}") from None
    for line in errors.lines():
        err(line)


def run(args: argparse.Namespace) -> int:
    for option, value in (("--value-decoder-class", args.value_decoder_class),
                          ("--key-decoder-class", args.key_decoder_class)):
        if value is not None and value != STRING_DECODER:
            raise CliError(f"{option} {value} is not taken (kactor loads no Java classes); use {STRING_DECODER} "
                           "or leave it out")
    parser: Parser = offsets_key_and_value if args.offsets_decoder else \
        transaction_key_and_value if args.transaction_log_decoder else string_key_and_value
    print_contents = args.print_data_log or args.offsets_decoder or args.transaction_log_decoder or \
        args.value_decoder_class is not None or args.key_decoder_class is not None
    dump(args.files.split(","), print, lambda line: print(line, file=sys.stderr), print_contents=print_contents,
         deep=args.deep_iteration, verify_only=args.verify_index_only, sanity_only=args.index_sanity_check,
         parser=parser)
    return 0
