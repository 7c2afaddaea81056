"""The broker's loopback guard on ZooKeeper (kactor/broker_process.py → zk_bridge.executor.connect(allow_remote)):
a broker whose listeners are all loopback refuses a ZooKeeper elsewhere before opening any connection, and says
which setting lifts the refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from kactor.broker_process import BrokerProcess, BrokerStartError
from kactor.config import build_config


def test_loopback_listeners_refuse_a_remote_zookeeper(tmp_path: Path) -> None:
    cfg = build_config({"broker.id": "0", "zookeeper.connect": "10.9.8.7:2181/kactor",
                        "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": str(tmp_path / "log")})
    with pytest.raises(BrokerStartError) as e:
        BrokerProcess(cfg).start()
    assert str(e.value) == (
        "ZooKeeper address '10.9.8.7:2181' is not a loopback address (only 127.0.0.1 is allowed unless remote "
        "ZooKeeper servers are explicitly allowed); this broker's listeners are all loopback, so its ZooKeeper must "
        "be too: give listeners (or advertised.listeners) this host's own address")

