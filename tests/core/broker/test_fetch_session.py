"""KIP-227 fetch sessions on their own (core/broker/fetch_session.py): the leader's FetchSessionCache deciding each
request's context, the incremental response's choice of partitions, the cache's eviction order, and the follower's
FetchSessionHandler building full and incremental requests."""

from __future__ import annotations

from core.broker.fetch_session import SESSION_ID_STRIDE, FetchContext, FetchSessionCache, FetchSessionHandler
from messages.common import Errors, TopicPartition
from messages.replication import FetchPartition, FetchPartitionData, FetchRequest, FetchResponse

A, B, C = (TopicPartition("t", p) for p in range(3))


def _data(tp: TopicPartition, hw: int, records: bytes = b"", error: Errors = Errors.NONE) -> FetchPartitionData:
    return FetchPartitionData(tp, error, hw, hw, 0, records)


def test_contexts_sessionless_full_and_incremental() -> None:
    cache = FetchSessionCache(shard=3)
    parts = (FetchPartition(A, 0), FetchPartition(B, 0))
    sessionless = cache.new_context(FetchRequest(-1, parts))
    assert isinstance(sessionless, FetchContext) and sessionless.session is None and len(cache) == 0
    full = cache.new_context(FetchRequest(1, parts, session_epoch=0))
    assert isinstance(full, FetchContext) and not full.incremental
    session = full.session
    assert session is not None and session.id == SESSION_ID_STRIDE + 3 and session.epoch == 1  # names its shard
    # the next request: B moved on, C added, A forgotten; the context stands for the whole session
    inc = cache.new_context(FetchRequest(1, (FetchPartition(B, 5), FetchPartition(C, 0)), session_id=session.id,
                                         session_epoch=1, forgotten=(A,)))
    assert isinstance(inc, FetchContext) and inc.incremental and inc.session is session
    assert inc.partitions == (FetchPartition(B, 5), FetchPartition(C, 0)) and session.epoch == 2
    wrong_epoch = cache.new_context(FetchRequest(1, (), session_id=session.id, session_epoch=1))
    assert wrong_epoch == FetchResponse((), Errors.INVALID_FETCH_SESSION_EPOCH)
    other_replica = cache.new_context(FetchRequest(2, (), session_id=session.id, session_epoch=2))
    assert other_replica == FetchResponse((), Errors.FETCH_SESSION_ID_NOT_FOUND)
    closed = cache.new_context(FetchRequest(1, parts, session_id=session.id, session_epoch=-1))
    assert isinstance(closed, FetchContext) and closed.session is None and cache.get(session.id) is None


def test_incremental_response_carries_only_news_and_rotates_partitions_with_data() -> None:
    cache = FetchSessionCache()
    parts = (FetchPartition(A, 0), FetchPartition(B, 0), FetchPartition(C, 0))
    full = cache.new_context(FetchRequest(1, parts, session_epoch=0))
    assert isinstance(full, FetchContext)
    first = full.response([_data(A, 0), _data(B, 0), _data(C, 0)])
    assert [d.tp for d in first.partitions] == [A, B, C] and first.session_id == full.session.id  # full: all
    inc = cache.new_context(FetchRequest(1, (), session_id=first.session_id, session_epoch=1))
    assert isinstance(inc, FetchContext)
    answer = inc.response([_data(A, 0, b"batch"), _data(B, 4), _data(C, 0)])
    assert [d.tp for d in answer.partitions] == [A, B]  # A: records, B: a new high watermark; C: nothing new
    assert list(inc.session.partitions) == [B, C, A]  # A returned data: to the end, the others go first next time
    again = cache.new_context(FetchRequest(1, (), session_id=first.session_id, session_epoch=2))
    assert isinstance(again, FetchContext)
    assert [d.tp for d in again.response([_data(B, 4), _data(C, 0, error=Errors.KAFKA_STORAGE_ERROR)]).partitions] \
        == [C]  # an error is news


