"""Bad input on a real broker's Kafka listener (issue #20, Must show): a truncated frame, an unknown api key, a
version out of range, a corrupt record batch, an oversized request — each gets Kafka 2.6's answer or a closed
connection, and the broker keeps serving its other connections (a second connection's Metadata and Produce).
Plus real clients' first requests: ApiVersions + Metadata from confluent-kafka (librdkafka) and kafka-python 3,
matching the znodes.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cluster_helpers import Cluster

from core.api.registry import registered_keys
from edges.transport import BlockingClient
from protocol.api_versions import KAFKA_2_6_API_VERSIONS
from protocol.framing import RequestHeader, decode_response, encode_request
from protocol.records import Record, build_batch

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
KAFKA_PYTHON3 = REPO / ".venv-clients" / "kafka-python3"
MAX_REQUEST = 200_000  # socket.request.max.bytes for these brokers
OVERRIDES = (f"socket.request.max.bytes={MAX_REQUEST}", "auto.leader.rebalance.enable=false")


def _frame(key: int, version: int, corr: int, body: dict) -> bytes:
    return encode_request(RequestHeader(key, version, corr, "bad-input-test"), body)


def _read_frame(s: socket.socket, timeout_s: float = 10.0) -> bytes:
    s.settimeout(timeout_s)
    buf = b""
    while len(buf) < 4 or len(buf) < 4 + struct.unpack(">i", buf[:4])[0]:
        data = s.recv(65536)
        assert data, "the broker closed the connection"
        buf += data
    return buf[4:]


def _closed(s: socket.socket, timeout_s: float = 10.0) -> bool:
    """True when the broker closes ``s`` (EOF or reset) before the deadline."""
    s.settimeout(timeout_s)
    try:
        while True:
            if not s.recv(65536):
                return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def _metadata(port: int, topic: str) -> dict:
    with BlockingClient("127.0.0.1", port) as c:
        return c.request_raw(3, 9, {"topics": [{"name": topic}], "allow_auto_topic_creation": False,
                                    "include_cluster_authorized_operations": False,
                                    "include_topic_authorized_operations": False})


def _produce_body(topic: str, batches: dict[int, bytes], acks: int = -1) -> dict:
    return {"transactional_id": None, "acks": acks, "timeout_ms": 10000,
            "topic_data": [{"name": topic, "partition_data": [{"index": p, "records": r}
                                                              for p, r in sorted(batches.items())]}]}


def _batch(*values: bytes) -> bytes:
    return build_batch([Record(i, 0, None, v) for i, v in enumerate(values)], first_timestamp=int(time.time() * 1000))


def _still_serving(c: Cluster, port: int, topic: str) -> None:
    """A fresh connection gets the topic's metadata as the znodes say."""
    (t,) = _metadata(port, topic)["topics"]
    assert t["error_code"] == 0 and t["name"] == topic
    st = c.partition_state(topic, 0)
    assert st is not None
    (p0,) = [p for p in t["partitions"] if p["partition_index"] == 0]
    assert (p0["leader_id"], p0["leader_epoch"], sorted(p0["isr_nodes"])) == (st["leader"], st["leader_epoch"],
                                                                               sorted(st["isr"]))


@pytest.fixture
def cluster(start_cluster) -> Cluster:
    c = start_cluster(1, overrides=OVERRIDES)
    c.create_topic("t", partitions=2, replication_factor=1)
    c.wait_partition("t", 0, lambda s: s["leader"] == 0)
    c.wait_partition("t", 1, lambda s: s["leader"] == 0)
    port = c.lc.ports[0]
    c.wait(lambda: _metadata(port, "t")["topics"][0]["error_code"] == 0, what="t in broker 0's metadata cache")
    return c


