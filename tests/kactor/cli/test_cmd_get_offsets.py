"""``kactor get-offsets`` as 2.6.3's GetOffsetShell: ``topic:partition:offset`` per partition in order, -1 the log
end, -2 the log start, a timestamp offsetsForTimes' offset (empty when none); its errors for a missing topic,
missing partitions, a leaderless partition. A faked consumer answers."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from kactor.cli import CliError
from kactor.cli.cmd_get_offsets import get_offsets, requested_partitions


class FakeConsumer:
    def __init__(self, leaders: dict[int, int], marks: dict[int, tuple[int, int]],
                 by_time: dict[int, int]) -> None:
        self.leaders, self.marks, self.by_time = leaders, marks, by_time
        self.asked: list[int] = []

    def list_topics(self, topic: str | None = None, timeout: float = 0) -> Any:
        partitions = {p: SimpleNamespace(id=p, leader=leader) for p, leader in self.leaders.items()}
        return SimpleNamespace(topics={"t": SimpleNamespace(error=None, partitions=partitions)})

    def get_watermark_offsets(self, tp: Any, timeout: float, cached: bool) -> tuple[int, int]:
        return self.marks[tp.partition]

    def offsets_for_times(self, tps: list[Any], timeout: float) -> list[Any]:
        self.asked = [tp.offset for tp in tps]  # the timestamps asked for
        return [SimpleNamespace(partition=tp.partition, offset=self.by_time.get(tp.partition, -1)) for tp in tps]


def _run(consumer: FakeConsumer, timestamp: int, wanted: set[int] = frozenset(), topic: str = "t"
         ) -> tuple[list[str], list[str]]:
    err: list[str] = []
    return get_offsets(consumer, "localhost:9092", topic, set(wanted), timestamp, err.append, 1.0), err


def test_latest_earliest_and_by_time() -> None:
    c = FakeConsumer({1: 0, 0: 1, 2: 0}, {0: (3, 10), 1: (0, 7), 2: (5, 5)}, {0: 4})
    assert _run(c, -1) == (["t:0:10", "t:1:7", "t:2:5"], [])
    assert _run(c, -2) == (["t:0:3", "t:1:0", "t:2:5"], [])
    assert _run(c, 1_600_000_000_000) == (["t:0:4", "t:1:", "t:2:"], [])
    assert c.asked == [1_600_000_000_000] * 3


def test_requested_partitions_missing_ones_and_a_leaderless_one() -> None:
    c = FakeConsumer({0: 1, 1: -1}, {0: (0, 2)}, {})
    assert _run(c, -1, {0, 1, 5}) == (["t:0:2"], ["Error: partition 5 does not exist",
                                                 "Error: partition 1 does not have a leader. Skip getting offsets"])
    with pytest.raises(CliError, match="^Topic t does not have any of the requested partitions 7,8$"):
        _run(c, -1, {8, 7})
    with pytest.raises(CliError, match="^Topic nope does not exist$"):
        _run(c, -1, topic="nope")


def test_partitions_option_as_get_offset_shell_reads_it() -> None:
    assert requested_partitions("") == set()
    assert requested_partitions("0,2") == {0, 2}
    with pytest.raises(CliError, match="expects a comma separated list of numeric partition ids, but received: 0,x"):
        requested_partitions("0,x")
