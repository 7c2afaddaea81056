"""core/security/jaas.py: a JAAS login file as Java's ConfigFile reads it, the -D system properties of KAFKA_OPTS,
and the ZooKeeper client's SASL login they make (a DigestLoginModule in the Client section, or the section
-Dzookeeper.sasl.clientconfig names); the ZooKeeper server's Server section kactor writes; the kazoo options."""

from __future__ import annotations

import pytest

from core.security.jaas import (
    JaasFileError,
    ZkSaslLogin,
    client_jaas_text,
    java_system_properties,
    parse_jaas_file,
    server_jaas_text,
    zk_client_login,
    zk_sasl_login,
)
from zk_bridge.executor import SECURE_DEFAULT_ACL, session_options

# the file Kafka's docs give a broker for ZooKeeper SASL, with a KafkaServer section beside it (not ZooKeeper's)
KAFKA_DOCS_JAAS = """
// the broker's listeners
KafkaServer {
    org.apache.kafka.common.security.plain.PlainLoginModule required
    username="admin"
    password="admin-secret"
    user_admin="admin-secret";
};
/* ZooKeeper */
Client{org.apache.zookeeper.server.auth.DigestLoginModule required
    username="kafka"
    password='kafka "quoted" \\\\ secret';};
"""


def test_a_file_of_several_sections_is_read_as_configfile_reads_it() -> None:
    sections = parse_jaas_file(KAFKA_DOCS_JAAS)
    assert list(sections) == ["KafkaServer", "Client"]
    (server,) = sections["KafkaServer"]
    assert server.login_module == "org.apache.kafka.common.security.plain.PlainLoginModule"
    assert server.control_flag == "REQUIRED" and server.options["user_admin"] == "admin-secret"
    (client,) = sections["Client"]
    assert client.options == {"username": "kafka", "password": 'kafka "quoted" \\ secret'}


@pytest.mark.parametrize(("text", "message"), [
    ("Client { a.B required; };\nClient { a.B required; };", "Can not specify multiple entries for Client"),
    ("Client a.B required; };", "section Client: expected [{]"),
    ("Client { a.B sometimes; };", "section Client: invalid control flag [sometimes] for a.B"),
    ("Client { a.B required k; };", "section Client: no value for option [k] of a.B"),
    ("Client { a.B required k=v };", "section Client: expected [;] after the options of a.B"),
    ("Client { a.B required k=v; }", "section Client: expected [;] after its [}]"),
])
def test_a_malformed_file_is_refused_with_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(JaasFileError) as e:
        parse_jaas_file(text)
    assert str(e.value) == message


def test_the_client_section_is_the_zookeeper_login() -> None:
    login = zk_client_login(KAFKA_DOCS_JAAS, path="/etc/kafka/jaas.conf")
    assert login == ZkSaslLogin("kafka", 'kafka "quoted" \\ secret', "Client", "/etc/kafka/jaas.conf")
    assert login.acl_id == ("sasl", "kafka")
    assert "secret" not in repr(login)
    # no Client section: no ZooKeeper SASL (Kafka's JaasUtils.isZkSecurityEnabled is false)
    assert zk_client_login(KAFKA_DOCS_JAAS.replace("Client{", "Other{")) is None
    assert zk_client_login(KAFKA_DOCS_JAAS.replace("Client{", "Other{"), "Other").username == "kafka"


@pytest.mark.parametrize(("section", "message"), [
    ('com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/etc/kafka/kafka.keytab" '
     'principal="kafka/broker1@EXAMPLE.COM";',
     "JAAS file f, section Client: com.sun.security.auth.module.Krb5LoginModule (Kerberos, SASL GSSAPI) is not "
     "supported: kactor logs in to ZooKeeper with SASL DIGEST-MD5 only (org.apache.zookeeper.server.auth."
     'DigestLoginModule username="..." password="...")'),
    ('org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b";',
     "JAAS file f, section Client: expected one org.apache.zookeeper.server.auth.DigestLoginModule, found "
     "org.apache.kafka.common.security.plain.PlainLoginModule"),
    ('org.apache.zookeeper.server.auth.DigestLoginModule required username="kafka";',
     "JAAS file f, section Client: org.apache.zookeeper.server.auth.DigestLoginModule has no password"),
    ("", "JAAS file f, section Client: expected one org.apache.zookeeper.server.auth.DigestLoginModule, found no "
         "login module"),
])
def test_a_client_section_kactor_cannot_log_in_with_is_refused(section: str, message: str) -> None:
    with pytest.raises(JaasFileError) as e:
        zk_client_login(f"Client {{ {section} }};", path="f")
    assert str(e.value) == message


