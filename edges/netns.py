"""Hosts of their own on one machine: Linux network namespaces on a private bridge (``kactor cluster --hosts netns``).

The layout, for hosts named e.g. zk-1, broker-0, broker-1:

- a bridge ``kbr<tag>`` in the machine's own namespace, holding the first address of a /24 from 198.18.0.0/15
  (RFC 2544's benchmark range, never routed on the Internet) that no interface or route of the machine uses yet:
  the shell of the machine (tests, admin tools) reaches every host through it;
- per host a namespace ``kactor-<tag>-<host>`` with loopback up and ``eth0``, one end of a veth pair whose other end
  (``kv<tag>-<i>``) is a port of the bridge, holding the host's own address (.10, .11, ... in the order given).

Nothing leaves the machine: no namespace has a default route (it reaches the bridge's /24 and nothing else, so it
cannot even answer a packet from elsewhere), the bridge does not forward (``net.ipv4.conf.<bridge>.forwarding=0``),
no NAT, and the bridge has no physical port. ``<tag>`` is the creating process's pid.

Everything created is registered with the janitor (edges/children.py) before it is created, so it is removed if the
creator dies, SIGKILL included; ``remove()`` removes it on an orderly stop. What a SIGKILL of both the creator and
its janitor left behind (names carrying a pid that no longer runs) is removed by the next layout's ``create()``.
Needs root and iproute2's ``ip``.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import os
import re
import shutil
import subprocess
from collections.abc import Sequence

import attrs

from edges.children import janitor

# RFC 2544 benchmark addresses: private to a lab, so a user's real networks (10/8, 172.16/12, 192.168/16) are untouched
ADDRESS_RANGE = ipaddress.ip_network("198.18.0.0/15")
FIRST_HOST_INDEX = 10  # .1 is the bridge (the machine's shell); hosts get .10, .11, ...
LOCK_PATH = "/run/lock/kactor-netns.lock"  # one layout at a time picks a free /24 and claims it
# the names a layout gives (the creator's pid in them): namespaces, then links (the bridge and the veths' host ends)
STALE_NETNS = re.compile(r"^kactor-(\d+)-[a-z0-9-]+$")
STALE_LINK = re.compile(r"^(?:kbr(\d+)|kv(\d+)-\d+)$")


class NetnsUnavailable(RuntimeError):  # noqa: N818 - reads as the condition it reports
    """Network namespaces cannot be set up here (not root, no ``ip``, or ``ip`` refused); one line saying why."""


@attrs.frozen
class NetHost:
    """One host of the layout: its name, its namespace and its address on the bridge."""

    name: str
    netns: str
    address: str

    def command(self, args: Sequence[str]) -> list[str]:
        """``args`` run inside this host's namespace (``ip netns exec`` execs them: the pid stays the same)."""
        return ["ip", "netns", "exec", self.netns, *args]


def unavailable_reason() -> str | None:
    """Why ``--hosts netns`` cannot run here, or None when it can (root and iproute2's ``ip`` present)."""
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is not installed: apt-get install -y iproute2"
    if os.geteuid() != 0:
        return ("--hosts netns creates network namespaces and a bridge, which needs root: run it as root "
                "(or without --hosts netns, on loopback)")
    return None


def _ip(*args: str) -> str:
    try:
        done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)
    except OSError as e:
        raise NetnsUnavailable(f"cannot run ip: {e}") from None
    if done.returncode != 0:
        raise NetnsUnavailable(f"`ip {' '.join(args)}` failed: {done.stderr.strip() or done.returncode}")
    return done.stdout


