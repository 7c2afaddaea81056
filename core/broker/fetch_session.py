"""Incremental fetch sessions (KIP-227): kafka.server.FetchSession / FetchSessionCache / FetchContext on the leader
side, org.apache.kafka.clients.FetchSessionHandler on the follower side.

A fetcher's full request with session epoch 0 opens a session: the leader caches every partition the fetcher asked
for, with the fetch state it sent and the high watermark / last stable offset / log start offset it last answered.
The next requests name the session (id, epoch 1, 2, ...) and carry only the partitions whose fetch state changed,
plus the forgotten ones; the leader serves the whole session and answers only the partitions with something new —
records, an error, or a changed high watermark, last stable offset or log start offset (CachedPartition.
maybeUpdateResponseData). So an idle follower's request and the leader's answer do not grow with its partition
count. Session ids are deterministic (a counter times SESSION_ID_STRIDE plus the shard), so a replay makes the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from messages.common import Errors, TopicPartition
from messages.replication import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    INVALID_SESSION_ID,
    FetchPartition,
    FetchPartitionData,
    FetchRequest,
    FetchResponse,
)

# A session id ends in the number of the leader shard that holds it (id = seq * stride + shard), so the broker's
# request front can route an incremental request that names no partition.
SESSION_ID_STRIDE = 1024
# max.incremental.fetch.session.cache.slots (1000): sessions one shard keeps; followers' sessions are privileged
# (FetchSessionCache.tryEvict evicts a consumer's before a follower's), the least recently used consumer's goes first
MAX_INCREMENTAL_FETCH_SESSION_CACHE_SLOTS = 1000


@attrs.define
class CachedPartition:
    """kafka.server.CachedPartition: the fetch state the fetcher last sent, and what the leader last answered."""

    fetch: FetchPartition
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1

    def maybe_update_response_data(self, data: FetchPartitionData) -> bool:
        """CachedPartition.maybeUpdateResponseData: whether an incremental response must carry ``data`` (records,
        an error, a changed offset or a preferred read replica); the cached offsets become the answered ones."""
        # a preferred read replica (KIP-392) is always answered
        must = bool(data.records) or data.error != Errors.NONE or data.preferred_read_replica >= 0
        if (data.high_watermark != self.high_watermark or data.last_stable_offset != self.last_stable_offset
                or data.log_start_offset != self.log_start_offset):
            must = True
            self.high_watermark = data.high_watermark
            self.last_stable_offset = data.last_stable_offset
            self.log_start_offset = data.log_start_offset
        return must


@attrs.define(eq=False)
class FetchSession:
    """kafka.server.FetchSession: ``partitions`` in Kafka's order (a partition that returned data moves to the
    end, so the others get their turn under max_bytes)."""

    id: int
    replica_id: int
    fetcher_id: int
    epoch: int  # the epoch the next incremental request must carry
    partitions: dict[TopicPartition, CachedPartition]


@attrs.frozen(eq=False)
class FetchContext:
    """kafka.server.FetchContext, resolved: the partitions to serve (for an incremental request: the whole
    session), the session (None: sessionless) and whether the response is incremental."""

    partitions: tuple[FetchPartition, ...]
    session: FetchSession | None = None
    incremental: bool = False

    def cached(self, tp: TopicPartition) -> CachedPartition | None:
        return self.session.partitions.get(tp) if self.session is not None else None

    def response(self, data: Sequence[FetchPartitionData]) -> FetchResponse:
        """FetchContext.updateAndGenerateResponseData: every partition for a full request; for an incremental one,
        only those with something new (partitions left out of ``data`` — nothing new, not read — stay out)."""
        session = self.session
        if session is None:
            return FetchResponse(tuple(data))
        out: list[FetchPartitionData] = []
        for d in data:
            cp = session.partitions.get(d.tp)
            if cp is None:
                if not self.incremental:
                    out.append(d)
                continue
            must = cp.maybe_update_response_data(d)
            if not self.incremental:
                out.append(d)
            elif must:
                out.append(d)
                if d.records:  # Kafka moves it to the end of the session so the others get a chance
                    del session.partitions[d.tp]
                    session.partitions[d.tp] = cp
        return FetchResponse(tuple(out), Errors.NONE, session.id)  # positional: a keyword is matched per call


class FetchSessionCache:
    """kafka.server.FetchManager + FetchSessionCache of one shard."""

    def __init__(self, shard: int = 0, max_sessions: int = MAX_INCREMENTAL_FETCH_SESSION_CACHE_SLOTS) -> None:
        self.shard = shard
        self.max_sessions = max_sessions
        self._sessions: dict[int, FetchSession] = {}  # in order of last use
        self._by_follower_fetcher: dict[tuple[int, int], int] = {}
        self._next_seq = 1

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, session_id: int) -> FetchSession | None:
        return self._sessions.get(session_id)

    def _remove(self, session_id: int) -> None:
        session = self._sessions.pop(session_id, None)
        if session is not None and self._by_follower_fetcher.get((session.replica_id, session.fetcher_id)) == \
                session_id:
            del self._by_follower_fetcher[(session.replica_id, session.fetcher_id)]

    def _create(self, request: FetchRequest) -> FetchSession:
        """FetchSessionCache.maybeCreateSession: a follower's fetcher has one session (its new full request
        replaces the old one); consumers' sessions are evicted least recently used first when the cache is full."""
        if request.replica_id >= 0:
            old = self._by_follower_fetcher.get((request.replica_id, request.fetcher_id))
            if old is not None:
                self._remove(old)
        while len(self._sessions) >= self.max_sessions:
            victim = next((s.id for s in self._sessions.values() if s.replica_id < 0), None)
            if victim is None:
                victim = next(iter(self._sessions))
            self._remove(victim)
        sid = self._next_seq * SESSION_ID_STRIDE + self.shard
        self._next_seq += 1
        session = FetchSession(sid, request.replica_id, request.fetcher_id, 1,
                               {fp.tp: CachedPartition(fp) for fp in request.partitions})
        self._sessions[sid] = session
        if request.replica_id >= 0:
            self._by_follower_fetcher[(request.replica_id, request.fetcher_id)] = sid
        return session

    def new_context(self, request: FetchRequest) -> FetchContext | FetchResponse:
        """FetchManager.newContext: a sessionless full request (epoch -1; a named session is closed), a full request
        opening a session (epoch 0), or the next incremental request of a session — whose changed partitions
        replace the cached ones and whose forgotten ones leave it. An unknown session or a wrong epoch is
        answered at once with the top-level error (the fetcher then starts over with a full request)."""
        if request.session_epoch == FINAL_EPOCH:
            if request.session_id != INVALID_SESSION_ID:
                self._remove(request.session_id)
            return FetchContext(request.partitions)
        if request.session_epoch == INITIAL_EPOCH:
            if request.session_id != INVALID_SESSION_ID:
                self._remove(request.session_id)
            return FetchContext(request.partitions, self._create(request))
        session = self._sessions.get(request.session_id)
        if session is None or session.replica_id != request.replica_id:
            return FetchResponse((), Errors.FETCH_SESSION_ID_NOT_FOUND)
        if request.session_epoch != session.epoch:
            return FetchResponse((), Errors.INVALID_FETCH_SESSION_EPOCH)
        session.epoch += 1
        del self._sessions[session.id]  # most recently used: last
        self._sessions[session.id] = session
        for tp in request.forgotten:
            session.partitions.pop(tp, None)
        for fp in request.partitions:
            cp = session.partitions.get(fp.tp)
            if cp is None:
                session.partitions[fp.tp] = CachedPartition(fp)
            else:
                cp.fetch = fp
        return FetchContext(tuple(cp.fetch for cp in session.partitions.values()), session, True)  # incremental


