"""The local log (recovery, checkpoints, deletion) and end-to-end replication between two ReplicaManagers."""

from __future__ import annotations

import os

import pytest

from core.broker.checkpoints import read_offset_checkpoint, write_offset_checkpoint
from core.broker.kafka_storage_error import KafkaStorageError
from core.broker.log import Log
from core.broker.log_manager import LogManager
from kactor.records import values_batch
from messages.common import Errors, TopicPartition
from messages.replication import FetchResponse, ListOffsetsResponse
from tests.support.broker import (
    broker_zk,
    drive,
    emitted,
    lai_request,
    lai_state,
    log_records,
    log_values,
    make_rm,
    produce_request,
    settle_truncation,
)

TP = TopicPartition("my-topic", 2)


def test_log_append_read_recover_torn_tail(tmp_path):
    log = Log(str(tmp_path), TP)
    info = log.append_as_leader(values_batch(["a", "b\nwith newline", "c"]), 0, 0)
    assert (info.first_offset, info.last_offset) == (0, 2)
    assert log_values(log, 1) == ("a", "b\nwith newline", "c")  # whole batches: the one holding offset 1
    with open(log.segments[-1].log_path, "ab") as f:
        f.write(values_batch(["torn"])[:30])  # a torn write
    again = Log(str(tmp_path), TP)
    assert again.log_end_offset == 3 and log_values(again) == ("a", "b\nwith newline", "c")
    again.append_as_leader(values_batch(["d"]), 1, 0)
    assert log_records(Log(str(tmp_path), TP), 3) == [(3, 1, "d")]
    assert again.leader_epoch_entries == ((0, 0), (1, 3))
    again.truncate_to(3)
    assert again.log_end_offset == 3 and again.leader_epoch_entries == ((0, 0),)


def test_leader_epoch_checkpoint_rewritten_in_place(tmp_path):
    """The leader-epoch checkpoint is overwritten in place (no rename): Kafka's file format, and a shorter rewrite
    leaves no stale entry — nor would one a process killed between the write and the truncate, since the file
    states its entry count."""
    log = Log(str(tmp_path), TP)
    log.assign_epoch_start_offset(0, 0)
    log.append_as_leader(values_batch(["a"]), 0, 0)
    log.append_as_leader(values_batch(["b"]), 0, 0)
    log.append_as_leader(values_batch(["c"]), 0, 0)
    log.assign_epoch_start_offset(4, 3)
    log.assign_epoch_start_offset(7, 3)  # replaces epoch 4, which started at the same offset
    path = os.path.join(log.dir, "leader-epoch-checkpoint")
    with open(path, encoding="utf-8") as f:
        assert f.read() == "0\n2\n0 0\n7 3\n"
    log.truncate_to(2)
    with open(path, encoding="utf-8") as f:
        assert f.read() == "0\n1\n0 0\n"
    assert not os.path.exists(path + ".tmp")
    with open(path, "a", encoding="utf-8") as f:
        f.write("7 3\n")  # what a kill between pwrite and ftruncate would leave after the count's entries
    assert Log(str(tmp_path), TP).leader_epoch_entries == ((0, 0),)


def test_offset_checkpoint_format(tmp_path):
    path = str(tmp_path / "replication-offset-checkpoint")
    write_offset_checkpoint(path, {TopicPartition("b", 1): 7, TopicPartition("a-x", 0): 3})
    with open(path) as f:
        assert f.read() == "0\n2\na-x 0 3\nb 1 7\n"
    assert read_offset_checkpoint(path) == {TopicPartition("b", 1): 7, TopicPartition("a-x", 0): 3}
    with open(path, "w") as f:
        f.write("1\n0\n")
    with pytest.raises(KafkaStorageError):
        read_offset_checkpoint(path)


