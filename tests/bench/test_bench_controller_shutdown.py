"""bench/controller_shutdown.py's ceiling on the real ZooKeeper: the controller's own batches sent again straight
through kazoo — reads of the same znodes, writes of the same bytes to scratch znodes — leaving the cluster's znodes
as they were and no scratch behind."""

from __future__ import annotations

import re

from kazoo.client import KazooClient

from bench.controller_shutdown import ceiling_same_work
from protocol.zk import paths
from zk_bridge.executor import FENCED_CHUNK, READ_CHUNK

STATE = '{"controller_epoch":1,"leader":%d,"version":1,"leader_epoch":0,"isr":[0,1]}'


def _states(zk: KazooClient, n: int) -> list[str]:
    zk.create(paths.ControllerEpochZNode, b"1")
    out = [f"/brokers/topics/t{i}/partitions/0/state" for i in range(n)]
    for i, path in enumerate(out):
        zk.create(path, (STATE % (i % 2)).encode(), makepath=True)
    return out


def test_the_ceiling_reads_and_writes_what_the_controller_did_and_leaves_no_trace(zk: KazooClient) -> None:
    n = READ_CHUNK + FENCED_CHUNK + 3  # more than one request of each kind
    states = _states(zk, n)
    before = {p: zk.get(p) for p in states}
    batches = [[("GetData", p, None) for p in states] + [("GetData", "/brokers/topics/gone/partitions/0/state", None)],
               [("SetData", p, STATE % 1) for p in states],
               [("GetChildren", "/brokers/ids", None)]]
    seconds, lines = ceiling_same_work(zk, batches)
    assert seconds > 0
    assert re.fullmatch(rf"{n + 1} GetData \d+\.\d\ds", lines[0]), lines  # a missing znode's NONODE is an answer
    assert re.fullmatch(rf"{n} SetData \d+\.\d\ds", lines[1]), lines
    assert re.fullmatch(r"1 - \(\+1 not sent\) \d+\.\d\ds", lines[2]), lines
    after = {p: zk.get(p) for p in states}
    assert {p: (d, s.version) for p, (d, s) in after.items()} == {p: (d, s.version) for p, (d, s) in before.items()}
    assert [c for c in zk.get_children("/") if c.startswith("kactor-bench")] == []
