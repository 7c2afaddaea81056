"""The replica manager's shards: which shard hosts a partition, and what one request type needs to be served over them.

Kafka's ReplicaManager serves a request in one call under per-partition locks; kactor's is a bounded set of shards
(actors/partition_actor.py), so each request type the replica manager serves says how it is cut into the shards'
parts, how their answers make the one response Kafka gives, what a part answers when its handler failed, and which
ReplicaManager method serves a part (`ShardedRequest`). Each is defined next to the request's wire converters, in its
core/api module, as its unit's service (core/api/registry.py's ReplicaManagerService).
"""

from __future__ import annotations

import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import attrs

from messages.common import Errors, TopicPartition

T = TypeVar("T")

# (topic, partition, its class, shards) → shard: shard_of, computed once (the class: True == 1, but not as text)
_SHARDS: dict[tuple[str, int, type, int], int] = {}
_SHARDS_MAX = 200_000  # entries; cleared when full (a broker's partitions times a shard count or two)


def shard_of(tp: TopicPartition, shards: int) -> int:
    """The shard hosting ``tp``: a hash that is the same in every process and every run (not Python's hash())."""
    key = (tp.topic, tp.partition, tp.partition.__class__, shards)
    shard = _SHARDS.get(key)
    if shard is None:
        shard = zlib.crc32(f"{tp.topic}-{tp.partition}".encode()) % shards
        if len(_SHARDS) >= _SHARDS_MAX:
            _SHARDS.clear()
        _SHARDS[key] = shard
    return shard


class SplitRefused(Exception):  # noqa: N818 - not an error of kactor's: the request's own answer
    """A request no shard can take as it is: ``response`` answers it whole (e.g. an incremental fetch naming a
    session no shard holds)."""

    def __init__(self, response: Any) -> None:
        super().__init__(type(response).__name__)
        self.response = response


def by_shard(items: Iterable[T], tp_of: Callable[[T], TopicPartition], shards: int) -> dict[int, list[T]]:
    """``items`` grouped by the shard of their partition, each group in the items' order."""
    groups: dict[int, list[T]] = defaultdict(list)
    for item in items:
        groups[shard_of(tp_of(item), shards)].append(item)
    return groups


def in_request_order(asked: Iterable[TopicPartition], answers: Iterable[Any]) -> list[Any]:
    """The partitions' answers (each with a ``tp``) in the order the request named them; a partition named twice gets
    its answers in turn, as Kafka's map gives one."""
    by_tp: dict[TopicPartition, list[Any]] = defaultdict(list)
    for a in answers:
        by_tp[a.tp].append(a)
    return [by_tp[tp].pop(0) for tp in asked if by_tp[tp]]


def first_error(errors: Iterable[Errors]) -> Errors:
    return next((e for e in errors if e != Errors.NONE), Errors.NONE)


def answers_of(parts: dict[int, Any]) -> list[Any]:
    """The shards' answers in shard order, so that a merged response is the same in every run."""
    return [parts[i] for i in sorted(parts)]


@attrs.frozen(slots=True)
class ShardedRequest:
    """One request type of the replica manager, served over its shards.

    ``split(request, shards)``: each shard's part, by shard index (controller requests give every shard a part, so
    that each fences stale controllers on its own; a client request only the shards hosting its partitions); may
    raise `SplitRefused`. ``merge(request, parts)``: the one response from the parts' answers (``parts`` may be
    empty: a request naming no partition). ``error(part, code)``: a part's answer with every item failed with
    ``code``. ``handle(replica_manager, part, now_ms, reply)``: the ReplicaManager procedure serving a part; its
    result answers it, or None when ``reply`` (a `core.effects.ReplyHandle`) is answered later through ``Respond``.
    ``changes_partitions``: serving it may change which partitions the shard leads or follows (its gauges move).

    For the requests the shards' follower fetchers send, the answer's side: ``response_type``, ``response_failed``
    (some partition answered an error: the fetcher backs off that leader) and ``handle_response(replica_manager,
    leader_id, response, now_ms)``, the procedure applying it.
    """

    request_type: type
    split: Callable[[Any, int], dict[int, Any]]
    merge: Callable[[Any, dict[int, Any]], Any]
    error: Callable[[Any, Errors], Any]
    handle: Callable[[Any, Any, float, Any], Any]
    changes_partitions: bool = False
    response_type: type | None = None
    response_failed: Callable[[Any], bool] | None = None
    handle_response: Callable[[Any, int, Any, float], Any] | None = None
