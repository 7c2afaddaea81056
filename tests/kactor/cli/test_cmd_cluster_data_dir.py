"""``kactor cluster --data-dir D`` owns D (issue #39), checked before anything starts: D is locked while the cluster
runs (a second cluster on D is refused), the embedded ZooKeeper's data lives in D/zookeeper so the next run is the
same cluster, and logs whose ZooKeeper data is missing — or of an ensemble of another size — are refused with why and
what to do. And the port check does not take a stopped cluster's TIME-WAIT sockets for a listener."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from edges.log_dirs import LogDirLocks
from kactor.cli import main
from kactor.cli.cmd_cluster import _free
from kactor.cluster import ClusterError, LocalCluster

HOLDER = ("import fcntl, os, sys\n"
          "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)\n"
          "fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
          "print('locked', flush=True)\n"
          "sys.stdin.read()\n")


def _in_use(d: Path) -> str:
    return (f"--data-dir {d} is in use: another kactor cluster running on it holds {d / '.lock'}. Stop that cluster "
            "first, or give another --data-dir")


def test_a_fresh_dir_gets_its_zookeeper_data_beside_the_logs(tmp_path: Path) -> None:
    d = tmp_path / "data"
    lc = LocalCluster(3, base_dir=str(d), persistent=True)
    try:
        assert lc.zk_data_dirs == [str(d / "zookeeper" / "server-1")]
    finally:
        lc.stop()
    three = LocalCluster(3, base_dir=str(d), zookeeper_ensemble=3, persistent=True)
    try:
        assert three.zk_data_dirs == [str(d / "zookeeper" / f"server-{i}") for i in (1, 2, 3)]
    finally:
        three.stop()
    given = LocalCluster(1, zookeeper="127.0.0.1:2181/x", base_dir=str(d), persistent=True)
    given.stop()
    assert given.zk_data_dirs is None  # a ZooKeeper given is the cluster's own


def test_a_second_cluster_on_the_dir_is_refused_until_the_first_stops(tmp_path: Path) -> None:
    d = tmp_path / "data"
    first = LocalCluster(1, base_dir=str(d), persistent=True)
    try:
        with pytest.raises(ClusterError) as e:
            LocalCluster(1, base_dir=str(d), persistent=True)
        assert str(e.value) == _in_use(d)
    finally:
        first.stop()
    LocalCluster(1, base_dir=str(d), persistent=True).stop()


def test_a_dir_another_process_holds_is_refused_with_nothing_written(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "data"
    d.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(d / ".lock")], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        assert main(["cluster", "--brokers", "1", "--data-dir", str(d), "--security", "ssl"]) == 1
        assert capsys.readouterr().err == f"kactor cluster: {_in_use(d)}\n"
        assert [p.name for p in d.iterdir()] == [".lock"]  # no certificates, no ZooKeeper data, no broker dirs
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(10)


def test_logs_without_their_zookeeper_data_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "data"
    (d / "broker-0" / "orders-0").mkdir(parents=True)
    (d / "broker-1").mkdir()
    (d / "broker-1" / ".lock").touch()  # a lock file alone is no data
    (d / "broker-0.log").write_text("a broker's own log, not a log dir\n")
    assert main(["cluster", "--brokers", "2", "--data-dir", str(d)]) == 1
    assert capsys.readouterr().err == (
        f"kactor cluster: --data-dir {d} holds broker log dirs (broker-0) but no ZooKeeper data ({d / 'zookeeper'}): "
        "the ZooKeeper that knew their topics was not kept there (a kactor that kept none, or --zookeeper), and a "
        "new one would serve their old records under re-created topics. Give that cluster's --zookeeper, remove "
        f"those dirs (or all of {d}) to start an empty cluster there, or give another --data-dir\n")
    assert not (d / "zookeeper").exists()
    LogDirLocks((str(d),)).acquire().release()  # the refusal let the dir go


def test_an_ensemble_of_another_size_is_refused(tmp_path: Path) -> None:
    d = tmp_path / "data"
    (d / "zookeeper" / "server-1" / "version-2").mkdir(parents=True)
    with pytest.raises(ClusterError) as e:
        LocalCluster(3, base_dir=str(d), zookeeper_ensemble=3, persistent=True)
    assert str(e.value) == (f"{d / 'zookeeper'} holds the data of a ZooKeeper ensemble of 1 server(s): run with "
                            "--zookeeper-ensemble 1 to start that cluster again, or give another --data-dir")


def test_time_wait_sockets_do_not_make_a_port_taken() -> None:
    """What a cluster that just stopped leaves: its listeners closed their accepted connections first, so those sit
    in TIME-WAIT on the listener's port for a minute; a listener binding with SO_REUSEADDR (Kafka's, kactor's) may
    have the port at once, and so must the check."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = listener.accept()
        assert not _free(port)  # listening: taken
        accepted.close()  # the broker's side closes first: its socket goes to TIME-WAIT
        time.sleep(0.05)
        client.close()
    time.sleep(0.05)
    with socket.socket() as plain, pytest.raises(OSError):
        plain.bind(("127.0.0.1", port))  # what the check did: refused for a minute after the stop
    assert _free(port)


