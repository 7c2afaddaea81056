"""sim/client.py's reads of the ZooKeeper model: the memoised decode of a partition's state znode gives what a plain
decode gives, at every step of a seed with faults, and stays bounded."""

from __future__ import annotations

import logging

import pytest

from kactor.sim_boot import SimBoot
from messages.common import TopicPartition
from protocol.zk import paths, znodes
from sim import client
from sim.client import zk_partition_state
from sim.run import play, start_cluster
from sim.runtime import Sim


def _plain(sim: Sim, tp: TopicPartition) -> object:
    node = sim.zk.nodes.get(paths.TopicPartitionStateZNode.path(tp))
    if node is None or node.data is None:
        return None
    state = znodes.decode_partition_state(node.data, node.version)
    return None if state is None else state.leader_and_isr


def test_the_memoised_state_equals_a_plain_decode_at_every_step(monkeypatch: pytest.MonkeyPatch) -> None:
    logging.disable(logging.CRITICAL)
    monkeypatch.setattr(client, "_DECODED_STATES", {})
    monkeypatch.setattr(client, "_DECODED_STATES_MAX", 8)  # cleared often: the bound is exercised too
    seen: list[tuple[int, object]] = []

    def compare(sim: Sim, step: int) -> None:
        for p in range(2):
            tp = TopicPartition("sim", p)
            memo, plain = zk_partition_state(sim, tp), _plain(sim, tp)
            assert memo == plain, (step, tp)
            seen.append((step, plain))
        assert len(client._DECODED_STATES) <= 8

    cluster = start_cluster(3, SimBoot())
    try:
        result = play(cluster, 3, 20, tamper=compare)
    finally:
        cluster.close()
        logging.disable(logging.NOTSET)
    assert result.violations == ()
    assert len({s for _, s in seen}) > 2  # the states moved (leaders, epochs, ISRs) over the run
