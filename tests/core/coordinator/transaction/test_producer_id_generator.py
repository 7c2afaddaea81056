"""The transaction coordinator's producer ids (ProducerIdManager over ZooKeeper effects): Kafka's blocks of 1000 in
/latest_producer_id_block, claimed by conditional writes, never handing out an id twice across brokers."""

from __future__ import annotations

from core.coordinator.transaction.producer_id_generator import ProducerIdGenerator
from core.effects import run_sync
from protocol.zk import paths
from tests.support.fake_zookeeper import FakeZooKeeper


def _ids(zk: FakeZooKeeper, g: ProducerIdGenerator, n: int) -> list[int]:
    return [run_sync(g.generate_producer_id(), zk) for _ in range(n)]


def test_first_block_on_the_empty_node_create_top_level_paths_makes():
    zk = FakeZooKeeper().create_top_level_paths()
    assert not zk.get(paths.ProducerIdBlockZNode)  # KafkaZkClient.createTopLevelPaths: no data yet
    assert _ids(zk, ProducerIdGenerator(1), 3) == [0, 1, 2]
    assert zk.get(paths.ProducerIdBlockZNode) == '{"version":1,"broker":1,"block_start":"0","block_end":"999"}'


def test_a_missing_node_is_created():
    zk = FakeZooKeeper()
    assert _ids(zk, ProducerIdGenerator(3), 1) == [0]
    assert zk.get(paths.ProducerIdBlockZNode) == '{"version":1,"broker":3,"block_start":"0","block_end":"999"}'


def test_next_block_follows_the_latest_one_written_by_any_broker():
    zk = FakeZooKeeper()
    zk.create(paths.ProducerIdBlockZNode, '{"version":1,"broker":7,"block_start":"5000","block_end":"5999"}')
    assert _ids(zk, ProducerIdGenerator(2, block_size=3), 4) == [6000, 6001, 6002, 6003]
    assert zk.get(paths.ProducerIdBlockZNode) == '{"version":1,"broker":2,"block_start":"6003","block_end":"6005"}'


def test_a_block_lost_to_another_broker_is_claimed_again_after_it():
    """Between this broker's read and its conditional write another broker claims the next block: the write fails
    on the version, the block is read again and the one after it claimed."""
    zk = FakeZooKeeper()
    zk.create(paths.ProducerIdBlockZNode, '{"version":1,"broker":7,"block_start":"0","block_end":"9"}')
    g = ProducerIdGenerator(2, block_size=10)
    proc = g.generate_producer_id()
    read = next(proc)
    results = zk(read)
    zk.set(paths.ProducerIdBlockZNode, '{"version":1,"broker":5,"block_start":"10","block_end":"19"}')
    write = proc.send(results)
    effect = proc.send(zk(write))  # BADVERSION: read again
    assert run_sync(_resume(proc, effect), zk) == 20
    assert zk.get(paths.ProducerIdBlockZNode) == '{"version":1,"broker":2,"block_start":"20","block_end":"29"}'


def _resume(proc, first):
    value = yield first
    while True:
        try:
            value = yield proc.send(value)
        except StopIteration as stop:
            return stop.value
