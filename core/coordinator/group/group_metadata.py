"""GroupMetadata and MemberMetadata (kafka.coordinator.group), the state of one consumer group.

A group moves through Kafka's five states (GroupMetadata.scala's validPreviousStates):

    Empty ──join──► PreparingRebalance ──all joined / rebalance timeout──► CompletingRebalance ──leader's sync──► Stable
      ▲                 ▲    │ (no members left)                              │                                  │
      └─────────────────┼────┘                                                └──── member joins/leaves/fails ───┘
                        └──────────────────────────────────────────────────────── (back to PreparingRebalance)
    any state ──► Dead (the group is unloaded or deleted)

Response handles: a member waiting for its JoinGroup / SyncGroup answer holds the opaque ``reply_to`` handle of
its request (Kafka's awaitingJoinCallback / awaitingSyncCallback); the coordinator answers through it.
"""

from __future__ import annotations

import enum
import logging
import struct
from collections import Counter
from collections.abc import Iterable

from core.coordinator.group.message_formats import GroupRecord, MemberRecord, OffsetAndMetadata
from core.effects import ReplyHandle
from messages.common import TopicPartition
from messages.group import DescribedGroupMember, JoinGroupMember, JoinGroupProtocol, ListedGroup

log = logging.getLogger("kactor.coordinator")

NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000  # GroupCoordinator.NewMemberJoinTimeoutMs
# beyond 2.6.3: the earlier commits of one partition kept in a transaction (copies of a retried TxnOffsetCommit)
MAX_REPLACED_TXN_OFFSET_COMMITS = 5


