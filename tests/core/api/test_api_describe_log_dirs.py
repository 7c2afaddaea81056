"""DescribeLogDirs (35) as ReplicaManager.describeLogDirs: per configured dir its error and, for each log in it, its
size, offset lag and future flag — over real logs on disk, split over shards and merged back."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from core.api import describe_log_dirs as api
from core.api.broker_requests import merge_responses, split_request
from core.broker.log_manager import LogManager
from core.broker.shards import shard_of
from core.effects import run_sync
from messages.common import Errors, TopicPartition
from messages.replication import (
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
    LogDirPartition,
    LogDirResult,
    LogDirTopic,
)
from protocol.codec import decode_request, decode_response, encode_request, encode_response
from protocol.records import Record, build_batch

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)


def _broker(tmp_path: Path, hosted: set[TopicPartition], owns=None) -> SimpleNamespace:
    """A replica manager's view describeLogDirs reads: its LogManager, and the partitions it hosts."""
    lm = LogManager([str(tmp_path / "d1"), str(tmp_path / "d2")], owns)
    partitions = {}
    for tp in (A0, A1, B0):
        if owns is not None and not owns(tp):
            continue
        log = lm.get_or_create_log(tp, is_new=True)
        partitions[tp] = SimpleNamespace(log=log if tp in hosted else None)
    return SimpleNamespace(log_manager=lm, get_partition=partitions.get)


def _describe(rm: SimpleNamespace, request: DescribeLogDirsRequest) -> DescribeLogDirsResponse:
    return run_sync(api.describe_log_dirs(rm, request), zk=lambda batch: ())


def test_each_dir_lists_its_logs_with_size_and_lag(tmp_path: Path) -> None:
    rm = _broker(tmp_path, hosted={A0, B0})
    lm = rm.log_manager
    lm.get_log(A0).append_as_leader(build_batch([Record(0, 0, b"k", b"v" * 100)], first_timestamp=1), 0, 1)
    d1, d2 = lm.log_dirs
    # the new logs went to the dir with the fewest: a-0 and b-0 in d1, a-1 in d2
    where = {tp: lm.get_log(tp).parent_dir for tp in (A0, A1, B0)}
    assert where == {A0: d1, A1: d2, B0: d1}
    size = lm.get_log(A0).size
    assert size > 100
    assert _describe(rm, DescribeLogDirsRequest(None)) == DescribeLogDirsResponse((
        LogDirResult(Errors.NONE, d1, (LogDirTopic("a", (LogDirPartition(0, size, 0),)),
                                       LogDirTopic("b", (LogDirPartition(0, 0, 0),)))),
        # a-1 has a log but no hosted partition: its lag is not known (-1)
        LogDirResult(Errors.NONE, d2, (LogDirTopic("a", (LogDirPartition(1, 0, -1),)),)),
    ))
    # only the partitions asked for; a topic whose logs in a dir were all left out is still listed, with none
    assert _describe(rm, DescribeLogDirsRequest((B0,))) == DescribeLogDirsResponse((
        LogDirResult(Errors.NONE, d1, (LogDirTopic("a", ()), LogDirTopic("b", (LogDirPartition(0, 0, 0),)))),
        LogDirResult(Errors.NONE, d2, (LogDirTopic("a", ()),)),
    ))
    lm.mark_dir_offline(d2)
    assert _describe(rm, DescribeLogDirsRequest(None)).results[1] == LogDirResult(Errors.KAFKA_STORAGE_ERROR, d2)


def test_the_shards_answers_merge_into_one_per_dir(tmp_path: Path) -> None:
    shards = 2
    assert {shard_of(tp, shards) for tp in (A0, A1, B0)} == {0, 1}  # the logs are spread over both shards
    brokers = {i: _broker(tmp_path, hosted={A0, A1, B0}, owns=lambda tp, i=i: shard_of(tp, shards) == i)
               for i in range(shards)}
    request = DescribeLogDirsRequest(None)
    parts = split_request(request, shards)
    assert parts == {0: request, 1: request}  # every shard has logs in every dir
    merged = merge_responses(request, {i: _describe(brokers[i], part) for i, part in parts.items()})
    listed = {(r.log_dir, t.name, p.partition) for r in merged.results for t in r.topics for p in t.partitions}
    assert {(name, p) for _, name, p in listed} == {("a", 0), ("a", 1), ("b", 0)}
    assert [r.error for r in merged.results] == [Errors.NONE, Errors.NONE]
    assert all(list(t.partitions) == sorted(t.partitions, key=lambda p: p.partition)
               for r in merged.results for t in r.topics)
    brokers[1].log_manager.mark_dir_offline(brokers[1].log_manager.log_dirs[0])
    merged = merge_responses(request, {i: _describe(brokers[i], part) for i, part in parts.items()})
    assert merged.results[0] == LogDirResult(Errors.KAFKA_STORAGE_ERROR, brokers[0].log_manager.log_dirs[0])


@pytest.mark.parametrize("version", [0, 1, 2])
def test_wire_conversion_at_every_version(version: int) -> None:
    body = decode_request(35, version, encode_request(35, version, {"topics": [
        {"topic": "a", "partitions": [0, 1, 0]}]}))[0]
    assert api.request_from_wire(version, body) == DescribeLogDirsRequest((A0, A1))
    everything = decode_request(35, version, encode_request(35, version, {"topics": None}))[0]
    assert api.request_from_wire(version, everything) == DescribeLogDirsRequest(None)
    response = DescribeLogDirsResponse((LogDirResult(Errors.NONE, "/d1", (LogDirTopic("a", (
        LogDirPartition(0, 123, 0),)),)), LogDirResult(Errors.KAFKA_STORAGE_ERROR, "/d2")))
    back = decode_response(35, version, encode_response(35, version, api.response_to_wire(version, response)))[0]
    assert [(r["error_code"], r["log_dir"]) for r in back["results"]] == [(0, "/d1"), (56, "/d2")]
    assert back["results"][0]["topics"] == [{"name": "a", "partitions": [
        {"partition_index": 0, "partition_size": 123, "offset_lag": 0, "is_future_key": False}]}]
    assert api.error_response(version, body, 35)["results"] == []
