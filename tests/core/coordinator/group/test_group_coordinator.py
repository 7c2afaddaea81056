"""GroupCoordinator's state machine (Kafka 2.6's classic protocol) driven through its procedures: the effects it
yields are answered here as the actor and the replica manager would (appends go to an in-memory list of batches,
reads read them back), timers fire when the frozen clock passes them."""

from __future__ import annotations

import logging
import struct
import time
from typing import Any

import pytest
from freezegun import freeze_time

from core.api.registry import coordinator_service_of
from core.coordinator.coordinator_loader import AwaitHighWatermark, LogRead, LogStart
from core.coordinator.group.group_coordinator import GroupCoordinator
from core.coordinator.group.group_metadata import GroupState
from core.coordinator.group.group_metadata_manager import (
    Appended,
    AppendToLog,
    Fork,
    ReadLog,
    ReadLogStart,
    VerifyTxnOffsetCommit,
    partition_for,
)
from core.coordinator.group.message_formats import (
    GroupRecord,
    MemberRecord,
    OffsetAndMetadata,
    group_metadata_key,
    group_metadata_value,
    offset_commit_key,
    offset_commit_value,
)
from core.effects import Cancel, Respond, Schedule, run_sync
from core.zk_client import KafkaZkClient
from messages.common import Errors, ReplicaAssignment, TopicPartition
from messages.group import (
    DeleteGroupsRequest,
    DescribeGroupsRequest,
    GroupCoordinatorConfig,
    HeartbeatRequest,
    JoinGroupProtocol,
    JoinGroupRequest,
    LeaveGroupRequest,
    ListGroupsRequest,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    OffsetFetchRequest,
    SyncGroupAssignment,
    SyncGroupRequest,
)
from messages.zk import ZkBatch
from protocol.records import assign_offsets, iter_batches, read_records
from protocol.zk import znodes
from tests.support.fake_zookeeper import FakeZooKeeper

GROUP = "g"
T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)
PROTOCOLS = (JoinGroupProtocol("range", b"sub-range"), JoinGroupProtocol("roundrobin", b"sub-rr"))


class Harness:
    """The coordinator under an actor stand-in: responses by reply handle, timers by key, a log per partition."""

    def __init__(self, config: GroupCoordinatorConfig | None = None, log: dict[int, bytearray] | None = None) -> None:
        self.config = config or GroupCoordinatorConfig(offsets_topic_num_partitions=4,
                                                       group_initial_rebalance_delay_ms=3000)
        self.gc = GroupCoordinator(1, self.config, lambda: time.time() * 1000)
        self.partition = partition_for(GROUP, self.config.offsets_topic_num_partitions)
        self.log = log if log is not None else {}
        self.log_start: dict[int, int] = {}  # partition → its log start offset (retention moved it), else 0
        self.high_watermark: dict[int, int] = {}  # partition → its high watermark below the log end, else the log end
        self.awaiting: list[Any] = []  # the loads waiting for the high watermark to move
        self.responses: dict[str, Any] = {}
        self.timers: dict[str, float] = {}
        self.append_error = Errors.NONE
        self.appends: list[AppendToLog] = []
        # the replica manager's answer to a TxnOffsetCommit's verification (KIP-890, 3.7), and the asks seen
        self.verify_error = Errors.NONE
        self.verifications: list[VerifyTxnOffsetCommit] = []
        self.held: list[tuple[Any, Any]] = []  # (proc, effect) of asks held back
        self.hold_reads = False
        self.hold_appends = False
        self.held_appends: list[tuple[Any, Any]] = []  # (proc, effect) of appends held back
        self._n = 0
        self.zk = FakeZooKeeper().create_top_level_paths()
        self.run(self.gc.startup(KafkaZkClient()))

    # -- driving -----------------------------------------------------------------------------------------------------
    def run(self, proc: Any, value: Any = None) -> None:
        try:
            effect = proc.send(value)
            while True:
                effect = proc.send(self._answer(proc, effect))
        except StopIteration:
            pass
        except _HeldError:
            pass

    def _answer(self, proc: Any, effect: Any) -> Any:
        if isinstance(effect, Respond):
            assert effect.reply_to not in self.responses, f"answered twice: {effect.reply_to}"
            self.responses[effect.reply_to] = effect.response
        elif isinstance(effect, Schedule):
            self.timers[effect.key] = time.time() * 1000 + effect.delay_ms
        elif isinstance(effect, Cancel):
            self.timers.pop(effect.key, None)
        elif isinstance(effect, Fork):
            self.run(effect.proc)
        elif isinstance(effect, ZkBatch):
            return self.zk(effect)
        elif isinstance(effect, AppendToLog):
            if self.hold_appends:
                self.held_appends.append((proc, effect))
                raise _HeldError
            self.appends.append(effect)
            if self.append_error is not Errors.NONE:
                return Appended(self.append_error)
            data = self.log.setdefault(effect.partition, bytearray())
            buf = bytearray(effect.records)
            base = self.leo(effect.partition)
            assign_offsets(buf, 0, base)
            data += buf
            return Appended(Errors.NONE, base)
        elif isinstance(effect, VerifyTxnOffsetCommit):
            self.verifications.append(effect)
            return Appended(self.verify_error)
        elif isinstance(effect, ReadLogStart):
            return LogStart(Errors.NONE, self.log_start.get(effect.partition, 0))
        elif isinstance(effect, ReadLog):
            if self.hold_reads:
                self.held.append((proc, effect))
                raise _HeldError
            return self.read(effect)
        elif isinstance(effect, AwaitHighWatermark):
            if self.hw(effect.partition) <= effect.offset:  # the fetch purgatory holds it
                self.awaiting.append(proc)
                raise _HeldError
            return LogRead(Errors.NONE, b"", 0, self.leo(effect.partition), self.hw(effect.partition))
        else:
            raise AssertionError(f"unexpected effect {effect!r}")
        return None

    def read(self, effect: ReadLog) -> LogRead:
        """Log.read as the replica manager answers it: below the log start OFFSET_OUT_OF_RANGE with no log start
        (Kafka's fetch error answer); else the whole batches from the one holding the offset."""
        start = self.log_start.get(effect.partition, 0)
        if effect.offset < start:
            return LogRead(Errors.OFFSET_OUT_OF_RANGE)
        data = bytes(self.log.get(effect.partition, b""))
        out = b"".join(b.raw for b in iter_batches(data) if b.base_offset + b.last_offset_delta >= effect.offset)
        return LogRead(Errors.NONE, out, start, self.leo(effect.partition), self.hw(effect.partition))

    def hw(self, partition: int) -> int:
        return self.high_watermark.get(partition, self.leo(partition))

    def replicate(self, partition: int) -> None:
        """The followers caught up: the high watermark is the log end and the waiting loads go on."""
        self.high_watermark.pop(partition, None)
        waiting, self.awaiting = self.awaiting, []
        for proc in waiting:
            self.run(proc, LogRead(Errors.NONE, b"", 0, self.leo(partition), self.hw(partition)))

    def release_reads(self) -> None:
        self.hold_reads = False
        held, self.held = self.held, []
        for proc, effect in held:
            self.run(proc, self.read(effect))

    def fail_held_appends(self, error: Errors) -> None:
        """The appends held back answered ``error`` (a write that timed out, its partition's leadership lost)."""
        self.hold_appends = False
        held, self.held_appends = self.held_appends, []
        for proc, _effect in held:
            self.run(proc, Appended(error))

    def leo(self, partition: int) -> int:
        batches = list(iter_batches(bytes(self.log.get(partition, b""))))
        return batches[-1].base_offset + batches[-1].last_offset_delta + 1 if batches else 0

    def records(self, partition: int) -> list[tuple[bytes | None, bytes | None]]:
        return [(r.key, r.value) for b in iter_batches(bytes(self.log.get(partition, b""))) for r in read_records(b)]

    def request(self, req: Any) -> str:
        self._n += 1
        handle = f"r{self._n}"
        self.run(coordinator_service_of(req).handle(self.gc, req, handle))
        return handle

    def answer(self, handle: str) -> Any:
        return self.responses.get(handle)

    def advance(self, frozen: Any, ms: float) -> None:
        """Move the clock by ``ms``, firing every timer that falls due on the way, in time order."""
        end = time.time() * 1000 + ms
        while True:
            due = sorted((t, k) for k, t in self.timers.items() if t <= end)
            if not due:
                break
            t, key = due[0]
            frozen.tick((t - time.time() * 1000) / 1000)
            del self.timers[key]
            self.run(self.gc.on_timer(key))
        frozen.tick((end - time.time() * 1000) / 1000)

    def elect(self) -> None:
        self.run(self.gc.on_election(self.partition))

    # -- requests ------------------------------------------------------------------------------------------------------
    def join(self, member_id: str = "", require_known: bool = True, session: int = 10000, rebalance: int = 30000,
             protocols: tuple[JoinGroupProtocol, ...] = PROTOCOLS, client_id: str = "c", instance: str | None = None,
             group: str = GROUP) -> str:
        return self.request(JoinGroupRequest(group, session, rebalance, member_id, "consumer", protocols, instance,
                                             require_known, client_id, "/127.0.0.1"))

    def join_new(self, client_id: str = "c", **kw: Any) -> tuple[str, str]:
        """KIP-394: the first JoinGroup gets MEMBER_ID_REQUIRED and an id; the second joins with it."""
        first = self.answer(self.join(client_id=client_id, **kw))
        assert first.error is Errors.MEMBER_ID_REQUIRED and first.member_id.startswith(client_id + "-")
        return first.member_id, self.join(first.member_id, client_id=client_id, **kw)

    def sync(self, member_id: str, generation: int, assignments: dict[str, bytes] | None = None) -> str:
        return self.request(SyncGroupRequest(GROUP, generation, member_id, tuple(
            SyncGroupAssignment(m, a) for m, a in (assignments or {}).items())))

    def heartbeat(self, member_id: str, generation: int) -> Errors:
        return self.answer(self.request(HeartbeatRequest(GROUP, generation, member_id))).error

    def group(self) -> Any:
        return self.gc.manager.groups.get(GROUP)


