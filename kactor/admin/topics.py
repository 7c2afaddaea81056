"""``kafka-topics.sh --zookeeper``: Kafka 2.6's ``TopicCommand.ZookeeperTopicService`` over `AdminZkClient`.

Each action takes an AdminZkClient and an ``out`` callable (one printed line per call) and raises an AdminError
on refusal, having written nothing. Output lines match Kafka 2.6's wording.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

import attrs

from core.broker import log_config
from core.broker.log_config import InvalidConfigurationException
from messages.common import NO_LEADER, TopicPartition
from zk_bridge.admin import (
    AdminCommandFailedException,
    AdminOperationException,
    InvalidTopicException,
    TopicAlreadyMarkedForDeletionException,
    TopicExistsException,
    UnknownTopicOrPartitionException,
    topic_name,
)
from zk_bridge.admin.admin_zk import RACK_AWARE_ENFORCED, AdminZkClient

Out = Callable[[str], None]

PARTITION_INCREASE_WARNING = ("WARNING: If partitions are increased for a topic that has a key, the partition logic "
                              "or ordering of the messages will be affected")
CONFIG_ALTER_WARNING = ("WARNING: Altering topic configuration from this script has been deprecated and may be "
                        "removed in future releases.\n         Going forward, please use kafka-configs.sh for this "
                        "functionality")
DELETE_NOTE = "Note: This will have no impact if delete.topic.enable is not set to true."


# -- --config / --delete-config (TopicCommand.parseTopicConfigsToBeAdded / ToBeDeleted) ----------------------------
def parse_configs_to_add(pairs: Iterable[str]) -> dict[str, str]:
    """TopicCommand.parseTopicConfigsToBeAdded: each ``key=val`` (spaces around '=' allowed), then validated."""
    props: dict[str, str] = {}
    for pair in pairs:
        parts = re.split(r"\s*=\s*", pair)
        while parts and parts[-1] == "":  # Java's String.split drops trailing empty strings
            parts.pop()
        if len(parts) != 2:
            raise InvalidConfigurationException(
                'Invalid topic config: all configs to be added must be in the format "key=val".')
        props[parts[0].strip()] = parts[1].strip()
    log_config.validate(props)
    return props


def parse_configs_to_delete(names: Iterable[str]) -> list[str]:
    """TopicCommand.parseTopicConfigsToBeDeleted."""
    result = [n.strip() for n in names]
    log_config.validate_names(result)
    return result


# -- topic selection (TopicCommand.getTopics / kafka.utils.Whitelist) ----------------------------------------------
def topic_filter(raw: str) -> re.Pattern[str]:
    """kafka.utils.TopicFilter: commas mean '|', spaces and surrounding quotes dropped; a full-match regex."""
    regex = raw.strip().replace(",", "|").replace(" ", "")
    regex = re.sub(r"""^["']+""", "", regex)
    regex = re.sub(r"""["']+$""", "", regex)
    try:
        return re.compile(regex)
    except re.error:
        raise AdminCommandFailedException(f"{regex} is an invalid regex.") from None


def get_topics(admin: AdminZkClient, include: str | None, exclude_internal: bool = False) -> list[str]:
    """TopicCommand.getTopics: all topics (sorted), filtered by the ``--topic`` regex and ``--exclude-internal``."""
    topics = admin.get_all_topics_in_cluster()
    pattern = topic_filter(include) if include is not None else None
    return [t for t in topics
            if (pattern is None or pattern.fullmatch(t)) and not (exclude_internal and topic_name.is_internal(t))]


def ensure_topic_exists(found: Sequence[str], requested: str | None, require: bool) -> None:
    """TopicCommand.ensureTopicExists."""
    if requested is not None and require and not found:
        raise UnknownTopicOrPartitionException(f"Topic '{requested}' does not exist as expected")


