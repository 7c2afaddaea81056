"""Every actor name of a broker process, defined once (Kafka's thread names are its nearest equivalent).

An actor is addressed by name through the runtime (``post(name, body)``, ``inject(name, ...)``); traces record
those names as ``sender`` / ``receiver``, so a name is part of the trace format and never changes lightly. The
functional core names no actor: it yields typed effects (core/effects.py) that actors/core_effects.py routes to the
names below. Inputs from outside the actor system carry an ``edge:`` sender name (``kactor.trace.reader.is_external``).
tests/actors/test_actor_names.py fails on an actor name written as a string literal anywhere else.
"""

from __future__ import annotations

# -- the actors every broker process spawns (broker_process.broker_actor_classes) ------------------------------------
ZK = "zk"  # ZkBridgeActor: KafkaZkClient + ZooKeeperClient's watcher
TIMER = "timer"  # TimerActor: the process's timers
NET = "net"  # NetworkActor: the transport (Kafka's SocketServer / NetworkClient)
METRICS = "metrics"  # MetricsActor: Kafka's metrics (ControllerStats, gauges)
STATE_CHANGE_LOG = "state-change-log"  # ObserverActor: Kafka's state-change logger
REPLICA_MANAGER = "replica-manager"  # ReplicaManagerActor: KafkaApis' front for the replica manager's shards
CONTROLLER = "controller"  # ControllerActor: the controller-event-thread and its queue
TOPIC_DELETION = "topic-deletion"  # TopicDeletionActor: TopicDeletionManager
KAFKA_SERVER = "kafka-server"  # KafkaServerActor: KafkaServer.startup / controlledShutdown
CONFIG_MANAGER = "config-manager"  # ConfigManagerActor: DynamicConfigManager
GROUP_COORDINATOR = "group-coordinator"  # GroupCoordinatorActor: GroupCoordinator + GroupMetadataManager
TRANSACTION_COORDINATOR = "transaction-coordinator"  # TransactionCoordinatorActor: TransactionCoordinator

# -- actors spawned at run time, one per broker / shard ------------------------------------------------------------
CHANNEL_PREFIX = "channel-"  # BrokerChannelActor: the controller's RequestSendThread to one broker
SHARD_PREFIX = "partition-"  # PartitionActor: one shard of the replica manager's partitions
TXN_MARKER_CHANNEL_PREFIX = "txn-marker-channel-"  # TransactionMarkerChannelActor: markers to one broker


# who creates the actors of each prefix above (their parent in the actor system): the replica manager its shards, the
# controller its channels, the transaction coordinator its marker channels (a replay cut by actor keeps a child with
# its creator: kactor/trace/split.py)
CHILD_CREATORS: tuple[tuple[str, str], ...] = ((SHARD_PREFIX, REPLICA_MANAGER), (CHANNEL_PREFIX, CONTROLLER),
                                               (TXN_MARKER_CHANNEL_PREFIX, TRANSACTION_COORDINATOR))


def channel(broker_id: int) -> str:
    """The BrokerChannelActor of the controller's channel to ``broker_id``."""
    return f"{CHANNEL_PREFIX}{broker_id}"


def txn_marker_channel(broker_id: int) -> str:
    """The TransactionMarkerChannelActor sending the transaction coordinator's markers to ``broker_id``."""
    return f"{TXN_MARKER_CHANNEL_PREFIX}{broker_id}"


def shard(index: int) -> str:
    """The PartitionActor of shard ``index``."""
    return f"{SHARD_PREFIX}{index}"


# -- senders of the inputs from outside the actor system (recorded as external in a trace) ---------------------------
EDGE_PREFIX = "edge:"
EDGE_ZK = "edge:zk"  # watches, session events, ZooKeeper results (the kazoo thread)
EDGE_NET = "edge:net"  # requests and responses from other processes (the transport's I/O thread)
EDGE_TIMER = "edge:timer"  # fired timers
EDGE_PROCESS = "edge:process"  # the broker process itself: init messages, SIGTERM
EDGE_LOG_DIRS = "edge:log-dirs"  # the log-dir probe: a failed log directory
EDGE_LOG_CLEANER = "edge:log-cleaner"  # the log cleaner's threads: a cleaning to swap in

# -- who is told what -------------------------------------------------------------------------------------------------
# The broker side's actors that learn the broker's epoch when it registers (KafkaServer.startup) or re-registers
# (processRegisterBrokerAndReelect); absent in controller-only set-ups. The kafka-server sends it in its
# ControlledShutdown (KafkaServer.controlledShutdown reads kafkaController.brokerEpoch).
BROKER_EPOCH_LISTENERS = (REPLICA_MANAGER, METRICS, KAFKA_SERVER)