@attrs.define
class FetchSessionHandler:
    """org.apache.kafka.clients.FetchSessionHandler (follower side, one per leader): the session and the fetch
    state the leader holds for each of its partitions."""

    session_id: int = INVALID_SESSION_ID
    epoch: int = INITIAL_EPOCH
    sent: dict[TopicPartition, FetchPartition] = attrs.Factory(dict)

    def reset(self) -> None:
        """Start over with a full request (an error, no session, or a request that got no answer)."""
        self.session_id, self.epoch, self.sent = INVALID_SESSION_ID, INITIAL_EPOCH, {}

    def build(self, base: FetchRequest, wanted: Iterable[FetchPartition]) -> FetchRequest:
        """FetchSessionHandler.Builder.build: ``base`` with every wanted partition (no session yet: a full request
        opening one, in topic-partition order) or only the added and changed ones plus the forgotten ones.
        ``wanted`` reuses the FetchPartition objects of ``sent`` for partitions whose fetch state is unchanged."""
        parts = list(wanted)
        if self.session_id == INVALID_SESSION_ID:
            parts.sort(key=lambda f: (f.tp.topic, f.tp.partition))
            return _with_session(base, tuple(parts), base.session_id, INITIAL_EPOCH, base.forgotten)
        sent = self.sent
        changed = [fp for fp in parts if sent.get(fp.tp) is not fp]
        forgotten: tuple[TopicPartition, ...] = ()
        if len(parts) - sum(1 for fp in changed if fp.tp not in sent) != len(sent):
            current = {fp.tp for fp in parts}
            forgotten = tuple(tp for tp in sent if tp not in current)
        return _with_session(base, tuple(changed), self.session_id, self.epoch, forgotten)

    def handle_response(self, request: FetchRequest | None, full: Sequence[FetchPartition],
                        response: FetchResponse) -> None:
        """FetchSessionHandler.handleResponse: a session the leader opened or kept goes on (next epoch) with the
        fetch state of every partition of the request; an error or no session starts over."""
        if response.error != Errors.NONE or request is None or response.session_id == INVALID_SESSION_ID:
            self.reset()
            return
        self.epoch = self.epoch + 1 if self.session_id == response.session_id else 1
        self.session_id = response.session_id
        self.sent = {fp.tp: fp for fp in full}


def _with_session(base: FetchRequest, partitions: tuple[FetchPartition, ...], session_id: int, session_epoch: int,
                  forgotten: tuple[TopicPartition, ...]) -> FetchRequest:
    """``attrs.evolve(base, partitions=..., session_id=..., session_epoch=..., forgotten=...)`` without evolve's
    per-call walk of the class's fields (a follower builds one per fetch): every other field copied from ``base``.
    tests/core/broker/test_fetch_session.py holds it equal to evolve, and fails when FetchRequest gains a field."""
    return FetchRequest(base.replica_id, partitions, base.max_wait_ms, base.min_bytes, base.max_bytes,
                        base.isolation_level, session_id, session_epoch, forgotten, base.fetcher_id, base.rack_id,
                        base.client_metadata, base.listener, base.principal)
