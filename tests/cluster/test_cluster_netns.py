"""Issue #22: ``--hosts netns`` — every broker and every ZooKeeper server of a 3-server ensemble in a network
namespace of its own, with its own address on a private bridge; the test (the machine's shell) reaches them
through the bridge. A topic is created and written, a broker is killed and comes back, a reassignment completes;
every broker registers exactly its own namespace address, and the connections (ZooKeeper sessions, the controller's
channels, replica fetches) are seen arriving from the other namespaces' addresses. Everything is removed at the end.

Needs root and iproute2 (skipped otherwise, with the reason).
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_helpers import DEFAULT_WAIT_S, TEST_SESSION_TIMEOUT_MS, Cluster, run_kactor, segment_records

from edges.netns import NetnsLayout, NetnsUnavailable, unavailable_reason
from kactor.cluster import LocalCluster
from zk_bridge.server import four_letter

# one worker runs the module: its module-scoped cluster writes a fixed trace folder, and its tests share topics; and
# the group is that of tests/edges/test_edges_netns.py, whose stand-in orphans a layout created here would sweep
pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.xdist_group("netns")]


@pytest.fixture(scope="module")
def netns_available() -> None:
    reason = unavailable_reason()
    if reason is None:
        try:  # root in a container may still be refused namespaces: try one
            NetnsLayout(["probe"], tag=f"{os.getpid()}").create().remove()
        except NetnsUnavailable as e:
            reason = str(e)
    if reason:
        pytest.skip(f"network namespaces unavailable: {reason}")


@pytest.fixture
def netns_cluster(netns_available: None, tmp_path: Path, cluster_trace_root: Path) -> Iterator[Cluster]:
    lc = LocalCluster(3, hosts="netns", zookeeper_ensemble=3, zk_tick_ms=500, base_dir=str(tmp_path / "cluster"),
                      trace_dir=str(cluster_trace_root / "test_netns_cluster"),
                      overrides=[f"zookeeper.session.timeout.ms={TEST_SESSION_TIMEOUT_MS}",
                                 "controlled.shutdown.retry.backoff.ms=200"])
    c = Cluster(lc)
    try:
        yield c.start()
    finally:
        c.stop()


def _ip(*args: str) -> str:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=True).stdout


def _peers_of(c: Cluster, broker_id: int) -> set[str]:
    """The addresses with an established connection to broker ``broker_id``'s listener, seen inside its namespace."""
    host = c.lc.broker_host(broker_id)
    assert host is not None
    out = subprocess.run(host.command(["ss", "-Htn", "state", "established", "( sport = :9092 )"]),
                         capture_output=True, text=True, check=True).stdout
    return {line.split()[-1].rsplit(":", 1)[0] for line in out.splitlines() if line.strip()}


def _registration(c: Cluster, broker_id: int) -> tuple[str, str]:
    """(the /brokers/ids/<id> bytes as text, the text a 2.6 broker at its namespace address writes)."""
    host = c.lc.broker_host(broker_id)
    assert host is not None
    text = c.zk.get(f"/brokers/ids/{broker_id}")[0].decode()
    stamp = json.loads(text)["timestamp"]
    assert re.fullmatch(r"\d{13}", stamp), text
    a = host.address
    return text, ('{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
                  f'"endpoints":["PLAINTEXT://{a}:9092"],"jmx_port":-1,"port":9092,"host":"{a}","version":4,'
                  f'"timestamp":"{stamp}"}}')


