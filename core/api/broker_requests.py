"""The request types the replica manager serves over its shards, one line each (tansu's one service per request
type): each unit (`core.broker.shards.ShardedRequest`) lives with its API's wire converters. Adding a replica-manager
API is its module and one line here; actors/replica_manager_actor.py and actors/partition_actor.py are generic over
this table.
"""

from __future__ import annotations

from typing import Any

from core.api import (
    alter_replica_log_dirs,
    delete_records,
    describe_log_dirs,
    fetch,
    kactor_private,
    leader_and_isr,
    list_offsets,
    offset_for_leader_epoch,
    produce,
    stop_replica,
    update_metadata,
    write_txn_markers,
)
from core.broker.shards import ShardedRequest

BROKER_REQUESTS: dict[type, ShardedRequest] = {unit.request_type: unit for unit in (
    leader_and_isr.SHARDED,
    update_metadata.SHARDED,
    stop_replica.SHARDED,
    fetch.SHARDED,
    produce.SHARDED,
    list_offsets.SHARDED,
    offset_for_leader_epoch.SHARDED,
    kactor_private.SHARDED,
    describe_log_dirs.SHARDED,
    delete_records.SHARDED,
    alter_replica_log_dirs.SHARDED,
    write_txn_markers.SHARDED,
)}

# the answers the shards' follower fetchers get back, by their type
FOLLOWER_RESPONSES: dict[type, ShardedRequest] = {
    unit.response_type: unit for unit in BROKER_REQUESTS.values() if unit.response_type is not None}


def unit_of(request: Any) -> ShardedRequest:
    """The unit serving ``request``; TypeError for a request the replica manager does not serve."""
    unit = BROKER_REQUESTS.get(type(request))
    if unit is None:
        raise TypeError(f"replica-manager cannot handle {type(request).__name__}")
    return unit


def split_request(request: Any, shards: int) -> dict[int, Any]:
    """Each shard's part of ``request`` (`ShardedRequest.split`)."""
    return unit_of(request).split(request, shards)


def merge_responses(request: Any, parts: dict[int, Any]) -> Any:
    """The one response for ``request`` from its shards' answers (`ShardedRequest.merge`)."""
    return unit_of(request).merge(request, parts)
