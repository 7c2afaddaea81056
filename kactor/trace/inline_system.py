"""A deterministic in-process actor system for replay: thespian's simpleSystemBase delivery order, less its overhead.

A replay runs one broker process's actors in one thread, exactly as the live broker's driver runs them on thespian's
``simpleSystemBase``; what it must reproduce is simpleSystemBase's *delivery order*, since every produced message is
compared with the recorded one. That order is one global FIFO of pending sends
(``ActorSystemBase._pendingSends``): ``tell`` appends the message and runs sends until the queue is empty; a send
from an actor appends to the end; a message is handed to its receiver when it reaches the head. Nothing else
reorders it in kactor: no actor uses ``wakeupAfter``, dead letters, global names, status requests or loaded sources.

`InlineActorSystem` keeps that FIFO (a deque, not simpleSystemBase's ``list.pop(0)``) and the parts of
``_runSingleSend`` / ``_callActorWithMessage`` / ``_killActor`` kactor's actors can reach:

- ``createActor`` builds the instance at once (as simpleSystemBase does) and returns its address; a child actor's
  parent is its creator, a top-level actor's the system;
- a handler that raises has its message put back at the end of the queue, ``attempts + 1``; after three failed
  attempts a ``PoisonMessage`` goes back to the sender, and a poison that fails again is dropped (thespian's
  retry-on-exception; KActor catches its handlers' errors itself, so this is only reached by ``ActorInit``'s
  ``on_start`` or a failing trace writer);
- ``ActorExitRequest`` is delivered, then the actor is dead: later messages to it are dropped, and its parent gets
  ``ChildActorExited``; when that is processed, the dead actor's remaining children get ``ActorExitRequest``
  (``ActorRef.shutdown``) and it leaves the registry.

What it does not do per message, and simpleSystemBase does: an ``ExpirationTimer`` and a wakeup scan per send, an
RLock per send, a registry lookup by address string, the ``actor_base_receive`` debug-log call, ``list.pop(0)``.

Only replay uses it (`Runtime(..., actor_system=InlineActorSystem())`); a live broker's actors run on thespian.
tests/trace/test_inline_system.py shows both give the same order, on a recorded trace and on retries and exits.
"""

from __future__ import annotations

import inspect
import logging
from collections import deque
from typing import Any

from thespian.actors import ActorAddress, ActorExitRequest, ChildActorExited, PoisonMessage

log = logging.getLogger("kactor.trace")

_LIFECYCLE = (ActorExitRequest, ChildActorExited)  # what simpleSystemBase acts on beyond delivering it
_NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"  # thespian's _nameValid


def _namegen(v: int) -> str:
    """thespian.system.simpleSystemBase._namegen: a child counter as letters (only for readable addresses)."""
    x, y = divmod(v, len(_NAME_CHARS))
    return (_namegen(x) if x else "") + _NAME_CHARS[y]


class InlineAddress(ActorAddress):
    """An ActorAddress (so thespian's ``Actor.send`` accepts it) that carries its actor's ref: no registry lookup."""

    __slots__ = ("ref",)

    def __init__(self, name: str, ref: _Ref) -> None:
        super().__init__(name)
        self.ref = ref


class _Ref:
    """One actor: what thespian's ``ActorRef`` is to simpleSystemBase. It is the instance's ``_myRef``, so the
    instance's thespian ``Actor.send`` / ``createActor`` come here."""

    __slots__ = ("address", "children", "instance", "parent", "system", "child_count", "globalName")

    def __init__(self, system: InlineActorSystem, parent: _Ref | None, name: str) -> None:
        self.system = system
        self.parent = parent
        self.address = InlineAddress(name, self)
        self.instance: Any = None
        self.children: list[_Ref] = []
        self.child_count = 0
        self.globalName: str | None = None  # noqa: N815 - thespian's Actor.globalName reads it

    # thespian ActorRef's methods that kactor's actors reach through thespian.actors.Actor
    def createActor(self, actor_class: type, target_actor_requirements: Any = None,  # noqa: N802 - thespian's name
                    global_name: Any = None, source_hash: Any = None) -> InlineAddress:
        if global_name is not None or source_hash is not None:
            raise NotImplementedError("replay's actor system has no global names or loaded sources")
        return self.system._new_actor(self, actor_class, target_actor_requirements)

    def actor_send(self, to: ActorAddress, msg: Any) -> None:
        self.system._queue.append((to.ref, msg, self, 0))  # type: ignore[attr-defined]

    def wakeupAfter(self, *_: Any) -> None:  # noqa: N802 - thespian's name
        raise NotImplementedError("replay's actor system has no wakeups (kactor's timers are an edge)")


_INIT_NAMES: dict[type, tuple[str, ...]] = {}


def _init_names(actor_class: type) -> tuple[str, ...]:
    """The parameter names of ``actor_class.__init__``, as thespian's withPossibleInitArgs.create finds them; once
    per class (create asks inspect at every creation: 1.6 % of a sim seed, whose brokers start and restart)."""
    names = _INIT_NAMES.get(actor_class)
    if names is None:
        init = actor_class.__init__  # type: ignore[misc]
        try:
            names = tuple(p.name for p in inspect.signature(init).parameters)
        except (ValueError, NameError, AttributeError):
            try:
                names = tuple(inspect.getfullargspec(init).args)
            except (ValueError, NameError, AttributeError):
                names = ()
        _INIT_NAMES[actor_class] = names
    return names


