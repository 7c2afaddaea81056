"""The replica manager's request units by request: each unit (`core.broker.shards.ShardedRequest`) is its API
module's ``ReplicaManagerService(SHARDED)`` in the registry (core/api/registry.py); these are its splits and merges,
looked up there. actors/replica_manager_actor.py and actors/partition_actor.py are generic over the units.
"""

from __future__ import annotations

from typing import Any

from core.api.registry import sharded_unit_of
from core.broker.shards import ShardedRequest


def unit_of(request: Any) -> ShardedRequest:
    """The unit serving ``request``; TypeError for a request the replica manager does not serve."""
    return sharded_unit_of(request)


def split_request(request: Any, shards: int) -> dict[int, Any]:
    """Each shard's part of ``request`` (`ShardedRequest.split`)."""
    return sharded_unit_of(request).split(request, shards)


def merge_responses(request: Any, parts: dict[int, Any]) -> Any:
    """The one response for ``request`` from its shards' answers (`ShardedRequest.merge`)."""
    return sharded_unit_of(request).merge(request, parts)
