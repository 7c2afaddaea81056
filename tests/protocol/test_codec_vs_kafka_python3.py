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
from protocol.codec import codec
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


def test_kafka_python3_reads_and_rewrites_our_bytes_identically() -> None:
    assert (KAFKA_PYTHON3 / "kafka").is_dir(), f"{KAFKA_PYTHON3} is missing: run scripts/setup"
    messages = _messages()
    env = {**os.environ, "PYTHONPATH": str(KAFKA_PYTHON3)}
    proc = subprocess.run(
        [sys.executable, str(ORACLE)],
        input=json.dumps([[k, v, d, b.hex()] for k, v, d, b in messages]),
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    answer = json.loads(proc.stdout)
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
