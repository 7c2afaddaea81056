"""TopicDeletionActor: Kafka's TopicDeletionManager as an actor of every broker process, spawned with the
ControllerActor and active while its broker is the controller.

It owns the deletion queue and the deletion states of the queued topics' replicas (core.controller.topic_deletion).
The ControllerActor's procedures call it with a TopicDeletionRequest (a stimulus: one of Kafka's calls, with the
facts of the topics involved) and wait for its TopicDeletionReply. While it runs a stimulus, each state transition,
znode delete or UpdateMetadata it needs is a ControllerInstructionRequest to the controller, which carries it out and
answers with a ControllerInstructionReply. Records for the state-change log go straight to it (StateChange effects).

The controller waits for one reply at a time; a request that arrives while an earlier one is unanswered means the
controller gave that one up (it only happens after its own failure), so the earlier one is dropped.
"""

from __future__ import annotations

import logging

from actors import names
from actors.base import KActor
from actors.core_effects import EffectInterpreter
from actors.proc_driver import ProcDriver
from core.controller.errors import exception_of, raised_error
from core.controller.topic_deletion import TopicDeletionManager
from messages.topic_deletion import (
    ControllerInstructionReply,
    ControllerInstructionRequest,
    DeletionInstruction,
    DeletionQueueChange,
    TopicDeletionManagerInit,
    TopicDeletionReply,
    TopicDeletionRequest,
)

log = logging.getLogger("kactor.controller.topic_deletion")


class TopicDeletionActor(KActor):
    def on_start(self) -> None:
        self.manager: TopicDeletionManager | None = None
        self.driver = ProcDriver(self, EffectInterpreter(self), {DeletionInstruction: self._instruct})

    def on_TopicDeletionManagerInit(self, msg: TopicDeletionManagerInit, sender: str) -> None:
        self.manager = TopicDeletionManager(msg.broker_id, msg.delete_topic_enable)

    def on_TopicDeletionRequest(self, msg: TopicDeletionRequest, sender: str) -> None:
        if self.manager is None:
            raise RuntimeError("TopicDeletionActor used before TopicDeletionManagerInit")
        if self.driver.in_flight:
            log.warning("topic deletion: request %d while an earlier one waits; the earlier one is dropped",
                        msg.request_id)
            self.driver.abandon_all()

        def done(change: DeletionQueueChange | None, error: BaseException | None) -> None:
            if error is None:
                assert change is not None
                self.post(msg.reply_to, TopicDeletionReply(msg.request_id, change))
            else:  # the controller does not resume with a change: what changed is told with the next one
                self.post(msg.reply_to, TopicDeletionReply(msg.request_id, DeletionQueueChange(), raised_error(error)))

        self.driver.run(self.manager.handle(msg.stimulus), done)

    def on_ControllerInstructionReply(self, msg: ControllerInstructionReply, sender: str) -> None:
        self.driver.resume(msg.request_id, msg.result, None if msg.error is None else exception_of(msg.error))

    def _instruct(self, request_id: int, instruction: DeletionInstruction) -> tuple[str, ControllerInstructionRequest]:
        return names.CONTROLLER, ControllerInstructionRequest(request_id, instruction, self.name)
