"""Encode and decode the body of any request or response Kafka 2.6 serves: ``encode_request(api_key, version, value)``
and friends, backed by one generated codec per (API, version, direction), compiled on first use and cached."""

from __future__ import annotations

import functools

from protocol.api_versions import API_VERSIONS
from protocol.codegen import CompiledCodec, Decoder, Encoder, compile_codec
from protocol.errors import UnknownApiKeyError, UnsupportedVersionError
from protocol.schema import Direction, message_spec


@functools.cache
def compiled(api_key: int, version: int, direction: Direction) -> CompiledCodec:
    """The generated functions of one message; ``UnknownApiKeyError``/``UnsupportedVersionError`` outside the 2.6
    table."""
    r = API_VERSIONS.get(api_key)
    if r is None:
        raise UnknownApiKeyError(f"unknown api key {api_key}")
    if not r.min_version <= version <= r.max_version:
        raise UnsupportedVersionError(f"{r.name} v{version} is not in {r.min_version}-{r.max_version}")
    return compile_codec(message_spec(api_key, version, direction), f"{r.name}{direction.title()} v{version}")


@functools.cache
def codec(api_key: int, version: int, direction: Direction) -> tuple[Encoder, Decoder]:
    """The generated ``(encode, decode)`` of one message (`compiled`)."""
    c = compiled(api_key, version, direction)
    return c.encode, c.decode


def encode_request(api_key: int, version: int, value: dict) -> bytes:
    return codec(api_key, version, "request")[0](value)


def decode_request(api_key: int, version: int, buf: bytes, pos: int = 0) -> tuple[dict, int]:
    return codec(api_key, version, "request")[1](buf, pos)


def encode_response(api_key: int, version: int, value: dict) -> bytes:
    return codec(api_key, version, "response")[0](value)


def decode_response(api_key: int, version: int, buf: bytes, pos: int = 0) -> tuple[dict, int]:
    return codec(api_key, version, "response")[1](buf, pos)
