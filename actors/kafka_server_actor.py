"""KafkaServerActor ("kafka-server"): a broker's lifecycle, as Kafka's KafkaServer.startup / controlledShutdown.

Startup: create the persistent top-level znodes, register /brokers/ids/<id> with a checked ephemeral create (the
znode's czxid is the broker epoch), then start the controller candidate, tell the broker side its epoch, and tell
the process that start-up has ended (its listeners start reading requests: socketServer.startProcessingRequests) —
with an authorizer configured, only once it has loaded its ACLs as well (AwaitAuthorizer, AuthorizerStarted).
Shutdown (SIGTERM): with controlled.shutdown.enable, ask the active controller to move leaderships away
(ControlledShutdownRequest over the broker transport), retrying controlled.shutdown.max.retries times with
controlled.shutdown.retry.backoff.ms between attempts, then tell the process it may exit.
"""

from __future__ import annotations

import logging
from typing import Any

from actors import names
from actors.base import KActor
from actors.proc_driver import ProcDriver
from core.effects import Proc
from core.zk_client import KafkaZkClient
from messages import controller_events as ev
from messages.broker_lifecycle import BrokerRegistered, BrokerShutdownComplete, BrokerShutdownRequested, BrokerStartup
from messages.common import Errors
from messages.net import NetResponse, NetSend, NetSendFailed
from messages.partition import ReplicaManagerShutdown, ReplicaManagerShuttingDown
from messages.requests import ControlledShutdownRequest, ControlledShutdownResponse
from messages.runtime import TimerFired
from messages.server_startup import AuthorizerStarted, AwaitAuthorizer
from messages.zk import NODEEXISTS, OK, ZkResponse
from protocol.zk import paths

log = logging.getLogger("kactor.server")

SHUTDOWN_DEADLINE_MS = 15000


