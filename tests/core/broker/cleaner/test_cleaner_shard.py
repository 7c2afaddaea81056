"""The swap in the PartitionActor that hosts the log: a LogCleaned input is applied in the shard's turn. Live (a
cleaner in the runtime's slot) the cleaner's ``.cleaned`` files are swapped in and the cleaner is told; in a replay
(no cleaner) the shard cleans again from the recorded plan and reaches the same segments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from actors.edge_slots import Edges
from actors.partition_actor import PartitionActor
from core.broker.cleaner.cleaner import clean_log
from core.broker.cleaner.manager import grab_filthiest_compacted_log, plan_cleaning
from core.broker.log_config import LogConfig
from messages.broker_lifecycle import ReplicaManagerInit
from messages.common import TopicPartition
from messages.log_cleaner import LogCleaned
from messages.partition import ShardInit, ShardRequest
from tests.core.broker.cleaner.test_cleaner_core import T0, fill, latest_per_key, read_all
from tests.support.actors import ActorTestbed, ZooKeeperModel
from tests.support.broker import lai_request, lai_state, um_request

SHARD = "partition-0"
TP = TopicPartition("compacted", 0)


class CleanerSlot:
    def __init__(self) -> None:
        self.registered: list[str] = []
        self.answers: list[tuple[TopicPartition, bool]] = []

    def register_shard(self, shard: str, log_manager: Any) -> None:
        self.registered.append(shard)

    def swapped(self, tp: Any, ok: bool) -> None:
        self.answers.append((tp, ok))


def _leader_shard(tmp_path: Path, slot: CleanerSlot | None) -> tuple[ActorTestbed, Any]:
    bed = ActorTestbed("broker-0", start_ms=T0, sinks=("net", "timer", "metrics", "replica-manager"))
    if slot is not None:
        bed.rt.edges = Edges(log_cleaner=slot)
    bed.rt.spawn(ZooKeeperModel, "zk")
    bed.rt.instances["zk"].zk.create_top_level_paths()
    bed.rt.spawn(PartitionActor, SHARD)
    bed.deliver(SHARD, ShardInit(0, 1, ReplicaManagerInit(0, (str(tmp_path / "logs"),))), "replica-manager",
                at_ms=T0)
    bed.deliver(SHARD, ShardRequest(1, um_request()), "replica-manager", at_ms=T0)
    bed.deliver(SHARD, ShardRequest(2, lai_request([lai_state(TP, 0, 0, [0], [0], is_new=True)])),
                "replica-manager", at_ms=T0)
    log = bed.rt.instances[SHARD].rm.online_partition(TP).log
    log.config = attrs.evolve(LogConfig(), cleanup_policy="compact", segment_bytes=1024)
    return bed, log


def _cleaned(log: Any) -> LogCleaned:
    chosen = grab_filthiest_compacted_log({TP: log}, {}, (), int(T0)).chosen
    plan = plan_cleaning(chosen, 1 << 20, 0.9)
    result = clean_log(log.segments, plan, log.config.index_interval_bytes)
    return LogCleaned(plan, result.groups, result.end_offset)


def test_live_the_shard_swaps_the_cleaners_files_and_answers_it(tmp_path: Path) -> None:
    slot = CleanerSlot()
    bed, log = _leader_shard(tmp_path, slot)
    try:
        assert slot.registered == [SHARD]
        expected = fill(log, 40)
        size = log.size
        bed.deliver(SHARD, _cleaned(log), "edge:log-cleaner", at_ms=T0 + 1)
        assert slot.answers == [(TP, True)]
        assert latest_per_key(log) == expected and log.size < size / 3
    finally:
        bed.shutdown()


def test_in_a_replay_the_shard_cleans_again_from_the_plan(tmp_path: Path) -> None:
    live_bed, live = _leader_shard(tmp_path / "live", CleanerSlot())
    replay_bed, replayed = _leader_shard(tmp_path / "replay", None)
    try:
        for log in (live, replayed):
            fill(log, 40)
        msg = _cleaned(live)
        live_bed.deliver(SHARD, msg, "edge:log-cleaner", at_ms=T0 + 1)
        replay_bed.deliver(SHARD, msg, "edge:log-cleaner", at_ms=T0 + 1)
        assert read_all(replayed) == read_all(live)
        assert [(s.base_offset, s.size) for s in replayed.segments] == [(s.base_offset, s.size)
                                                                         for s in live.segments]
    finally:
        live_bed.shutdown()
        replay_bed.shutdown()