class _HeldError(Exception):
    pass


@pytest.fixture
def frozen():
    with freeze_time("2026-11-25 12:00:00") as f:
        yield f


def stable_group_of_two(h: Harness, frozen: Any) -> tuple[str, str]:
    """Two members join (the initial delay waits 3 s, then 3 s more for the second member), the leader syncs."""
    h.elect()
    return stable_group_of_two_already_elected(h, frozen)


def stable_group_of_two_already_elected(h: Harness, frozen: Any) -> tuple[str, str]:
    m1, j1 = h.join_new("c1")
    assert h.answer(j1) is None  # waits for the initial rebalance delay
    assert h.group().state is GroupState.PREPARING_REBALANCE
    h.advance(frozen, 1000)
    m2, j2 = h.join_new("c2")
    h.advance(frozen, 2000)  # the first delay is over, but a member came meanwhile: one more delay
    assert h.answer(j1) is None and h.answer(j2) is None
    h.advance(frozen, 3000)
    r1, r2 = h.answer(j1), h.answer(j2)
    assert (r1.error, r1.generation_id, r1.leader, r1.member_id, r1.protocol_name) == (Errors.NONE, 1, m1, m1, "range")
    assert [(m.member_id, m.metadata) for m in r1.members] == [(m1, b"sub-range"), (m2, b"sub-range")]
    assert (r2.error, r2.generation_id, r2.leader, r2.member_id, r2.members) == (Errors.NONE, 1, m1, m2, ())
    assert h.group().state is GroupState.COMPLETING_REBALANCE
    s2 = h.sync(m2, 1)
    assert h.answer(s2) is None  # waits for the leader's assignment
    s1 = h.sync(m1, 1, {m1: b"a1", m2: b"a2"})
    assert (h.answer(s1).error, h.answer(s1).assignment) == (Errors.NONE, b"a1")
    assert (h.answer(s2).error, h.answer(s2).assignment) == (Errors.NONE, b"a2")
    assert h.group().state is GroupState.STABLE
    return m1, m2


