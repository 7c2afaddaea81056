"""FindCoordinator for groups (KafkaApis.handleFindCoordinatorRequest + getOrCreateInternalTopic), and the
creation of ``__consumer_offsets`` on the first request.

The coordinator of a group is the leader of partition ``abs(javaHash(groupId)) % partitions`` of
``__consumer_offsets``. kactor reads that leader and its registration from ZooKeeper (the partition's state znode
and /brokers/ids/<leader>): the group coordinator's actor holds no metadata cache of its own; ZooKeeper is what
the controller's UpdateMetadata carries to the cache, a moment later. While the topic does not exist it is created
(KafkaApis.createInternalTopic: only once offsets.topic.replication.factor brokers are alive, with that replication
factor; AdminZkClient.createTopic: the assignment and its config in one transaction) and the answer is
COORDINATOR_NOT_AVAILABLE until the controller has elected the partition's leader.

Departure from 2.6, for exact replay: the replicas are placed from start index 0 (AdminUtils' rack-unaware
placement with fixedStartIndex 0; 2.6 draws the start index at random).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from core.coordinator.group.group_metadata_manager import GROUP_METADATA_TOPIC_NAME, partition_for
from core.effects import Proc
from core.zk_client import KafkaZkClient, partition_state_or_none
from messages.common import Errors, ReplicaAssignment, TopicPartition
from messages.group import (
    COORDINATOR_TYPE_GROUP,
    COORDINATOR_TYPE_TRANSACTION,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    GroupCoordinatorConfig,
)
from messages.zk import NODEEXISTS, NONODE, OK
from zk_bridge import paths, znodes
from zk_bridge.znodes import ZnodeDecodeError

log = logging.getLogger("kactor.coordinator")


def offsets_topic_configs(config: GroupCoordinatorConfig) -> dict[str, str]:
    """GroupCoordinator.offsetsTopicConfigs."""
    return {"cleanup.policy": "compact", "compression.type": "producer",
            "segment.bytes": str(config.offsets_topic_segment_bytes)}


def assign_replicas(brokers: Sequence[int], partitions: int, replication_factor: int
                    ) -> dict[TopicPartition, ReplicaAssignment]:
    """AdminUtils.assignReplicasToBrokersRackUnaware with fixedStartIndex 0: partition p's first replica is
    broker p mod n, the others follow it with a shift that grows each time p wraps around the broker list."""
    n = len(brokers)
    out = {}
    for p in range(partitions):
        first, shift = p % n, p // n
        replicas = [brokers[first]] + [brokers[(first + 1 + (shift + j) % (n - 1)) % n]
                                       for j in range(replication_factor - 1)]
        out[TopicPartition(GROUP_METADATA_TOPIC_NAME, p)] = ReplicaAssignment(tuple(replicas))
    return out


def offsets_topic_partition_count(zk: KafkaZkClient) -> Proc[int | None]:
    """KafkaZkClient.getTopicPartitionCount(__consumer_offsets): None when the topic does not exist."""
    (r,) = yield from zk.get_data_raw([paths.TopicZNode.path(GROUP_METADATA_TOPIC_NAME)])
    if r.code != OK:
        return None
    try:
        return len(znodes.decode_topic_assignment(GROUP_METADATA_TOPIC_NAME, r.data)) or None
    except ZnodeDecodeError as e:
        log.error("Ignoring the assignment of %s: %s", GROUP_METADATA_TOPIC_NAME, e)
        return None


def create_offsets_topic(zk: KafkaZkClient, config: GroupCoordinatorConfig) -> Proc[None]:
    """KafkaApis.createInternalTopic(__consumer_offsets): offsets.topic.num.partitions partitions with
    offsets.topic.replication.factor replicas over the live brokers; while fewer brokers are alive, nothing (the
    caller answers COORDINATOR_NOT_AVAILABLE), so the topic never gets fewer replicas than configured."""
    brokers = yield from zk.get_sorted_broker_list()
    rf = config.offsets_topic_replication_factor
    if len(brokers) < rf:
        log.error("Number of alive brokers '%d' does not meet the required replication factor '%d' for the offsets "
                  "topic (configured via 'offsets.topic.replication.factor'). This error can be ignored if the "
                  "cluster is starting up and not all brokers are up yet.", len(brokers), rf)
        return
    assignment = assign_replicas(brokers, config.offsets_topic_num_partitions, rf)
    r = yield from zk.create_topic_assignment_with_config(GROUP_METADATA_TOPIC_NAME, assignment,
                                                          offsets_topic_configs(config), config_exists=False)
    if r.code == OK:
        log.info("Created topic %s with %d partitions and replication factor %d", GROUP_METADATA_TOPIC_NAME,
                 config.offsets_topic_num_partitions, rf)
    elif r.code != NODEEXISTS:  # NODEEXISTS: another broker created it first
        log.warning("Could not create %s: %s", GROUP_METADATA_TOPIC_NAME, r.code)


def find_coordinator(zk: KafkaZkClient, config: GroupCoordinatorConfig, num_partitions: int,
                     req: FindCoordinatorRequest) -> Proc[tuple[FindCoordinatorResponse, int | None]]:
    """The answer to ``req``, and the partition count of __consumer_offsets as read (None: not read)."""
    if req.key_type == COORDINATOR_TYPE_TRANSACTION:
        return FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE,
                                       error_message="kactor has no transaction coordinator"), None
    if req.key_type != COORDINATOR_TYPE_GROUP:
        return FindCoordinatorResponse(Errors.INVALID_REQUEST,
                                       error_message=f"Unknown coordinator type: {req.key_type}"), None
    topic_path = paths.TopicZNode.path(GROUP_METADATA_TOPIC_NAME)
    tp = TopicPartition(GROUP_METADATA_TOPIC_NAME, partition_for(req.key, num_partitions))
    topic_r, state_r = yield from zk.get_data_raw([topic_path, paths.TopicPartitionStateZNode.path(tp)])
    if topic_r.code == NONODE:
        yield from create_offsets_topic(zk, config)
        return FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE), None
    try:
        count = len(znodes.decode_topic_assignment(GROUP_METADATA_TOPIC_NAME, topic_r.data))
    except ZnodeDecodeError as e:
        log.error("Ignoring the assignment of %s: %s", GROUP_METADATA_TOPIC_NAME, e)
        return FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE), None
    if count and count != num_partitions:
        tp = TopicPartition(GROUP_METADATA_TOPIC_NAME, partition_for(req.key, count))
        (state_r,) = yield from zk.get_data_raw([paths.TopicPartitionStateZNode.path(tp)])
    state = partition_state_or_none(state_r, tp) if state_r.code == OK else None
    leader = state.leader_and_isr.leader if state is not None else -1
    broker = (yield from zk.get_broker(leader)) if leader >= 0 else None
    # KafkaApis: getAliveBroker(leader).flatMap(_.getNode(request.context.listenerName)): a coordinator without an
    # endpoint on the client's listener is not available to it (the client could not reach another listener's)
    endpoint = None if broker is None else next(
        (ep for ep in broker.endpoints if ep.listener_name == req.listener), None)
    if broker is None or endpoint is None:
        return FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE), count or None
    return FindCoordinatorResponse(Errors.NONE, broker.id, endpoint.host, endpoint.port), count or None
