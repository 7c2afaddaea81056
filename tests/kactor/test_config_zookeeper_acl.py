"""zookeeper.set.acl and kactor.zookeeper.digest in kactor/config.py: a secure broker needs its ZooKeeper login (as
KafkaServer.initZkClient refuses zookeeper.set.acl=true without a JAAS login), the login's form, and that it is a
secret nowhere shown; the broker hands both to its ZooKeeper session (kactor/broker_process.zookeeper_security)."""

from __future__ import annotations

import pytest

from kactor.broker_process import zookeeper_security
from kactor.config import ConfigError, build_config

BASE = {"broker.id": "1", "zookeeper.connect": "127.0.0.1:2181"}


def error(**settings: str) -> str:
    with pytest.raises(ConfigError) as e:
        build_config({**BASE, **settings})
    return str(e.value)


def test_set_acl_without_a_login_refuses_to_start() -> None:
    assert error(**{"zookeeper.set.acl": "true"}) == (
        "zookeeper.set.acl is true, but no ZooKeeper login is configured: set kactor.zookeeper.digest=<user>:"
        "<password> (kactor authenticates to ZooKeeper with digest, not with a JAAS login file)")


@pytest.mark.parametrize("value", ["alice", ":secret", "nocolon-at-all"])
def test_a_malformed_login_is_refused_without_repeating_it(value: str) -> None:
    message = error(**{"kactor.zookeeper.digest": value})
    assert message == "Invalid value [hidden] for configuration kactor.zookeeper.digest: expected <user>:<password>"
    assert value not in message


def test_the_login_and_set_acl_reach_the_zookeeper_session_and_the_login_stays_hidden() -> None:
    config = build_config({**BASE, "zookeeper.set.acl": "true", "kactor.zookeeper.digest": " kactor:s3:cret "})
    assert zookeeper_security(config) == {"digest": "kactor:s3:cret", "set_acl": True}
    assert config.non_default()["kactor.zookeeper.digest"] == "[hidden]"
    assert config.non_default()["zookeeper.set.acl"] is True
    assert not any("s3:cret" in line for _, line in config.startup_notes())


def test_by_default_the_session_is_open_and_unauthenticated() -> None:
    config = build_config(BASE)
    assert zookeeper_security(config) == {"digest": None, "set_acl": False}
    # a login without set.acl authenticates but creates open znodes (Kafka: a JAAS login with set.acl=false)
    config = build_config({**BASE, "kactor.zookeeper.digest": "kactor:s3cret"})
    assert zookeeper_security(config) == {"digest": "kactor:s3cret", "set_acl": False}
