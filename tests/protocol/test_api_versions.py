"""The 2.6 ApiVersions table: its keys, its flexible column against the schemas, and header versions."""

from __future__ import annotations

from protocol.api_versions import API_KEYS, API_VERSIONS, request_header_version, response_header_version
from protocol.schema import kio_class


def test_table_has_kafka_2_6s_fifty_api_keys() -> None:
    assert sorted(API_VERSIONS) == [*range(50), 61, 65, 66]  # and KIP-664's three (issue #40)
    assert API_KEYS["LeaderAndIsr"] == 4 and API_KEYS["AlterClientQuotas"] == 49
    # the versions the controller and followers use (issue #20) are 2.6's maxima
    assert API_VERSIONS[4].max_version == 4  # LeaderAndIsr
    assert API_VERSIONS[6].max_version == 6  # UpdateMetadata
    assert API_VERSIONS[5].max_version == 3  # StopReplica
    assert API_VERSIONS[7].max_version == 3  # ControlledShutdown
    assert API_VERSIONS[1].max_version == 11  # Fetch
    assert API_VERSIONS[23].max_version == 3  # OffsetForLeaderEpoch


def test_flexible_column_matches_the_schemas_for_every_version() -> None:
    for key, r in API_VERSIONS.items():
        for version in range(r.min_version, r.max_version + 1):
            for direction in ("request", "response"):
                assert kio_class(key, version, direction).__flexible__ == r.flexible(version), (r.name, version)


def test_header_versions() -> None:
    assert request_header_version(3, 8) == 1 and request_header_version(3, 9) == 2
    assert request_header_version(7, 0) == 0 and request_header_version(7, 1) == 1
    assert request_header_version(18, 4) == 2  # an unknown newer ApiVersions is still read with header v2
    assert request_header_version(0, 9) == 1  # Produce is not flexible in 2.6 ("none")
    assert response_header_version(18, 3) == 0
    assert response_header_version(4, 4) == 1 and response_header_version(4, 3) == 0
