"""The API versions a Kafka 2.6 broker serves — the one table the broker advertises in its ApiVersions response.

Each row mirrors one ``clients/src/main/resources/common/message/<Name>Request.json`` of Kafka 2.6: its ``apiKey``,
``validVersions`` (min-max) and the first version of its ``flexibleVersions`` ("N+"; ``None`` for "none"). Kafka 2.6's
``ApiKeys`` enum lists these 50 keys (0-49). tests/protocol/test_api_versions.py checks the flexible column against
kio's classes (generated from Kafka 3.9's schemas, whose versions up to 2.6's maximum are the same messages).
"""

from __future__ import annotations

from typing import NamedTuple


class ApiRange(NamedTuple):
    name: str
    min_version: int
    max_version: int
    first_flexible: int | None  # flexibleVersions "N+" of the 2.6 schema; None = "none"

    def flexible(self, version: int) -> bool:
        """``MessageSpec.flexibleVersions().contains(version)``: open-ended, so also true above max_version."""
        return self.first_flexible is not None and version >= self.first_flexible


# apiKey: (name, min, max, first flexible version) — Kafka 2.6.
API_VERSIONS: dict[int, ApiRange] = {
    0: ApiRange("Produce", 0, 8, None),
    1: ApiRange("Fetch", 0, 11, None),
    2: ApiRange("ListOffsets", 0, 5, None),
    3: ApiRange("Metadata", 0, 9, 9),
    4: ApiRange("LeaderAndIsr", 0, 4, 4),
    5: ApiRange("StopReplica", 0, 3, 2),
    6: ApiRange("UpdateMetadata", 0, 6, 6),
    7: ApiRange("ControlledShutdown", 0, 3, 3),
    8: ApiRange("OffsetCommit", 0, 8, 8),
    9: ApiRange("OffsetFetch", 0, 7, 6),
    10: ApiRange("FindCoordinator", 0, 3, 3),
    11: ApiRange("JoinGroup", 0, 7, 6),
    12: ApiRange("Heartbeat", 0, 4, 4),
    13: ApiRange("LeaveGroup", 0, 4, 4),
    14: ApiRange("SyncGroup", 0, 5, 4),
    15: ApiRange("DescribeGroups", 0, 5, 5),
    16: ApiRange("ListGroups", 0, 4, 3),
    17: ApiRange("SaslHandshake", 0, 1, None),
    18: ApiRange("ApiVersions", 0, 3, 3),
    19: ApiRange("CreateTopics", 0, 5, 5),
    20: ApiRange("DeleteTopics", 0, 4, 4),
    21: ApiRange("DeleteRecords", 0, 2, 2),
    22: ApiRange("InitProducerId", 0, 3, 2),
    23: ApiRange("OffsetForLeaderEpoch", 0, 3, None),
    24: ApiRange("AddPartitionsToTxn", 0, 1, None),
    25: ApiRange("AddOffsetsToTxn", 0, 1, None),
    26: ApiRange("EndTxn", 0, 1, None),
    27: ApiRange("WriteTxnMarkers", 0, 0, None),
    28: ApiRange("TxnOffsetCommit", 0, 3, 3),
    29: ApiRange("DescribeAcls", 0, 2, 2),
    30: ApiRange("CreateAcls", 0, 2, 2),
    31: ApiRange("DeleteAcls", 0, 2, 2),
    32: ApiRange("DescribeConfigs", 0, 3, None),
    33: ApiRange("AlterConfigs", 0, 1, None),
    34: ApiRange("AlterReplicaLogDirs", 0, 1, None),
    35: ApiRange("DescribeLogDirs", 0, 2, 2),
    36: ApiRange("SaslAuthenticate", 0, 2, 2),
    37: ApiRange("CreatePartitions", 0, 2, 2),
    38: ApiRange("CreateDelegationToken", 0, 2, 2),
    39: ApiRange("RenewDelegationToken", 0, 2, 2),
    40: ApiRange("ExpireDelegationToken", 0, 2, 2),
    41: ApiRange("DescribeDelegationToken", 0, 2, 2),
    42: ApiRange("DeleteGroups", 0, 2, 2),
    43: ApiRange("ElectLeaders", 0, 2, 2),
    44: ApiRange("IncrementalAlterConfigs", 0, 1, 1),
    45: ApiRange("AlterPartitionReassignments", 0, 0, 0),
    46: ApiRange("ListPartitionReassignments", 0, 0, 0),
    47: ApiRange("OffsetDelete", 0, 0, None),
    48: ApiRange("DescribeClientQuotas", 0, 0, None),
    49: ApiRange("AlterClientQuotas", 0, 0, None),
}

API_KEYS: dict[str, int] = {r.name: key for key, r in API_VERSIONS.items()}

API_VERSIONS_KEY = 18
CONTROLLED_SHUTDOWN_KEY = 7


def supports(api_key: int, version: int) -> bool:
    r = API_VERSIONS.get(api_key)
    return r is not None and r.min_version <= version <= r.max_version


def request_header_version(api_key: int, version: int) -> int:
    """``ApiMessageType.requestHeaderVersion``: 2 for flexible versions, else 1; ControlledShutdown v0 uses header 0
    (its v0 request has no client id)."""
    r = API_VERSIONS[api_key]
    if r.flexible(version):
        return 2
    if api_key == CONTROLLED_SHUTDOWN_KEY and version == 0:
        return 0
    return 1


def response_header_version(api_key: int, version: int) -> int:
    """``ApiMessageType.responseHeaderVersion``: 1 for flexible versions, else 0; ApiVersions' is always 0 so that a
    client that does not know the broker's versions can still read the response (KIP-511)."""
    if api_key == API_VERSIONS_KEY:
        return 0
    return 1 if API_VERSIONS[api_key].flexible(version) else 0
