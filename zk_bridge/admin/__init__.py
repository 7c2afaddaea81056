"""The broker's admin server and what it shares with Kafka's ZooKeeper tools: Kafka 2.6's ``kafka.server.AdminManager``
(with the admin parts of ``KafkaApis``: CreateTopics, DeleteTopics, configs, ACLs, client quotas, reassignments, served
to clients by writing ZooKeeper), ``kafka.zk.AdminZkClient`` and ``kafka.admin.AdminUtils``. The tools themselves
(TopicCommand, ConfigCommand, ReassignPartitionsCommand, ...) are in kactor/admin/.

The exception classes mirror the Kafka exceptions AdminZkClient and the tools throw, so a failure reads like Kafka's.
Every one is an `AdminError`; the admin server answers it with its Kafka error code, the CLI prints it as one line
with a non-zero exit code.
"""

from __future__ import annotations


class AdminError(Exception):
    """Base of every admin failure: a one-line, user-facing message (Kafka's message where Kafka has one)."""


class AdminOperationException(AdminError):  # noqa: N818 (Kafka\'s exception names)
    """kafka.admin.AdminOperationException."""


class AdminCommandFailedException(AdminError):  # noqa: N818 (Kafka\'s exception names)
    """kafka.common.AdminCommandFailedException."""


class InvalidTopicException(AdminError):  # noqa: N818 (Kafka\'s exception names)
    """org.apache.kafka.common.errors.InvalidTopicException."""


class TopicExistsException(AdminError):  # noqa: N818 (Kafka\'s exception names)
    """org.apache.kafka.common.errors.TopicExistsException."""


class UnknownTopicOrPartitionException(AdminError):  # noqa: N818 (Kafka\'s exception names)
    """org.apache.kafka.common.errors.UnknownTopicOrPartitionException."""


class TopicAlreadyMarkedForDeletionException(AdminError):  # noqa: N818 (Kafka\'s exception names)
    """kafka.common.TopicAlreadyMarkedForDeletionException."""


class InvalidPartitionsException(AdminError):  # noqa: N818 (Kafka\'s exception names)
    """org.apache.kafka.common.errors.InvalidPartitionsException."""


class InvalidReplicationFactorException(AdminError):  # noqa: N818 (Kafka\'s exception names)
    """org.apache.kafka.common.errors.InvalidReplicationFactorException."""


class InvalidReplicaAssignmentException(AdminError):  # noqa: N818 (Kafka\'s exception names)
    """org.apache.kafka.common.errors.InvalidReplicaAssignmentException."""


class BrokerNotAvailableException(AdminError):  # noqa: N818 (Kafka\'s exception names)
    """org.apache.kafka.common.errors.BrokerNotAvailableException."""


class IllegalArgumentException(AdminError):  # noqa: N818 (Kafka\'s exception names)
    """java.lang.IllegalArgumentException (Scala's ``require`` adds "requirement failed: ")."""


class ZooKeeperUnreachable(AdminError):  # noqa: N818 (Kafka\'s exception names)
    """ZooKeeper not reachable within the connect timeout (kafka.zookeeper.ZooKeeperClientTimeoutException)."""
