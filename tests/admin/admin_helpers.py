"""Helpers for the admin CLI tests (fixtures live in conftest.py): run ``python3 -m kactor`` on the test's chroot
(in this process, or as a subprocess), register brokers (Kafka 2.6 v4 JSON), write partition state znodes, and
snapshot the ZooKeeper tree."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

from kazoo.client import KazooClient

from messages.common import Broker, EndPoint, LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from protocol.zk import paths, znodes

REPO = Path(__file__).resolve().parents[2]


def run_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "kactor", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)


def run_cli_in_process(*args: str) -> subprocess.CompletedProcess[str]:
    """``kactor ARGS`` as ``python -m kactor`` runs it (kactor.cli.main; argparse's exit is its exit code), in this
    process with stdout and stderr captured: a subprocess is 0.3-0.6 s of interpreter and imports, most of each
    admin CLI test, while the command's own work is milliseconds. ``run_cli`` keeps the subprocess for the tests of
    the entry point itself."""
    from kactor.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as e:  # argparse's usage errors and --help
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if not isinstance(e.code, int | None):
                print(e.code, file=sys.stderr)
    return subprocess.CompletedProcess([sys.executable, "-m", "kactor", *args], code, out.getvalue(), err.getvalue())


def register_broker(zk: KazooClient, broker_id: int, rack: str | None = None) -> None:
    broker = Broker(broker_id, (EndPoint("127.0.0.1", 9090 + broker_id),), rack)
    zk.create(paths.BrokerIdZNode.path(broker_id),
              znodes.encode_broker(broker, timestamp_ms=1_600_000_000_000).encode(), ephemeral=True, makepath=True)


def write_state(zk: KazooClient, topic: str, partition: int, leader: int, isr: list[int], leader_epoch: int = 0,
                controller_epoch: int = 1) -> None:
    """What the controller writes: /brokers/topics/<t>/partitions/<p>/state."""
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, leader_epoch, tuple(isr), 0), controller_epoch)
    path = paths.TopicPartitionStateZNode.path(TopicPartition(topic, partition))
    data = znodes.encode_partition_state(state).encode()
    if zk.exists(path):
        zk.set(path, data)
    else:
        zk.create(path, data, makepath=True)


def snapshot(zk: KazooClient, path: str = "/") -> dict[str, bytes | None]:
    """Every znode under ``path`` with its data (the tree a refused command must leave unchanged)."""
    result: dict[str, bytes | None] = {}

    def walk(p: str) -> None:
        data, _ = zk.get(p)
        result[p] = data
        for child in sorted(zk.get_children(p)):
            walk(f"{p.rstrip('/')}/{child}")
    walk(path)
    return result


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]
