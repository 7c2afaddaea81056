"""Fault injection at the transport edge (edges/net_faults.py): the rules of a fault file, and two live
runtimes partitioned from each other and healed through it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from edge_support import EdgeEcho, poll

from edges.net_faults import PARTITIONED, parse_rules, write_rules
from messages.net import NetResponse, NetSend, NetSendFailed

LOOPBACK = "127.0.0.1"


def test_rules_cut_both_ends_of_a_pair_and_nothing_else() -> None:
    text = '{"partitions": [["127.0.0.1:1", "127.0.0.1:2"], ["127.0.0.1:3", "127.0.0.1:1"], ["h:4", "h:5"]]}'
    assert parse_rules(text, "127.0.0.1:1") == {"127.0.0.1:2", "127.0.0.1:3"}
    assert parse_rules(text, "127.0.0.1:2") == {"127.0.0.1:1"}
    assert parse_rules(text, "127.0.0.1:9") == frozenset()
    assert parse_rules("", "127.0.0.1:1") == frozenset()
    assert parse_rules('{"partitions": []}', "127.0.0.1:1") == frozenset()


@pytest.mark.parametrize("text", ['[1, 2]', '{"partitions": {"a": "b"}}', '{"partitions": [["a"]]}',
                                  '{"partitions": [["a", 2]]}', '{"partitions": [', 'nonsense'])
def test_malformed_rules_are_an_error(text: str) -> None:
    with pytest.raises(ValueError):
        parse_rules(text, "a")


def _ask(node: Any, port: int, rid: int) -> Any:
    """One echo request from ``node`` to the process on ``port``; its answer (NetResponse or NetSendFailed)."""
    node.rt.inject("net", NetSend(LOOPBACK, port, "echo", EdgeEcho(str(rid)), rid, "client"), sender="test")
    found: list[Any] = []

    def answered() -> bool:
        found[:] = [r.body for r in list(node.rec.records)
                    if isinstance(r.body, (NetResponse, NetSendFailed)) and r.body.request_id == rid]
        return bool(found)
    assert poll(answered, 5.0), f"request {rid} was never answered"
    return found[0]


def test_partition_between_two_processes_cuts_both_directions_then_heals(make_node: Any, tmp_path: Path) -> None:
    faults = str(tmp_path / "faults.json")
    a, b = make_node("a", fault_file=faults), make_node("b", fault_file=faults)
    c = make_node("c", fault_file=faults)
    ea, eb = f"{LOOPBACK}:{a.port}", f"{LOOPBACK}:{b.port}"
    assert _ask(a, b.port, 1) == NetResponse(1, EdgeEcho("1"))
    assert a.net.connection_count() == (0, 1)

    write_rules(faults, [(ea, eb)])
    assert poll(lambda: a.net.partitioned_from == {eb} and b.net.partitioned_from == {ea}, 3.0)
    assert c.net.partitioned_from == frozenset()
    assert a.net.connection_count() == (0, 0)  # the open connection was cut
    for node, port, rid in ((a, b.port, 2), (b, a.port, 3)):
        failed = _ask(node, port, rid)
        assert isinstance(failed, NetSendFailed) and PARTITIONED in failed.error
    # a third process still reaches both ends
    assert _ask(c, a.port, 4) == NetResponse(4, EdgeEcho("4")) and _ask(c, b.port, 5) == NetResponse(5, EdgeEcho("5"))

    # a malformed file keeps the partition in force; a good one heals it
    (tmp_path / "faults.json").write_text("{not json")
    assert not poll(lambda: a.net.partitioned_from != {eb}, 0.5)
    write_rules(faults, [])
    assert poll(lambda: not a.net.partitioned_from and not b.net.partitioned_from, 3.0)
    assert _ask(a, b.port, 6) == NetResponse(6, EdgeEcho("6")) and _ask(b, a.port, 7) == NetResponse(7, EdgeEcho("7"))


def test_no_fault_file_means_no_polling(make_node: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KACTOR_NET_FAULTS", raising=False)
    a = make_node("a")
    assert a.net._faults is None and a.net.partitioned_from == frozenset()
