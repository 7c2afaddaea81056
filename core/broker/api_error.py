"""The error a broker operation answers with (Kafka's ``ApiException`` subclasses), carrying Kafka's error code.

Its own module so the log (below the partition in the layers) can raise it too; core/broker/partition.py re-exports
it."""

from __future__ import annotations

from messages.common import Errors


class ApiError(Exception):
    """An error a partition or log operation answers with (Kafka's ApiException subclasses). ``record_errors``:
    (index of the record in its batch, message) of the records LogValidator refused (RecordValidationException)."""

    def __init__(self, error: Errors, message: str = "", record_errors: tuple[tuple[int, str], ...] = ()) -> None:
        super().__init__(message or error.name)
        self.error = error
        self.record_errors = record_errors
