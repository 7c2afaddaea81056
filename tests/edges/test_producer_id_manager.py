"""ProducerIdManager on a real ZooKeeper: Kafka's blocks of 1000 in /latest_producer_id_block, claimed by conditional
writes, never handing out an id twice across brokers."""

from __future__ import annotations

import threading

from kazoo.client import KazooClient

from edges.producer_id_manager import ProducerIdManager
from zk_bridge import paths


def block(zk: KazooClient) -> bytes:
    return zk.get(paths.ProducerIdBlockZNode)[0]


def test_first_block_on_the_empty_node_createTopLevelPaths_makes(zk: KazooClient) -> None:
    zk.create(paths.ProducerIdBlockZNode, b"")
    m = ProducerIdManager(zk, 1)
    assert [m.generate_producer_id() for _ in range(3)] == [0, 1, 2]
    assert block(zk) == b'{"version":1,"broker":1,"block_start":"0","block_end":"999"}'


def test_a_missing_node_is_created(zk: KazooClient) -> None:
    assert ProducerIdManager(zk, 3).generate_producer_id() == 0
    assert block(zk) == b'{"version":1,"broker":3,"block_start":"0","block_end":"999"}'


def test_next_block_follows_the_latest_one_written_by_any_broker(zk: KazooClient) -> None:
    zk.create(paths.ProducerIdBlockZNode, b'{"version":1,"broker":7,"block_start":"5000","block_end":"5999"}')
    m = ProducerIdManager(zk, 2, block_size=3)
    assert [m.generate_producer_id() for _ in range(4)] == [6000, 6001, 6002, 6003]
    assert block(zk) == b'{"version":1,"broker":2,"block_start":"6003","block_end":"6005"}'
    assert zk.exists(paths.ProducerIdBlockZNode).version == 2


def test_brokers_racing_for_blocks_never_share_an_id(zk: KazooClient) -> None:
    managers = [ProducerIdManager(zk, b, block_size=5) for b in (1, 2, 3)]
    got: list[list[int]] = [[] for _ in managers]

    def take(i: int) -> None:
        for _ in range(40):
            got[i].append(managers[i].generate_producer_id())

    threads = [threading.Thread(target=take, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [pid for ids in got for pid in ids]
    assert len(every) == len(set(every)) == 120
    blocks_claimed = zk.exists(paths.ProducerIdBlockZNode).version + 1  # created once, then one set per block
    assert max(every) < blocks_claimed * 5
    assert all(ids == sorted(ids) for ids in got)
