"""A fault file's delay rule (edges/net_faults.py, kactor.testing's slow_link): which peers a process slows and by
how much, and two live runtimes whose requests to each other are held for the delay on the outbound I/O thread
while a third process's are not, then released at once when the rule is removed."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from edge_support import EdgeEcho, poll

from edges.net_faults import parse_delays, parse_rules, write_rules
from messages.net import NetResponse, NetSend, NetSendFailed

LOOPBACK = "127.0.0.1"


def test_delays_slow_both_ends_of_a_pair_and_nothing_else() -> None:
    text = ('{"partitions": [], "delays": [["127.0.0.1:1", "127.0.0.1:2", 250], ["127.0.0.1:3", "127.0.0.1:1", 10],'
            ' ["127.0.0.1:2", "127.0.0.1:1", 400]]}')
    assert parse_delays(text, "127.0.0.1:1") == {"127.0.0.1:2": 0.4, "127.0.0.1:3": 0.01}  # the largest wins
    assert parse_delays(text, "127.0.0.1:2") == {"127.0.0.1:1": 0.4}
    assert parse_delays(text, "127.0.0.1:9") == {}
    assert parse_rules(text, "127.0.0.1:1") == frozenset()  # a delay is no cut
    assert parse_delays('{"partitions": [["a", "b"]]}', "a") == {}


@pytest.mark.parametrize("text", ['{"delays": {"a": 1}}', '{"delays": [["a", "b"]]}', '{"delays": [["a", "b", -1]]}',
                                  '{"delays": [["a", "b", "9"]]}', '{"delays": [["a", "b", true]]}'])
def test_malformed_delays_are_an_error(text: str) -> None:
    with pytest.raises(ValueError):
        parse_delays(text, "a")


def _ask_timed(node: Any, port: int, rid: int) -> tuple[Any, float]:
    """One echo request from ``node`` to the process on ``port``: its answer and how long it took."""
    start = time.monotonic()
    node.rt.inject("net", NetSend(LOOPBACK, port, "echo", EdgeEcho(str(rid)), rid, "client"), sender="test")
    found: list[Any] = []

    def answered() -> bool:
        found[:] = [r.body for r in list(node.rec.records)
                    if isinstance(r.body, (NetResponse, NetSendFailed)) and r.body.request_id == rid]
        return bool(found)
    assert poll(answered, 5.0), f"request {rid} was never answered"
    return found[0], time.monotonic() - start


def test_a_slow_link_holds_each_request_for_its_delay_then_heals(make_node: Any, tmp_path: Path) -> None:
    faults = str(tmp_path / "faults.json")
    a, b = make_node("a", fault_file=faults), make_node("b", fault_file=faults)
    c = make_node("c", fault_file=faults)
    ea, eb = f"{LOOPBACK}:{a.port}", f"{LOOPBACK}:{b.port}"
    assert _ask_timed(a, b.port, 1)[0] == NetResponse(1, EdgeEcho("1"))  # connected before the rule

    write_rules(faults, [], [(ea, eb, 600)])
    assert poll(lambda: a.net._faults.delays == {eb: 0.6} and b.net._faults.delays == {ea: 0.6}, 3.0)
    for node, port, rid in ((a, b.port, 2), (b, a.port, 3)):
        answer, took = _ask_timed(node, port, rid)
        assert answer == NetResponse(rid, EdgeEcho(str(rid)))
        assert 0.55 <= took < 2.0, took
    answer, took = _ask_timed(c, a.port, 4)  # a third process is not slowed
    assert answer == NetResponse(4, EdgeEcho("4")) and took < 0.5, took

    write_rules(faults, [])
    assert poll(lambda: not a.net._faults.delays and not b.net._faults.delays, 3.0)
    answer, took = _ask_timed(a, b.port, 5)
    assert answer == NetResponse(5, EdgeEcho("5")) and took < 0.5, took
