"""edges/netns.py: the subnet choice (pure), and — as root with iproute2 — a real layout: namespaces that
reach each other and the machine through the bridge and nothing else, removed by remove(), and removed by the
janitor when their creator is SIGKILLed."""

from __future__ import annotations

import ipaddress
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from edges.netns import NetnsLayout, NetnsUnavailable, pick_subnet, unavailable_reason

REPO = Path(__file__).resolve().parents[2]
# Every layout's create() sweeps what a dead pid left, so a test's stand-in orphan must not be swept by a layout of
# the other xdist worker (`ip link set kv<pid>-0 ...: Cannot find device`): every test creating a layout, here and in
# tests/cluster/test_cluster_netns.py, runs on one worker, one at a time
pytestmark = pytest.mark.xdist_group("netns")


def test_pick_subnet_takes_the_first_free_24_of_the_benchmark_range() -> None:
    net = ipaddress.ip_network
    assert pick_subnet([net("192.0.2.0/24"), net("127.0.0.0/8")]) == net("198.18.0.0/24")
    assert pick_subnet([net("198.18.0.0/24"), net("198.18.1.0/24")]) == net("198.18.2.0/24")
    assert pick_subnet([net("198.18.0.0/16")]) == net("198.19.0.0/24")  # a route over a whole /16 is avoided too
    with pytest.raises(NetnsUnavailable, match="every /24 of 198.18.0.0/15 is in use"):
        pick_subnet([net("198.16.0.0/13")])


def test_host_names_must_be_distinct() -> None:
    with pytest.raises(ValueError, match="distinct"):
        NetnsLayout(["a", "a"])


def _names() -> tuple[str, str]:
    return (subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout,
            subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=True).stdout)


needs_netns = pytest.mark.skipif(unavailable_reason() is not None, reason=f"{unavailable_reason()}")


@needs_netns
def test_a_layout_connects_its_hosts_and_the_machine_and_nothing_else() -> None:
    with NetnsLayout(["a", "b"], tag=str(os.getpid())) as layout:
        a, b = layout.host("a"), layout.host("b")
        assert layout.subnet is not None and str(layout.subnet).startswith("198.1")
        assert (a.address, b.address) == (str(layout.subnet.network_address + 10),
                                           str(layout.subnet.network_address + 11))
        # b listens on its address; a and the machine connect to it; nothing else is routed
        serve = ("import socket, sys; s = socket.create_server((sys.argv[1], 9092)); print(1, flush=True)\n"
                 "for _ in range(2): c, peer = s.accept(); c.sendall(peer[0].encode()); c.close()")
        server = subprocess.Popen(b.command([sys.executable, "-c", serve, b.address]), stdout=subprocess.PIPE,
                                  text=True)
        try:
            assert server.stdout is not None and server.stdout.readline().strip() == "1"
            probe = ("import socket, sys; c = socket.create_connection((sys.argv[1], 9092), timeout=5); "
                     "print(c.recv(100).decode())")
            seen_from_a = subprocess.run(a.command([sys.executable, "-c", probe, b.address]), capture_output=True,
                                         text=True, check=True, timeout=30).stdout.strip()
            seen_from_host = subprocess.run([sys.executable, "-c", probe, b.address], capture_output=True, text=True,
                                            check=True, timeout=30).stdout.strip()
            assert (seen_from_a, seen_from_host) == (a.address, layout.host_address)
        finally:
            server.kill()
            server.wait()
        unreachable = subprocess.run(a.command([sys.executable, "-c",
                                                "import socket; socket.create_connection(('192.0.2.1', 80), 2)"]),
                                     capture_output=True, text=True)
        assert "Network is unreachable" in unreachable.stderr
    netns, links = _names()
    assert f"kactor-{layout.tag}-" not in netns and layout.bridge not in links


@needs_netns
def test_the_janitor_removes_a_sigkilled_creators_layout() -> None:
    code = ("import time; from edges.netns import NetnsLayout; "
            "l = NetnsLayout(['x', 'y']).create(); print(l.tag, flush=True); time.sleep(120)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    try:
        assert proc.stdout is not None
        tag = proc.stdout.readline().strip()
        assert f"kactor-{tag}-x" in _names()[0]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (f"kactor-{tag}-" in _names()[0] or f"kbr{tag}" in _names()[1]):
        time.sleep(0.1)
    netns, links = _names()
    assert f"kactor-{tag}-" not in netns and f"kbr{tag}" not in links and f"kv{tag}-" not in links


def test_unavailable_reason_names_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    import edges.netns as netns

    monkeypatch.setattr(netns.shutil, "which", lambda name: "/usr/sbin/ip")
    monkeypatch.setattr(netns.os, "geteuid", lambda: 1000)
    assert netns.unavailable_reason() == ("--hosts netns creates network namespaces and a bridge, which needs root: "
                                          "run it as root (or without --hosts netns, on loopback)")
    with pytest.raises(NetnsUnavailable, match="needs root"):
        NetnsLayout(["a"]).create()
    monkeypatch.setattr(netns.shutil, "which", lambda name: None)
    assert netns.unavailable_reason() == "the `ip` command (iproute2) is not installed: apt-get install -y iproute2"


def test_only_a_layouts_own_names_count_as_leftovers() -> None:
    from edges.netns import STALE_LINK, STALE_NETNS

    assert STALE_NETNS.match("kactor-4242-broker-0").group(1) == "4242"  # type: ignore[union-attr]
    assert STALE_NETNS.match("kactor-4242-zk-1") and not STALE_NETNS.match("kactor-probe")
    assert STALE_LINK.match("kbr4242") and STALE_LINK.match("kv4242-3")
    assert not any(STALE_LINK.match(n) for n in ("kbr", "kbr-1", "kvm0", "kv4242", "kv4242-x", "eth0", "docker0"))


@needs_netns
def test_the_next_layout_removes_a_dead_creators_leftovers_and_nothing_else() -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    orphan = NetnsLayout(["p", "q"], tag=str(dead.pid)).create()  # as if its creator and janitor were SIGKILLed
    netns, links = _names()
    assert f"kactor-{dead.pid}-p" in netns and f"kbr{dead.pid}" in links
    mine = NetnsLayout(["r"], tag=str(os.getpid())).create()  # create() sweeps what a dead pid left
    try:
        netns, links = _names()
        assert f"kactor-{dead.pid}-" not in netns and f"kbr{dead.pid}" not in links and f"kv{dead.pid}-" not in links
        assert f"kactor-{mine.tag}-r" in netns and mine.bridge in links
    finally:
        orphan.remove()
        mine.remove()