def test_bad_input_gets_kafkas_answer_or_a_closed_connection(cluster: Cluster) -> None:
    c, port = cluster, cluster.lc.ports[0]
    with socket.create_connection(("127.0.0.1", port)) as keeper:  # an innocent connection open throughout
        keeper.sendall(_frame(18, 2, 1, {}))
        assert decode_response(18, 2, _read_frame(keeper))[0] == 1

        # a truncated frame: the size promises more than ever comes, then the client goes away mid-request
        with socket.create_connection(("127.0.0.1", port)) as s:
            whole = _frame(3, 9, 2, {"topics": None, "allow_auto_topic_creation": False,
                                     "include_cluster_authorized_operations": False,
                                     "include_topic_authorized_operations": False})
            s.sendall(whole[:-5])
            s.shutdown(socket.SHUT_WR)
            assert _closed(s)
        # a whole frame whose body is cut short: Kafka's parse fails, the connection is closed
        with socket.create_connection(("127.0.0.1", port)) as s:
            cut = whole[4:-3]
            s.sendall(struct.pack(">i", len(cut)) + cut)
            assert _closed(s)
        _still_serving(c, port, "t")

        # an unknown api key: closed
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(struct.pack(">ihhih", 10, 999, 0, 3, -1))
            assert _closed(s)

        # ApiVersions of a version the broker does not know: KIP-511's v0 answer with its own range
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(struct.pack(">ihhihb", 11, 18, 5, 4, -1, 0))  # header v2: flexible versions have tags
            corr, body = decode_response(18, 0, _read_frame(s))
            assert (corr, body) == (4, {"error_code": 35, "api_keys": [{"api_key": 18, "min_version": 0,
                                                                        "max_version": 3}]})
            # ...and the connection stays usable
            s.sendall(_frame(18, 3, 5, {"client_software_name": "t", "client_software_version": "1"}))
            assert decode_response(18, 3, _read_frame(s))[1]["error_code"] == 0
            # another API out of range (Metadata v10): closed, as 2.6
            s.sendall(struct.pack(">ihhihb", 11, 3, 10, 6, -1, 0))
            assert _closed(s)

        # an oversized request (> socket.request.max.bytes): closed before it is even read
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(struct.pack(">i", MAX_REQUEST + 1) + b"\0" * 1024)
            assert _closed(s)

        _still_serving(c, port, "t")
        keeper.sendall(_frame(18, 2, 7, {}))
        corr, body = decode_response(18, 2, _read_frame(keeper))
        assert corr == 7 and body["error_code"] == 0


def test_a_corrupt_batch_is_that_partitions_corrupt_message(cluster: Cluster) -> None:
    port = cluster.lc.ports[0]
    good = _batch(b"a", b"b")
    bad = bytearray(_batch(b"c"))
    bad[-1] ^= 0xFF  # a record byte: the CRC-32C no longer matches
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(_frame(0, 8, 11, _produce_body("t", {0: bytes(bad), 1: good})))
        corr, body = decode_response(0, 8, _read_frame(s))
        assert corr == 11
        parts = {p["index"]: p for p in body["responses"][0]["partition_responses"]}
        assert parts[0]["error_code"] == 2 and parts[0]["base_offset"] == -1  # CORRUPT_MESSAGE
        assert parts[1]["error_code"] == 0 and parts[1]["base_offset"] == 0
        # the same connection goes on: partition 0 still starts at offset 0 (nothing of the bad batch was kept)
        s.sendall(_frame(0, 8, 12, _produce_body("t", {0: _batch(b"d")})))
        (p0,) = decode_response(0, 8, _read_frame(s))[1]["responses"][0]["partition_responses"]
        assert (p0["index"], p0["error_code"], p0["base_offset"]) == (0, 0, 0)
        # acks=0 is never answered: the next answer on the connection is the ApiVersions after it
        s.sendall(_frame(0, 8, 13, _produce_body("t", {1: _batch(b"e")}, acks=0)) + _frame(18, 2, 14, {}))
        assert decode_response(18, 2, _read_frame(s))[0] == 14


def _eof_without_answer(s: socket.socket, timeout_s: float = 10.0) -> bytes:
    """Everything the broker writes on ``s`` before closing it (EOF or reset); fails if it stays open."""
    s.settimeout(timeout_s)
    got = b""
    try:
        while data := s.recv(65536):
            got += data
    except ConnectionResetError:
        pass
    except TimeoutError:
        pytest.fail("the broker did not close the connection")
    return got


