"""A leader's ISR updates on the real ZooKeeper: many unfenced conditional setData ops in one ZkBatch go as multis
of SET_CHUNK, with exactly the per-partition results of Kafka 2.6's one conditionalUpdatePath per partition — a
partition whose expected version is stale, or whose znode is gone, fails alone and never blocks the others."""

from __future__ import annotations

import json
import queue
from collections.abc import Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient

from core.broker.config import BrokerSideConfig
from core.broker.replica_manager import ReplicaManager
from core.effects import run_sync
from messages.common import Broker, EndPoint, Errors, LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from messages.replication import FetchPartition, FetchRequest
from messages.requests import LeaderAndIsrPartitionState, LeaderAndIsrRequest, UpdateMetadataRequest
from messages.zk import BADVERSION, NONODE, OK, Create, SetData, ZkBatch, ZkOpResult
from protocol.zk.paths import TopicPartitionStateZNode
from protocol.zk.znodes import encode_partition_state
from zk_bridge.executor import SET_CHUNK, ZkExecutor

DEADLINE_S = 10.0


@pytest.fixture
def ex(zk: KazooClient) -> Iterator[ZkExecutor]:
    executor = ZkExecutor(zk)
    yield executor
    executor.close()


def submit(ex: ZkExecutor, batch: ZkBatch) -> tuple[ZkOpResult, ...]:
    box: queue.Queue = queue.Queue()
    ex.submit(batch, box.put)
    return box.get(timeout=DEADLINE_S)


