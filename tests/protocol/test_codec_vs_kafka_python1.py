"""Our codec against kafka-python 1.4.7's hand-written protocol classes (in .venv, pinned by kafka-utils): a third
encoder, independent of kio and of Kafka's JSON, that still has the old versions Kafka 4 dropped — Produce v0-2,
Fetch v0-3, ListOffsets v0, OffsetCommit v0-1, OffsetFetch v0, CreateTopics v0-1, DeleteTopics v0, the ACL APIs v0,
DescribeConfigs v0. For every (API, version, direction) it has in 2.6's table, it reads our bytes and writes back the
same bytes."""

from __future__ import annotations

import importlib
import io
import pkgutil
import random

import kafka.protocol
from kafka.protocol.api import Request, Response

from protocol.api_versions import API_VERSIONS
from protocol.codec import codec
from protocol.schema import message_spec
from tests.protocol.values import defaults, random_value

# kafka-python 1.4.7's own schema mistakes (kafka-python 3, from Kafka's JSON, agrees with our bytes for both)
KNOWN_BUGS = {
    (10, 1, "response"): "FindCoordinator v1 response without throttle_time_ms",
    (32, 1, "response"): "DescribeConfigs v1 entries with is_default (boolean) where Kafka has config_source (int8)",
}


def _classes() -> dict[tuple[int, int, str], type]:
    for module in pkgutil.iter_modules(kafka.protocol.__path__):
        importlib.import_module(f"kafka.protocol.{module.name}")
    found: dict[tuple[int, int, str], type] = {}
    todo: list[type] = [Request, Response]
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if isinstance(getattr(cls, "API_VERSION", None), int) and getattr(cls, "SCHEMA", None) is not None:
            # by name: 1.4.7 declares SaslAuthenticateResponse_v0 as a Request subclass
            direction = "response" if "Response" in cls.__name__ else "request"
            found[(cls.API_KEY, cls.API_VERSION, direction)] = cls
    return found


def test_kafka_python1_reads_and_rewrites_our_bytes_identically() -> None:
    compared: set[tuple[int, int]] = set()
    failures = []
    for (key, version, direction), cls in sorted(_classes().items()):
        r = API_VERSIONS.get(key)
        if r is None or not r.min_version <= version <= r.max_version or (key, version, direction) in KNOWN_BUGS:
            continue
        encode, _ = codec(key, version, direction)
        spec = message_spec(key, version, direction)
        rng = random.Random(f"kp1/{key}/{version}/{direction}")
        for value in [defaults(spec)] + [random_value(spec, rng) for _ in range(4)]:
            ours = encode(value)
            try:
                decoded = cls.decode(io.BytesIO(ours))  # kept: its encode() holds it only by a weak reference
                theirs = decoded.encode()
            except Exception as e:  # noqa: BLE001 — reported with the message that caused it
                theirs = repr(e)
            if theirs != ours:
                failures.append((r.name, version, direction, ours.hex(), theirs))
        compared.add((key, version))
    assert failures == [], "\n".join(map(str, failures))
    old = {(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (1, 3), (2, 0), (8, 0), (8, 1), (9, 0), (19, 0), (19, 1),
           (20, 0), (29, 0), (30, 0), (31, 0), (32, 0)}  # fmt: skip
    assert old <= compared and len(compared) >= 60
