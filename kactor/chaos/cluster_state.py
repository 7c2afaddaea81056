"""What a chaos run reads of the cluster: ZooKeeper's view of it (the controller epoch, each partition's leader,
epoch, ISR and replicas, pending deletions, reassignments and elections) for the sampler and the liveness and data
checks, and a replica's record values from its copied log."""

from __future__ import annotations

import os
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from kactor.chaos.history import TP, ClusterSnapshot, FinalPartition, PartitionSample, Sample
from kactor.chaos.txn_check import TOPIC as CHECK_TOPIC
from kactor.chaos.txn_workload import OUTPUT as TXN_OUTPUT
from messages.common import LeaderAndIsr, TopicPartition
from protocol.zk import paths, znodes

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


def log_records(log: Any) -> tuple[tuple[str, int, int], ...]:
    """Every record of a (copied) replica's log from offset 0, by offset: its value and its batch's producer id and
    epoch (-1, -1 for a producer that is not idempotent), read with Log.read and decoded (protocol/records.py)."""
    from protocol.records import iter_batches

    out: list[tuple[str, int, int]] = []
    offset = 0
    while offset < log.log_end_offset:
        data = log.read(offset, 1 << 20)
        if not data:
            break
        for batch in iter_batches(data):
            for record in batch.records():
                if batch.base_offset + record.offset_delta >= offset:
                    out.append(((record.value or b"").decode(errors="replace"), batch.producer_id,
                                batch.producer_epoch))
            offset = max(offset, batch.next_offset)
    return tuple(out)


def read_final_logs(log_dirs: list[str], snapshot_root: str, final: dict[TP, FinalPartition]) -> tuple[
        dict[tuple[int, TP], tuple[str, ...]], dict[tuple[int, TP], tuple[tuple[int, int], ...]],
        dict[tuple[int, TP], int]]:
    """Copy each broker's (``log_dirs[b]``) partition dirs of ``final`` and its replication-offset checkpoint under
    ``snapshot_root`` (a consistent prefix once nothing is produced) and read the copies with the broker's own log
    reader: each replica's values by offset, their producer id and epoch by offset, and its checkpointed high
    watermark."""
    import shutil

    from core.broker.checkpoints import REPLICATION_OFFSET_CHECKPOINT, read_offset_checkpoint
    from core.broker.log import Log, partition_dir_name

    shutil.rmtree(snapshot_root, ignore_errors=True)
    logs: dict[tuple[int, TP], tuple[str, ...]] = {}
    producers: dict[tuple[int, TP], tuple[tuple[int, int], ...]] = {}
    hws: dict[tuple[int, TP], int] = {}
    for b, src in enumerate(log_dirs):
        dst = os.path.join(snapshot_root, f"broker-{b}")
        os.makedirs(dst)
        checkpoint = os.path.join(src, REPLICATION_OFFSET_CHECKPOINT)
        if os.path.exists(checkpoint):
            shutil.copy(checkpoint, dst)
        offsets = read_offset_checkpoint(os.path.join(dst, REPLICATION_OFFSET_CHECKPOINT))
        for tp in final:
            name = partition_dir_name(TopicPartition(*tp))
            if not os.path.isdir(os.path.join(src, name)):
                continue
            shutil.copytree(os.path.join(src, name), os.path.join(dst, name))
            records = log_records(Log(dst, TopicPartition(*tp)))
            logs[(b, tp)] = tuple(value for value, _, _ in records)
            producers[(b, tp)] = tuple((pid, epoch) for _, pid, epoch in records)
            hws[(b, tp)] = offsets.get(TopicPartition(*tp), 0)
    return logs, producers, hws


def _text(zk: KazooClient, path: str) -> str | None:
    """A znode's data as text, None if it does not exist."""
    try:
        data, _ = zk.get(path)
    except NoNodeError:
        return None
    return None if data is None else data.decode("utf-8")


def _assignment(zk: KazooClient, topic: str) -> dict[int, list[int]]:
    decoded = znodes.decode_topic_assignment(topic, _text(zk, paths.TopicZNode.path(topic)))
    return {tp.partition: list(ra.replicas) for tp, ra in decoded.items()}


def partition_state(zk: KazooClient, topic: str, p: int) -> LeaderAndIsr | None:
    info = znodes.decode_partition_state(_text(zk, paths.TopicPartitionStateZNode.path(TopicPartition(topic, p))), 0)
    return info.leader_and_isr if info is not None else None


def sample_cluster(zk: KazooClient, ts: float) -> Sample:
    """The controller epoch and every partition's state, each between two reads of its topic's replicas."""
    epoch = _text(zk, paths.ControllerEpochZNode)
    controller_epoch: int | None = znodes.decode_controller_epoch(epoch) if epoch is not None else None
    partitions: dict[TP, PartitionSample] = {}
    for topic in zk.get_children(paths.TopicsZNode):
        before = _assignment(zk, topic)
        states = {}
        for p in before:
            st = partition_state(zk, topic, p)
            if st is not None:
                states[p] = st
        after = _assignment(zk, topic)
        for p, st in states.items():
            replicas = frozenset(before.get(p, ())) | frozenset(after.get(p, ()))
            partitions[(topic, p)] = PartitionSample(st.leader, st.leader_epoch, tuple(st.isr), replicas)
    return Sample(ts, controller_epoch, partitions)


def snapshot_cluster(zk: KazooClient, deleted: set[str]) -> ClusterSnapshot:
    pending = tuple(sorted(zk.get_children(paths.DeleteTopicsZNode))) if zk.exists(paths.DeleteTopicsZNode) else ()
    topics = zk.get_children(paths.TopicsZNode)
    reassignment: tuple[TP, ...] = tuple(sorted(
        (tp.topic, tp.partition)
        for tp in znodes.decode_reassign_partitions(_text(zk, paths.ReassignPartitionsZNode))))
    reassigning: list[TP] = []
    leaderless: list[TP] = []
    for topic in sorted(topics):
        if topic in deleted:
            continue
        data = _text(zk, paths.TopicZNode.path(topic))
        if data is None:
            continue
        for tp, ra in sorted(znodes.decode_topic_assignment(topic, data).items()):
            if ra.adding_replicas or ra.removing_replicas:
                reassigning.append((topic, tp.partition))
            st = partition_state(zk, topic, tp.partition)
            if st is None or st.leader < 0:
                leaderless.append((topic, tp.partition))
    return ClusterSnapshot(pending, tuple(sorted(t for t in deleted if t in topics)), reassignment,
                           tuple(reassigning), tuple(leaderless),
                           bool(zk.exists(paths.PreferredReplicaElectionZNode)))


def final_partitions(zk: KazooClient, deleted: set[str]) -> dict[TP, FinalPartition]:
    """The surviving partitions the producer could have written: internal topics are the brokers' own."""
    out: dict[TP, FinalPartition] = {}
    for topic in zk.get_children(paths.TopicsZNode):
        # the transactional loop's output and the checked topic hold control batches and aborted records: their own
        # checks read them as consumers do (txn_workload.check_transactions, txn_check), not replica by replica
        if topic in deleted or topic in INTERNAL_TOPICS or topic in (TXN_OUTPUT, CHECK_TOPIC):
            continue
        for p, replicas in _assignment(zk, topic).items():
            st = partition_state(zk, topic, p)
            isr = tuple(st.isr) if st is not None else ()
            out[(topic, p)] = FinalPartition(isr, tuple(replicas))
    return out
