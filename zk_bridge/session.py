"""What a ZooKeeper connection-state change means for the executor: Kafka's ZooKeeperClientWatcher, as a pure step.

Kafka 2.6 (kafka.zookeeper.ZooKeeperClient) rides out a lost connection: ``Disconnected`` only marks the client not
connected — requests that failed with CONNECTIONLOSS wait in ``waitUntilConnected`` (indefinitely, not bounded by
the session timeout: a whole ensemble that restarts keeps its sessions, the new leader re-arms their timers) and are
re-sent once ``SyncConnected`` arrives, and the Java client re-sends its watches (SetWatches). Only ``Expired``
runs the session-expiry path (``reinitialize``: beforeInitializingSession, a new session, afterInitializingSession),
and it fails every waiting request.

kazoo reports the same facts as SUSPENDED (connection lost, session maybe alive), CONNECTED (again) and LOST (the
server said the session expired — kazoo learns it only on reconnecting — or the client was closed). kazoo drops its
watches on SUSPENDED, so a reconnection within the same session must re-arm them (``rearm``).
"""

from __future__ import annotations

import attrs

SUSPENDED = "SUSPENDED"
CONNECTED = "CONNECTED"
LOST = "LOST"


@attrs.frozen
class SessionState:
    """connected: requests can be sent now; suspended: the connection was lost since the last CONNECTED; expired: the
    session is gone (waiting requests fail; the next CONNECTED is a new session); session_id: the last one we had."""

    connected: bool = False
    suspended: bool = False
    expired: bool = False
    session_id: int = 0


@attrs.frozen
class Transition:
    """The new state, the ZkSessionEvent state to report (None: nothing), and what to do with the requests waiting
    for a connection: ``resend`` them (reconnected), ``fail`` them (expired); ``rearm`` the watches kazoo forgot."""

    state: SessionState
    event: str | None = None
    resend: bool = False
    fail: bool = False
    rearm: bool = False


def on_connection_state(state: SessionState, kazoo_state: str, session_id: int, stopping: bool) -> Transition:
    """ZooKeeperClientWatcher.process for kazoo's states. ``session_id``: kazoo's current one (0 while disconnected);
    ``stopping``: our own client.stop() is under way, whose final LOST is not an expiry."""
    if kazoo_state == SUSPENDED:
        # Disconnected: report it, keep the session; requests that fail meanwhile wait for the reconnection.
        return Transition(attrs.evolve(state, connected=False, suspended=True), SUSPENDED)
    if kazoo_state == LOST:
        if stopping:
            return Transition(state)
        # Expired: a new session will start with no watches; waiting requests fail with SESSIONEXPIRED.
        return Transition(SessionState(expired=True, session_id=state.session_id), "EXPIRED", fail=True)
    if kazoo_state == CONNECTED:
        # SyncConnected: the same session again (re-arm the watches kazoo dropped), or a new one after an expiry
        # (afterInitializingSession: REESTABLISHED; its subscribers re-read and re-watch everything).
        event = "REESTABLISHED" if state.expired else "CONNECTED"
        rearm = state.suspended and not state.expired
        return Transition(SessionState(connected=True, session_id=session_id or state.session_id), event,
                          resend=True, rearm=rearm)
    return Transition(state)
