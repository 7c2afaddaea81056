"""The pytest plugin (entry point ``pytest11``: ``kactor = kactor.testing.plugin``): a real Kafka 2.6 cluster for a
project's tests, started once per session when a test first asks for it.

Fixtures:

* ``kafka_cluster`` (session): a started `kactor.testing.cluster.KafkaTestCluster` — one embedded ZooKeeper and
  ``--kactor-brokers`` brokers — with its fault helpers (kill_broker, restart_broker, pause_broker, partition,
  slow_link, expire_session, wait_for_isr, controller(), ...). What a test breaks is healed after it.
* ``bootstrap_servers`` (session): the brokers' ``host:port`` list.
* ``kafka_client_config`` (session): librdkafka's settings to reach the cluster (with TLS/SASL when secured).
* ``kafka_topic`` (function): a factory of topics unique to the test, deleted after it unless ``--kactor-keep``.

Options (or ini keys ``kactor_brokers``, ``kactor_security``, ``kactor_overrides``): ``--kactor-brokers N``,
``--kactor-security PROTOCOL``, ``--kactor-override KEY=VALUE`` (repeatable), ``--kactor-keep``.

Loaded in every pytest session of an environment where kactor is installed, so it costs nothing until a test asks
for one of its fixtures: no cluster module is imported and nothing is started before then.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from kactor.testing.cluster import KafkaTestCluster, TopicFactory

SECURITY = ("plaintext", "ssl", "sasl_plaintext", "sasl_ssl")  # kactor.secure_cluster.PROTOCOLS, not imported here
_CLUSTER_KEY = pytest.StashKey["KafkaTestCluster"]()
_SETTINGS_KEY = pytest.StashKey[tuple[int, str, list[str]]]()  # brokers, security, overrides


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kactor", "kactor: a real Kafka 2.6 cluster (kafka_cluster, kafka_topic fixtures)")
    group.addoption("--kactor-brokers", type=int, default=None, metavar="N",
                    help="brokers of the session's kafka_cluster (default 3, or the kactor_brokers ini key)")
    group.addoption("--kactor-security", choices=SECURITY, default=None,
                    help="the brokers' listener: plaintext (default), ssl, sasl_plaintext or sasl_ssl")
    group.addoption("--kactor-override", action="append", default=[], metavar="KEY=VALUE",
                    help="a broker config for every broker, Kafka's name (repeatable)")
    group.addoption("--kactor-keep", action="store_true", default=False,
                    help="keep the topics kafka_topic created and the cluster's folder (log dirs, broker logs)")
    parser.addini("kactor_brokers", "brokers of the session's kafka_cluster", default="3")
    parser.addini("kactor_security", "the brokers' security protocol", default="plaintext")
    parser.addini("kactor_overrides", "broker configs, KEY=VALUE a line", type="linelist", default=[])


def _brokers(config: pytest.Config) -> int:
    given = config.getoption("--kactor-brokers")
    raw = given if given is not None else config.getini("kactor_brokers")
    try:
        brokers = int(raw)
    except ValueError:
        raise pytest.UsageError(f"kactor_brokers must be a number of brokers, not {raw!r}") from None
    if brokers < 1:
        raise pytest.UsageError(f"--kactor-brokers must be at least 1, not {brokers}")
    return brokers


def _security(config: pytest.Config) -> str:
    security = config.getoption("--kactor-security") or str(config.getini("kactor_security")).strip().lower()
    if security not in SECURITY:
        raise pytest.UsageError(f"kactor_security must be one of {', '.join(SECURITY)}, not {security!r}")
    return security


def _overrides(config: pytest.Config) -> list[str]:
    given = [*config.getini("kactor_overrides"), *config.getoption("--kactor-override")]
    bad = [o for o in given if "=" not in o or not o.split("=", 1)[0].strip()]
    if bad:
        raise pytest.UsageError(f"a kactor broker override is KEY=VALUE, not {bad[0]!r}")
    return given


def pytest_configure(config: pytest.Config) -> None:
    """The options checked as the session starts (a mistyped one is a usage error, not a failing test): no import,
    nothing started."""
    config.stash[_SETTINGS_KEY] = (_brokers(config), _security(config), _overrides(config))


def missing_prerequisites() -> str | None:
    """Why no cluster can start here (no java, no ZooKeeper jar), as the skip message says it; None if it can."""
    from zk_bridge.server import ZooKeeperUnavailable, check_prerequisites

    try:
        check_prerequisites()
    except ZooKeeperUnavailable as e:
        return f"kactor: no Kafka cluster can start here: {e}"
    return None


@pytest.fixture(scope="session")
def kafka_cluster(request: pytest.FixtureRequest) -> Iterator[KafkaTestCluster]:
    """The session's Kafka cluster, started on first use; skipped (with why) where Java or ZooKeeper is missing."""
    why = missing_prerequisites()
    if why is not None:
        pytest.skip(why)
    from kactor.testing.cluster import KafkaTestCluster

    config = request.config
    keep = bool(config.getoption("--kactor-keep"))
    brokers, security, overrides = config.stash[_SETTINGS_KEY]
    cluster = KafkaTestCluster(brokers, overrides=overrides, security=security, keep=keep)
    cluster.start()
    config.stash[_CLUSTER_KEY] = cluster
    try:
        yield cluster
    finally:
        del config.stash[_CLUSTER_KEY]
        cluster.stop()
        if keep:
            reporter = config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                reporter.write_line(f"kactor: the cluster's folder is kept: {cluster.lc.base_dir}")


@pytest.fixture(scope="session")
def bootstrap_servers(kafka_cluster: KafkaTestCluster) -> str:
    """``host:port,...`` of the session cluster's brokers."""
    return kafka_cluster.bootstrap_servers


@pytest.fixture(scope="session")
def kafka_client_config(kafka_cluster: KafkaTestCluster) -> dict[str, str]:
    """librdkafka's (confluent-kafka's) settings to reach the session cluster; a copy each test may change."""
    return dict(kafka_cluster.client_config)


@pytest.fixture
def kafka_topic(request: pytest.FixtureRequest, kafka_cluster: KafkaTestCluster) -> Iterator[TopicFactory]:
    """``kafka_topic(partitions=1, replication_factor=None, config=None, name=None)`` → the name of a new topic of
    this test's own, its leaders elected; deleted after the test unless ``--kactor-keep``."""
    from kactor.testing.cluster import TopicFactory

    factory = TopicFactory(kafka_cluster, request.node.name, keep=bool(request.config.getoption("--kactor-keep")))
    try:
        yield factory
    finally:
        factory.cleanup()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: Any) -> None:
    """After a test on the session cluster: heal what it broke (partitions, paused or dead brokers), so the next
    test starts on a whole cluster. Nothing to do, and nothing imported, in a session without the cluster."""
    cluster = item.config.stash.get(_CLUSTER_KEY, None)
    if cluster is not None and nextitem is not None:
        cluster.heal()