def test_high_watermark_checkpoints_read_lazily(tmp_path, monkeypatch):
    """LazyOffsetCheckpoints: a dir's replication-offset-checkpoint is read when a log is created there, once, and
    not at all when every log already exists; an unreadable file reads as empty."""
    import core.broker.checkpoints as checkpoints_module

    d1, d2 = str(tmp_path / "d1"), str(tmp_path / "d2")
    lm = LogManager([d1, d2])
    write_offset_checkpoint(os.path.join(d1, "replication-offset-checkpoint"), {TP: 0, TopicPartition("t", 0): 0})
    with open(os.path.join(d2, "replication-offset-checkpoint"), "w") as f:
        f.write("garbage\n")
    reads: list[str] = []
    real = checkpoints_module.read_offset_checkpoint
    monkeypatch.setattr(checkpoints_module, "read_offset_checkpoint",
                        lambda path, *disk: reads.append(path) or real(path, *disk))
    hw = lm.read_high_watermark_checkpoints()
    assert reads == [] and sorted(hw) == [d1, d2] and len(hw) == 2
    lm.get_or_create_log(TP, is_new=True, high_watermark_checkpoints=hw)  # placed in d1 (no logs yet)
    lm.get_or_create_log(TopicPartition("t", 0), is_new=True, high_watermark_checkpoints=hw)  # d2
    lm.get_or_create_log(TopicPartition("t", 1), is_new=True, high_watermark_checkpoints=hw)  # d1 again
    assert [os.path.basename(os.path.dirname(p)) for p in reads] == ["d1", "d2"]
    assert dict(hw[d1]) == {TP: 0, TopicPartition("t", 0): 0} and dict(hw[d2]) == {}
    reads.clear()
    again = lm.read_high_watermark_checkpoints()
    lm.get_or_create_log(TP, high_watermark_checkpoints=again)
    assert reads == []
    with pytest.raises(KeyError):
        again[str(tmp_path / "elsewhere")]


def test_log_manager_delete_renames_then_removes_and_reloads(tmp_path):
    d = str(tmp_path / "logs")
    lm = LogManager([d])
    lm.get_or_create_log(TP, is_new=True).append_as_leader(values_batch(["x"]), 0, 0)
    lm.get_or_create_log(TopicPartition("other", 0), is_new=True)
    assert lm.delete_log(TP)
    assert sorted(os.listdir(d)) == ["log-start-offset-checkpoint", "other-0", "recovery-point-offset-checkpoint"]
    os.makedirs(os.path.join(d, "stale-0.abc-delete"))  # an interrupted deletion is finished at startup
    lm2 = LogManager([d])
    assert set(lm2.all_logs) == {TopicPartition("other", 0)}
    assert not os.path.exists(os.path.join(d, "stale-0.abc-delete"))


@pytest.mark.parametrize("defer_io_errors", [True, False])
@pytest.mark.parametrize("length", [209, 210, 249])
def test_deleting_a_topic_with_a_long_name_removes_its_data(tmp_path, length, defer_io_errors):
    """Log.logDeleteDirName (KAFKA-4893, 2.3+): the topic part of ``<topic>-<partition>.<uuid>-delete`` is cut so the
    name fits 255 bytes. Before, a name of 210-249 characters could not be renamed: the data stayed (the broker's
    deferred mode) or the dir went offline, and a re-created topic served the old records."""
    from core.broker.log import log_delete_dir_name

    d = str(tmp_path / "logs")
    tp = TopicPartition("t" * length, 12)
    name = log_delete_dir_name(tp)
    assert len(name.encode()) <= 255 and name.endswith("-delete") and "-12." in name
    if length <= 209:
        assert name.startswith(f"{tp.topic}-12.")
    lm = LogManager([d], defer_io_errors=defer_io_errors)
    lm.get_or_create_log(tp, is_new=True).append_as_leader(values_batch(["old"]), 0, 0)
    existed, errors = lm.delete_logs([tp])
    assert (existed, errors, lm.offline_dirs, lm.deferred_io_failures) == ({tp}, {}, set(), set())
    assert not [n for n in os.listdir(d) if n.startswith("ttt")]
    again = lm.get_or_create_log(tp, is_new=True)
    assert (again.log_end_offset, log_values(again)) == (0, ())


