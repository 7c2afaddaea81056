"""zookeeper.set.acl and kactor.zookeeper.digest in kactor/config.py: a secure broker needs its ZooKeeper login (as
KafkaServer.initZkClient refuses zookeeper.set.acl=true without a JAAS login), the login's form, and that it is a
secret nowhere shown; the broker hands both to its ZooKeeper session (kactor/broker_process.zookeeper_security)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kactor.broker_process import zookeeper_security
from kactor.config import ConfigError, build_config, load_config

BASE = {"broker.id": "1", "zookeeper.connect": "127.0.0.1:2181"}


def error(**settings: str) -> str:
    with pytest.raises(ConfigError) as e:
        build_config({**BASE, **settings})
    return str(e.value)


def test_set_acl_without_a_login_refuses_to_start_naming_both_ways() -> None:
    assert error(**{"zookeeper.set.acl": "true"}) == (
        "zookeeper.set.acl is true, but no ZooKeeper login is configured: name a JAAS file whose Client section "
        "logs in with org.apache.zookeeper.server.auth.DigestLoginModule (username, password) in "
        "KAFKA_OPTS=-Djava.security.auth.login.config=<file>, as for Kafka (SASL DIGEST-MD5), or set "
        "kactor.zookeeper.digest=<user>:<password> (a ZooKeeper digest login)")


@pytest.mark.parametrize("value", ["alice", ":secret", "nocolon-at-all"])
def test_a_malformed_login_is_refused_without_repeating_it(value: str) -> None:
    message = error(**{"kactor.zookeeper.digest": value})
    assert message == "Invalid value [hidden] for configuration kactor.zookeeper.digest: expected <user>:<password>"
    assert value not in message


def test_the_login_and_set_acl_reach_the_zookeeper_session_and_the_login_stays_hidden() -> None:
    config = build_config({**BASE, "zookeeper.set.acl": "true", "kactor.zookeeper.digest": " kactor:s3:cret "})
    assert zookeeper_security(config) == {"digest": "kactor:s3:cret", "set_acl": True, "sasl": None}
    assert config.non_default()["kactor.zookeeper.digest"] == "[hidden]"
    assert config.non_default()["zookeeper.set.acl"] is True
    assert not any("s3:cret" in line for _, line in config.startup_notes())


def test_by_default_the_session_is_open_and_unauthenticated() -> None:
    config = build_config(BASE)
    assert zookeeper_security(config) == {"digest": None, "set_acl": False, "sasl": None}
    # a login without set.acl authenticates but creates open znodes (Kafka: a JAAS login with set.acl=false)
    config = build_config({**BASE, "kactor.zookeeper.digest": "kactor:s3cret"})
    assert zookeeper_security(config) == {"digest": "kactor:s3cret", "set_acl": False, "sasl": None}


# -- the SASL login Kafka takes: KAFKA_OPTS=-Djava.security.auth.login.config=<JAAS file>, its Client section ---------
CLIENT_JAAS = ('Client {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n'
               '  username="kafka"\n  password="zk-pa$$";\n};\n')


def jaas_env(tmp_path: Path, text: str, *more: str) -> dict[str, str]:
    path = tmp_path / "zk_jaas.conf"
    path.write_text(text)
    return {"KAFKA_OPTS": " ".join(("-Xmx1g", f"-Djava.security.auth.login.config={path}", *more))}


def test_set_acl_with_the_jaas_client_login_of_kafka_opts_starts_and_hands_it_to_the_session(tmp_path: Path) -> None:
    config = load_config(None, [*(f"{k}={v}" for k, v in BASE.items()), "zookeeper.set.acl=true"],
                         environ=jaas_env(tmp_path, CLIENT_JAAS))
    security = zookeeper_security(config)
    assert security["set_acl"] is True and security["digest"] is None
    login = security["sasl"]
    assert (login.username, login.password, login.section) == ("kafka", "zk-pa$$", "Client")
    assert "zk-pa$$" not in repr(config) and "zk-pa$$" not in repr(login)


def test_both_logins_go_to_the_session_side_by_side(tmp_path: Path) -> None:
    config = load_config(None, [*(f"{k}={v}" for k, v in BASE.items()), "zookeeper.set.acl=true",
                                "kactor.zookeeper.digest=kactor:s3cret"], environ=jaas_env(tmp_path, CLIENT_JAAS))
    security = zookeeper_security(config)
    assert security["digest"] == "kactor:s3cret" and security["sasl"].username == "kafka"


def test_the_section_named_by_zookeeper_sasl_clientconfig_is_the_login(tmp_path: Path) -> None:
    text = CLIENT_JAAS.replace("Client {", "KactorZk {")
    env = jaas_env(tmp_path, text)
    # without the property, the Client section is looked for: none, so no login and set.acl is refused
    with pytest.raises(ConfigError, match="no ZooKeeper login is configured"):
        load_config(None, [*(f"{k}={v}" for k, v in BASE.items()), "zookeeper.set.acl=true"], environ=env)
    env = jaas_env(tmp_path, text, "-Dzookeeper.sasl.clientconfig=KactorZk")
    config = load_config(None, [*(f"{k}={v}" for k, v in BASE.items()), "zookeeper.set.acl=true"], environ=env)
    assert config.zookeeper_sasl is not None and config.zookeeper_sasl.section == "KactorZk"


@pytest.mark.parametrize(("text", "more", "expected"), [
    ('Client { com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/k" '
     'principal="kafka/h@R"; };', (), "Krb5LoginModule (Kerberos, SASL GSSAPI) is not supported"),
    (CLIENT_JAAS, ("-Dzookeeper.sasl.client=false",),
     "JAAS configuration is present, but system property zookeeper.sasl.client is set to false"),
    ("Client { org.apache.zookeeper.server.auth.DigestLoginModule required username=kafka }", (),
     "expected [;] after the options of org.apache.zookeeper.server.auth.DigestLoginModule"),
])
def test_a_jaas_login_kactor_cannot_use_refuses_to_start(tmp_path: Path, text: str, more: tuple[str, ...],
                                                        expected: str) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(None, [f"{k}={v}" for k, v in BASE.items()], environ=jaas_env(tmp_path, text, *more))
    assert expected in str(e.value)


def test_a_jaas_file_that_cannot_be_read_refuses_to_start(tmp_path: Path) -> None:
    missing = tmp_path / "nope.conf"
    with pytest.raises(ConfigError) as e:
        load_config(None, [f"{k}={v}" for k, v in BASE.items()],
                    environ={"KAFKA_OPTS": f"-Djava.security.auth.login.config={missing}"})
    assert str(e.value).startswith(f"cannot read the JAAS file {missing} (-Djava.security.auth.login.config in "
                                   "KAFKA_OPTS): No such file or directory")
