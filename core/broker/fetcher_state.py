"""The follower side's per-partition fetch state and the truncation decision of Kafka 2.6's AbstractFetcherThread.

A partition a broker starts to follow enters its fetcher *Truncating*, at its high watermark
(ReplicaManager.makeFollowers → addFetcherForPartitions). While Truncating it is not fetched: the fetcher asks the
leader OffsetsForLeaderEpoch for the follower's latest epoch and truncates by the answer
(`offset_truncation_state`, KIP-101 and KIP-279's multi-round rule); a log with no leader-epoch entries is
truncated to the high watermark instead. Then the partition is *Fetching*.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from core.broker.leader_epoch_cache import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET

TRUNCATING = "Truncating"  # kafka.server.Truncating
FETCHING = "Fetching"  # kafka.server.Fetching


@attrs.frozen
class FollowerFetchState:
    """kafka.server.PartitionFetchState, with the leader it is fetched from (the fetcher thread's source broker).
    ``fetch_offset`` matters while Truncating (the high-watermark fallback); once Fetching, fetches start at the
    log end offset, which truncation made equal to it."""

    leader_id: int
    leader_epoch: int  # currentLeaderEpoch
    fetch_offset: int = 0
    state: str = FETCHING

    @property
    def is_truncating(self) -> bool:
        return self.state == TRUNCATING

    @property
    def is_ready_for_fetch(self) -> bool:
        return self.state == FETCHING


@attrs.frozen
class OffsetTruncationState:
    """kafka.server.OffsetTruncationState: where to truncate, and whether truncation is then complete (False:
    KIP-279's intermediate step, another OffsetsForLeaderEpoch round follows)."""

    offset: int
    truncation_completed: bool


def offset_truncation_state(leader_epoch: int, leader_end_offset: int, fetch_offset: int, replica_end_offset: int,
                            end_offset_for_epoch: Callable[[int], tuple[int, int] | None]) -> OffsetTruncationState:
    """AbstractFetcherThread.getOffsetTruncationState for one partition the leader answered without error.

    ``leader_epoch`` / ``leader_end_offset``: the leader's answer; ``fetch_offset``: the partition's fetch state
    offset (the high watermark it became a follower at); ``end_offset_for_epoch``: the follower's own
    Log.endOffsetForEpoch ((end offset, epoch) of its largest epoch ≤ the one asked, or None).

    * the leader cannot place our epoch (UNDEFINED_EPOCH_OFFSET) → the fetch offset (high watermark), complete;
    * the leader gave an offset without an epoch (pre-2.0 protocol) → min(its offset, our LEO), complete;
    * we know the leader's epoch → min(its end offset, ours for that epoch, our LEO), complete;
    * our largest epoch ≤ the leader's is another one (we never saw the leader's epoch) → our end offset for
      that epoch, NOT complete (ask again with our new latest epoch);
    * we know no epoch ≤ the leader's → min(its end offset, our LEO), complete.
    """
    if leader_end_offset == UNDEFINED_EPOCH_OFFSET:
        return OffsetTruncationState(fetch_offset, True)
    if leader_epoch == UNDEFINED_EPOCH:
        return OffsetTruncationState(min(leader_end_offset, replica_end_offset), True)
    found = end_offset_for_epoch(leader_epoch)
    if found is None:
        return OffsetTruncationState(min(leader_end_offset, replica_end_offset), True)
    follower_end_offset, follower_epoch = found
    if follower_epoch != leader_epoch:
        return OffsetTruncationState(min(follower_end_offset, replica_end_offset), False)
    return OffsetTruncationState(min(follower_end_offset, leader_end_offset, replica_end_offset), True)
