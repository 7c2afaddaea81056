"""Messages of a broker's start-up order beyond its registration: KafkaServer.startup hands the authorizer's start
futures to socketServer.startProcessingRequests, so no request is read before the authorizer has started (for
AclAuthorizer: its ACL cache loaded from ZooKeeper)."""

from __future__ import annotations

from messages.registry import message


@message
class AwaitAuthorizer:
    """To the kafka-server, before BrokerStartup: an authorizer is configured, so the listeners start reading requests
    only once it has started (`AuthorizerStarted`) as well as the broker has registered."""


@message
class AuthorizerStarted:
    """Authorizer.start's futures completed: AclAuthorizer's cache is loaded and its change listeners run. ``error``:
    why it could not be loaded ('' when it was), a failed start-up of the broker as in Kafka."""

    error: str = ""