def test_two_members_rebalance_and_the_group_is_written_as_kafka_writes_it(frozen):
    h = Harness()
    m1, m2 = stable_group_of_two(h, frozen)
    ((key, value),) = h.records(h.partition)
    assert key == group_metadata_key(GROUP)
    state_ts = h.group().current_state_timestamp  # written before the move to Stable: CompletingRebalance's
    assert value == group_metadata_value(GroupRecord("consumer", 1, "range", m1, int(time.time() * 1000) - 0, (
        MemberRecord(m1, None, "c1", "/127.0.0.1", 30000, 10000, b"sub-range", b"a1"),
        MemberRecord(m2, None, "c2", "/127.0.0.1", 30000, 10000, b"sub-range", b"a2"))))
    assert state_ts == int(time.time() * 1000)
    nobody_id = next(g for g in (f"n{i}" for i in range(100)) if partition_for(g, 4) == h.partition)
    described = h.answer(h.request(DescribeGroupsRequest((GROUP, nobody_id))))
    g, nobody = described.groups
    assert (g.error, g.state, g.protocol_type, g.protocol) == (Errors.NONE, "Stable", "consumer", "range")
    assert [(m.member_id, m.client_id, m.metadata, m.assignment) for m in g.members] == [
        (m1, "c1", b"sub-range", b"a1"), (m2, "c2", b"sub-range", b"a2")]
    assert (nobody.error, nobody.state, nobody.members) == (Errors.NONE, "Dead", ())
    listed = h.answer(h.request(ListGroupsRequest()))
    assert (listed.error, [(x.group_id, x.protocol_type, x.state) for x in listed.groups]) == (
        Errors.NONE, [(GROUP, "consumer", "Stable")])
    assert h.answer(h.request(ListGroupsRequest(("Empty",)))).groups == ()


def test_session_timeout_removes_a_silent_member_and_the_survivor_rebalances_alone(frozen):
    h = Harness()
    m1, m2 = stable_group_of_two(h, frozen)
    for _ in range(3):  # m1 heartbeats every 3 s, m2 says nothing
        h.advance(frozen, 3000)
        assert h.heartbeat(m1, 1) is Errors.NONE
    h.advance(frozen, 1000)  # 10 s after m2's last contact (its SyncGroup)
    assert not h.group().has(m2)
    assert h.group().state is GroupState.PREPARING_REBALANCE
    assert h.heartbeat(m1, 1) is Errors.REBALANCE_IN_PROGRESS
    j = h.join(m1)  # the only member rejoined: the DelayedJoin completes at once
    r = h.answer(j)
    assert (r.error, r.generation_id, r.leader, [m.member_id for m in r.members]) == (Errors.NONE, 2, m1, [m1])
    assert h.heartbeat(m2, 1) is Errors.UNKNOWN_MEMBER_ID
    assert h.heartbeat(m1, 1) is Errors.ILLEGAL_GENERATION


def test_a_member_that_does_not_rejoin_in_the_rebalance_timeout_is_dropped(frozen):
    h = Harness()
    m1, m2 = stable_group_of_two(h, frozen)
    h.advance(frozen, 2000)
    j1 = h.join(m1)  # the leader rejoins: a rebalance; m2 keeps heartbeating but never rejoins
    assert h.answer(j1) is None
    for _ in range(9):
        h.advance(frozen, 3000)
        assert h.heartbeat(m2, 1) is Errors.REBALANCE_IN_PROGRESS
    h.advance(frozen, 3000)  # 30 s rebalance timeout
    r = h.answer(j1)
    assert (r.error, r.generation_id, [m.member_id for m in r.members]) == (Errors.NONE, 2, [m1])
    assert h.heartbeat(m2, 2) is Errors.UNKNOWN_MEMBER_ID


def test_join_errors(frozen):
    h = Harness()
    assert h.answer(h.join()).error is Errors.NOT_COORDINATOR  # no partition led yet
    h.elect()
    assert h.answer(h.join(group="")).error is Errors.INVALID_GROUP_ID
    assert h.answer(h.join(session=5999)).error is Errors.INVALID_SESSION_TIMEOUT
    assert h.answer(h.join(session=1800001)).error is Errors.INVALID_SESSION_TIMEOUT
    assert h.answer(h.join("someone")).error is Errors.UNKNOWN_MEMBER_ID  # a member id for an unknown group
    other = next(g for g in ("a", "b", "c", "d", "e", "f") if partition_for(g, 4) != h.partition)
    assert h.answer(h.join(group=other)).error is Errors.NOT_COORDINATOR
    m1, _ = h.join_new()
    bad = h.answer(h.join(protocols=(JoinGroupProtocol("other", b""),)))
    assert (bad.error, bad.member_id) == (Errors.INCONSISTENT_GROUP_PROTOCOL, "")
    assert h.answer(h.join("stranger")).error is Errors.UNKNOWN_MEMBER_ID
    h.advance(frozen, 3000)
    assert h.group().state is GroupState.COMPLETING_REBALANCE
    assert h.answer(h.sync(m1, 7)).error is Errors.ILLEGAL_GENERATION
    assert h.answer(h.sync("stranger", 1)).error is Errors.UNKNOWN_MEMBER_ID
    assert h.heartbeat(m1, 1) is Errors.NONE  # CompletingRebalance: KAFKA-10134


def test_v3_join_without_member_id_is_admitted_at_once(frozen):
    h = Harness()
    h.elect()
    j = h.join(require_known=False)
    h.advance(frozen, 3000)
    r = h.answer(j)
    assert (r.error, r.generation_id, r.leader == r.member_id) == (Errors.NONE, 1, True)


def test_pending_member_that_never_rejoins_expires(frozen):
    h = Harness()
    h.elect()
    m1, j1 = h.join_new("c1")
    pending = h.answer(h.join(client_id="c2")).member_id
    assert h.group().is_pending_member(pending)
    h.advance(frozen, 3000)  # the initial join completes without the pending member
    assert h.answer(j1).generation_id == 1
    h.advance(frozen, 7000)
    assert not h.group().is_pending_member(pending)


