"""Answering an API whose feature this broker does not have configured, as Kafka 2.6.3 does.

Kafka 2.6 advertises every API key on every listener; a request for a feature that is off (no authorizer, a
PLAINTEXT listener, no transaction coordinator) is handled by ``KafkaApis`` and answered with the error that implies,
item by item. Such an answer depends on the request alone, so the API's ``request_from_wire`` raises `NotConfigured`
with the error and the edge answers with the spec's ``error_response`` (each item failed with it), as it answers any
request its converter refuses: no actor, nothing traced.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.api.registry import RequestContext
from messages.common import Errors

Body = dict[str, Any]
# never reached: the converter answers first (the edge has no handler of that name)
ROUTE = "edge:not-configured"


class NotConfigured(Exception):  # noqa: N818 - not an error of kactor's: the request's answer
    """The request is answered, whole, with ``error`` (the edge reads ``.error``)."""

    def __init__(self, error: Errors) -> None:
        super().__init__(error.name)
        self.error = error


def answered_with(error_of: Callable[[int, Body], Errors]) -> Callable[[int, Body, RequestContext], Any]:
    """A ``request_from_wire`` answering every request with ``error_of(version, body)``."""
    def request_from_wire(version: int, body: Body, ctx: RequestContext) -> Any:
        raise NotConfigured(error_of(version, body))
    return request_from_wire


def always(error: Errors) -> Callable[[int, Body], Errors]:
    return lambda version, body: error


def no_response(version: int, response: Any) -> Body:
    """``response_to_wire`` of such an API: nothing but its error response is ever sent."""
    raise TypeError("a not-configured API is answered by its error_response only")
