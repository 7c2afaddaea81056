"""scripts/test's two pytest-xdist workers never hand out the same port: each worker's free_port keeps to its share
of the OS's ports (tests/conftest.py _WorkerPorts), so a port one worker probed and closed is never handed to the
other before its broker or ZooKeeper binds it."""

from __future__ import annotations

import os

import pytest

from tests.conftest import _WorkerPorts
from zk_bridge import server
from zk_bridge.server import free_port


@pytest.mark.parametrize("index", [0, 1])
def test_each_worker_hands_out_only_its_share_of_ports(monkeypatch: pytest.MonkeyPatch, index: int) -> None:
    monkeypatch.setattr(server, "_handed_out", _WorkerPorts(index, 2))
    ports = [free_port() for _ in range(20)]
    assert all((p // 2) % 2 == index for p in ports), ports
    assert len(set(ports)) == 20  # and never the same port twice, as before


def test_the_two_shares_are_disjoint_and_cover_every_port() -> None:
    shares = [_WorkerPorts(0, 2), _WorkerPorts(1, 2)]
    for port in range(1024, 1100):
        assert [("127.0.0.1", port) in s for s in shares].count(False) == 1, port


def test_one_worker_takes_every_port() -> None:
    assert ("127.0.0.1", 40001) not in _WorkerPorts(0, 1)


def test_under_xdist_this_worker_keeps_to_its_share() -> None:
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if count == 1:
        pytest.skip("not on a pytest-xdist worker")
    index = int(os.environ["PYTEST_XDIST_WORKER"][2:])
    assert isinstance(server._handed_out, _WorkerPorts)
    assert (server._handed_out.index, server._handed_out.count) == (index, count)
