"""kactor consumer-groups' tables from a group's state (kafka-consumer-groups.sh's columns, widths, '-' for what is
unknown, the stderr notes), and its argument checks."""

from __future__ import annotations

import pytest

from kactor.cli import main
from kactor.cli.cmd_consumer_groups import (
    GroupState,
    Member,
    offset_rows,
    render_members,
    render_offsets,
    render_state,
    state_note,
)
from zk_bridge.server import free_port

GROUP = GroupState(
    group="orders-app", state="Stable", assignor="range", coordinator="127.0.0.1:9093 (1)",
    members=(Member("consumer-1-aaaa", "/127.0.0.1", "consumer-1", (("orders", 1), ("orders", 0))),
             Member("consumer-2-bbbb", "/127.0.0.1", "consumer-2", ())),
    committed={("orders", 0): 5, ("orders", 2): 7},
    log_end={("orders", 0): 9, ("orders", 1): 4, ("orders", 2): 7})


def test_rows_owned_partitions_then_idle_members_then_committed_partitions_nobody_owns() -> None:
    rows = offset_rows(GROUP)
    assert [(r.topic, r.partition, r.offset, r.log_end_offset, r.lag, r.consumer_id) for r in rows] == [
        ("orders", 0, 5, 9, 4, "consumer-1-aaaa"),
        ("orders", 1, None, 4, None, "consumer-1-aaaa"),  # owned, never committed: no lag
        (None, None, None, None, None, "consumer-2-bbbb"),
        ("orders", 2, 7, 7, 0, None),
    ]


def test_the_offsets_table_as_kafka_prints_it() -> None:
    assert render_offsets(offset_rows(GROUP)) == [
        "GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     "
        "HOST            CLIENT-ID",
        "orders-app      orders          0          5               9               4               consumer-1-aaaa "
        "/127.0.0.1      consumer-1",
        "orders-app      orders          1          -               4               -               consumer-1-aaaa "
        "/127.0.0.1      consumer-1",
        "orders-app      -               -          -               -               -               consumer-2-bbbb "
        "/127.0.0.1      consumer-2",
        "orders-app      orders          2          7               7               0               -               "
        "-               -",
    ]


def test_long_values_widen_their_column() -> None:
    lines = render_offsets(offset_rows(GroupState("g", "Empty", "", "-", (), {("a-very-long-topic-name", 0): 1},
                                                  {})))
    assert lines[0].startswith("GROUP           TOPIC                  PARTITION")
    assert lines[1] == ("g               a-very-long-topic-name 0          1               -               -    "
                        "           -               -               -")


def test_members_and_state_tables() -> None:
    assert render_members(GROUP, verbose=True) == [
        "GROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS  ASSIGNMENT",
        "orders-app      consumer-1-aaaa /127.0.0.1      consumer-1      2            orders(0,1)",
        "orders-app      consumer-2-bbbb /127.0.0.1      consumer-2      0            -",
    ]
    assert render_state(GROUP) == [
        "GROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                #MEMBERS",
        "orders-app      127.0.0.1:9093 (1)        range                Stable               2",
    ]


def test_state_notes_as_consumer_group_command() -> None:
    assert state_note("g", "Dead", 0) == ("Error: Consumer group 'g' does not exist.", False)
    assert state_note("g", "Empty", 2) == ("\nConsumer group 'g' has no active members.", True)
    assert state_note("g", "PreparingRebalance", 0) == ("\nWarning: Consumer group 'g' is rebalancing.", False)
    assert state_note("g", "Stable", 3) == (None, True)


@pytest.mark.parametrize(("argv", "message"), [
    (["--describe"], "--describe needs --group GROUP or --all-groups"),
    (["--list", "--group", "g"], "--list takes no --group"),
    (["--list", "--timeout", "0"], "--timeout must be positive"),
])
def test_bad_arguments(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as e:
        main(["consumer-groups", "--bootstrap-server", "127.0.0.1:9092", *argv])
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_an_unreachable_bootstrap_server_is_one_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    assert main(["consumer-groups", "--bootstrap-server", f"127.0.0.1:{port}", "--list", "--timeout", "1000"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"kactor consumer-groups: cannot get metadata from the bootstrap server(s) "
                                        f"127.0.0.1:{port} within 1 s")
