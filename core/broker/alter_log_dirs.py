"""Moving a replica between this broker's log dirs: Kafka's ReplicaManager.alterReplicaLogDirs and its
ReplicaAlterLogDirsThread, over one shard's ReplicaManager (core/broker/replica_manager.py).

A move creates the partition's ``<topic>-<partition>.<uuid>-future`` log in the destination dir
(`LogManager.create_future_log`). The copier then brings it up to the current log as ReplicaAlterLogDirsThread does,
fetching from the local replica: it truncates the future log to the common prefix by leader epochs, reads whole batches
from the current log at the future log's end and appends them as a follower would (their offsets and epochs kept, the
producers' state rebuilt), then moves the future log's high watermark and log start offset after the current one's.
When the future log's end is the current log's, the future log replaces the current one
(Partition.maybeReplaceCurrentWithFutureReplica → `LogManager.replace_current_with_future_log`). A shard runs one
procedure at a time, so a copy step and the swap are atomic with respect to appends, as Kafka's partition lock makes
them: records appended while the copy runs are copied by a later step, and none is lost.

Like the thread ("Only move one replica at a time"), each step copies one partition — the greatest moving one — up to
replica.fetch.max.bytes; the replica manager runs a step on every pass of its scheduled tasks while a hosted partition
has a future log (`due`), and a future log left by a restart resumes once its partition is hosted again.
"""

from __future__ import annotations

import logging
import struct
from typing import Any

from core.broker.api_error import ApiError
from core.broker.kafka_storage_error import KafkaStorageError
from core.broker.log import Log, log_future_dir_name
from messages.common import Errors, TopicPartition
from messages.replication import AlterReplicaLogDirResult, AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse

MAX_FILE_NAME_BYTES = 255
# a copy round that met a storage error is tried again after replica.fetch.backoff.ms (its default): the fetcher's
# partitionsWithError back-off, so that a dir the log-dir probe still finds usable is not retried in a busy loop
STORAGE_ERROR_BACKOFF_MS = 1000
# while replica.alter.log.dirs.io.max.bytes.per.second is exceeded the thread builds no fetch and waits
# replica.fetch.backoff.ms (AbstractFetcherThread.maybeFetch); a tenth of it keeps the measured rate close to the quota
# at the cost of a few more passes
QUOTA_BACKOFF_MS = 100

log = logging.getLogger("kactor.broker")


def alter_replica_log_dirs(rm: Any, request: AlterReplicaLogDirsRequest) -> AlterReplicaLogDirsResponse:
    """ReplicaManager.alterReplicaLogDirs: per partition, NONE once its move is under way (or it already lives in
    the dir), else LOG_DIR_NOT_FOUND (not in log.dirs), KAFKA_STORAGE_ERROR (the dir or the partition offline, or
    a dir offline while the future log would be created), REPLICA_NOT_AVAILABLE (known to the cluster but not hosted
    here: the dir is remembered for its creation), UNKNOWN_TOPIC_OR_PARTITION, INVALID_TOPIC_EXCEPTION (the future
    dir's name would not fit 255 bytes)."""
    wanted: dict[TopicPartition, str] = {}
    for d in request.dirs:  # the request's Map: a partition named twice goes to the last dir
        wanted.pop(d.tp, None)
        wanted[d.tp] = d.log_dir
    return AlterReplicaLogDirsResponse(tuple(AlterReplicaLogDirResult(tp, _alter_one(rm, tp, log_dir))
                                             for tp, log_dir in wanted.items()))


def _alter_one(rm: Any, tp: TopicPartition, log_dir: str) -> Errors:
    lm = rm.log_manager
    if len(log_future_dir_name(tp).encode()) > MAX_FILE_NAME_BYTES:
        return Errors.INVALID_TOPIC_EXCEPTION
    if log_dir not in lm.log_dirs:  # LogManager.isLogDirOnline: LogDirNotFoundException
        return Errors.LOG_DIR_NOT_FOUND
    if not lm.is_log_dir_online(log_dir):
        return Errors.KAFKA_STORAGE_ERROR
    partition = rm.online_partition(tp)
    if partition is None and rm.get_partition(tp) is not None:
        return Errors.KAFKA_STORAGE_ERROR  # HostedPartition.Offline, before any preference is recorded
    future = lm.get_log(tp, is_future=True)
    if partition is not None and future is not None and future.parent_dir != log_dir:
        # Partition.futureReplicaDirChanged: the move that was under way is abandoned
        lm.remove_future_log(tp)
        future = None
    lm.maybe_update_preferred_log_dir(tp, log_dir)
    try:
        partition = rm._get_partition_or_error(tp, expect_leader=False)
    except ApiError as e:
        return e.error
    current = partition.log
    if current is None:
        return Errors.REPLICA_NOT_AVAILABLE
    if current.parent_dir == log_dir or future is not None:
        return Errors.NONE  # Partition.maybeCreateFutureReplica: already there, or already moving there
    try:
        lm.create_future_log(tp, log_dir)
    except KafkaStorageError:
        return Errors.KAFKA_STORAGE_ERROR
    return Errors.NONE


