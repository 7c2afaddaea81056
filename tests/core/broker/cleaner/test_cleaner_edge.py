"""edges/log_cleaner.py, Kafka's CleanerThread: one pass chooses the filthiest compacted log of the registered shards,
cleans it on the calling thread, hands the swap to the shard (here a thread standing in for the PartitionActor) and
moves the log's cleaner-offset-checkpoint entry; a log with nothing dirty enough is left alone; the throttler holds
the cleaner's I/O to its rate."""

from __future__ import annotations

import threading
from typing import Any

from core.broker.cleaner.config import CleanerConfig
from core.broker.cleaner.manager import read_cleaner_checkpoint
from core.broker.cleaner.swap import apply_cleaning
from core.broker.log_config import LogConfig
from core.broker.log_manager import LogManager
from edges.log_cleaner import LogCleanerEdge, Throttler
from messages.common import TopicPartition
from messages.log_cleaner import LogCleaned
from tests.core.broker.cleaner.test_cleaner_core import T0, fill, latest_per_key

TP = TopicPartition("compacted", 0)
PLAIN = TopicPartition("plain", 0)


class ShardStandIn:
    """The runtime's inject, as the PartitionActor would serve a LogCleaned: swap on another thread, answer."""

    def __init__(self, lm: LogManager) -> None:
        self.lm = lm
        self.edge: LogCleanerEdge | None = None
        self.injected: list[tuple[str, Any, str]] = []

    def inject(self, to: str, body: Any, sender: str, cause: int | None = None) -> None:
        self.injected.append((to, body, sender))
        assert isinstance(body, LogCleaned)

        def serve() -> None:
            ok = apply_cleaning(self.lm.get_log(body.plan.topic_partition), body, clean_here=False)
            assert self.edge is not None
            self.edge.swapped(body.plan.topic_partition, ok)

        threading.Thread(target=serve).start()


def test_one_pass_cleans_the_filthiest_log_through_its_shard_and_checkpoints_it(tmp_path):
    lm = LogManager([str(tmp_path)])
    compacted = lm.get_or_create_log(TP, is_new=True)
    compacted.config = LogConfig(cleanup_policy="compact", segment_bytes=1024)
    plain = lm.get_or_create_log(PLAIN, is_new=True)
    plain.config = LogConfig(segment_bytes=1024)
    expected = fill(compacted, 50)
    fill(plain, 50)
    plain_before = [(s.base_offset, s.size) for s in plain.segments]
    shard = ShardStandIn(lm)
    edge = LogCleanerEdge(shard, CleanerConfig(dedupe_buffer_size=1 << 20), (str(tmp_path),),
                          clock=lambda: T0 / 1000)
    shard.edge = edge
    edge.register_shard("partition-3", lm)
    size_before = compacted.size
    assert edge.clean_filthiest_log(0)
    assert [(to, sender) for to, _, sender in shard.injected] == [("partition-3", "edge:log-cleaner")]
    assert latest_per_key(compacted) == expected and compacted.size < size_before / 3
    assert read_cleaner_checkpoint(str(tmp_path)) == {TP: compacted.segments[-1].base_offset}
    assert [(s.base_offset, s.size) for s in plain.segments] == plain_before  # delete policy: never cleaned
    gauges = edge.gauges()
    assert gauges["LogCleanerManager"]["max-dirty-percent"] == 100
    assert 0 < gauges["LogCleaner"]["cleaner-recopy-percent"] < 34
    # all clean now: the next pass finds nothing dirty enough (ratio 0 < min.cleanable.dirty.ratio 0.5)
    assert not edge.clean_filthiest_log(0)
    assert len(shard.injected) == 1


def test_the_throttler_sleeps_to_keep_the_rate():
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    throttle = Throttler(1000.0, clock=lambda: now[0], sleep=sleep)
    throttle(500)
    now[0] = 0.5
    throttle(1500)  # 2000 bytes in 0.5 s at 1000/s: 1.5 s more
    assert slept == [1.5]
    now[0] += 1.0
    throttle(100)  # 100 bytes in 1 s: under the rate
    assert slept == [1.5]


def test_the_cleaners_gauges_are_served_under_kafkas_names(tmp_path):
    import urllib.request

    from edges.metrics_http import MetricsEdge

    lm = LogManager([str(tmp_path)])
    compacted = lm.get_or_create_log(TP, is_new=True)
    compacted.config = LogConfig(cleanup_policy="compact", segment_bytes=1024)
    fill(compacted, 50)
    shard = ShardStandIn(lm)
    edge = LogCleanerEdge(shard, CleanerConfig(dedupe_buffer_size=1 << 20), (str(tmp_path),),
                          clock=lambda: T0 / 1000)
    shard.edge = edge
    edge.register_shard("partition-0", lm)
    assert edge.clean_filthiest_log(0)
    metrics = MetricsEdge(0)
    try:
        metrics.add_gauges("kafka_log", edge.gauges)
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics.port}/metrics", timeout=10) as r:
            lines = {line.split(" ")[0]: float(line.split(" ")[1]) for line in r.read().decode().splitlines()
                     if line.startswith("kafka_log_")}
    finally:
        metrics.close()
    gauges = edge.gauges()
    assert lines["kafka_log_LogCleaner_cleaner_recopy_percent"] == gauges["LogCleaner"]["cleaner-recopy-percent"] > 0
    assert lines["kafka_log_LogCleanerManager_max_dirty_percent"] == 100
    assert lines["kafka_log_LogCleanerManager_uncleanable_partitions_count"] == 0
    assert {"kafka_log_LogCleaner_max_buffer_utilization_percent", "kafka_log_LogCleaner_max_clean_time_secs"} <= set(
        lines)
