"""The API versions a Kafka 2.6 broker serves — the one table the broker advertises in its ApiVersions response.

Each row mirrors one ``clients/src/main/resources/common/message/<Name>Request.json`` of Kafka 2.6: its ``apiKey``,
``validVersions`` (min-max) and the first version of its ``flexibleVersions`` ("N+"; ``None`` for "none"). Kafka 2.6's
``ApiKeys`` enum lists these 50 keys (0-49: `KAFKA_2_6_API_VERSIONS`). Beyond 2.6 (issue #40, departures):
AddPartitionsToTxn v2-4 (v4: KIP-890 part 1's verify-only request, which partition leaders send the transaction
coordinator, Kafka 3.6) and KIP-664's DescribeProducers (61), DescribeTransactions (65) and ListTransactions (66) as
Kafka 3.6 serves them, for ``kactor transactions`` and Kafka's own kafka-transactions.sh.
tests/protocol/test_api_versions.py checks the flexible column against kio's classes (generated from Kafka 3.9's
schemas, whose versions up to 2.6's maximum are the same messages).
"""

from __future__ import annotations

import enum
from typing import NamedTuple


class ApiRange(NamedTuple):
    name: str
    min_version: int
    max_version: int
    first_flexible: int | None  # flexibleVersions "N+" of the 2.6 schema; None = "none"

    def flexible(self, version: int) -> bool:
        """``MessageSpec.flexibleVersions().contains(version)``: open-ended, so also true above max_version."""
        return self.first_flexible is not None and version >= self.first_flexible


class ApiKeys(enum.IntEnum):
    """Kafka 2.6's ``ApiKeys``: the one spelling of an api key in kactor (``ApiKeys.PRODUCE``), an int on the wire."""

    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    LEADER_AND_ISR = 4
    STOP_REPLICA = 5
    UPDATE_METADATA = 6
    CONTROLLED_SHUTDOWN = 7
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    JOIN_GROUP = 11
    HEARTBEAT = 12
    LEAVE_GROUP = 13
    SYNC_GROUP = 14
    DESCRIBE_GROUPS = 15
    LIST_GROUPS = 16
    SASL_HANDSHAKE = 17
    API_VERSIONS = 18
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    DELETE_RECORDS = 21
    INIT_PRODUCER_ID = 22
    OFFSET_FOR_LEADER_EPOCH = 23
    ADD_PARTITIONS_TO_TXN = 24
    ADD_OFFSETS_TO_TXN = 25
    END_TXN = 26
    WRITE_TXN_MARKERS = 27
    TXN_OFFSET_COMMIT = 28
    DESCRIBE_ACLS = 29
    CREATE_ACLS = 30
    DELETE_ACLS = 31
    DESCRIBE_CONFIGS = 32
    ALTER_CONFIGS = 33
    ALTER_REPLICA_LOG_DIRS = 34
    DESCRIBE_LOG_DIRS = 35
    SASL_AUTHENTICATE = 36
    CREATE_PARTITIONS = 37
    CREATE_DELEGATION_TOKEN = 38
    RENEW_DELEGATION_TOKEN = 39
    EXPIRE_DELEGATION_TOKEN = 40
    DESCRIBE_DELEGATION_TOKEN = 41
    DELETE_GROUPS = 42
    ELECT_LEADERS = 43
    INCREMENTAL_ALTER_CONFIGS = 44
    ALTER_PARTITION_REASSIGNMENTS = 45
    LIST_PARTITION_REASSIGNMENTS = 46
    OFFSET_DELETE = 47
    DESCRIBE_CLIENT_QUOTAS = 48
    ALTER_CLIENT_QUOTAS = 49
    # beyond 2.6 (KIP-664, Kafka 3.0)
    DESCRIBE_PRODUCERS = 61
    DESCRIBE_TRANSACTIONS = 65
    LIST_TRANSACTIONS = 66


