"""What the admin API handlers share (zk_bridge/admin/admin_manager.py, admin_configs.py, admin_reassign.py): Kafka's
ApiError of each exception they raise, the two Kafka exceptions the ZooKeeper tools had no use for, and the view of
the AdminManager the per-API modules work with."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

from core.broker.log_config import InvalidConfigurationException
from messages.common import Errors
from zk_bridge.admin import (
    AdminError,
    BrokerNotAvailableException,
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    InvalidReplicationFactorException,
    InvalidTopicException,
    TopicExistsException,
    UnknownTopicOrPartitionException,
)
from zk_bridge.admin.admin_zk import AdminZkClient
from zk_bridge.admin.config_entries import BrokerConfigView

log = logging.getLogger("kactor.admin_manager")

Body = dict[str, Any]


class InvalidRequestException(AdminError):  # noqa: N818 (Kafka's exception names)
    """org.apache.kafka.common.errors.InvalidRequestException."""


class ReassignmentInProgressException(AdminError):  # noqa: N818 (Kafka's exception names)
    """org.apache.kafka.common.errors.ReassignmentInProgressException."""


# ApiError.fromThrowable: the Kafka error of each exception the admin code raises (anything else: UNKNOWN_SERVER_ERROR)
ERROR_OF: dict[type[Exception], Errors] = {
    InvalidTopicException: Errors.INVALID_TOPIC_EXCEPTION,
    TopicExistsException: Errors.TOPIC_ALREADY_EXISTS,
    InvalidPartitionsException: Errors.INVALID_PARTITIONS,
    InvalidReplicationFactorException: Errors.INVALID_REPLICATION_FACTOR,
    InvalidReplicaAssignmentException: Errors.INVALID_REPLICA_ASSIGNMENT,
    InvalidConfigurationException: Errors.INVALID_CONFIG,
    InvalidRequestException: Errors.INVALID_REQUEST,
    UnknownTopicOrPartitionException: Errors.UNKNOWN_TOPIC_OR_PARTITION,
    BrokerNotAvailableException: Errors.BROKER_NOT_AVAILABLE,
    ReassignmentInProgressException: Errors.REASSIGNMENT_IN_PROGRESS,
}


def api_error(e: BaseException) -> tuple[Errors, str | None]:
    """ApiError.fromThrowable: (error, message); an unexpected failure is logged and its message kept out of the
    answer."""
    for cls in type(e).__mro__:
        if cls in ERROR_OF:
            return ERROR_OF[cls], str(e)
    log.error("admin request failed", exc_info=e)
    return Errors.UNKNOWN_SERVER_ERROR, None


class AdminOps(Protocol):
    """What the per-API modules use of the AdminManager."""

    admin: AdminZkClient
    broker_id: int
    clock: Callable[[], float]
    controller_events: Callable[[Any], None] | None

    def is_controller(self) -> bool: ...

    def wait_until(self, done: Callable[[], bool], timeout_ms: int) -> bool: ...

    def broker_view(self) -> BrokerConfigView: ...
