"""kactor cluster's port options, refused before anything starts: a range outside 1..65535, the two ranges
overlapping, a port already taken; and the restart line a dead broker gets (LocalCluster.restart_command)."""

from __future__ import annotations

import shlex
import socket
import types

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


# -- --zookeeper-sasl: the brokers' ZooKeeper SASL login, which the embedded ZooKeeper accepts ---------------------
def test_zookeeper_sasl_makes_the_brokers_jaas_login_and_set_acl(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from core.security.jaas import zk_client_login
    from kactor.config import load_config

    monkeypatch.delenv("KAFKA_OPTS", raising=False)
    lc = LocalCluster(1, base_dir=str(tmp_path), ports={0: 9092}, metrics_ports={0: 9200}, zookeeper_sasl=True)
    login = lc.zookeeper_sasl
    assert login is not None and login.username == "kafka" and len(login.password) >= 24
    jaas = tmp_path / "zookeeper-sasl" / "zk_client_jaas.conf"
    assert login.path == str(jaas) and jaas.stat().st_mode & 0o077 == 0
    assert zk_client_login(jaas.read_text()) == attrs_evolve_path(login, "")
    # the brokers get it as Kafka's do, in KAFKA_OPTS (not on their command lines), and zookeeper.set.acl=true
    assert lc.broker_env == {"KAFKA_OPTS": f"-Djava.security.auth.login.config={jaas}"}
    lc.zk = types.SimpleNamespace(connect_string="127.0.0.1:2181")  # type: ignore[assignment] # not started here
    args = lc.broker_args(0)
    assert "zookeeper.set.acl=true" in args and login.password not in " ".join(args)
    config = load_config(None, [a for a in args[args.index("--override"):] if a != "--override"], lc.broker_env)
    assert config["zookeeper.set.acl"] is True and config.zookeeper_sasl == login
    # the restart line of a dead broker carries the login too
    assert lc.restart_command(0).startswith(f"KAFKA_OPTS=-Djava.security.auth.login.config={jaas} kactor broker ")


def attrs_evolve_path(login, path: str):  # type: ignore[no-untyped-def]
    import attrs

    return attrs.evolve(login, path=path)


def test_a_kafka_opts_login_is_the_brokers_and_the_embedded_zookeepers(tmp_path, monkeypatch: pytest.MonkeyPatch
                                                                       ) -> None:
    jaas = tmp_path / "mine.conf"
    jaas.write_text('Client { org.apache.zookeeper.server.auth.DigestLoginModule required username="ops" '
                    'password="ops-pw"; };')
    monkeypatch.setenv("KAFKA_OPTS", f"-Djava.security.auth.login.config={jaas}")
    lc = LocalCluster(1, base_dir=str(tmp_path / "c"))
    assert lc.zookeeper_sasl is not None and (lc.zookeeper_sasl.username, lc.zookeeper_sasl.password) == (
        "ops", "ops-pw")
    assert lc.broker_env == {}  # the brokers inherit this process's KAFKA_OPTS


@pytest.mark.parametrize(("argv", "env", "message"), [
    (["--zookeeper", "127.0.0.1:2181", "--zookeeper-sasl"], None,
     "--zookeeper-sasl sets up the embedded ZooKeeper's SASL: with --zookeeper, name a JAAS file whose Client "
     "section that ZooKeeper accepts in KAFKA_OPTS=-Djava.security.auth.login.config=<file> instead"),
    (["--override", "zookeeper.set.acl=true"], "-Dx=y",
     "zookeeper.set.acl is true, but no ZooKeeper login is configured: name a JAAS file whose Client section logs "
     "in with org.apache.zookeeper.server.auth.DigestLoginModule (username, password) in "
     "KAFKA_OPTS=-Djava.security.auth.login.config=<file>, as for Kafka (SASL DIGEST-MD5), or set "
     "kactor.zookeeper.digest=<user>:<password> (a ZooKeeper digest login)"),
    ([], "-Djava.security.auth.login.config=/nonexistent/jaas.conf",
     "cannot read the JAAS file /nonexistent/jaas.conf (-Djava.security.auth.login.config in KAFKA_OPTS): "
     "No such file or directory"),
])
def test_zookeeper_login_problems_are_refused_before_anything_starts(argv: list[str], env: str | None, message: str,
                                                                     capsys: pytest.CaptureFixture[str],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAFKA_OPTS", raising=False)
    if env is not None:
        monkeypatch.setenv("KAFKA_OPTS", env)
    assert main(["cluster", "--brokers", "1", *argv]) in (1, 2)
    assert capsys.readouterr().err == f"kactor cluster: {message}\n"
