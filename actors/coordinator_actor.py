"""What the group and transaction coordinator actors share: their request front and their asks of the replica
manager (the internal topic, actors/internal_topic.py), their answers and their load-error metric.

A NetRequest goes through the one request front (actors/request_front.py: its unit, KafkaApis' authorization); an
admitted request runs as its unit's coordinator procedure (`core.api.registry.CoordinatorService`), whose `Respond`
becomes a NetReply to "net" (the typed `core.effects.ReplyHandle` names the request; only the actor knows its
connection and request ids). A procedure that fails before answering is answered with its unit's error answer
(UNKNOWN_SERVER_ERROR), so that its connection does not wait for ever. Asks of the replica manager are LocalRequests,
each answer read back as the ask that made it expects.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from typing import Any

from actors import internal_topic, names
from actors.base import KActor
from actors.proc_driver import ProcDriver
from actors.request_front import admit
from core.api.registry import CoordinatorService
from core.coordinator.coordinator_loader import AwaitHighWatermark
from core.effects import ReplyHandle, Respond
from core.security.authorizer import Authorizer
from messages.common import Errors
from messages.net import NetReply, NetRequest
from messages.observability import CoordinatorLoadErrors
from messages.replication import LocalReply, LocalRequest
from messages.runtime import TimerFired
from messages.security import AuthorizerChanged
from messages.zk import ZkResponse

log = logging.getLogger("kactor.coordinator")


class CoordinatorActor(KActor):
    """A coordinator's actor; a subclass sets ``coordinator`` and ``driver`` in ``on_start`` after `start_front`."""

    LABEL = "coordinator"  # in log lines
    METRICS_GROUP = ""  # the metrics actor's group of partition-load-error-total
    coordinator: Any
    driver: ProcDriver

    def start_front(self) -> None:
        self.tokens = itertools.count(1)
        self.load_errors_published = 0  # the partition_load_errors the metrics actor was last told
        self.outstanding: dict[int, tuple[int, int]] = {}  # token → (connection, request) of a request not answered
        self.finishing: dict[int, Callable[[Any], Any]] = {}  # token → the refused parts its answer gets
        self.authorizer: Authorizer | None = None  # KafkaApis' authorizer (None: authorizer.class.name empty)
        self.reading: dict[int, Callable[[Any], Any]] = {}  # ask id → what its LocalReply's body becomes

    def load_errors(self) -> int:
        """The coordinator's partition_load_errors."""
        raise NotImplementedError

    # -- inputs ------------------------------------------------------------------------------------------------------
    def on_AuthorizerChanged(self, msg: AuthorizerChanged, sender: str) -> None:
        """AclAuthorizer's cache, loaded or changed (the config manager follows the ACL change notifications)."""
        self.authorizer = Authorizer.from_message(msg)

    def on_NetRequest(self, msg: NetRequest, sender: str) -> None:
        admitted = admit(self, msg, self.authorizer)
        if admitted is None:
            return
        service = admitted.spec.service
        if not isinstance(service, CoordinatorService):
            log.error("%s: %s is not served here", self.LABEL, admitted.spec.name)
            return
        body = admitted.request
        token = next(self.tokens)
        handle = ReplyHandle(token)
        proc = service.handle(self.coordinator, body, handle)
        self.outstanding[token] = (msg.connection_id, msg.request_id)
        if admitted.finish is not None:
            self.finishing[token] = admitted.finish
        self.driver.run(proc, lambda result, error: self._handled(handle, service, body, error))

    def on_TimerFired(self, msg: TimerFired, sender: str) -> None:
        self.driver.run(self.coordinator.on_timer(msg.key), self._done)

    def on_ZkResponse(self, msg: ZkResponse, sender: str) -> None:
        self.driver.on_zk_response(msg)

    def on_LocalReply(self, msg: LocalReply, sender: str) -> None:
        result = self.reading.pop(msg.token, None)
        if result is not None:
            self.driver.resume(msg.token, result(msg.body))

    # -- outputs -----------------------------------------------------------------------------------------------------
    def _ask(self, rid: int, request: Any, result: Callable[[Any], Any]) -> tuple[str, LocalRequest]:
        """An ask of the replica manager; its answer is read by ``result`` when it comes."""
        self.reading[rid] = result
        return names.REPLICA_MANAGER, LocalRequest(rid, request, self.name)

    def _await_high_watermark(self, topic: str) -> Callable[[int, AwaitHighWatermark], tuple[str, LocalRequest]]:
        """Both coordinators' ask of their loader's `AwaitHighWatermark`, on their log ``topic``."""
        return lambda rid, e: self._ask(rid, internal_topic.await_high_watermark(topic, e.partition, e.offset,
                                                                                 e.max_wait_ms),
                                        internal_topic.read_result)

    def _respond(self, effect: Respond) -> None:
        handle = effect.reply_to
        assert isinstance(handle, ReplyHandle)
        ids = self.outstanding.pop(handle.token, None)
        finish = self.finishing.pop(handle.token, None)
        if ids is not None:
            response = effect.response if finish is None else finish(effect.response)
            self.post(names.NET, NetReply(ids[0], ids[1], response))

    def _handled(self, handle: ReplyHandle, service: CoordinatorService, request: Any,
                 error: BaseException | None) -> None:
        """A request's procedure ended; if it failed before answering, the request gets UNKNOWN_SERVER_ERROR
        rather than no answer (its connection would wait for ever)."""
        if error is not None:
            self._done(None, error)
            if handle.token in self.outstanding:
                self._respond(Respond(handle, service.error(request, Errors.UNKNOWN_SERVER_ERROR)))

    def _loaded(self, result: Any, error: BaseException | None) -> None:
        """An election's load ended: a failed one is counted in the metrics actor's partition-load-error-total."""
        self._done(result, error)
        errors = self.load_errors()
        if errors != self.load_errors_published and self.runtime.has_actor(names.METRICS):
            self.load_errors_published = errors
            self.post(names.METRICS, CoordinatorLoadErrors(self.METRICS_GROUP, errors))

    def _done(self, result: Any, error: BaseException | None) -> None:
        if error is not None:
            log.error("%s procedure failed: %s", self.LABEL, error, exc_info=error)
