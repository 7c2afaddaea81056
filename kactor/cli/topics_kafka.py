"""``kafka-topics.sh --bootstrap-server``: Kafka 2.6's ``TopicCommand.AdminClientTopicService`` through the Kafka
admin API (confluent-kafka's AdminClient: CreateTopics, DeleteTopics, CreatePartitions, DescribeConfigs, Metadata),
printing what the ZooKeeper form prints (kactor.admin.topics' lines, which are TopicCommand's).

As in 2.6, the broker answers the requests: a topic is created with the broker's defaults when ``--partitions`` or
``--replication-factor`` is left out, deleting prints nothing, and a describe knows nothing of topics marked for
deletion (the admin API does not say).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kactor.admin.topics import (
    PartitionInfo,
    ensure_topic_exists,
    topic_filter,
    topic_line,
)
from kactor.kafka_clients import DEFAULT_TIMEOUT_S, KafkaClientError, cluster_metadata, error_text
from zk_bridge.admin import topic_name

Out = Any
MIN_IN_SYNC_REPLICAS = "min.insync.replicas"  # TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG


def _result(future: Any, timeout_s: float) -> Any:
    """A future's result, or KafkaClientError with the broker's error (``NAME: message``)."""
    from confluent_kafka import KafkaException

    try:
        return future.result(timeout=timeout_s)
    except KafkaException as e:
        raise KafkaClientError(error_text(e)) from None


def get_topics(admin: Any, bootstrap: str, include: str | None, exclude_internal: bool = False,
               timeout_s: float = DEFAULT_TIMEOUT_S) -> list[str]:
    """AdminClientTopicService.getTopics: listTopics (internal ones unless excluded), the ``--topic`` regex."""
    names = sorted(cluster_metadata(admin, bootstrap, timeout_s).topics)
    pattern = topic_filter(include) if include is not None else None
    return [t for t in names
            if (pattern is None or pattern.fullmatch(t)) and not (exclude_internal and topic_name.is_internal(t))]


def create_topic(admin: Any, out: Out, topic: str, *, partitions: int | None, replication_factor: int | None,
                 replica_assignment: Mapping[int, Sequence[int]] | None, config: Mapping[str, str],
                 if_not_exists: bool = False, timeout_s: float = DEFAULT_TIMEOUT_S) -> bool:
    """AdminClientTopicService.createTopic: one CreateTopics request; False if it existed (``--if-not-exists``)."""
    from confluent_kafka.admin import NewTopic

    if replication_factor is not None and not 1 <= replication_factor <= 32767:
        raise KafkaClientError("The replication factor must be between 1 and 32767 inclusive")
    if partitions is not None and partitions < 1:
        raise KafkaClientError("The partitions must be greater than 0")
    if replica_assignment is not None:
        new = NewTopic(topic, len(replica_assignment),  # librdkafka wants the count with an assignment
                       replica_assignment=[list(replica_assignment[p]) for p in sorted(replica_assignment)],
                       config=dict(config))
    else:
        new = NewTopic(topic, num_partitions=-1 if partitions is None else partitions,
                       replication_factor=-1 if replication_factor is None else replication_factor,
                       config=dict(config))
    futures = admin.create_topics([new], operation_timeout=timeout_s, request_timeout=timeout_s)
    try:
        _result(futures[topic], timeout_s + 5)
    except KafkaClientError as e:
        if if_not_exists and str(e).startswith("TOPIC_ALREADY_EXISTS"):
            return False
        raise
    out(f"Created topic {topic}.")
    return True


def delete_topics(admin: Any, bootstrap: str, include: str, if_exists: bool = False,
                  timeout_s: float = DEFAULT_TIMEOUT_S) -> list[str]:
    """AdminClientTopicService.deleteTopic: one DeleteTopics request for the matched topics (no output, as 2.6)."""
    topics = get_topics(admin, bootstrap, include, timeout_s=timeout_s)
    ensure_topic_exists(topics, include, not if_exists)
    if topics:
        futures = admin.delete_topics(topics, operation_timeout=timeout_s, request_timeout=timeout_s)
        for t in topics:
            _result(futures[t], timeout_s + 5)
    return topics


def add_partitions(admin: Any, bootstrap: str, include: str, partitions: int,
                   replica_assignment: Mapping[int, Sequence[int]] | None = None, if_exists: bool = False,
                   timeout_s: float = DEFAULT_TIMEOUT_S) -> list[str]:
    """AdminClientTopicService.alterTopic: CreatePartitions up to ``partitions`` for each matched topic (a manual
    assignment gives the new partitions' replicas, from the topic's current partition count on). As 2.6.3's, it
    prints nothing when the brokers added the partitions (the ZooKeeper form's "Adding partitions succeeded!" is
    ZookeeperTopicService's); a broker's refusal is the command's error."""
    from confluent_kafka.admin import NewPartitions

    metadata = cluster_metadata(admin, bootstrap, timeout_s)
    topics = get_topics(admin, bootstrap, include, timeout_s=timeout_s)
    ensure_topic_exists(topics, include, not if_exists)
    new = []
    for t in topics:
        start = len(metadata.topics[t].partitions)
        manual = [list(r) for p, r in sorted((replica_assignment or {}).items()) if p >= start] or None
        # NewPartitions.increaseTo(n) without an assignment: confluent-kafka refuses an explicit None (its
        # replica_assignment must then be a list sized to the new partitions)
        new.append(NewPartitions(t, partitions) if manual is None else NewPartitions(t, partitions, manual))
    if new:
        futures = admin.create_partitions(new, operation_timeout=timeout_s, request_timeout=timeout_s)
        for t in topics:
            _result(futures[t], timeout_s + 5)
    return topics


def describe_topics(admin: Any, out: Out, bootstrap: str, include: str | None, *, under_replicated: bool = False,
                    unavailable: bool = False, with_overrides: bool = False, exclude_internal: bool = False,
                    if_exists: bool = False, under_min_isr: bool = False, at_min_isr: bool = False,
                    timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
    """AdminClientTopicService.describeTopic: Metadata for the partitions, DescribeConfigs for the configs (those
    not at their DEFAULT_CONFIG source are shown, as TopicDescription.printDescription does; min.insync.replicas,
    default or not, for --under-min-isr-partitions / --at-min-isr-partitions: PartitionDescription.minIsrCount)."""
    from confluent_kafka.admin import ConfigResource

    metadata = cluster_metadata(admin, bootstrap, timeout_s)
    topics = get_topics(admin, bootstrap, include, exclude_internal, timeout_s)
    ensure_topic_exists(topics, include, not if_exists)
    if not topics:
        return
    live = {b for b in metadata.brokers}
    describe_configs = not under_replicated and not unavailable and not under_min_isr and not at_min_isr
    configs: dict[str, dict[str, str]] = {}
    min_isr: dict[str, int] = {}
    if describe_configs or under_min_isr or at_min_isr:
        futures = admin.describe_configs([ConfigResource("TOPIC", t) for t in topics], request_timeout=timeout_s)
        for resource, future in futures.items():
            entries = _result(future, timeout_s + 5)
            configs[resource.name] = {e.name: e.value for e in sorted(entries.values(), key=lambda e: e.name)
                                      if not e.is_default}
            entry = entries.get(MIN_IN_SYNC_REPLICAS)
            if entry is not None and entry.value is not None:
                min_isr[resource.name] = int(entry.value)
    for t in topics:
        info = metadata.topics[t]
        partitions = [PartitionInfo(t, p.id, None if p.leader < 0 else p.leader, tuple(p.replicas), tuple(p.isrs))
                      for p in sorted(info.partitions.values(), key=lambda p: p.id)]
        if describe_configs and (not with_overrides or configs.get(t)):
            out(topic_line(t, partitions, configs.get(t, {}), False))
        if with_overrides:
            continue
        minimum = min_isr.get(t)
        for p in partitions:
            if describe_configs or (under_replicated and p.is_under_replicated) or \
                    (unavailable and p.is_unavailable(live)) or \
                    (under_min_isr and (p.leader is None or (minimum is not None and len(p.isr) < minimum))) or \
                    (at_min_isr and minimum is not None and len(p.isr) == minimum):
                out(p.line())
