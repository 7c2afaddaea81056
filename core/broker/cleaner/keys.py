"""LogValidator.validateKey (Kafka 2.6.3): a compacted log refuses a record without a key, since the cleaner could
never keep or remove it by key. The whole produce of the partition fails with INVALID_RECORD, "One or more records
have been rejected", and one record error per keyless record: its index in the batch and "Compacted topic cannot
accept message without key in topic partition <tp>." (RecordValidationException).

Runs before the log's own validation; a batch that fails that (size, CRC, a record that does not parse) is left to
it, so such a batch gets the error Kafka gives it (MESSAGE_TOO_LARGE, CORRUPT_MESSAGE...), as Kafka validates those
first."""

from __future__ import annotations

from core.broker.api_error import ApiError
from core.broker.log_config import LogConfig
from core.broker.log_segment import crc_valid
from messages.common import Errors, TopicPartition
from protocol.errors import ProtocolError
from protocol.records import iter_batches, read_records


def validate_keys(records: bytes, config: LogConfig, tp: TopicPartition) -> None:
    """Raise INVALID_RECORD with record errors if a record of a client batch for a compacted log has no key."""
    if not config.compact:
        return
    errors: list[tuple[int, str]] = []
    try:
        for batch in iter_batches(records):
            if batch.is_control or len(batch.raw) > config.max_message_bytes or not crc_valid(batch):
                return
            for index, record in enumerate(read_records(batch)):
                if record.key is None:
                    errors.append((index, f"Compacted topic cannot accept message without key in topic partition "
                                          f"{tp.topic}-{tp.partition}."))
    except ProtocolError:
        return
    if errors:
        raise ApiError(Errors.INVALID_RECORD, "One or more records have been rejected", tuple(errors))
