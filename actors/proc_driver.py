"""ProcDriver: runs functional-core procedures (generators of effects, see core.effects) inside an actor.

A `ZkBatch` effect becomes a ZkRequest to the ZkBridgeActor; the procedure is suspended until the matching
ZkResponse arrives as a message. Every other effect is handed to the actor's effect handler at once and the
procedure resumes immediately. Request ids are a per-actor counter, so a replay issues the same ids.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from typing import Any

from messages.zk import ZkBatch, ZkRequest, ZkResponse

log = logging.getLogger("kactor.actors")

Done = Callable[[Any, BaseException | None], None]


class ProcDriver:
    """Drives any number of suspended procedures for one actor."""

    def __init__(self, actor: Any, handle_effect: Callable[[Any], Any]) -> None:
        self._actor = actor
        self._handle_effect = handle_effect
        self._ids = itertools.count(1)
        self._waiting: dict[int, tuple[Any, Done]] = {}

    @property
    def in_flight(self) -> int:
        return len(self._waiting)

    def run(self, proc: Any, done: Done) -> None:
        """Start ``proc``; ``done(result, error)`` is called when it returns or raises."""
        self._step(proc, done, None)

    def on_zk_response(self, response: ZkResponse) -> bool:
        """Resume the procedure waiting for this response; False if none was (a late or foreign response)."""
        waiting = self._waiting.pop(response.request_id, None)
        if waiting is None:
            return False
        proc, done = waiting
        self._step(proc, done, response.results)
        return True

    def abandon_all(self) -> None:
        """Forget every suspended procedure (a controller that resigns drops its in-flight work, as Kafka's
        event thread does when its event is preempted)."""
        for proc, _ in self._waiting.values():
            proc.close()
        self._waiting.clear()

    def _step(self, proc: Any, done: Done, value: Any) -> None:
        try:
            while True:
                effect = proc.send(value)
                if isinstance(effect, ZkBatch):
                    rid = next(self._ids)
                    self._waiting[rid] = (proc, done)
                    self._actor.post("zk", ZkRequest(rid, effect, self._actor.name))
                    return
                value = self._handle_effect(effect)
        except StopIteration as stop:
            done(stop.value, None)
        except Exception as e:  # noqa: BLE001 - the owner decides (e.g. ControllerMoved → resign)
            done(None, e)