def test_brokers_and_zookeeper_servers_on_hosts_of_their_own(netns_cluster: Cluster) -> None:
    c, lc = netns_cluster, netns_cluster.lc
    layout = lc.layout
    assert layout is not None and layout.subnet is not None
    tag = layout.tag
    brokers = {b: lc.broker_host(b) for b in range(3)}
    addresses = {b: h.address for b, h in brokers.items() if h is not None}
    zk_hosts = [layout.host(f"zk-{i}") for i in (1, 2, 3)]
    # seven distinct addresses of one private /24: the bridge (this machine) and six hosts
    every = [layout.host_address, *addresses.values(), *(h.address for h in zk_hosts)]
    assert len(set(every)) == 7 and all(ipaddress.ip_address(a) in layout.subnet for a in every)
    assert lc.connect_string == ",".join(f"{h.address}:2181" for h in zk_hosts)

    # nothing beyond the bridge: each namespace routes its /24 and nothing else (no default route), no forwarding
    for h in [*brokers.values(), *zk_hosts]:
        assert h is not None
        routes = _ip("-n", h.netns, "-4", "route", "show", "table", "all").splitlines()
        assert [r.split()[0] for r in routes if not r.startswith(("local", "broadcast"))] == [str(layout.subnet)]
    with open(f"/proc/sys/net/ipv4/conf/{layout.bridge}/forwarding") as f:
        assert f.read().strip() == "0"

    # every broker registered exactly its own namespace address (Kafka 2.6's v4 JSON, byte for byte)
    for b in range(3):
        actual, expected = _registration(c, b)
        assert actual == expected
    # ... and its ZooKeeper session comes from that address (the ensemble's `cons` lists each client's source)
    def sessions_from() -> set[str]:
        return {m for h in zk_hosts for m in re.findall(r"^\s*/([\d.]+):\d+\[", four_letter(h.address, 2181, "cons"),
                                                          re.M)}
    c.wait(lambda: set(addresses.values()) <= sessions_from(), what="a ZooKeeper session from every broker host")

    # a topic, written from this machine through the bridge; replicas fetch across the namespaces
    c.create_topic("t", assignment={0: [0, 1, 2], 1: [1, 2, 0]})
    for p in (0, 1):
        c.wait_partition("t", p, lambda s: sorted(s["isr"]) == [0, 1, 2], what=f"t-{p} ISR of 3")
    out = run_kactor("produce", "--zookeeper", c.connect_string, "--topic", "t", "--partition", "0",
                     "--count", "5", "--acks", "all").stdout
    assert out.startswith("t-0: 5 records at base offset 0 "), out
    controller = c.controller_id()
    assert controller is not None
    for b in range(3):
        # the controller's channel reaches every other broker from the controller's own address, and the
        # followers' fetchers reach the leaders (t-0 led by 0, t-1 by 1) from theirs
        expected_peers = {addresses[x] for x in range(3) if x != b and (x == controller or b in (0, 1))}
        c.wait(lambda b=b, e=expected_peers: e <= _peers_of(c, b),
               what=f"connections to broker {b} from {sorted(expected_peers)}")

    # a broker killed: its session expires, the controller moves t-1's leadership off it
    victim = 1 if controller != 1 else 2
    c.kill(victim)
    c.wait(lambda: victim not in c.live_brokers(), DEFAULT_WAIT_S + TEST_SESSION_TIMEOUT_MS / 1000,
           f"broker {victim}'s registration gone")
    for p in (0, 1):
        st = c.wait_partition("t", p, lambda s: victim not in s["isr"] and s["leader"] not in (victim, -1),
                              what=f"t-{p} without {victim}")
        assert sorted(st["isr"]) == sorted({0, 1, 2} - {victim})
    # back on the same host: the same address registered again
    c.restart(victim)
    actual, expected = _registration(c, victim)
    assert actual == expected

    # a reassignment: t-0 from [0, 1, 2] to [2, 1] (broker 0's replica removed)
    plan = Path(lc.base_dir) / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [2, 1]}]}))
    run_kactor("reassign-partitions", "--zookeeper", c.connect_string, "--execute", "--reassignment-json-file",
               str(plan))
    c.wait(lambda: not c.zk.exists("/admin/reassign_partitions"), DEFAULT_WAIT_S + TEST_SESSION_TIMEOUT_MS / 1000,
           "the reassignment of t-0 to complete")
    assert c.json("/brokers/topics/t") == {"version": 2, "partitions": {"0": [2, 1], "1": [1, 2, 0]},
                                           "adding_replicas": {}, "removing_replicas": {}}
    st = c.wait_partition("t", 0, lambda s: sorted(s["isr"]) == [1, 2], what="t-0 ISR [1, 2]")
    assert st["leader"] in (1, 2)
    for b in (1, 2):
        c.wait(lambda b=b: [r[2] for r in segment_records(c, b, "t", 0)] == [f"record-{i}" for i in range(5)],
               what=f"broker {b}'s replica of t-0 holds the 5 records")

    # stopped: every namespace, veth and the bridge removed
    c.stop()
    assert f"kactor-{tag}-" not in _ip("netns", "list")
    links = _ip("-o", "link", "show")
    assert f"kbr{tag}" not in links and f"kv{tag}-" not in links


def test_a_sigkilled_netns_cluster_command_leaves_nothing(netns_available: None, tmp_path: Path) -> None:
    """``kactor cluster --hosts netns`` SIGKILLed: its janitor stops the broker and the ZooKeeper server, then
    removes their namespaces, veths and the bridge."""
    proc = subprocess.Popen([sys.executable, "-m", "kactor", "cluster", "--brokers", "1", "--hosts", "netns",
                             "--data-dir", str(tmp_path / "data")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("Ctrl-C to stop"):
                break
        bridge = re.search(r"on bridge (kbr\d+),", "".join(lines))
        assert bridge is not None, "".join(lines)
        tag = bridge.group(1)[3:]
        assert f"kactor-{tag}-broker-0" in _ip("netns", "list") and f"kactor-{tag}-zk-1" in _ip("netns", "list")
        # the broker and the ZooKeeper JVM, found by the namespace they run in
        inside = [int(p) for name in ("broker-0", "zk-1") for p in _ip("netns", "pids", f"kactor-{tag}-{name}").split()]
        assert len(inside) >= 2 and _pids_mentioning(str(tmp_path / "data")), inside
    finally:
        proc.kill()
        proc.wait()

    def gone() -> bool:
        links = _ip("-o", "link", "show")
        return (f"kactor-{tag}-" not in _ip("netns", "list") and f"kbr{tag}" not in links
                and f"kv{tag}-" not in links and not any(os.path.exists(f"/proc/{p}") for p in inside))
    deadline = time.monotonic() + 30
    while not gone() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert gone(), (_ip("netns", "list"), [p for p in inside if os.path.exists(f"/proc/{p}")])


def _pids_mentioning(text: str) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != os.getpid():
            try:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    if text.encode() in f.read():
                        out.append(int(d))
            except OSError:
                pass
    return out


def test_hosts_netns_argument_errors() -> None:
    """Bad combinations stop before anything starts, with one line and exit 2 (no root needed)."""
    both = subprocess.run([sys.executable, "-m", "kactor", "cluster", "--hosts", "netns", "--zookeeper",
                           "127.0.0.1:2181"], capture_output=True, text=True, timeout=60)
    assert both.returncode == 2
    assert both.stderr.strip().splitlines()[-1].endswith(
        "--hosts netns runs its own ZooKeeper in namespaces: --zookeeper cannot be given")
    bogus = subprocess.run([sys.executable, "-m", "kactor", "cluster", "--hosts", "vms"], capture_output=True,
                           text=True, timeout=60)
    assert bogus.returncode == 2 and "invalid choice: 'vms' (choose from 'loopback', 'netns')" in bogus.stderr
