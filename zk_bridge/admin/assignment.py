"""Replica placement and manual-assignment parsing, as Kafka 2.6's ``kafka.admin.AdminUtils`` and
``TopicCommand.parseReplicaAssignment``.

`assign_replicas_to_brokers` mirrors ``AdminUtils.assignReplicasToBrokers`` exactly: the first replica of each
partition goes round-robin from a start index, the others follow with a shift that grows by one every time the
partition id wraps around the broker list. Kafka draws the start index and the shift at random unless
``fixedStartIndex`` is given (then both equal it); here both can also be fixed separately so tests are deterministic.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import attrs

from zk_bridge.admin import (
    AdminCommandFailedException,
    AdminOperationException,
    BrokerNotAvailableException,
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    InvalidReplicationFactorException,
)

_RAND = random.Random()


@attrs.frozen(order=True)
class BrokerMetadata:
    """kafka.admin.BrokerMetadata: a broker id and its rack (None when unknown or rack awareness is disabled)."""

    id: int
    rack: str | None = None


def _metadatas(brokers: Sequence[BrokerMetadata | int]) -> list[BrokerMetadata]:
    return [b if isinstance(b, BrokerMetadata) else BrokerMetadata(int(b)) for b in brokers]


def assign_replicas_to_brokers(brokers: Sequence[BrokerMetadata | int], n_partitions: int, replication_factor: int,
                               fixed_start_index: int = -1, start_partition_id: int = -1, *,
                               replica_shift: int | None = None,
                               rng: random.Random | None = None) -> dict[int, list[int]]:
    """AdminUtils.assignReplicasToBrokers: partition id → replica list.

    ``brokers`` is used in the given order (Kafka passes them sorted by id). With ``fixed_start_index < 0`` the start
    index and the replica shift are random (``rng``); ``replica_shift`` overrides the shift alone.
    Rack-aware placement is used when every broker has a rack, as Kafka does.
    """
    metas = _metadatas(brokers)
    if n_partitions <= 0:
        raise InvalidPartitionsException("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise InvalidReplicationFactorException("Replication factor must be larger than 0.")
    if replication_factor > len(metas):
        raise InvalidReplicationFactorException(
            f"Replication factor: {replication_factor} larger than available brokers: {len(metas)}.")
    rng = rng or _RAND
    if all(m.rack is None for m in metas):
        return _assign_rack_unaware(n_partitions, replication_factor, [m.id for m in metas], fixed_start_index,
                                    start_partition_id, replica_shift, rng)
    if any(m.rack is None for m in metas):
        raise AdminOperationException("Not all brokers have rack information for replica rack aware assignment.")
    return _assign_rack_aware(n_partitions, replication_factor, metas, fixed_start_index, start_partition_id,
                              replica_shift, rng)


def _replica_index(first_replica_index: int, second_replica_shift: int, replica_index: int, n_brokers: int) -> int:
    """AdminUtils.replicaIndex."""
    shift = 1 + (second_replica_shift + replica_index) % (n_brokers - 1)
    return (first_replica_index + shift) % n_brokers


def _start_and_shift(n: int, fixed_start_index: int, replica_shift: int | None,
                     rng: random.Random) -> tuple[int, int]:
    start_index = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    if replica_shift is not None:
        shift = replica_shift
    else:
        shift = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    return start_index, shift


def _assign_rack_unaware(n_partitions: int, replication_factor: int, broker_list: list[int], fixed_start_index: int,
                         start_partition_id: int, replica_shift: int | None,
                         rng: random.Random) -> dict[int, list[int]]:
    """AdminUtils.assignReplicasToBrokersRackUnaware."""
    ret: dict[int, list[int]] = {}
    n = len(broker_list)
    start_index, next_replica_shift = _start_and_shift(n, fixed_start_index, replica_shift, rng)
    current_partition_id = max(0, start_partition_id)
    for _ in range(n_partitions):
        if current_partition_id > 0 and current_partition_id % n == 0:
            next_replica_shift += 1
        first_replica_index = (current_partition_id + start_index) % n
        replicas = [broker_list[first_replica_index]]
        for j in range(replication_factor - 1):
            replicas.append(broker_list[_replica_index(first_replica_index, next_replica_shift, j, n)])
        ret[current_partition_id] = replicas
        current_partition_id += 1
    return ret


def rack_alternated_broker_list(broker_rack_map: Mapping[int, str]) -> list[int]:
    """AdminUtils.getRackAlternatedBrokerList: brokers taken one per rack in turn (racks sorted, ids sorted)."""
    by_rack: dict[str, list[int]] = {}
    for broker_id, rack in broker_rack_map.items():
        by_rack.setdefault(rack, []).append(broker_id)
    iterators = {rack: iter(sorted(ids)) for rack, ids in by_rack.items()}
    racks = sorted(iterators)
    result: list[int] = []
    rack_index = 0
    while len(result) < len(broker_rack_map):
        nxt = next(iterators[racks[rack_index]], None)
        if nxt is not None:
            result.append(nxt)
        rack_index = (rack_index + 1) % len(racks)
    return result


def _assign_rack_aware(n_partitions: int, replication_factor: int, metas: list[BrokerMetadata],
                       fixed_start_index: int, start_partition_id: int, replica_shift: int | None,
                       rng: random.Random) -> dict[int, list[int]]:
    """AdminUtils.assignReplicasToBrokersRackAware."""
    rack_of = {m.id: str(m.rack) for m in metas}
    num_racks = len(set(rack_of.values()))
    arranged = rack_alternated_broker_list(rack_of)
    n = len(arranged)
    ret: dict[int, list[int]] = {}
    start_index, next_replica_shift = _start_and_shift(n, fixed_start_index, replica_shift, rng)
    current_partition_id = max(0, start_partition_id)
    for _ in range(n_partitions):
        if current_partition_id > 0 and current_partition_id % n == 0:
            next_replica_shift += 1
        first_replica_index = (current_partition_id + start_index) % n
        leader = arranged[first_replica_index]
        replicas = [leader]
        racks_with_replicas = {rack_of[leader]}
        brokers_with_replicas = {leader}
        k = 0
        for _ in range(replication_factor - 1):
            while True:
                broker = arranged[_replica_index(first_replica_index, next_replica_shift * num_racks, k, n)]
                rack = rack_of[broker]
                k += 1
                if ((rack not in racks_with_replicas or len(racks_with_replicas) == num_racks)
                        and (broker not in brokers_with_replicas or len(brokers_with_replicas) == n)):
                    replicas.append(broker)
                    racks_with_replicas.add(rack)
                    brokers_with_replicas.add(broker)
                    break
        ret[current_partition_id] = replicas
        current_partition_id += 1
    return ret


def duplicates(items: Sequence[object]) -> list[object]:
    """CoreUtils.duplicates: the items seen more than once, in first-seen order."""
    seen: set[object] = set()
    dup: dict[object, None] = {}
    for item in items:
        if item in seen:
            dup[item] = None
        seen.add(item)
    return list(dup)


def parse_replica_assignment(text: str) -> dict[int, list[int]]:
    """TopicCommand.parseReplicaAssignment: ``"0:1,1:2"`` → {0: [0, 1], 1: [1, 2]} (partition = position)."""
    ret: dict[int, list[int]] = {}
    for i, part in enumerate(text.split(",")):
        try:
            brokers = [int(s.strip()) for s in part.split(":")]
        except ValueError:
            raise AdminCommandFailedException(
                f"Invalid replica assignment {text!r}: partition {i} ({part.strip()!r}) is not a "
                "':'-separated list of broker ids") from None
        dup = duplicates(brokers)
        if dup:
            raise AdminCommandFailedException(
                "Partition replica lists may not contain duplicate entries: " + ",".join(map(str, dup)))
        ret[i] = brokers
        if len(brokers) != len(ret[0]):
            raise AdminOperationException(f"Partition {i} has different replication factor: "
                                          f"[{', '.join(map(str, brokers))}]")
    return ret


def validate_replica_assignment(replica_assignment: Mapping[int, Sequence[int]], expected_replication_factor: int,
                                available_broker_ids: set[int]) -> None:
    """AdminZkClient.validateReplicaAssignment (used when adding partitions with a manual assignment)."""
    for partition_id, replicas in sorted(replica_assignment.items()):
        if not replicas:
            raise InvalidReplicaAssignmentException(
                f"Cannot have replication factor of 0 for partition id {partition_id}.")
        if len(replicas) != len(set(replicas)):
            raise InvalidReplicaAssignmentException(
                "Duplicate brokers not allowed in replica assignment: "
                f"{', '.join(map(str, replicas))} for partition id {partition_id}.")
        if not set(replicas) <= available_broker_ids:
            raise BrokerNotAvailableException(
                f"Some brokers specified for partition id {partition_id} are not available. "
                f"Specified brokers: {', '.join(map(str, replicas))}, "
                f"available brokers: {', '.join(map(str, sorted(available_broker_ids)))}.")
    bad = sorted((p, len(r)) for p, r in replica_assignment.items() if len(r) != expected_replication_factor)
    if bad:
        raise InvalidReplicaAssignmentException(
            "Inconsistent replication factor between partitions, partition 0 has "
            f"{expected_replication_factor} while partitions [{', '.join(str(p) for p, _ in bad)}] have "
            f"replication factors [{', '.join(str(rf) for _, rf in bad)}], respectively.")
