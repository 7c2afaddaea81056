"""ProcDriver: a procedure (a generator of effects) runs inside an actor; each ZkBatch becomes a ZkRequest posted to
"zk" and suspends it until the ZkResponse with that request id comes back; every other effect goes to the actor's
effect handler, whose return value resumes the procedure at once. Request ids count per driver from 1, so a replay
issues the same ones. An actor may register more asks (the ControllerActor's TopicDeletionRequest): they share the
counter, and an answer may carry an error, thrown into the procedure where it yielded."""

from __future__ import annotations

from typing import Any

from actors.proc_driver import ProcDriver
from core.effects import Proc, StateChange
from messages.topic_deletion import TryTopicDeletion
from messages.zk import NONODE, OK, GetData, SetData, ZkBatch, ZkOpResult, ZkRequest, ZkResponse

READ = ZkBatch((GetData("/controller"),))
WRITE = ZkBatch((SetData("/controller_epoch", "2", 1),), fence_version=1)


class _Actor:
    """What ProcDriver needs of its actor: a name and post()."""

    name = "controller"

    def __init__(self) -> None:
        self.posted: list[tuple[str, Any]] = []

    def post(self, to: str, body: Any) -> None:
        self.posted.append((to, body))


class _Harness:
    def __init__(self) -> None:
        self.actor = _Actor()
        self.effects: list[Any] = []
        self.done: list[tuple[Any, BaseException | None]] = []
        self.driver = ProcDriver(self.actor, self._handle,
                                 {TryTopicDeletion: lambda rid, effect: ("topic-deletion", ("asked", rid, effect))})

    def _handle(self, effect: Any) -> Any:
        self.effects.append(effect)
        return f"handled {effect.record}"  # what the effect handler answers is sent into the procedure

    def run(self, proc: Proc[Any]) -> None:
        self.driver.run(proc, lambda result, error: self.done.append((result, error)))


def test_a_zookeeper_batch_suspends_the_procedure_until_its_response() -> None:
    seen: list[Any] = []

    def proc() -> Proc[str]:
        seen.append((yield StateChange("before")))
        (read,) = yield READ
        seen.append(read)
        seen.append((yield StateChange("after")))
        return f"leader is {read.data}"

    h = _Harness()
    h.run(proc())
    assert h.actor.posted == [("zk", ZkRequest(1, READ, "controller"))]
    assert h.effects == [StateChange("before")] and seen == ["handled before"]
    assert h.driver.in_flight == 1 and h.done == []

    answer = ZkOpResult(OK, data='{"brokerid":1}')
    assert h.driver.on_zk_response(ZkResponse(1, (answer,))) is True
    assert seen == ["handled before", answer, "handled after"]
    assert h.done == [('leader is {"brokerid":1}', None)]
    assert h.driver.in_flight == 0 and h.actor.posted == [("zk", ZkRequest(1, READ, "controller"))]


def test_request_ids_count_per_driver_and_responses_resume_the_right_procedure() -> None:
    def proc(tag: str, batch: ZkBatch) -> Proc[tuple[str, str]]:
        (first,) = yield batch
        (second,) = yield batch
        return tag, f"{first.code},{second.code}"

    h = _Harness()
    h.run(proc("a", READ))
    h.run(proc("b", WRITE))
    assert h.actor.posted == [("zk", ZkRequest(1, READ, "controller")), ("zk", ZkRequest(2, WRITE, "controller"))]
    # answered out of order: b's first, then a's
    h.driver.on_zk_response(ZkResponse(2, (ZkOpResult(OK),)))
    h.driver.on_zk_response(ZkResponse(1, (ZkOpResult(NONODE),)))
    assert h.actor.posted[2:] == [("zk", ZkRequest(3, WRITE, "controller")), ("zk", ZkRequest(4, READ, "controller"))]
    h.driver.on_zk_response(ZkResponse(4, (ZkOpResult(OK),)))
    h.driver.on_zk_response(ZkResponse(3, (ZkOpResult(OK),)))
    assert h.done == [(("a", "NONODE,OK"), None), (("b", "OK,OK"), None)]


def test_a_late_or_unknown_response_resumes_nothing() -> None:
    h = _Harness()

    def proc() -> Proc[None]:
        yield READ

    h.run(proc())
    assert h.driver.on_zk_response(ZkResponse(7, ())) is False
    assert h.driver.in_flight == 1 and h.done == []


def test_an_exception_in_the_procedure_reaches_done_before_and_after_a_wait() -> None:
    def fails_at_once() -> Proc[None]:
        raise ValueError("bad state")
        yield  # a generator

    def fails_on_the_answer() -> Proc[None]:
        (r,) = yield READ
        raise LookupError(r.code)

    h = _Harness()
    h.run(fails_at_once())
    h.run(fails_on_the_answer())
    h.driver.on_zk_response(ZkResponse(1, (ZkOpResult(NONODE),)))
    assert [(result, type(error), str(error)) for result, error in h.done] == [
        (None, ValueError, "bad state"), (None, LookupError, "NONODE")]
    assert h.driver.in_flight == 0


def test_a_procedure_without_effects_is_done_at_once() -> None:
    def proc() -> Proc[int]:
        return 42
        yield  # a generator

    h = _Harness()
    h.run(proc())
    assert h.done == [(42, None)] and h.actor.posted == [] and h.effects == []


def test_abandon_all_closes_every_suspended_procedure() -> None:
    closed: list[str] = []

    def proc(tag: str) -> Proc[None]:
        try:
            yield READ
        finally:
            closed.append(tag)

    h = _Harness()
    h.run(proc("a"))
    h.run(proc("b"))
    h.driver.abandon_all()
    assert closed == ["a", "b"] and h.driver.in_flight == 0 and h.done == []
    # their responses, arriving after, resume nothing; the ids keep counting
    assert h.driver.on_zk_response(ZkResponse(1, (ZkOpResult(OK),))) is False
    h.run(proc("c"))
    assert h.actor.posted[-1] == ("zk", ZkRequest(3, READ, "controller"))


def test_a_registered_ask_suspends_like_a_batch_and_shares_the_request_ids() -> None:
    def proc() -> Proc[tuple[Any, Any]]:
        (read,) = yield READ
        answer = yield TryTopicDeletion()
        return read.code, answer

    h = _Harness()
    h.run(proc())
    h.driver.on_zk_response(ZkResponse(1, (ZkOpResult(OK),)))
    assert h.actor.posted[-1] == ("topic-deletion", ("asked", 2, TryTopicDeletion())) and h.done == []
    assert h.driver.resume(1, "no one waits for 1") is False
    assert h.driver.resume(2, "the queue") is True
    assert h.done == [(("OK", "the queue"), None)] and h.driver.in_flight == 0


def test_an_answer_with_an_error_is_thrown_where_the_procedure_waited() -> None:
    def proc() -> Proc[str]:
        try:
            yield TryTopicDeletion()
        except LookupError as e:
            (read,) = yield READ  # it may go on after catching it
            return f"caught {e}, then {read.code}"
        return "not raised"

    def uncaught() -> Proc[None]:
        yield TryTopicDeletion()

    h = _Harness()
    h.run(proc())
    h.run(uncaught())
    h.driver.resume(1, None, LookupError("gone"))
    h.driver.on_zk_response(ZkResponse(3, (ZkOpResult(NONODE),)))
    error = ValueError("moved")
    h.driver.resume(2, None, error)
    assert h.done == [("caught gone, then NONODE", None), (None, error)]
