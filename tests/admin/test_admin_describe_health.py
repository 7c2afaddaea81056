"""describe.producer_health under freezegun: what of a live producer's acknowledgements makes piped ``describe
--watch --produce`` print a new frame. A frame drawn before the producer's first record must be followed by one
showing its first acknowledgement (the real-cluster test waited 60 s for it when the key ignored acks)."""

from __future__ import annotations

import time

from freezegun import freeze_time

from kactor.admin import describe
from kactor.admin.acks import AckTracker


def test_the_first_send_and_the_first_ack_change_the_health_but_steady_acks_do_not() -> None:
    with freeze_time("2026-11-25 12:00:00") as clock:
        t = AckTracker("watched", "all", 50.0, clock=time.monotonic)
        idle = describe.producer_health(t.snapshot())
        assert idle == [0, 0, []]

        t.sent(0)
        clock.tick(0.02)
        t.delivered(0, 0, None)  # acknowledged between two refreshes: no snapshot saw it waiting
        first = describe.producer_health(t.snapshot())
        assert first == [0, 0, [[0, True, False]]]

        for n in range(1, 25):  # half a second of steady acks, one in flight at each snapshot
            clock.tick(0.02)
            t.sent(0)
            assert describe.producer_health(t.snapshot()) == first
            t.delivered(0, n, None)
        assert describe.producer_health(t.snapshot()) == first


def test_a_record_waiting_a_stall_and_a_failure_change_the_health() -> None:
    with freeze_time("2026-11-25 12:00:00") as clock:
        t = AckTracker("watched", "all", 50.0, clock=time.monotonic)
        t.sent(1)
        assert describe.producer_health(t.snapshot()) == [0, 0, [[1, False, True]]]  # none ever acknowledged
        clock.tick(0.1)
        t.delivered(1, 7, None)
        t.sent(1)
        clock.tick(0.4)
        assert describe.producer_health(t.snapshot()) == [0, 0, [[1, True, False]]]
        clock.tick(0.6)  # 1 s without an answer: STALL_S
        assert describe.producer_health(t.snapshot()) == [0, 1, [[1, True, True]]]
        clock.tick(1.0)
        assert describe.producer_health(t.snapshot()) == [0, 2, [[1, True, True]]]  # the pause grows
        t.delivered(1, -1, "NOT_LEADER_OR_FOLLOWER: Broker: Not leader for partition")
        assert describe.producer_health(t.snapshot()) == [1, 2, [[1, True, False]]]
