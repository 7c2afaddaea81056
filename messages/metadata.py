"""Internal values of the ApiVersions and Metadata APIs (core/api/api_versions.py, core/api/metadata.py)."""

from __future__ import annotations

from messages.common import Errors
from messages.registry import message


@message
class ApiVersionsRequest:
    """ApiVersionsRequest (KIP-511 v3 adds the client's software name and version)."""

    client_software_name: str = ""
    client_software_version: str = ""


@message
class ApiVersionsResponse:
    """ApiVersionsResponse: ``api_keys`` as (api_key, min_version, max_version)."""

    error: Errors
    api_keys: tuple[tuple[int, int, int], ...]
    throttle_time_ms: int = 0


@message
class AutoCreateConfig:
    """The broker's topic auto-creation settings: ``auto.create.topics.enable``, ``num.partitions``,
    ``default.replication.factor``, ``offsets.topic.replication.factor`` and
    ``transaction.state.log.replication.factor`` (the live brokers ``__consumer_offsets`` / ``__transaction_state``
    wait for: createInternalTopic) (Kafka 2.6's defaults; ``enable`` False where no broker stamped them, and
    ``transaction_topic_replication_factor`` None: Metadata does not create ``__transaction_state``)."""

    enable: bool = False
    num_partitions: int = 1
    replication_factor: int = 1
    offsets_topic_replication_factor: int = 3
    transaction_topic_replication_factor: int | None = None


@message
class CreatableTopic:
    """A topic a Metadata answer asks the edge to create (KafkaApis.createTopic); -1 partitions / replication
    factor: an internal topic (``__consumer_offsets``, ``__transaction_state``), created with its coordinator's
    settings (createInternalTopic)."""

    name: str
    num_partitions: int
    replication_factor: int


@message
class MetadataRequest:
    """MetadataRequest: ``topics`` None = every topic (v0: an empty list meant all); ``listener`` is the listener
    name the request came in on (the brokers are answered with their endpoints of that listener)."""

    topics: tuple[str, ...] | None
    allow_auto_topic_creation: bool = True
    listener: str = "PLAINTEXT"
    include_cluster_authorized_operations: bool = False
    include_topic_authorized_operations: bool = False
    api_version: int = 9  # v0 answers only replicas that are alive (errorUnavailableEndpoints), v6+ LISTENER_NOT_FOUND
    cluster_id: str = ""  # the cluster's id as the edge knows it (/cluster/id)
    auto_create: AutoCreateConfig = AutoCreateConfig()  # the broker's settings, stamped by the edge as cluster_id
    principal: str = "User:ANONYMOUS"  # the connection's KafkaPrincipal, for the authorizer (RequestContext's)


@message
class MetadataBroker:
    node_id: int
    host: str
    port: int
    rack: str | None = None


@message
class MetadataPartition:
    """MetadataResponsePartition."""

    partition_index: int
    error: Errors
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()


AUTHORIZED_OPERATIONS_OMITTED = -2147483648  # MetadataResponse.AUTHORIZED_OPERATIONS_OMITTED (Integer.MIN_VALUE)


@message
class MetadataTopic:
    name: str
    error: Errors
    is_internal: bool = False
    partitions: tuple[MetadataPartition, ...] = ()
    topic_authorized_operations: int = AUTHORIZED_OPERATIONS_OMITTED


@message
class MetadataResponse:
    """MetadataResponse: ``controller_id`` -1 when unknown; ``cluster_id`` None before it is known."""

    brokers: tuple[MetadataBroker, ...]
    cluster_id: str | None
    controller_id: int
    topics: tuple[MetadataTopic, ...]
    throttle_time_ms: int = 0
    cluster_authorized_operations: int = AUTHORIZED_OPERATIONS_OMITTED
    create_topics: tuple[CreatableTopic, ...] = ()  # kactor-internal, not on the wire: for the edge to create
