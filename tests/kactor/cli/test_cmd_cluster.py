"""kactor cluster's port options, refused before anything starts: a range outside 1..65535, the two ranges
overlapping, a port already taken; and the restart line a dead broker gets (LocalCluster.restart_command)."""

from __future__ import annotations

import shlex
import socket

import pytest

from kactor.cli import main
from kactor.cluster import LocalCluster


@pytest.mark.parametrize(("argv", "message"), [
    (["--port-base", "65534"], "--port-base 65534: brokers 0..2 need ports 65534..65536, within 1..65535"),
    (["--port-base", "0"], "--port-base 0: brokers 0..2 need ports 0..2, within 1..65535"),
    (["--port-base", "20000", "--metrics-port-base", "20002"],
     "--port-base and --metrics-port-base overlap on port 20002"),
])
def test_port_options_are_usage_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", *argv]) == 2
    assert capsys.readouterr().err == f"kactor cluster: {message}\n"


def test_a_taken_port_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert main(["cluster", "--brokers", "1", "--port-base", str(port)]) == 1
    assert capsys.readouterr().err == f"kactor cluster: port {port} is already in use on 127.0.0.1\n"


def test_the_restart_line_starts_the_same_broker(tmp_path) -> None:
    lc = LocalCluster(2, zookeeper="127.0.0.1:2181/c", base_dir=str(tmp_path), overrides=["num.io.threads=8"],
                      ports={0: 9092, 1: 9093}, metrics_ports={0: 9200, 1: 9201})
    assert shlex.split(lc.restart_command(1)) == [
        "kactor", "broker", "--log-level", "INFO", "--override", "broker.id=1",
        "--override", "zookeeper.connect=127.0.0.1:2181/c", "--override", "listeners=PLAINTEXT://127.0.0.1:9093",
        "--override", f"log.dirs={tmp_path / 'broker-1'}", "--override", "kactor.metrics.port=9201",
        # fewer than 3 brokers: __consumer_offsets and __transaction_state get as many replicas as there are brokers,
        # as the cluster started
        "--override", "offsets.topic.replication.factor=2", "--override", "transaction.state.log.replication.factor=2",
        "--override", "num.io.threads=8"]
