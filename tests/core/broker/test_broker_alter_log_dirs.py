"""Moving a replica between a broker's log dirs (Kafka 2.6.3's ReplicaManager.alterReplicaLogDirs,
ReplicaAlterLogDirsThread, Partition.maybeReplaceCurrentWithFutureReplica, LogManager.replaceCurrentWithFutureLog):
the errors per partition, the ``-future`` log, its copy while appends go on, the swap and what it carries over."""

from __future__ import annotations

import os

from core.api import alter_replica_log_dirs as api
from core.api.broker_requests import merge_responses, split_request
from core.api.describe_log_dirs import describe_log_dirs
from core.broker import alter_log_dirs
from core.broker.kafka_storage_error import KafkaStorageError
from core.broker.log_manager import LogManager
from core.broker.replica_manager import ReplicaManager
from messages.common import Errors, TopicPartition
from messages.replication import (
    AlterReplicaLogDir,
    AlterReplicaLogDirResult,
    AlterReplicaLogDirsRequest,
    AlterReplicaLogDirsResponse,
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DescribeLogDirsRequest,
    LogDirPartition,
)
from protocol.codec import decode_request, decode_response, encode_request, encode_response
from tests.support.broker import (
    drive,
    lai_request,
    lai_state,
    log_records,
    make_rm,
    produce_request,
    stop_request,
    um_request,
    um_state,
)

TP = TopicPartition("foo", 0)
OTHER = TopicPartition("foo", 1)
T0 = 1_000_000.0


def alter(rm: ReplicaManager, *moves: tuple[TopicPartition, str]) -> dict[TopicPartition, Errors]:
    request = AlterReplicaLogDirsRequest(tuple(AlterReplicaLogDir(tp, d) for tp, d in moves))
    return {r.tp: r.error for r in drive(rm.handle_alter_replica_log_dirs(request)).results}


def leading(tmp_path, n: int = 3, **config) -> ReplicaManager:
    rm = make_rm(tmp_path, n_dirs=2, **config)
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 3, (0,), (0,), is_new=True)]), T0))
    for i in range(n):
        drive(rm.handle_produce(produce_request(TP, f"v{i}"), T0, "producer"))
    return rm


def dir_names(path: str) -> list[str]:
    return sorted(n for n in os.listdir(path) if os.path.isdir(os.path.join(path, n)))


def test_errors_per_partition(tmp_path) -> None:
    rm = leading(tmp_path)
    d0, d1 = rm.log_manager.log_dirs
    assert rm.online_partition(TP).log.parent_dir == d0
    drive(rm.handle_update_metadata(um_request([um_state(OTHER, 1, (1,), (1,))]), T0))
    assert alter(rm, (TP, str(tmp_path / "elsewhere")), (TopicPartition("nope", 0), d1), (OTHER, d1),
                 (TopicPartition("x" * 249, 0), d1)) == {
        TP: Errors.LOG_DIR_NOT_FOUND,  # not one of log.dirs
        TopicPartition("nope", 0): Errors.UNKNOWN_TOPIC_OR_PARTITION,
        OTHER: Errors.REPLICA_NOT_AVAILABLE,  # known, not hosted here
        TopicPartition("x" * 249, 0): Errors.INVALID_TOPIC_EXCEPTION,  # its -future dir name would exceed 255 bytes
    }
    # the replica already lives there: nothing to do
    assert alter(rm, (TP, d0)) == {TP: Errors.NONE}
    assert rm.log_manager.future_logs == {}
    rm.log_manager.mark_dir_offline(d1)
    assert alter(rm, (TP, d1)) == {TP: Errors.KAFKA_STORAGE_ERROR}


def test_an_offline_partition_is_a_storage_error_and_records_no_preference(tmp_path) -> None:
    rm = leading(tmp_path)
    d0, d1 = rm.log_manager.log_dirs
    drive(rm.handle_log_dir_failure(d0, send_zk_notification=False))
    assert alter(rm, (TP, d1)) == {TP: Errors.KAFKA_STORAGE_ERROR}
    assert rm.log_manager.preferred_log_dirs == {}


def test_a_partition_not_hosted_yet_is_created_in_the_dir_asked_for(tmp_path) -> None:
    rm = make_rm(tmp_path, n_dirs=2)
    d0, d1 = rm.log_manager.log_dirs
    drive(rm.handle_update_metadata(um_request([um_state(TP, 0, (0,), (0,))]), T0))
    assert alter(rm, (TP, d1)) == {TP: Errors.REPLICA_NOT_AVAILABLE}
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 0, (0,), (0,), is_new=True)]), T0))
    # without the preference the first log goes to the emptiest dir, d0
    assert rm.online_partition(TP).log.parent_dir == d1
    assert rm.log_manager.preferred_log_dirs == {}


