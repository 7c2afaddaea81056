"""``kactor cluster`` when one of its brokers dies: the others keep serving (a producer's records still land), the
command prints the exact ``kactor broker ...`` line that starts the broker again — and that line does, with its id,
its chosen port and its log dir — or restarts it itself with --restart-dead-brokers; --port-base and
--metrics-port-base choose the ports, and each broker's metrics URL is printed and answers."""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from test_cluster_cli import _Lines, foreground_job

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

KACTOR = [sys.executable, "-m", "kactor"]
FAST = ["--override", "controlled.shutdown.retry.backoff.ms=200", "--override", "zookeeper.session.timeout.ms=4000",
        "--override", "offsets.topic.num.partitions=3"]


def free_range(n: int) -> int:
    """A base port with n free ports above it."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + n < 65000 and all(_free(base + i) for i in range(n)):
            return base
    raise AssertionError("no free port range")


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def start(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], _Lines]:
    proc = subprocess.Popen([*KACTOR, "cluster", *args, *FAST], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, text=True, start_new_session=True, preexec_fn=foreground_job,
                            env=dict(os.environ, TMPDIR=str(tmp_path)))
    return proc, _Lines(proc.stdout)


def stop(proc: subprocess.Popen[str], logs: Path | None = None) -> None:
    """Ctrl-C, as a terminal sends it (to the process group; start() made it a foreground job's, SIGINT at its
    default, even in a test run whose SIGINT is ignored). A cluster that has not stopped in 90 s is killed, and,
    when no other failure is on its way, the test fails with what its brokers last logged (``logs``: their folder)."""
    if proc.poll() is not None:
        return
    failing = sys.exc_info()[0] is not None  # called from a finally: an assertion may be on its way already
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(90)
        return
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    if not failing:
        tails = "".join(f"\n--- {f.name} ---\n{f.read_text(errors='replace')[-3000:]}"
                        for f in sorted(logs.glob("broker-*.log"))) if logs is not None else ""
        raise AssertionError(f"kactor cluster did not stop within 90 s of Ctrl-C{tails}")


def owner(connect: str, broker_id: int) -> int | None:
    """The ZooKeeper session that holds broker ``broker_id``'s registration (None: not registered)."""
    zk = KazooClient(hosts=connect, timeout=5.0)
    zk.start(timeout=15)
    try:
        stat = zk.exists(f"/brokers/ids/{broker_id}")
        return None if stat is None else stat.ephemeralOwner
    finally:
        zk.stop()
        zk.close()


def registered_again(connect: str, broker_id: int, before: int | None, timeout: float = 60) -> None:
    """Broker ``broker_id`` registered by another session than ``before`` (its dead incarnation's)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = owner(connect, broker_id)
        if now is not None and now != before:
            return
        time.sleep(0.2)
    raise AssertionError(f"broker {broker_id} not registered again within {timeout:.0f}s")


def test_a_dead_broker_leaves_the_others_serving_and_its_printed_command_restarts_it(tmp_path: Path) -> None:
    base, metrics_base = free_range(3), None
    metrics_base = free_range(3)
    while set(range(metrics_base, metrics_base + 3)) & set(range(base, base + 3)):
        metrics_base = free_range(3)
    data = tmp_path / "data"
    proc, out = start(tmp_path, "--brokers", "3", "--port-base", str(base), "--metrics-port-base", str(metrics_base),
                      "--data-dir", str(data))
    manual: subprocess.Popen[bytes] | None = None
    try:
        connect = out.wait_for(r"^zookeeper\.connect=(\S+)$", 90).group(1)
        assert out.wait_for(r"^bootstrap\.servers=(\S+)$", 5).group(1) == ",".join(
            f"127.0.0.1:{base + b}" for b in range(3))
        pids = {}
        for b in range(3):
            m = out.wait_for(rf"^broker {b}: 127\.0\.0\.1:(\d+)   metrics (\S+)   pid (\d+)   log (\S+)$", 5)
            assert (int(m.group(1)), m.group(2), m.group(4)) == (
                base + b, f"http://127.0.0.1:{metrics_base + b}/metrics", str(data / f"broker-{b}.log"))
            pids[b] = int(m.group(3))
        out.wait_for(r"^Ctrl-C to stop$", 5)
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_base + 1}/metrics", timeout=10) as r:
            assert b"kafka_server_KafkaServer_BrokerState" in r.read()
        servers = f"127.0.0.1:{base},127.0.0.1:{base + 2}"
        subprocess.run([*KACTOR, "topics", "--zookeeper", connect, "--create", "--topic", "t", "--replica-assignment",
                        "0:2,2:0"], check=True, capture_output=True, timeout=60)

        dead_session = owner(connect, 1)
        os.kill(pids[1], signal.SIGKILL)
        out.wait_for(r"^broker 1 died \(exit -9\); the other brokers keep serving\. To start it again", 30)
        command = out.wait_for(r"^  (kactor broker .*)$", 5).group(1)
        args = shlex.split(command)
        assert args[:2] == ["kactor", "broker"]
        assert f"listeners=PLAINTEXT://127.0.0.1:{base + 1}" in args and "broker.id=1" in args
        assert f"log.dirs={data / 'broker-1'}" in args and f"kactor.metrics.port={metrics_base + 1}" in args
        # the cluster still runs and serves
        got = subprocess.run([*KACTOR, "produce", "--bootstrap-server", servers, "--topic", "t", "--count", "4",
                              "--acks", "all"], capture_output=True, text=True, timeout=120)
        assert (got.returncode, got.stdout.splitlines()) == (0, [
            "t-0: 2 records acknowledged at offsets 0..1 (acks=all)",
            "t-1: 2 records acknowledged at offsets 0..1 (acks=all)"])
        assert proc.poll() is None

        # the printed line starts broker 1 again: registered, on its port
        with open(tmp_path / "manual.log", "wb") as log:
            manual = subprocess.Popen([*KACTOR, *args[1:]], stdout=log, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL)
        registered_again(connect, 1, dead_session)
        with socket.create_connection(("127.0.0.1", base + 1), timeout=10):
            pass
    finally:
        if manual is not None and manual.poll() is None:
            manual.terminate()
            manual.wait(60)
        stop(proc, data)
    assert proc.returncode == 0


def test_restart_dead_brokers(tmp_path: Path) -> None:
    proc, out = start(tmp_path, "--brokers", "2", "--restart-dead-brokers", "--restart-min-life", "0")
    try:
        connect = out.wait_for(r"^zookeeper\.connect=(\S+)$", 90).group(1)
        pid = int(out.wait_for(r"^broker 0: \S+   metrics \S+   pid (\d+)   log \S+$", 5).group(1))
        out.wait_for(r"^Ctrl-C to stop$", 5)
        dead_session = owner(connect, 0)
        os.kill(pid, signal.SIGKILL)
        out.wait_for(r"^broker 0 died \(exit -9\); restarting it: kactor broker ", 30)
        registered_again(connect, 0, dead_session)
        assert proc.poll() is None
    finally:
        stop(proc)
    assert proc.returncode == 0
