"""kactor/kafka_clients.py: the --bootstrap-server check and the configuration every tool's client starts from."""

from __future__ import annotations

import pytest

from kactor.kafka_clients import LIBRDKAFKA_LOGGER, client_config, parse_bootstrap


def test_bootstrap_lists_as_kafka_takes_them() -> None:
    assert parse_bootstrap("127.0.0.1:9092") == "127.0.0.1:9092"
    assert parse_bootstrap(" a:1, PLAINTEXT://b.example:65535 ") == "a:1,b.example:65535"
    assert parse_bootstrap("[::1]:9092") == "[::1]:9092"


@pytest.mark.parametrize("value", ["", "a", "a:", ":9092", "a:0", "a:65536", "a:1,", "a b:1"])
def test_malformed_bootstrap_lists_are_refused(value: str) -> None:
    with pytest.raises(ValueError):
        parse_bootstrap(value)


def test_client_config_routes_librdkafka_logs_and_takes_extra_properties_last() -> None:
    conf = client_config("h:1", "tool", {"client.id": "mine", "acks": "all"})
    assert conf["bootstrap.servers"] == "h:1"
    assert conf["logger"] is LIBRDKAFKA_LOGGER and not LIBRDKAFKA_LOGGER.propagate
    assert (conf["client.id"], conf["acks"]) == ("mine", "all")
