"""zk_bridge/session.py: Kafka's ZooKeeperClientWatcher decisions for kazoo's SUSPENDED / CONNECTED / LOST (pure)."""

from __future__ import annotations

from zk_bridge.session import SessionState, Transition, on_connection_state

LIVE = SessionState(connected=True, session_id=7)


def _run(start: SessionState, *steps: tuple[str, int, bool]) -> tuple[SessionState, list[Transition]]:
    state, seen = start, []
    for kazoo_state, session_id, stopping in steps:
        t = on_connection_state(state, kazoo_state, session_id, stopping)
        seen.append(t)
        state = t.state
    return state, seen


def test_connection_loss_then_reconnect_is_not_an_expiry() -> None:
    # an ensemble member (or its leader) dies: kazoo says SUSPENDED (no session id while disconnected), then CONNECTED
    state, (lost, back) = _run(LIVE, ("SUSPENDED", 0, False), ("CONNECTED", 7, False))
    assert lost == Transition(SessionState(connected=False, suspended=True, session_id=7), "SUSPENDED")
    assert back == Transition(SessionState(connected=True, session_id=7), "CONNECTED", resend=True, rearm=True)
    assert state == LIVE


def test_repeated_losses_keep_the_session_until_the_server_says_expired() -> None:
    steps = [("SUSPENDED", 0, False), ("CONNECTED", 7, False)] * 3
    _, seen = _run(LIVE, *steps)
    assert [t.event for t in seen] == ["SUSPENDED", "CONNECTED"] * 3
    assert not any(t.fail for t in seen)


def test_expiry_fails_waiting_requests_and_the_next_session_is_reestablished() -> None:
    state, (lost, expired, new) = _run(LIVE, ("SUSPENDED", 0, False), ("LOST", 0, False), ("CONNECTED", 9, False))
    assert lost.event == "SUSPENDED" and not lost.fail
    assert expired == Transition(SessionState(expired=True, session_id=7), "EXPIRED", fail=True)
    # afterInitializingSession: a new session, nothing to re-arm (subscribers re-read everything themselves)
    assert new == Transition(SessionState(connected=True, session_id=9), "REESTABLISHED", resend=True, rearm=False)
    assert state == SessionState(connected=True, session_id=9)


def test_our_own_stop_is_not_an_expiry() -> None:
    t = on_connection_state(LIVE, "LOST", 0, stopping=True)
    assert t == Transition(LIVE)


def test_first_connection_has_nothing_to_rearm() -> None:
    t = on_connection_state(SessionState(), "CONNECTED", 5, False)
    assert t == Transition(SessionState(connected=True, session_id=5), "CONNECTED", resend=True, rearm=False)


def test_unknown_state_changes_nothing() -> None:
    assert on_connection_state(LIVE, "CONNECTED_RO", 7, False) == Transition(LIVE)
