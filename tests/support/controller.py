"""Helpers of the controller-core tests: the requests a procedure sent, brokers as Kafka's TestUtils makes them."""

from __future__ import annotations

from typing import Any

from core.effects import SendRequest
from messages.common import Broker, EndPoint


def sent(effects: list[Any], request_type: type | None = None, broker_id: int | None = None) -> list[SendRequest]:
    """The SendRequest effects, optionally of one request type and/or to one broker."""
    return [e for e in effects if isinstance(e, SendRequest)
            and (request_type is None or isinstance(e.request, request_type))
            and (broker_id is None or e.broker_id == broker_id)]


def broker(broker_id: int, epoch: int = 1, host: str | None = None) -> Broker:
    """A Broker with one PLAINTEXT endpoint (TestUtils.createBrokerAndEpoch)."""
    return Broker(broker_id, (EndPoint(host or f"host{broker_id}", 9092),), None, epoch)
