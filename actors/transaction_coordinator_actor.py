"""TransactionCoordinatorActor ("transaction-coordinator"): Kafka's TransactionCoordinator, TransactionStateManager and
the TransactionMarkerChannelManager's decisions on one broker (core.coordinator.transaction).

It only moves messages (actors/coordinator_actor.py, shared with the group coordinator): a NetRequest
(InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn) runs as its unit's TransactionCoordinator procedure,
whose `Respond` becomes a NetReply to "net"; the core's appends and reads of ``__transaction_state`` are asks to the
replica manager (actors/internal_topic.py: acks=-1 appends, reads to the log end, the log start as a ListOffsets
EARLIEST); its ZooKeeper reads and producer-id block claims are ZkRequests to "zk";
its markers go to one TransactionMarkerChannelActor per broker, spawned on first use, whose answers
(TxnMarkersAnswered) come back here. The replica manager tells it which ``__transaction_state`` partitions this broker
now leads or follows (LeadershipChange, after becomeLeaderOrFollower and StopReplica), with the leader epoch that is
the coordinator epoch.
"""

from __future__ import annotations

import logging

from actors import internal_topic, names
from actors.coordinator_actor import CoordinatorActor
from actors.core_effects import EffectInterpreter
from actors.proc_driver import ProcDriver
from actors.txn_marker_channel_actor import TransactionMarkerChannelActor
from core.coordinator.coordinator_loader import AwaitHighWatermark
from core.coordinator.transaction.transaction_coordinator import TransactionCoordinator
from core.coordinator.transaction.transaction_state_manager import AppendTxnLog, ReadTxnLog, ReadTxnLogStart
from core.coordinator.transaction.txn_marker_channel_manager import SendTxnMarkers
from messages.replication import LeadershipChange
from messages.runtime import ActorInit
from messages.topic import TRANSACTION_STATE_TOPIC_NAME
from messages.transaction import (
    TransactionCoordinatorConfig,
    TransactionCoordinatorInit,
    TxnMarkerChannelStart,
    TxnMarkersAnswered,
)
from messages.txn_markers import WriteTxnMarkersRequest

log = logging.getLogger("kactor.coordinator")


class TransactionCoordinatorActor(CoordinatorActor):
    LABEL = "transaction coordinator"
    METRICS_GROUP = "transaction-coordinator-metrics"

    def on_start(self) -> None:
        # until TransactionCoordinatorInit: not active, transactional requests are COORDINATOR_NOT_AVAILABLE
        self.coordinator = TransactionCoordinator(-1, TransactionCoordinatorConfig(), self.now_ms)
        self.listener_name = "PLAINTEXT"
        self.start_front()
        self.channels: dict[int, str] = {}  # broker id → its TransactionMarkerChannelActor
        topic = TRANSACTION_STATE_TOPIC_NAME
        self.driver = ProcDriver(self, EffectInterpreter(self, respond=self._respond,
                                                         own={SendTxnMarkers: self._send_markers}), asks={
            # TransactionStateManager.appendTransactionToLog: acks=-1 within request.timeout.ms
            AppendTxnLog: lambda rid, e: self._ask(rid, internal_topic.append(topic, e.partition, e.records, -1,
                                                                              e.timeout_ms),
                                                   internal_topic.append_result),
            # loadTransactionsForTxnTopicPartition's log.read(offset, loadBufferSize, FetchLogEnd)
            ReadTxnLog: lambda rid, e: self._ask(rid, internal_topic.read(topic, e.partition, e.offset, e.max_bytes),
                                                 internal_topic.read_result),
            ReadTxnLogStart: lambda rid, e: self._ask(rid, internal_topic.read_log_start(topic, e.partition),
                                                      internal_topic.log_start_result),
            AwaitHighWatermark: self._await_high_watermark(topic),
        })

    def on_TransactionCoordinatorInit(self, msg: TransactionCoordinatorInit, sender: str) -> None:
        self.coordinator = TransactionCoordinator(msg.broker_id, msg.config, self.now_ms,
                                                  msg.offsets_topic_num_partitions)
        self.listener_name = msg.inter_broker_listener_name
        self.driver.run(self.coordinator.startup(), self._done)

    def load_errors(self) -> int:
        return self.coordinator.state_manager.partition_load_errors

    # -- inputs ------------------------------------------------------------------------------------------------------
    def on_LeadershipChange(self, msg: LeadershipChange, sender: str) -> None:
        for partition, epoch in msg.elected:
            self.driver.run(self.coordinator.on_election(partition, epoch), self._loaded)
        for partition, epoch in msg.resigned:
            self.driver.run(self.coordinator.on_resignation(partition, epoch), self._done)

    def on_TxnMarkersAnswered(self, msg: TxnMarkersAnswered, sender: str) -> None:
        if msg.errors is None:
            self.driver.run(self.coordinator.on_markers_disconnect(msg.markers), self._done)
        else:
            errors = {(r.producer_id, r.tp): r.error for r in msg.errors}
            self.driver.run(self.coordinator.on_markers_response(msg.markers, errors), self._done)

    # -- outputs -----------------------------------------------------------------------------------------------------
    def _send_markers(self, effect: SendTxnMarkers) -> None:
        """TransactionMarkerChannelManager.addMarkersForBroker: the broker's channel, created on first use."""
        broker = effect.broker
        name = self.channels.get(broker.id)
        if name is None:
            name = self.channels[broker.id] = names.txn_marker_channel(broker.id)
            addr = self.createActor(TransactionMarkerChannelActor)
            self.runtime.register(name, addr)
            self.send(addr, ActorInit(name, self.runtime.key))
        self.post(name, TxnMarkerChannelStart(broker, self.listener_name, self.coordinator.config.request_timeout_ms,
                                              self.name))
        self.post(name, WriteTxnMarkersRequest(effect.markers))