# apiKey: (name, min, max, first flexible version) — Kafka 2.6, then the keys beyond it.
_RANGES: dict[ApiKeys, ApiRange] = {
    ApiKeys.PRODUCE: ApiRange("Produce", 0, 8, None),
    ApiKeys.FETCH: ApiRange("Fetch", 0, 11, None),
    ApiKeys.LIST_OFFSETS: ApiRange("ListOffsets", 0, 5, None),
    ApiKeys.METADATA: ApiRange("Metadata", 0, 9, 9),
    ApiKeys.LEADER_AND_ISR: ApiRange("LeaderAndIsr", 0, 4, 4),
    ApiKeys.STOP_REPLICA: ApiRange("StopReplica", 0, 3, 2),
    ApiKeys.UPDATE_METADATA: ApiRange("UpdateMetadata", 0, 6, 6),
    ApiKeys.CONTROLLED_SHUTDOWN: ApiRange("ControlledShutdown", 0, 3, 3),
    ApiKeys.OFFSET_COMMIT: ApiRange("OffsetCommit", 0, 8, 8),
    ApiKeys.OFFSET_FETCH: ApiRange("OffsetFetch", 0, 7, 6),
    ApiKeys.FIND_COORDINATOR: ApiRange("FindCoordinator", 0, 3, 3),
    ApiKeys.JOIN_GROUP: ApiRange("JoinGroup", 0, 7, 6),
    ApiKeys.HEARTBEAT: ApiRange("Heartbeat", 0, 4, 4),
    ApiKeys.LEAVE_GROUP: ApiRange("LeaveGroup", 0, 4, 4),
    ApiKeys.SYNC_GROUP: ApiRange("SyncGroup", 0, 5, 4),
    ApiKeys.DESCRIBE_GROUPS: ApiRange("DescribeGroups", 0, 5, 5),
    ApiKeys.LIST_GROUPS: ApiRange("ListGroups", 0, 4, 3),
    ApiKeys.SASL_HANDSHAKE: ApiRange("SaslHandshake", 0, 1, None),
    ApiKeys.API_VERSIONS: ApiRange("ApiVersions", 0, 3, 3),
    ApiKeys.CREATE_TOPICS: ApiRange("CreateTopics", 0, 5, 5),
    ApiKeys.DELETE_TOPICS: ApiRange("DeleteTopics", 0, 4, 4),
    ApiKeys.DELETE_RECORDS: ApiRange("DeleteRecords", 0, 2, 2),
    ApiKeys.INIT_PRODUCER_ID: ApiRange("InitProducerId", 0, 3, 2),
    ApiKeys.OFFSET_FOR_LEADER_EPOCH: ApiRange("OffsetForLeaderEpoch", 0, 3, None),
    # v2-4 beyond 2.6 (v3 flexible; v4, broker to broker: KIP-890 part 1's verify-only batches, Kafka 3.6)
    ApiKeys.ADD_PARTITIONS_TO_TXN: ApiRange("AddPartitionsToTxn", 0, 4, 3),
    ApiKeys.ADD_OFFSETS_TO_TXN: ApiRange("AddOffsetsToTxn", 0, 1, None),
    ApiKeys.END_TXN: ApiRange("EndTxn", 0, 1, None),
    ApiKeys.WRITE_TXN_MARKERS: ApiRange("WriteTxnMarkers", 0, 0, None),
    ApiKeys.TXN_OFFSET_COMMIT: ApiRange("TxnOffsetCommit", 0, 3, 3),
    ApiKeys.DESCRIBE_ACLS: ApiRange("DescribeAcls", 0, 2, 2),
    ApiKeys.CREATE_ACLS: ApiRange("CreateAcls", 0, 2, 2),
    ApiKeys.DELETE_ACLS: ApiRange("DeleteAcls", 0, 2, 2),
    ApiKeys.DESCRIBE_CONFIGS: ApiRange("DescribeConfigs", 0, 3, None),
    ApiKeys.ALTER_CONFIGS: ApiRange("AlterConfigs", 0, 1, None),
    ApiKeys.ALTER_REPLICA_LOG_DIRS: ApiRange("AlterReplicaLogDirs", 0, 1, None),
    ApiKeys.DESCRIBE_LOG_DIRS: ApiRange("DescribeLogDirs", 0, 2, 2),
    ApiKeys.SASL_AUTHENTICATE: ApiRange("SaslAuthenticate", 0, 2, 2),
    ApiKeys.CREATE_PARTITIONS: ApiRange("CreatePartitions", 0, 2, 2),
    ApiKeys.CREATE_DELEGATION_TOKEN: ApiRange("CreateDelegationToken", 0, 2, 2),
    ApiKeys.RENEW_DELEGATION_TOKEN: ApiRange("RenewDelegationToken", 0, 2, 2),
    ApiKeys.EXPIRE_DELEGATION_TOKEN: ApiRange("ExpireDelegationToken", 0, 2, 2),
    ApiKeys.DESCRIBE_DELEGATION_TOKEN: ApiRange("DescribeDelegationToken", 0, 2, 2),
    ApiKeys.DELETE_GROUPS: ApiRange("DeleteGroups", 0, 2, 2),
    ApiKeys.ELECT_LEADERS: ApiRange("ElectLeaders", 0, 2, 2),
    ApiKeys.INCREMENTAL_ALTER_CONFIGS: ApiRange("IncrementalAlterConfigs", 0, 1, 1),
    ApiKeys.ALTER_PARTITION_REASSIGNMENTS: ApiRange("AlterPartitionReassignments", 0, 0, 0),
    ApiKeys.LIST_PARTITION_REASSIGNMENTS: ApiRange("ListPartitionReassignments", 0, 0, 0),
    ApiKeys.OFFSET_DELETE: ApiRange("OffsetDelete", 0, 0, None),
    ApiKeys.DESCRIBE_CLIENT_QUOTAS: ApiRange("DescribeClientQuotas", 0, 0, None),
    ApiKeys.ALTER_CLIENT_QUOTAS: ApiRange("AlterClientQuotas", 0, 0, None),
    # beyond 2.6: KIP-664 (3.0), as Kafka 3.6 serves them
    ApiKeys.DESCRIBE_PRODUCERS: ApiRange("DescribeProducers", 0, 0, 0),
    ApiKeys.DESCRIBE_TRANSACTIONS: ApiRange("DescribeTransactions", 0, 0, 0),
    ApiKeys.LIST_TRANSACTIONS: ApiRange("ListTransactions", 0, 0, 0),
}
# the same, keyed by plain ints (what a decoded header holds), so that no enum member reaches an answer or a trace
API_VERSIONS: dict[int, ApiRange] = {int(key): r for key, r in _RANGES.items()}

