"""KafkaController.process: how a failed event is logged and answered."""

from __future__ import annotations

import logging
from collections.abc import Generator
from typing import Any

import pytest

from core.controller.config import ControllerConfig
from core.controller.errors import KeeperError
from core.controller.kafka_controller import KafkaController
from messages import controller_events as ev
from messages.common import Errors
from messages.requests import ControlledShutdownResponse


def _failing(error: Exception) -> Any:
    def handler(event: Any) -> Generator[Any, Any, Any]:
        raise error
        yield  # a procedure, as every handler is

    return handler


def _process(c: KafkaController, event: Any) -> Any:
    proc = c.process(event)
    with pytest.raises(StopIteration) as done:
        next(proc)
    return done.value.value


@pytest.mark.parametrize("code", ["SESSIONEXPIRED", "CONNECTIONLOSS"])
def test_a_lost_session_is_one_line_without_a_stack(code: str, caplog: pytest.LogCaptureFixture) -> None:
    c = KafkaController(ControllerConfig(1))
    c._dispatch[ev.ControlledShutdown] = _failing(KeeperError(code, "/admin/preferred_replica_election"))
    with caplog.at_level(logging.ERROR, logger="kactor"):
        reply = _process(c, ev.ControlledShutdown(2, 5))
    assert reply == ControlledShutdownResponse(Errors.UNKNOWN_SERVER_ERROR)
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert record.getMessage() == (f"Error processing event ControlledShutdown: KeeperErrorCode = {code} "
                                   "for /admin/preferred_replica_election")
    assert not record.exc_info


def test_other_errors_keep_their_traceback(caplog: pytest.LogCaptureFixture) -> None:
    c = KafkaController(ControllerConfig(1))
    c._dispatch[ev.ControlledShutdown] = _failing(KeeperError("NOTEMPTY", "/brokers/topics/t"))
    with caplog.at_level(logging.ERROR, logger="kactor"):
        _process(c, ev.ControlledShutdown(2, 5))
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert record.getMessage().startswith("Error processing event ControlledShutdown(")
    assert record.exc_info is not None and record.exc_info[0] is KeeperError