def moving(rm: Any) -> list[TopicPartition]:
    """The partitions whose future log can be copied now: hosted online with a current log."""
    return sorted(tp for tp in rm.log_manager.future_logs
                  if (p := rm.online_partition(tp)) is not None and p.log is not None)


def copy_step(rm: Any, now_ms: float) -> TopicPartition | None:
    """One round of ReplicaAlterLogDirsThread: the greatest moving partition's future log is truncated to the
    common prefix, copied up to replica.fetch.max.bytes, and swapped in when it has caught up. Returns the partition
    swapped, if one was. KafkaStorageError goes to the caller (its dir is taken offline)."""
    tps = moving(rm)
    if not tps:
        return None
    tp = tps[-1]
    partition = rm.online_partition(tp)
    future = rm.log_manager.get_log(tp, is_future=True)
    assert partition is not None and partition.log is not None and future is not None
    current = partition.log
    try:
        copied = catch_up(current, future, rm.config.replica_fetch_max_bytes, int(now_ms))
        rm.alter_log_dirs_quota.record(copied, now_ms)  # processPartitionData's quota.record
    except (ApiError, ValueError) as e:
        # AbstractFetcherThread marks the partition failed and stops moving it; its future log goes here, so that
        # the shard does not retry it for ever and a new AlterReplicaLogDirs can start over
        log.error("moving %s to %s failed, abandoned: %s", tp, future.parent_dir, e)
        rm.log_manager.remove_future_log(tp)
        return None
    if future.log_end_offset != current.log_end_offset:
        return None
    partition.log = rm.log_manager.replace_current_with_future_log(tp)
    return tp


def catch_up(current: Log, future: Log, max_bytes: int, now_ms: int) -> int:
    """Bring ``future`` towards ``current``: ReplicaAlterLogDirsThread.maybeTruncate, handleOffsetOutOfRange,
    fetch (a local read at the future log's end) and processPartitionData. Returns the bytes copied."""
    _truncate_to_common_prefix(current, future)
    if future.log_end_offset < current.log_start_offset:
        future.truncate_fully_and_start_at(current.log_start_offset)
    copied = 0
    while future.log_end_offset < current.log_end_offset and copied < max_bytes:
        records = current.read(future.log_end_offset, max_bytes - copied)
        if not records:
            break
        base = struct.unpack_from(">q", records, 0)[0]
        if base < future.log_end_offset and future.log_end_offset == future.log_start_offset:
            # Partition.appendRecordsToFollowerOrFutureReplica's UnexpectedAppendOffsetException: an empty log that
            # starts inside the first batch (its start was moved there) starts at the batch instead
            future.truncate_fully_and_start_at(base)
        future.append_as_follower(records, now_ms)
        copied += len(records)
    future.update_high_watermark(min(future.log_end_offset, current.high_watermark))
    if future.log_start_offset < current.log_start_offset <= future.high_watermark:
        future.maybe_increment_log_start_offset(current.log_start_offset)
    return copied


def _truncate_to_common_prefix(current: Log, future: Log) -> None:
    """AbstractFetcherThread.getOffsetTruncationState with the current log as the leader: the future log keeps what
    agrees with the current log's leader epochs (the current replica may have been truncated since it was copied)."""
    epoch = future.latest_epoch
    if epoch is None:
        offset = min(future.log_end_offset, current.log_end_offset)
    else:
        found = current.end_offset_for_epoch(epoch)
        if found is None:
            offset = min(future.high_watermark, current.log_end_offset)
        else:
            end, current_epoch = found
            if current_epoch == epoch:
                offset = min(end, future.log_end_offset)
            else:
                own = future.end_offset_for_epoch(current_epoch)
                offset = min(end, own[0] if own is not None else future.high_watermark)
    if offset < future.log_end_offset:
        future.truncate_to(offset)