# Kafka 2.6's own 50 keys (what its tools, such as kafka-broker-api-versions.sh, know by name)
KAFKA_2_6_API_VERSIONS: dict[int, ApiRange] = {key: r for key, r in API_VERSIONS.items() if key < 50} | {
    int(ApiKeys.ADD_PARTITIONS_TO_TXN): ApiRange("AddPartitionsToTxn", 0, 1, None)}

# Kafka's name of each key (``ApiKeys.forName``'s names), for tools that take one
API_KEYS: dict[str, int] = {r.name: key for key, r in API_VERSIONS.items()}


def supports(api_key: int, version: int) -> bool:
    r = API_VERSIONS.get(api_key)
    return r is not None and r.min_version <= version <= r.max_version


def request_header_version(api_key: int, version: int) -> int:
    """``ApiMessageType.requestHeaderVersion``: 2 for flexible versions, else 1; ControlledShutdown v0 uses header 0
    (its v0 request has no client id)."""
    r = API_VERSIONS[api_key]
    if r.flexible(version):
        return 2
    if api_key == ApiKeys.CONTROLLED_SHUTDOWN and version == 0:
        return 0
    return 1


def response_header_version(api_key: int, version: int) -> int:
    """``ApiMessageType.responseHeaderVersion``: 1 for flexible versions, else 0; ApiVersions' is always 0 so that a
    client that does not know the broker's versions can still read the response (KIP-511)."""
    if api_key == ApiKeys.API_VERSIONS:
        return 0
    return 1 if API_VERSIONS[api_key].flexible(version) else 0
