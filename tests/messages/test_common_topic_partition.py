"""messages/common.py: the wire decoders' interned TopicPartitions are TopicPartitions like any other (equal, the
same hash, the same order), one object per value while remembered."""

from __future__ import annotations

import pytest

from messages import common
from messages.common import TopicPartition, wire_topic_partition


def test_an_interned_topic_partition_is_the_value_built_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "_INTERNED_MAX", 3)
    monkeypatch.setattr(common, "_INTERNED", {})
    values = [("t", 0), ("t", 1), ("u-2", 0), ("t", 0), ("", 7), ("t", 1)]
    for topic, partition in values * 2:
        tp = wire_topic_partition(topic, partition)
        plain = TopicPartition(topic, partition)
        assert type(tp) is TopicPartition
        assert tp == plain and hash(tp) == hash(plain) and str(tp) == str(plain)
        assert not tp < plain and not plain < tp
        assert {tp: 1}[plain] == 1 and {plain: 1}[tp] == 1
        assert len(common._INTERNED) <= 3
    # remembered: the same object again
    assert wire_topic_partition("v", 3) is wire_topic_partition("v", 3)