class GroupState(enum.Enum):
    """Kafka's GroupState objects; the value is the name DescribeGroups / ListGroups report."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


_VALID_PREVIOUS: dict[GroupState, frozenset[GroupState]] = {
    GroupState.EMPTY: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.PREPARING_REBALANCE: frozenset({GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY}),
    GroupState.COMPLETING_REBALANCE: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.STABLE: frozenset({GroupState.COMPLETING_REBALANCE}),
    GroupState.DEAD: frozenset(GroupState),
}


CONSUMER_PROTOCOL_TYPE = "consumer"  # ConsumerProtocol.PROTOCOL_TYPE


def subscription_topics(metadata: bytes) -> set[str]:
    """ConsumerProtocol.deserializeVersion + deserializeSubscriptionV0's topics: an int16 version, then an int32
    count of int16-length UTF-8 strings (what follows, user data and later versions' fields, is not read)."""
    try:
        (count,) = struct.unpack_from(">i", metadata, 2)
        pos, topics = 6, set()
        for _ in range(count):
            (length,) = struct.unpack_from(">h", metadata, pos)
            if length < 0 or pos + 2 + length > len(metadata):
                raise ValueError(f"a topic name of {length} bytes at {pos} overruns the subscription")
            topics.add(metadata[pos + 2:pos + 2 + length].decode("utf-8"))
            pos += 2 + length
    except struct.error as e:
        raise ValueError(f"truncated subscription: {e}") from None
    return topics


class MemberMetadata:
    """kafka.coordinator.group.MemberMetadata."""

    def __init__(self, member_id: str, group_id: str, group_instance_id: str | None, client_id: str,
                 client_host: str, rebalance_timeout_ms: int, session_timeout_ms: int, protocol_type: str,
                 supported_protocols: tuple[JoinGroupProtocol, ...]) -> None:
        self.member_id = member_id
        self.group_id = group_id
        self.group_instance_id = group_instance_id
        self.client_id = client_id
        self.client_host = client_host
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.session_timeout_ms = session_timeout_ms
        self.protocol_type = protocol_type
        self.supported_protocols = supported_protocols
        self.assignment = b""
        self.awaiting_join: ReplyHandle | None = None  # reply handle of a JoinGroup waiting for the rebalance
        self.awaiting_sync: ReplyHandle | None = None  # reply handle of a SyncGroup waiting for the leader's assignment
        self.latest_heartbeat = 0.0
        self.is_leaving = False
        self.is_new = False
        self.heartbeat_timer = ""  # the key of this member's heartbeat expiration timer

    @property
    def is_static_member(self) -> bool:
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        return self.awaiting_join is not None

    @property
    def is_awaiting_sync(self) -> bool:
        return self.awaiting_sync is not None

    def protocols(self) -> set[str]:
        return {p.name for p in self.supported_protocols}

    def metadata(self, protocol: str) -> bytes:
        """MemberMetadata.metadata: this member's metadata for ``protocol``."""
        for p in self.supported_protocols:
            if p.name == protocol:
                return p.metadata
        raise ValueError(f"Member {self.member_id} does not support protocol {protocol}")

    def matches(self, protocols: tuple[JoinGroupProtocol, ...]) -> bool:
        """MemberMetadata.matches: the same protocols, in the same order, with the same metadata."""
        return protocols == self.supported_protocols

    def vote(self, candidates: set[str]) -> str:
        """MemberMetadata.vote: this member's first protocol among ``candidates``."""
        for p in self.supported_protocols:
            if p.name in candidates:
                return p.name
        raise ValueError(f"Member {self.member_id} does not support any of the candidate protocols")

    def should_keep_alive(self, deadline_ms: float) -> bool:
        """MemberMetadata.shouldKeepAlive: a member waiting in a rebalance is kept (a new one for at most
        NewMemberJoinTimeoutMs), one waiting for its assignment too; else its last heartbeat decides."""
        if self.is_awaiting_join:
            return not self.is_new or self.latest_heartbeat + NEW_MEMBER_JOIN_TIMEOUT_MS > deadline_ms
        if self.is_awaiting_sync:
            return True
        return self.latest_heartbeat + self.session_timeout_ms > deadline_ms

    def describe(self, protocol: str | None) -> DescribedGroupMember:
        """MemberMetadata.summary (with the protocol's metadata and the assignment) / summaryNoMetadata."""
        if protocol is None:
            return DescribedGroupMember(self.member_id, self.client_id, self.client_host,
                                        group_instance_id=self.group_instance_id)
        return DescribedGroupMember(self.member_id, self.client_id, self.client_host, self.metadata(protocol),
                                    self.assignment, self.group_instance_id)


class GroupMetadata:
    """kafka.coordinator.group.GroupMetadata: members, generation, protocol, leader, and the group's offsets."""

    def __init__(self, group_id: str, state: GroupState, now_ms: float) -> None:
        self.group_id = group_id
        self.state = state
        self.current_state_timestamp: int | None = int(now_ms)
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.generation_id = 0
        self.leader_id: str | None = None
        self.members: dict[str, MemberMetadata] = {}  # insertion order: Kafka's mutable.HashMap order differs
        self.pending_members: set[str] = set()
        self.static_members: dict[str, str] = {}  # group.instance.id → member id
        self.num_members_awaiting_join = 0
        self.supported_protocols: Counter[str] = Counter()
        self.new_member_added = False
        self.offsets: dict[TopicPartition, OffsetAndMetadata] = {}
        # the offset in __consumer_offsets of the batch each committed offset was appended in (Kafka's
        # CommitRecordMetadataAndOffset.appendedBatchOffset): of two commits of a partition the later append wins
        self.offset_batches: dict[TopicPartition, int] = {}
        # KIP-98: per producer id, the offsets its transaction committed, not yet completed by a marker, each with
        # its batch's offset once the append was acknowledged (None until then)
        self.pending_transactional_offset_commits: dict[
            int, dict[TopicPartition, tuple[int | None, OffsetAndMetadata]]] = {}
        # beyond 2.6.3: the earlier commits of a partition in the producer's transaction that a later TxnOffsetCommit
        # replaced, kept until the transaction ends (see prepare_txn_offset_commit)
        self.replaced_txn_offset_commits: dict[tuple[int, TopicPartition],
                                               list[tuple[int | None, OffsetAndMetadata]]] = {}
        # the topics the members of a consumer group subscribe to (None: unknown, or not a consumer group)
        self.subscribed_topics: set[str] | None = None
        # the pending join: which kind of delayed join waits (InitialDelayedJoin or DelayedJoin), and its timer
        self.join_timer = ""
        self.join_delay_ms = 0
        self.initial_join_remaining_ms = 0

    # -- state ---------------------------------------------------------------------------------------------------
    def is_(self, state: GroupState) -> bool:
        return self.state is state

    def can_rebalance(self) -> bool:
        return self.state in _VALID_PREVIOUS[GroupState.PREPARING_REBALANCE]

    def transition_to(self, target: GroupState, now_ms: float) -> None:
        """GroupMetadata.transitionTo: only from one of Kafka's valid previous states."""
        if self.state not in _VALID_PREVIOUS[target]:
            valid = sorted(s.value for s in _VALID_PREVIOUS[target])
            raise ValueError(f"Group {self.group_id} should be in one of {valid} before moving to {target.value}, "
                             f"not {self.state.value}")
        self.state = target
        self.current_state_timestamp = int(now_ms)

    # -- members -------------------------------------------------------------------------------------------------
    def has(self, member_id: str) -> bool:
        return member_id in self.members

    def get(self, member_id: str) -> MemberMetadata:
        return self.members[member_id]

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def size(self) -> int:
        return len(self.members)

    def add(self, member: MemberMetadata, reply_to: ReplyHandle | None = None) -> None:
        """GroupMetadata.add."""
        if not self.members:
            self.protocol_type = member.protocol_type
        assert self.protocol_type == member.protocol_type
        assert self.supports_protocols(member.protocol_type, member.protocols())
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self.supported_protocols.update(member.protocols())
        member.awaiting_join = reply_to
        if member.is_awaiting_join:
            self.num_members_awaiting_join += 1

    def remove(self, member_id: str) -> None:
        """GroupMetadata.remove."""
        member = self.members.pop(member_id, None)
        if member is not None:
            self.supported_protocols.subtract(member.protocols())
            self.supported_protocols += Counter()  # drop the zero counts
            if member.is_awaiting_join:
                self.num_members_awaiting_join -= 1
        if self.is_leader(member_id):
            self.leader_id = next(iter(self.members), None)

    def update_member(self, member: MemberMetadata, protocols: tuple[JoinGroupProtocol, ...],
                      reply_to: ReplyHandle | None) -> None:
        """GroupMetadata.updateMember: new protocols, and the member now waits in the rebalance (with no reply
        handle: it no longer waits)."""
        self.supported_protocols.subtract(member.protocols())
        self.supported_protocols += Counter()
        member.supported_protocols = protocols
        self.supported_protocols.update(member.protocols())
        if reply_to is not None and not member.is_awaiting_join:
            self.num_members_awaiting_join += 1
        elif reply_to is None and member.is_awaiting_join:
            self.num_members_awaiting_join -= 1
        member.awaiting_join = reply_to

    def take_join_reply(self, member: MemberMetadata) -> ReplyHandle | None:
        """The half of maybeInvokeJoinCallback that is state: the member stops waiting; its handle is returned."""
        handle = member.awaiting_join
        if handle is not None:
            member.awaiting_join = None
            self.num_members_awaiting_join -= 1
        return handle

    def take_sync_reply(self, member: MemberMetadata) -> ReplyHandle | None:
        handle = member.awaiting_sync
        member.awaiting_sync = None
        return handle

    def add_pending_member(self, member_id: str) -> None:
        self.pending_members.add(member_id)

    def remove_pending_member(self, member_id: str) -> None:
        self.pending_members.discard(member_id)

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self.pending_members

    def has_static_member(self, group_instance_id: str | None) -> bool:
        return group_instance_id is not None and group_instance_id in self.static_members

    def get_static_member_id(self, group_instance_id: str) -> str:
        return self.static_members[group_instance_id]

    def add_static_member(self, group_instance_id: str | None, member_id: str) -> None:
        if group_instance_id is not None:
            self.static_members[group_instance_id] = member_id

    def remove_static_member(self, group_instance_id: str | None) -> None:
        if group_instance_id is not None:
            self.static_members.pop(group_instance_id, None)

    def is_static_member_fenced(self, member_id: str, group_instance_id: str | None) -> bool:
        """GroupMetadata.isStaticMemberFenced: a known instance id that maps to another member id."""
        return (self.has_static_member(group_instance_id)
                and self.static_members[group_instance_id] != member_id)  # type: ignore[index]

    def replace_group_instance(self, old_member_id: str, new_member_id: str, group_instance_id: str) -> MemberMetadata:
        """GroupMetadata.replaceGroupInstance: the static member keeps its place under a new member id."""
        member = self.members.pop(old_member_id)
        member.member_id = new_member_id
        self.members[new_member_id] = member
        if self.is_leader(old_member_id):
            self.leader_id = new_member_id
        self.add_static_member(group_instance_id, new_member_id)
        return member

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.num_members_awaiting_join and not self.pending_members

    def not_yet_rejoined_members(self) -> list[MemberMetadata]:
        return [m for m in self.members.values() if not m.is_awaiting_join]

    def all_members(self) -> list[MemberMetadata]:
        return list(self.members.values())

    def rebalance_timeout_ms(self) -> int:
        """GroupMetadata.rebalanceTimeoutMs: the largest of the members'."""
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def maybe_elect_new_joined_leader(self) -> bool:
        """GroupMetadata.maybeElectNewJoinedLeader: keep a leader that rejoined, else any member that did."""
        if self.leader_id is None:
            return False
        if self.members[self.leader_id].is_awaiting_join:
            return True
        for member in self.members.values():
            if member.is_awaiting_join:
                self.leader_id = member.member_id
                return True
        return False

    # -- protocols -----------------------------------------------------------------------------------------------
    def supports_protocols(self, member_protocol_type: str, member_protocols: Iterable[str]) -> bool:
        """GroupMetadata.supportsProtocols."""
        protocols = set(member_protocols)
        if self.is_(GroupState.EMPTY):
            return bool(member_protocol_type) and bool(protocols)
        return (self.protocol_type == member_protocol_type
                and any(self.supported_protocols[p] == len(self.members) for p in protocols))

    def select_protocol(self) -> str:
        """GroupMetadata.selectProtocol: of the protocols every member supports, the one most members vote for
        (a tie goes to the candidate voted first)."""
        if not self.members:
            raise ValueError("Cannot select protocol for empty group")
        candidates = {p for p, n in self.supported_protocols.items() if n == len(self.members)}
        votes = Counter(m.vote(candidates) for m in self.members.values())
        return max(votes, key=lambda p: votes[p])

    def init_next_generation(self, now_ms: float) -> None:
        """GroupMetadata.initNextGeneration."""
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(GroupState.COMPLETING_REBALANCE, now_ms)
        else:
            self.protocol_name = None
            self.subscribed_topics = None
            self.transition_to(GroupState.EMPTY, now_ms)

    def is_consumer_group(self) -> bool:
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE

    def compute_subscribed_topics(self) -> set[str] | None:
        """GroupMetadata.computeSubscribedTopics: for a consumer group, the union of its members' subscriptions
        (each read as the consumer protocol's version-0 prefix, which every version starts with); None otherwise, or
        when a subscription does not parse."""
        if not self.is_consumer_group() or not self.members or self.protocol_name is None:
            return None
        topics: set[str] = set()
        for m in self.members.values():
            try:
                topics |= subscription_topics(m.metadata(self.protocol_name))
            except ValueError as e:
                log.warning("Failed to parse Consumer Protocol %s metadata of group %s: %s", self.protocol_name,
                            self.group_id, e)
                return None
        return topics

    def is_subscribed_to_topic(self, topic: str) -> bool:
        """GroupMetadata.isSubscribedToTopic: unknown subscriptions count as subscribed."""
        return self.subscribed_topics is None or topic in self.subscribed_topics

    def current_member_metadata(self) -> tuple[JoinGroupMember, ...]:
        """GroupMetadata.currentMemberMetadata: what the leader's JoinGroup answer lists."""
        if self.is_(GroupState.DEAD) or self.is_(GroupState.PREPARING_REBALANCE):
            raise ValueError(f"Cannot obtain member metadata for group in state {self.state.value}")
        assert self.protocol_name is not None
        return tuple(JoinGroupMember(m.member_id, m.metadata(self.protocol_name), m.group_instance_id)
                     for m in self.members.values())

    # -- describing ----------------------------------------------------------------------------------------------
    def overview(self) -> ListedGroup:
        return ListedGroup(self.group_id, self.protocol_type or "", self.state.value)

    def summary_members(self) -> tuple[DescribedGroupMember, ...]:
        """GroupMetadata.summary's members: with metadata and assignment only when Stable."""
        protocol = self.protocol_name if self.is_(GroupState.STABLE) else None
        return tuple(m.describe(protocol) for m in self.members.values())

    def remove_expired_offsets(self, now_ms: int, retention_ms: int) -> dict[TopicPartition, OffsetAndMetadata]:
        """GroupMetadata.removeExpiredOffsets (KIP-211, KIP-496): an offset with an expire timestamp expires then;
        otherwise ``retention_ms`` after the group became Empty (a group with a protocol and no members), after the
        commit for the topics no member of a consumer group with known subscriptions subscribes to, or after the
        commit (a group that only stores offsets). Any other group with members keeps its offsets."""
        subscribed: set[str] = set()
        if self.protocol_type is not None and self.is_(GroupState.EMPTY):
            state_ts = self.current_state_timestamp

            def base(om: OffsetAndMetadata) -> int:
                return state_ts if state_ts is not None else om.commit_timestamp
        elif self.is_consumer_group() and self.subscribed_topics is not None:
            subscribed = self.subscribed_topics

            def base(om: OffsetAndMetadata) -> int:
                return om.commit_timestamp
        elif self.protocol_type is None:
            def base(om: OffsetAndMetadata) -> int:
                return om.commit_timestamp
        else:
            return {}
        expired = {tp: om for tp, om in self.offsets.items()
                   if tp.topic not in subscribed and (now_ms >= om.expire_timestamp if om.expire_timestamp is not None
                                                      else now_ms - base(om) >= retention_ms)}
        for tp in expired:
            del self.offsets[tp]
            self.offset_batches.pop(tp, None)
        return expired

    # -- committed offsets ---------------------------------------------------------------------------------------
    def on_offset_commit_append(self, tp: TopicPartition, batch_offset: int, om: OffsetAndMetadata) -> None:
        """GroupMetadata.onOffsetCommitAppend: the offset appended in the batch at ``batch_offset`` is committed,
        unless the partition's committed offset came from a later batch (CommitRecordMetadataAndOffset.olderThan:
        a transaction's offsets, appended earlier, may complete after a plain commit)."""
        if tp not in self.offsets or self.offset_batches.get(tp, -1) < batch_offset:
            self.offsets[tp] = om
            self.offset_batches[tp] = batch_offset

    # -- transactional offset commits ----------------------------------------------------------------------------
    def prepare_txn_offset_commit(self, producer_id: int, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        """GroupMetadata.prepareTxnOffsetCommit: the offsets are pending for the producer until the append, then
        until its transaction's marker.

        Beyond 2.6.3: the partition's earlier commit in the transaction (appended, or its append still undecided) is
        kept aside, not dropped, until the transaction ends. Kafka keeps only the latest and forgets it when any
        copy's append fails, so when two copies of one TxnOffsetCommit meet (the first delayed past the client's
        timeout, the retry) and either one's append fails or is unanswered at the marker, the transaction commits
        its output without its offset (`kactor sim --txn-check` seeds 180 and 417: "offsets not atomic")."""
        pending = self.pending_transactional_offset_commits.setdefault(producer_id, {})
        for tp, om in offsets.items():
            old = pending.get(tp)
            if old is not None:
                earlier = self.replaced_txn_offset_commits.setdefault((producer_id, tp), [])
                earlier.append(old)
                del earlier[:-MAX_REPLACED_TXN_OFFSET_COMMITS]
            pending[tp] = (None, om)

    def on_txn_offset_commit_append(self, producer_id: int, tp: TopicPartition, batch_offset: int,
                                    om: OffsetAndMetadata) -> None:
        """GroupMetadata.onTxnOffsetCommitAppend: the append (its batch at ``batch_offset``) was acknowledged (of the
        latest commit of the partition, or of one it replaced)."""
        pending = self.pending_transactional_offset_commits.get(producer_id)
        if pending is None or tp not in pending:
            return
        if pending[tp][1] == om:
            pending[tp] = (batch_offset, om)
            return
        earlier = self.replaced_txn_offset_commits.get((producer_id, tp), [])
        for i, (_, e) in enumerate(earlier):
            if e == om:
                earlier[i] = (batch_offset, om)
                return

    def fail_pending_txn_offset_commit(self, producer_id: int, tp: TopicPartition, om: OffsetAndMetadata) -> None:
        """GroupMetadata.failPendingTxnOffsetCommit: the append of ``om`` failed; it is forgotten (and the commit it
        replaced pending again). Another commit of the partition, earlier or later, stays."""
        pending = self.pending_transactional_offset_commits.get(producer_id)
        if pending is None or tp not in pending:
            return
        key = (producer_id, tp)
        earlier = self.replaced_txn_offset_commits.pop(key, [])
        if pending[tp][1] != om:
            earlier = [e for e in earlier if e[1] != om]
        elif earlier:
            pending[tp] = earlier.pop()
        else:
            del pending[tp]
        if earlier:
            self.replaced_txn_offset_commits[key] = earlier
        if not pending:
            del self.pending_transactional_offset_commits[producer_id]

    def complete_pending_txn_offset_commit(self, producer_id: int, is_commit: bool) -> None:
        """GroupMetadata.completePendingTxnOffsetCommit: the producer's transaction ended; on COMMIT its appended
        offsets become the group's committed offsets unless a later batch committed the partition (olderThan), on
        ABORT they go. Of a partition's commits in the transaction, the one appended last (the highest batch offset)
        counts; one whose append is still unanswered is skipped (Kafka throws there)."""
        pending = self.pending_transactional_offset_commits.pop(producer_id, None)
        earlier = {tp: self.replaced_txn_offset_commits.pop((producer_id, tp))
                   for tp in (pending or ()) if (producer_id, tp) in self.replaced_txn_offset_commits}
        if is_commit and pending:
            for tp, latest in pending.items():
                appended = [(b, om) for b, om in (*earlier.get(tp, ()), latest) if b is not None]
                if appended:
                    batch_offset, om = max(appended, key=lambda e: e[0])
                    self.on_offset_commit_append(tp, batch_offset, om)

    def has_offsets(self) -> bool:
        """GroupMetadata.hasOffsets: committed offsets, or offsets a transaction has pending (a group created by a
        TxnOffsetCommit has only those until its marker)."""
        return bool(self.offsets) or bool(self.pending_transactional_offset_commits)

    def has_pending_offset_commits_for_topic_partition(self, tp: TopicPartition) -> bool:
        """GroupMetadata.hasPendingOffsetCommitsForTopicPartition (transactional ones only here)."""
        return any(tp in p for p in self.pending_transactional_offset_commits.values())

    def remove_offsets(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, OffsetAndMetadata]:
        """GroupMetadata.removeOffsets: the committed offsets of ``tps`` go; those removed."""
        removed = {tp: self.offsets.pop(tp) for tp in list(tps) if tp in self.offsets}
        for tp in removed:
            self.offset_batches.pop(tp, None)
        return removed

    def remove_all_offsets(self) -> dict[TopicPartition, OffsetAndMetadata]:
        """GroupMetadata.removeAllOffsets."""
        return self.remove_offsets(self.offsets)

    # -- storage -------------------------------------------------------------------------------------------------
    def to_record(self, assignment: dict[str, bytes]) -> GroupRecord:
        """What groupMetadataValue writes for this group with ``assignment``."""
        members = []
        for m in self.members.values():
            if self.protocol_name is None:
                raise ValueError("Attempted to write non-empty group metadata with no defined protocol")
            members.append(MemberRecord(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                        m.rebalance_timeout_ms, m.session_timeout_ms, m.metadata(self.protocol_name),
                                        assignment[m.member_id]))
        return GroupRecord(self.protocol_type or "", self.generation_id, self.protocol_name, self.leader_id,
                           -1 if self.current_state_timestamp is None else self.current_state_timestamp,
                           tuple(members))

    @classmethod
    def from_record(cls, group_id: str, record: GroupRecord, now_ms: float) -> GroupMetadata:
        """GroupMetadata.loadGroup: Empty without members, else Stable."""
        group = cls(group_id, GroupState.STABLE if record.members else GroupState.EMPTY, now_ms)
        group.current_state_timestamp = None if record.current_state_timestamp == -1 else record.current_state_timestamp
        group.generation_id = record.generation
        group.protocol_type = record.protocol_type or None
        group.protocol_name = record.protocol
        group.leader_id = record.leader
        for m in record.members:
            member = MemberMetadata(m.member_id, group_id, m.group_instance_id, m.client_id, m.client_host,
                                    m.rebalance_timeout_ms, m.session_timeout_ms, record.protocol_type,
                                    (JoinGroupProtocol(record.protocol or "", m.subscription),))
            member.assignment = m.assignment
            group.members[m.member_id] = member
            group.supported_protocols.update(member.protocols())
            group.add_static_member(m.group_instance_id, m.member_id)
        group.subscribed_topics = group.compute_subscribed_topics()
        return group
