"""GroupCoordinator (kafka.coordinator.group): Kafka 2.6's classic group membership protocol and offset management.

Every handler is a procedure (core.effects): it answers its request with `Respond(reply_to, response)` — at once,
or later, when a rebalance completes (a JoinGroup waits in the group for the others; a SyncGroup for the leader's
assignment). Kafka's purgatories become named timers (`Schedule` / `Cancel`): each member's heartbeat expiration
(DelayedHeartbeat), a pending member's expiration, and the group's join (InitialDelayedJoin / DelayedJoin); the
actor passes their TimerFired back to `on_timer`. The clock is injected (``now_ms``); member ids are drawn from it
and a counter, so a replay draws the same ones.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import uuid
from collections.abc import Callable

from core.coordinator.group.find_coordinator import find_coordinator, offsets_topic_partition_count
from core.coordinator.group.group_metadata import (
    NEW_MEMBER_JOIN_TIMEOUT_MS,
    GroupMetadata,
    GroupState,
    MemberMetadata,
)
from core.coordinator.group.group_metadata_manager import (
    Fork,
    GroupMetadataManager,
    maybe_convert_offset_commit_error,
)
from core.coordinator.group.message_formats import OffsetAndMetadata
from core.effects import Cancel, Proc, ReplyHandle, Respond, Schedule
from core.zk_client import KafkaZkClient
from messages.common import Errors, TopicPartition
from messages.group import (
    COORDINATOR_TYPE_TRANSACTION,
    NO_GENERATION,
    UNKNOWN_MEMBER_ID,
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    DescribedGroup,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    GroupCoordinatorConfig,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupMemberResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    ListGroupsRequest,
    ListGroupsResponse,
    OffsetCommitPartitionResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    OffsetFetchPartitionData,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)
from messages.replication import GROUP_METADATA_TOPIC_NAME
from messages.transaction import TransactionCoordinatorConfig

log = logging.getLogger("kactor.coordinator")

_HEARTBEAT, _PENDING, _JOIN = "heartbeat", "pending", "join"
OFFSETS_EXPIRATION = "offsets-expiration"


def join_error(member_id: str, error: Errors) -> JoinGroupResponse:
    """GroupCoordinator.joinError."""
    return JoinGroupResponse(error, NO_GENERATION, None, "", "", member_id)


class GroupCoordinator:
    """One broker's group coordinator: the groups of the __consumer_offsets partitions it leads."""

    def __init__(self, broker_id: int, config: GroupCoordinatorConfig, now_ms: Callable[[], float],
                 transaction_config: TransactionCoordinatorConfig | None = None) -> None:
        self.broker_id = broker_id
        self.config = config
        # FindCoordinator's for transactional ids: __transaction_state's settings and partition count as read
        self.transaction_config = transaction_config or TransactionCoordinatorConfig()
        self.transaction_topic_partitions = self.transaction_config.transaction_log_num_partitions
        self.now_ms = now_ms
        self.manager = GroupMetadataManager(broker_id, config.offsets_topic_num_partitions,
                                            config.offset_commit_timeout_ms, config.offset_metadata_max_bytes, now_ms)
        self.is_active = False
        self.zk = KafkaZkClient()  # FindCoordinator's and start-up's reads, and the creation of __consumer_offsets
        self._ids = itertools.count(1)
        # timer key → (kind, group id, member id or "", deadline ms)
        self.timers: dict[str, tuple[str, str, str, float]] = {}

    # == lifecycle ===================================================================================================
    def startup(self, zk: KafkaZkClient) -> Proc[None]:
        """GroupCoordinator.startup: the partition count of an existing __consumer_offsets wins over the config's
        (GroupMetadataManager.getGroupMetadataTopicPartitionCount), and the expiration of old offsets is scheduled
        (offsets.retention.check.interval.ms)."""
        count = yield from offsets_topic_partition_count(zk)
        if count:
            self.manager.num_partitions = count
        self.is_active = True
        self.timers[OFFSETS_EXPIRATION] = (OFFSETS_EXPIRATION, "", "", 0)
        yield Schedule(OFFSETS_EXPIRATION, self.config.offsets_retention_check_interval_ms)

    def _expire_offsets(self) -> Proc[None]:
        """GroupMetadataManager.cleanupGroupMetadata: offsets past offsets.retention.minutes go (tombstones written),
        and an Empty group left without offsets with them; then the next check is scheduled."""
        now = int(self.now_ms())
        retention_ms = self.config.offsets_retention_minutes * 60000
        removed, gone = yield from self.manager.cleanup_group_metadata(
            self.manager.groups.values(), lambda group: group.remove_expired_offsets(now, retention_ms))
        for group in gone:
            yield from self._cancel_group_timers(group)
        if removed:
            log.info("Removed %d expired offsets in %d milliseconds.", removed, int(self.now_ms()) - now)
        self.timers[OFFSETS_EXPIRATION] = (OFFSETS_EXPIRATION, "", "", 0)
        yield Schedule(OFFSETS_EXPIRATION, self.config.offsets_retention_check_interval_ms)

    def on_election(self, partition: int) -> Proc[None]:
        """GroupCoordinator.onElection (handleGroupImmigration): load the partition's groups and offsets."""
        if partition in self.manager.owned_partitions:
            return
        groups = yield from self.manager.load_groups_and_offsets(partition)
        for group in groups or ():
            yield from self._on_group_loaded(group)

    def on_resignation(self, partition: int) -> Proc[None]:
        """GroupCoordinator.onResignation (handleGroupEmigration): the partition's groups go; their waiting
        members are told NOT_COORDINATOR."""
        for group in self.manager.remove_groups_for_partition(partition):
            yield from self._on_group_unloaded(group)

    def _on_group_loaded(self, group: GroupMetadata) -> Proc[None]:
        """GroupCoordinator.onGroupLoaded: every member's heartbeat expiration is scheduled again."""
        log.info("Loading group metadata for %s with generation %d", group.group_id, group.generation_id)
        for member in group.all_members():
            yield from self._complete_and_schedule_next_heartbeat(group, member)

    def _on_group_unloaded(self, group: GroupMetadata) -> Proc[None]:
        """GroupCoordinator.onGroupUnloaded."""
        log.info("Unloading group metadata for %s with generation %d", group.group_id, group.generation_id)
        previous = group.state
        group.transition_to(GroupState.DEAD, self.now_ms())
        if previous is GroupState.PREPARING_REBALANCE:
            for member in group.all_members():
                handle = group.take_join_reply(member)
                if handle is not None:
                    yield Respond(handle, join_error(member.member_id, Errors.NOT_COORDINATOR))
        elif previous in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            for member in group.all_members():
                handle = group.take_sync_reply(member)
                if handle is not None:
                    yield Respond(handle, SyncGroupResponse(Errors.NOT_COORDINATOR))
        yield from self._cancel_group_timers(group)

    # == validation ==================================================================================================
    def _validate(self, group_id: str, allow_empty_id: bool = False) -> Errors | None:
        """GroupCoordinator.validateGroupStatus (isValidGroupId: OffsetCommit, OffsetFetch, DescribeGroups and
        DeleteGroups accept the empty group id)."""
        if not group_id and not allow_empty_id:
            return Errors.INVALID_GROUP_ID
        if not self.is_active:
            return Errors.COORDINATOR_NOT_AVAILABLE
        if self.manager.is_group_loading(group_id):
            return Errors.COORDINATOR_LOAD_IN_PROGRESS
        if not self.manager.is_group_local(group_id):
            return Errors.NOT_COORDINATOR
        return None

    def _generate_member_id(self, group: GroupMetadata, client_id: str, group_instance_id: str | None) -> str:
        """GroupMetadata.generateMemberId: ``<client.id or group.instance.id>-<uuid>``; the UUID is drawn from the
        broker, the group, a counter and the clock, not at random, so that a replay draws the same one."""
        seed = f"{self.broker_id}/{group.group_id}/{next(self._ids)}/{self.now_ms()}".encode()
        return f"{group_instance_id if group_instance_id is not None else client_id}-" \
               f"{uuid.UUID(bytes=hashlib.md5(seed).digest(), version=4)}"

    # == JoinGroup ===================================================================================================
    def handle_join_group(self, req: JoinGroupRequest, reply_to: ReplyHandle) -> Proc[None]:
        """GroupCoordinator.handleJoinGroup."""
        error = self._validate(req.group_id)
        if error is not None:
            yield Respond(reply_to, join_error(req.member_id, error))
            return
        cfg = self.config
        if not cfg.group_min_session_timeout_ms <= req.session_timeout_ms <= cfg.group_max_session_timeout_ms:
            yield Respond(reply_to, join_error(req.member_id, Errors.INVALID_SESSION_TIMEOUT))
            return
        is_unknown = req.member_id == UNKNOWN_MEMBER_ID
        group = self.manager.groups.get(req.group_id)
        if group is None:
            # only a member without an id creates the group; a known id for an unknown group is refused
            if not is_unknown:
                yield Respond(reply_to, join_error(req.member_id, Errors.UNKNOWN_MEMBER_ID))
                return
            group = self.manager.add_group(GroupMetadata(req.group_id, GroupState.EMPTY, self.now_ms()))
            yield from self._do_unknown_join_group(group, req, reply_to)
            return
        over_capacity = group.size() > cfg.group_max_size
        if ((over_capacity and group.has(req.member_id) and not group.get(req.member_id).is_awaiting_join)
                or (is_unknown and group.size() >= cfg.group_max_size)):
            if group.has(req.member_id):
                yield from self._remove_heartbeat(group.get(req.member_id))
            group.remove(req.member_id)
            group.remove_static_member(req.group_instance_id)
            yield Respond(reply_to, join_error(UNKNOWN_MEMBER_ID, Errors.GROUP_MAX_SIZE_REACHED))
        elif is_unknown:
            yield from self._do_unknown_join_group(group, req, reply_to)
        else:
            yield from self._do_join_group(group, req, reply_to)
        if group.is_(GroupState.PREPARING_REBALANCE):
            yield from self._try_complete_join(group)

    def _do_unknown_join_group(self, group: GroupMetadata, req: JoinGroupRequest, reply_to: ReplyHandle) -> Proc[None]:
        """GroupCoordinator.doUnknownJoinGroup."""
        protocols = {p.name for p in req.protocols}
        if group.is_(GroupState.DEAD):
            yield Respond(reply_to, join_error(UNKNOWN_MEMBER_ID, Errors.COORDINATOR_NOT_AVAILABLE))
            return
        if not group.supports_protocols(req.protocol_type, protocols):
            yield Respond(reply_to, join_error(UNKNOWN_MEMBER_ID, Errors.INCONSISTENT_GROUP_PROTOCOL))
            return
        new_member_id = self._generate_member_id(group, req.client_id, req.group_instance_id)
        if group.has_static_member(req.group_instance_id):
            yield from self._update_static_member_and_rebalance(group, new_member_id, req, reply_to)
        elif req.require_known_member_id:
            # KIP-394: a dynamic member without an id gets one and must join again with it
            group.add_pending_member(new_member_id)
            key = self._new_timer(_PENDING, group.group_id, new_member_id, req.session_timeout_ms)
            yield Schedule(key, req.session_timeout_ms)
            yield Respond(reply_to, join_error(new_member_id, Errors.MEMBER_ID_REQUIRED))
        else:
            yield from self._add_member_and_rebalance(group, new_member_id, req, reply_to)

    def _update_static_member_and_rebalance(self, group: GroupMetadata, new_member_id: str, req: JoinGroupRequest,
                                            reply_to: ReplyHandle) -> Proc[None]:
        """GroupCoordinator.updateStaticMemberAndRebalance (2.6.3): a static member rejoining without its member id
        takes its old place under a new id. In a Stable group whose selected protocol stays, the replacement is
        written with storeGroup before the answer (KAFKA-10284: else a coordinator that loads the group later knows
        only the old id and fences the new one), and reverted if the write fails; the answer carries the member's
        current generation and the old leader's id, so no member reassigns. A changed protocol, or a group awaiting
        its assignment (the leader may have been handed the old id), makes every member rejoin. Departure: a failed
        write is not reverted once a rebalance completed while it was under way (see below)."""
        assert req.group_instance_id is not None
        instance = req.group_instance_id
        old_member_id = group.get_static_member_id(instance)
        log.info("Static member %s of group %s with unknown member id rejoins, assigning new member id %s, while "
                 "old member id %s will be removed.", instance, group.group_id, new_member_id, old_member_id)
        current_leader = group.leader_id or ""
        old = group.get(old_member_id)
        yield from self._remove_heartbeat(old, leaving=False)
        member = group.replace_group_instance(old_member_id, new_member_id, instance)
        old_join = member.awaiting_join
        if old_join is not None:  # the old instance's JoinGroup is fenced
            member.awaiting_join = None
            group.num_members_awaiting_join -= 1
            yield Respond(old_join, join_error(old_member_id, Errors.FENCED_INSTANCE_ID))
        old_sync = group.take_sync_reply(member)
        if old_sync is not None:
            yield Respond(old_sync, SyncGroupResponse(Errors.FENCED_INSTANCE_ID))
        old_protocols, old_timeouts = member.supported_protocols, (member.rebalance_timeout_ms,
                                                                   member.session_timeout_ms)
        member.rebalance_timeout_ms = req.rebalance_timeout_ms
        member.session_timeout_ms = req.session_timeout_ms
        yield from self._complete_and_schedule_next_heartbeat(group, member)
        group.update_member(member, req.protocols, reply_to)
        if group.is_(GroupState.STABLE):
            if group.protocol_name != group.select_protocol():
                yield from self._maybe_prepare_rebalance(
                    group, f"Group's selectedProtocol will change because static member {new_member_id} with "
                           f"instance id {instance} joined with change of protocol")
                return
            log.info("Static member which joins during Stable stage and doesn't affect selectProtocol will not "
                     "trigger rebalance.")
            assignment = {m.member_id: m.assignment for m in group.all_members()}
            generation = group.generation_id
            error = yield from self.manager.store_group(group, assignment)
            if error is not Errors.NONE:
                log.warning("Failed to persist metadata for group %s: %s", group.group_id, error.name)
                handle = group.take_join_reply(member)
                # the replacement is undone, unless the group moved on while the write was under way: the new id
                # gone, or a rebalance completed meanwhile, which answered the member's JoinGroup with its new id
                # and made it a member of the new generation under it (2.6.3 reverts whatever happened since, and
                # the member, which knows only its new id, is fenced at its next request: kactor sim seed 170)
                if (group.generation_id == generation and group.has(new_member_id)
                        and group.static_members.get(instance) == new_member_id):
                    group.update_member(member, old_protocols, None)
                    member.rebalance_timeout_ms, member.session_timeout_ms = old_timeouts
                    reverted = group.replace_group_instance(new_member_id, old_member_id, instance)
                    yield from self._complete_and_schedule_next_heartbeat(group, reverted)
                if handle is not None:
                    yield Respond(handle, JoinGroupResponse(error, group.generation_id, group.protocol_type,
                                                            group.protocol_name, current_leader, UNKNOWN_MEMBER_ID))
            else:
                handle = group.take_join_reply(member)
                if handle is not None:
                    yield Respond(handle, JoinGroupResponse(Errors.NONE, group.generation_id, group.protocol_type,
                                                            group.protocol_name, current_leader, new_member_id))
        elif group.is_(GroupState.COMPLETING_REBALANCE):
            yield from self._prepare_rebalance(
                group, f"Updating metadata for static member {new_member_id} with instance id {instance}")
        elif group.state in (GroupState.EMPTY, GroupState.DEAD):  # cannot be: a static member's group has members
            raise ValueError(f"Group {group.group_id} was not supposed to be in the state {group.state.value} when "
                             f"the unknown static member {instance} rejoins.")

    def _do_join_group(self, group: GroupMetadata, req: JoinGroupRequest, reply_to: ReplyHandle) -> Proc[None]:
        """GroupCoordinator.doJoinGroup: a member that has an id."""
        member_id = req.member_id
        if group.is_(GroupState.DEAD):
            yield Respond(reply_to, join_error(member_id, Errors.COORDINATOR_NOT_AVAILABLE))
        elif not group.supports_protocols(req.protocol_type, {p.name for p in req.protocols}):
            yield Respond(reply_to, join_error(member_id, Errors.INCONSISTENT_GROUP_PROTOCOL))
        elif group.is_pending_member(member_id):
            if req.group_instance_id is not None:
                raise ValueError(f"the static member {req.group_instance_id} was not expected to be assigned into "
                                 f"pending member bucket with member id {member_id}")
            yield from self._add_member_and_rebalance(group, member_id, req, reply_to)
        elif group.is_static_member_fenced(member_id, req.group_instance_id):
            yield Respond(reply_to, join_error(member_id, Errors.FENCED_INSTANCE_ID))
        elif not group.has(member_id) or (req.group_instance_id is not None
                                          and not group.has_static_member(req.group_instance_id)):
            yield Respond(reply_to, join_error(member_id, Errors.UNKNOWN_MEMBER_ID))
        else:
            member = group.get(member_id)
            if group.is_(GroupState.PREPARING_REBALANCE):
                yield from self._update_member_and_rebalance(group, member, req, reply_to)
            elif group.is_(GroupState.COMPLETING_REBALANCE):
                if member.matches(req.protocols):
                    # the member lost the JoinGroup answer: the current generation again
                    yield Respond(reply_to, self._join_result(group, member))
                else:
                    yield from self._update_member_and_rebalance(group, member, req, reply_to)
            elif group.is_(GroupState.STABLE):
                if group.is_leader(member_id) or not member.matches(req.protocols):
                    # the leader's JoinGroup, or changed metadata, forces a rebalance
                    yield from self._update_member_and_rebalance(group, member, req, reply_to)
                else:
                    yield Respond(reply_to, JoinGroupResponse(Errors.NONE, group.generation_id, group.protocol_type,
                                                              group.protocol_name, group.leader_id or "", member_id))
            else:  # Empty: the member's group went away under it
                yield Respond(reply_to, join_error(member_id, Errors.UNKNOWN_MEMBER_ID))

    def _join_result(self, group: GroupMetadata, member: MemberMetadata) -> JoinGroupResponse:
        return JoinGroupResponse(Errors.NONE, group.generation_id, group.protocol_type, group.protocol_name,
                                 group.leader_id or "", member.member_id,
                                 group.current_member_metadata() if group.is_leader(member.member_id) else ())

    def _add_member_and_rebalance(self, group: GroupMetadata, member_id: str, req: JoinGroupRequest,
                                  reply_to: ReplyHandle) -> Proc[None]:
        """GroupCoordinator.addMemberAndRebalance."""
        member = MemberMetadata(member_id, group.group_id, req.group_instance_id, req.client_id, req.client_host,
                                req.rebalance_timeout_ms, req.session_timeout_ms, req.protocol_type, req.protocols)
        member.is_new = True
        if group.is_(GroupState.PREPARING_REBALANCE) and group.generation_id == 0:
            group.new_member_added = True  # the initial join may wait once more
        group.add(member, reply_to)
        # a new member cannot heartbeat until it has its id; its JoinGroup expires after NewMemberJoinTimeoutMs
        yield from self._complete_and_schedule_next_heartbeat(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS)
        if member.is_static_member:
            group.add_static_member(req.group_instance_id, member_id)
        else:
            group.remove_pending_member(member_id)
        yield from self._maybe_prepare_rebalance(group, f"Adding new member {member_id}")

    def _update_member_and_rebalance(self, group: GroupMetadata, member: MemberMetadata, req: JoinGroupRequest,
                                     reply_to: ReplyHandle) -> Proc[None]:
        old = member.awaiting_join
        if old is not None and old != reply_to:
            # a second JoinGroup of the same member replaces the first (its client gave up on it)
            yield Respond(old, join_error(member.member_id, Errors.UNKNOWN_MEMBER_ID))
            member.awaiting_join = None
            group.num_members_awaiting_join -= 1
        group.update_member(member, req.protocols, reply_to)
        yield from self._maybe_prepare_rebalance(group, f"Updating metadata for member {member.member_id}")

    # == rebalancing =================================================================================================
    def _maybe_prepare_rebalance(self, group: GroupMetadata, reason: str) -> Proc[None]:
        if group.can_rebalance():
            yield from self._prepare_rebalance(group, reason)

    def _prepare_rebalance(self, group: GroupMetadata, reason: str) -> Proc[None]:
        """GroupCoordinator.prepareRebalance: members awaiting their assignment are told to rejoin; an Empty group
        waits group.initial.rebalance.delay.ms (InitialDelayedJoin), else up to the rebalance timeout (DelayedJoin)."""
        if group.is_(GroupState.COMPLETING_REBALANCE):
            yield from self._reset_and_propagate_assignment_error(group, Errors.REBALANCE_IN_PROGRESS)
        initial = group.is_(GroupState.EMPTY)
        group.transition_to(GroupState.PREPARING_REBALANCE, self.now_ms())
        log.info("Preparing to rebalance group %s in state %s with old generation %d (%s-%d) (reason: %s)",
                 group.group_id, group.state.value, group.generation_id, GROUP_METADATA_TOPIC_NAME,
                 self.manager.partition_for(group.group_id), reason)
        if initial:
            delay = self.config.group_initial_rebalance_delay_ms
            yield from self._schedule_join(group, delay, max(group.rebalance_timeout_ms() - delay, 0), initial=True)
        else:
            yield from self._schedule_join(group, group.rebalance_timeout_ms(), 0, initial=False)
            yield from self._try_complete_join(group)

    def _schedule_join(self, group: GroupMetadata, delay_ms: int, remaining_ms: int, initial: bool) -> Proc[None]:
        if group.join_timer:
            self.timers.pop(group.join_timer, None)
            yield Cancel(group.join_timer)
        key = self._new_timer(_JOIN, group.group_id, "initial" if initial else "", delay_ms)
        group.join_timer = key
        group.join_delay_ms = delay_ms
        group.initial_join_remaining_ms = remaining_ms
        yield Schedule(key, delay_ms)

    def _try_complete_join(self, group: GroupMetadata) -> Proc[None]:
        """DelayedJoin.tryComplete: complete once every member has rejoined (an InitialDelayedJoin never does:
        it always waits its delay)."""
        entry = self.timers.get(group.join_timer)
        if entry is not None and entry[2] != "initial" and group.has_all_members_joined():
            yield from self._complete_join(group)

    def _on_join_timer(self, group: GroupMetadata, key: str, initial: bool) -> Proc[None]:
        """The join's timer: InitialDelayedJoin.onComplete waits once more while new members keep coming (up to
        the rebalance timeout); otherwise the join completes (DelayedJoin.onExpiration)."""
        if group.join_timer != key:
            return
        remaining = group.initial_join_remaining_ms
        if initial and group.new_member_added and remaining != 0:
            group.new_member_added = False
            delay = min(self.config.group_initial_rebalance_delay_ms, remaining)
            yield from self._schedule_join(group, delay, max(remaining - group.join_delay_ms, 0), initial=True)
            return
        yield from self._complete_join(group)

    def _complete_join(self, group: GroupMetadata) -> Proc[None]:
        """GroupCoordinator.onCompleteJoin."""
        if group.join_timer:
            if self.timers.pop(group.join_timer, None) is not None:
                yield Cancel(group.join_timer)
            group.join_timer = ""
        for failed in group.not_yet_rejoined_members():
            if not failed.is_static_member:
                yield from self._remove_heartbeat(failed)
                group.remove(failed.member_id)
                group.remove_static_member(failed.group_instance_id)
        if group.is_(GroupState.DEAD):
            log.info("Group %s is dead, skipping rebalance stage", group.group_id)
        elif not group.maybe_elect_new_joined_leader() and group.members:
            log.error("Group %s could not complete rebalance because no members rejoined", group.group_id)
            yield from self._schedule_join(group, group.rebalance_timeout_ms(), 0, initial=False)
        else:
            group.init_next_generation(self.now_ms())
            if group.is_(GroupState.EMPTY):
                log.info("Group %s with generation %d is now empty", group.group_id, group.generation_id)
                yield Fork(self._store_empty_group(group))
            else:
                log.info("Stabilized group %s generation %d", group.group_id, group.generation_id)
                for member in group.all_members():
                    result = self._join_result(group, member)
                    handle = group.take_join_reply(member)
                    if handle is not None:
                        yield Respond(handle, result)
                    yield from self._complete_and_schedule_next_heartbeat(group, member)
                    member.is_new = False

    def _store_empty_group(self, group: GroupMetadata) -> Proc[None]:
        error = yield from self.manager.store_group(group, {})
        if error is not Errors.NONE:
            log.warning("Failed to write empty metadata for group %s: %s", group.group_id, error.name)

    def _remove_member_and_update_group(self, group: GroupMetadata, member: MemberMetadata) -> Proc[None]:
        """GroupCoordinator.removeMemberAndUpdateGroup."""
        handle = group.take_join_reply(member)
        if handle is not None:
            yield Respond(handle, join_error(UNKNOWN_MEMBER_ID, Errors.UNKNOWN_MEMBER_ID))
        handle = group.take_sync_reply(member)
        if handle is not None:  # kactor answers it (Kafka 2.6 leaves it to the client's request timeout)
            yield Respond(handle, SyncGroupResponse(Errors.UNKNOWN_MEMBER_ID))
        yield from self._remove_heartbeat(member)
        group.remove(member.member_id)
        group.remove_static_member(member.group_instance_id)
        if group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            yield from self._maybe_prepare_rebalance(group, f"removing member {member.member_id}")
        elif group.is_(GroupState.PREPARING_REBALANCE):
            yield from self._try_complete_join(group)

    def _reset_and_propagate_assignment_error(self, group: GroupMetadata, error: Errors) -> Proc[None]:
        for member in group.all_members():
            member.assignment = b""
        yield from self._propagate_assignment(group, error)

    def _propagate_assignment(self, group: GroupMetadata, error: Errors) -> Proc[None]:
        """GroupCoordinator.propagateAssignment: every member waiting in SyncGroup gets its assignment (or the
        error), and its session timeout starts again."""
        for member in group.all_members():
            handle = group.take_sync_reply(member)
            if handle is not None:
                yield Respond(handle, SyncGroupResponse(error, member.assignment, group.protocol_type,
                                                        group.protocol_name))
                yield from self._complete_and_schedule_next_heartbeat(group, member)

    # == heartbeats and timers =======================================================================================
    def _new_timer(self, kind: str, group_id: str, member_id: str, delay_ms: float) -> str:
        key = f"{kind}-{next(self._ids)}"
        self.timers[key] = (kind, group_id, member_id, self.now_ms() + delay_ms)
        return key

    def _complete_and_schedule_next_heartbeat(self, group: GroupMetadata, member: MemberMetadata,
                                              timeout_ms: int | None = None) -> Proc[None]:
        """completeAndScheduleNextHeartbeatExpiration: the member's heartbeat timer restarts (its key stays)."""
        timeout = member.session_timeout_ms if timeout_ms is None else timeout_ms
        member.latest_heartbeat = self.now_ms()
        if not member.heartbeat_timer:
            member.heartbeat_timer = f"{_HEARTBEAT}-{next(self._ids)}"
        self.timers[member.heartbeat_timer] = (_HEARTBEAT, group.group_id, member.member_id,
                                               member.latest_heartbeat + timeout)
        yield Schedule(member.heartbeat_timer, timeout)

    def _remove_heartbeat(self, member: MemberMetadata, leaving: bool = True) -> Proc[None]:
        """removeHeartbeatForLeavingMember."""
        member.is_leaving = leaving
        if member.heartbeat_timer:
            self.timers.pop(member.heartbeat_timer, None)
            yield Cancel(member.heartbeat_timer)
            member.heartbeat_timer = ""

    def _cancel_group_timers(self, group: GroupMetadata) -> Proc[None]:
        for key in [k for k, v in self.timers.items() if v[1] == group.group_id]:
            del self.timers[key]
            yield Cancel(key)

    def on_timer(self, key: str) -> Proc[None]:
        """A timer of the coordinator fired: DelayedHeartbeat / DelayedJoin / InitialDelayedJoin expiry."""
        entry = self.timers.pop(key, None)
        if entry is None:
            return
        kind, group_id, member_id, deadline = entry
        if kind == OFFSETS_EXPIRATION:
            yield from self._expire_offsets()
            return
        group = self.manager.groups.get(group_id)
        if group is None:
            return
        if kind == _JOIN:
            yield from self._on_join_timer(group, key, member_id == "initial")
        elif kind == _PENDING:
            if not group.has(member_id) and group.is_pending_member(member_id):
                log.info("Pending member %s in group %s has been removed after session timeout expiration.",
                         member_id, group_id)
                group.remove_pending_member(member_id)
                if group.is_(GroupState.PREPARING_REBALANCE):
                    yield from self._try_complete_join(group)
        elif kind == _HEARTBEAT:
            if not group.has(member_id):
                return
            member = group.get(member_id)
            if member.heartbeat_timer == key:
                member.heartbeat_timer = ""
            if not member.should_keep_alive(deadline):
                log.info("Member %s in group %s has failed, removing it from the group", member_id, group_id)
                yield from self._remove_member_and_update_group(group, member)

    # == SyncGroup ===================================================================================================
    def handle_sync_group(self, req: SyncGroupRequest, reply_to: ReplyHandle) -> Proc[None]:
        """GroupCoordinator.handleSyncGroup."""
        error = self._validate(req.group_id)
        if error is Errors.COORDINATOR_LOAD_IN_PROGRESS:
            # the rebalance's state is lost with the load: rejoin (older clients do not expect LOAD_IN_PROGRESS)
            error = Errors.REBALANCE_IN_PROGRESS
        group = self.manager.groups.get(req.group_id) if error is None else None
        if error is None and group is None:
            error = Errors.UNKNOWN_MEMBER_ID
        if error is not None or group is None:
            yield Respond(reply_to, SyncGroupResponse(error or Errors.UNKNOWN_MEMBER_ID))
            return
        error = self._sync_error(group, req)
        if error is not None:
            yield Respond(reply_to, SyncGroupResponse(error))
        elif group.is_(GroupState.COMPLETING_REBALANCE):
            member = group.get(req.member_id)
            member.awaiting_sync = reply_to
            if group.is_leader(req.member_id):
                log.info("Assignment received from leader for group %s for generation %d", group.group_id,
                         group.generation_id)
                given = {a.member_id: a.assignment for a in req.assignments}
                assignment = {m.member_id: given.get(m.member_id, b"") for m in group.all_members()}
                generation = group.generation_id
                error = yield from self.manager.store_group(group, assignment)
                # the group may have moved on while its metadata was written
                if group.is_(GroupState.COMPLETING_REBALANCE) and generation == group.generation_id:
                    if error is not Errors.NONE:
                        yield from self._reset_and_propagate_assignment_error(group, error)
                        yield from self._maybe_prepare_rebalance(
                            group, f"error when storing group assignment during SyncGroup (member: {req.member_id})")
                    else:
                        for m in group.all_members():
                            m.assignment = assignment[m.member_id]
                        yield from self._propagate_assignment(group, Errors.NONE)
                        group.transition_to(GroupState.STABLE, self.now_ms())
        else:  # Stable: the member's current assignment
            member = group.get(req.member_id)
            yield Respond(reply_to, SyncGroupResponse(Errors.NONE, member.assignment, group.protocol_type,
                                                      group.protocol_name))
            yield from self._complete_and_schedule_next_heartbeat(group, member)

    @staticmethod
    def _sync_error(group: GroupMetadata, req: SyncGroupRequest) -> Errors | None:
        if group.is_(GroupState.DEAD):
            return Errors.COORDINATOR_NOT_AVAILABLE
        if group.is_static_member_fenced(req.member_id, req.group_instance_id):
            return Errors.FENCED_INSTANCE_ID
        if not group.has(req.member_id):
            return Errors.UNKNOWN_MEMBER_ID
        if req.generation_id != group.generation_id:
            return Errors.ILLEGAL_GENERATION
        # KIP-559 (SyncGroup v5): the protocol type and name, when given, must be the group's
        if ((req.protocol_type is not None and req.protocol_type != group.protocol_type)
                or (req.protocol_name is not None and req.protocol_name != group.protocol_name)):
            return Errors.INCONSISTENT_GROUP_PROTOCOL
        if group.is_(GroupState.EMPTY):
            return Errors.UNKNOWN_MEMBER_ID
        if group.is_(GroupState.PREPARING_REBALANCE):
            return Errors.REBALANCE_IN_PROGRESS
        return None

    # == Heartbeat ===================================================================================================
    def handle_heartbeat(self, req: HeartbeatRequest, reply_to: ReplyHandle) -> Proc[None]:
        """GroupCoordinator.handleHeartbeat (2.6.3): NONE in Stable and CompletingRebalance, REBALANCE_IN_PROGRESS
        while the group prepares a rebalance; each restarts the member's session timer."""
        error = self._validate(req.group_id)
        if error is not None:
            # while the group loads, heartbeats are answered blindly
            yield Respond(reply_to, HeartbeatResponse(
                Errors.NONE if error is Errors.COORDINATOR_LOAD_IN_PROGRESS else error))
            return
        group = self.manager.groups.get(req.group_id)
        if group is None:
            error = Errors.UNKNOWN_MEMBER_ID
        elif group.is_(GroupState.DEAD):
            error = Errors.COORDINATOR_NOT_AVAILABLE
        elif group.is_static_member_fenced(req.member_id, req.group_instance_id):
            error = Errors.FENCED_INSTANCE_ID
        elif not group.has(req.member_id):
            error = Errors.UNKNOWN_MEMBER_ID
        elif req.generation_id != group.generation_id:
            error = Errors.ILLEGAL_GENERATION
        elif group.is_(GroupState.EMPTY):
            error = Errors.UNKNOWN_MEMBER_ID
        else:
            # CompletingRebalance too (KAFKA-10134, 2.6.1): a consumer heartbeats once it has its JoinGroup answer,
            # and a leader whose assignor outlasts the session must not be expired for it
            yield from self._complete_and_schedule_next_heartbeat(group, group.get(req.member_id))
            error = Errors.REBALANCE_IN_PROGRESS if group.is_(GroupState.PREPARING_REBALANCE) else Errors.NONE
        yield Respond(reply_to, HeartbeatResponse(error))

    # == LeaveGroup ==================================================================================================
    def handle_leave_group(self, req: LeaveGroupRequest, reply_to: ReplyHandle) -> Proc[None]:
        """GroupCoordinator.handleLeaveGroup (v3+: a batch of members, each answered)."""
        error = self._validate(req.group_id)
        if error is not None:
            yield Respond(reply_to, LeaveGroupResponse(error))
            return
        group = self.manager.groups.get(req.group_id)
        if group is None:
            yield Respond(reply_to, LeaveGroupResponse(Errors.NONE, tuple(
                LeaveGroupMemberResponse(m.member_id, m.group_instance_id, Errors.UNKNOWN_MEMBER_ID)
                for m in req.members)))
            return
        if group.is_(GroupState.DEAD):
            yield Respond(reply_to, LeaveGroupResponse(Errors.COORDINATOR_NOT_AVAILABLE))
            return
        answers = []
        for leaving in req.members:
            member_id, instance = leaving.member_id, leaving.group_instance_id
            if member_id != UNKNOWN_MEMBER_ID and group.is_static_member_fenced(member_id, instance):
                error = Errors.FENCED_INSTANCE_ID
            elif group.is_pending_member(member_id):
                log.info("Pending member %s is leaving group %s.", member_id, group.group_id)
                group.remove_pending_member(member_id)
                if group.is_(GroupState.PREPARING_REBALANCE):
                    yield from self._try_complete_join(group)
                error = Errors.NONE
            elif not group.has(member_id) and not group.has_static_member(instance):
                error = Errors.UNKNOWN_MEMBER_ID
            else:
                member = group.get(group.get_static_member_id(instance) if group.has_static_member(instance)
                                   else member_id)  # type: ignore[arg-type]
                log.info("Member %s in group %s has left, removing it from the group", member.member_id,
                         group.group_id)
                yield from self._remove_member_and_update_group(group, member)
                error = Errors.NONE
            answers.append(LeaveGroupMemberResponse(member_id, instance, error))
        yield Respond(reply_to, LeaveGroupResponse(Errors.NONE, tuple(answers)))

    # == offsets =====================================================================================================
    def handle_commit_offsets(self, req: OffsetCommitRequest, reply_to: ReplyHandle) -> Proc[None]:
        """GroupCoordinator.handleCommitOffsets + doCommitOffsets (KafkaApis fills the timestamps: the commit time
        is now unless the request gives one, the expire time now + retention when the request gives one)."""
        tps = tuple(p.tp for p in req.partitions)

        def answer(errors: dict[TopicPartition, Errors] | Errors) -> Respond:
            per = errors if isinstance(errors, dict) else dict.fromkeys(tps, errors)
            return Respond(reply_to, OffsetCommitResponse(tuple(OffsetCommitPartitionResponse(tp, per[tp])
                                                                for tp in tps)))

        error = self._validate(req.group_id, allow_empty_id=True)
        if error is not None:
            yield answer(error)
            return
        now = int(self.now_ms())
        offsets = {p.tp: OffsetAndMetadata(
            p.committed_offset, p.committed_leader_epoch, p.committed_metadata or "",
            now if p.commit_timestamp == -1 else p.commit_timestamp,
            None if req.retention_time_ms == -1 else now + req.retention_time_ms) for p in req.partitions}
        group = self.manager.groups.get(req.group_id)
        if group is None:
            if req.generation_id >= 0:
                yield answer(Errors.ILLEGAL_GENERATION)  # a commit of an older generation, or of a lost group
                return
            # the group does not use Kafka's group management: the commit is allowed
            group = self.manager.add_group(GroupMetadata(req.group_id, GroupState.EMPTY, self.now_ms()))
        if group.is_(GroupState.DEAD):
            yield answer(Errors.COORDINATOR_NOT_AVAILABLE)
        elif group.is_static_member_fenced(req.member_id, req.group_instance_id):
            yield answer(Errors.FENCED_INSTANCE_ID)
        elif req.generation_id < 0 and group.is_(GroupState.EMPTY):
            yield answer((yield from self.manager.store_offsets(group, offsets)))
        elif not group.has(req.member_id):
            yield answer(Errors.UNKNOWN_MEMBER_ID)
        elif req.generation_id != group.generation_id:
            yield answer(Errors.ILLEGAL_GENERATION)
        elif group.is_(GroupState.COMPLETING_REBALANCE):
            yield answer(Errors.REBALANCE_IN_PROGRESS)
        else:  # Stable or PreparingRebalance: commits go on while the others rejoin
            yield from self._complete_and_schedule_next_heartbeat(group, group.get(req.member_id))
            yield answer((yield from self.manager.store_offsets(group, offsets)))

    def handle_txn_commit_offsets(self, req: TxnOffsetCommitRequest, reply_to: ReplyHandle) -> Proc[None]:
        """GroupCoordinator.handleTxnCommitOffsets + doTxnCommitOffsets: the offsets are written in the producer's
        transaction (a transactional batch) and stay pending in the group until its marker
        (`GroupMetadataManager.handle_txn_completion`). A group that does not exist is created Empty.

        Kafka 3.7 (KAFKA-15449, with ``transaction.partition.verification.enable``): first the transaction coordinator
        is asked whether the group's ``__consumer_offsets`` partition is in the producer's ongoing transaction
        (`GroupMetadataManager.verify_transaction`); a commit that fails it — one delayed past its transaction's
        end: INVALID_TXN_STATE — is answered the verification's error (maybeConvertOffsetCommitError) before the
        group is looked at, and nothing of it is prepared or appended (2.6.3 appended it, pending for a marker no
        coordinator would write: OffsetFetch(require_stable) answered UNSTABLE_OFFSET_COMMIT for ever)."""
        tps = tuple(p.tp for p in req.partitions)

        def answer(errors: dict[TopicPartition, Errors] | Errors) -> Respond:
            per = errors if isinstance(errors, dict) else dict.fromkeys(tps, errors)
            return Respond(reply_to, TxnOffsetCommitResponse(tuple(OffsetCommitPartitionResponse(tp, per[tp])
                                                                   for tp in tps)))

        error = self._validate(req.group_id)
        if error is not None:
            yield answer(error)
            return
        now = int(self.now_ms())
        offsets = {p.tp: OffsetAndMetadata(p.committed_offset, p.committed_leader_epoch, p.committed_metadata or "",
                                           now) for p in req.partitions}
        group = self.manager.groups.get(req.group_id)
        if group is None:
            group = self.manager.add_group(GroupMetadata(req.group_id, GroupState.EMPTY, self.now_ms()))
        verification, token = yield from self.manager.verify_transaction(req.group_id, req.transactional_id,
                                                                         req.producer_id, req.producer_epoch)
        if verification is not Errors.NONE:  # postVerificationCallback
            yield answer(maybe_convert_offset_commit_error(verification))
        elif group.is_(GroupState.DEAD):
            yield answer(Errors.COORDINATOR_NOT_AVAILABLE)
        elif group.is_static_member_fenced(req.member_id, req.group_instance_id):
            yield answer(Errors.FENCED_INSTANCE_ID)
        elif req.member_id != UNKNOWN_MEMBER_ID and not group.has(req.member_id):
            yield answer(Errors.UNKNOWN_MEMBER_ID)
        elif req.generation_id >= 0 and req.generation_id != group.generation_id:
            yield answer(Errors.ILLEGAL_GENERATION)
        else:
            yield answer((yield from self.manager.store_offsets(group, offsets, req.producer_id, req.producer_epoch,
                                                                req.transactional_id, token)))

    def handle_txn_completion(self, producer_id: int, completed_partitions: set[int], is_commit: bool) -> Proc[None]:
        """GroupCoordinator.scheduleHandleTxnCompletion: a transaction's COMMIT / ABORT marker was written to these
        __consumer_offsets partitions (the entry point for the leader's marker effect)."""
        done = self.manager.handle_txn_completion(producer_id, completed_partitions, is_commit)
        log.debug("Completed transactional offsets of producer %d in groups %s (%s)", producer_id, done,
                  "commit" if is_commit else "abort")
        return
        yield

    def handle_fetch_offsets(self, req: OffsetFetchRequest, reply_to: ReplyHandle) -> Proc[None]:
        """GroupCoordinator.handleFetchOffsets + GroupMetadataManager.getOffsets: the committed offset of each
        partition asked (-1 with empty metadata when there is none), or every committed one (partitions None). With
        ``require_stable`` (KIP-447, v7) a partition with offsets pending in a transaction answers
        UNSTABLE_OFFSET_COMMIT (offset -1), which the client retries until the transaction ends."""
        error = self._validate(req.group_id, allow_empty_id=True)
        if error is not None:  # each partition asked carries the error too (what OffsetFetch v0-1 answer)
            yield Respond(reply_to, OffsetFetchResponse(error, tuple(OffsetFetchPartitionData(tp, error=error)
                                                                     for tp in req.partitions or ())))
            return
        group = self.manager.groups.get(req.group_id)
        committed = {} if group is None or group.is_(GroupState.DEAD) else group.offsets
        tps = sorted(committed) if req.partitions is None else req.partitions
        data = []
        for tp in tps:
            om = committed.get(tp)
            if req.require_stable and group is not None and group.has_pending_offset_commits_for_topic_partition(tp):
                data.append(OffsetFetchPartitionData(tp, error=Errors.UNSTABLE_OFFSET_COMMIT))
            elif om is None:
                data.append(OffsetFetchPartitionData(tp))
            else:
                data.append(OffsetFetchPartitionData(tp, om.offset, om.leader_epoch, om.metadata))
        yield Respond(reply_to, OffsetFetchResponse(Errors.NONE, tuple(data)))

    # == describing, listing, deleting ===============================================================================
    def handle_describe_groups(self, req: DescribeGroupsRequest, reply_to: ReplyHandle) -> Proc[None]:
        """KafkaApis.handleDescribeGroupRequest over GroupCoordinator.handleDescribeGroup."""
        out = []
        for group_id in req.groups:
            error = self._validate(group_id, allow_empty_id=True)
            group = self.manager.groups.get(group_id)
            if error is not None:
                out.append(DescribedGroup(error, group_id))
            elif group is None:
                out.append(DescribedGroup(Errors.NONE, group_id, GroupState.DEAD.value))
            else:
                stable = group.is_(GroupState.STABLE)
                out.append(DescribedGroup(Errors.NONE, group_id, group.state.value, group.protocol_type or "",
                                          (group.protocol_name or "") if stable else "", group.summary_members()))
        yield Respond(reply_to, DescribeGroupsResponse(tuple(out), req.include_authorized_operations))

    def handle_list_groups(self, req: ListGroupsRequest, reply_to: ReplyHandle) -> Proc[None]:
        """GroupCoordinator.handleListGroups (v4: only the groups in one of ``states_filter``)."""
        if not self.is_active:
            yield Respond(reply_to, ListGroupsResponse(Errors.COORDINATOR_NOT_AVAILABLE))
            return
        error = Errors.COORDINATOR_LOAD_IN_PROGRESS if self.manager.is_loading() else Errors.NONE
        wanted = set(req.states_filter)
        groups = tuple(g.overview() for g in self.manager.groups.values()
                       if not wanted or g.state.value in wanted)
        yield Respond(reply_to, ListGroupsResponse(error, groups))

    def handle_delete_groups(self, req: DeleteGroupsRequest, reply_to: ReplyHandle) -> Proc[None]:
        """GroupCoordinator.handleDeleteGroups: each Empty group goes Dead and then, with its offsets, from the cache
        (tombstones appended with requiredAcks 0: the answer is NONE whatever the append's fate)."""
        results = []
        eligible = []
        for group_id in req.groups:
            error = self._validate(group_id, allow_empty_id=True)
            group = self.manager.groups.get(group_id)
            if error is None:
                if group is None or group.is_(GroupState.DEAD):
                    error = (Errors.GROUP_ID_NOT_FOUND if self.manager.group_not_exists(group_id)
                             else Errors.NOT_COORDINATOR)
                elif group.is_(GroupState.EMPTY):
                    group.transition_to(GroupState.DEAD, self.now_ms())
                    eligible.append(group)
                    error = Errors.NONE
                else:
                    error = Errors.NON_EMPTY_GROUP
            results.append((group_id, error))
        if eligible:
            for group in eligible:
                yield from self._cancel_group_timers(group)
            removed, _ = yield from self.manager.cleanup_group_metadata(eligible, GroupMetadata.remove_all_offsets)
            log.info("The following groups were deleted: %s. A total of %d offsets were removed.",
                     ", ".join(g.group_id for g in eligible), removed)
        yield Respond(reply_to, DeleteGroupsResponse(tuple(results)))

    def handle_delete_offsets(self, req: OffsetDeleteRequest, reply_to: ReplyHandle) -> Proc[None]:
        """KafkaApis.handleOffsetDeleteRequest over GroupCoordinator.handleDeleteOffsets: a partition whose topic
        does not have it is UNKNOWN_TOPIC_OR_PARTITION (2.6 asks its metadata cache, kactor ZooKeeper's topic
        assignments, which that cache follows); an Empty group's offsets go; a consumer group with members keeps
        those of the topics its members subscribe to (GROUP_SUBSCRIBED_TO_TOPIC) and loses the others; any other
        group with members answers NON_EMPTY_GROUP, a missing one GROUP_ID_NOT_FOUND (or NOT_COORDINATOR). The
        offsets removed are tombstoned as DeleteGroups' are."""
        errors: dict[TopicPartition, Errors] = {}
        assignment = yield from KafkaZkClient().get_full_replica_assignment_for_topics(
            sorted({tp.topic for tp in req.partitions}))
        wanted = []
        for tp in req.partitions:
            if tp in assignment:
                wanted.append(tp)
            else:
                errors[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
        group_error = self._validate(req.group_id)
        group = self.manager.groups.get(req.group_id) if group_error is None else None
        eligible: list[TopicPartition] = []
        if group_error is None and (group is None or group.is_(GroupState.DEAD)):
            group_error = (Errors.GROUP_ID_NOT_FOUND if self.manager.group_not_exists(req.group_id)
                           else Errors.NOT_COORDINATOR)
        elif group is not None and group_error is None:
            if group.is_(GroupState.EMPTY):
                eligible = wanted
            elif group.is_consumer_group():
                for tp in wanted:
                    if group.is_subscribed_to_topic(tp.topic):
                        errors[tp] = Errors.GROUP_SUBSCRIBED_TO_TOPIC
                    else:
                        eligible.append(tp)
            else:
                group_error = Errors.NON_EMPTY_GROUP
        if group_error is not None:
            yield Respond(reply_to, OffsetDeleteResponse(group_error))
            return
        assert group is not None
        if eligible:
            removed, gone = yield from self.manager.cleanup_group_metadata(
                [group], lambda g: g.remove_offsets(eligible))
            for g in gone:
                yield from self._cancel_group_timers(g)
            errors.update(dict.fromkeys(eligible, Errors.NONE))
            log.info("The following offsets of the group %s were deleted: %s. A total of %d offsets were removed.",
                     req.group_id, ", ".join(f"{tp.topic}-{tp.partition}" for tp in eligible), removed)
        yield Respond(reply_to, OffsetDeleteResponse(Errors.NONE, tuple((tp, errors[tp]) for tp in req.partitions
                                                                        if tp in errors)))

    def handle_find_coordinator(self, req: FindCoordinatorRequest, reply_to: ReplyHandle) -> Proc[None]:
        """KafkaApis.handleFindCoordinatorRequest (`find_coordinator`, from ZooKeeper); the partition count of
        ``__consumer_offsets`` (or ``__transaction_state``, for a transactional id) it read wins over the one known.
        A lookup that fails is COORDINATOR_NOT_AVAILABLE, which the client retries."""
        txn = req.key_type == COORDINATOR_TYPE_TRANSACTION
        known = self.transaction_topic_partitions if txn else self.manager.num_partitions
        try:
            response, count = yield from find_coordinator(self.zk, self.config, known, req, self.transaction_config)
        except Exception as e:  # noqa: BLE001 - e.g. an undecodable znode: the client asks again
            log.warning("FindCoordinator failed: %s", e)
            response, count = FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE), None
        if count is not None and txn:
            self.transaction_topic_partitions = count
        elif count is not None:
            self.manager.num_partitions = count
        yield Respond(reply_to, response)