def test_offsets_commit_fetch_and_their_records(frozen):
    h = Harness()
    m1, m2 = stable_group_of_two(h, frozen)
    c = h.answer(h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 42, 3, "meta"),
                                                       OffsetCommitPartition(T1, 7)), 1, m1)))
    assert [(p.tp, p.error) for p in c.partitions] == [(T0, Errors.NONE), (T1, Errors.NONE)]
    now = int(time.time() * 1000)
    assert h.records(h.partition)[1:] == [(offset_commit_key(GROUP, T0), offset_commit_value(
        OffsetAndMetadata(42, 3, "meta", now))), (offset_commit_key(GROUP, T1), offset_commit_value(
            OffsetAndMetadata(7, -1, "", now)))]
    f = h.answer(h.request(OffsetFetchRequest(GROUP, (T0, T1, TopicPartition("u", 0)))))
    assert (f.error, [(p.tp, p.offset, p.leader_epoch, p.metadata, p.error) for p in f.partitions]) == (
        Errors.NONE, [(T0, 42, 3, "meta", Errors.NONE), (T1, 7, -1, "", Errors.NONE),
                      (TopicPartition("u", 0), -1, -1, "", Errors.NONE)])
    everything = h.answer(h.request(OffsetFetchRequest(GROUP, None)))
    assert [(p.tp, p.offset) for p in everything.partitions] == [(T0, 42), (T1, 7)]
    stale = h.answer(h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 1),), 0, m1)))
    assert stale.partitions[0].error is Errors.ILLEGAL_GENERATION
    unknown = h.answer(h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 1),), 1, "x")))
    assert unknown.partitions[0].error is Errors.UNKNOWN_MEMBER_ID
    big = h.answer(h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 1, -1, "x" * 4097),), 1, m1)))
    assert big.partitions[0].error is Errors.OFFSET_METADATA_TOO_LARGE
    h.append_error = Errors.NOT_ENOUGH_REPLICAS
    failed = h.answer(h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 99),), 1, m1)))
    assert failed.partitions[0].error is Errors.COORDINATOR_NOT_AVAILABLE
    assert h.group().offsets[T0].offset == 42  # a failed append commits nothing


def test_standalone_commit_with_retention_writes_value_v1(frozen):
    h = Harness()
    h.elect()
    c = h.answer(h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 5),), retention_time_ms=60000)))
    assert c.partitions[0].error is Errors.NONE
    now = int(time.time() * 1000)
    assert h.records(h.partition) == [(offset_commit_key(GROUP, T0),
                                       offset_commit_value(OffsetAndMetadata(5, -1, "", now, now + 60000)))]
    assert h.group().state is GroupState.EMPTY


def test_load_on_election_restores_groups_and_offsets_and_resignation_drops_them(frozen):
    h = Harness()
    m1, m2 = stable_group_of_two(h, frozen)
    h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 42),), 1, m1))
    h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 43),), 1, m1))  # the later record wins
    h.request(OffsetCommitRequest("solo", (OffsetCommitPartition(T1, 9),))) if partition_for("solo", 4) == \
        h.partition else None
    # a new coordinator (another broker) becomes the partition's leader: reads come back later
    h2 = Harness(h.config, h.log)
    h2.hold_reads = True
    h2.elect()
    assert h2.answer(h2.join(m1)).error is Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert h2.answer(h2.request(OffsetFetchRequest(GROUP, (T0,)))).error is Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert h2.heartbeat(m1, 1) is Errors.NONE  # answered blindly while loading
    assert h2.answer(h2.sync(m1, 1)).error is Errors.REBALANCE_IN_PROGRESS
    assert h2.answer(h2.request(ListGroupsRequest())).error is Errors.COORDINATOR_LOAD_IN_PROGRESS
    h2.release_reads()
    g = h2.group()
    assert (g.state, g.generation_id, g.leader_id, g.protocol_name, list(g.members)) == (
        GroupState.STABLE, 1, m1, "range", [m1, m2])
    assert (g.get(m1).assignment, g.get(m2).assignment) == (b"a1", b"a2")
    f = h2.answer(h2.request(OffsetFetchRequest(GROUP, (T0,))))
    assert [(p.offset, p.error) for p in f.partitions] == [(43, Errors.NONE)]
    assert h2.heartbeat(m1, 1) is Errors.NONE
    # the loaded members' sessions run: m2 stays silent and is removed after 10 s
    h2.advance(frozen, 3000)
    assert h2.heartbeat(m1, 1) is Errors.NONE
    h2.advance(frozen, 7000)
    assert not h2.group().has(m2)
    # resignation: the groups go, and a member waiting in a JoinGroup is told NOT_COORDINATOR
    j = h2.join(require_known=False)  # a new member waits for m1 to rejoin
    assert h2.answer(j) is None
    h2.run(h2.gc.on_resignation(h2.partition))
    assert h2.group() is None
    assert h2.answer(j).error is Errors.NOT_COORDINATOR
    assert h2.heartbeat(m1, 2) is Errors.NOT_COORDINATOR
    assert h2.answer(h2.request(OffsetFetchRequest(GROUP, (T0,)))).error is Errors.NOT_COORDINATOR


def test_load_and_unload_log_kafkas_lines(frozen, caplog):
    """GroupMetadataManager's INFO lines an operator greps for: scheduling and finishing a load (with its time),
    a second election while loading, and an unload with what it removed."""
    h = Harness()
    h.elect()
    c = h.answer(h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 5), OffsetCommitPartition(T1, 6)))))
    assert [p.error for p in c.partitions] == [Errors.NONE, Errors.NONE]
    h2 = Harness(h.config, h.log)
    h2.hold_reads = True
    caplog.set_level(logging.INFO)
    caplog.clear()
    h2.elect()
    h2.elect()
    frozen.tick(0.25)
    h2.release_reads()
    tp = f"__consumer_offsets-{h.partition}"
    h2.run(h2.gc.on_resignation(h2.partition))
    assert [m for m in caplog.messages if "offsets and group metadata" in m or "unloading" in m] == [
        f"Scheduling loading of offsets and group metadata from {tp}",
        f"Already loading offsets and group metadata from {tp}",
        f"Finished loading offsets and group metadata from {tp} in 250 milliseconds, of which 0 milliseconds was "
        f"spent in the scheduler.",
        f"Scheduling unloading of offsets and group metadata from {tp}",
        f"Finished unloading {tp}. Removed 2 cached offsets and 1 cached groups."]


