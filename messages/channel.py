"""Messages between the ControllerActor and its BrokerChannelActors (Kafka's ControllerChannelManager).

The controller enqueues requests with core.effects.SendRequest; the channel answers each with ChannelResponse.
"""

from __future__ import annotations

from typing import Any

from messages.common import Broker
from messages.registry import message


@message
class ChannelStart:
    """Start sending to ``broker`` at its endpoint of listener ``listener_name`` (the inter-broker listener);
    responses go to the actor named ``controller``."""

    broker: Broker
    controller: str
    request_timeout_ms: float = 30000.0
    listener_name: str = "PLAINTEXT"


@message
class ChannelStop:
    """Remove the broker (KAFKA-4959 order): stop sending, drop the queue, close the connection."""


@message
class ChannelResponse:
    """A request of the controller's, answered by broker ``broker_id``. ``request`` is the StopReplicaRequest for a
    StopReplica answer (its callback needs it) and None otherwise."""

    broker_id: int
    request: Any
    response: Any
