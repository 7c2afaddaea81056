"""Text records as Kafka v2 record batches, for kactor's own tools (``kactor produce --zookeeper``, the chaos
client) and tests: a producer's batch of values, and the (offset, leader epoch, value) of every record in the batches
a fetch returns. The codec itself is protocol/records.py."""

from __future__ import annotations

import time
from collections.abc import Sequence

from protocol.records import NO_PARTITION_LEADER_EPOCH, Record, build_batch, iter_batches


def values_batch(values: Sequence[str | bytes], timestamp_ms: int | None = None, base_offset: int = 0,
                 leader_epoch: int = NO_PARTITION_LEADER_EPOCH) -> bytes:
    """One uncompressed batch of records without keys holding ``values`` (text as UTF-8), as a producer sends it
    (``base_offset`` / ``leader_epoch``: as a leader's log holds it): every record stamped ``timestamp_ms``, by
    default now, as a producer's CreateTime (a batch stamped 0 is older than any retention.ms and would be deleted
    by the first retention check), no producer id."""
    stamp = int(time.time() * 1000) if timestamp_ms is None else timestamp_ms
    return build_batch([Record(i, 0, None, v.encode() if isinstance(v, str) else v) for i, v in enumerate(values)],
                       first_timestamp=stamp, base_offset=base_offset, partition_leader_epoch=leader_epoch)


def read_records(data: bytes) -> list[tuple[int, int, str]]:
    """(offset, partitionLeaderEpoch, value as text) of every record of every batch in ``data``."""
    out: list[tuple[int, int, str]] = []
    for batch in iter_batches(data):
        for r in batch.records():
            value = "" if r.value is None else r.value.decode("utf-8", "replace")
            out.append((batch.base_offset + r.offset_delta, batch.partition_leader_epoch, value))
    return out


def read_values(data: bytes) -> tuple[str, ...]:
    """The values of every record in ``data``, as text, in offset order."""
    return tuple(v for _, _, v in read_records(data))
