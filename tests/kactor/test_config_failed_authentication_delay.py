"""connection.failed.authentication.delay.ms in kactor/config.py (KIP-306): Kafka 2.6.3's INT, at least 0, default 100,
below connections.max.idle.ms (KafkaConfig.validateValues' words); kactor acts on it — every SASL listener holds a
failed authentication that long (edges/net/inbound.py) — so it is no longer noted at start-up as a key it ignores."""

from __future__ import annotations

import pytest

from kactor.config import ConfigError, build_config

BASE = {"broker.id": "1", "zookeeper.connect": "127.0.0.1:2181",
        "listeners": "PLAINTEXT://127.0.0.1:9092,SASL_PLAINTEXT://127.0.0.1:9093",
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config":
            'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";'}
KEY = "connection.failed.authentication.delay.ms"


def test_every_sasl_listener_takes_the_delay() -> None:
    assert build_config(BASE).listener_sasl("SASL_PLAINTEXT").failed_authentication_delay_ms == 100
    config = build_config({**BASE, KEY: "250"})
    assert config.listener_sasl("SASL_PLAINTEXT").failed_authentication_delay_ms == 250
    assert not [line for _, line in config.startup_notes() if KEY in line]
    assert build_config({**BASE, KEY: "0"}).listener_sasl("SASL_PLAINTEXT").failed_authentication_delay_ms == 0


@pytest.mark.parametrize(("settings", "message"), [
    ({KEY: "-1"}, "Invalid value -1 for configuration connection.failed.authentication.delay.ms: Value must be at "
                  "least 0"),
    ({KEY: "600000"}, "requirement failed: connection.failed.authentication.delay.ms=600000 should always be less "
                      "than connections.max.idle.ms=600000 to prevent failed authentication responses from timing "
                      "out"),
])
def test_kafkas_validation(settings: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        build_config({**BASE, **settings})
    assert str(e.value) == message