def test_log_manager_delete_logs_checkpoints_each_dir_once(tmp_path, monkeypatch):
    """delete_logs (LogManager.asyncDelete(Set), Kafka 2.7+): every log renamed and removed, then the two checkpoint
    files of each dir that lost a log written once, holding the logs that remain; a broken dir is a per-partition
    KafkaStorageError and the others are still deleted."""
    import core.broker.log_manager as log_manager_module

    d1, d2, d3 = (str(tmp_path / n) for n in ("d1", "d2", "d3"))
    lm = LogManager([d1, d2, d3])
    tps = [TopicPartition("t", p) for p in range(6)]  # placed round-robin: d1 {0, 3}, d2 {1, 4}, d3 {2, 5}
    for tp in tps:
        lm.get_or_create_log(tp, is_new=True).append_as_leader(values_batch(["x"] * (tp.partition + 1)), 0, 0)
    assert {tp: lm.get_log(tp).parent_dir for tp in tps}[tps[4]] == d2
    written: list[str] = []
    real = log_manager_module.write_offset_checkpoint
    monkeypatch.setattr(log_manager_module, "write_offset_checkpoint",
                        lambda path, offsets, *disk: (written.append(path), real(path, offsets, *disk))[1])
    os.rename(d3, d3 + ".gone")  # d3 breaks: its logs cannot be renamed
    existed, errors = lm.delete_logs([tps[0], tps[1], tps[3], tps[5], TopicPartition("absent", 0)])
    assert existed == {tps[0], tps[1], tps[3], tps[5]}
    assert set(errors) == {tps[5]} and errors[tps[5]].log_dir == d3 and d3 in lm.offline_dirs
    assert sorted(written) == sorted(os.path.join(d, f) for d in (d1, d2)
                                     for f in ("recovery-point-offset-checkpoint", "log-start-offset-checkpoint"))
    assert sorted(os.listdir(d1)) == ["log-start-offset-checkpoint", "recovery-point-offset-checkpoint"]
    assert read_offset_checkpoint(os.path.join(d1, "recovery-point-offset-checkpoint")) == {}
    # nothing was flushed (flush.messages / flush.ms never by default): the recovery point stays at 0
    assert read_offset_checkpoint(os.path.join(d2, "recovery-point-offset-checkpoint")) == {tps[4]: 0}
    assert set(lm.all_logs) == {tps[2], tps[4]}


def test_log_manager_missing_dir_is_storage_error(tmp_path):
    d = str(tmp_path / "logs")
    lm = LogManager([d])
    log = lm.get_or_create_log(TP, is_new=True)
    os.rename(d, d + ".gone")
    with pytest.raises(KafkaStorageError) as e:
        log.append_as_leader(values_batch(["x"]), 0, 0)
    assert e.value.log_dir == d


B = 1_000_000  # base time: real clocks are never near 0 (a replica last caught up at 0 would count as caught up)


def _cluster(tmp_path):
    """Broker 0 leads TP with follower 1; both hosted by ReplicaManagers sharing one FakeZooKeeper."""
    zk = broker_zk()
    zk.put_partition_state(TP, leader=0, isr=[0], leader_epoch=0, controller_epoch=0)
    leader, follower = make_rm(tmp_path, 0, now_ms=B), make_rm(tmp_path, 1, now_ms=B)
    states = [lai_state(TP, 0, 0, [0], [0, 1], is_new=True)]
    for rm in (leader, follower):
        drive(rm.handle_leader_and_isr(lai_request(states), B), zk)
    return zk, leader, follower


def _round(zk, leader, follower, now, effects=None):
    """One fetch round: the follower's request, the leader's answer (a parked fetch is completed by expiry)."""
    settle_truncation(zk, leader, follower, 0, B + now)
    req = follower.fetch_request_for(0)
    effects = [] if effects is None else effects
    resp = drive(leader.handle_fetch(req, B + now, "broker-1"), zk, effects)
    if resp is None:
        drive(leader.expire_delayed_operations(B + now + req.max_wait_ms), zk, effects)
        (resp,) = emitted(effects, "broker-1")
    assert isinstance(resp, FetchResponse)
    drive(follower.handle_fetch_response(0, resp, B + now), zk)
    return resp


def test_replication_expands_isr_and_advances_hw(tmp_path):
    zk, leader, follower = _cluster(tmp_path)
    drive(leader.handle_produce(produce_request(TP, "a", "b", "c"), B), zk)
    lp, fp = leader.online_partition(TP), follower.online_partition(TP)
    assert lp.high_watermark == 3  # ISR [0]: committed at once
    _round(zk, leader, follower, 10)  # follower gets the records
    assert fp.log.log_end_offset == 3 and fp.high_watermark == 3
    assert log_records(fp.log) == [(0, 0, "a"), (1, 0, "b"), (2, 0, "c")]  # offsets and epoch as the leader's
    _round(zk, leader, follower, 20)  # fetch at 3: caught up → ISR expansion in ZooKeeper
    assert lp.isr == (0, 1) and leader.isr_propagation.isr_change_set == {TP}
    assert '"isr":[0,1]' in zk.get("/brokers/topics/my-topic/partitions/2/state")
    drive(leader.handle_produce(produce_request(TP, "d"), B + 30), zk)
    assert lp.high_watermark == 3  # follower 1 in the ISR holds the HW
    _round(zk, leader, follower, 40)  # follower appends d
    assert lp.high_watermark == 3
    _round(zk, leader, follower, 50)  # its next fetch (offset 4) moves the leader HW, which the follower learns
    assert lp.high_watermark == 4 and fp.high_watermark == 4


