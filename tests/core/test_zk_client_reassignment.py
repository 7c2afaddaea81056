"""KafkaZkClient's /admin/reassign_partitions procedures (core/zk_client.py) against the in-memory ZooKeeper model:
exact znode contents, the watches the reads arm, the /controller_epoch fence, Kafka's tolerance of bad JSON."""

from __future__ import annotations

import logging

import pytest

from core.controller.errors import ControllerMovedError
from core.controller.zk_watches import ZkWatches, partition_reassignment_handler
from core.zk_client import KafkaZkClient
from messages.common import TopicPartition
from messages.zk import Exists, GetData
from protocol.zk import paths
from tests.support.fake_zookeeper import FakeZooKeeper, run

PATH = paths.ReassignPartitionsZNode
T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)
EPOCH_ZK_VERSION = 3


@pytest.fixture
def zk() -> FakeZooKeeper:
    zk = FakeZooKeeper()
    zk.create_top_level_paths()
    zk.setup_controller_epoch(2, EPOCH_ZK_VERSION)
    return zk


def test_reading_absent_valid_and_undecodable(zk: FakeZooKeeper, caplog: pytest.LogCaptureFixture) -> None:
    client = KafkaZkClient()
    assert run(client.reassign_partitions_in_progress(), zk)[0] is False
    assert run(client.get_partition_reassignment(), zk)[0] == {}
    zk.create(PATH, '{"version":1,"partitions":[{"topic":"t","partition":1,"replicas":[2,0]},'
                    '{"topic":"t","partition":0,"replicas":[1]}]}')
    assert run(client.reassign_partitions_in_progress(), zk)[0] is True
    assert run(client.get_partition_reassignment(), zk)[0] == {T1: (2, 0), T0: (1,)}
    zk.set(PATH, '{"version":1,"partitions":[{"topic":"t"')  # Kafka: Json.parseBytes → None → empty
    with caplog.at_level(logging.WARNING, logger="kactor.zk_client"):
        assert run(client.get_partition_reassignment(), zk)[0] == {}
    assert "Ignoring partition reassignment due to invalid json" in caplog.text


def test_reads_arm_a_watch_only_with_the_handler_registered(zk: FakeZooKeeper) -> None:
    watches = ZkWatches()
    client = KafkaZkClient(watches)
    zk.create(PATH, '{"version":1,"partitions":[]}')
    run(client.reassign_partitions_in_progress(), zk)
    run(client.get_partition_reassignment(), zk)
    watches.register_node_handler(partition_reassignment_handler())
    run(client.reassign_partitions_in_progress(), zk)
    run(client.get_partition_reassignment(), zk)
    assert [b.ops for b in zk.batches] == [(Exists(PATH, False),), (GetData(PATH, False),),
                                          (Exists(PATH, True),), (GetData(PATH, True),)]
    assert all(b.fence_version == -1 for b in zk.batches)  # reads are not fenced


def test_set_or_create_writes_exactly_kafkas_json_fenced(zk: FakeZooKeeper) -> None:
    client = KafkaZkClient()
    run(client.set_or_create_partition_reassignment({T0: (1, 2)}, EPOCH_ZK_VERSION), zk)  # absent: created
    assert zk.get(PATH) == '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}'
    run(client.set_or_create_partition_reassignment({T1: (0,)}, EPOCH_ZK_VERSION), zk)  # present: overwritten
    assert zk.get(PATH) == '{"version":1,"partitions":[{"topic":"t","partition":1,"replicas":[0]}]}'
    assert zk.version(PATH) == 1
    assert {b.fence_version for b in zk.batches} == {EPOCH_ZK_VERSION}
    with pytest.raises(ControllerMovedError):  # a newer controller bumped /controller_epoch
        run(client.set_or_create_partition_reassignment({T0: (1,)}, EPOCH_ZK_VERSION - 1), zk)
    assert zk.get(PATH) == '{"version":1,"partitions":[{"topic":"t","partition":1,"replicas":[0]}]}'


def test_delete_is_fenced_and_tolerates_a_missing_znode(zk: FakeZooKeeper) -> None:
    client = KafkaZkClient()
    zk.create(PATH, '{"version":1,"partitions":[]}')
    with pytest.raises(ControllerMovedError):
        run(client.delete_partition_reassignment(EPOCH_ZK_VERSION + 1), zk)
    assert zk.exists(PATH)
    run(client.delete_partition_reassignment(EPOCH_ZK_VERSION), zk)
    assert not zk.exists(PATH)
    run(client.delete_partition_reassignment(EPOCH_ZK_VERSION), zk)  # already gone: no error
