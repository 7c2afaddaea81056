"""ZkBridgeActor: the only actor that talks to ZooKeeper, through the runtime's "zk" edge (a ZkExecutor).

It plays the part of Kafka's ``ZooKeeperClient`` request pipeline plus its watcher registry: a ``ZkRequest`` is
handed to the executor, whose answer comes back into the actor system as a ``ZkResponse`` injected to the
requester (cause = the request's seq, so a trace links question and answer). Watch firings and session changes are
injected to this actor and forwarded to the actors that subscribed (Kafka's ``registerZNodeChangeHandler`` /
``registerStateChangeHandler``). In a replay there is no edge: the recorded responses are fed in instead.
"""

from __future__ import annotations

from typing import Any

from actors.base import KActor
from messages.zk import WatchSubscribe, ZkRequest, ZkResponse, ZkSessionEvent, ZkWatchEvent

EDGE_SENDER = "edge:zk"


def path_matches(path: str, prefix: str) -> bool:
    """True if ``path`` is ``prefix`` or lies under it (component-wise: /brokers/ids does not match /brokers/ids2)."""
    if prefix in ("", "/"):
        return True
    base = prefix.rstrip("/")
    return path == base or path.startswith(base + "/")


class ZkBridgeActor(KActor):
    """Forwards ZkRequests to the executor edge and fans watch / session events out to subscribers."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.subscriptions: list[tuple[str, str]] = []  # (prefix, subscriber), in subscription order
        self._wired: Any = None

    def on_start(self) -> None:
        self._executor()

    def _executor(self) -> Any:
        """The "zk" edge, wired to inject its watch and session events to us (None in replay)."""
        executor = getattr(self.runtime, "edges", {}).get("zk")
        if executor is not None and executor is not self._wired:
            runtime, me = self.runtime, self.name
            executor.on_watch = lambda event: runtime.inject(me, event, sender=EDGE_SENDER)
            executor.on_session = lambda event: runtime.inject(me, event, sender=EDGE_SENDER)
            self._wired = executor
        return executor

    # -- requests -------------------------------------------------------------------------------------------------
    def on_ZkRequest(self, req: ZkRequest, sender: str) -> None:
        executor = self._executor()
        if executor is None:
            return  # replay: the recorded ZkResponse arrives as an input of its own
        runtime, cause = self.runtime, self.runtime.current_seq

        def reply(results: tuple) -> None:  # runs on a kazoo thread: only inject
            runtime.inject(req.reply_to, ZkResponse(req.request_id, tuple(results)), sender=EDGE_SENDER, cause=cause)

        executor.submit(req.batch, reply)

    # -- subscriptions --------------------------------------------------------------------------------------------
    def on_WatchSubscribe(self, msg: WatchSubscribe, sender: str) -> None:
        entry = (msg.prefix, msg.subscriber)
        if entry not in self.subscriptions:
            self.subscriptions.append(entry)

    def _subscribers(self, path: str | None) -> list[str]:
        seen: dict[str, None] = {}
        for prefix, subscriber in self.subscriptions:
            if path is None or path_matches(path, prefix):
                seen.setdefault(subscriber, None)
        return [s for s in seen if self.runtime.has_actor(s)]

    def on_ZkWatchEvent(self, event: ZkWatchEvent, sender: str) -> None:
        for subscriber in self._subscribers(event.path):
            self.post(subscriber, event)

    def on_ZkSessionEvent(self, event: ZkSessionEvent, sender: str) -> None:
        for subscriber in self._subscribers(None):
            self.post(subscriber, event)