def _quiet_ip(*args: str) -> None:
    subprocess.run(["ip", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30, check=False)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale() -> list[str]:
    """Remove the namespaces and links of layouts whose creator (the pid in the name) no longer runs; their names."""
    removed: list[str] = []
    for line in _ip("netns", "list").splitlines():
        name = line.split()[0] if line.strip() else ""
        if (m := STALE_NETNS.match(name)) and not _pid_alive(int(m.group(1))):
            _quiet_ip("netns", "delete", name)
            removed.append(name)
    for line in _ip("-o", "link", "show").splitlines():
        name = line.split(":")[1].strip().split("@")[0] if ":" in line else ""
        if (m := STALE_LINK.match(name)) and not _pid_alive(int(m.group(1) or m.group(2))):
            _quiet_ip("link", "delete", name)
            removed.append(name)
    return removed


def networks_in_use() -> list[ipaddress.IPv4Network]:
    """Every IPv4 network the machine has an address in or a route to (any table)."""
    nets: list[ipaddress.IPv4Network] = []
    for line in _ip("-4", "-o", "addr", "show").splitlines():
        fields = line.split()
        if "inet" in fields:
            nets.append(ipaddress.ip_interface(fields[fields.index("inet") + 1]).network)
    for line in _ip("-4", "route", "show", "table", "all").splitlines():
        dest = line.split()[0] if line.strip() else ""
        if dest in ("broadcast", "local", "unicast", "multicast") and len(line.split()) > 1:
            dest = line.split()[1]
        with contextlib.suppress(ValueError):
            if dest != "default":
                nets.append(ipaddress.ip_network(dest, strict=False))  # type: ignore[arg-type]
    return nets


def pick_subnet(in_use: Sequence[ipaddress.IPv4Network]) -> ipaddress.IPv4Network:
    """The first /24 of ADDRESS_RANGE that overlaps nothing in ``in_use``."""
    for subnet in ADDRESS_RANGE.subnets(new_prefix=24):
        if not any(subnet.overlaps(n) for n in in_use):
            return subnet
    raise NetnsUnavailable(f"every /24 of {ADDRESS_RANGE} is in use on this machine")


class NetnsLayout:
    """The bridge and one namespace per host name; ``create()`` builds it, ``remove()`` takes it down."""

    def __init__(self, names: Sequence[str], tag: str | None = None) -> None:
        if len(set(names)) != len(names) or not names:
            raise ValueError(f"host names must be distinct and not empty: {list(names)}")
        if len(names) > 200:
            raise ValueError("at most 200 hosts on one bridge")
        self.names = tuple(names)
        self.tag = tag or str(os.getpid())
        self.bridge = f"kbr{self.tag}"
        self.subnet: ipaddress.IPv4Network | None = None
        self.hosts: dict[str, NetHost] = {}
        self._undo: list[list[str]] = []  # what create() did, as the commands that undo it, in creation order

    @property
    def host_address(self) -> str:
        """The bridge's address: how the machine's own namespace is seen from every host."""
        assert self.subnet is not None
        return str(self.subnet.network_address + 1)

    def host(self, name: str) -> NetHost:
        return self.hosts[name]

    def _did(self, undo: list[str]) -> None:
        # registered before the step runs: a SIGKILL between the two still leaves the janitor a command to run
        janitor().watch_undo(undo)
        self._undo.append(undo)

    def create(self) -> NetnsLayout:
        reason = unavailable_reason()
        if reason:
            raise NetnsUnavailable(reason)
        try:
            remove_stale()
            os.makedirs(os.path.dirname(LOCK_PATH), exist_ok=True)
            with open(LOCK_PATH, "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                self.subnet = pick_subnet(networks_in_use())
                self._did(["ip", "link", "delete", self.bridge])
                _ip("link", "add", self.bridge, "type", "bridge")
                _ip("addr", "add", f"{self.host_address}/24", "dev", self.bridge)
            with open(f"/proc/sys/net/ipv4/conf/{self.bridge}/forwarding", "w") as f:
                f.write("0\n")
            _ip("link", "set", self.bridge, "up")
            for i, name in enumerate(self.names):
                self._add_host(i, name)
        except BaseException:
            self.remove()
            raise
        return self

    def _add_host(self, i: int, name: str) -> None:
        assert self.subnet is not None
        netns, veth = f"kactor-{self.tag}-{name}", f"kv{self.tag}-{i}"
        address = str(self.subnet.network_address + FIRST_HOST_INDEX + i)
        self._did(["ip", "netns", "delete", netns])
        _ip("netns", "add", netns)
        self._did(["ip", "link", "delete", veth])
        _ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", netns)
        _ip("link", "set", veth, "master", self.bridge, "up")
        _ip("-n", netns, "addr", "add", f"{address}/24", "dev", "eth0")
        _ip("-n", netns, "link", "set", "eth0", "up")
        _ip("-n", netns, "link", "set", "lo", "up")
        self.hosts[name] = NetHost(name, netns, address)

    def remove(self) -> None:
        """Delete every veth, namespace and the bridge (the hosts' processes must have stopped: a namespace lives
        on, nameless, while a process runs in it)."""
        while self._undo:
            undo = self._undo.pop()
            subprocess.run(undo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30, check=False)
            janitor().forget_undo(undo)
        self.hosts.clear()

    def __enter__(self) -> NetnsLayout:
        return self.create()

    def __exit__(self, *exc: object) -> None:
        self.remove()
