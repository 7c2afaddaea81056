"""ZooKeeperEnsemble and `kactor zookeeper --ensemble 3` (issue #22); ZooKeeper dies with its launcher (issue #19).

Real Debian ZooKeeper servers forming a quorum on loopback: a quorum answers, the leader is known, a client's session
survives the leader's crash, a restarted server rejoins with its data, and no JVM or directory outlives its owner
(even a SIGKILLed one).
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from kazoo.retry import ForceRetryError
from zk_test_helpers import DEADLINE_S, LOOPBACK_HEX, Recorder, listening_addresses, pid_alive, wait_for

from messages.zk import NODEEXISTS, OK, Create, GetChildren, GetData, SetData, ZkBatch, ZkWatchEvent
from tests.support.kazoo_clients import kazoo_client
from zk_bridge.executor import RECONNECT_MAX_DELAY_S, ZkExecutor, connect, reconnect_policy
from zk_bridge.server import ZooKeeperEnsemble, ZooKeeperUnavailable, four_letter

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.cluster
@pytest.mark.slow
def test_ensemble_quorum_leader_crash_and_restart() -> None:
    ens = ZooKeeperEnsemble(3, tick_ms=200, max_session_timeout_ms=20000).start()
    try:
        hosts = ens.connect_string.split(",")
        assert hosts == [f"127.0.0.1:{s.port}" for s in ens.servers] and len(set(hosts)) == 3
        ens.wait_serving()
        modes = ens.modes()
        assert sorted(modes) == ["follower", "follower", "leader"], modes  # type: ignore[type-var]
        leader = ens.leader()
        assert modes[leader] == "leader"
        for s in ens.servers:  # client and quorum sockets bind loopback only
            assert listening_addresses(s.port) <= LOOPBACK_HEX and listening_addresses(s.port)
            for peer in s.peers:
                assert listening_addresses(peer.election_port) <= LOOPBACK_HEX
            assert (Path(s.data_dir or "") / "myid").read_text().strip() == str(s.myid)

        # A write through one server is read through another: one replicated state.
        follower = next(i for i in range(3) if i != leader)
        with kazoo_client(ens.servers[follower].connect_string, timeout=6.0) as writer, \
                kazoo_client(ens.servers[leader].connect_string, timeout=6.0) as reader:
            writer.create("/written-via-follower", b"v1")
            reader.sync("/written-via-follower")
            assert reader.get("/written-via-follower")[0] == b"v1"

        # A session on the whole ensemble survives the leader's crash: same session, its ephemeral kept.
        with kazoo_client(ens.connect_string, timeout=8.0) as c:
            _crash_leader_and_restart(ens, c, leader)

        # Two of three down: no quorum, so the ensemble is not ready.
        new_leader = ens.leader()
        for i in range(3):
            if i != new_leader:
                ens.kill(i)
        with pytest.raises(ZooKeeperUnavailable, match="no ZooKeeper quorum"):
            ens.wait_quorum(timeout=2)
    finally:
        pids = [s.pid for s in ens.servers]
        dirs = [s.work_dir for s in ens.servers]
        ens.stop()
    assert not any(pid_alive(p) for p in pids if p)
    assert not any(d and os.path.exists(d) for d in dirs)


def _crash_leader_and_restart(ens: ZooKeeperEnsemble, c: KazooClient, leader: int) -> None:
    """Kill the leader under a live session: a new leader, the same session and ephemeral; the crashed server then
    rejoins as a follower with the write made while it was down."""
    session = c.client_id[0]
    c.create("/owned", b"x", ephemeral=True)
    killed_pid = ens.servers[leader].pid
    assert killed_pid is not None
    ens.kill(leader)
    assert not pid_alive(killed_pid)
    new_leader = ens.wait_quorum(30)
    assert new_leader != leader
    c.retry(c.set, "/written-via-follower", b"v2")  # ConnectionLoss while no member serves: sent again
    assert c.client_id[0] == session
    assert c.exists("/owned").ephemeralOwner == session

    # The crashed server comes back with its myid and data and follows the new leader.
    ens.restart(leader)
    assert ens.servers[leader].mode() == "follower"
    assert ens.leader() == new_leader
    with kazoo_client(ens.servers[leader].connect_string, timeout=6.0) as back:
        back.sync("/written-via-follower")
        assert back.get("/written-via-follower")[0] == b"v2"


def test_ensemble_needs_a_server() -> None:
    with pytest.raises(ValueError, match="at least 1 server"):
        ZooKeeperEnsemble(0)


def _kactor(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "kactor", *args], cwd=REPO, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))


def _jvm_children(pid: int) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid and "java" in stat.split(")")[0]:
                out.append(int(d))
    return out


@pytest.mark.cluster
@pytest.mark.slow
def test_cli_ensemble_ready_then_sighup_stops_everything() -> None:
    proc = _kactor("zookeeper", "--ensemble", "3", "--tick-ms", "200")
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        prefix = "zookeeper ensemble of 3 (leader: server "
        assert line.startswith(prefix) and " ready at " in line, (line, proc.stderr.read() if proc.stderr else "")
        hosts = line.strip().rsplit(" ", 1)[1].split(",")
        ports = [int(h.split(":")[1]) for h in hosts]
        assert len(ports) == 3 and all(h.startswith("127.0.0.1:") for h in hosts)

        def modes_now() -> list[str] | None:  # ready = a quorum serves; the third may still be syncing
            try:
                found = [[x for x in four_letter("127.0.0.1", p, "srvr").splitlines() if x.startswith("Mode:")]
                         for p in ports]
            except ConnectionRefusedError:  # the third still starting: its client port not open yet
                return None
            return [m[0] for m in found] if all(found) else None

        modes = wait_for(modes_now, 30, "all three servers to serve")
        assert sum(m == "Mode: leader" for m in modes) == 1
        leader_id = int(line[len(prefix):].split(")")[0])
        assert modes[leader_id - 1] == "Mode: leader"
        jvms = _jvm_children(proc.pid)
        assert len(jvms) == 3
        proc.send_signal(signal.SIGHUP)  # the terminal closed: an orderly stop, as on SIGTERM
        assert proc.wait(timeout=30) == 0
        assert not any(pid_alive(p) for p in jvms)
        assert not any(listening_addresses(p) for p in ports)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cli_ensemble_bad_arguments() -> None:
    for args, message in ((("--ensemble", "0"), "--ensemble must be at least 1"),
                          (("--ensemble", "3", "--data-dir", "x"), "--data-dir is for a standalone server")):
        proc = _kactor("zookeeper", *args)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 2 and message in err and err.strip().count("\n") == 0, err


_OWNER = textwrap.dedent("""
    import sys, time
    from zk_bridge.server import EmbeddedZooKeeper
    zk = EmbeddedZooKeeper(tick_ms=200).start()
    print(zk.pid, zk.work_dir, flush=True)
    time.sleep(600)
