"""zookeeper.set.acl=true with ZooKeeper SASL, as Kafka 2.6.3 secures ZooKeeper (the audit's finding 8): ``kactor
cluster --zookeeper-sasl`` runs its ZooKeeper with SASLAuthenticationProvider and its brokers logged in as ``kafka``
from a JAAS Client section (KAFKA_OPTS), so every znode is sasl:kafka's. Then ZooKeeper's own CLI (Debian's
zkCli.sh, a Java ZooKeeper client, given the printed JAAS file with -Djava.security.auth.login.config in
CLIENT_JVMFLAGS, as Kafka's tools are given it in KAFKA_OPTS) writes a SCRAM user as ``kafka-configs --zookeeper``
does (the /config/users/<user> znode with ZkData.defaultAcls, then a /config/changes/config_change_ notification),
the broker takes it (the user logs in with SCRAM-SHA-512), and kactor's own tool does the same with the printed
KAFKA_OPTS; without the login, the same writes are refused (ZooKeeper's NoAuth: "Insufficient permission")."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_cluster_cli import _Lines

from core.security.jaas import zk_client_login
from core.security.scram import ScramMechanism, credential_to_string, generate_credential
from tests.support.kazoo_clients import kazoo_client

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

KACTOR = [sys.executable, "-m", "kactor"]
REPO = Path(__file__).resolve().parents[2]
ZKCLI = "/usr/share/zookeeper/bin/zkCli.sh"  # Debian's zookeeper package, the ZooKeeper the tests run
SASL_ALL = (31, "sasl", "kafka")
WORLD_READ = (1, "world", "anyone")


def zkcli(connect: str, *command: str, jaas: str | None) -> subprocess.CompletedProcess[str]:
    """One zkCli.sh command; ``jaas``: its JVM logs in from that file's Client section (ZooKeeper's client does SASL
    whenever java.security.auth.login.config names a file with one)."""
    env = {k: v for k, v in os.environ.items() if k not in ("CLIENT_JVMFLAGS", "JVMFLAGS")}
    if jaas is not None:
        env["CLIENT_JVMFLAGS"] = f"-Djava.security.auth.login.config={jaas}"
    return subprocess.run([ZKCLI, "-server", connect, *command], env=env, capture_output=True, text=True,
                          timeout=120)


def scram_512(password: str) -> str:
    mechanism = ScramMechanism.for_mechanism_name("SCRAM-SHA-512")
    assert mechanism is not None
    return credential_to_string(generate_credential(mechanism, password))


def logs_in(rdkafka: dict[str, str], bootstrap: str, user: str, password: str, deadline_s: float) -> bool:
    """Whether ``user`` logs in with SCRAM-SHA-512 before the deadline (the broker applies a config change
    notification asynchronously: until then the user is unknown)."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        admin = AdminClient({**rdkafka, "bootstrap.servers": bootstrap, "sasl.mechanism": "SCRAM-SHA-512",
                             "sasl.username": user, "sasl.password": password, "log_level": 0})
        try:
            return sorted(admin.list_topics(timeout=5).brokers) == [0]
        except KafkaException:
            time.sleep(0.5)
    return False


