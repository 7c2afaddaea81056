"""KActor: the base of every kactor actor.

Every message between actors travels as the tuple (body, sender name, cause seq) — what an `Envelope` holds; an
Envelope is still taken. On receipt the base class records the message in the process trace, remembers its seq as
the cause of whatever the handler sends, and dispatches on the body's type to ``on_<ClassName>``. Handlers never
block and never raise into thespian: an error is logged and recorded as ActorFailed, so thespian's
retry-on-exception never re-delivers a message.
"""

from __future__ import annotations

import inspect
import logging
import traceback
import types
from collections.abc import Callable
from typing import Any

from thespian.actors import Actor, ActorExitRequest, ChildActorExited

from actors import names
from actors.runtime import Runtime
from messages.runtime import ActorFailed, ActorInit, CancelTimer, Envelope, ScheduleTimer

log = logging.getLogger("kactor.actors")

_LOOK_UP = object()  # a handler that is not a plain function of the class: found by getattr on each message


def _handler(cls: type, body_cls: type) -> Any:
    """What ``getattr(actor, "on_" + body_cls.__name__, None)`` finds for an actor of class ``cls``, as the function
    of the class to call with the actor (None: no handler), or _LOOK_UP when it is anything but a plain function."""
    found = inspect.getattr_static(cls, "on_" + body_cls.__name__, None)
    if found is None or type(found) is types.FunctionType:
        return found
    return _LOOK_UP


class KActor(Actor):
    """Base actor: envelope handling, tracing, and dispatch to ``on_<MessageType>`` methods."""

    name: str = "?"
    # message class → its handler (see `_handler`), per actor class: one dict lookup a message instead of building
    # the method's name and binding it. Actors never set on_<Type> on an instance (it would be missed here).
    _handlers: dict[type, Any] = {}
    # kactor's inline actor system (the simulator, a replay) sets this to its FIFO's append, which takes what its
    # _Ref.actor_send appends: (receiver's ref, message, sender's ref, attempts 0); on thespian it stays None
    _send_pending: Callable[[tuple[Any, Any, Any, int]], None] | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._handlers = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # set by ActorInit, before any other message: handlers may take it as there
        self.runtime: Runtime = None  # type: ignore[assignment]

    # -- thespian entry point -------------------------------------------------------------------------------------
    def receiveMessage(self, msg: Any, sender: Any) -> None:  # noqa: N802 - thespian's name
        if msg.__class__ is tuple:
            self._take(msg, sender)
        elif isinstance(msg, Envelope):
            self._take((msg.body, msg.sender, msg.cause), sender)
        elif isinstance(msg, ActorInit):
            self.name = msg.name
            self.runtime = Runtime.lookup(msg.runtime_key)
            self.runtime.instances[msg.name] = self
            # the clock's own method: a handler's now_ms() is one call, not two (the runtime keeps its clock)
            self.now_ms = self.runtime.clock.now_ms  # type: ignore[method-assign]
            # simpleSystemBase delivers through thespian's actor_base_receive, which fetches a logger and makes a
            # debug call per message before calling receiveMessage (a tenth of its dispatch in a replay); kactor's
            # actors record every message themselves, so they take deliveries directly.
            self._receive = self._take
            self.on_start()
        elif isinstance(msg, (ActorExitRequest, ChildActorExited)):
            self.on_stop() if isinstance(msg, ActorExitRequest) else None
        # anything else (thespian internals, poison) is ignored

    def _deliver(self, env: Envelope) -> None:
        self._take((env.body, env.sender, env.cause), None)

    def _take(self, msg: Any, sender: Any) -> None:
        """Deliver a message (body, sender name, cause seq); what the actor system calls once the actor has its
        runtime, so anything else (thespian's lifecycle messages) goes on to receiveMessage. A tuple, not an
        Envelope: the frozen class's __init__ was a quarter of a delivery's instructions (performance-log.md)."""
        if msg.__class__ is not tuple:
            self.receiveMessage(msg, sender)
            return
        body, from_name, cause = msg
        rt = self.runtime
        if rt.trace is None and rt.observer is None:
            # Runtime.record with nobody to tell (the simulator): only the seq moves; a call (and the clock's) less
            rt.seq = seq = rt.seq + 1
        else:
            seq = rt.record(from_name, self.name, body, cause)
        previous = rt.current_seq
        rt.current_seq = seq
        try:
            handler = self._handlers.get(body.__class__)
            if handler is None or handler is _LOOK_UP:
                if handler is None and body.__class__ not in self._handlers:
                    handler = self._handlers[body.__class__] = _handler(self.__class__, body.__class__)
                if handler is None:
                    self.on_unhandled(body, from_name)
                elif handler is _LOOK_UP:
                    getattr(self, "on_" + type(body).__name__)(body, from_name)
                else:
                    handler(self, body, from_name)
            else:
                handler(self, body, from_name)
        except Exception as e:  # noqa: BLE001 - an actor must survive its handler's bugs
            log.error("actor %s failed on %s: %s", self.name, type(body).__name__, e, exc_info=True)
            rt.record(self.name, self.name, ActorFailed(self.name, type(body).__name__,
                                                        traceback.format_exc(limit=8)), seq)
        finally:
            rt.current_seq = previous

    # -- for subclasses -------------------------------------------------------------------------------------------
    def on_start(self) -> None:
        """Called once the actor knows its name and runtime."""

    def on_stop(self) -> None:
        """Called when the actor is asked to exit."""

    def on_unhandled(self, body: Any, sender: str) -> None:
        log.warning("actor %s: no handler for %s from %s", self.name, type(body).__name__, sender)

    def post(self, to: str, body: Any) -> None:
        """Send ``body`` to the actor named ``to``; the message being handled becomes its cause."""
        rt = self.runtime
        # thespian's Actor.send less its isinstance check: runtime.address only hands out the actor system's
        # addresses (or raises KeyError); a name the runtime has is taken from its directory without the call
        addr = rt._addresses.get(to)
        if addr is None:
            addr = rt.address(to)
        pending = self._send_pending
        if pending is not None:
            pending((addr.ref, (body, self.name, rt.current_seq), self._myRef, 0))
        else:
            self._myRef.actor_send(addr, (body, self.name, rt.current_seq))

    def now_ms(self) -> float:
        return self.runtime.clock.now_ms()

    def schedule(self, key: str, delay_ms: float) -> None:
        """Ask the timer edge for TimerFired(key) after delay_ms (an earlier timer with that key is replaced)."""
        self.post(names.TIMER, ScheduleTimer(key, delay_ms))

    def cancel_timer(self, key: str) -> None:
        self.post(names.TIMER, CancelTimer(key))