""")


@pytest.mark.cluster
@pytest.mark.slow
def test_zookeeper_dies_with_a_sigkilled_owner() -> None:
    owner = subprocess.Popen([sys.executable, "-c", _OWNER], cwd=REPO, text=True, stdout=subprocess.PIPE,
                             env=dict(os.environ, PYTHONPATH=str(REPO)))
    try:
        jvm_text, work_dir = (owner.stdout.readline() if owner.stdout else "").split()
        jvm = int(jvm_text)
        assert pid_alive(jvm) and os.path.isdir(work_dir)
        owner.kill()  # no cleanup code of the owner runs
        owner.wait()
        wait_for(lambda: not pid_alive(jvm), 10, "the ZooKeeper JVM to die with its owner (PR_SET_PDEATHSIG)")
        wait_for(lambda: not os.path.exists(work_dir), 10, "the janitor to remove the server's directory")
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()


@pytest.mark.cluster
@pytest.mark.slow
def test_executor_rides_out_a_lost_quorum() -> None:
    """Kafka's ZooKeeperClient on a disconnection: requests wait for the reconnection and are re-sent, watches are
    re-armed, and no expiry is reported while the session lives — here through seconds without any quorum (2 of 3
    servers down), long enough for kazoo's default doubling backoff to have reached several seconds."""
    ens = ZooKeeperEnsemble(3, tick_ms=200, max_session_timeout_ms=20000).start()
    client = connect(ens.connect_string, session_timeout_ms=15000)
    ex = ZkExecutor(client)
    rec = Recorder(ex)
    box: queue.Queue = queue.Queue()
    try:
        ens.wait_serving()
        session = client.client_id[0]
        client.create("/watched", b"0")
        client.create("/kids")
        ex.submit(ZkBatch((GetData("/watched", watch=True), GetChildren("/kids", watch=True))), box.put)
        assert [r.code for r in box.get(timeout=DEADLINE_S)] == [OK, OK]

        survivor = ens.leader()
        down = [i for i in range(3) if i != survivor]
        for i in down:
            ens.kill(i)
        wait_for(lambda: "SUSPENDED" in rec.states(), what="SUSPENDED")
        # Submitted with no quorum: the ops wait (CONNECTIONLOSS is never surfaced) instead of failing.
        ex.submit(ZkBatch((SetData("/watched", "1"), Create("/kids/a", "x"))), box.put)
        outage_end = time.monotonic() + 5.0
        while time.monotonic() < outage_end:  # the outage itself (the scenario), not a wait for a state
            assert box.empty() and "EXPIRED" not in rec.states()
            time.sleep(0.2)
        for i in down:
            ens.servers[i].launch()
        ens.wait_quorum(30)

        results = box.get(timeout=30)
        # The ops may have reached the old leader before the connection dropped. Re-sent after the reconnect (as
        # Kafka's retryRequestsUntilConnected), the unconditional setData is applied again (version 2) and the create
        # answers NODEEXISTS (the controller adopts such a create of its own: partition_state_machine). Either way
        # each took effect, and no CONNECTIONLOSS was surfaced.
        assert results[0].code == OK and results[0].stat is not None
        assert results[0].stat.version in (1, 2) and client.get("/watched")[0] == b"1"
        assert results[1].code in (OK, NODEEXISTS), results[1]
        assert client.get("/kids/a")[0] == b"x" and client.get_children("/kids") == ["a"]
        wait_for(lambda: len(rec.watches) >= 2, 30, "the re-armed watches to fire")
        # (a re-applied setData fires the re-armed watch once more)
        assert sorted(set(rec.watches), key=lambda e: e.path) == [ZkWatchEvent("/kids", "CHILD"),
                                                                  ZkWatchEvent("/watched", "CHANGED")]
        states = rec.states()
        assert "EXPIRED" not in states and "REESTABLISHED" not in states, states
        assert states[-1] == "CONNECTED" and rec.sessions[-1].session_id == session
        # the SUSPENDED event names the session that lives on
        assert all(e.session_id == session for e in rec.sessions if e.state == "SUSPENDED")
    finally:
        ex.close()
        client.stop()
        client.close()
        ens.stop()


def test_clients_reconnect_at_most_a_second_apart() -> None:
    """connect()'s kazoo client retries forever, never more than RECONNECT_MAX_DELAY_S (1 s, as Java's ClientCnxn)
    apart (± kazoo's 40 % jitter), instead of kazoo's default doubling up to an hour (the 12th wait would be ~200 s)."""
    policy = reconnect_policy()
    sleeps: list[float] = []
    policy.sleep_func = sleeps.append
    failures = iter(range(12))

    def attempt() -> str:  # kazoo's connection loop raises ForceRetryError after each failed round of hosts
        if next(failures, None) is not None:
            raise ForceRetryError("Reconnecting")
        return "connected"

    assert policy.max_tries == -1
    assert policy(attempt) == "connected" and len(sleeps) == 12
    assert max(sleeps) <= RECONNECT_MAX_DELAY_S * 1.4 and min(sleeps[-6:]) >= RECONNECT_MAX_DELAY_S * 0.6
    assert sleeps[0] <= 0.1 * 1.4
