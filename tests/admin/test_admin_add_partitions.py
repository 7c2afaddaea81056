"""AdminZkClient.addPartitions on a real ZooKeeper, racing the controller's own writes of the topic znode."""

from __future__ import annotations

import json

import pytest
from kazoo.client import KazooClient

from protocol.zk import paths
from zk_bridge.admin import AdminOperationException
from zk_bridge.admin.admin_zk import AdminZkClient


def test_partitions_added_after_a_reassignment_started_keep_its_replicas(zk: KazooClient, brokers: list[int]) -> None:
    """kactor chaos seed 43: `expand` read the assignment, the controller then started a reassignment (the topic znode
    rewritten with the full replica set and adding/removing replicas), and the expansion wrote the old replicas back,
    so an ISR member was outside the replicas. The merge now goes into what it conditions its write on."""
    admin = AdminZkClient(zk)
    admin.create_topic("t", 2, 2)
    existing = admin.get_full_replica_assignment("t")
    path = paths.TopicZNode.path("t")
    js = json.loads(zk.get(path)[0])
    old = js["partitions"]["1"]
    target = [b for b in brokers if b not in old][:1] + old[1:]
    js["partitions"]["1"] = target + [r for r in old if r not in target]  # as the controller's reassignment writes
    js["adding_replicas"] = {"1": [r for r in target if r not in old]}
    js["removing_replicas"] = {"1": [r for r in old if r not in target]}
    zk.set(path, json.dumps(js).encode())

    admin.add_partitions("t", existing, admin.get_broker_metadatas(), 3)
    after = json.loads(zk.get(path)[0])
    assert after["partitions"]["1"] == js["partitions"]["1"]
    assert after["adding_replicas"] == js["adding_replicas"] and after["removing_replicas"] == js["removing_replicas"]
    assert sorted(after["partitions"]) == ["0", "1", "2"]


def test_partitions_added_concurrently_fail_clearly(zk: KazooClient, brokers: list[int]) -> None:
    admin = AdminZkClient(zk)
    admin.create_topic("u", 2, 1)
    existing = admin.get_full_replica_assignment("u")
    admin.add_partitions("u", existing, admin.get_broker_metadatas(), 3)
    before = zk.get(paths.TopicZNode.path("u"))[0]
    with pytest.raises(AdminOperationException, match=r"partitions of topic 'u' changed while adding partitions"):
        admin.add_partitions("u", existing, admin.get_broker_metadatas(), 4)
    assert zk.get(paths.TopicZNode.path("u"))[0] == before