def test_load_starts_at_the_log_start_offset(frozen):
    """GroupMetadataManager.doLoadGroupsAndOffsets reads from log.logStartOffset: once retention (or DeleteRecords)
    moved it above 0, the groups after it load (kactor read from offset 0, got OFFSET_OUT_OF_RANGE and took the
    partition over empty: every group of it lost its offsets)."""
    h = Harness()
    h.elect()
    other = next(g for g in (f"x{i}" for i in range(100)) if partition_for(g, 4) == h.partition)
    h.request(OffsetCommitRequest(other, (OffsetCommitPartition(T0, 1),)))  # offset 0: retention removes it
    m1, m2 = stable_group_of_two_already_elected(h, frozen)
    h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 42),), 1, m1))
    h.log_start[h.partition] = 1
    h2 = Harness(h.config, h.log)
    h2.log_start = h.log_start
    h2.elect()
    g = h2.group()
    assert g is not None and (g.state, g.generation_id, list(g.members)) == (GroupState.STABLE, 1, [m1, m2])
    assert [(p.offset, p.error) for p in h2.answer(h2.request(OffsetFetchRequest(GROUP, (T0,)))).partitions] == [
        (42, Errors.NONE)]
    assert other not in h2.gc.manager.groups
    assert h2.heartbeat(m1, 1) is Errors.NONE


def test_resignation_during_load_abandons_it(frozen):
    h = Harness()
    stable_group_of_two(h, frozen)
    h2 = Harness(h.config, h.log)
    h2.hold_reads = True
    h2.elect()
    h2.run(h2.gc.on_resignation(h2.partition))
    h2.release_reads()
    assert h2.group() is None
    assert h2.answer(h2.join()).error is Errors.NOT_COORDINATOR


def test_leave_group_batch_and_delete_groups_with_tombstones(frozen):
    h = Harness()
    m1, m2 = stable_group_of_two(h, frozen)
    h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 42),), 1, m1))
    assert h.answer(h.request(DeleteGroupsRequest((GROUP,)))).results == ((GROUP, Errors.NON_EMPTY_GROUP),)
    emptied_at = int(time.time() * 1000)  # the last member leaves: the rebalance completes at once, Empty
    left = h.answer(h.request(LeaveGroupRequest(GROUP, (MemberIdentity(m1), MemberIdentity("x"),
                                                        MemberIdentity(m2)))))
    assert (left.error, [(m.member_id, m.error) for m in left.members]) == (
        Errors.NONE, [(m1, Errors.NONE), ("x", Errors.UNKNOWN_MEMBER_ID), (m2, Errors.NONE)])
    assert (h.group().state, h.group().generation_id) == (GroupState.EMPTY, 2)
    assert h.records(h.partition)[-1] == (group_metadata_key(GROUP), group_metadata_value(
        GroupRecord("consumer", 2, None, None, emptied_at, ())))
    assert h.answer(h.request(DeleteGroupsRequest((GROUP,)))).results == ((GROUP, Errors.NONE),)
    assert h.records(h.partition)[-2:] == [(offset_commit_key(GROUP, T0), None), (group_metadata_key(GROUP), None)]
    assert h.answer(h.request(DeleteGroupsRequest((GROUP,)))).results == ((GROUP, Errors.GROUP_ID_NOT_FOUND),)
    h2 = Harness(h.config, h.log)  # tombstones honoured on load
    h2.elect()
    assert h2.group() is None
    assert h2.answer(h2.request(OffsetFetchRequest(GROUP, (T0,)))).partitions[0].offset == -1


def stable_static_group(h: Harness, frozen: Any, instances: tuple[str, ...] = ("i1",),
                        protocols: tuple[JoinGroupProtocol, ...] = PROTOCOLS) -> list[str]:
    """Static members (no KIP-394 round: KafkaApis asks a known member id only of dynamic members) join one
    generation; the first is the leader and assigns ``a-<instance>`` to each."""
    h.elect()
    joins = [h.join(require_known=False, instance=i, client_id=f"c-{i}", protocols=protocols) for i in instances]
    h.advance(frozen, 6000)  # the initial delay, once more for the members that came during it
    answers = [h.answer(j) for j in joins]
    assert [(a.error, a.generation_id) for a in answers] == [(Errors.NONE, 1)] * len(instances)
    ids = [a.member_id for a in answers]
    syncs = [h.sync(m, 1) for m in ids[1:]]
    h.sync(ids[0], 1, {m: f"a-{i}".encode() for m, i in zip(ids, instances, strict=True)})
    assert [h.answer(s).error for s in syncs] == [Errors.NONE] * len(syncs)
    assert h.group().state is GroupState.STABLE
    return ids


def test_delete_groups_answers_none_whatever_the_tombstones_fate(frozen):
    """2.6.3's cleanupGroupMetadata appends the tombstones with requiredAcks 0, one batch per group, and
    handleDeleteGroups answers NONE (kactor appended with acks=-1 and answered COORDINATOR_NOT_AVAILABLE when the
    offsets partition lacked its min.insync.replicas, after the group had already left the cache)."""
    h = Harness()
    h.elect()
    others = [g for g in (f"x{i}" for i in range(200)) if partition_for(g, 4) == h.partition][:2]
    for g in others:
        h.request(OffsetCommitRequest(g, (OffsetCommitPartition(T0, 5), OffsetCommitPartition(T1, 6))))
    written = len(h.appends)
    h.append_error = Errors.NOT_ENOUGH_REPLICAS
    assert h.answer(h.request(DeleteGroupsRequest(tuple(others)))).results == tuple((g, Errors.NONE) for g in others)
    assert [(a.partition, a.acks) for a in h.appends[written:]] == [(h.partition, 0), (h.partition, 0)]
    assert all(g not in h.gc.manager.groups for g in others)
    assert h.answer(h.request(DeleteGroupsRequest(tuple(others)))).results == tuple(
        (g, Errors.GROUP_ID_NOT_FOUND) for g in others)
    h.append_error = Errors.NONE
    first, second = h.appends[written:]
    assert [(r.key, r.value) for b in iter_batches(first.records) for r in read_records(b)] == [
        (offset_commit_key(others[0], T0), None), (offset_commit_key(others[0], T1), None)]