# -- create --------------------------------------------------------------------------------------------------------
def create_topic(admin: AdminZkClient, out: Out, topic: str, *, partitions: int | None = None,
                 replication_factor: int | None = None, replica_assignment: Mapping[int, Sequence[int]] | None = None,
                 config: Mapping[str, str] | None = None, if_not_exists: bool = False,
                 rack_aware_mode: str = RACK_AWARE_ENFORCED, fixed_start_index: int = -1,
                 replica_shift: int | None = None) -> dict[int, list[int]] | None:
    """TopicService.createTopic (ZooKeeper): returns the assignment written, None if it existed (--if-not-exists)."""
    config = dict(config or {})
    if log_config.MESSAGE_FORMAT_VERSION in config:
        out(f"WARNING: The configuration {log_config.MESSAGE_FORMAT_VERSION}="
            f"{config[log_config.MESSAGE_FORMAT_VERSION]} is specified. This configuration will be ignored if the "
            "version is newer than the inter.broker.protocol.version specified in the broker.")
    if topic_name.has_collision_chars(topic):
        out(topic_name.COLLISION_WARNING)
    try:
        if replica_assignment is not None:
            assignment = {p: list(r) for p, r in replica_assignment.items()}
            admin.create_topic_with_assignment(topic, config, assignment)
        else:
            if partitions is None or replication_factor is None:
                raise AdminCommandFailedException("Missing required argument \"[partitions]\" or "
                                                  "\"[replication-factor]\"")
            assignment = admin.create_topic(topic, partitions, replication_factor, config, rack_aware_mode,
                                            fixed_start_index, replica_shift)
    except TopicExistsException:
        if if_not_exists:
            return None
        raise
    out(f"Created topic {topic}.")
    return assignment


# -- list ----------------------------------------------------------------------------------------------------------
def list_topics(admin: AdminZkClient, out: Out, include: str | None = None, exclude_internal: bool = False) -> None:
    """ZookeeperTopicService.listTopics: one name per line, ``<t> - marked for deletion`` when marked."""
    deleting = set(admin.get_topic_deletions())
    for topic in get_topics(admin, include, exclude_internal):
        out(f"{topic} - marked for deletion" if topic in deleting else topic)


# -- alter ---------------------------------------------------------------------------------------------------------
def alter_topic(admin: AdminZkClient, out: Out, include: str, *, partitions: int | None = None,
                replica_assignment: Mapping[int, Sequence[int]] | None = None,
                config: Mapping[str, str] | None = None, delete_config: Sequence[str] = (),
                if_exists: bool = False, replica_shift: int | None = None) -> None:
    """ZookeeperTopicService.alterTopic: config overrides and/or more partitions. Everything is validated for
    every matched topic before the first write."""
    topics = get_topics(admin, include)
    ensure_topic_exists(topics, include, not if_exists)
    config = dict(config or {})
    delete_config = parse_configs_to_delete(delete_config)
    plans: list[tuple[str, dict[str, str] | None, dict[int, list[int]] | None]] = []
    brokers = admin.get_broker_metadatas() if partitions is not None else []
    for topic in topics:
        new_config: dict[str, str] | None = None
        if config or delete_config:
            new_config = admin.fetch_topic_config(topic)
            new_config.update(config)
            for name in delete_config:
                new_config.pop(name, None)
            log_config.validate(new_config)
        new_partitions: dict[int, list[int]] | None = None
        if partitions is not None:
            if topic_name.is_internal(topic):
                raise AdminOperationException(
                    f"The number of partitions for the internal topic {topic} cannot be changed.")
            existing = admin.get_full_replica_assignment(topic)
            if not existing:
                raise InvalidTopicException(f"The topic {topic} does not exist")
            manual = {p: list(r) for p, r in (replica_assignment or {}).items() if p >= len(existing)}
            new_partitions = admin.add_partitions(topic, existing, brokers, partitions, manual or None,
                                                  validate_only=True, replica_shift=replica_shift)
        plans.append((topic, new_config, new_partitions))
    for topic, new_config, new_partitions in plans:
        if new_config is not None:
            out(CONFIG_ALTER_WARNING)
            admin.change_topic_config(topic, new_config)
            out(f"Updated config for topic {topic}.")
        if new_partitions is not None:
            out(PARTITION_INCREASE_WARNING)
            existing = admin.get_full_replica_assignment(topic)
            added = {p: r for p, r in new_partitions.items() if p not in existing}
            admin.add_partitions(topic, existing, brokers, partitions or 0, added)
            out("Adding partitions succeeded!")


# -- delete --------------------------------------------------------------------------------------------------------
def delete_topic(admin: AdminZkClient, out: Out, include: str, if_exists: bool = False) -> list[str]:
    """ZookeeperTopicService.deleteTopic: mark each matched topic for deletion (refused as a whole, before any
    write, if one is internal). A topic already marked is reported on stdout and skipped, exit 0, as Kafka 2.6
    does (it catches NodeExistsException from createDeleteTopicPath and prints the line)."""
    topics = get_topics(admin, include)
    ensure_topic_exists(topics, include, not if_exists)
    for topic in topics:
        if topic_name.is_internal(topic):
            raise AdminOperationException(
                f"Topic {topic} is a kafka internal topic and is not allowed to be marked for deletion.")
    for topic in topics:
        try:
            admin.delete_topic(topic)
        except TopicAlreadyMarkedForDeletionException:
            out(f"Topic {topic} is already marked for deletion.")
            continue
        out(f"Topic {topic} is marked for deletion.")
        out(DELETE_NOTE)
    return topics


