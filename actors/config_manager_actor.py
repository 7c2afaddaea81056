"""ConfigManagerActor ("config-manager"): a broker's DynamicConfigManager (core.broker.dynamic_config).

It runs the change listener's procedure one run at a time, as Kafka's single
``/config/changes-event-process-thread`` does: a child watch on /config/changes or a new ZooKeeper session
(afterInitializingSession) asks for one more run, and at most one run waits behind the current one (Kafka's
addChangeNotification only queues when the queue is empty). Its core's effects (an event for the controller, a
config change) go where actors/core_effects.py routes them, to those of the actors this process has.

With ``authorizer.class.name`` set it also runs AclAuthorizer's cache (core.security.acl_listener): loaded at
AclAuthorizerInit, then one run of its two ACL change listeners per child watch firing on /kafka-acl-changes or
/kafka-acl-extended-changes (one run at a time, as each Kafka listener has one thread); each new cache goes to the
actors that authorize requests.

Each user's SCRAM credentials its core reads (at start-up and from each user change notification) go to the "net"
actor, whose network edge keeps the CredentialCache the SASL listeners authenticate from.
"""

from __future__ import annotations

import logging
from typing import Any

from actors import names
from actors.base import KActor
from actors.core_effects import EVERY_RECIPIENT, EffectInterpreter
from actors.proc_driver import ProcDriver
from core.broker.dynamic_config import ConfigManager
from core.security.acl_listener import CHANGE_PATHS, AclChangeListener
from messages.credentials import UserCredentialsChanged
from messages.dynamic_config import ConfigManagerInit
from messages.security import AclAuthorizerInit
from messages.server_startup import AuthorizerStarted
from messages.zk import ZkResponse, ZkSessionEvent, ZkWatchEvent
from protocol.zk import paths

log = logging.getLogger("kactor.config")


class ConfigManagerActor(KActor):
    def on_start(self) -> None:
        self.manager: ConfigManager | None = None
        self.driver = ProcDriver(self, EffectInterpreter(
            self, optional=EVERY_RECIPIENT, own={UserCredentialsChanged: self._credentials_changed}))
        self.running = False
        self.run_pending = False
        self.acls: AclChangeListener | None = None
        self.acls_running = False
        self.acls_pending = False

    def _credentials_changed(self, change: UserCredentialsChanged) -> None:
        """UserConfigHandler → CredentialProvider.updateCredentials: the SASL listeners' CredentialCache lives beside
        them in the network edge, which the "net" actor fronts (none in a process without one)."""
        if self.runtime.has_actor(names.NET):
            self.post(names.NET, change)

    def on_ConfigManagerInit(self, msg: ConfigManagerInit, sender: str) -> None:
        self.manager = ConfigManager(msg.broker_id, dict(msg.static_config), self.now_ms)
        self.running = True
        self.driver.run(self.manager.startup(), self._done)

    def on_ZkWatchEvent(self, msg: ZkWatchEvent, sender: str) -> None:
        if msg.path == paths.ConfigEntityChangeNotificationZNode and msg.kind == "CHILD":
            self._add_change_notification()
        elif msg.path in CHANGE_PATHS.values() and msg.kind == "CHILD":
            self._add_acl_change_notification()

    def on_ZkSessionEvent(self, msg: ZkSessionEvent, sender: str) -> None:
        if msg.state == "REESTABLISHED":  # ZkStateChangeHandler.afterInitializingSession: the watch is gone
            self._add_change_notification()
            self._add_acl_change_notification()

    def on_AclAuthorizerInit(self, msg: AclAuthorizerInit, sender: str) -> None:
        """AclAuthorizer.configure: load the cache, start the change listeners."""
        self.acls = AclChangeListener(msg.super_users, msg.allow_everyone_if_no_acl_found, self.now_ms)
        self.acls_running = True
        self.driver.run(self.acls.startup(), self._acls_started)

    def _acls_started(self, result: Any, error: BaseException | None) -> None:
        """AclAuthorizer.start's futures: the kafka-server starts reading requests once the cache is loaded (the
        loaded cache went to the authorizing actors first, so no request meets the empty one)."""
        if self.runtime.has_actor(names.KAFKA_SERVER):
            self.post(names.KAFKA_SERVER, AuthorizerStarted(f"{type(error).__name__}: {error}" if error else ""))
        self._acls_done(result, error)

    def _add_acl_change_notification(self) -> None:
        if self.acls is None:
            return
        if self.acls_running:
            self.acls_pending = True
            return
        self.acls_running = True
        self.driver.run(self.acls.process_notifications(), self._acls_done)

    def _acls_done(self, result: Any, error: BaseException | None) -> None:
        if error is not None:
            log.error("Error while processing ACL change notifications: %s", error, exc_info=error)
        self.acls_running = False
        if self.acls_pending:
            self.acls_pending = False
            self._add_acl_change_notification()

    def on_ZkResponse(self, msg: ZkResponse, sender: str) -> None:
        self.driver.on_zk_response(msg)

    def _add_change_notification(self) -> None:
        if self.manager is None:
            return
        if self.running:
            self.run_pending = True
            return
        self.running = True
        self.driver.run(self.manager.process_notifications(), self._done)

    def _done(self, result: Any, error: BaseException | None) -> None:
        if error is not None:
            log.error("Error while processing notification change for path = %s: %s",
                      paths.ConfigEntityChangeNotificationZNode, error, exc_info=error)
        self.running = False
        if self.run_pending:
            self.run_pending = False
            self._add_change_notification()