def test_static_member_rejoin_is_written_before_the_answer_and_survives_a_coordinator_move(frozen):
    """KAFKA-10284 (2.6.1): the replacement of the member id is stored with storeGroup, so the coordinator that
    loads the group next knows the new id (2.6.0 wrote nothing: the new id was fenced after the move)."""
    h = Harness()
    (old,) = stable_static_group(h, frozen)
    written = len(h.records(h.partition))
    again = h.answer(h.join(require_known=False, instance="i1", client_id="c-i1"))
    assert (again.error, again.generation_id, again.leader, again.members) == (Errors.NONE, 1, old, ())
    new = again.member_id
    assert new != old and new.startswith("i1-") and h.group().state is GroupState.STABLE
    ((key, value),) = h.records(h.partition)[written:]
    assert key == group_metadata_key(GROUP)
    assert value == group_metadata_value(GroupRecord("consumer", 1, "range", new, h.group().current_state_timestamp, (
        MemberRecord(new, "i1", "c-i1", "/127.0.0.1", 30000, 10000, b"sub-range", b"a-i1"),)))
    assert h.heartbeat(old, 1) is Errors.UNKNOWN_MEMBER_ID
    assert h.answer(h.request(HeartbeatRequest(GROUP, 1, old, "i1"))).error is Errors.FENCED_INSTANCE_ID
    assert h.answer(h.sync(new, 1)).assignment == b"a-i1"
    # the coordinator moves: the partition's new leader loads the group
    h2 = Harness(h.config, h.log)
    h2.elect()
    assert h2.answer(h2.request(HeartbeatRequest(GROUP, 1, new, "i1"))).error is Errors.NONE
    assert h2.answer(h2.request(HeartbeatRequest(GROUP, 1, old, "i1"))).error is Errors.FENCED_INSTANCE_ID
    assert h2.answer(h2.sync(new, 1)).assignment == b"a-i1"


def test_static_member_rejoin_whose_write_fails_is_reverted(frozen):
    h = Harness()
    (old,) = stable_static_group(h, frozen)
    written = len(h.records(h.partition))
    h.append_error = Errors.NOT_ENOUGH_REPLICAS
    failed = h.answer(h.join(require_known=False, instance="i1", client_id="c-i1"))
    assert (failed.error, failed.member_id, failed.generation_id, failed.leader) == (
        Errors.COORDINATOR_NOT_AVAILABLE, "", 1, old)
    g = h.group()
    assert (list(g.members), g.static_members, g.leader_id, g.num_members_awaiting_join, g.state) == (
        [old], {"i1": old}, old, 0, GroupState.STABLE)
    assert len(h.records(h.partition)) == written
    h.append_error = Errors.NONE
    # the old id carries on: its session runs again, its assignment is kept
    assert h.answer(h.request(HeartbeatRequest(GROUP, 1, old, "i1"))).error is Errors.NONE
    assert h.answer(h.sync(old, 1)).assignment == b"a-i1"
    h.advance(frozen, 9000)
    assert h.heartbeat(old, 1) is Errors.NONE and g.has(old)


def test_static_member_rejoin_whose_write_fails_after_a_rebalance_took_its_new_id_is_not_reverted(frozen):
    """kactor sim seed 170 (sim/groups.py): static i2 restarts and rejoins a Stable group; its replacement's write
    waits (its partition's follower cut off), and meanwhile i1 leaves: the rebalance completes at once with i2 alone,
    answering i2's JoinGroup with its new id in generation 2. The write then times out: 2.6.3 (and kactor until
    then) reverted the replacement, renaming the generation-2 member back to the old id, and i2's next JoinGroup with
    the only id it knows was answered FENCED_INSTANCE_ID (fatal to the consumer). A rebalance completed meanwhile: no
    revert."""
    h = Harness()
    old1, old2 = stable_static_group(h, frozen, ("i1", "i2"))
    h.hold_appends = True
    rejoin = h.join(require_known=False, instance="i2", client_id="c-i2")
    assert h.answer(rejoin) is None and len(h.held_appends) == 1
    new2 = h.group().static_members["i2"]
    assert new2 != old2
    left = h.answer(h.request(LeaveGroupRequest(GROUP, (MemberIdentity(old1, "i1"),))))
    assert left.error is Errors.NONE
    joined = h.answer(rejoin)
    assert (joined.error, joined.generation_id, joined.member_id, joined.leader) == (Errors.NONE, 2, new2, new2)
    h.fail_held_appends(Errors.REQUEST_TIMED_OUT)
    g = h.group()
    assert (list(g.members), g.static_members, g.generation_id) == ([new2], {"i2": new2}, 2)
    again = h.answer(h.join(new2, require_known=False, instance="i2", client_id="c-i2"))
    assert again.error is not Errors.FENCED_INSTANCE_ID
    assert h.answer(h.request(HeartbeatRequest(GROUP, 2, new2, "i2"))).error is not Errors.FENCED_INSTANCE_ID


def test_static_member_rejoin_that_changes_the_selected_protocol_rebalances(frozen):
    h = Harness()
    old, other = stable_static_group(h, frozen, ("i1", "i2"), protocols=(JoinGroupProtocol("range", b"r"),
                                                                         JoinGroupProtocol("roundrobin", b"rr")))
    written = len(h.records(h.partition))
    j = h.join(require_known=False, instance="i1", client_id="c-i1",
               protocols=(JoinGroupProtocol("roundrobin", b"rr"),))
    # roundrobin is now the only protocol every member supports: no longer the group's range
    assert h.answer(j) is None and h.group().state is GroupState.PREPARING_REBALANCE
    assert len(h.records(h.partition)) == written
    assert h.heartbeat(other, 1) is Errors.REBALANCE_IN_PROGRESS
    j2 = h.join(other, instance="i2", client_id="c-i2", protocols=(JoinGroupProtocol("range", b"r"),
                                                                   JoinGroupProtocol("roundrobin", b"rr")))
    r, r2 = h.answer(j), h.answer(j2)
    assert (r.error, r.generation_id, r2.generation_id, r.protocol_name) == (Errors.NONE, 2, 2, "roundrobin")
    assert r.member_id != old


