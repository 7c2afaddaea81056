"""``kactor cluster --security sasl_ssl`` as its user runs it (issue #29): it prints where the client properties
are, kcat reads the librdkafka file (``-F``) and round-trips records over SASL_SSL, a client with the file's
settings but a wrong password is refused while the cluster serves on, the brokers replicate over the secured
listener, and its stop (SIGTERM: a test run in the background may have Ctrl-C's SIGINT ignored, as a shell's
background jobs do) removes the data dir with its stores and passwords."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from kafka_clients_helpers import kcat_or_skip
from kazoo.client import KazooClient
from test_cluster_cli import _Lines

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

KACTOR = [sys.executable, "-m", "kactor"]


def read_properties(path: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in Path(path).read_text().splitlines() if line and line[0] != "#")


def test_cluster_security_sasl_ssl_prints_what_clients_need(tmp_path: Path) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    kcat = kcat_or_skip()
    proc = subprocess.Popen([*KACTOR, "cluster", "--brokers", "2", "--security", "sasl_ssl", "--override",
                             "controlled.shutdown.retry.backoff.ms=200"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        out = _Lines(proc.stdout)
        connect = out.wait_for(r"^zookeeper\.connect=(\S+)$", 90).group(1)
        bootstrap = out.wait_for(r"^bootstrap\.servers=(\S+)$", 30).group(1)
        assert out.wait_for(r"^security: SASL_SSL, between the brokers too; admin user admin \(SASL PLAIN\)$", 5)
        java_props = out.wait_for(r"--command-config\): (\S+)$", 5).group(1)
        rdkafka_props = out.wait_for(r"^librdkafka properties \(kcat -F, confluent-kafka\): (\S+)$", 5).group(1)
        java = read_properties(java_props)
        assert java["security.protocol"] == "SASL_SSL" and java["sasl.mechanism"] == "PLAIN"
        assert java["ssl.truststore.type"] == "PKCS12" and Path(java["ssl.truststore.location"]).is_file()
        assert re.fullmatch(r'org\.apache\.kafka\.common\.security\.plain\.PlainLoginModule required '
                            r'username="admin" password="[A-Za-z0-9_-]{24}";', java["sasl.jaas.config"])
        for path in (java_props, rdkafka_props):
            assert os.stat(path).st_mode & 0o077 == 0  # passwords: the owner's only
        zk = KazooClient(hosts=connect, timeout=5.0)
        zk.start(timeout=15)
        try:
            for b in (0, 1):
                reg = json.loads(zk.get(f"/brokers/ids/{b}")[0])
                assert reg["listener_security_protocol_map"] == {"SECURE": "SASL_SSL"}
                assert reg["endpoints"] == [f"SECURE://{bootstrap.split(',')[b]}"]
        finally:
            zk.stop()
            zk.close()

        subprocess.run([*KACTOR, "topics", "--zookeeper", connect, "--create", "--topic", "secured",
                        "--partitions", "1", "--replication-factor", "2"], check=True, capture_output=True, timeout=60)
        produced = subprocess.run([kcat, "-F", rdkafka_props, "-b", bootstrap, "-P", "-t", "secured", "-p", "0",
                                   "-X", "acks=all"], input="a\nb\nc\n", capture_output=True, text=True, timeout=90)
        assert produced.returncode == 0, produced.stderr[-2000:]  # acks=all: the follower fetched over SASL_SSL
        consumed = subprocess.run([kcat, "-F", rdkafka_props, "-b", bootstrap, "-C", "-t", "secured", "-p", "0",
                                   "-o", "beginning", "-e", "-q"], capture_output=True, text=True, timeout=90)
        assert consumed.returncode == 0 and consumed.stdout.splitlines() == ["a", "b", "c"], consumed.stderr

        wrong = AdminClient({**read_properties(rdkafka_props), "bootstrap.servers": bootstrap,
                             "sasl.password": "guess", "log_level": 0})
        with pytest.raises(KafkaException):
            wrong.list_topics(timeout=10)
        del wrong
        right = AdminClient({**read_properties(rdkafka_props), "bootstrap.servers": bootstrap})
        assert sorted(right.list_topics(timeout=30).brokers) == [0, 1]
        data = out.wait_for(r"^data: (\S+) \(removed on exit\)", 5).group(1)
        assert Path(data, "security", "ca.pem").is_file()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                assert proc.wait(timeout=120) == 0
            finally:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
    assert not Path(data).exists()
