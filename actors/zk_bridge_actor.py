"""ZkBridgeActor: the only actor that talks to ZooKeeper, through the runtime's "zk" edge (a ZkExecutor).

It plays the part of Kafka's ``ZooKeeperClient`` request pipeline and its watcher: a ``ZkRequest`` is handed to the
executor, whose answer comes back into the actor system as a ``ZkResponse`` injected to the requester (cause = the
request's seq, so a trace links question and answer). Watch firings and session changes are injected to this actor
and forwarded to the actor whose handler armed the watch (`WATCHERS`); which event a controller watch becomes is
core/controller/zk_watches.py's to say. In a replay there is no edge: the recorded responses are fed in instead.
"""

from __future__ import annotations

from typing import Any

from actors import names
from actors.base import KActor
from actors.edge_slots import ZooKeeper
from messages.zk import ZkRequest, ZkResponse, ZkSessionEvent, ZkWatchEvent
from protocol.zk import paths

# Who armed which watch, so who gets it when it fires (ZooKeeperClient's handler maps, per actor): the config manager
# (DynamicConfigManager's ZkNodeChangeNotificationListener) arms the child watch of /config/changes; every other watch
# is armed by one of the controller's handlers (core/controller/zk_watches.py). The first matching prefix wins.
WATCHERS: tuple[tuple[str, str], ...] = (
    (paths.ConfigEntityChangeNotificationZNode, names.CONFIG_MANAGER),
    (paths.LiteralAclChangeZNode, names.CONFIG_MANAGER),  # AclAuthorizer's change listeners, run there too
    (paths.ExtendedAclChangeZNode, names.CONFIG_MANAGER),
    ("/", names.CONTROLLER),
)
# Who hears of session changes (registerStateChangeHandler), in this order.
SESSION_LISTENERS = (names.CONTROLLER, names.CONFIG_MANAGER)


def path_matches(path: str, prefix: str) -> bool:
    """True if ``path`` is ``prefix`` or lies under it (component-wise: /brokers/ids does not match /brokers/ids2)."""
    if prefix in ("", "/"):
        return True
    base = prefix.rstrip("/")
    return path == base or path.startswith(base + "/")


class ZkBridgeActor(KActor):
    """Forwards ZkRequests to the executor edge and watch / session events to the actors that handle them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)

    def _executor(self) -> ZooKeeper | None:
        """The "zk" edge (None in replay); the broker process wires its watch and session events to us."""
        return self.runtime.edges.zk

    # -- requests -------------------------------------------------------------------------------------------------
    def on_ZkRequest(self, req: ZkRequest, sender: str) -> None:
        executor = self._executor()
        if executor is None:
            return  # replay: the recorded ZkResponse arrives as an input of its own
        runtime, cause = self.runtime, self.runtime.current_seq

        def reply(results: tuple) -> None:  # runs on a kazoo thread: only inject
            runtime.inject(req.reply_to, ZkResponse(req.request_id, tuple(results)), sender=names.EDGE_ZK, cause=cause)

        executor.submit(req.batch, reply)

    # -- watches and session changes ---------------------------------------------------------------------------
    def on_ZkWatchEvent(self, event: ZkWatchEvent, sender: str) -> None:
        watcher = watcher_of(event.path)
        if self.runtime.has_actor(watcher):
            self.post(watcher, event)

    def on_ZkSessionEvent(self, event: ZkSessionEvent, sender: str) -> None:
        for listener in SESSION_LISTENERS:
            if self.runtime.has_actor(listener):
                self.post(listener, event)


def watcher_of(path: str) -> str:
    """The actor whose handler armed the watch on ``path`` (`WATCHERS`)."""
    return next(actor for prefix, actor in WATCHERS if path_matches(path, prefix))