class InlineActorSystem:
    """The subset of thespian's ``ActorSystem`` that `actors.runtime.Runtime` uses (``createActor``, ``tell``,
    ``shutdown``), delivering in simpleSystemBase's order."""

    def __init__(self) -> None:
        # (receiver ref, message, sender ref, attempts): simpleSystemBase's PendingSend
        self._queue: deque[tuple[_Ref, Any, _Ref, int]] = deque()
        self._system = _Ref(self, None, "System")  # the system's own External actor: parent of the top level
        self._external = _Ref(self, self._system, "System:ExternalRequester")  # the sender of every tell
        self._internal = (self._system, self._external)
        self._running = False

    def createActor(self, actor_class: type) -> InlineAddress:  # noqa: N802 - thespian's name
        """A top-level actor (simpleSystemBase.newPrimaryActor), built now."""
        return self._new_actor(self._system, actor_class, None, prefix="/A")

    def _new_actor(self, parent: _Ref, actor_class: type, requirements: Any, prefix: str | None = None) -> \
            InlineAddress:
        name = f"{prefix or parent.address.actorAddressString}~{_namegen(parent.child_count)}"
        ref = _Ref(self, parent, name)
        parent.children.append(ref)
        parent.child_count += 1
        # as simpleSystemBase._newRefAndActor: __init__ gets capabilities / requirements only if it names them
        offered = {"capabilities": {}, "requirements": requirements}
        inst = actor_class(**{k: offered[k] for k in _init_names(actor_class) if k in offered})
        inst._myRef = ref
        # simpleSystemBase's _receive is actor_base_receive: a debug log call, then receiveMessage
        inst._receive = inst.receiveMessage
        # what ref.actor_send does, without the call: a KActor's post appends (receiver ref, message, its ref, 0)
        inst._send_pending = self._queue.append
        ref.instance = inst
        return ref.address

    def tell(self, to: ActorAddress, msg: Any) -> None:
        """simpleSystemBase.tell: queue ``msg`` and run every send until the queue is empty."""
        queue = self._queue
        queue.append((to.ref, msg, self._external, 0))  # type: ignore[attr-defined]
        # simpleSystemBase._runSends / _runSingleSend: the head of the FIFO to its receiver, until none is left
        popleft = queue.popleft
        while queue:
            ref, msg, sender, attempts = popleft()
            inst = ref.instance
            if attempts == 0 and inst is not None and (msg.__class__ is tuple or not isinstance(msg, _LIFECYCLE)):
                # the hot path: a live actor's first attempt at an ordinary message (a tuple: what kactor's actors
                # send each other, actors/base.py)
                try:
                    inst._receive(msg, sender.address)
                except Exception:  # noqa: BLE001 - thespian's retry-on-exception
                    self._failed(ref, msg, sender, attempts)
                continue
            self._run_one(ref, msg, sender, attempts)

    def _run_one(self, ref: _Ref, msg: Any, sender: _Ref, attempts: int) -> None:
        if attempts > 4:
            return  # a PoisonMessage that failed too: discarded
        rcvr, sndr, deliver = ref, sender, msg
        if attempts > 2:
            if isinstance(msg, PoisonMessage):
                return
            rcvr, sndr, deliver = sender, ref, PoisonMessage(msg, None)
        inst = rcvr.instance
        if inst is not None:
            # ChildActorExited comes back to the child as poison only as itself (simpleSystemBase's check)
            if not isinstance(msg, ChildActorExited) or deliver is msg:
                try:
                    inst._receive(deliver, sndr.address)
                except Exception:  # noqa: BLE001 - thespian's retry-on-exception
                    self._failed(ref, msg, sender, attempts)
                else:
                    if isinstance(msg, ChildActorExited) and msg.childAddress.ref in rcvr.children:
                        rcvr.children.remove(msg.childAddress.ref)
            if isinstance(msg, ActorExitRequest) and rcvr not in self._internal:
                # simpleSystemBase._killActor: the addressed actor is dead from now on (its later messages are
                # dropped) and the parent of the one called is told (the same actor unless this was poison)
                ref.instance = None
                self._queue.append((rcvr.parent, ChildActorExited(ref.address), self._system, 0))
        if isinstance(msg, ChildActorExited):
            dead = msg.childAddress.ref
            if dead.instance is None:
                # ActorRef.shutdown: the dead actor's children are asked to exit
                for child in dead.children:
                    self._queue.append((child, ActorExitRequest(), self._system, 0))
                dead.children = []

    def _failed(self, ref: _Ref, msg: Any, sender: _Ref, attempts: int) -> None:
        log.warning("Failure of Actor %s during message processing (attempt %s)", ref.address, attempts,
                    exc_info=True)
        self._queue.append((ref, msg, sender, attempts + 1))

    def shutdown(self) -> None:
        """Nothing to release: the actors are plain objects."""
        self._queue.clear()


__all__ = ["InlineActorSystem", "InlineAddress"]
