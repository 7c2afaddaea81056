"""All 50 of Kafka 2.6.3's API keys on a real cluster (issue #26): ApiVersions lists each at 2.6.3's range, so
kafka-python 3 takes the brokers for 2.6; each key whose feature is not configured answers 2.6's error to a raw
request; DescribeLogDirs answers each broker's log dir with the size of its logs on disk, as read by a raw request,
kafka-python 3's admin client and ``kactor log-dirs``. On the session's shared 3-broker cluster (conftest
shared_cluster): a topic of its own, and no test sets a quota, ACL or delegation token there."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import pytest
from cluster_helpers import Cluster, produce, run_kactor
from kafka_clients_helpers import KAFKA_PYTHON3, bootstrap

from edges.transport import BlockingClient
from tests.core.api.test_api_api_versions import KAFKA_2_6_3

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

TOPIC = "dirs"
ACL = {"resource_type": 2, "resource_name": TOPIC, "resource_pattern_type": 3, "principal": "User:a", "host": "*",
       "operation": 2, "permission_type": 3}
ACL_FILTER = {"resource_type_filter": 2, "resource_name_filter": TOPIC, "pattern_type_filter": 3,
              "principal_filter": None, "host_filter": None, "operation": 2, "permission_type": 3}

KP3_SCRIPT = """
import json, sys
from kafka import KafkaAdminClient
from kafka.net import KafkaNetClient  # kafka-python 3's KafkaClient
client = KafkaNetClient(bootstrap_servers=sys.argv[1], client_id="kp3-version")
version = client.check_version()
client.close()
admin = KafkaAdminClient(bootstrap_servers=sys.argv[1], client_id="kp3-log-dirs")
dirs = admin.describe_log_dirs()
admin.close()
print(json.dumps({"version": list(version), "log_dirs": dirs}, default=str))
"""


def _kafka_python3(bootstrap_servers: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(KAFKA_PYTHON3))
    proc = subprocess.run([sys.executable, "-c", KP3_SCRIPT, bootstrap_servers], capture_output=True, text=True,
                          timeout=90, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _on_disk(c: Cluster, broker: int) -> dict[tuple[str, int], int]:
    """(topic, partition) -> the bytes of its log's segment files, read from the broker's log dir."""
    sizes = {}
    for d in glob.glob(os.path.join(c.log_dir(broker), f"{TOPIC}-*")):
        partition = int(d.rsplit("-", 1)[1])
        sizes[(TOPIC, partition)] = sum(os.path.getsize(f) for f in glob.glob(os.path.join(d, "*.log")))
    return sizes


def test_every_key_is_advertised_and_answered_as_kafka_2_6_3(shared_cluster: Cluster) -> None:
    c = shared_cluster
    c.create_topic(TOPIC, assignment={0: [0, 1], 1: [1, 0]})  # broker 0 holds both, broker 2 none
    for p, n in ((0, 3), (1, 5)):
        c.wait(lambda p=p, n=n: produce(c, TOPIC, p, tuple(f"r{i}" for i in range(n))).error == 0, what="produced")
    port = {b: c.lc.broker_address(b)[1] for b in (0, 1, 2)}

    with BlockingClient("127.0.0.1", port[0], client_id="api-keys-test") as client:
        # ApiVersions: every key 0-49 at 2.6.3's range, on every broker
        for b in (0, 1, 2):
            with BlockingClient("127.0.0.1", port[b]) as other:
                versions = other.request_raw(18, 3, {"client_software_name": "t", "client_software_version": "1"})
            assert versions["error_code"] == 0
            # only 2.6.3's table, though KIP-664's keys and AddPartitionsToTxn v4 are served (issue #40)
            assert {k["api_key"]: (k["min_version"], k["max_version"]) for k in versions["api_keys"]} == \
                {k: (lo, hi) for k, (_, lo, hi) in KAFKA_2_6_3.items()}

        def ask(key: int, body: dict) -> dict:
            return client.request_raw(key, KAFKA_2_6_3[key][2], body)

        # the features this broker has not configured, answered as 2.6.3's KafkaApis answers then
        assert ask(17, {"mechanism": "PLAIN"}) == {"error_code": 34, "mechanisms": []}
        sasl = ask(36, {"auth_bytes": b"\x00u\x00p"})
        assert (sasl["error_code"], sasl["error_message"]) == (
            34, "SaslAuthenticate request received after successful authentication")
        described = ask(29, ACL_FILTER)
        assert (described["error_code"], described["error_message"], described["resources"]) == (
            54, "No Authorizer is configured on the broker", [])
        assert [r["error_code"] for r in ask(30, {"creations": [ACL, ACL]})["results"]] == [54, 54]
        assert [r["error_code"] for r in ask(31, {"filters": [ACL_FILTER]})["filter_results"]] == [54]
        assert ask(38, {"renewers": [], "max_lifetime_ms": -1})["error_code"] == 64
        assert ask(39, {"hmac": b"x", "renew_period_ms": 1})["error_code"] == 64
        assert ask(40, {"hmac": b"x", "expiry_time_period_ms": 1})["error_code"] == 64
        assert ask(41, {"owners": None}) == {"error_code": 64, "tokens": [], "throttle_time_ms": 0}
        added = ask(24, {"v3_and_below_transactional_id": "tx", "v3_and_below_producer_id": 1,
                         "v3_and_below_producer_epoch": 0,
                         "v3_and_below_topics": [{"name": TOPIC, "partitions": [0, 1]}]})
        assert [(r["partition_index"], r["partition_error_code"]) for t in added["results_by_topic_v3_and_below"]
                for r in t["results_by_partition"]] == [(0, 16), (1, 16)]
        assert ask(25, {"transactional_id": "tx", "producer_id": 1, "producer_epoch": 0, "group_id": "g"}
                   )["error_code"] == 16
        assert ask(26, {"transactional_id": "tx", "producer_id": 1, "producer_epoch": 0, "committed": True}
                   )["error_code"] == 16
        assert ask(26, {"transactional_id": "", "producer_id": 1, "producer_epoch": 0, "committed": True}
                   )["error_code"] == 42
        # served: DescribeClientQuotas with no quota set anywhere answers no entries
        described = ask(48, {"components": [], "strict": False})
        assert (described["error_code"], described["entries"]) == (0, [])

        # DescribeLogDirs: the broker's one dir, each log's size as on disk, no lag
        log_dirs = ask(35, {"topics": None})
    sizes = _on_disk(c, 0)
    assert sizes[(TOPIC, 0)] > 0 and sizes[(TOPIC, 1)] > sizes[(TOPIC, 0)]
    assert [(r["error_code"], r["log_dir"]) for r in log_dirs["results"]] == [(0, os.path.abspath(c.log_dir(0)))]
    listed = {(t["name"], p["partition_index"]): (p["partition_size"], p["offset_lag"], p["is_future_key"])
              for t in log_dirs["results"][0]["topics"] for p in t["partitions"]}
    assert {tp: v for tp, v in listed.items() if tp[0] == TOPIC} == {tp: (s, 0, False) for tp, s in sizes.items()}

    # kafka-python 3: infers a 2.6 broker, and reads the same log dirs through its admin client
    kp3 = _kafka_python3(bootstrap(c))
    assert kp3["version"] == [2, 6]
    by_broker = {d["broker"]: d["log_dirs"] for d in kp3["log_dirs"]}
    assert sorted(by_broker) == [0, 1, 2]
    for b in (0, 1, 2):
        [only] = by_broker[b]
        assert only["log_dir"] == os.path.abspath(c.log_dir(b)) and only["error_code"] == 0
        seen = {(t["name"], p["partition_index"]): p["partition_size"] for t in only["topics"] if t["name"] == TOPIC
                for p in t["partitions"]}
        assert seen == _on_disk(c, b)

    # kactor log-dirs --describe: kafka-log-dirs.sh's two lines and JSON
    out = run_kactor("log-dirs", "--bootstrap-server", bootstrap(c), "--describe").stdout.splitlines()
    assert out[:2] == ["Querying brokers for log directories information",
                       "Received log directory information from brokers 0,1,2"]
    report = json.loads(out[2])
    assert report["version"] == 1 and [b["broker"] for b in report["brokers"]] == [0, 1, 2]
    for entry in report["brokers"]:
        [d] = entry["logDirs"]
        assert d["logDir"] == os.path.abspath(c.log_dir(entry["broker"])) and d["error"] is None
        assert {p["partition"]: (p["size"], p["offsetLag"], p["isFuture"]) for p in d["partitions"]
                if p["partition"].startswith(f"{TOPIC}-")} == \
            {f"{t}-{p}": (s, 0, False) for (t, p), s in _on_disk(c, entry["broker"]).items()}
    only = json.loads(run_kactor("log-dirs", "--bootstrap-server", bootstrap(c), "--describe", "--broker-list", "1",
                                 "--topic-list", TOPIC).stdout.splitlines()[2])
    assert [b["broker"] for b in only["brokers"]] == [1]
    assert sorted(p["partition"] for p in only["brokers"][0]["logDirs"][0]["partitions"]) == [f"{TOPIC}-0",
                                                                                              f"{TOPIC}-1"]
