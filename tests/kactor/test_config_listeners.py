"""kactor/config.py's listener rules against Kafka 2.6's KafkaConfig (listeners, advertisedListeners,
listenerSecurityProtocolMap, interBrokerListenerName, validateValues) and the /brokers/ids/<id> registration
KafkaServer.createBrokerInfo builds from them; error texts are Kafka's."""

from __future__ import annotations

import json

import pytest

from kactor.broker_process import registration_json
from kactor.config import ConfigError, build_config
from messages.common import EndPoint

BASE = {"broker.id": "1", "zookeeper.connect": "127.0.0.1:2181"}


def cfg(**settings: str):  # type: ignore[no-untyped-def]
    return build_config({**BASE, **{k.replace("_", "."): v for k, v in settings.items()}})


def error(**settings: str) -> str:
    with pytest.raises(ConfigError) as e:
        cfg(**settings)
    return str(e.value)


def test_defaults_are_kafkas_with_a_loopback_listener() -> None:
    c = cfg()
    assert c["listener.security.protocol.map"] == ("PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,"
                                                   "SASL_SSL:SASL_SSL")
    assert c["security.inter.broker.protocol"] == "PLAINTEXT" and c["inter.broker.listener.name"] is None
    assert c.listeners == (EndPoint("127.0.0.1", 9092, "PLAINTEXT", "PLAINTEXT"),)
    assert c.advertised_listeners == c.listeners  # none advertised: the listeners are
    assert c.inter_broker_listener_name == "PLAINTEXT"
    assert c.loopback_only
    assert "listener.security.protocol.map" not in c.non_default()


def test_named_listeners_with_a_map_and_an_inter_broker_listener() -> None:
    c = cfg(listeners="internal://198.18.0.10:9092,EXTERNAL://127.0.0.1:9093",
            listener_security_protocol_map="INTERNAL:PLAINTEXT, external:plaintext",
            advertised_listeners="INTERNAL://b1.example:9092,EXTERNAL://127.0.0.1:9093",
            inter_broker_listener_name="internal")
    assert c.listeners == (EndPoint("198.18.0.10", 9092, "INTERNAL", "PLAINTEXT"),
                           EndPoint("127.0.0.1", 9093, "EXTERNAL", "PLAINTEXT"))
    assert c.advertised_listeners[0] == EndPoint("b1.example", 9092, "INTERNAL", "PLAINTEXT")
    assert c.inter_broker_listener_name == "INTERNAL"  # ListenerName.normalised
    assert not c.loopback_only


def test_security_inter_broker_protocol_names_the_listener_when_no_name_is_given() -> None:
    c = cfg(listeners="PLAINTEXT://127.0.0.1:9092", security_inter_broker_protocol="plaintext")
    assert c.inter_broker_listener_name == "PLAINTEXT"


def test_loopback_only_looks_at_bound_and_advertised_hosts() -> None:
    assert cfg(listeners="PLAINTEXT://localhost:9092").loopback_only
    assert cfg(listeners="PLAINTEXT://[::1]:9092").loopback_only
    assert cfg(listeners="PLAINTEXT://:9092").loopback_only  # an empty host binds loopback in kactor
    assert not cfg(listeners="PLAINTEXT://127.0.0.1:9092", advertised_listeners="PLAINTEXT://10.1.2.3:9092").loopback_only
    assert not cfg(listeners="PLAINTEXT://kafka1.example.net:9092").loopback_only