def test_the_future_log_catches_up_while_appends_go_on_and_replaces_the_current_one(tmp_path) -> None:
    # a small fetch size: the copy takes several rounds, with appends between them
    rm = leading(tmp_path, n=20, replica_fetch_max_bytes=200)
    d0, d1 = rm.log_manager.log_dirs
    drive(rm.handle_delete_records(DeleteRecordsRequest(0, (DeleteRecordsPartition(TP, 2),)), T0, "client"))
    assert alter(rm, (TP, d1)) == {TP: Errors.NONE}
    (future_name,) = dir_names(d1)
    assert future_name.startswith("foo-0.") and future_name.endswith("-future")
    assert alter(rm, (TP, d1)) == {TP: Errors.NONE}  # asked again: the same move
    assert dir_names(d1) == [future_name]
    current = rm.online_partition(TP).log
    rounds = 0
    while rm.log_manager.future_logs:
        described = drive(describe_log_dirs(rm, DescribeLogDirsRequest(None)))
        (future_entry,) = [p for t in described.results[1].topics for p in t.partitions]
        future = rm.log_manager.get_log(TP, is_future=True)
        assert future_entry == LogDirPartition(0, future.size, current.log_end_offset - future.log_end_offset, True)
        drive(rm.handle_produce(produce_request(TP, f"w{rounds}"), T0, "producer"))
        assert rm.next_task_due_ms() == 0  # the copy goes on at once
        drive(rm.run_scheduled_tasks(T0))
        rounds += 1
        assert rounds < 100
    assert rounds > 2
    log = rm.online_partition(TP).log
    assert log is rm.log_manager.get_log(TP) and log.parent_dir == d1
    assert dir_names(d1) == ["foo-0"] and dir_names(d0) == []
    # every record, at its offset, with its epoch
    produced = [f"v{i}" for i in range(20)] + [f"w{i}" for i in range(rounds)]
    assert log_records(log, 2) == [(offset, 3, v) for offset, v in enumerate(produced) if offset >= 2]
    assert (log.log_start_offset, log.high_watermark, log.log_end_offset) == (2, 20 + rounds, 20 + rounds)
    assert log.leader_epoch_entries == ((3, 2),)  # as the current log had it after its start moved to 2
    assert rm.next_task_due_ms() > T0
    # appends go to the moved log; a restart finds it in its new dir
    drive(rm.handle_produce(produce_request(TP, "after"), T0, "producer"))
    drive(rm.shutdown())
    lm = LogManager([d0, d1])
    reopened = lm.get_log(TP)
    assert reopened.parent_dir == d1 and log_records(reopened, 2)[-1][2] == "after"
    assert reopened.log_start_offset == 2 and lm.future_logs == {}


def test_an_epoch_begun_without_records_is_carried_over(tmp_path) -> None:
    rm = leading(tmp_path)
    d0, d1 = rm.log_manager.log_dirs
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 5, (0,), (0,))]), T0))
    assert rm.online_partition(TP).log.leader_epoch_entries == ((3, 0), (5, 3))
    alter(rm, (TP, d1))
    drive(rm.run_scheduled_tasks(T0))
    log = rm.online_partition(TP).log
    assert log.parent_dir == d1 and log.leader_epoch_entries == ((3, 0), (5, 3))


def test_moving_back_abandons_the_future_log(tmp_path) -> None:
    rm = leading(tmp_path)
    d0, d1 = rm.log_manager.log_dirs
    alter(rm, (TP, d1))
    assert len(dir_names(d1)) == 1
    assert alter(rm, (TP, d0)) == {TP: Errors.NONE}
    assert rm.log_manager.future_logs == {} and dir_names(d1) == []
    assert rm.online_partition(TP).log.parent_dir == d0


def test_a_move_under_way_resumes_after_a_restart(tmp_path) -> None:
    rm = leading(tmp_path, n=5)
    d0, d1 = rm.log_manager.log_dirs
    alter(rm, (TP, d1))
    drive(rm.shutdown())  # before any copy round
    rm = make_rm(tmp_path, n_dirs=2)
    assert set(rm.log_manager.future_logs) == {TP}
    assert rm.next_task_due_ms() > 0  # not hosted yet: nothing to copy
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 4, (0,), (0,))]), T0))
    assert rm.next_task_due_ms() == 0
    drive(rm.run_scheduled_tasks(T0))
    log = rm.online_partition(TP).log
    assert log.parent_dir == d1 and [v for _, _, v in log_records(log)] == [f"v{i}" for i in range(5)]
    assert dir_names(d0) == [] and dir_names(d1) == ["foo-0"]


