"""kactor/admin/acks.py under freezegun: what describe --watch --produce shows per partition (last acknowledged
offset, acks/s, time since the last ack, the longest pause, waiting and failed records), and its rendering next to
the leaders in describe's partitions table."""

from __future__ import annotations

import time

from freezegun import freeze_time
from pytest import approx
from rich.console import Console

from kactor.admin import describe
from kactor.admin.acks import AckTracker
from kactor.admin.topics import PartitionInfo


def test_acks_rate_gap_and_failures_per_partition() -> None:
    with freeze_time("2026-11-25 12:00:00") as clock:
        t = AckTracker("orders", "all", 10.0, clock=time.monotonic)
        for _ in range(3):
            t.sent(0)
        t.sent(1)
        clock.tick(0.2)
        t.delivered(0, 10, None)
        t.delivered(0, 11, None)
        clock.tick(2.5)  # the leader of partition 0 moves: its third record waits
        snap = t.snapshot()
        p0 = snap.partitions[0]
        assert (p0.acked, p0.last_offset, p0.in_flight, p0.failed) == (2, 11, 1, 0)
        assert p0.since_last_ack_s == approx(2.5)
        assert p0.max_gap_s == approx(2.5)  # the pause still going on counts already
        assert p0.rate == 2 / 5.0
        p1 = snap.partitions[1]
        assert (p1.acked, p1.since_last_ack_s, p1.max_gap_s, p1.in_flight) == (0, None, approx(2.7), 1)
        t.delivered(0, 14, None)  # acks resume at the new leader
        t.delivered(1, -1, "NOT_LEADER_OR_FOLLOWER: Broker: Not leader for partition")
        snap = t.snapshot()
        assert (snap.partitions[0].max_gap_s, snap.partitions[0].since_last_ack_s) == (approx(2.5), 0.0)
        assert (snap.partitions[0].in_flight, snap.partitions[0].last_offset) == (0, 14)
        assert (snap.partitions[1].failed, snap.partitions[1].last_error) == (
            1, "NOT_LEADER_OR_FOLLOWER: Broker: Not leader for partition")
        assert (snap.acked, snap.failed, snap.in_flight, snap.max_gap_s) == (3, 1, 0, approx(2.7))
        clock.tick(5.1)
        assert t.snapshot().partitions[0].rate == 0.0  # out of the window


def _view() -> describe.ClusterView:
    infos = (PartitionInfo("orders", 0, 1, (1, 2), (1, 2), leader_epoch=3, controller_epoch=5),
             PartitionInfo("orders", 1, 2, (2, 1), (2, 1), leader_epoch=1, controller_epoch=5))
    topic = describe.TopicView("orders", False, {}, tuple(describe.PartitionView(i, False, False, False)
                                                          for i in infos))
    return describe.ClusterView("zk", 1, 5, (describe.BrokerView(1, ("PLAINTEXT://127.0.0.1:9092",), None, 9),),
                                (topic,), {}, frozenset())


def _text(renderable: object) -> str:
    console = Console(width=250, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_render_shows_the_producer_next_to_the_leaders() -> None:
    with freeze_time("2026-11-25 12:00:00") as clock:
        t = AckTracker("orders", "all", 20.0, clock=time.monotonic)
        t.sent(0)
        t.sent(1)
        t.sent(1)
        clock.tick(0.5)
        t.delivered(0, 41, None)
        t.delivered(1, 7, None)
        clock.tick(1.5)
        text = _text(describe.render(_view(), t.snapshot(), {("orders", 0): 42, ("orders", 1): 8}))
    assert "Producer → orders (acks=all, 20/s): 2 acknowledged, 0 failed, 1 waiting, longest pause 1.5s" in text
    head = next(line for line in text.splitlines() if "Leader epoch" in line)
    assert [c.strip() for c in head.strip("│┃ ").split("┃")][-7:] == [
        "End offset", "Acked offset", "Acks/s", "Last ack", "Max gap", "Waiting", "Failed"]
    rows = [[c.strip() for c in line.strip("│ ").split("│")] for line in text.splitlines()
            if line.startswith("│ orders")]
    assert rows == [["orders", "0", "1", "3", "1,2", "1,2", "ok", "42", "41", "0.2", "1.5s", "0.5s", "0", "0"],
                    ["orders", "1", "2", "1", "2,1", "2,1", "ok", "8", "7", "0.2", "1.5s waiting", "1.5s", "1", "0"]]


def test_render_without_kafka_has_the_zookeeper_columns_only() -> None:
    text = _text(describe.render(_view()))
    assert "End offset" not in text and "Producer" not in text and "Acked" not in text
    js = describe.to_json(_view(), {("orders", 0): 42})
    assert [p["end_offset"] for p in js["topics"][0]["partitions"]] == [42, None]
    assert "end_offset" not in describe.to_json(_view())["topics"][0]["partitions"][0]
