"""Helpers for the core/api converter tests: a body through protocol's codec and back, every byte consumed."""

from __future__ import annotations

from typing import Any

from protocol.codec import decode_request, decode_response, encode_request, encode_response


def request_through_wire(api_key: int, version: int, body: dict[str, Any]) -> tuple[bytes, dict[str, Any]]:
    """(the bytes ``body`` encodes to, the body decoded back from them)."""
    data = encode_request(api_key, version, body)
    decoded, end = decode_request(api_key, version, data)
    assert end == len(data)
    return data, decoded


def response_through_wire(api_key: int, version: int, body: dict[str, Any]) -> tuple[bytes, dict[str, Any]]:
    data = encode_response(api_key, version, body)
    decoded, end = decode_response(api_key, version, data)
    assert end == len(data)
    return data, decoded