def test_a_failed_acks_0_produce_closes_that_connection_only(cluster: Cluster) -> None:
    """KafkaApis.handleProduceRequest with acks=0: an error in the answer closes the connection (the producer
    notices and refreshes its metadata), nothing is written for it; a clean one writes nothing and appends."""
    c, port = cluster, cluster.lc.ports[0]
    with socket.create_connection(("127.0.0.1", port)) as keeper:
        keeper.sendall(_frame(18, 2, 1, {}))
        assert decode_response(18, 2, _read_frame(keeper))[0] == 1
        # a topic that does not exist (Produce never auto-creates): UNKNOWN_TOPIC_OR_PARTITION → closed, and the
        # ApiVersions behind it is never answered
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(_frame(0, 8, 2, _produce_body("missing", {0: _batch(b"x")}, acks=0)) + _frame(18, 2, 3, {}))
            assert _eof_without_answer(s) == b""
        # a corrupt batch (CORRUPT_MESSAGE) on an existing partition: closed too, and nothing of it appended
        bad = bytearray(_batch(b"c"))
        bad[-1] ^= 0xFF
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(_frame(18, 2, 4, {}) + _frame(0, 8, 5, _produce_body("t", {0: bytes(bad)}, acks=0)))
            assert decode_response(18, 2, _read_frame(s))[0] == 4  # the answer owed before it is still written
            assert _eof_without_answer(s) == b""
        # a clean acks=0 produce: no answer, the connection stays, its records are appended in order
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(_frame(0, 8, 6, _produce_body("t", {0: _batch(b"a", b"b")}, acks=0))
                      + _frame(0, 8, 7, _produce_body("t", {0: _batch(b"c")}, acks=1)))
            corr, body = decode_response(0, 8, _read_frame(s))
            (p0,) = body["responses"][0]["partition_responses"]
            assert (corr, p0["error_code"], p0["base_offset"]) == (7, 0, 2)
        keeper.sendall(_frame(18, 2, 8, {}))
        assert decode_response(18, 2, _read_frame(keeper))[0] == 8
    _still_serving(c, port, "t")


def test_real_clients_bootstrap_api_versions_and_metadata_match_the_znodes(start_cluster) -> None:
    pytest.importorskip("confluent_kafka")
    from confluent_kafka.admin import AdminClient

    c = start_cluster(3, overrides=("auto.leader.rebalance.enable=false",))
    c.create_topic("orders", assignment={0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1]})
    for p in range(3):
        c.wait_partition("orders", p, lambda s: len(s["isr"]) == 3)
    bootstrap = ",".join(f"127.0.0.1:{c.lc.ports[b]}" for b in (0, 1, 2))
    cluster_id = c.json("/cluster/id")["id"]
    controller = c.controller_id()

    # librdkafka: ApiVersions (its api.version.request) then Metadata
    with AdminClient({"bootstrap.servers": bootstrap}) as admin:  # destroyed also when the test fails
        def librdkafka_view():
            md = admin.list_topics(timeout=10)
            t = md.topics.get("orders")
            if t is None or t.error is not None or len(t.partitions) != 3:
                return None
            return md
        md = c.wait(librdkafka_view, what="orders in librdkafka's metadata")
    assert md.cluster_id == cluster_id and md.controller_id == controller
    assert {b.id: (b.host, b.port) for b in md.brokers.values()} == {
        b: ("127.0.0.1", c.lc.ports[b]) for b in (0, 1, 2)}
    for p, pm in md.topics["orders"].partitions.items():
        st = c.partition_state("orders", p)
        assert (pm.leader, pm.replicas, sorted(pm.isrs)) == (st["leader"], c.assignment("orders")[p],
                                                              sorted(st["isr"]))

    # kafka-python 3 (its own process: it may not be imported into kactor's venv)
    if not KAFKA_PYTHON3.is_dir():
        pytest.skip("kafka-python 3 is not installed in .venv-clients (scripts/setup)")
    script = (
        "import json, sys\n"
        "from kafka.admin import KafkaAdminClient\n"
        "a = KafkaAdminClient(bootstrap_servers=sys.argv[1], request_timeout_ms=10000)\n"
        "print(json.dumps({'versions': sorted(int(k) for k in a.api_versions()),\n"
        "                  'cluster': a.describe_cluster(), 'topics': a.describe_topics(['orders'])}))\n"
        "a.close()\n"
    )
    out = subprocess.run([sys.executable, "-c", script, bootstrap], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(KAFKA_PYTHON3)}, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    # only 2.6.3's table is advertised; kactor also serves KIP-664's keys (61, 65, 66) for its own tools
    assert set(seen["versions"]) == registered_keys() & KAFKA_2_6_API_VERSIONS.keys()
    assert not {61, 65, 66} & set(seen["versions"])
    cl = seen["cluster"]
    assert cl["cluster_id"] == cluster_id and cl["controller_id"] == controller
    assert sorted((b["broker_id"], b["host"], b["port"]) for b in cl["brokers"]) == [
        (b, "127.0.0.1", c.lc.ports[b]) for b in (0, 1, 2)]
    (topic,) = seen["topics"]
    assert topic["name"] == "orders" and topic["error_code"] == 0 and len(topic["partitions"]) == 3
    for pm in topic["partitions"]:
        st = c.partition_state("orders", pm["partition_index"])
        assert (pm["leader_id"], pm["leader_epoch"], pm["replica_nodes"], sorted(pm["isr_nodes"])) == (
            st["leader"], st["leader_epoch"], c.assignment("orders")[pm["partition_index"]], sorted(st["isr"]))
