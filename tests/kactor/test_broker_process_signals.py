"""A broker logs a stop signal as it arrives (issue #39), as Kafka 2.6.3's LoggingSignalHandler does
("Terminating process due to signal SIGTERM"), before it acts on it: a stop that then hangs (a ZooKeeper gone, as in
KAFKA-9189) has said why it began."""

from __future__ import annotations

import logging
import os
import signal

import pytest

from kactor.broker_process import STOP_SIGNALS, BrokerProcess
from kactor.config import build_config


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_the_signal_is_logged_before_the_stop_is_asked(sig: signal.Signals, caplog: pytest.LogCaptureFixture,
                                                       monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    process = BrokerProcess(build_config({"broker.id": "0", "zookeeper.connect": "127.0.0.1:2181",
                                          "log.dirs": str(tmp_path)}))
    logged_when_asked: list[list[str]] = []
    monkeypatch.setattr(process, "request_shutdown",
                        lambda: logged_when_asked.append([r.getMessage() for r in caplog.records]))
    previous = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    try:
        with caplog.at_level(logging.INFO, logger="kactor.broker"):
            process.install_signal_handlers()
            os.kill(os.getpid(), sig)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    assert logged_when_asked == [["Registered signal handlers for TERM, INT, HUP",
                                  f"Terminating process due to signal {sig.name}"]]
