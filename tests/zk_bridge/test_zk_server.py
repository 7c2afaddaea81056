"""EmbeddedZooKeeper and `kactor zookeeper`: fast start, loopback only, clean stop, clear one-line failures."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from zk_test_helpers import LOOPBACK_HEX, listening_addresses, pid_alive

from zk_bridge import server
from zk_bridge.server import (
    INSTALL_HINT,
    EmbeddedZooKeeper,
    ZooKeeperUnavailable,
    check_prerequisites,
    four_letter,
    free_port,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.cluster
def test_start_ruok_loopback_and_stop_cleans_up() -> None:
    zk = EmbeddedZooKeeper(tick_ms=200)
    t0 = time.monotonic()
    with zk:
        assert time.monotonic() - t0 < 10
        assert zk.connect_string == f"127.0.0.1:{zk.port}"
        assert four_letter("127.0.0.1", zk.port, "ruok") == "imok"
        assert "Mode: standalone" in four_letter("127.0.0.1", zk.port, "srvr")
        addrs = listening_addresses(zk.port)
        assert addrs and addrs <= LOOPBACK_HEX, addrs
        work_dir, pid = zk.work_dir, zk.pid
        assert work_dir and os.path.isdir(work_dir) and pid
    assert not os.path.exists(work_dir)
    assert not pid_alive(pid)
    zk.stop()  # idempotent


@pytest.mark.cluster
def test_user_data_dir_is_kept(tmp_path: Path) -> None:
    data = tmp_path / "zkdata"
    with EmbeddedZooKeeper(data_dir=str(data), tick_ms=200) as zk:
        assert four_letter("127.0.0.1", zk.port, "ruok") == "imok"
    assert data.is_dir() and any(data.iterdir())  # ZooKeeper wrote its version-2 dir there, and it stays


def test_port_in_use_is_a_clear_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        zk = EmbeddedZooKeeper(port=port, tick_ms=200)
        with pytest.raises(ZooKeeperUnavailable, match=f"port {port} .* already in use"):
            zk.start()
        assert zk.pid is None  # nothing was launched


@pytest.mark.cluster
def test_a_port_it_chose_itself_and_another_process_took_first_is_given_up_for_another() -> None:
    """free_port's probe socket is closed before the JVM binds the port, so another process (a broker listening
    on port 0 in another test) may take it in between: CI once failed a bench start on exactly that."""
    zk = EmbeddedZooKeeper(tick_ms=200)
    taken = zk.port
    with socket.socket() as s:
        s.bind(("127.0.0.1", taken))
        s.listen()
        with zk:
            assert zk.port != taken and four_letter("127.0.0.1", zk.port, "ruok") == "imok"
            assert f"clientPort={zk.port}" in Path(zk.work_dir, "zoo.cfg").read_text(encoding="utf-8")
        # launch() alone, as LocalCluster and the ensemble start their servers (and wait for them later): the same
        other = EmbeddedZooKeeper(tick_ms=200)
        s.close()
        with socket.socket() as s2:
            s2.bind(("127.0.0.1", other.port))
            s2.listen()
            taken = other.port
            other.launch()
            try:
                other.wait_ready(time.monotonic() + 30)
                assert other.port != taken and four_letter("127.0.0.1", other.port, "ruok") == "imok"
            finally:
                other.stop()


def test_free_ports_are_drawn_below_the_ephemeral_range(monkeypatch: pytest.MonkeyPatch) -> None:
    # a connecting socket's local port comes from the ephemeral range: a port drawn there could be taken by one of
    # the cluster's own clients before the broker binds it (kactor chaos seed 2 once failed to start on that)
    monkeypatch.setattr(server, "_ephemeral_low", lambda: 32768)
    ports = [free_port() for _ in range(50)]
    assert len(set(ports)) == 50
    assert all(32768 - server.FREE_PORT_SPAN <= p < 32768 for p in ports), ports


def test_a_drawn_port_someone_listens_on_is_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "_ephemeral_low", lambda: 32768)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        taken_port = taken.getsockname()[1]
        drawn: list[int] = []

        class Draws:
            def randrange(self, lo: int, hi: int) -> int:
                # the listener's port first, then as the module's own generator draws
                drawn.append(taken_port if not drawn else random.randrange(lo, hi))
                return drawn[-1]

        monkeypatch.setattr(server, "_port_draws", Draws())
        port = free_port()
    assert drawn[0] == taken_port and port in drawn[1:] and port != taken_port
    assert 32768 - server.FREE_PORT_SPAN <= port < 32768


def test_without_a_known_ephemeral_range_the_kernel_picks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert server._ephemeral_low(str(tmp_path / "missing")) is None
    (tmp_path / "range").write_text("garbage\n")
    assert server._ephemeral_low(str(tmp_path / "range")) is None
    monkeypatch.setattr(server, "_ephemeral_low", lambda: None)
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))  # it was free


def test_missing_java_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ZooKeeperUnavailable) as e:
        check_prerequisites()
    assert INSTALL_HINT in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(ZooKeeperUnavailable, match="apt-get install -y zookeeper default-jre-headless"):
        EmbeddedZooKeeper(tick_ms=200).start()


def test_missing_jar_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import zk_bridge.server as server

    monkeypatch.setattr(server, "ZOOKEEPER_JAR", "/nonexistent/zookeeper.jar")
    with pytest.raises(ZooKeeperUnavailable, match="zookeeper.jar not found: apt-get install"):
        check_prerequisites()


def test_non_loopback_bind_is_refused() -> None:
    with pytest.raises(ValueError, match="loopback"):
        EmbeddedZooKeeper(bind="0.0.0.0")


def _kactor(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "kactor", *args], cwd=REPO, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.cluster
def test_cli_runs_until_sigterm() -> None:
    port = free_port()
    proc = _kactor("zookeeper", "--port", str(port), "--tick-ms", "200")
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.strip() == f"zookeeper ready at 127.0.0.1:{port}"
        assert four_letter("127.0.0.1", port, "ruok") == "imok"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        assert not listening_addresses(port)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cli_port_in_use_fails_with_one_line() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        proc = _kactor("zookeeper", "--port", str(s.getsockname()[1]))
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert err.strip().count("\n") == 0 and "already in use" in err, err


def test_free_port_never_hands_out_the_same_port_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """The OS may offer a just-closed port again; a broker's listener and metrics port once collided that way."""
    offered = iter([41000, 41000, 41000, 41001])

    class Probe:
        def __init__(self, *_a: object) -> None:
            self.port = 0

        def __enter__(self) -> Probe:
            return self

        def __exit__(self, *_a: object) -> None:
            return None

        def bind(self, addr: tuple[str, int]) -> None:
            self.port = next(offered)

        def getsockname(self) -> tuple[str, int]:
            return ("127.0.0.1", self.port)

    monkeypatch.setattr(server, "_handed_out", set())
    monkeypatch.setattr(server.socket, "socket", Probe)
    assert server.free_port() == 41000
    assert server.free_port() == 41001
