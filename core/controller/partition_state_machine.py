"""ZkPartitionStateMachine (kafka.controller.PartitionStateMachine / ZkPartitionStateMachine, Kafka 2.6; §5.1).

Procedures are generators of effects (core.effects): ZooKeeper reads/writes are one pipelined ZkBatch per step for
all partitions, requests leave through the machine's own ControllerBrokerRequestBatch, and each non-empty
`handle_state_changes` call yields one StateChange(StateChangeBatch) for the state-change log.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Any

from core.controller.context import ControllerContext, ordered
from core.controller.election import (
    ControlledShutdownPartitionLeaderElectionStrategy,
    ElectionResult,
    OfflinePartitionLeaderElectionStrategy,
    PartitionLeaderElectionStrategy,
    PreferredReplicaPartitionLeaderElectionStrategy,
    ReassignPartitionLeaderElectionStrategy,
    leader_for_controlled_shutdown,
    leader_for_offline,
    leader_for_preferred,
    leader_for_reassign,
)
from core.controller.errors import ControllerMovedError, IllegalStateError, KeeperError, StateChangeFailedError
from core.controller.request_batch import ControllerBrokerRequestBatch
from core.controller.states import PartitionState
from core.effects import Proc, StateChange
from core.zk_client import UNCLEAN_LEADER_ELECTION_ENABLE, KafkaZkClient, partition_state_or_none
from messages.common import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from messages.observability import LeaderElection, PartitionStateChange, StateChangeBatch
from messages.zk import NODEEXISTS, NONODE, OK
from protocol.zk import paths

log = logging.getLogger("kactor.controller.partition_state_machine")
state_change_log = logging.getLogger("kactor.state.change")

NewPartition = PartitionState.NewPartition
OnlinePartition = PartitionState.OnlinePartition
OfflinePartition = PartitionState.OfflinePartition
NonExistentPartition = PartitionState.NonExistentPartition

ElectionOutcome = LeaderAndIsr | Exception


class ZkPartitionStateMachine:
    """Mirrors ZkPartitionStateMachine. ``config`` needs ``broker_id`` and ``unclean_leader_election_enable``."""

    def __init__(self, config: Any, ctx: ControllerContext, batch: ControllerBrokerRequestBatch | None = None,
                 zk_client: KafkaZkClient | None = None) -> None:
        self.config = config
        self.controller_id: int = config.broker_id
        self.ctx = ctx
        self.batch = batch if batch is not None else ControllerBrokerRequestBatch(self.controller_id, ctx)
        self.zk_client = zk_client if zk_client is not None else KafkaZkClient()
        self._changes: list[PartitionStateChange] = []
        self._elections: list[LeaderElection] = []

    # -- lifecycle ---------------------------------------------------------------------------------------------------
    def startup(self) -> Proc[dict[TopicPartition, ElectionOutcome]]:
        """PartitionStateMachine.startup: set every partition's initial state, then elect leaders for New/Offline."""
        log.info("Initializing partition state")
        self.initialize_partition_state()
        log.info("Triggering online partition state changes")
        return (yield from self.trigger_online_partition_state_change())

    def shutdown(self) -> None:
        log.info("Stopped partition state machine")

    def initialize_partition_state(self) -> None:
        """PartitionStateMachine.initializePartitionState: no leader record → New; leader online → Online; else
        Offline (set directly, not via transitions)."""
        ctx = self.ctx
        for tp in ctx.iter_all_partitions():
            info = ctx.partition_leadership_info(tp)
            if info is None:
                ctx.put_partition_state(tp, NewPartition)
            elif ctx.is_replica_online(info.leader_and_isr.leader, tp):
                ctx.put_partition_state(tp, OnlinePartition)
            else:
                ctx.put_partition_state(tp, OfflinePartition)

    def trigger_online_partition_state_change(self, topic: str | None = None
                                              ) -> Proc[dict[TopicPartition, ElectionOutcome]]:
        """triggerOnlinePartitionStateChange([topic]): New/Offline partitions (of the topic), except topics queued for
        deletion, → OnlinePartition with OfflinePartitionLeaderElectionStrategy(allowUnclean=false)."""
        ctx = self.ctx
        wanted = (OfflinePartition, NewPartition)
        if topic is None:
            candidates: Iterable[TopicPartition] = (tp for tp, s in ctx.partition_states.items() if s in wanted)
        else:
            candidates = (tp for tp in ctx.partition_full_replica_assignment_for_topic(topic)
                          if ctx.partition_states.get(tp) in wanted)
        partitions = [tp for tp in candidates if tp.topic not in ctx.topics_to_be_deleted]
        return (yield from self.handle_state_changes(partitions, OnlinePartition,
                                                     OfflinePartitionLeaderElectionStrategy(False)))

    # -- transitions -------------------------------------------------------------------------------------------------
    def handle_state_changes(self, partitions: Iterable[TopicPartition], target_state: PartitionState,
                             strategy: PartitionLeaderElectionStrategy | None = None
                             ) -> Proc[dict[TopicPartition, ElectionOutcome]]:
        """ZkPartitionStateMachine.handleStateChanges: newBatch, transitions, sendRequestsToBrokers(epoch).

        Returns the election results (partition → new LeaderAndIsr or the exception) when electing leaders, else {}.
        ControllerMovedError propagates; any other error is logged and every partition maps to it.
        """
        parts = ordered(partitions)
        if not parts:
            return {}
        self._changes = []
        self._elections = []
        try:
            self.batch.new_batch()
            result = yield from self._do_handle_state_changes(parts, target_state, strategy)
            yield from self.batch.send_requests_to_brokers(self.ctx.epoch)
        except ControllerMovedError:
            log.error("Controller moved to another broker when moving some partitions to %s state", target_state)
            raise
        except Exception as e:
            log.error("Error while moving some partitions to %s state", target_state, exc_info=True)
            result = {tp: e for tp in parts}
        yield StateChange(StateChangeBatch(self.ctx.epoch, partition_changes=tuple(self._changes),
                                                        elections=tuple(self._elections)))
        self._changes = []
        self._elections = []
        return result

    def partitions_in_state(self, state: PartitionState) -> set[TopicPartition]:
        return self.ctx.partitions_in_state(state)

    def _do_handle_state_changes(self, partitions: list[TopicPartition], target_state: PartitionState,
                                 strategy: PartitionLeaderElectionStrategy | None
                                 ) -> Proc[dict[TopicPartition, ElectionOutcome]]:
        """Mirrors ZkPartitionStateMachine.doHandleStateChanges."""
        ctx = self.ctx
        states = ctx.partition_states
        for tp in partitions:
            ctx.put_partition_state_if_not_exists(tp, NonExistentPartition)
        valid, invalid = ctx.check_valid_partition_state_change(partitions, target_state)
        for tp in invalid:
            self._log_invalid_transition(tp, target_state)

        if target_state == OnlinePartition:
            uninitialized = [tp for tp in valid if states[tp] == NewPartition]
            to_elect = [tp for tp in valid if states[tp] in (OfflinePartition, OnlinePartition)]
            if to_elect and strategy is None:
                # Kafka throws this after initializing the New partitions; checking first leaves no half-built batch.
                raise ValueError("Election strategy is a required field when the target state is OnlinePartition")
            if uninitialized:
                initialized = yield from self._initialize_leader_and_isr_for_partitions(uninitialized)
                for tp in initialized:
                    self._mark(tp, OnlinePartition)
            if to_elect:
                assert strategy is not None
                results = yield from self._elect_leader_for_partitions(to_elect, strategy)
                for tp, r in results.items():
                    if not isinstance(r, Exception):
                        self._mark(tp, OnlinePartition)
                return results
            return {}
        # NewPartition, OfflinePartition, NonExistentPartition: mark the state only.
        for tp in valid:
            self._mark(tp, target_state)
        return {}

    def _mark(self, tp: TopicPartition, target: PartitionState) -> None:
        current = self.ctx.partition_states.get(tp, NonExistentPartition)
        self._changes.append(PartitionStateChange(tp, current.name, target.name))
        self.ctx.put_partition_state(tp, target)

    def _initialize_leader_and_isr_for_partitions(self, partitions: list[TopicPartition]) -> Proc[list[TopicPartition]]:
        """Mirrors initializeLeaderAndIsrForPartitions: leader = first live replica, ISR = live replicas, epoch 0;
        create the state znodes (fenced); LeaderAndIsr(isNew=true) to the ISR members."""
        ctx = self.ctx
        initial: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        for tp in partitions:
            replicas = ctx.partition_replica_assignment(tp)
            live = tuple(r for r in replicas if ctx.is_replica_online(r, tp))
            if not live:
                msg = (f"Controller {self.controller_id} epoch {ctx.epoch} encountered error during state change of "
                       f"partition {tp} from New to Online, assigned replicas are [{','.join(map(str, replicas))}], "
                       f"live brokers are [{sorted(ctx.live_broker_ids())}]. No assigned replica is alive.")
                self._log_failed_state_change(tp, NewPartition, OnlinePartition, StateChangeFailedError(msg))
            else:
                initial[tp] = LeaderIsrAndControllerEpoch(LeaderAndIsr.initial(live[0], live), ctx.epoch)
        if not initial:
            return []
        try:
            responses = yield from self.zk_client.create_topic_partition_states_raw(initial, ctx.epoch_zk_version)
        except ControllerMovedError:
            log.error("Controller moved to another broker when trying to create the topic partition state znode")
            raise
        except Exception as e:
            for tp in initial:
                self._log_failed_state_change(tp, ctx.partition_states[tp], NewPartition, e)
            return []
        created: list[TopicPartition] = []
        exists: list[TopicPartition] = []
        for tp, r in responses:
            if r.code == OK:
                created.append(tp)
            elif r.code == NODEEXISTS:
                exists.append(tp)
            else:
                self._log_failed_state_change(tp, NewPartition, OnlinePartition,
                                              KeeperError(r.code, paths.TopicPartitionStateZNode.path(tp)))
        if exists:
            own = yield from self._own_lost_creates(exists, initial)
            for tp in exists:
                if tp in own:
                    created.append(tp)
                else:
                    self._log_failed_state_change(tp, NewPartition, OnlinePartition,
                                                  KeeperError(NODEEXISTS, paths.TopicPartitionStateZNode.path(tp)))
        for tp in created:
            info = initial[tp]
            ctx.put_partition_leadership_info(tp, info)
            lai = info.leader_and_isr
            self.batch.add_leader_and_isr_request_for_brokers(lai.isr, tp, info,
                                                              ctx.partition_full_replica_assignment(tp), True)
            self._elections.append(LeaderElection(tp, "InitialLeader", lai.leader, lai.leader_epoch, lai.isr))
        return created

    def _own_lost_creates(self, partitions: list[TopicPartition],
                          initial: dict[TopicPartition, LeaderIsrAndControllerEpoch]) -> Proc[set[TopicPartition]]:
        """The partitions whose NODEEXISTS answered our own create: the state znode holds exactly the initial state
        we wrote (this controller's epoch, leader epoch 0, zkVersion 0). A departure from Kafka 2.6
        (docs/kafka-2.6-departures.md): a create applied just before a ZooKeeper connection loss is re-sent after the
        reconnect (retryRequestsUntilConnected) and answered NODEEXISTS; 2.6 then fails every later attempt the same
        way and the partition stays NewPartition, leaderless, for ever."""
        try:
            responses = yield from self.zk_client.get_topic_partition_states_raw(partitions)
        except ControllerMovedError:
            raise
        except Exception as e:  # the read failed: the creates count as failed, as in 2.6
            log.warning("Could not read back the partition states of %s after NODEEXISTS: %s", partitions, e)
            return set()
        own: set[TopicPartition] = set()
        for tp, r in zip(partitions, responses, strict=True):
            if (r.code == OK and r.stat is not None and r.stat.version == 0
                    and partition_state_or_none(r, tp, 0) == initial[tp]):
                own.add(tp)
        return own

    def _elect_leader_for_partitions(self, partitions: list[TopicPartition], strategy: PartitionLeaderElectionStrategy
                                     ) -> Proc[dict[TopicPartition, ElectionOutcome]]:
        """Mirrors electLeaderForPartitions: repeat until no partition hit a BADVERSION conflict."""
        remaining = partitions
        finished_elections: dict[TopicPartition, ElectionOutcome] = {}
        while remaining:
            finished, to_retry = yield from self._do_elect_leader_for_partitions(remaining, strategy)
            remaining = to_retry
            for tp, r in finished.items():
                if isinstance(r, Exception):
                    self._log_failed_state_change(tp, self.ctx.partition_states[tp], OnlinePartition, r)
            finished_elections.update(finished)
            if remaining:
                log.info("Retrying leader election with strategy %s for partitions %s", strategy, remaining)
        return finished_elections

    def _do_elect_leader_for_partitions(
        self, partitions: list[TopicPartition], strategy: PartitionLeaderElectionStrategy
    ) -> Proc[tuple[dict[TopicPartition, ElectionOutcome], list[TopicPartition]]]:
        """Mirrors doElectLeaderForPartitions: read states, elect, conditionally write, queue LeaderAndIsr."""
        ctx = self.ctx
        try:
            responses = yield from self.zk_client.get_topic_partition_states_raw(partitions)
        except ControllerMovedError:
            raise
        except Exception as e:
            return {tp: e for tp in partitions}, []
        failed: dict[TopicPartition, ElectionOutcome] = {}
        valid: list[tuple[TopicPartition, LeaderAndIsr]] = []
        for tp, r in zip(partitions, responses, strict=True):
            if r.code == OK:
                decoded = partition_state_or_none(r, tp)
                if decoded is None:
                    failed[tp] = StateChangeFailedError(f"LeaderAndIsr information doesn't exist for partition {tp} "
                                                        f"in {ctx.partition_states[tp]} state")
                elif decoded.controller_epoch > ctx.epoch:
                    failed[tp] = StateChangeFailedError(
                        f"Aborted leader election for partition {tp} since the LeaderAndIsr path was already written "
                        f"by another controller. This probably means that the current controller {self.controller_id} "
                        f"went through a soft failure and another controller was elected with epoch "
                        f"{decoded.controller_epoch}.")
                else:
                    valid.append((tp, decoded.leader_and_isr))
            elif r.code == NONODE:
                failed[tp] = StateChangeFailedError(f"LeaderAndIsr information doesn't exist for partition {tp} in "
                                                    f"{ctx.partition_states[tp]} state")
            else:
                failed[tp] = KeeperError(r.code, paths.TopicPartitionStateZNode.path(tp))
        if not valid:
            return failed, []

        results: list[ElectionResult]
        if isinstance(strategy, OfflinePartitionLeaderElectionStrategy):
            with_unclean_state = yield from self.collect_unclean_leader_election_state(valid, strategy.allow_unclean)
            results = leader_for_offline(ctx, with_unclean_state)
        elif isinstance(strategy, ReassignPartitionLeaderElectionStrategy):
            results = leader_for_reassign(ctx, valid)
        elif isinstance(strategy, PreferredReplicaPartitionLeaderElectionStrategy):
            results = leader_for_preferred(ctx, valid)
        elif isinstance(strategy, ControlledShutdownPartitionLeaderElectionStrategy):
            results = leader_for_controlled_shutdown(ctx, valid)
        else:
            raise ValueError(f"unknown leader election strategy {strategy!r}")

        elected: dict[TopicPartition, ElectionResult] = {}
        adjusted: dict[TopicPartition, LeaderAndIsr] = {}
        for res in results:
            if res.leader_and_isr is None:
                failed[res.topic_partition] = StateChangeFailedError(
                    f"Failed to elect leader for partition {res.topic_partition} under strategy {strategy}")
            else:
                elected[res.topic_partition] = res
                adjusted[res.topic_partition] = res.leader_and_isr
        update = yield from self.zk_client.update_leader_and_isr(adjusted, ctx.epoch, ctx.epoch_zk_version)
        for tp, outcome in update.finished_partitions.items():
            if isinstance(outcome, Exception):
                continue
            info = LeaderIsrAndControllerEpoch(outcome, ctx.epoch)
            ctx.put_partition_leadership_info(tp, info)
            self.batch.add_leader_and_isr_request_for_brokers(elected[tp].live_replicas, tp, info,
                                                              ctx.partition_full_replica_assignment(tp), False)
            self._elections.append(LeaderElection(tp, strategy.name, outcome.leader, outcome.leader_epoch,
                                                  outcome.isr, unclean=elected[tp].unclean))
        finished: dict[TopicPartition, ElectionOutcome] = dict(update.finished_partitions)
        finished.update(failed)
        return finished, update.partitions_to_retry

    def collect_unclean_leader_election_state(
        self, leader_and_isrs: Sequence[tuple[TopicPartition, LeaderAndIsr]], allow_unclean: bool
    ) -> Proc[list[tuple[TopicPartition, LeaderAndIsr | None, bool]]]:
        """Mirrors collectUncleanLeaderElectionState: partitions with a live ISR member elect cleanly; the others use
        ``allow_unclean`` or else the topic's ``unclean.leader.election.enable`` (``/config/topics/<t>`` merged over
        the broker default). A topic whose config cannot be read fails its partitions' election."""
        ctx = self.ctx
        no_live_isr: list[tuple[TopicPartition, LeaderAndIsr]] = []
        with_live_isr: list[tuple[TopicPartition, LeaderAndIsr]] = []
        for tp, lai in leader_and_isrs:
            if any(ctx.is_replica_online(r, tp) for r in lai.isr):
                with_live_isr.append((tp, lai))
            else:
                no_live_isr.append((tp, lai))
        result: list[tuple[TopicPartition, LeaderAndIsr | None, bool]] = []
        if allow_unclean:
            result.extend((tp, lai, True) for tp, lai in no_live_isr)
        elif no_live_isr:
            defaults = {UNCLEAN_LEADER_ELECTION_ENABLE: bool(self.config.unclean_leader_election_enable)}
            configs, failed = yield from self.zk_client.get_log_configs((tp.topic for tp, _ in no_live_isr), defaults)
            for tp, lai in no_live_isr:
                if tp.topic in failed:
                    self._log_failed_state_change(tp, ctx.partition_states[tp], OnlinePartition, failed[tp.topic])
                    result.append((tp, None, False))
                else:
                    result.append((tp, lai, bool(configs[tp.topic][UNCLEAN_LEADER_ELECTION_ENABLE])))
        result.extend((tp, lai, False) for tp, lai in with_live_isr)
        return result

    # -- logging -----------------------------------------------------------------------------------------------------
    def _log_invalid_transition(self, tp: TopicPartition, target: PartitionState) -> None:
        current = self.ctx.partition_states[tp]
        valid = ",".join(s.name for s in sorted(target.valid_previous_states, key=lambda s: s.value))
        e = IllegalStateError(f"Partition {tp} should be in one of {valid} states before moving to {target} state. "
                              f"Instead it is in {current} state")
        self._log_failed_state_change(tp, current, target, e)

    def _log_failed_state_change(self, tp: TopicPartition, current: PartitionState, target: PartitionState,
                                 error: BaseException) -> None:
        if state_change_log.isEnabledFor(logging.ERROR):
            state_change_log.error("Controller %d epoch %d failed to change state for partition %s from %s to %s: %s",
                                   self.controller_id, self.ctx.epoch, tp, current, target, error)

