"""GroupCoordinatorActor ("group-coordinator"): Kafka's GroupCoordinator and GroupMetadataManager on one broker
(core.coordinator.group), and FindCoordinator.

It only moves messages (actors/coordinator_actor.py, shared with the transaction coordinator): a NetRequest's group
request runs as its unit's GroupCoordinator procedure (core/api: group.py, offsets.py, find_coordinator.py,
offset_delete.py, txn_offset_commit.py); the core's effects go through `actors.core_effects.EffectInterpreter`
(its timers are this actor's timers); its appends and reads of ``__consumer_offsets`` are asks to the replica manager
(actors/internal_topic.py: acks=-1 for appends, reads to the log end, the log start as a ListOffsets EARLIEST, and
a TxnOffsetCommit's verification as a verify-only produce);
FindCoordinator's leader lookup is an ask of the replica manager's metadata cache (a MetadataRequest);
FindCoordinator's and startup's ZooKeeper reads and the creation of ``__consumer_offsets`` are ZkRequests to "zk".
The replica manager tells it which ``__consumer_offsets`` partitions this broker now leads or follows
(LeadershipChange, after becomeLeaderOrFollower and StopReplica), and when a transaction's markers reached them
(TxnMarkersWritten: the offsets committed in it become the groups' or go).
"""

from __future__ import annotations

import logging
from typing import Any

from actors import internal_topic
from actors.coordinator_actor import CoordinatorActor
from actors.core_effects import EffectInterpreter
from actors.proc_driver import ProcDriver
from core.coordinator.coordinator_loader import AwaitHighWatermark
from core.coordinator.group.find_coordinator import ReadMetadataCache
from core.coordinator.group.group_coordinator import GroupCoordinator
from core.coordinator.group.group_metadata_manager import (
    GROUP_METADATA_TOPIC_NAME,
    LOAD_BUFFER_SIZE,
    AppendToLog,
    Fork,
    ReadLog,
    ReadLogStart,
    VerifyTxnOffsetCommit,
)
from messages.group import GroupCoordinatorConfig, GroupCoordinatorInit
from messages.metadata import MetadataResponse
from messages.replication import LeadershipChange
from messages.txn_markers import TxnMarkersWritten

log = logging.getLogger("kactor.coordinator")


def metadata_result(response: Any) -> MetadataResponse:
    """The cache's answer; anything else reads as a cache that knows nothing (COORDINATOR_NOT_AVAILABLE)."""
    return response if isinstance(response, MetadataResponse) else MetadataResponse((), None, -1, ())


class GroupCoordinatorActor(CoordinatorActor):
    LABEL = "group coordinator"
    METRICS_GROUP = "group-coordinator-metrics"

    def on_start(self) -> None:
        # until GroupCoordinatorInit: not active, every group request is answered COORDINATOR_NOT_AVAILABLE
        self.coordinator = GroupCoordinator(-1, GroupCoordinatorConfig(), self.now_ms)
        self.start_front()
        topic = GROUP_METADATA_TOPIC_NAME
        self.driver = ProcDriver(self, EffectInterpreter(self, respond=self._respond, own={Fork: self._fork}), asks={
            # appendForGroup (acks=-1 within offsets.commit.timeout.ms), or the tombstones' append with requiredAcks 0
            # (cleanupGroupMetadata); origin Coordinator: a TxnOffsetCommit's transactional batch (base sequence 0
            # each time) has its producer epoch checked and no sequence
            AppendToLog: lambda rid, e: self._ask(rid, internal_topic.append(
                topic, e.partition, e.records, e.acks, e.timeout_ms, coordinator=True,
                transactional_id=e.transactional_id, verification_token=e.verification_token),
                internal_topic.appended_result),
            # KIP-890 (3.7): a TxnOffsetCommit's transaction verified by the partition's leader (this broker)
            VerifyTxnOffsetCommit: lambda rid, e: self._ask(rid, internal_topic.verify(
                topic, e.partition, e.transactional_id, e.records, e.token, e.timeout_ms),
                internal_topic.appended_result),
            ReadLog: lambda rid, e: self._ask(rid, internal_topic.read(topic, e.partition, e.offset, LOAD_BUFFER_SIZE),
                                              internal_topic.read_result),
            ReadLogStart: lambda rid, e: self._ask(rid, internal_topic.read_log_start(topic, e.partition),
                                                   internal_topic.log_start_result),
            AwaitHighWatermark: self._await_high_watermark(topic),
            ReadMetadataCache: lambda rid, e: self._ask(rid, e.request(), metadata_result),
        })

    def on_GroupCoordinatorInit(self, msg: GroupCoordinatorInit, sender: str) -> None:
        self.coordinator = GroupCoordinator(msg.broker_id, msg.config, self.now_ms, msg.transaction_config)
        self.driver.run(self.coordinator.startup(self.coordinator.zk), self._done)

    def load_errors(self) -> int:
        return self.coordinator.manager.partition_load_errors

    # -- inputs ------------------------------------------------------------------------------------------------------
    def on_LeadershipChange(self, msg: LeadershipChange, sender: str) -> None:
        for partition, _epoch in msg.elected:
            self.driver.run(self.coordinator.on_election(partition), self._loaded)
        for partition, _epoch in msg.resigned:
            self.driver.run(self.coordinator.on_resignation(partition), self._done)

    def on_TxnMarkersWritten(self, msg: TxnMarkersWritten, sender: str) -> None:
        """GroupCoordinator.scheduleHandleTxnCompletion: the replica manager wrote a transaction's markers to these
        ``__consumer_offsets`` partitions."""
        self.driver.run(self.coordinator.handle_txn_completion(msg.producer_id, set(msg.offsets_partitions),
                                                               msg.committed), self._done)

    # -- outputs -----------------------------------------------------------------------------------------------------
    def _fork(self, effect: Fork) -> None:
        self.driver.run(effect.proc, self._done)
