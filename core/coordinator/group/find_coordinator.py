"""FindCoordinator for groups and transactional ids (KafkaApis.handleFindCoordinatorRequest +
getOrCreateInternalTopic), and the creation of ``__consumer_offsets`` / ``__transaction_state`` on the first request.

The coordinator of a group is the leader of partition ``abs(javaHash(groupId)) % partitions`` of
``__consumer_offsets``; of a transactional id (key type 1), the leader of its partition of ``__transaction_state``
(transaction.state.log.num.partitions 50, replication factor 3, min.insync.replicas 2, compacted, uncompressed).
That leader and its endpoint come from this broker's metadata cache, as in KafkaApis (`ReadMetadataCache`, an ask
of the replica manager, whose cache UpdateMetadata fills): the controller sends a new leader its LeaderAndIsr before
anyone its UpdateMetadata, so a broker named coordinator has already been elected for the partition. (kactor read
the partition's state znode: a controller that died between writing it and sending LeaderAndIsr left a broker named
coordinator that answered NOT_COORDINATOR for seconds, and librdkafka, given NOT_COORDINATOR for an OffsetFetch of
an assignment, never asks again: a consumer that fetched nothing for a whole chaos run.) The topic's existence and
partition count are read from ZooKeeper (its znode). While the topic does not exist it is created
(KafkaApis.createInternalTopic: only once offsets.topic.replication.factor brokers are alive, with that replication
factor; AdminZkClient.createTopic: the assignment and its config in one transaction) and the answer is
COORDINATOR_NOT_AVAILABLE until the controller has elected the partition's leader.

Departure from 2.6, for exact replay: the replicas are placed from start index 0 (AdminUtils' rack-unaware
placement with fixedStartIndex 0; 2.6 draws the start index at random).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import attrs

from core.coordinator.group.group_metadata_manager import GROUP_METADATA_TOPIC_NAME, partition_for
from core.effects import Proc
from core.zk_client import KafkaZkClient
from messages.common import Errors, ReplicaAssignment, TopicPartition
from messages.group import (
    COORDINATOR_TYPE_GROUP,
    COORDINATOR_TYPE_TRANSACTION,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    GroupCoordinatorConfig,
)
from messages.metadata import MetadataBroker, MetadataRequest, MetadataResponse
from messages.topic import TRANSACTION_STATE_TOPIC_NAME
from messages.transaction import TransactionCoordinatorConfig
from messages.zk import NODEEXISTS, NONODE, OK
from protocol.zk import paths, znodes
from protocol.zk.znodes import ZnodeDecodeError

log = logging.getLogger("kactor.coordinator")


@attrs.frozen(slots=True)
class ReadMetadataCache:
    """An ask of this broker's MetadataCache: ``topic`` as a Metadata request on ``listener`` sees it (no
    auto-creation), answered with that `MetadataResponse`."""

    topic: str
    listener: str

    def request(self) -> MetadataRequest:
        """KafkaApis' metadataCache.getTopicMetadata(Set(topic), listenerName), as the cache's Metadata request."""
        return MetadataRequest((self.topic,), allow_auto_topic_creation=False, listener=self.listener)


@attrs.frozen
class InternalTopic:
    """An internal topic KafkaApis.createInternalTopic creates on the first FindCoordinator for it: its name, its
    partition and replica counts, the config its creation writes, and the setting named when too few brokers are
    alive."""

    name: str
    num_partitions: int
    replication_factor: int
    configs: tuple[tuple[str, str], ...]
    replication_factor_setting: str
    what: str


def offsets_topic_configs(config: GroupCoordinatorConfig) -> dict[str, str]:
    """GroupCoordinator.offsetsTopicConfigs."""
    return {"cleanup.policy": "compact", "compression.type": "producer",
            "segment.bytes": str(config.offsets_topic_segment_bytes)}


def offsets_topic(config: GroupCoordinatorConfig) -> InternalTopic:
    return InternalTopic(GROUP_METADATA_TOPIC_NAME, config.offsets_topic_num_partitions,
                         config.offsets_topic_replication_factor, tuple(offsets_topic_configs(config).items()),
                         "offsets.topic.replication.factor", "offsets topic")


def transaction_topic_configs(config: TransactionCoordinatorConfig) -> dict[str, str]:
    """TransactionStateManager.transactionTopicConfigs."""
    return {"unclean.leader.election.enable": "false", "compression.type": "uncompressed",
            "cleanup.policy": "compact", "min.insync.replicas": str(config.transaction_log_min_isr),
            "segment.bytes": str(config.transaction_log_segment_bytes)}


def transaction_topic(config: TransactionCoordinatorConfig) -> InternalTopic:
    return InternalTopic(TRANSACTION_STATE_TOPIC_NAME, config.transaction_log_num_partitions,
                         config.transaction_log_replication_factor, tuple(transaction_topic_configs(config).items()),
                         "transaction.state.log.replication.factor", "transactions topic")


def assign_replicas(brokers: Sequence[int], partitions: int, replication_factor: int,
                    topic: str = GROUP_METADATA_TOPIC_NAME) -> dict[TopicPartition, ReplicaAssignment]:
    """AdminUtils.assignReplicasToBrokersRackUnaware with fixedStartIndex 0: partition p's first replica is
    broker p mod n, the others follow it with a shift that grows each time p wraps around the broker list."""
    n = len(brokers)
    out = {}
    for p in range(partitions):
        first, shift = p % n, p // n
        replicas = [brokers[first]] + [brokers[(first + 1 + (shift + j) % (n - 1)) % n]
                                       for j in range(replication_factor - 1)]
        out[TopicPartition(topic, p)] = ReplicaAssignment(tuple(replicas))
    return out


def topic_partition_count(zk: KafkaZkClient, topic: str) -> Proc[int | None]:
    """KafkaZkClient.getTopicPartitionCount: None when the topic does not exist."""
    (r,) = yield from zk.get_data_raw([paths.TopicZNode.path(topic)])
    if r.code != OK:
        return None
    try:
        return len(znodes.decode_topic_assignment(topic, r.data)) or None
    except ZnodeDecodeError as e:
        log.error("Ignoring the assignment of %s: %s", topic, e)
        return None


def offsets_topic_partition_count(zk: KafkaZkClient) -> Proc[int | None]:
    """KafkaZkClient.getTopicPartitionCount(__consumer_offsets): None when the topic does not exist."""
    return (yield from topic_partition_count(zk, GROUP_METADATA_TOPIC_NAME))


def create_internal_topic(zk: KafkaZkClient, topic: InternalTopic) -> Proc[None]:
    """KafkaApis.createInternalTopic: its partitions with its replication factor over the live brokers; while fewer
    brokers are alive, nothing (the caller answers COORDINATOR_NOT_AVAILABLE), so the topic never gets fewer
    replicas than configured."""
    brokers = yield from zk.get_sorted_broker_list()
    rf = topic.replication_factor
    if len(brokers) < rf:
        log.error("Number of alive brokers '%d' does not meet the required replication factor '%d' for the %s "
                  "(configured via '%s'). This error can be ignored if the cluster is starting up and not all "
                  "brokers are up yet.", len(brokers), rf, topic.what, topic.replication_factor_setting)
        return
    assignment = assign_replicas(brokers, topic.num_partitions, rf, topic.name)
    r = yield from zk.create_topic_assignment_with_config(topic.name, assignment, dict(topic.configs),
                                                          config_exists=False)
    if r.code == OK:
        log.info("Created topic %s with %d partitions and replication factor %d", topic.name, topic.num_partitions,
                 rf)
    elif r.code != NODEEXISTS:  # NODEEXISTS: another broker created it first
        log.warning("Could not create %s: %s", topic.name, r.code)


def create_offsets_topic(zk: KafkaZkClient, config: GroupCoordinatorConfig) -> Proc[None]:
    """KafkaApis.createInternalTopic(__consumer_offsets)."""
    yield from create_internal_topic(zk, offsets_topic(config))


def find_coordinator(zk: KafkaZkClient, config: GroupCoordinatorConfig, num_partitions: int,
                     req: FindCoordinatorRequest, txn_config: TransactionCoordinatorConfig | None = None
                     ) -> Proc[tuple[FindCoordinatorResponse, int | None]]:
    """The answer to ``req``, and the partition count of the key type's topic as read (None: not read): a group's
    coordinator leads its __consumer_offsets partition, a transactional id's its __transaction_state partition
    (``num_partitions`` is the count known of that topic)."""
    if req.key_type == COORDINATOR_TYPE_TRANSACTION:
        topic = transaction_topic(txn_config or TransactionCoordinatorConfig())
    elif req.key_type == COORDINATOR_TYPE_GROUP:
        topic = offsets_topic(config)
    else:
        return FindCoordinatorResponse(Errors.INVALID_REQUEST,
                                       error_message=f"Unknown coordinator type: {req.key_type}"), None
    name = topic.name
    topic_path = paths.TopicZNode.path(name)
    tp = TopicPartition(name, partition_for(req.key, num_partitions))
    (topic_r,) = yield from zk.get_data_raw([topic_path])
    if topic_r.code == NONODE:
        yield from create_internal_topic(zk, topic)
        return FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE), None
    try:
        count = len(znodes.decode_topic_assignment(name, topic_r.data))
    except ZnodeDecodeError as e:
        log.error("Ignoring the assignment of %s: %s", name, e)
        return FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE), None
    if count and count != num_partitions:
        tp = TopicPartition(name, partition_for(req.key, count))
    cached: MetadataResponse = yield ReadMetadataCache(name, req.listener)
    node = coordinator_node(cached, tp)
    if node is None:
        return FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE), count or None
    return FindCoordinatorResponse(Errors.NONE, node.node_id, node.host, node.port), count or None


def coordinator_node(cached: MetadataResponse, tp: TopicPartition) -> MetadataBroker | None:
    """KafkaApis.handleFindCoordinatorRequest's coordinatorEndpoint: ``tp``'s leader in the cache's metadata of its
    topic, if it has one, is alive, and has an endpoint on the request's listener (a client could not reach another
    listener's address); else None (COORDINATOR_NOT_AVAILABLE)."""
    topic = next((t for t in cached.topics if t.name == tp.topic and t.error is Errors.NONE), None)
    partition = None if topic is None else next(
        (p for p in topic.partitions if p.partition_index == tp.partition), None)
    if partition is None or partition.leader < 0:
        return None
    # the answer's brokers are the alive ones with an endpoint on the request's listener
    return next((b for b in cached.brokers if b.node_id == partition.leader), None)
