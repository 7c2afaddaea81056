"""What a chaos run saw: the values the runner records and the checks read (frozen, JSON-friendly)."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

TP = tuple[str, int]  # (topic, partition)


@attrs.frozen(slots=True)
class PartitionSample:
    """A partition's state znode as sampled, with the replicas of its topic znode read just before and just after
    it (their union: a replica added or removed between the two reads cannot make a false violation)."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    replicas: frozenset[int]


@attrs.frozen(slots=True)
class Sample:
    """One read of the cluster's state in ZooKeeper (one session, so samples are in ZooKeeper's order)."""

    ts: float
    controller_epoch: int | None
    partitions: Mapping[TP, PartitionSample]


@attrs.frozen(slots=True)
class Ack:
    """A record the cluster acknowledged with acks=all: it must be at ``offset`` on every ISR replica."""

    topic: str
    partition: int
    offset: int
    value: str


@attrs.frozen(slots=True)
class Read:
    """A value seen at an offset: by a consumer below the high watermark, or in a replica's log after healing."""

    topic: str
    partition: int
    offset: int
    value: str
    source: str


@attrs.frozen(slots=True)
class FinalPartition:
    """A partition of a surviving topic once the cluster is healed and quiet: its ISR and replicas."""

    isr: tuple[int, ...]
    replicas: tuple[int, ...]


@attrs.frozen(slots=True)
class ClusterSnapshot:
    """What liveness looks at after healing (read from ZooKeeper)."""

    pending_deletions: tuple[str, ...] = ()  # children of /admin/delete_topics
    deleted_still_present: tuple[str, ...] = ()  # topics the run deleted whose /brokers/topics/<t> remains
    reassignment_pending: tuple[TP, ...] = ()  # partitions in /admin/reassign_partitions
    reassigning: tuple[TP, ...] = ()  # partitions with adding/removing replicas in their topic znode
    leaderless: tuple[TP, ...] = ()  # partitions with no state or leader -1
    election_pending: bool = False  # /admin/preferred_replica_election still there
    unwritable: tuple[TP, ...] = ()  # partitions a producer could not write to (acks=all) after healing


@attrs.frozen(slots=True)
class Send:
    """One produce call of the run's producer (times in seconds of the run): ``count`` records to one partition,
    from the call to its delivery reports; ``acked`` when every record was acknowledged."""

    start: float
    end: float
    topic: str
    partition: int
    count: int
    acked: bool


@attrs.frozen(slots=True)
class Outage:
    """A broker not serving, as the runner caused it: from the fault (SIGKILL, SIGTERM, SIGSTOP, its log dir made
    unusable) until the runner saw it registered again by a running process (``end`` None: never seen)."""

    broker: int
    start: float
    end: float | None
    cause: str


@attrs.frozen(slots=True)
class MinIsrSetting:
    """A topic's min.insync.replicas from ``ts`` on, as the run set it (a topic starts with the brokers' 1)."""

    ts: float
    topic: str
    value: int


@attrs.frozen(slots=True)
class ErrorAnswer:
    """An answer with UNKNOWN_SERVER_ERROR (-1): one a run's client received, or one a broker's log records."""

    ts: float | None  # seconds of the run (None: read from a broker's log afterwards)
    source: str  # "the producer", "the consumer", "broker 1's log"
    detail: str


@attrs.frozen(slots=True)
class Violation:
    """A broken invariant: kind is "safety", "lost", "divergent", "stuck", "gap" (an acknowledgement gap over the
    bound), "duplicate" (a record in a log twice), "server-error" (an UNKNOWN_SERVER_ERROR answer), "load" (a
    coordinator's load failed at a batch it could not pass: kactor/chaos/loads.py) or "operator" (an operator's slip
    not refused: kactor/chaos/slips.py)."""

    kind: str
    detail: str