def test_kafka_opts_system_properties_are_the_jvm_s() -> None:
    opts = ("-Xmx1G -Djava.security.auth.login.config=/etc/kafka/zk_jaas.conf -Dflag "
            "'-Dzookeeper.sasl.clientconfig=My Client' -Dzookeeper.sasl.clientconfig=Zk -XX:+UseG1GC")
    assert java_system_properties(opts) == {"java.security.auth.login.config": "/etc/kafka/zk_jaas.conf",
                                            "flag": "", "zookeeper.sasl.clientconfig": "Zk"}
    assert java_system_properties("") == {}
    with pytest.raises(JaasFileError, match="KAFKA_OPTS cannot be split"):
        java_system_properties("-Dx='unterminated")


def test_the_environment_s_login_reads_the_file_kafka_opts_names() -> None:
    files = {"/etc/kafka/zk_jaas.conf": KAFKA_DOCS_JAAS}
    read = files.__getitem__
    env = {"KAFKA_OPTS": "-Djava.security.auth.login.config=file:/etc/kafka/zk_jaas.conf"}
    login = zk_sasl_login(env, read)
    assert login is not None and login.username == "kafka" and login.path == "file:/etc/kafka/zk_jaas.conf"
    login = zk_sasl_login({"KAFKA_OPTS": "-Djava.security.auth.login.config==/etc/kafka/zk_jaas.conf"}, read)
    assert login is not None and login.username == "kafka"  # ConfigFile's "==": this file only
    assert zk_sasl_login({}, read) is None
    assert zk_sasl_login({"KAFKA_OPTS": "-Xmx1G"}, read) is None
    # a JAAS file without the section, with zookeeper.sasl.client=false: no login, no error (nothing to disable)
    assert zk_sasl_login({"KAFKA_OPTS": env["KAFKA_OPTS"] + " -Dzookeeper.sasl.clientconfig=None "
                                                           "-Dzookeeper.sasl.client=false"}, read) is None

    def unreadable(path: str) -> str:
        raise FileNotFoundError(2, "No such file or directory")

    with pytest.raises(JaasFileError) as e:
        zk_sasl_login(env, unreadable)
    assert str(e.value) == ("cannot read the JAAS file file:/etc/kafka/zk_jaas.conf (-Djava.security.auth.login."
                            "config in KAFKA_OPTS): No such file or directory")


def test_the_files_kactor_writes_read_back() -> None:
    login = ZkSaslLogin("kafka", 'p"w\\d;}', path="x")
    assert zk_client_login(client_jaas_text(login)) == ZkSaslLogin("kafka", 'p"w\\d;}', "Client", "")
    (server,) = parse_jaas_file(server_jaas_text({"kafka": 'p"w\\d;}', "tool": "t"}))["Server"]
    assert server.login_module == "org.apache.zookeeper.server.auth.DigestLoginModule"
    assert server.options == {"user_kafka": 'p"w\\d;}', "user_tool": "t"}


def test_kazoo_gets_sasl_digest_md5_beside_or_without_the_digest_login() -> None:
    login = ZkSaslLogin("kafka", "pw")
    assert session_options(None, False, login) == {
        "sasl_options": {"mechanism": "DIGEST-MD5", "username": "kafka", "password": "pw"}}
    # set.acl with SASL alone is a secure session (no digest needed)
    options = session_options(None, True, login)
    assert options["default_acl"] == SECURE_DEFAULT_ACL and "auth_data" not in options
    both = session_options("kactor:s3cret", True, login)
    assert both["auth_data"] == [("digest", "kactor:s3cret")] and both["sasl_options"]["username"] == "kafka"
    # kazoo adds its service name to the dict it is given: each session gets a dict of its own
    assert login.kazoo_sasl_options() is not login.kazoo_sasl_options()
