"""``kactor describe`` (rich table, --json, --watch) against the real ZooKeeper, in the test's process as
``python -m kactor`` runs it and (--watch, the unreachable server) as a subprocess."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

from admin_helpers import REPO, one_line, run_cli, write_state
from kazoo.client import KazooClient


def _cluster(kactor, zk: KazooClient) -> None:
    zk.create("/controller", b'{"version":1,"brokerid":2,"timestamp":"1600000000000"}', ephemeral=True)
    zk.create("/controller_epoch", b"7")
    assert kactor("topics", "--create", "--topic", "orders", "--partitions", "3", "--replication-factor", "2",
                  "--start-index", "0").returncode == 0
    write_state(zk, "orders", 0, 1, [1, 2], leader_epoch=4, controller_epoch=7)
    write_state(zk, "orders", 1, 2, [2], leader_epoch=1)
    write_state(zk, "orders", 2, -1, [3], leader_epoch=9)
    zk.create("/admin/reassign_partitions",
              b'{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[3,1]}]}', makepath=True)


def test_describe_json(kactor, zk: KazooClient, brokers) -> None:
    _cluster(kactor, zk)
    r = kactor("describe", "--json")
    assert r.returncode == 0, r.stderr
    js = json.loads(r.stdout)
    assert js["controller"] == {"id": 2, "epoch": 7}
    assert [(b["id"], b["endpoints"], b["controller"]) for b in js["brokers"]] == [
        (1, ["PLAINTEXT://127.0.0.1:9091"], False), (2, ["PLAINTEXT://127.0.0.1:9092"], True),
        (3, ["PLAINTEXT://127.0.0.1:9093"], False)]
    parts = js["topics"][0]["partitions"]
    assert [(p["partition"], p["leader"], p["leader_epoch"], p["isr"], p["replicas"]) for p in parts] == [
        (0, 1, 4, [1, 2], [1, 2]), (1, 2, 1, [2], [2, 3]), (2, None, 9, [3], [3, 1])]
    assert [(p["under_replicated"], p["offline"], p["reassigning"]) for p in parts] == [
        (False, False, True), (True, False, False), (True, True, False)]
    assert parts[0]["reassignment_target"] == [3, 1]
    assert js["summary"] == {"topics": 1, "partitions": 3, "under_replicated": 2, "offline": 1, "reassigning": 1}
    assert js["pending_reassignment"] == [{"topic": "orders", "partition": 0, "replicas": [3, 1]}]


def test_describe_table(kactor, zk: KazooClient, brokers) -> None:
    _cluster(kactor, zk)
    r = kactor("describe")
    assert r.returncode == 0, r.stderr
    for needle in ("Controller: broker 2", "Controller epoch: 7", "PLAINTEXT://127.0.0.1:9093", "controller",
                   "Under-replicated: 2", "Offline: 1", "Reassigning: 1", "reassigning → 3,1",
                   "offline,under-replicated", "│ orders │"):
        assert needle in r.stdout, needle


def test_describe_empty_cluster(kactor) -> None:
    r = kactor("describe")
    assert r.returncode == 0 and "Controller: none" in r.stdout and "no broker registered" in r.stdout
    assert json.loads(kactor("describe", "--json").stdout)["controller"] == {"id": None, "epoch": None}


def test_describe_watch_refreshes_until_ctrl_c(zk_chroot: str, zk: KazooClient, brokers) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-m", "kactor", "describe", "--zookeeper", zk_chroot, "--watch",
                             "--interval", "0.2"], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    chunks: list[str] = []
    reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: proc.stdout.read(1), "")), daemon=True)
    reader.start()

    def shown(text: str) -> bool:  # polled with a deadline: a loaded machine may take seconds to start the tool
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if text in "".join(chunks):
                return True
            time.sleep(0.05)
        return text in "".join(chunks)

    try:
        assert shown("Controller: none"), "".join(chunks)
        zk.create("/controller", b'{"version":1,"brokerid":3,"timestamp":"1"}', ephemeral=True)
        assert shown("Controller: broker 3"), "".join(chunks)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(timeout=5)
    assert proc.returncode == 0, proc.stderr.read()


def test_describe_usage_and_unreachable(kactor) -> None:
    r = kactor("describe", "--watch", "--json")
    assert r.returncode == 2 and one_line(r.stderr).startswith("kactor describe: error: ")
    r = run_cli("describe", "--zookeeper", "127.0.0.1:1", "--connect-timeout", "0.5")
    assert r.returncode == 1 and "Timed out waiting for connection to ZooKeeper" in one_line(r.stderr)


def test_describe_bootstrap_server_errors(kactor) -> None:
    """--produce needs --watch and --bootstrap-server (exit 2); an unreachable --bootstrap-server is one line."""
    from zk_bridge.server import free_port

    r = kactor("describe", "--produce", "orders")
    assert r.returncode == 2 and "--produce needs --watch and --bootstrap-server" in r.stderr
    r = kactor("describe", "--bootstrap-server", "nohost")
    assert r.returncode == 2 and "--bootstrap-server: 'nohost' is not host:port" in r.stderr
    port = free_port()
    r = kactor("describe", "--bootstrap-server", f"127.0.0.1:{port}")
    assert r.returncode == 1, r.stderr
    assert one_line(r.stderr).startswith(f"kactor describe: cannot get metadata from the bootstrap server(s) "
                                         f"127.0.0.1:{port} within 10 s")
