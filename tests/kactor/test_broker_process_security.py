"""The broker process's security start-up (kactor/broker_process.py): the SASL listeners' CredentialCache is filled
from every /config/users/<user> before the listeners exist, and never reads ZooKeeper afterwards; with an authorizer
the kafka-server is told to wait for the ACLs before its listeners read a request."""

from __future__ import annotations

from kazoo.client import KazooClient

from core.security import scram
from core.security.credential_cache import CredentialCache
from core.security.scram import ScramMechanism
from kactor.broker_process import authorizer_inputs, scram_credentials, startup_inputs
from kactor.config import build_config
from messages.broker_lifecycle import BrokerStartup
from messages.security import AclAuthorizerInit
from messages.server_startup import AwaitAuthorizer
from protocol.zk import znodes

SHA512 = ScramMechanism.SCRAM_SHA_512


def test_the_credential_cache_is_loaded_at_start_and_reads_zookeeper_no_more(zk: KazooClient) -> None:
    text = scram.scram_credential_config(SHA512, "password=alice-secret")
    for name, config in (("alice", {"SCRAM-SHA-512": text, "consumer_byte_rate": "10"}),
                         ("bob%40example.com", {"SCRAM-SHA-512": text}), ("<default>", {"producer_byte_rate": "1"}),
                         ("carol", {"consumer_byte_rate": "1"})):
        zk.create(f"/config/users/{name}", znodes.encode_config_entity(config).encode(), makepath=True)
    zk.create("/config/users/alice/clients/app", znodes.encode_config_entity({"request_percentage": "5"}).encode(),
              makepath=True)
    cache = scram_credentials(zk)
    assert isinstance(cache, CredentialCache)
    assert cache.users(SHA512) == {"alice", "bob@example.com"}
    assert cache("alice", SHA512) == scram.credential_from_string(text)
    zk.stop()  # ZooKeeper out of reach: the lookup answers from the cache all the same
    assert cache("alice", SHA512) == scram.credential_from_string(text)
    assert cache("carol", SHA512) is None


def test_with_an_authorizer_the_kafka_server_waits_for_the_acls() -> None:
    base = {"broker.id": "0", "zookeeper.connect": "127.0.0.1:2181", "listeners": "PLAINTEXT://127.0.0.1:0",
            "log.dirs": "unused"}
    assert authorizer_inputs(build_config(base)) == []
    cfg = build_config({**base, "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"})
    inputs = startup_inputs(cfg, "{}")
    to_server = [body for name, body in inputs if name == "kafka-server"]
    assert to_server[0] == AwaitAuthorizer() and isinstance(to_server[1], BrokerStartup)
    assert ("config-manager", AclAuthorizerInit(None, False)) in inputs
