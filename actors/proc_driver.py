"""ProcDriver: runs functional-core procedures (generators of effects, see core.effects) inside an actor.

Some effects are asks: the procedure waits for another actor's answer. A `ZkBatch` becomes a ZkRequest to the
ZkBridgeActor and the procedure is suspended until the matching ZkResponse arrives; an actor may register more
(the ControllerActor asks the TopicDeletionActor, which asks the ControllerActor back). Every other effect is handed
to the actor's effect handler at once and the procedure resumes immediately. Request ids are a per-actor counter
shared by every kind of ask, so a replay issues the same ids.
"""

from __future__ import annotations

import itertools
import logging
import types
from collections.abc import Callable, Mapping
from typing import Any

from actors import names
from messages.zk import ZkBatch, ZkRequest, ZkResponse

log = logging.getLogger("kactor.actors")

Done = Callable[[Any, BaseException | None], None]
# effect type → (request id, effect) → (recipient actor name, request message)
Ask = Callable[[int, Any], tuple[str, Any]]


class ProcDriver:
    """Drives any number of suspended procedures for one actor."""

    def __init__(self, actor: Any, handle_effect: Callable[[Any], Any], asks: Mapping[type, Ask] | None = None) -> None:
        self._actor = actor
        if not isinstance(handle_effect, (types.FunctionType, types.MethodType)):
            call = type(handle_effect).__dict__.get("__call__")
            if isinstance(call, types.FunctionType):
                # an object whose class defines __call__ in Python (EffectInterpreter) is called through its bound
                # __call__: calling the object itself goes through the type's C slot, ~650 instructions more an effect
                handle_effect = types.MethodType(call, handle_effect)
        self._handle_effect = handle_effect
        self._ids = itertools.count(1)
        self._waiting: dict[int, tuple[Any, Done]] = {}
        self._asks: dict[type, Ask] = {ZkBatch: lambda rid, batch: (names.ZK, ZkRequest(rid, batch, actor.name))}
        self._asks.update(asks or {})

    @property
    def in_flight(self) -> int:
        return len(self._waiting)

    def run(self, proc: Any, done: Done, value: Any = None, error: BaseException | None = None) -> None:
        """Start ``proc``; ``done(result, error)`` is called when it returns or raises. `resume` goes on with a
        suspended one through here too, sending it ``value`` or throwing ``error`` into it where it yielded."""
        asks = self._asks
        try:
            effect = proc.send(value) if error is None else proc.throw(error)
            while True:
                ask = asks.get(effect.__class__)
                if ask is not None:
                    rid = next(self._ids)
                    self._waiting[rid] = (proc, done)
                    to, request = ask(rid, effect)
                    self._actor.post(to, request)
                    return
                effect = proc.send(self._handle_effect(effect))
        except StopIteration as stop:
            done(stop.value, None)
        except Exception as e:  # noqa: BLE001 - the owner decides (e.g. ControllerMoved → resign)
            done(None, e)

    def on_zk_response(self, response: ZkResponse) -> bool:
        """Resume the procedure waiting for this response; False if none was (a late or foreign response)."""
        return self.resume(response.request_id, response.results)

    def resume(self, request_id: int, value: Any, error: BaseException | None = None) -> bool:
        """Resume the procedure waiting for ask ``request_id`` with ``value`` (or throw ``error`` into it where it
        yielded); False if none was waiting."""
        waiting = self._waiting.pop(request_id, None)
        if waiting is None:
            return False
        proc, done = waiting
        self.run(proc, done, value, error)
        return True

    def abandon_all(self) -> None:
        """Forget every suspended procedure (a controller that resigns drops its in-flight work, as Kafka's
        event thread does when its event is preempted)."""
        for proc, _ in self._waiting.values():
            proc.close()
        self._waiting.clear()
