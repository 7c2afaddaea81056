"""core/broker/broker_metadata.py (issue #39): a log dir's meta.properties as Kafka 2.6.3's BrokerMetadataCheckpoint
writes and reads it, and KafkaServer.startup's checks with it — the dirs must agree with each other, with ZooKeeper's
/cluster/id and with the configured broker.id — each refusal with Kafka's exception and message."""

from __future__ import annotations

import calendar

import pytest

from core.broker.broker_metadata import (
    NO_METADATA,
    BrokerMetadata,
    InconsistentBrokerIdError,
    InconsistentBrokerMetadataError,
    InconsistentClusterIdError,
    MetaPropertiesError,
    check_broker_metadata,
    consistent_metadata,
    format_meta_properties,
    parse_properties,
    read_meta_properties,
)

EPOCH_S = calendar.timegm((2026, 11, 27, 18, 17, 48))
PATH = "/data/broker-0/meta.properties"


def test_the_file_is_written_as_properties_store_writes_it() -> None:
    assert format_meta_properties(BrokerMetadata(3, "qy6uhwp3StqgcaiJBlkYrg"), EPOCH_S) == (
        "#\n#Fri Nov 27 18:17:48 UTC 2026\ncluster.id=qy6uhwp3StqgcaiJBlkYrg\nversion=0\nbroker.id=3\n")
    # BrokerMetadata without a cluster id (a broker of a Kafka before 0.10.1 wrote none): no cluster.id line
    assert format_meta_properties(BrokerMetadata(3, None), EPOCH_S) == (
        "#\n#Fri Nov 27 18:17:48 UTC 2026\nversion=0\nbroker.id=3\n")


def test_a_written_file_reads_back() -> None:
    for metadata in (BrokerMetadata(0, "vAGFzDVHRLu_06_1DM03Og"), BrokerMetadata(1546335377, None),
                     BrokerMetadata(7, "odd=value:with#chars\\")):
        assert read_meta_properties(format_meta_properties(metadata, EPOCH_S), PATH) == metadata


def test_a_file_kafka_or_a_person_wrote_reads() -> None:
    # Kafka's own file, one written by hand (no date, other order, blanks), and Properties' other separators
    assert read_meta_properties("#\n#Thu Aug 12 08:43:58 GMT 2021\ncluster.id=vAGFzDVHRLu_06_1DM03Og\nversion=0\n"
                                "broker.id=1001\n", PATH) == BrokerMetadata(1001, "vAGFzDVHRLu_06_1DM03Og")
    assert read_meta_properties("version=0\n\n  broker.id = 5\n", PATH) == BrokerMetadata(5, None)
    assert parse_properties("! c\na:1\nb 2\nc=\\\n  3\nd\\=e=f\n") == {"a": "1", "b": "2", "c": "3", "d=e": "f"}


@pytest.mark.parametrize(("text", "why"), [
    ("broker.id=1\n", "requirement failed: Missing required property 'version'"),
    ("version=1\nbroker.id=1\n", "Unrecognized version of the server meta.properties file: 1"),
    ("version=0\n", "requirement failed: Missing required property 'broker.id'"),
    ("version=0\nbroker.id=-1\n", "requirement failed: broker.id has value -1 which is not in the range "
                                  "(0,2147483647)."),
    ("version=x\n", 'For input string: "x"'),
])
def test_an_unusable_file_is_refused_with_kafkas_words(text: str, why: str) -> None:
    with pytest.raises(MetaPropertiesError) as e:
        read_meta_properties(text, PATH)
    assert str(e.value) == f"java.io.IOException: Failed to read meta.properties file under dir {PATH} due to {why}"


def test_the_dirs_must_agree() -> None:
    a, b = BrokerMetadata(0, "X"), BrokerMetadata(1, "X")
    assert consistent_metadata({}) == NO_METADATA == BrokerMetadata(-1, None)
    assert consistent_metadata({"/d0": a, "/d1": a}) == a
    with pytest.raises(InconsistentBrokerMetadataError) as e:
        consistent_metadata({"/d0": a, "/d1": b})
    assert str(e.value) == (
        "kafka.common.InconsistentBrokerMetadataException: BrokerMetadata is not consistent across log.dirs. This "
        "could happen if multiple brokers shared a log directory (log.dirs) or partial data was manually copied "
        "from another broker. Found:\n- /d0 -> BrokerMetadata(brokerId=0, clusterId=X)\n"
        "- /d1 -> BrokerMetadata(brokerId=1, clusterId=X)\n")


def test_another_clusters_dir_is_refused() -> None:
    with pytest.raises(InconsistentClusterIdError) as e:
        check_broker_metadata(BrokerMetadata(0, "old-cluster"), "new-cluster", 0)
    assert str(e.value) == (
        "kafka.common.InconsistentClusterIdException: The Cluster ID new-cluster doesn't match stored clusterId "
        "Some(old-cluster) in meta.properties. The broker is trying to join the wrong cluster. Configured "
        "zookeeper.connect may be wrong.")


def test_another_brokers_dir_is_refused() -> None:
    with pytest.raises(InconsistentBrokerIdError) as e:
        check_broker_metadata(BrokerMetadata(0, "c"), "c", 5)
    assert str(e.value) == (
        "kafka.common.InconsistentBrokerIdException: Configured broker.id 5 doesn't match stored broker.id 0 in "
        "meta.properties. If you moved your data, make sure your configured broker.id matches. If you intend to "
        "create a new broker, you should remove all data in your data directories (log.dirs).")


def test_a_matching_or_absent_metadata_starts() -> None:
    assert check_broker_metadata(BrokerMetadata(4, "c"), "c", 4) == 4
    assert check_broker_metadata(NO_METADATA, "c", 4) == 4
    assert check_broker_metadata(BrokerMetadata(4, None), "c", 4) == 4  # no stored cluster id: nothing to compare
