"""zk_bridge/executor.py start_session: a refused SASL login is AuthFailedError however kazoo's start() saw it.

kazoo reports CONNECTED before its SASL exchange; a refusal then moves the session to AUTH_FAILED and clears the
live flag. When that lands between start()'s wait and its look at ``connected``, start() raises a time-out (a fresh
clone's CI met exactly that in tests/zk_bridge/test_zk_sasl.py). These drive kazoo's own session callback in that
order, so no server or timing is needed.
"""

from __future__ import annotations

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import AuthFailedError
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import KeeperState

from zk_bridge.executor import start_session


def _client_whose_start(monkeypatch: pytest.MonkeyPatch, *states: KeeperState) -> KazooClient:
    client = KazooClient(hosts="127.0.0.1:1")

    def start(timeout: float = 15) -> None:
        for state in states:
            client._session_callback(state)
        raise KazooTimeoutError("Connection time-out")

    monkeypatch.setattr(client, "start", start)
    return client


def test_a_login_refused_before_start_looks_is_auth_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    client = _client_whose_start(monkeypatch, KeeperState.CONNECTED, KeeperState.AUTH_FAILED)
    with pytest.raises(AuthFailedError):
        start_session(client, 1.0, sasl=True)
    assert not client.state_listeners  # the watch is gone with the attempt


def test_a_server_that_never_answers_is_still_a_time_out(monkeypatch: pytest.MonkeyPatch) -> None:
    client = _client_whose_start(monkeypatch, KeeperState.CONNECTING)
    with pytest.raises(KazooTimeoutError):
        start_session(client, 1.0, sasl=True)
    assert not client.state_listeners


def test_a_session_lost_otherwise_is_still_a_time_out(monkeypatch: pytest.MonkeyPatch) -> None:
    client = _client_whose_start(monkeypatch, KeeperState.CONNECTED, KeeperState.CLOSED)
    with pytest.raises(KazooTimeoutError):
        start_session(client, 1.0, sasl=True)