def test_the_future_log_follows_a_truncation_of_the_current_one(tmp_path) -> None:
    rm = leading(tmp_path, n=6)
    d0, d1 = rm.log_manager.log_dirs
    alter(rm, (TP, d1))
    current = rm.online_partition(TP).log
    future = rm.log_manager.get_log(TP, is_future=True)
    alter_log_dirs.catch_up(current, future, 1 << 20, 0)
    assert future.log_end_offset == 6
    current.truncate_to(4)  # a follower's truncation: the future log must not keep offsets 4 and 5
    alter_log_dirs.catch_up(current, future, 1 << 20, 0)
    assert future.log_end_offset == 4 and log_records(future) == log_records(current)


def test_a_stop_replica_deleting_the_partition_deletes_its_future_log(tmp_path) -> None:
    rm = leading(tmp_path)
    d0, d1 = rm.log_manager.log_dirs
    alter(rm, (TP, d1))
    drive(rm.handle_stop_replica(stop_request([(TP, -2, True)]), T0))
    assert rm.log_manager.future_logs == {} and dir_names(d1) == [] and dir_names(d0) == []


def test_wire_round_trip_and_shards() -> None:
    request = AlterReplicaLogDirsRequest((AlterReplicaLogDir(TP, "/d1"), AlterReplicaLogDir(OTHER, "/d2"),
                                          AlterReplicaLogDir(TopicPartition("bar", 0), "/d1")))
    for version in (0, 1):
        body = api.request_to_wire(request)
        decoded = decode_request(34, version, encode_request(34, version, body))[0]
        assert sorted(map(str, api.request_from_wire(version, decoded).dirs)) == sorted(map(str, request.dirs))
        response = AlterReplicaLogDirsResponse((AlterReplicaLogDirResult(TP, Errors.NONE),
                                                AlterReplicaLogDirResult(OTHER, Errors.LOG_DIR_NOT_FOUND)))
        wire = decode_response(34, version, encode_response(34, version, api.response_to_wire(version, response)))[0]
        assert api.response_from_wire(version, wire) == response
        failed = api.error_response(version, decoded, int(Errors.UNKNOWN_SERVER_ERROR))
        assert sorted((t["topic_name"], p["partition_index"], p["error_code"])
                      for t in failed["results"] for p in t["partitions"]) == [
            ("bar", 0, -1), ("foo", 0, -1), ("foo", 1, -1)]
    parts = split_request(request, 4)
    assert sorted(str(d) for part in parts.values() for d in part.dirs) == sorted(map(str, request.dirs))
    answers = {i: AlterReplicaLogDirsResponse(tuple(AlterReplicaLogDirResult(d.tp, Errors.NONE) for d in part.dirs))
               for i, part in parts.items()}
    assert [r.tp for r in merge_responses(request, answers).results] == [TP, OTHER, TopicPartition("bar", 0)]



def test_a_storage_error_in_the_future_dir_takes_that_dir_offline_and_the_replica_stays(tmp_path) -> None:
    rm = leading(tmp_path)
    d0, d1 = rm.log_manager.log_dirs
    alter(rm, (TP, d1))
    future = rm.log_manager.get_log(TP, is_future=True)

    def broken(records, now_ms=None):
        raise KafkaStorageError(f"error appending to {future.dir}", d1)
    future.append_as_follower = broken  # type: ignore[method-assign]
    drive(rm.run_scheduled_tasks(T0))
    assert rm.log_manager.offline_dirs == {d1} and rm.log_manager.future_logs == {}
    log = rm.online_partition(TP).log
    assert log.parent_dir == d0 and [v for _, _, v in log_records(log)] == ["v0", "v1", "v2"]


def test_a_deferred_storage_error_backs_off_instead_of_spinning(tmp_path) -> None:
    rm = leading(tmp_path)
    d0, d1 = rm.log_manager.log_dirs
    alter(rm, (TP, d1))
    rm.log_manager.defer_io_errors = True  # as a broker's shards: the log-dir probe decides
    future = rm.log_manager.get_log(TP, is_future=True)
    calls = []

    def broken(records, now_ms=None):
        calls.append(now_ms)
        raise KafkaStorageError(f"error appending to {future.dir}", d1)
    future.append_as_follower = broken  # type: ignore[method-assign]
    drive(rm.run_scheduled_tasks(T0))
    assert rm.next_task_due_ms() == T0 + alter_log_dirs.STORAGE_ERROR_BACKOFF_MS
    drive(rm.run_scheduled_tasks(T0 + 10))
    assert len(calls) == 1  # not again before the back-off is over
    drive(rm.run_scheduled_tasks(T0 + alter_log_dirs.STORAGE_ERROR_BACKOFF_MS))
    assert len(calls) == 2 and rm.log_manager.deferred_io_failures == {d1}


