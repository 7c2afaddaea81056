"""core.broker.replica_manager.with_fetch_offsets builds the follower's answer directly instead of attrs.evolve
(issue #43): equal to evolve for every field, and this test fails when FetchPartitionData gains a field, so the
direct construction cannot silently drop it; offsets that did not move answer the data itself."""

from __future__ import annotations

import attrs

from core.broker.replica_manager import with_fetch_offsets
from messages.common import Errors, TopicPartition
from messages.replication import AbortedTransaction, FetchPartitionData


def test_with_fetch_offsets_is_evolve():
    assert [f.name for f in attrs.fields(FetchPartitionData)] == [
        "tp", "error", "high_watermark", "last_stable_offset", "log_start_offset", "records", "log_end_offset",
        "preferred_read_replica", "aborted_transactions"]
    cases = [
        FetchPartitionData(TopicPartition("t", 3), Errors.NONE, 5, 4, 1, b"batches", 9, 2,
                           (AbortedTransaction(7, 3),)),
        FetchPartitionData(TopicPartition("u", 0), Errors.NOT_LEADER_OR_FOLLOWER),
    ]
    for data in cases:
        for hw, lso in [(6, 6), (0, -1), (12, 10), (data.high_watermark, data.last_stable_offset),
                        (data.high_watermark, data.last_stable_offset + 1), (data.high_watermark + 1,
                                                                             data.last_stable_offset)]:
            got = with_fetch_offsets(data, hw, lso)
            assert got == attrs.evolve(data, high_watermark=hw, last_stable_offset=lso)
            assert type(got) is FetchPartitionData


def test_unmoved_offsets_keep_the_data() -> None:
    data = FetchPartitionData(TopicPartition("t", 3), Errors.NONE, 5, 4, 1, b"batches", 9)
    assert with_fetch_offsets(data, 5, 4) is data
