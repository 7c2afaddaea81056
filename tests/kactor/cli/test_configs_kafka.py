"""kactor configs with --bootstrap-server, without a cluster: ConfigCommand's checks and messages for the options
the admin-API path adds, and its output lines (entries with synonyms, client quotas, Java's Double.toString)."""

from __future__ import annotations

import pytest

from kactor.cli import main
from kactor.cli.configs_kafka import entry_line, java_double, quota_lines
from zk_bridge.server import free_port

B = f"127.0.0.1:{free_port()}"


@pytest.mark.parametrize(("argv", "message"), [
    (["--entity-type", "topics", "--describe"],
     "One of the required --bootstrap-server or --zookeeper arguments must be specified"),
    (["--bootstrap-server", B, "--zookeeper", "127.0.0.1:1", "--entity-type", "topics", "--describe"],
     "Only one of --bootstrap-server or --zookeeper must be specified"),
    (["--zookeeper", "127.0.0.1:1", "--entity-type", "topics", "--describe", "--all"],
     "--bootstrap-server must be specified for --all"),
    (["--bootstrap-server", B, "--entity-type", "groups", "--describe"],
     "Invalid entity type groups, the entity type must be one of topics,clients,users,brokers,broker-loggers with "
     "the --bootstrap-server argument"),
    (["--bootstrap-server", B, "--entity-type", "users", "--entity-type", "topics", "--describe"],
     "Only 'users' and 'clients' entity types may be specified together"),
    (["--bootstrap-server", B, "--entity-type", "users", "--alter", "--add-config", "producer_byte_rate=1"],
     "an entity-name or default entity must be specified with --alter of users, clients or brokers"),
    (["--bootstrap-server", B, "--user", "u", "--entity-name", "x", "--describe"],
     "--entity-{type,name,default} should not be used in conjunction with specific entity flags"),
    (["--bootstrap-server", B, "--entity-type", "brokers", "--entity-name", "one", "--describe"],
     "The entity name for brokers must be a valid integer broker id, but it is: one"),
    (["--bootstrap-server", B, "--entity-type", "broker-loggers", "--describe"],
     "an entity name must be specified with --describe of broker-loggers"),
    (["--bootstrap-server", B, "--user", "u", "--alter", "--add-config", "acks=1"],
     "Only quota configs can be added for 'users' using --bootstrap-server. Unexpected config names: Set(acks)"),
])
def test_option_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["configs", *argv]) == 1
    assert capsys.readouterr().err == f"kactor configs: {message}\n"


def test_entry_lines() -> None:
    assert entry_line({"name": "log.retention.ms", "value": "7", "is_sensitive": False, "synonyms": [
        {"name": "log.retention.ms", "value": "7", "source": 2},
        {"name": "log.retention.hours", "value": "168", "source": 5}]}) == (
        "  log.retention.ms=7 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=7, "
        "DEFAULT_CONFIG:log.retention.hours=168}")
    assert entry_line({"name": "ssl.key.password", "value": None, "is_sensitive": True, "synonyms": []}) == (
        "  ssl.key.password=null sensitive=true synonyms={}")


@pytest.mark.parametrize(("value", "text"), [(1024, "1024.0"), (50.5, "50.5"), (2e7, "2.0E7"),
                                             (12345678, "1.2345678E7"), (0.0001, "1.0E-4"), (0, "0.0"),
                                             (1.5e-5, "1.5E-5")])
def test_java_double(value: float, text: str) -> None:
    assert java_double(value) == text


def test_quota_lines() -> None:
    assert quota_lines([({"user": "alice"}, {"producer_byte_rate": 1024.0}),
                        ({"user": None, "client-id": "app"}, {"consumer_byte_rate": 2e7, "request_percentage": 50.0})]
                       ) == ["Configs for user-principal 'alice' are producer_byte_rate=1024.0",
                             "Configs for the default user-principal, client-id 'app' are consumer_byte_rate=2.0E7, "
                             "request_percentage=50.0"]


def test_quotas_through_the_client_quota_apis(monkeypatch: pytest.MonkeyPatch) -> None:
    """AlterClientQuotas after DescribeClientQuotas found the keys to delete set; the requests' bodies as 2.6's
    AdminClient builds them (a default entity is a null name)."""
    from kactor.cli import configs_kafka, kafka_wire

    sent: list[tuple[int, dict]] = []
    answers = {48: {"error_code": 0, "error_message": None, "entries": [
        {"entity": [{"entity_type": "client-id", "entity_name": None}], "values": [
            {"key": "consumer_byte_rate", "value": 2e7}]}]},
        49: {"entries": [{"error_code": 0, "error_message": None, "entity": []}]}}
    monkeypatch.setattr(kafka_wire, "supports", lambda bootstrap, api, timeout_s: True)

    def node_request(bootstrap, node, api_key, version, body, timeout_s):  # type: ignore[no-untyped-def]
        sent.append((api_key, body))
        return answers[api_key]
    monkeypatch.setattr(kafka_wire, "node_request", node_request)
    out: list[str] = []
    configs_kafka.alter_quotas("b:1", out.append, ["clients"], [""], {"producer_byte_rate": "1024"},
                               ["consumer_byte_rate"], 5)
    assert out == ["Completed updating default config for clients in the cluster."]
    assert sent == [
        (48, {"components": [{"entity_type": "client-id", "match_type": 1, "match": None}], "strict": True}),
        (49, {"entries": [{"entity": [{"entity_type": "client-id", "entity_name": None}], "ops": [
            {"key": "producer_byte_rate", "value": 1024.0, "remove": False},
            {"key": "consumer_byte_rate", "value": 0.0, "remove": True}]}], "validate_only": False})]
    with pytest.raises(Exception, match="^Invalid config\\(s\\): request_percentage$"):
        configs_kafka.alter_quotas("b:1", out.append, ["clients"], [""], {}, ["request_percentage"], 5)
    with pytest.raises(Exception, match="^Cannot parse quota configuration value for producer_byte_rate: fast$"):
        configs_kafka.alter_quotas("b:1", out.append, ["clients"], [""], {"producer_byte_rate": "fast"}, [], 5)
