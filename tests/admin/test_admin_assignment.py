"""assign_replicas_to_brokers against Kafka's own expectations (AdminTest / AdminRackAwareTest / the
AdminUtils doc comment) and TopicCommand.parseReplicaAssignment / AdminZkClient.validateReplicaAssignment."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from zk_bridge.admin import (
    AdminCommandFailedException,
    AdminOperationException,
    BrokerNotAvailableException,
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    InvalidReplicationFactorException,
)
from zk_bridge.admin.assignment import (
    BrokerMetadata,
    assign_replicas_to_brokers,
    duplicates,
    parse_replica_assignment,
    rack_alternated_broker_list,
    validate_replica_assignment,
)


def test_kafka_admin_test_replica_assignment() -> None:
    """AdminTest.testReplicaAssignment: 5 brokers, 10 partitions, RF 3, fixedStartIndex 0."""
    expected = {0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
                5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2]}
    assert assign_replicas_to_brokers(list(range(5)), 10, 3, 0) == expected


def test_admin_utils_doc_example_is_the_same_layout() -> None:
    """The AdminUtils scaladoc table: p0..p4 first replicas on broker 0..4, second replicas shifted by one."""
    a = assign_replicas_to_brokers([BrokerMetadata(i) for i in range(5)], 10, 3, 0)
    assert [a[p][0] for p in range(10)] == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4]
    assert [a[p][1] for p in range(5)] == [1, 2, 3, 4, 0]
    assert [a[p][1] for p in range(5, 10)] == [2, 3, 4, 0, 1]


def test_broker_ids_are_used_in_order_not_as_indexes() -> None:
    a = assign_replicas_to_brokers([10, 20, 30], 3, 2, 0)
    assert a == {0: [10, 20], 1: [20, 30], 2: [30, 10]}


def test_start_index_and_shift_can_be_fixed_separately() -> None:
    a = assign_replicas_to_brokers([0, 1, 2, 3], 4, 2, 1, replica_shift=2)
    # start index 1: first replicas 1,2,3,0; shift 2 → second replica 1 + (2 % 3) = 3 brokers further on
    assert a == {0: [1, 0], 1: [2, 1], 2: [3, 2], 3: [0, 3]}


def test_start_partition_id_continues_the_layout_like_add_partitions() -> None:
    """AdminZkClient.createNewPartitionsAssignment: startPartitionId = existing count, so adding partitions to a
    topic created with the same start index continues the same layout."""
    full = assign_replicas_to_brokers(list(range(3)), 6, 2, 0)
    added = assign_replicas_to_brokers(list(range(3)), 3, 2, 0, 3)
    assert added == {p: full[p] for p in (3, 4, 5)}


@pytest.mark.parametrize(("partitions", "rf", "exc", "message"), [
    (0, 1, InvalidPartitionsException, "Number of partitions must be larger than 0."),
    (3, 0, InvalidReplicationFactorException, "Replication factor must be larger than 0."),
    (10, 6, InvalidReplicationFactorException, "Replication factor: 6 larger than available brokers: 5."),
])
def test_invalid_arguments(partitions: int, rf: int, exc: type[Exception], message: str) -> None:
    with pytest.raises(exc) as e:
        assign_replicas_to_brokers(list(range(5)), partitions, rf)
    assert str(e.value) == message


def test_random_placement_is_valid_and_balanced() -> None:
    rng = random.Random(7)
    for _ in range(50):
        a = assign_replicas_to_brokers(list(range(4)), 8, 3, rng=rng)
        assert sorted(a) == list(range(8))
        assert all(len(set(r)) == 3 for r in a.values())
        assert Counter(r[0] for r in a.values()) == {b: 2 for b in range(4)}  # leaders even
        assert Counter(b for r in a.values() for b in r) == {b: 6 for b in range(4)}  # replicas even


def test_random_placement_uses_both_random_draws() -> None:
    starts = {tuple(assign_replicas_to_brokers(list(range(5)), 5, 2, rng=random.Random(s))[0]) for s in range(40)}
    assert len(starts) > 5  # various leaders and followers for partition 0


def test_rack_alternated_broker_list() -> None:
    """AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers."""
    rack_map = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert rack_alternated_broker_list(rack_map) == [0, 3, 1, 5, 4, 2]
    assert rack_alternated_broker_list({k: v for k, v in rack_map.items() if k != 5}) == [0, 3, 1, 4, 2]
    brokers = [BrokerMetadata(b, r) for b, r in rack_map.items()]
    assert assign_replicas_to_brokers(brokers, 7, 3, 0, 0) == {
        0: [0, 3, 1], 1: [3, 1, 5], 2: [1, 5, 4], 3: [5, 4, 2], 4: [4, 2, 0], 5: [2, 0, 3], 6: [0, 4, 2]}


def test_partial_rack_information_is_refused() -> None:
    with pytest.raises(AdminOperationException, match="Not all brokers have rack information"):
        assign_replicas_to_brokers([BrokerMetadata(0, "a"), BrokerMetadata(1)], 2, 2)


def test_parse_replica_assignment() -> None:
    assert parse_replica_assignment("0:1,1:2, 2 : 0") == {0: [0, 1], 1: [1, 2], 2: [2, 0]}
    assert parse_replica_assignment("3") == {0: [3]}


@pytest.mark.parametrize(("text", "exc", "message"), [
    ("0:1,1:1", AdminCommandFailedException, "Partition replica lists may not contain duplicate entries: 1"),
    ("0:1,2", AdminOperationException, "Partition 1 has different replication factor: [2]"),
    ("0:x", AdminCommandFailedException, "is not a ':'-separated list of broker ids"),
    ("0:1,", AdminCommandFailedException, "is not a ':'-separated list of broker ids"),
])
def test_parse_replica_assignment_errors(text: str, exc: type[Exception], message: str) -> None:
    with pytest.raises(exc) as e:
        parse_replica_assignment(text)
    assert message in str(e.value)


def test_validate_replica_assignment_messages() -> None:
    validate_replica_assignment({3: [1, 2]}, 2, {1, 2, 3})
    with pytest.raises(InvalidReplicaAssignmentException, match="Cannot have replication factor of 0"):
        validate_replica_assignment({3: []}, 2, {1})
    with pytest.raises(InvalidReplicaAssignmentException, match="Duplicate brokers not allowed"):
        validate_replica_assignment({3: [1, 1]}, 2, {1})
    with pytest.raises(BrokerNotAvailableException, match="Some brokers specified for partition id 3 are not "
                       "available. Specified brokers: 1, 9, available brokers: 1, 2."):
        validate_replica_assignment({3: [1, 9]}, 2, {1, 2})
    with pytest.raises(InvalidReplicaAssignmentException,
                       match=r"partition 0 has 2 while partitions \[3, 4\] have replication factors \[1, 3\]"):
        validate_replica_assignment({3: [1], 4: [1, 2, 3]}, 2, {1, 2, 3})


def test_duplicates() -> None:
    assert duplicates([1, 2, 1, 3, 2, 1]) == [1, 2]
    assert duplicates([]) == []