# -- describe ------------------------------------------------------------------------------------------------------
@attrs.frozen
class PartitionInfo:
    """One partition as TopicCommand's PartitionDescription sees it (plus the KIP-455 adding/removing sets)."""

    topic: str
    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()
    leader_epoch: int | None = None
    controller_epoch: int | None = None

    @property
    def is_under_replicated(self) -> bool:
        """PartitionDescription.isUnderReplicated (ZooKeeper mode: replicas − ISR > 0)."""
        return len(self.replicas) - len(self.isr) > 0

    def is_unavailable(self, live_brokers: set[int]) -> bool:
        """PartitionDescription.hasUnavailablePartitions: no leader, or the leader is not a live broker."""
        return self.leader is None or self.leader not in live_brokers

    @property
    def is_reassigning(self) -> bool:
        return bool(self.adding or self.removing)

    def line(self, marked_for_deletion: bool = False) -> str:
        """PartitionDescription.printDescription."""
        text = (f"\tTopic: {self.topic}\tPartition: {self.partition}"
                f"\tLeader: {'none' if self.leader is None else self.leader}"
                f"\tReplicas: {','.join(map(str, self.replicas))}\tIsr: {','.join(map(str, self.isr))}")
        if self.is_reassigning:
            text += (f"\tAdding Replicas: {','.join(map(str, self.adding))}"
                     f"\tRemoving Replicas: {','.join(map(str, self.removing))}")
        if marked_for_deletion:
            text += "\tMarkedForDeletion: true"
        return text


def read_partitions(admin: AdminZkClient, topic: str) -> list[PartitionInfo] | None:
    """Assignment (topic znode) joined with each partition's state znode; None if the topic does not exist."""
    assignment = admin.get_full_replica_assignment(topic)
    if not assignment and not admin.topic_exists(topic):
        return None
    result = []
    for p, ra in sorted(assignment.items()):
        state = admin.get_topic_partition_state(TopicPartition(topic, p))
        if state is None:
            leader, isr, epoch, cepoch = None, (), None, None
        else:
            lai = state.leader_and_isr
            leader = None if lai.leader == NO_LEADER else lai.leader  # LeaderAndIsr.leaderOpt
            isr, epoch, cepoch = tuple(lai.isr), lai.leader_epoch, state.controller_epoch
        result.append(PartitionInfo(topic, p, leader, tuple(ra.replicas), isr, tuple(ra.adding_replicas),
                                    tuple(ra.removing_replicas), epoch, cepoch))
    return result


def topic_line(topic: str, partitions: Sequence[PartitionInfo], config: Mapping[str, str],
               marked_for_deletion: bool) -> str:
    """TopicDescription.printDescription (2.6: no TopicId)."""
    first = partitions[0] if partitions else None
    rf = len(first.replicas) - len(first.adding) if first else 0
    configs = ",".join(f"{k}={v}" for k, v in config.items())
    text = f"Topic: {topic}\tPartitionCount: {len(partitions)}\tReplicationFactor: {rf}\tConfigs: {configs}"
    return text + ("\tMarkedForDeletion: true" if marked_for_deletion else "")


def describe_topics(admin: AdminZkClient, out: Out, include: str | None = None, *,
                    under_replicated: bool = False, unavailable: bool = False, with_overrides: bool = False,
                    exclude_internal: bool = False, if_exists: bool = False) -> None:
    """ZookeeperTopicService.describeTopic with DescribeOptions' filters."""
    topics = get_topics(admin, include, exclude_internal)
    ensure_topic_exists(topics, include, not if_exists)
    live = set(admin.get_sorted_broker_list())
    describe_configs = not under_replicated and not unavailable
    for topic in topics:
        partitions = read_partitions(admin, topic)
        if partitions is None:
            out(f"Topic {topic} doesn't exist!")
            continue
        marked = admin.is_topic_marked_for_deletion(topic)
        if describe_configs:
            config = admin.fetch_topic_config(topic)
            if not with_overrides or config:
                out(topic_line(topic, partitions, config, marked))
        if with_overrides:
            continue  # DescribeOptions.describePartitions = !reportOverriddenConfigs
        for info in partitions:
            if (describe_configs or (under_replicated and info.is_under_replicated)
                    or (unavailable and info.is_unavailable(live))):
                out(info.line(marked))
