"""Messages of the actor runtime itself: envelopes, actor start-up, timers, and the records a trace keeps."""

from __future__ import annotations

from typing import Any

from messages.registry import message


@message
class Envelope:
    """How every message travels between actors: the body, its sender's name, and the seq of its cause.

    ``cause`` is the trace sequence number of the message whose handling sent this one (None for inputs that
    come from outside the actor system, e.g. a ZooKeeper watch or a command-line request).
    """

    body: Any
    sender: str
    cause: int | None = None


@message
class ActorInit:
    """The first message every actor gets: its name and the key of the process runtime it belongs to."""

    name: str
    runtime_key: str


@message
class ScheduleTimer:
    """Ask the timer edge to deliver TimerFired(key) to the sender after delay_ms (replacing a timer of that key)."""

    key: str
    delay_ms: float


@message
class CancelTimer:
    key: str


@message
class TimerFired:
    key: str


@message
class ActorFailed:
    """Recorded when an actor's handler raised: which actor, which message type, and the error text."""

    actor: str
    message_type: str
    error: str