def test_a_sharded_restart_loads_each_future_log_in_its_shard(tmp_path) -> None:
    dirs = [str(tmp_path / "d0"), str(tmp_path / "d1")]
    tps = [TopicPartition("t", p) for p in range(6)]
    owners = [lambda tp, i=i: tp.partition % 2 == i for i in range(2)]
    shards = [LogManager(dirs, owns) for owns in owners]
    for tp in tps:
        shard = shards[tp.partition % 2]
        shard.get_or_create_log(tp, is_new=True)
        other = next(d for d in shard.log_dirs if d != shard.get_log(tp).parent_dir)
        shard.create_future_log(tp, other)
    for shard in shards:
        shard.close()  # clean-shutdown markers name the future logs too
    again = [LogManager(dirs, owns) for owns in owners]
    assert [sorted(s.future_logs) for s in again] == [[tp for tp in tps if tp.partition % 2 == i] for i in range(2)]
    assert all(s.get_log(tp) is not None for s in again for tp in s.future_logs)


def test_the_alter_log_dirs_quota_holds_a_move_back_while_exceeded(tmp_path) -> None:
    """replica.alter.log.dirs.io.max.bytes.per.second (ReplicaAlterLogDirsThread): a round records the bytes it
    copied; while the measured rate is above the quota no round runs (the thread builds no fetch) and the move waits,
    then resumes; the copy keeps every record. Without a quota the same move runs round after round."""
    rm = leading(tmp_path, n=20, replica_fetch_max_bytes=200)
    d0, d1 = rm.log_manager.log_dirs
    rm.update_replication_quotas(2**63 - 1, 2**63 - 1, 100)  # 100 B/s: one 200-byte round exceeds it
    alter(rm, (TP, d1))
    future = rm.log_manager.get_log(TP, is_future=True)
    drive(rm.run_scheduled_tasks(T0))
    after_one = future.log_end_offset
    assert 0 < after_one < 20
    assert rm.alter_log_dirs_quota.is_quota_exceeded(T0)
    assert rm.next_task_due_ms() <= T0  # the copy is due: it finds the quota exceeded and backs off
    drive(rm.run_scheduled_tasks(T0))
    assert future.log_end_offset == after_one  # held back
    assert rm.next_task_due_ms() == T0 + alter_log_dirs.QUOTA_BACKOFF_MS
    assert rm.replication_quota_metrics(T0)["AlterLogDirsReplication.byte-rate"] > 100
    # the measured rate falls below 100 B/s as time passes: the move goes on, a round at a time, to its end
    now, rounds = T0, 0
    while rm.log_manager.future_logs:
        now = max(now, rm.next_task_due_ms()) + 1000
        drive(rm.run_scheduled_tasks(now))
        rounds += 1
        assert rounds < 1000
    log = rm.online_partition(TP).log
    assert log.parent_dir == d1 and [v for _, _, v in log_records(log, 0)] == [f"v{i}" for i in range(20)]
    assert now - T0 >= 10_000  # ~2 KB at 100 B/s


def test_without_an_alter_log_dirs_quota_a_move_runs_round_after_round(tmp_path) -> None:
    rm = leading(tmp_path, n=20, replica_fetch_max_bytes=200)
    _, d1 = rm.log_manager.log_dirs
    alter(rm, (TP, d1))
    rounds = 0
    while rm.log_manager.future_logs:
        assert rm.next_task_due_ms() <= T0
        drive(rm.run_scheduled_tasks(T0))
        rounds += 1
        assert rounds < 100
    assert rounds > 2 and rm.online_partition(TP).log.parent_dir == d1


def test_has_future_logs_is_kept_with_the_future_logs(tmp_path) -> None:
    """LogManager.has_future_logs is an attribute kept wherever the future logs change (not a property asked after
    every step): a move, moving back, the swap, a restart with a move under way, a deleted partition."""
    def check(rm: ReplicaManager, expected: bool) -> None:
        assert rm.log_manager.has_future_logs == bool(rm.log_manager.future_logs) == expected

    rm = leading(tmp_path, n=4)
    d0, d1 = rm.log_manager.log_dirs
    check(rm, False)
    alter(rm, (TP, d1))
    check(rm, True)
    alter(rm, (TP, d0))  # moving back abandons it
    check(rm, False)
    alter(rm, (TP, d1))
    check(rm, True)
    drive(rm.shutdown())
    rm = make_rm(tmp_path, n_dirs=2)  # loaded with the move under way
    check(rm, True)
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 4, (0,), (0,))]), T0))
    while rm.log_manager.future_logs:
        drive(rm.run_scheduled_tasks(T0))
    check(rm, False)  # swapped in
    alter(rm, (TP, d0))
    check(rm, True)
    drive(rm.handle_stop_replica(stop_request([(TP, -2, True)]), T0))
    check(rm, False)
