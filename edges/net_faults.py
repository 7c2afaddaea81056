"""Fault injection at the transport edge: network partitions between kactor processes, for `kactor chaos`.

A process whose environment names a fault file (``KACTOR_NET_FAULTS=<path>``) has its transport poll that file; no
variable, no polling, no faults. The file is JSON written by the chaos runner (replaced atomically):

    {"partitions": [["127.0.0.1:40001", "127.0.0.1:40002"], ...],
     "delays": [["127.0.0.1:40001", "127.0.0.1:40002", 200], ...]}

Each pair is cut in both directions: the transport listening on one end neither opens nor keeps a connection to the
other. Every kactor exchange is a request on the sender's outbound connection with its answer on that same
connection, so with both ends refusing their outbound side nothing crosses the pair — ZooKeeper is untouched, as
in a partition between two brokers' racks. A delay ``[a, b, ms]`` slows the pair instead (kactor.testing's
``slow_link``): each end holds every request it sends to the other for ``ms`` before writing it, so a request and
its answer cross the link about ``ms`` later, as over a slow WAN link. The file is only read as JSON text, never
unpickled, and it names only endpoints; a malformed file is logged and the rules in force are kept.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

log = logging.getLogger("kactor.edges.net_faults")

FAULTS_ENV = "KACTOR_NET_FAULTS"
POLL_S = 0.1
PARTITIONED = "network partition (fault injection)"


def endpoint(host: str, port: int) -> str:
    return f"{host}:{int(port)}"


def parse_rules(text: str, own: str) -> frozenset[str]:
    """The endpoints ``own`` is cut off from under the rules ``text``; ValueError on a malformed file."""
    data: Any = json.loads(text) if text.strip() else {}
    if not isinstance(data, dict):
        raise ValueError("the fault file must hold a JSON object")
    pairs = data.get("partitions", [])
    if not isinstance(pairs, list):
        raise ValueError('"partitions" must be a list of [endpoint, endpoint] pairs')
    blocked: set[str] = set()
    for pair in pairs:
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(e, str) for e in pair)):
            raise ValueError(f"not an [endpoint, endpoint] pair: {pair!r}")
        a, b = pair
        if a == own:
            blocked.add(b)
        elif b == own:
            blocked.add(a)
    return frozenset(blocked)


def parse_delays(text: str, own: str) -> dict[str, float]:
    """Endpoint → seconds ``own`` holds each request to it under the rules ``text``; ValueError on a malformed
    file (the largest delay wins where a pair is named twice)."""
    data: Any = json.loads(text) if text.strip() else {}
    if not isinstance(data, dict):
        raise ValueError("the fault file must hold a JSON object")
    rules = data.get("delays", [])
    if not isinstance(rules, list):
        raise ValueError('"delays" must be a list of [endpoint, endpoint, ms] rules')
    delays: dict[str, float] = {}
    for rule in rules:
        if not (isinstance(rule, list) and len(rule) == 3 and isinstance(rule[0], str) and isinstance(rule[1], str)
                and isinstance(rule[2], (int, float)) and not isinstance(rule[2], bool) and rule[2] >= 0):
            raise ValueError(f"not an [endpoint, endpoint, ms >= 0] rule: {rule!r}")
        a, b, ms = rule
        other = b if a == own else a if b == own else None
        if other is not None:
            delays[other] = max(delays.get(other, 0.0), ms / 1000.0)
    return delays


def write_rules(path: str, pairs: list[tuple[str, str]],
                delays: list[tuple[str, str, float]] | None = None) -> None:
    """Replace the fault file atomically (the runner's side): a transport never reads half a file."""
    tmp = f"{path}.tmp"
    data: dict[str, Any] = {"partitions": [list(p) for p in pairs]}
    if delays:
        data["delays"] = [[a, b, ms] for a, b, ms in delays]
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f)
    os.replace(tmp, path)


class FaultFile:
    """Polled by the transport's I/O thread: ``poll(now)`` returns the new blocked set when the file changed."""

    def __init__(self, path: str, own: str) -> None:
        self.path = path
        self.own = own
        self.blocked: frozenset[str] = frozenset()
        # endpoint → seconds a send to it is held (slow_link); read by the outbound side at each send
        self.delays: dict[str, float] = {}
        self._seen: tuple[int, ...] | None = None
        self._next = 0.0

    @classmethod
    def from_env(cls, own: str) -> FaultFile | None:
        path = os.environ.get(FAULTS_ENV)
        return cls(path, own) if path else None

    def poll(self, now: float) -> frozenset[str] | None:
        if now < self._next:
            return None
        self._next = now + POLL_S
        try:
            st = os.stat(self.path)
            key = (st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_size)
        except FileNotFoundError:
            key = None
        except OSError as e:
            log.warning("fault file %s unreadable: %s", self.path, e)
            return None
        if key == self._seen:
            return None
        self._seen = key
        try:
            if key is None:
                blocked: frozenset[str] = frozenset()
                delays: dict[str, float] = {}
            else:
                with open(self.path, encoding="utf-8") as f:
                    text = f.read()
                blocked = parse_rules(text, self.own)
                delays = parse_delays(text, self.own)
        except (OSError, ValueError) as e:
            log.warning("fault file %s ignored (rules in force kept): %s", self.path, e)
            return None
        if delays != self.delays:
            log.warning("%s: slow links %s", self.own, delays or "none (healed)")
            self.delays = delays
        if blocked == self.blocked:
            return None
        log.warning("%s: network partition from %s", self.own, sorted(blocked) or "nobody (healed)")
        self.blocked = blocked
        return blocked