def test_a_broker_that_dies_during_start_up_ends_the_wait_with_its_last_line(tmp_path: Path) -> None:
    """A broker refused at start (a log dir of another cluster, say) will never register: the wait ends at once with
    the line it wrote, not after 30 s with "timed out"."""
    lc = LocalCluster(1, zookeeper="127.0.0.1:2181/x", base_dir=str(tmp_path))
    log_path = tmp_path / "broker-0.log"
    lc.logs[0] = str(log_path)
    with open(log_path, "wb") as out:
        lc.procs[0] = subprocess.Popen([sys.executable, "-c", "import sys; print('kactor broker: refused', "
                                        "file=sys.stderr); sys.exit(1)"], stdout=out, stderr=subprocess.STDOUT)
    lc.procs[0].wait(30)
    with pytest.raises(ClusterError) as e:
        lc.wait_registered(_Registered([]), 30)  # type: ignore[arg-type]
    assert str(e.value) == f"broker 0 exited with 1 during start-up: kactor broker: refused (its log: {log_path})"


class _Registered:
    """What wait_registered asks of ZooKeeper: the children of /brokers/ids."""

    def __init__(self, ids: list[int]) -> None:
        self.ids = ids

    def get_children(self, path: str) -> list[str]:
        assert path == "/brokers/ids"
        return [str(b) for b in self.ids]


@pytest.mark.parametrize("second_try", ["registers", "gives up again"])
def test_a_broker_that_gave_up_on_a_zookeeper_slow_to_start_is_started_again_once(tmp_path: Path,
                                                                                   second_try: str) -> None:
    """Its connection deadline fell just after the embedded ZooKeeper began serving (too late for start()'s check of
    early exits): started again, it registers; if it gives up again, the wait ends with its line."""
    from zk_bridge.executor import UNREACHABLE

    lc = LocalCluster(1, zookeeper="127.0.0.1:2181/x", base_dir=str(tmp_path))
    lc.zk = object()  # type: ignore[assignment]  # the cluster's own ZooKeeper, serving
    log_path = tmp_path / "broker-0.log"
    lc.logs[0] = str(log_path)
    gave_up = f"print('kactor broker: {UNREACHABLE} 127.0.0.1:1 within 18s: is it running?'); raise SystemExit(1)"

    def run(code: str) -> subprocess.Popen[bytes]:
        with open(log_path, "ab") as out:
            return subprocess.Popen([sys.executable, "-c", code], stdout=out)

    lc.procs[0] = run(gave_up)
    lc.procs[0].wait(30)
    zk = _Registered([])
    starts: list[int] = []

    def start_broker(broker_id: int) -> subprocess.Popen[bytes]:
        starts.append(broker_id)
        if second_try == "registers":
            lc.procs[broker_id] = run("import time; time.sleep(30)")
            zk.ids.append(broker_id)
        else:
            lc.procs[broker_id] = run(gave_up)
            lc.procs[broker_id].wait(30)
        return lc.procs[broker_id]

    lc.start_broker = start_broker  # type: ignore[method-assign]
    try:
        if second_try == "registers":
            lc.wait_registered(zk, 10)  # type: ignore[arg-type]
        else:
            with pytest.raises(ClusterError, match=f"broker 0 exited with 1 during start-up: kactor broker: "
                                                   f"{UNREACHABLE}"):
                lc.wait_registered(zk, 10)  # type: ignore[arg-type]
        assert starts == [0]
    finally:
        for proc in lc.procs.values():
            proc.kill()
            proc.wait()


def test_a_broker_alive_but_not_registered_is_named_with_its_last_line_when_the_wait_times_out(
        tmp_path: Path) -> None:
    """What tells a slow start from a stuck one (the trace-overhead bench's brokers once failed to register in 60 s
    with nothing else said): which brokers registered, and the last line each missing one wrote."""
    lc = LocalCluster(2, zookeeper="127.0.0.1:2181/x", base_dir=str(tmp_path))
    for broker_id in (0, 1):
        lc.logs[broker_id] = str(tmp_path / f"broker-{broker_id}.log")
        (tmp_path / f"broker-{broker_id}.log").write_text(f"starting\nbroker {broker_id}: connecting to ZooKeeper\n")
        lc.procs[broker_id] = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        lc.wait_registered(_Registered([1, 0]), 5)  # type: ignore[arg-type]
        with pytest.raises(ClusterError) as e:
            lc.wait_registered(_Registered([1]), 0.3)  # type: ignore[arg-type]
        assert str(e.value) == ("timed out after 0s waiting for 2 brokers to register; registered [1]; the last line "
                                "of each missing one's log: broker 0: broker 0: connecting to ZooKeeper")
    finally:
        for proc in lc.procs.values():
            proc.kill()
            proc.wait()


def test_an_ensemble_needs_a_data_dir_per_server() -> None:
    from zk_bridge.server import ZooKeeperEnsemble

    with pytest.raises(ValueError, match="3 servers need 3 data dirs, not 1"):
        ZooKeeperEnsemble(3, data_dirs=["one"])