def test_static_member_rejoin_while_the_group_awaits_its_assignment_makes_every_member_rejoin(frozen):
    """2.6's updateStaticMemberAndRebalance, CompletingRebalance: the leader may have been handed the old member
    id, so the group rebalances (kactor answered at once and the restarted member was assigned nothing)."""
    h = Harness()
    h.elect()
    j1 = h.join(require_known=False, instance="i1", client_id="c-i1")
    j2 = h.join(require_known=False, instance="i2", client_id="c-i2")
    h.advance(frozen, 6000)
    leader, old2 = h.answer(j1).member_id, h.answer(j2).member_id
    assert h.answer(j1).leader == leader and h.group().state is GroupState.COMPLETING_REBALANCE
    rejoin = h.join(require_known=False, instance="i2", client_id="c-i2")  # i2 restarted
    assert h.answer(rejoin) is None and h.group().state is GroupState.PREPARING_REBALANCE
    stale = h.answer(h.sync(leader, 1, {leader: b"p0", old2: b"p1"}))
    assert stale.error is Errors.REBALANCE_IN_PROGRESS
    again = h.join(leader, instance="i1", client_id="c-i1")
    r1, r2 = h.answer(again), h.answer(rejoin)
    new2 = r2.member_id
    assert (r1.error, r1.generation_id, r1.leader, r2.error, r2.generation_id) == (Errors.NONE, 2, leader,
                                                                                    Errors.NONE, 2)
    assert [m.member_id for m in r1.members] == [leader, new2] and new2 != old2
    s2 = h.sync(new2, 2)
    assert h.answer(h.sync(leader, 2, {leader: b"p0", new2: b"p1"})).assignment == b"p0"
    assert (h.answer(s2).error, h.answer(s2).assignment) == (Errors.NONE, b"p1")
    assert h.group().state is GroupState.STABLE


def test_heartbeat_while_the_group_awaits_its_assignment_is_answered_none_and_keeps_the_member(frozen):
    """KAFKA-10134 (2.6.1): a heartbeat in CompletingRebalance restarts the session timer; 2.6.0 answered
    REBALANCE_IN_PROGRESS and let a leader whose assignor outlasted the session expire."""
    h = Harness()
    h.elect()
    m, j = h.join_new()
    h.advance(frozen, 3000)
    assert h.answer(j).generation_id == 1 and h.group().state is GroupState.COMPLETING_REBALANCE
    for _ in range(5):  # 15 s of heartbeats, session 10 s, no SyncGroup yet
        h.advance(frozen, 3000)
        assert h.heartbeat(m, 1) is Errors.NONE
    assert h.group().has(m) and h.group().state is GroupState.COMPLETING_REBALANCE
    assert h.answer(h.sync(m, 1, {m: b"a"})).assignment == b"a"
    h.advance(frozen, 10000)  # silent for a whole session: expired
    assert not h.group().has(m)


def test_offsets_expire_after_the_retention_and_the_group_with_them(frozen):
    h = Harness(GroupCoordinatorConfig(offsets_topic_num_partitions=4, group_initial_rebalance_delay_ms=0,
                                       offsets_retention_minutes=1, offsets_retention_check_interval_ms=10000))
    h.elect()
    h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 5),)))  # a group that only stores offsets
    h.advance(frozen, 50000)
    assert h.group().offsets[T0].offset == 5
    h.advance(frozen, 10000)  # the check at 60 s: one minute after the commit
    assert h.group() is None
    assert h.records(h.partition)[-1] == (offset_commit_key(GROUP, T0), None)
    assert h.appends[-1].acks == 0  # cleanupGroupMetadata's requiredAcks
    assert h.answer(h.request(OffsetFetchRequest(GROUP, (T0,)))).partitions[0].offset == -1


def test_a_consumer_groups_offsets_expire_only_once_it_is_empty(frozen):
    h = Harness(GroupCoordinatorConfig(offsets_topic_num_partitions=4, group_initial_rebalance_delay_ms=0,
                                       offsets_retention_minutes=1, offsets_retention_check_interval_ms=10000))
    h.elect()
    m, j = h.join_new()
    h.advance(frozen, 0)
    h.sync(m, 1, {m: b"a"})
    h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 5),), 1, m))
    for _ in range(40):  # two minutes of heartbeats: Stable, the offsets stay
        h.advance(frozen, 3000)
        assert h.heartbeat(m, 1) is Errors.NONE
    assert h.group().offsets[T0].offset == 5
    h.request(LeaveGroupRequest(GROUP, (MemberIdentity(m),)))
    assert h.group().state is GroupState.EMPTY
    h.advance(frozen, 50000)
    assert h.group().offsets[T0].offset == 5
    h.advance(frozen, 10000)
    assert h.group() is None
    assert h.records(h.partition)[-2:] == [(offset_commit_key(GROUP, T0), None), (group_metadata_key(GROUP), None)]


def test_startup_takes_an_existing_offsets_topics_partition_count_and_schedules_expiration():
    gc = GroupCoordinator(1, GroupCoordinatorConfig(), lambda: 0.0)
    zk = FakeZooKeeper().create_top_level_paths()
    zk.create("/brokers/topics/__consumer_offsets", znodes.encode_topic_assignment(
        {TopicPartition("__consumer_offsets", p): ReplicaAssignment((1,)) for p in range(3)}))
    effects: list[Any] = []
    assert not gc.is_active
    run_sync(gc.startup(KafkaZkClient()), zk, effects.append)
    assert (gc.is_active, gc.manager.num_partitions, effects) == (True, 3, [Schedule("offsets-expiration", 600000)])


def test_error_response_fails_every_item_of_the_request():
    from messages.group import FindCoordinatorRequest

    def error_response(request, error):
        return coordinator_service_of(request).error(request, error)

    e = Errors.UNKNOWN_SERVER_ERROR
    assert error_response(JoinGroupRequest(GROUP, 1, 1, "m", "consumer", ()), e).member_id == "m"
    commit = OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 1), OffsetCommitPartition(T1, 2)))
    assert [p.error for p in error_response(commit, e).partitions] == [e, e]
    assert [(p.tp, p.error) for p in error_response(OffsetFetchRequest(GROUP, (T0,)), e).partitions] == [(T0, e)]
    assert error_response(DeleteGroupsRequest(("a", "b")), e).results == (("a", e), ("b", e))
    assert [g.error for g in error_response(DescribeGroupsRequest(("a",)), e).groups] == [e]
    assert error_response(FindCoordinatorRequest("g"), e).error is e
    with pytest.raises(TypeError):
        error_response(object(), e)


def subscription(*topics: str) -> bytes:
    """ConsumerProtocol's Subscription v1 (a later version than the v0 prefix the coordinator reads): version,
    topics, user data, owned partitions."""
    out = struct.pack(">hi", 1, len(topics))
    for t in topics:
        out += struct.pack(">h", len(t)) + t.encode()
    return out + struct.pack(">ii", -1, 0)


