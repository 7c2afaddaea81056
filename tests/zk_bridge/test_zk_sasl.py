"""ZooKeeper SASL (DIGEST-MD5) on a real ZooKeeper that kactor starts with SASLAuthenticationProvider and a JAAS
Server section (EmbeddedZooKeeper(sasl_users=...)): a broker session logged in from a JAAS Client section creates
every znode with ZkData.defaultAcls for its identity sasl:<username>, beside the digest identity when it has both
logins; a wrong password is refused at connect with one line; a tool (admin_zk.zk_session) given KAFKA_OPTS logs in
and writes as the brokers do, and without it is refused NoAuth."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kazoo.exceptions import NoAuthError
from kazoo.security import ACL, Id, make_digest_acl_credential
from zk_test_helpers import DEADLINE_S

from core.security.jaas import ZkSaslLogin, client_jaas_text
from kactor.admin.zk_session import zk_session
from messages.zk import OK, Create, ZkBatch, ZkOpResult
from tests.support.kazoo_clients import kazoo_client
from zk_bridge.admin import IllegalArgumentException, ZooKeeperUnreachable
from zk_bridge.admin.admin_zk import AdminZkClient
from zk_bridge.executor import ZkExecutor, connect
from zk_bridge.executor import ZooKeeperUnreachable as BrokerZooKeeperUnreachable
from zk_bridge.server import EmbeddedZooKeeper, ZooKeeperUnavailable, check_prerequisites

LOGIN = ZkSaslLogin("kafka", "zk-sasl-s3cret")
SASL_ALL = ACL(31, Id("sasl", "kafka"))
WORLD_READ = ACL(1, Id("world", "anyone"))
DIGEST = "kactor:s3cret"
DIGEST_ALL = ACL(31, Id("digest", make_digest_acl_credential("kactor", "s3cret")))

pytestmark = pytest.mark.cluster  # a ZooKeeper of its own (sasl_zk)


@pytest.fixture(scope="module")
def sasl_zk() -> Iterator[EmbeddedZooKeeper]:
    try:
        check_prerequisites()
        server = EmbeddedZooKeeper(tick_ms=200, sasl_users={LOGIN.username: LOGIN.password}).start(timeout=60)
    except ZooKeeperUnavailable as e:
        pytest.fail(str(e), pytrace=False)
    try:
        yield server
    finally:
        server.stop()


def run(ex: ZkExecutor, *ops: Any) -> tuple[ZkOpResult, ...]:
    box: queue.Queue = queue.Queue()
    ex.submit(ZkBatch(tuple(ops), -1), box.put)
    return box.get(timeout=DEADLINE_S)


def test_the_server_runs_sasl_from_a_jaas_file_of_its_own(sasl_zk: EmbeddedZooKeeper) -> None:
    assert sasl_zk.work_dir is not None
    cfg = (Path(sasl_zk.work_dir) / "zoo.cfg").read_text()
    assert "authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider" in cfg
    jaas = Path(sasl_zk.work_dir) / "zk_server_jaas.conf"
    assert 'user_kafka="zk-sasl-s3cret"' in jaas.read_text()
    assert jaas.stat().st_mode & 0o077 == 0  # the password file is the owner's only
    assert f"-Djava.security.auth.login.config={jaas}" in sasl_zk.proc.args  # type: ignore[union-attr]


@pytest.mark.parametrize("digest", [None, DIGEST], ids=["sasl", "sasl+digest"])
def test_a_sasl_session_creates_znodes_for_its_sasl_identity(sasl_zk: EmbeddedZooKeeper, digest: str | None
                                                              ) -> None:
    chroot = f"/{'both' if digest else 'sasl'}"
    client = connect(f"{sasl_zk.connect_string}{chroot}", 4000, 10, digest=digest, set_acl=True, sasl=LOGIN)
    executor = ZkExecutor(client)
    try:
        results = run(executor, Create("/brokers/topics/t", "{}", make_parents=True),
                      Create("/config/users/alice", "{}", make_parents=True))
        assert [r.code for r in results] == [OK, OK]
        owners = [SASL_ALL, DIGEST_ALL] if digest else [SASL_ALL]
        assert client.get_acls("/brokers/topics/t")[0] == [*owners, WORLD_READ]
        assert client.get_acls("/config/users/alice")[0] == owners  # ZkData.sensitivePath: no world read
        assert client.get_acls("/")[0] == [*owners, WORLD_READ]  # the chroot connect created
        with kazoo_client(f"{sasl_zk.connect_string}{chroot}") as stranger:
            with pytest.raises(NoAuthError):
                stranger.set("/brokers/topics/t", b"x")
            with pytest.raises(NoAuthError):
                stranger.create("/config/users/mallory", b"{}")
        if digest:  # the digest login alone still owns what both created: a digest-only run can follow
            with kazoo_client(f"{sasl_zk.connect_string}{chroot}", auth_data=[("digest", DIGEST)]) as old:
                old.set("/config/users/alice", b"{}")
    finally:
        executor.close()
        client.stop()
        client.close()


def test_a_wrong_password_is_refused_at_connect(sasl_zk: EmbeddedZooKeeper) -> None:
    with pytest.raises(BrokerZooKeeperUnreachable) as e:
        connect(sasl_zk.connect_string, 4000, 5, sasl=ZkSaslLogin("kafka", "wrong"))
    assert str(e.value).startswith(f"ZooKeeper at {sasl_zk.connect_string} refused the SASL login of 'kafka'")


def test_a_tool_logs_in_from_kafka_opts_as_kafka_s_tools_do(sasl_zk: EmbeddedZooKeeper, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    jaas = tmp_path / "tools_jaas.conf"
    jaas.write_text(client_jaas_text(LOGIN))
    connect_string = f"{sasl_zk.connect_string}/tools"
    monkeypatch.delenv("KACTOR_ZOOKEEPER_DIGEST", raising=False)
    monkeypatch.setenv("KAFKA_OPTS", f"-Djava.security.auth.login.config={jaas}")
    with zk_session(connect_string) as zk:
        admin = AdminZkClient(zk)
        admin.ensure_chroot()  # a secure tool creates its chroot as a broker would, SASL-logged-in
        admin.change_user_or_user_client_id_config("bob", {"producer_byte_rate": "1024"})
        assert zk.get_acls("/config/users/bob")[0] == [SASL_ALL]  # ZkData.sensitivePath
        assert zk.get_acls("/")[0] == [SASL_ALL, WORLD_READ]
        assert admin.fetch_entity_config("users", "bob") == {"producer_byte_rate": "1024"}
    monkeypatch.delenv("KAFKA_OPTS")
    with zk_session(connect_string) as zk:
        with pytest.raises(NoAuthError):
            zk.get("/config/users/bob")
        with pytest.raises(NoAuthError):
            AdminZkClient(zk).change_user_or_user_client_id_config("mallory", {"producer_byte_rate": "1024"})
    monkeypatch.setenv("KAFKA_OPTS", f"-Djava.security.auth.login.config={jaas}")
    jaas.write_text(client_jaas_text(ZkSaslLogin("kafka", "wrong")))
    with pytest.raises(ZooKeeperUnreachable, match="refused the SASL login of 'kafka'"), zk_session(connect_string):
        pass
    jaas.write_text('Client { com.sun.security.auth.module.Krb5LoginModule required; };')
    with pytest.raises(IllegalArgumentException, match="Krb5LoginModule"), zk_session(connect_string):
        pass