class KafkaServerActor(KActor):
    def on_start(self) -> None:
        self.driver = ProcDriver(self, self._effect)
        self.broker_id = -1
        self.broker_epoch = -1
        self.controlled_enabled = True
        self.max_retries = 3
        self.backoff_ms = 5000.0
        self.attempt = 0
        self.request_id = 0
        self.shutting_down = False
        self.finished = False
        self.awaiting_authorizer = False  # AwaitAuthorizer told, AuthorizerStarted not yet
        self.processing_requests = False

    # -- startup ------------------------------------------------------------------------------------------------------
    def on_BrokerStartup(self, msg: BrokerStartup, sender: str) -> None:
        self.broker_id = msg.broker_id
        self.controlled_enabled = msg.controlled_shutdown_enable
        self.max_retries = msg.controlled_shutdown_max_retries
        self.backoff_ms = float(msg.controlled_shutdown_retry_backoff_ms)
        # A broker restarted right after a crash finds its old registration until that session expires;
        # rather than fail as Kafka does, it waits up to 1.5 session timeouts for it to go.
        self.startup = msg
        self.register_deadline_ms = self.now_ms() + 1.5 * msg.session_timeout_ms
        self.driver.run(self._register(msg), self._registered)

    def _register(self, msg: BrokerStartup) -> Proc[int]:
        """KafkaZkClient.createTopLevelPaths + registerBroker: the broker epoch, or -1 if a previous session still
        holds the registration."""
        zk = KafkaZkClient()
        yield from zk.create_top_level_paths()
        reg = yield from zk.register_broker(msg.broker_id, msg.registration_json)
        if reg.code == NODEEXISTS:
            return -1
        if reg.code != OK or reg.stat is None:
            raise RuntimeError(f"cannot register broker {msg.broker_id} at "
                               f"{paths.BrokerIdZNode.path(msg.broker_id)}: {reg.code}")
        return reg.stat.czxid

    def _registered(self, epoch: Any, error: BaseException | None) -> None:
        if error is None and epoch == -1:
            if self.now_ms() < self.register_deadline_ms:
                log.info("broker %d: %s is held by a previous session; waiting for it to expire",
                         self.broker_id, paths.BrokerIdZNode.path(self.broker_id))
                self.schedule("register-retry", 250)
                return
            error = RuntimeError(f"{paths.BrokerIdZNode.path(self.broker_id)} is registered by another live broker")
        if error is not None:
            log.error("broker %d: %s", self.broker_id, error)
            self._complete(False, f"registration failed: {error}", error=True)
            return
        self.broker_epoch = int(epoch)
        log.info("broker %d registered with epoch %d", self.broker_id, self.broker_epoch)
        registered = BrokerRegistered(self.broker_id, self.broker_epoch)
        for name in names.BROKER_EPOCH_LISTENERS:
            if name != self.name and self.runtime.has_actor(name):
                self.post(name, registered)
        self.post(names.CONTROLLER, ev.Startup())
        self._start_processing_requests()

    def on_AwaitAuthorizer(self, msg: AwaitAuthorizer, sender: str) -> None:
        self.awaiting_authorizer = True

    def on_AuthorizerStarted(self, msg: AuthorizerStarted, sender: str) -> None:
        """The authorizer's start futures completed (KafkaServer.startup: authorizer.start, then
        socketServer.startProcessingRequests(authorizerFutures)); a failure is a failed start-up, as Kafka's
        AclAuthorizer.configure throwing ends KafkaServer.startup."""
        if not self.awaiting_authorizer:
            return
        self.awaiting_authorizer = False
        if msg.error:
            log.error("broker %d: the authorizer could not load its ACLs: %s", self.broker_id, msg.error)
            if not self.shutting_down:
                self.shutting_down = True
                self._complete(False, f"authorizer start-up failed: {msg.error}", error=True)
            return
        self._start_processing_requests()

    def _start_processing_requests(self) -> None:
        """socketServer.startProcessingRequests, once the broker is registered and its authorizer (if any) has its
        ACLs: a request read before would be authorized by an authorizer that knows no ACL (the controller's first
        UpdateMetadata refused CLUSTER_AUTHORIZATION_FAILED, and the broker's metadata left without brokers)."""
        if self.processing_requests or self.awaiting_authorizer or self.broker_epoch < 0 or self.shutting_down:
            return
        self.processing_requests = True
        process = self.runtime.edges.process
        if process is not None:
            process.startup_complete()

    def on_BrokerRegistered(self, msg: BrokerRegistered, sender: str) -> None:
        """The controller re-registered the broker after a session expiry (processRegisterBrokerAndReelect): a
        controlled shutdown from now on sends the new epoch, as KafkaServer.controlledShutdown reads
        kafkaController.brokerEpoch; the old one is refused with STALE_BROKER_EPOCH."""
        if msg.broker_id == self.broker_id and msg.broker_epoch > self.broker_epoch:
            log.info("broker %d re-registered with epoch %d", self.broker_id, msg.broker_epoch)
            self.broker_epoch = msg.broker_epoch

    # -- controlled shutdown (KafkaServer.controlledShutdown) --------------------------------------------------------
    def on_BrokerShutdownRequested(self, msg: BrokerShutdownRequested, sender: str) -> None:
        if self.shutting_down:
            return
        self.shutting_down = True
        # KafkaServer.shutdown sets isShuttingDown, which its ReplicaManager shares, before controlledShutdown():
        # the LeaderAndIsr requests the controller sends meanwhile start no fetchers (makeFollowers)
        if self.runtime.has_actor(names.REPLICA_MANAGER):
            self.post(names.REPLICA_MANAGER, ReplicaManagerShuttingDown())
        if not self.controlled_enabled or self.broker_epoch < 0:
            self._complete(False, "controlled shutdown disabled" if self.broker_epoch >= 0 else "not registered")
            return
        self._attempt()

    def _attempt(self) -> None:
        self.attempt += 1
        self.driver.run(self._find_controller(), self._send_to_controller)

    def _find_controller(self) -> Proc[tuple[str, int] | None]:
        """KafkaServer.controlledShutdown's lookup: getControllerId, then getBroker of it (its endpoint on the
        inter-broker listener)."""
        zk = KafkaZkClient()
        controller_id = yield from zk.get_controller_id()
        if controller_id < 0:
            return None
        broker = yield from zk.get_broker(controller_id)
        if broker is None or not broker.endpoints:
            return None
        # KafkaServer.controlledShutdown: the controller's node(config.interBrokerListenerName)
        listener = self.startup.inter_broker_listener_name
        endpoint = next((ep for ep in broker.endpoints if ep.listener_name == listener), None)
        return None if endpoint is None else (endpoint.host, endpoint.port)

    def _send_to_controller(self, endpoint: Any, error: BaseException | None) -> None:
        if error is not None or endpoint is None:
            self._retry_or_give_up(f"no controller ({error or 'absent'})")
            return
        self.request_id += 1
        host, port = endpoint
        self.post(names.NET, NetSend(host, port, names.CONTROLLER,
                                     ControlledShutdownRequest(self.broker_id, self.broker_epoch), self.request_id,
                                     self.name))

    def on_NetResponse(self, msg: NetResponse, sender: str) -> None:
        if msg.request_id != self.request_id or not self.shutting_down:
            return
        resp = msg.body
        if isinstance(resp, ControlledShutdownResponse) and resp.error == Errors.NONE \
                and not resp.remaining_partitions:
            self._complete(True, "controlled shutdown succeeded")
        else:
            remaining = len(getattr(resp, "remaining_partitions", ()))
            self._retry_or_give_up(f"error {getattr(resp, 'error', '?')}, {remaining} partitions still led")

    def on_NetSendFailed(self, msg: NetSendFailed, sender: str) -> None:
        if msg.request_id == self.request_id and self.shutting_down:
            self._retry_or_give_up(msg.error)

    def _retry_or_give_up(self, why: str) -> None:
        if self.attempt >= self.max_retries:
            log.warning("broker %d: controlled shutdown failed after %d attempts (%s); shutting down uncleanly",
                        self.broker_id, self.attempt, why)
            self._complete(False, why)
        else:
            log.info("broker %d: controlled shutdown attempt %d failed (%s), retrying", self.broker_id,
                     self.attempt, why)
            self.schedule("controlled-shutdown-retry", self.backoff_ms)

    def on_TimerFired(self, msg: TimerFired, sender: str) -> None:
        if msg.key == "controlled-shutdown-retry" and self.shutting_down:
            self._attempt()
        elif msg.key == "shutdown-deadline":
            log.warning("broker %d: replica manager did not stop in time; stopping anyway", self.broker_id)
            self.post(names.KAFKA_SERVER, BrokerShutdownComplete(False, "replica manager shutdown timed out", False))
        elif msg.key == "register-retry" and not self.shutting_down:
            self.driver.run(self._register(self.startup), self._registered)

    def on_ZkResponse(self, msg: ZkResponse, sender: str) -> None:
        self.driver.on_zk_response(msg)

    def _complete(self, controlled: bool, reason: str, error: bool = False) -> None:
        # KafkaServer.shutdown: after controlledShutdown, socketServer.stopProcessingRequests closes every client
        # connection; then replicaManager.shutdown() (fetchers stopped, high watermarks checkpointed) comes
        # before the ZooKeeper session is closed; the replica manager passes the completion back to us.
        process = self.runtime.edges.process
        if process is not None:
            process.stop_processing_requests()
        self.post(names.REPLICA_MANAGER, ReplicaManagerShutdown(BrokerShutdownComplete(controlled, reason, error)))
        self.schedule("shutdown-deadline", SHUTDOWN_DEADLINE_MS)

    def on_BrokerShutdownComplete(self, msg: BrokerShutdownComplete, sender: str) -> None:
        if self.finished:
            return
        self.finished = True
        self.cancel_timer("shutdown-deadline")
        process = self.runtime.edges.process
        if process is not None:
            process.shutdown_complete(msg)

    def _effect(self, effect: Any) -> None:
        raise TypeError(f"kafka-server: unexpected effect {type(effect).__name__}")