def test_a_full_cache_evicts_consumer_sessions_first_least_recently_used() -> None:
    cache = FetchSessionCache(max_sessions=3)
    ids = [cache.new_context(FetchRequest(r, (FetchPartition(A, 0),), session_epoch=0)).session.id
           for r in (-1, 1, -1)]
    cache.new_context(FetchRequest(-1, (), session_id=ids[0], session_epoch=1))  # the first consumer's is used again
    newest = cache.new_context(FetchRequest(-1, (FetchPartition(B, 0),), session_epoch=0)).session.id
    assert [cache.get(i) is not None for i in ids] == [True, True, False] and cache.get(newest) is not None
    # a follower fetcher's new full request replaces its own previous session
    replaced = cache.new_context(FetchRequest(1, (FetchPartition(C, 0),), session_epoch=0)).session.id
    assert cache.get(ids[1]) is None and cache.get(replaced) is not None and len(cache) == 3


def test_handler_builds_full_then_incremental_requests() -> None:
    handler = FetchSessionHandler()
    base = FetchRequest(1, (), 500, 1)
    a, b = FetchPartition(A, 0, 2), FetchPartition(B, 7, 2)
    full = handler.build(base, [b, a])
    assert full.partitions == (a, b) and (full.session_id, full.session_epoch) == (0, 0)
    handler.handle_response(full, (a, b), FetchResponse((), session_id=1024))
    assert (handler.session_id, handler.epoch) == (1024, 1)
    a2 = FetchPartition(A, 3, 2)
    inc = handler.build(base, [a2, b])  # b is the object sent last time: unchanged
    assert inc.partitions == (a2,) and inc.forgotten == () and (inc.session_id, inc.session_epoch) == (1024, 1)
    handler.handle_response(inc, (a2, b), FetchResponse((), session_id=1024))
    c = FetchPartition(C, 0, 2)
    inc = handler.build(base, [a2, c])  # b is no longer fetched, c is new
    assert inc.partitions == (c,) and inc.forgotten == (B,) and inc.session_epoch == 2
    handler.handle_response(inc, (a2, c), FetchResponse((), Errors.FETCH_SESSION_ID_NOT_FOUND))
    assert (handler.session_id, handler.epoch, handler.sent) == (0, 0, {})  # an error: a full request next


def test_handler_requests_equal_attrs_evolve_of_the_base_with_every_field_set() -> None:
    """The handler's fast copy of the base request (issue #43: no attrs.evolve per fetch) is evolve's result for a
    base whose every field differs from its default, full and incremental, and knows FetchRequest's fields: a field
    added to FetchRequest fails here until the copy carries it."""
    import attrs

    from core.broker.fetch_session import _with_session

    assert [f.name for f in attrs.fields(FetchRequest)] == [
        "replica_id", "partitions", "max_wait_ms", "min_bytes", "max_bytes", "isolation_level", "session_id",
        "session_epoch", "forgotten", "fetcher_id", "rack_id", "client_metadata", "listener", "principal"]
    t0, t1 = TopicPartition("t", 0), TopicPartition("t", 1)
    base = FetchRequest(7, (FetchPartition(t1, 9),), 123, 4, 5678, 1, 55, 66, (t0,), 3, "rack-a", True, "INTERNAL",
                        "User:x")
    parts = (FetchPartition(t0, 1), FetchPartition(t1, 2))
    fast = _with_session(base, parts, 77, 8, (t1,))
    assert fast == attrs.evolve(base, partitions=parts, session_id=77, session_epoch=8, forgotten=(t1,))
    handler = FetchSessionHandler()
    full = handler.build(base, reversed(parts))
    assert full == attrs.evolve(base, partitions=parts, session_epoch=0)
    handler.handle_response(full, parts, FetchResponse((), session_id=42))
    changed = FetchPartition(t1, 3)
    incremental = handler.build(base, [parts[0], changed])
    assert incremental == attrs.evolve(base, partitions=(changed,), session_id=42, session_epoch=1, forgotten=())