def _topics(h: Harness, **partitions: int) -> None:
    for topic, n in partitions.items():
        h.zk.create(f"/brokers/topics/{topic}", znodes.encode_topic_assignment(
            {TopicPartition(topic, p): ReplicaAssignment((1,)) for p in range(n)}))


def test_offset_delete_keeps_the_subscribed_topics_of_a_consumer_group_with_members(frozen):
    """GroupCoordinator.handleDeleteOffsets (KIP-496) for a Stable consumer group: the offsets of topics its members
    subscribe to stay (GROUP_SUBSCRIBED_TO_TOPIC), the others go with a tombstone; partitions the cluster does not
    have are UNKNOWN_TOPIC_OR_PARTITION (KafkaApis' metadata cache check)."""
    h = Harness()
    _topics(h, t=2, u=1)
    h.elect()
    protocols = (JoinGroupProtocol("range", subscription("t")),)
    m, j = h.join_new(protocols=protocols)
    h.advance(frozen, 3000)
    h.sync(m, 1, {m: b"a"})
    assert h.group().subscribed_topics == {"t"}
    u0 = TopicPartition("u", 0)
    h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 1), OffsetCommitPartition(u0, 2)), 1, m))
    written = len(h.appends)
    missing = (TopicPartition("t", 9), TopicPartition("nope", 0))
    r = h.answer(h.request(OffsetDeleteRequest(GROUP, (T0, u0, *missing))))
    assert r == OffsetDeleteResponse(Errors.NONE, ((T0, Errors.GROUP_SUBSCRIBED_TO_TOPIC), (u0, Errors.NONE),
                                                   (missing[0], Errors.UNKNOWN_TOPIC_OR_PARTITION),
                                                   (missing[1], Errors.UNKNOWN_TOPIC_OR_PARTITION)))
    assert list(h.group().offsets) == [T0] and h.group().state is GroupState.STABLE
    (append,) = h.appends[written:]
    assert append.acks == 0 and h.records(h.partition)[-1] == (offset_commit_key(GROUP, u0), None)
    assert h.heartbeat(m, 1) is Errors.NONE  # the member is untouched


def test_offset_delete_of_an_empty_groups_last_offsets_removes_the_group(frozen):
    h = Harness()
    _topics(h, t=2)
    m1, m2 = stable_group_of_two(h, frozen)
    h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 1), OffsetCommitPartition(T1, 2)), 1, m1))
    # members whose metadata is not a consumer subscription: every topic counts as subscribed
    assert h.answer(h.request(OffsetDeleteRequest(GROUP, (T0,)))).partitions == (
        (T0, Errors.GROUP_SUBSCRIBED_TO_TOPIC),)
    h.request(LeaveGroupRequest(GROUP, (MemberIdentity(m1), MemberIdentity(m2))))
    assert h.group().state is GroupState.EMPTY
    assert h.answer(h.request(OffsetDeleteRequest(GROUP, (T0,)))) == OffsetDeleteResponse(Errors.NONE,
                                                                                          ((T0, Errors.NONE),))
    assert list(h.group().offsets) == [T1]
    assert h.answer(h.request(OffsetDeleteRequest(GROUP, (T1,)))).partitions == ((T1, Errors.NONE),)
    assert h.group() is None  # Empty without offsets: Dead, gone, its metadata tombstoned
    assert h.records(h.partition)[-2:] == [(offset_commit_key(GROUP, T1), None), (group_metadata_key(GROUP), None)]
    assert h.answer(h.request(OffsetDeleteRequest(GROUP, (T1,)))) == OffsetDeleteResponse(Errors.GROUP_ID_NOT_FOUND)


def test_offset_delete_group_errors(frozen):
    h = Harness()
    _topics(h, t=2)
    assert h.answer(h.request(OffsetDeleteRequest(GROUP, (T0,)))) == OffsetDeleteResponse(Errors.NOT_COORDINATOR)
    h.elect()
    assert h.answer(h.request(OffsetDeleteRequest("", (T0,)))) == OffsetDeleteResponse(Errors.INVALID_GROUP_ID)
    assert h.answer(h.request(OffsetDeleteRequest(GROUP, (T0,)))) == OffsetDeleteResponse(Errors.GROUP_ID_NOT_FOUND)
    # a group with members that is not a consumer group (Kafka Connect's workers)
    j = h.request(JoinGroupRequest(GROUP, 10000, 30000, "", "connect", (JoinGroupProtocol("default", b""),), None,
                                   False, "c", "/127.0.0.1"))
    h.advance(frozen, 3000)
    assert h.answer(j).error is Errors.NONE and h.group().protocol_type == "connect"
    assert h.answer(h.request(OffsetDeleteRequest(GROUP, (T0,)))) == OffsetDeleteResponse(Errors.NON_EMPTY_GROUP)


def test_a_consumer_groups_offsets_of_topics_no_member_subscribes_to_expire(frozen):
    """KIP-496 (2.6's removeExpiredOffsets): in a consumer group with members, the offsets of topics none of them
    subscribes to expire offsets.retention.minutes after their commit; the subscribed topics' stay (kactor kept
    every offset of a group with members)."""
    h = Harness(GroupCoordinatorConfig(offsets_topic_num_partitions=4, group_initial_rebalance_delay_ms=0,
                                       offsets_retention_minutes=1, offsets_retention_check_interval_ms=10000))
    h.elect()
    m, j = h.join_new(protocols=(JoinGroupProtocol("range", subscription("t")),))
    h.advance(frozen, 0)
    h.sync(m, 1, {m: b"a"})
    u0 = TopicPartition("u", 0)
    h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 5), OffsetCommitPartition(u0, 6)), 1, m))
    for _ in range(19):  # heartbeats: Stable, both offsets kept until the check at 60 s
        h.advance(frozen, 3000)
        assert h.heartbeat(m, 1) is Errors.NONE
    assert list(h.group().offsets) == [T0, u0]
    h.advance(frozen, 3000)
    assert h.heartbeat(m, 1) is Errors.NONE
    assert list(h.group().offsets) == [T0] and h.group().state is GroupState.STABLE
    assert h.records(h.partition)[-1] == (offset_commit_key(GROUP, u0), None)