def test_acks_all_produce_completes_when_hw_passes(tmp_path):
    zk, leader, follower = _cluster(tmp_path)
    drive(leader.handle_produce(produce_request(TP, "a"), B), zk)
    _round(zk, leader, follower, 1)
    _round(zk, leader, follower, 2)
    assert leader.online_partition(TP).isr == (0, 1)
    assert drive(leader.handle_produce(produce_request(TP, "b", "c", acks=-1), B + 3, "client"), zk) is None
    assert leader.delayed_produce_count == 1
    _round(zk, leader, follower, 4)
    effects: list = []
    _round(zk, leader, follower, 5, effects)
    (done,) = emitted(effects, "client")
    assert [(r.tp, r.error, r.base_offset) for r in done.partitions] == [(TP, Errors.NONE, 1)]
    assert leader.online_partition(TP).high_watermark == 3


def test_one_fetch_request_per_leader_batches_all_partitions(tmp_path):
    """2,000 partitions followed from two leaders → two FetchRequests, not 2,000."""
    rm = make_rm(tmp_path, broker_id=2)
    states = [lai_state(TopicPartition("big", i), i % 2, 0, [i % 2, 2], [i % 2, 2], is_new=True)
              for i in range(2000)]
    resp = drive(rm.handle_leader_and_isr(lai_request(states), B))
    assert all(pe.error == Errors.NONE for pe in resp.partition_errors)
    assert all(st.is_truncating for st in rm.fetch_states.values())
    reqs = rm.build_fetch_requests()  # new logs, no leader epochs: truncated to the HW, then fetched
    assert sorted(reqs) == [0, 1]
    assert [len(r.partitions) for r in reqs.values()] == [1000, 1000]
    assert rm.build_fetch_requests() == {}  # one in flight per leader
    rm.fetch_failed(0)
    assert list(rm.build_fetch_requests()) == [0]


def test_follower_truncates_to_leader_leo_after_unclean_election(tmp_path):
    """Records of the leader's epoch the leader does not have: truncated by OffsetsForLeaderEpoch (the leader's end
    of epoch 0 is its LEO, 0); records that appear later anyway are answered OFFSET_OUT_OF_RANGE by the leader, and
    the follower asks the leader's latest offset (ListOffsets as replica 1) and truncates to it
    (AbstractFetcherThread.fetchOffsetAndTruncate)."""
    zk, leader, follower = _cluster(tmp_path)
    fp = follower.online_partition(TP)
    fp.log.append_as_leader(values_batch(["x", "y"]), 0, 0)  # the follower has records the new leader never had
    assert settle_truncation(zk, leader, follower, 0, B) == 1
    assert fp.log.log_end_offset == 0 and fp.log.leader_epoch_entries == ()
    fp.log.append_as_leader(values_batch(["x", "y"]), 0, 0)
    req = follower.fetch_request_for(0)
    assert req.partitions[0].fetch_offset == 2
    resp = drive(leader.handle_fetch(req, B, "broker-1"), zk)
    assert [(d.tp, d.error) for d in resp.partitions] == [(TP, Errors.OFFSET_OUT_OF_RANGE)]
    drive(follower.handle_fetch_response(0, resp, B), zk)
    assert fp.log.log_end_offset == 2  # nothing truncated before the leader says where its log ends
    lo = follower.next_request_for(0)
    assert [(q.tp, q.timestamp, q.current_leader_epoch) for q in lo.partitions] == [(TP, -1, 0)]
    assert lo.replica_id == 1
    answer = drive(leader.handle_list_offsets(lo, B), zk)
    assert isinstance(answer, ListOffsetsResponse)
    assert [(r.error, r.offset, r.leader_epoch) for r in answer.partitions] == [(Errors.NONE, 0, 0)]
    drive(follower.handle_list_offsets_response(0, answer, B), zk)
    assert fp.log.log_end_offset == 0
    assert follower.next_request_for(0).partitions[0].fetch_offset == 0  # fetching again, from the leader's end

