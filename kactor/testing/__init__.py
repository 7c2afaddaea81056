"""kactor.testing: kactor as the Kafka a Python project's own tests start — a pytest plugin (``kactor.testing.plugin``,
registered through the ``pytest11`` entry point when kactor is installed) with a session-wide ``kafka_cluster``, a
per-test ``kafka_topic`` factory, ``bootstrap_servers`` and ``kafka_client_config``, and the fault helpers a test
calls on the cluster (`KafkaTestCluster`). docs/testing.md shows it with confluent-kafka, kafka-python, aiokafka and
faststream.

Importing this package costs nothing: the cluster's modules are imported when a test first asks for a fixture.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kactor.testing.cluster import KafkaTestCluster, TopicFactory

__all__ = ["KafkaTestCluster", "TopicFactory"]


def __getattr__(name: str) -> object:
    if name in __all__:
        from kactor.testing import cluster

        return getattr(cluster, name)
    raise AttributeError(name)