def test_zkcli_with_the_jaas_client_login_writes_a_scram_user_on_a_set_acl_cluster(tmp_path: Path) -> None:
    if not os.path.isfile(ZKCLI):
        pytest.fail(f"{ZKCLI} not found: apt-get install -y zookeeper", pytrace=False)
    env = {k: v for k, v in os.environ.items() if k != "KAFKA_OPTS"}
    proc = subprocess.Popen([*KACTOR, "cluster", "--brokers", "1", "--security", "sasl_plaintext",
                             "--zookeeper-sasl", "--override", "controlled.shutdown.retry.backoff.ms=200"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
                            start_new_session=True, env=env, cwd=REPO)
    try:
        out = _Lines(proc.stdout)
        connect = out.wait_for(r"^zookeeper\.connect=(\S+)$", 90).group(1)
        bootstrap = out.wait_for(r"^bootstrap\.servers=(\S+)$", 30).group(1)
        rdkafka_path = out.wait_for(r"^librdkafka properties \(kcat -F, confluent-kafka\): (\S+)$", 5).group(1)
        jaas = out.wait_for(r"^zookeeper: the brokers' SASL login is kafka \(DIGEST-MD5, JAAS file (\S+), section "
                            r"Client\), zookeeper\.set\.acl=true$", 5).group(1)
        kafka_opts = out.wait_for(r"^the same login for Kafka's tools .*: KAFKA_OPTS='([^']+)'; for zkCli\.sh: "
                                  r"CLIENT_JVMFLAGS='-Djava\.security\.auth\.login\.config=(\S+)'$", 5).group(1)
        assert kafka_opts == f"-Djava.security.auth.login.config={jaas}"
        assert os.stat(jaas).st_mode & 0o077 == 0  # a password: the owner's only
        login = zk_client_login(Path(jaas).read_text())
        assert login is not None and login.username == "kafka"
        rdkafka = dict(line.split("=", 1) for line in Path(rdkafka_path).read_text().splitlines()
                       if line and line[0] != "#")

        # kafka-configs --zookeeper --entity-type users --entity-name alice --alter --add-config
        # 'SCRAM-SHA-512=[password=alice-secret]', as AdminZkClient.changeConfigs writes it, by ZooKeeper's own CLI
        # logged in with the printed JAAS file; auth:: is ZooDefs.Ids.CREATOR_ALL_ACL, as in ZkData.defaultAcls
        user_config = json.dumps({"version": 1, "config": {"SCRAM-SHA-512": scram_512("alice-secret")}})
        created = zkcli(connect, "create", "/config/users/alice", user_config, "auth::cdrwa", jaas=jaas)
        assert "Created /config/users/alice" in created.stdout + created.stderr, created.stderr[-2000:]
        change = json.dumps({"version": 2, "entity_path": "users/alice"})
        notified = zkcli(connect, "create", "-s", "/config/changes/config_change_", change,
                         "auth::cdrwa,world:anyone:r", jaas=jaas)
        assert "Created /config/changes/config_change_" in notified.stdout + notified.stderr, notified.stderr[-2000:]
        # the broker applied it: alice logs in with SCRAM-SHA-512
        assert logs_in(rdkafka, bootstrap, "alice", "alice-secret", 60), "alice's SCRAM login was never accepted"

        # the same writes without the login: NoAuth (zkCli's "Insufficient permission"), nothing written
        mallory = json.dumps({"version": 1, "config": {"SCRAM-SHA-512": scram_512("mallory-secret")}})
        refused = zkcli(connect, "create", "/config/users/mallory", mallory, "world:anyone:cdrwa", jaas=None)
        assert "Insufficient permission : /config/users/mallory" in refused.stdout + refused.stderr, refused.stderr
        refused = zkcli(connect, "create", "-s", "/config/changes/config_change_",
                        json.dumps({"version": 2, "entity_path": "users/mallory"}), jaas=None)
        assert "Insufficient permission : /config/changes/config_change_" in refused.stdout + refused.stderr

        # kactor's own tool, given the printed KAFKA_OPTS, logs in the same way and writes as the brokers do
        tool = subprocess.run([*KACTOR, "configs", "--zookeeper", connect, "--entity-type", "users",
                               "--entity-name", "bob", "--alter", "--add-config",
                               "SCRAM-SHA-512=[password=bob-secret]"], capture_output=True, text=True, timeout=120,
                              cwd=REPO, env={**env, "KAFKA_OPTS": kafka_opts})
        assert tool.returncode == 0, tool.stderr
        assert logs_in(rdkafka, bootstrap, "bob", "bob-secret", 60), "bob's SCRAM login was never accepted"
        stranger_tool = subprocess.run([*KACTOR, "configs", "--zookeeper", connect, "--entity-type", "users",
                                        "--entity-name", "eve", "--alter", "--add-config",
                                        "SCRAM-SHA-512=[password=eve-secret]"], capture_output=True, text=True,
                                       timeout=120, cwd=REPO, env=env)
        assert stranger_tool.returncode == 1 and "NoAuthError" in stranger_tool.stderr, stranger_tool.stderr

        with kazoo_client(connect, sasl_options=login.kazoo_sasl_options()) as owner, \
                kazoo_client(connect) as stranger:
            def acls(path: str) -> list[tuple[int, str, str]]:
                return [(a.perms, a.id.scheme, a.id.id) for a in owner.get_acls(path)[0]]

            for path in ("/config/users", "/config/users/alice", "/config/users/bob"):
                assert acls(path) == [SASL_ALL], path  # ZkData.sensitivePath: the brokers' identity alone
            for path in ("/brokers/ids/0", "/config/changes", "/cluster/id"):
                assert acls(path) == [SASL_ALL, WORLD_READ], path
            changes = [c for c in owner.get_children("/config/changes") if c.startswith("config_change_")]
            assert len(changes) == 2  # alice's (zkCli) and bob's (kactor configs); mallory's and eve's refused
            assert acls(f"/config/changes/{min(changes)}") == [SASL_ALL, WORLD_READ]
            assert not owner.exists("/config/users/mallory") and not owner.exists("/config/users/eve")
            assert json.loads(owner.get("/config/users/alice")[0])["config"]["SCRAM-SHA-512"].endswith(
                ",iterations=4096")
            from kazoo.exceptions import NoAuthError

            with pytest.raises(NoAuthError):
                stranger.get("/config/users/alice")
            with pytest.raises(NoAuthError):
                stranger.set("/cluster/id", b"x")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                assert proc.wait(timeout=120) == 0
            finally:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