@pytest.mark.parametrize(("settings", "message"), [
    ({"listeners": "INTERNAL://127.0.0.1:9092"},
     "Error creating broker listeners from 'INTERNAL://127.0.0.1:9092': No security protocol defined for listener "
     "INTERNAL"),
    ({"listeners": "PLAINTEXT:/127.0.0.1:9092"},
     "Error creating broker listeners from 'PLAINTEXT:/127.0.0.1:9092': Unable to parse PLAINTEXT:/127.0.0.1:9092 to "
     "a broker endpoint"),
    ({"listeners": "PLAINTEXT://127.0.0.1:9092,PLAINTEXT://127.0.0.1:9093"},
     "requirement failed: Each listener must have a different name, listeners: "
     "PLAINTEXT://127.0.0.1:9092,PLAINTEXT://127.0.0.1:9093"),
    ({"listeners": "A://127.0.0.1:9092,B://127.0.0.2:9092", "listener.security.protocol.map": "A:PLAINTEXT,B:PLAINTEXT",
      "inter.broker.listener.name": "A"},
     "requirement failed: Each listener must have a different port, listeners: A://127.0.0.1:9092,B://127.0.0.2:9092"),
    ({"listeners": "INTERNAL://127.0.0.1:9092", "listener.security.protocol.map": "INTERNAL:PLAINTEXT"},
     "requirement failed: inter.broker.listener.name must be a listener name defined in advertised.listeners. The "
     "valid options based on currently configured listeners are INTERNAL"),
    ({"listeners": "A://127.0.0.1:9092", "listener.security.protocol.map": "A:PLAINTEXT,B:PLAINTEXT",
      "advertised.listeners": "A://127.0.0.1:9092,B://127.0.0.1:9093", "inter.broker.listener.name": "A"},
     "requirement failed: advertised.listeners listener names must be equal to or a subset of the ones defined in "
     "listeners. Found A,B. The valid options based on the current configuration are A"),
    ({"listeners": "PLAINTEXT://0.0.0.0:9092"},
     "requirement failed: advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP "
     "address."),
    ({"inter.broker.listener.name": "PLAINTEXT", "security.inter.broker.protocol": "PLAINTEXT"},
     "Only one of inter.broker.listener.name and security.inter.broker.protocol should be set."),
    ({"inter.broker.listener.name": "REPLICATION"},
     "Listener with name REPLICATION defined in inter.broker.listener.name not found in "
     "listener.security.protocol.map."),
    ({"listener.security.protocol.map": "PLAINTEXT:PLAINTXT"},
     "Invalid security protocol `PLAINTXT` defined in listener.security.protocol.map"),
    ({"security.inter.broker.protocol": "TLS"},
     "Invalid security protocol `TLS` defined in security.inter.broker.protocol"),
    ({"listener.security.protocol.map": "PLAINTEXT"},
     "Error parsing configuration property 'listener.security.protocol.map': 'PLAINTEXT' is not NAME:PROTOCOL"),
])
def test_kafkas_listener_errors(settings: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        build_config({**BASE, **settings})
    assert str(e.value) == message


def test_registration_holds_every_advertised_endpoint_and_the_map() -> None:
    """KafkaServer.createBrokerInfo: the advertised endpoints, in order, port 0 replaced by the bound port; the v4
    JSON's host/port are the first PLAINTEXT endpoint's."""
    c = cfg(listeners="INTERNAL://198.18.0.10:0,EXTERNAL://127.0.0.1:9093",
            listener_security_protocol_map="INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT",
            inter_broker_listener_name="INTERNAL", broker_rack="r1")
    text = registration_json(c, 1_700_000_000_000, {"INTERNAL": 40123, "EXTERNAL": 9093})
    assert text == ('{"listener_security_protocol_map":{"INTERNAL":"PLAINTEXT","EXTERNAL":"PLAINTEXT"},'
                    '"endpoints":["INTERNAL://198.18.0.10:40123","EXTERNAL://127.0.0.1:9093"],"jmx_port":-1,'
                    '"port":40123,"host":"198.18.0.10","version":4,"timestamp":"1700000000000","rack":"r1"}')
    advertised = cfg(listeners="PLAINTEXT://198.18.0.10:9092", advertised_listeners="PLAINTEXT://b1.example:9092")
    assert json.loads(registration_json(advertised, 1))["endpoints"] == ["PLAINTEXT://b1.example:9092"]
