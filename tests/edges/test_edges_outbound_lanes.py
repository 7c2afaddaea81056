"""The outbound connection a broker's request goes on (edges/net/outbound.py `_lane`): one per destination and
sending actor, and a verify-only AddPartitionsToTxn on one of its own, as Kafka 3.6's AddPartitionsToTxnManager has
its own NetworkClient: a peer answers a connection's requests one at a time, so on the shard's fetch connection the
verification waited behind a follower fetch parked for replica.fetch.wait.max.ms."""

from __future__ import annotations

from core.api.registry import spec_for_key
from edges.net.outbound import Pending, _lane
from protocol.api_versions import ApiKeys


def _pending(reply_to: str, key: int) -> Pending:
    spec = spec_for_key(key)
    assert spec is not None
    return Pending(reply_to, 1, None, 0.0, spec)


def test_a_verification_does_not_share_the_shards_fetch_connection() -> None:
    dest = ("127.0.0.1", 9092)
    fetch = _lane(dest, _pending("partition-1", ApiKeys.FETCH))
    verify = _lane(dest, _pending("partition-1", ApiKeys.ADD_PARTITIONS_TO_TXN))
    assert fetch == ("127.0.0.1", 9092, "partition-1")
    assert verify != fetch and verify[:2] == dest
    # one per sending actor still: another shard's verifications have a connection of their own
    assert _lane(dest, _pending("partition-2", ApiKeys.ADD_PARTITIONS_TO_TXN)) != verify
    # every other API stays on its actor's connection
    assert _lane(dest, _pending("partition-1", ApiKeys.OFFSET_FOR_LEADER_EPOCH)) == fetch
