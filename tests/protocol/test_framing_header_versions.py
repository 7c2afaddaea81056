"""protocol/framing.py keeps each (api key, version)'s header versions: the kept answers are
api_versions.request_header_version's and response_header_version's, asked once or again, in and out of range; and
the generated encoders' inlined legacy counts and strings write what write_count and write_string write."""

from __future__ import annotations

from protocol import framing
from protocol import primitives as p
from protocol.api_versions import API_VERSIONS, request_header_version, response_header_version
from protocol.codec import compiled


def test_kept_header_versions_are_the_plain_ones() -> None:
    for _ in range(2):
        for key, r in API_VERSIONS.items():
            for version in range(0, r.max_version + 3):
                assert framing._request_header_version(key, version) == request_header_version(key, version)
                assert framing._response_header_version(key, version) == response_header_version(key, version)


def test_an_inlined_count_and_string_write_what_the_primitives_write() -> None:
    """The Fetch request v11 (legacy: counts, a string per topic, rack_id) against the bytes written field by field
    with write_count / write_string."""
    body = {"replica_id": 2, "max_wait_ms": 500, "min_bytes": 1, "max_bytes": 10, "isolation_level": 0,
            "session_id": 7, "session_epoch": 3,
            "topics": [{"topic": "tópico", "partitions": [
                {"partition": 1, "current_leader_epoch": 4, "fetch_offset": 9, "log_start_offset": 0,
                 "partition_max_bytes": 100}]}],
            "forgotten_topics_data": [{"topic": "u", "partitions": [3, 4]}], "rack_id": "rack-1"}
    expected = bytearray(p.I32.pack(2) + p.I32.pack(500) + p.I32.pack(1) + p.I32.pack(10) + bytes([0])
                         + p.I32.pack(7) + p.I32.pack(3))
    p.write_count(expected, 1, False)
    p.write_string(expected, "tópico")
    p.write_count(expected, 1, False)
    expected += p.I32.pack(1) + p.I32.pack(4) + p.I64.pack(9) + p.I64.pack(0) + p.I32.pack(100)
    p.write_count(expected, 1, False)
    p.write_string(expected, "u")
    p.write_count(expected, 2, False)
    expected += p.I32.pack(3) + p.I32.pack(4)
    p.write_string(expected, "rack-1")
    assert compiled(1, 11, "request").encode(body) == bytes(expected)
