"""kafka.log.CleanerConfig: the broker's log cleaner settings (LogCleaner.cleanerConfig), Kafka 2.6's defaults."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs


@attrs.frozen
class CleanerConfig:
    num_threads: int = 1  # log.cleaner.threads
    dedupe_buffer_size: int = 128 * 1024 * 1024  # log.cleaner.dedupe.buffer.size (over all threads)
    dedupe_buffer_load_factor: float = 0.9  # log.cleaner.io.buffer.load.factor
    io_buffer_size: int = 512 * 1024  # log.cleaner.io.buffer.size (over all threads, read + write)
    max_message_size: int = 1048588  # message.max.bytes
    max_io_bytes_per_second: float = 1.7976931348623157e308  # log.cleaner.io.max.bytes.per.second
    backoff_ms: int = 15000  # log.cleaner.backoff.ms
    enable_cleaner: bool = True  # log.cleaner.enable

    @property
    def map_memory(self) -> int:
        """One thread's SkimpyOffsetMap: the dedupe buffer shared out, at most 2 GiB (Kafka's Int.MaxValue)."""
        return min(self.dedupe_buffer_size // max(self.num_threads, 1), 2**31 - 1)

    @property
    def read_chunk_bytes(self) -> int:
        """One thread's read buffer: the I/O buffer over the threads, half of it (the other half writes)."""
        return max(self.io_buffer_size // max(self.num_threads, 1) // 2, 1)

    @staticmethod
    def from_broker_config(values: Mapping[str, Any]) -> CleanerConfig:
        """LogCleaner.cleanerConfig(KafkaConfig)."""
        return CleanerConfig(int(values["log.cleaner.threads"]), int(values["log.cleaner.dedupe.buffer.size"]),
                             float(values["log.cleaner.io.buffer.load.factor"]),
                             int(values["log.cleaner.io.buffer.size"]), int(values["message.max.bytes"]),
                             float(values["log.cleaner.io.max.bytes.per.second"]),
                             int(values["log.cleaner.backoff.ms"]), bool(values["log.cleaner.enable"]))
