"""Our codec against kafka-python 3.0.12 — an independent schema source (Kafka 4's JSON files, which it ships) and an
independent encoder — for every (API, version, direction) of the 2.6 table that its schemas still hold: it must read
our bytes and write back the same bytes. kafka-python 3 cannot share .venv with kafka-utils' kafka-python 1.4, so it
runs in a subprocess from ``.venv-clients/kafka-python3`` beside the venv (installed by scripts/setup)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

from protocol.api_versions import API_VERSIONS
from protocol.codec import codec, encode_request
from protocol.framing import FrameDecoder, RequestHeader, api_versions_body, decode_request, encode_response
from protocol.schema import message_spec
from tests.protocol.values import defaults, random_value

KAFKA_PYTHON3 = Path(sys.prefix).parent / ".venv-clients" / "kafka-python3"
ORACLE = Path(__file__).with_name("kafka_python3_oracle.py")


def _messages() -> list[tuple[int, int, str, bytes]]:
    out = []
    for key, r in API_VERSIONS.items():
        for version in range(r.min_version, r.max_version + 1):
            for direction in ("request", "response"):
                encode, _ = codec(key, version, direction)
                spec = message_spec(key, version, direction)
                rng = random.Random(f"kp3/{key}/{version}/{direction}")
                for value in [defaults(spec)] + [random_value(spec, rng) for _ in range(4)]:
                    if (key, direction) == (18, "response"):
                        value["error_code"] = 0  # a client reads an ApiVersions error response as v0 (KIP-511)
                    out.append((key, version, direction, encode(value)))
    return out


def _ask(items: list) -> dict:
    assert (KAFKA_PYTHON3 / "kafka").is_dir(), f"{KAFKA_PYTHON3} is missing: run scripts/setup"
    env = {**os.environ, "PYTHONPATH": str(KAFKA_PYTHON3)}
    proc = subprocess.run([sys.executable, str(ORACLE)], input=json.dumps(items), capture_output=True, text=True,
                          env=env, timeout=300, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_kafka_python3_frames_flexible_and_old_headers_as_we_do() -> None:
    """Its request frames (header v1, and v2 with a legacy client id and a tag section for flexible versions) decode
    to the same header and body with our framing; it reads our response frames (header v0, v1 with tags, and v0 for
    ApiVersions v3 whatever the body's flexibility)."""
    cases = [
        (3, 9, {"topics": [{"name": "orders"}], "allow_auto_topic_creation": False}),  # flexible: header v2
        (3, 8, {"topics": None}),  # header v1
        (18, 3, {"client_software_name": "kafka-python", "client_software_version": "3.0.12"}),
        (10, 3, {"key": "group-1", "key_type": 0}),
    ]
    items: list = [["request-frame", k, v, encode_request(k, v, body).hex(), 100 + i, "kp3-client"]
                   for i, (k, v, body) in enumerate(cases)]  # fmt: skip
    responses = [
        (3, 9, {"brokers": [{"node_id": 1, "host": "127.0.0.1", "port": 9092}], "cluster_id": "c", "controller_id": 1}),
        (3, 8, {"controller_id": 1}),
        (18, 3, api_versions_body()),
        (10, 3, {"error_code": 0, "node_id": 1, "host": "127.0.0.1", "port": 9092}),
    ]
    items += [["response-frame", k, v, encode_response(k, v, 200 + i, body).hex()]
              for i, (k, v, body) in enumerate(responses)]  # fmt: skip
    answer = _ask(items)["results"]
    for i, ((key, version, body), frame) in enumerate(zip(cases, answer[: len(cases)], strict=True)):
        payload = FrameDecoder().feed(bytes.fromhex(frame))
        assert len(payload) == 1
        request = decode_request(payload[0])
        assert request.header == RequestHeader(key, version, 100 + i, "kp3-client")
        assert encode_request(key, version, request.body) == encode_request(key, version, body)
    for i, ((key, version, body), (correlation_id, theirs)) in enumerate(
        zip(responses, answer[len(cases) :], strict=True)
    ):
        assert correlation_id == 200 + i
        assert bytes.fromhex(theirs) == codec(key, version, "response")[0](body)


def test_kafka_python3_reads_and_rewrites_our_bytes_identically() -> None:
    messages = _messages()
    answer = _ask([[k, v, d, b.hex()] for k, v, d, b in messages])
    compared: set[tuple[int, int]] = set()
    failures = []
    for (key, version, direction, ours), theirs in zip(messages, answer["results"], strict=True):
        if theirs is None:
            continue
        compared.add((key, version))
        if theirs.startswith("error") or bytes.fromhex(theirs) != ours:
            failures.append((API_VERSIONS[key].name, version, direction, ours.hex(), theirs))
    assert failures == [], "\n".join(map(str, failures))
    # every version both schemas define was compared (kafka-python's range is Kafka 4's, from its own JSON)
    expected = {
        (key, v)
        for key, (low, high) in ((int(k), r) for k, r in answer["versions"].items())
        if key in API_VERSIONS
        for v in range(max(low, API_VERSIONS[key].min_version), min(high, API_VERSIONS[key].max_version) + 1)
    }
    assert compared == expected
    assert len(compared) >= 120, sorted(compared)  # 2.6 has 202 (API, version) pairs; Kafka 4 dropped the rest