def _count(zk: KazooClient, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many transactions and single setData requests the executor sends."""
    sent = {"multi": 0, "set": 0}
    transaction, set_async = zk.transaction, zk.set_async

    def counted_transaction() -> Any:
        sent["multi"] += 1
        return transaction()

    def counted_set(*args: Any, **kwargs: Any) -> Any:
        sent["set"] += 1
        return set_async(*args, **kwargs)

    monkeypatch.setattr(zk, "transaction", counted_transaction)
    monkeypatch.setattr(zk, "set_async", counted_set)
    return sent


def test_unfenced_set_data_goes_in_multis_with_per_op_results(ex: ZkExecutor, zk: KazooClient,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    n = 2 * SET_CHUNK + 10
    for i in range(n):
        zk.create(f"/s/{i}", f"old{i}".encode(), makepath=True)
    zk.set("/s/3", b"bumped")  # someone else wrote it: version 1, the batch below expects 0 (stale)
    zk.set("/s/77", b"b1")
    zk.set("/s/77", b"b2")  # version 2, and the batch expects 2: not stale
    ops = [SetData(f"/s/{i}", f"new{i}", 2 if i == 77 else 0) for i in range(n)]
    ops[SET_CHUNK + 5] = SetData("/s/missing", "x", 0)  # in the second chunk
    sent = _count(zk, monkeypatch)
    results = submit(ex, ZkBatch(tuple(ops)))

    codes = [r.code for r in results]
    assert codes[3] == BADVERSION and codes[SET_CHUNK + 5] == NONODE
    assert [i for i, c in enumerate(codes) if c != OK] == [3, SET_CHUNK + 5]
    # every other op applied once, as if sent alone: new data, version + 1, and its own stat in its result
    for i in range(n):
        if i in (3, SET_CHUNK + 5):
            continue
        data, stat = zk.get(f"/s/{i}")
        expected_version = 3 if i == 77 else 1
        assert (data, stat.version) == (f"new{i}".encode(), expected_version)
        assert results[i].stat is not None and results[i].stat.version == expected_version
        assert results[i].stat.czxid == stat.czxid
    # the stale one is left as the other writer left it; the missing one was not created
    assert zk.get("/s/3")[0] == b"bumped" and zk.get("/s/3")[1].version == 1
    assert zk.exists("/s/missing") is None and zk.get(f"/s/{SET_CHUNK + 5}")[0] == f"old{SET_CHUNK + 5}".encode()
    # three multis (64, 64, 10); the two that failed were all-or-nothing and their ops were redone one by one
    assert sent == {"multi": 3, "set": 2 * SET_CHUNK}


def test_unfenced_set_data_chunks_keep_batch_order_around_other_ops(ex: ZkExecutor, zk: KazooClient) -> None:
    """A create between setData ops is sent between their chunks: a setData after it sees the created node."""
    zk.create("/o/a", b"0", makepath=True)
    results = submit(ex, ZkBatch((SetData("/o/a", "1", 0), Create("/o/b", "0"), SetData("/o/b", "1", 0),
                                  SetData("/o/a2", "x", -1))))
    assert [r.code for r in results] == [OK, OK, OK, NONODE]
    assert zk.get("/o/a")[0] == b"1" and zk.get("/o/b")[0] == b"1" and zk.get("/o/b")[1].version == 1


def _state_data(leader: int, leader_epoch: int, controller_epoch: int, isr: list[int], version: int = 0) -> str:
    return encode_partition_state(LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, leader_epoch, tuple(isr), version),
                                                              controller_epoch))


# -- the broker side: Partition.maybeExpandIsr over many partitions of one follower fetch -------------------------
TOPIC = "isr"
N = SET_CHUNK + 6
STALE = 10  # this partition's state znode was rewritten by the controller after the leader got its LeaderAndIsr


def _broker(b: int) -> Broker:
    return Broker(b, (EndPoint(f"host{b}", 9092 + b),))


def test_isr_expansion_of_many_partitions_over_real_zookeeper(ex: ZkExecutor, zk: KazooClient, tmp_path: Any
                                                              ) -> None:
    """Broker 0 leads N partitions with ISR [0]; follower 1 fetches them all at once and catches up, so the leader
    proposes ISR [0,1] for each in one ZkBatch. Every partition whose zkVersion is current gets the new ISR, written
    with the controller epoch the broker last received and its new version; the one whose state znode the
    controller rewrote meanwhile (version 1, another ISR) fails alone (FailedIsrUpdatesPerSec) and keeps its ISR."""
    tps = [TopicPartition(TOPIC, p) for p in range(N)]
    for tp in tps:
        zk.create(TopicPartitionStateZNode.path(tp), _state_data(0, 0, 3, [0]).encode(), makepath=True)
    now = 1_000_000.0
    rm = ReplicaManager(BrokerSideConfig(0, (str(tmp_path / "logs"),)), now)

    def zk_answer(batch: ZkBatch) -> tuple[ZkOpResult, ...]:
        return submit(ex, batch)

    brokers = tuple(_broker(b) for b in (0, 1))
    run_sync(rm.handle_update_metadata(UpdateMetadataRequest(0, 3, -1, (), brokers), now), zk_answer)
    states = tuple(LeaderAndIsrPartitionState(tp, 3, 0, 0, (0,), 0, (0, 1), is_new=True) for tp in tps)
    resp = run_sync(rm.handle_leader_and_isr(LeaderAndIsrRequest(0, 3, -1, states, brokers), now), zk_answer)
    assert {pe.error for pe in resp.partition_errors} == {Errors.NONE}
    # the controller rewrote one partition's state (say, a shrink it decided): the leader's zkVersion 0 is stale
    zk.set(TopicPartitionStateZNode.path(tps[STALE]), _state_data(0, 0, 4, [0]).encode())

    fetch = FetchRequest(1, tuple(FetchPartition(tp, 0, 0) for tp in tps))
    run_sync(rm.handle_fetch(fetch, now + 1, "follower-1"), zk_answer)

    for i, tp in enumerate(tps):
        data, stat = zk.get(TopicPartitionStateZNode.path(tp))
        p = rm.online_partition(tp)
        assert p is not None
        if i == STALE:
            assert json.loads(data) == {"version": 1, "leader": 0, "leader_epoch": 0, "controller_epoch": 4,
                                        "isr": [0]}
            assert stat.version == 1 and p.isr == (0,) and p.zk_version == 0
        else:
            assert json.loads(data) == {"version": 1, "leader": 0, "leader_epoch": 0, "controller_epoch": 3,
                                        "isr": [0, 1]}
            assert stat.version == 1 and p.isr == (0, 1) and p.zk_version == 1
    assert rm.isr_expands == N - 1 and rm.failed_isr_updates == 1
    assert rm.isr_propagation.isr_change_set == set(tps) - {tps[STALE]}
