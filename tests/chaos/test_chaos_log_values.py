"""kactor/chaos/cluster_state.log_records: a replica's record values by offset, read from its segment files as record
batches (what the data checks compare with the acknowledged records), with each batch's producer id and epoch."""

from __future__ import annotations

from pathlib import Path

from core.broker.log import Log
from kactor.chaos.cluster_state import log_records
from messages.common import TopicPartition
from protocol.records import Record, build_batch


def test_values_by_offset_across_batches_and_a_reopen(tmp_path: Path) -> None:
    tp = TopicPartition("t", 0)
    log = Log(str(tmp_path), tp)
    for epoch, values in ((0, [b"a", b"b"]), (0, [b"c"]), (3, [b"d", b"e", b"f"])):
        records = [Record(i, 0, None, v) for i, v in enumerate(values)]
        log.append_as_leader(build_batch(records), epoch, 1_700_000_000_000)
    assert log_records(log) == tuple((v, -1, -1) for v in "abcdef")  # no producer id: not idempotent
    assert log_records(Log(str(tmp_path), tp)) == tuple((v, -1, -1) for v in "abcdef")
    assert log_records(Log(str(tmp_path / "empty"), tp)) == ()
