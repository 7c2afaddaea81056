"""kactor.broker_process, the composition root: it alone creates the edges, puts them in their slots and wires them
(ZooKeeper's watch events to the ZkBridgeActor, the log-dir probe to the replica manager, the GC policy), on a real
ZooKeeper with the broker running in this process."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from core.broker.broker_metadata import BrokerMetadata
from edges import gc_policy
from edges.log_dirs import LogDirLockError, LogDirLocks, LogDirProbe, read_broker_metadata
from edges.timer import TimerEdge
from edges.transport import Transport
from kactor.broker_process import BrokerProcess, get_or_create_cluster_id
from kactor.config import build_config
from messages.observability import ControllerEventProcessed
from messages.partition import LogDirFailure
from zk_bridge.executor import ZkExecutor

pytestmark = pytest.mark.cluster


def _poll(predicate: Any, what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _controller(zk: KazooClient) -> int | None:
    try:
        return json.loads(zk.get("/controller")[0])["brokerid"]
    except Exception:  # noqa: BLE001 - absent or being rewritten
        return None


def _epoch(zk: KazooClient) -> int:
    return int(zk.get("/controller_epoch")[0])


def test_the_broker_process_creates_and_wires_every_edge(zk_chroot: str, zk: KazooClient, tmp_path: Path) -> None:
    dirs = (str(tmp_path / "d0"), str(tmp_path / "d1"))
    config = build_config({"broker.id": "7", "zookeeper.connect": zk_chroot, "listeners": "PLAINTEXT://127.0.0.1:0",
                           "log.dirs": ",".join(dirs), "zookeeper.session.timeout.ms": "4000",
                           "controlled.shutdown.enable": "false"})
    process = BrokerProcess(config)
    gc_policy.uninstall()  # the default collector, as in any test process, until the broker installs its policy
    rt = process.start()
    seen: list[tuple[str, str, Any]] = []
    rt.observer = lambda seq, ts, sender, receiver, body, cause: seen.append((sender, receiver, body))
    probe = rt.edges.log_dirs
    try:
        edges = rt.edges
        assert isinstance(edges.zk, ZkExecutor) and isinstance(edges.timer, TimerEdge)
        assert isinstance(edges.net, Transport) and edges.net.port > 0
        assert edges.metrics is None  # kactor.metrics.port 0: no endpoint
        assert edges.process is process
        assert isinstance(probe, LogDirProbe) and probe.log_dirs == dirs and probe._thread.is_alive()
        assert gc_policy.installed()

        _poll(lambda: _controller(zk) == 7, "broker 7 to become the controller")
        # its own create fired the exists-watch on /controller: once that ControllerChange is processed the watch is
        # armed again (before, a delete would go unseen, in Kafka too)
        _poll(lambda: any(isinstance(b, ControllerEventProcessed) and b.event == "ControllerChange"
                          for _, _, b in list(seen)), "the controller to process its own ControllerChange")
        assert json.loads(zk.get("/brokers/ids/7")[0])["port"] == edges.net.port
        # registered: every log dir says which broker of which cluster it belongs to (checkpointBrokerMetadata),
        # and its .lock keeps any other broker out for as long as this one lives (LogManager.lockLogDirs)
        cluster_id = get_or_create_cluster_id(zk)
        _poll(lambda: all(os.path.exists(os.path.join(d, "meta.properties")) for d in dirs), "meta.properties")
        assert read_broker_metadata(dirs) == {d: BrokerMetadata(7, cluster_id) for d in dirs}
        with pytest.raises(LogDirLockError):
            LogDirLocks(dirs[:1]).acquire()
        epoch = _epoch(zk)
        # the watch on /controller reaches the controller through the wiring: it elects itself again (Reelect)
        zk.delete("/controller")
        _poll(lambda: _controller(zk) == 7 and _epoch(zk) == epoch + 1, "the controller to be re-elected")
        assert ("edge:zk", "zk") in {(s, r) for s, r, _ in seen}

        # the probe's input reaches the replica manager
        shutil.rmtree(dirs[1])
        probe.poke()
        _poll(lambda: ("edge:log-dirs", "replica-manager", LogDirFailure(1, dirs[1])) in seen, "LogDirFailure")
        assert os.path.isdir(dirs[0])
    finally:
        process.request_shutdown()
        done = process.wait(30)
        process._close()
        gc_policy.uninstall()
    assert done and process._shutdown is not None and not process._shutdown.error
    _poll(lambda: not probe._thread.is_alive(), "the probe to stop", 10.0)
    _poll(lambda: zk.exists("/brokers/ids/7") is None, "the registration to go")
    LogDirLocks(dirs[:1]).acquire().release()  # the stopped broker let its dirs go
