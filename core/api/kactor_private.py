"""kactor's private APIs: introspection Kafka has no API for, on api keys >= 10000 that are never advertised in
ApiVersions (a Kafka client never asks for them; Kafka's own keys stop at 49 in 2.6 and below 100 today).

DescribeMetadataCache (key 10000, v0): what one broker's MetadataCache holds — the partition states exactly as the
controller's last UpdateMetadata left them (zkVersion included, ISR not filtered by liveness), the alive brokers and
the controller id. Kafka's Metadata answers carry neither the zkVersion nor, in kactor, an unfiltered ISR, and the
real-cluster tests check both to see that an ISR change reached every broker.

protocol/ knows only Kafka's keys, so the frames are written here, in Kafka's framing: request header v1 (api key,
version, correlation id, client id), response header v0 (correlation id), and a body of one Kafka BYTES field
(int32 length, then the bytes) holding the message codec's JSON of the internal value (messages/codec: typed, never
unpickled). As a body dict: ``{"json": bytes}``. The edge uses ``PRIVATE_CODEC`` (``ApiSpec.body_codec``) for these
keys instead of protocol's codec.
"""

from __future__ import annotations

import struct
from typing import Any

import attrs

from core.api.registry import ApiSpec, ReplicaManagerService, RequestContext, register, with_principal
from core.broker.shards import ShardedRequest, answers_of
from core.security.acl import AclOperation
from core.security.authorizer import Authorized, RequestAuthorizer, allowed, refused
from messages.codec import CodecError, dumps_bytes, loads
from messages.replication import DescribeMetadataCacheRequest, DescribeMetadataCacheResponse
from protocol import primitives as p
from protocol.errors import MalformedError, TruncatedError, UnknownApiKeyError, UnsupportedVersionError
from protocol.framing import Request, RequestHeader, frame

PRIVATE_API_KEY_MIN = 10000
DESCRIBE_METADATA_CACHE_KEY = 10000
_HEADER = struct.Struct(">hhi")
_CORRELATION = struct.Struct(">i")


def is_private(api_key: int) -> bool:
    return api_key >= PRIVATE_API_KEY_MIN


def _body(data: bytes) -> bytes:
    out = bytearray()
    p.write_bytes(out, data)
    return bytes(out)


def _read_body(payload: bytes, pos: int) -> dict[str, Any]:
    data, _ = p.read_bytes(payload, pos)
    if data is None:
        raise MalformedError("a kactor-private body may not be null")
    return {"json": data}


@attrs.frozen
class PrivateBodyCodec:
    """Frames of the kactor-private keys (``min_version``..``max_version``) for the edge and the blocking client."""

    api_keys: frozenset[int]
    min_version: int = 0
    max_version: int = 0

    def decode_request(self, payload: bytes) -> Request:
        """A whole request frame (without its size): protocol's errors for bad input, as ``decode_request``."""
        payload = bytes(payload)
        if len(payload) < _HEADER.size:
            raise TruncatedError(f"request header needs {_HEADER.size} bytes, the frame has {len(payload)}")
        api_key, version, correlation_id = _HEADER.unpack_from(payload, 0)
        if api_key not in self.api_keys:
            raise UnknownApiKeyError(f"unknown api key {api_key} (correlation id {correlation_id})")
        client_id, pos = p.read_string(payload, _HEADER.size)
        header = RequestHeader(api_key, version, correlation_id, client_id)
        if not self.min_version <= version <= self.max_version:
            raise UnsupportedVersionError(f"kactor-private api {api_key} v{version} is not supported "
                                          f"(serves {self.min_version}-{self.max_version})", header)
        return Request(header, _read_body(payload, pos))

    def encode_request(self, header: RequestHeader, body: dict[str, Any]) -> bytes:
        head = bytearray(_HEADER.pack(header.request_api_key, header.request_api_version, header.correlation_id))
        p.write_string(head, header.client_id)
        return frame(bytes(head) + _body(body["json"]))

    def encode_response(self, api_key: int, version: int, correlation_id: int, body: dict[str, Any]) -> bytes:
        return frame(_CORRELATION.pack(correlation_id) + _body(body["json"]))

    def decode_response(self, api_key: int, version: int, payload: bytes) -> tuple[int, dict[str, Any]]:
        payload = bytes(payload)
        if len(payload) < _CORRELATION.size:
            raise TruncatedError("response header needs 4 bytes")
        (correlation_id,) = _CORRELATION.unpack_from(payload, 0)
        return correlation_id, _read_body(payload, _CORRELATION.size)


PRIVATE_CODEC = PrivateBodyCodec(frozenset({DESCRIBE_METADATA_CACHE_KEY}))


def _decode(body: dict[str, Any], expected: type) -> Any:
    try:
        value = loads(body["json"])
    except CodecError as e:
        raise ValueError(f"kactor-private body: {e}") from None
    if not isinstance(value, expected):
        raise ValueError(f"kactor-private body is a {type(value).__name__}, not a {expected.__name__}")
    return value


def request_from_wire(version: int, body: dict[str, Any],
                      ctx: RequestContext | None = None) -> DescribeMetadataCacheRequest:
    return _decode(body, DescribeMetadataCacheRequest)


def request_to_wire(request: DescribeMetadataCacheRequest) -> dict[str, Any]:
    return {"json": dumps_bytes(request)}


def response_to_wire(version: int, response: DescribeMetadataCacheResponse) -> dict[str, Any]:
    return {"json": dumps_bytes(response)}


def response_from_wire(version: int, body: dict[str, Any]) -> DescribeMetadataCacheResponse:
    return _decode(body, DescribeMetadataCacheResponse)


def error_response(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    """No cache to describe: controller -1, nothing alive, no partitions (the asker sees an empty cache)."""
    return response_to_wire(version, DescribeMetadataCacheResponse(-1, (), ()))


def authorize(request: DescribeMetadataCacheRequest, auth: RequestAuthorizer) -> Authorized:
    """kactor's own rule (no Kafka API): with an authorizer, DESCRIBE on the Cluster, else an empty cache."""
    if auth.allows_cluster(AclOperation.DESCRIBE):
        return allowed(request)
    return refused(DescribeMetadataCacheResponse(-1, (), ()))


def merge(request: DescribeMetadataCacheRequest, parts: dict[int, DescribeMetadataCacheResponse]
          ) -> DescribeMetadataCacheResponse:
    """Every shard's partitions, in the request's topic order (by name when it names none)."""
    answers = answers_of(parts)
    order = {t: i for i, t in enumerate(request.topics)}
    states = sorted((st for a in answers for st in a.partition_states),
                    key=lambda st: (order.get(st.topic_partition.topic, 0) if order else st.topic_partition.topic,
                                    st.topic_partition.partition))
    return DescribeMetadataCacheResponse(answers[0].controller_id, answers[0].alive_brokers, tuple(states))


# each shard holds its partitions' part of the cache
SHARDED = ShardedRequest(DescribeMetadataCacheRequest, lambda request, shards: dict.fromkeys(range(shards), request),
                         merge, lambda request, code: DescribeMetadataCacheResponse(-1, (), ()),
                         lambda rm, part, now_ms, reply: rm.handle_describe_metadata_cache(part))


SPEC = ApiSpec(DESCRIBE_METADATA_CACHE_KEY, ReplicaManagerService(SHARDED), with_principal(request_from_wire),
               response_to_wire, error_response, request_type=DescribeMetadataCacheRequest, authorize=authorize,
               send_version=0, request_to_wire=request_to_wire, response_from_wire=response_from_wire,
               body_codec=PRIVATE_CODEC)
register(SPEC)
