"""org.apache.kafka.common.errors.KafkaStorageException as kactor's `KafkaStorageError`: a log dir is unusable.

Raised by the log (core/broker/log.py), its manager (core/broker/log_manager.py) and the checkpoint files
(core/broker/checkpoints.py) alike, so it lives apart from all three: none of them has to import another only for it.
"""

from __future__ import annotations


class KafkaStorageError(Exception):
    """org.apache.kafka.common.errors.KafkaStorageException: a log dir is unusable (maps to KAFKA_STORAGE_ERROR)."""

    def __init__(self, message: str, log_dir: str | None = None) -> None:
        super().__init__(message)
        self.log_dir = log_dir
