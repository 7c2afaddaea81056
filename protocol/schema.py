"""The message schemas of every API and version in the 2.6 table, as plain specs the code generator compiles.

Source: kio 0.5.0 (Apache-2.0, pinned), whose per-version classes are generated from Kafka 3.9.0's
``clients/src/main/resources/common/message/*.json``; every version up to Kafka 2.6's maximum is the same message in
3.9's schemas (Kafka never changes a released version). We read kio's field metadata only — its types, nullability,
tags and defaults — and generate our own encoders/decoders (protocol/codegen.py), which are 3-5x faster than kio's
generic serializer (bench/wire_codec.py). Field names are Kafka's JSON names in snake case, with kio's unit-stripping
undone (``ThrottleTimeMs`` → ``throttle_time_ms``); values are plain Python: int, bool, str, bytes, float, UUID, lists
and dicts.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import functools
import uuid
from typing import Literal

import attrs
from kio.index import load_request_schema, load_response_schema
from kio.serial._implicit_defaults import get_tagged_field_default
from kio.serial._introspect import (
    EntityField,
    EntityTupleField,
    PrimitiveTupleField,
    classify_field,
    get_field_tag,
    get_schema_field_type,
    is_optional,
)

from protocol.api_versions import API_VERSIONS

Direction = Literal["request", "response"]

# kio's semantic types → the wire type Kafka's JSON names
_WIRE_TYPE = {
    "error_code": "int16",
    "timedelta_i32": "int32",
    "timedelta_i64": "int64",
    "datetime_i64": "int64",
    "records": "bytes",
}
_UNIT_TYPES = {"timedelta_i32", "timedelta_i64", "datetime_i64"}
# Tagged fields of 3.9's schemas inside 2.6's version ranges that Kafka 2.6 does not have (KIP-584 in 2.7, KIP-866
# in 3.4): left out so that we encode and decode exactly 2.6's messages (a 2.6 broker skips them as unknown tags).
_NOT_IN_2_6 = {
    ("ApiVersionsResponse", "supported_features"),
    ("ApiVersionsResponse", "finalized_features_epoch"),
    ("ApiVersionsResponse", "finalized_features"),
    ("ApiVersionsResponse", "zk_migration_ready"),
}
# kio's names that are not Kafka 2.6's: fields renamed after 2.6 (KIP-841's PartitionEpoch, KIP-848's
# GenerationIdOrMemberEpoch) and kio's escape of a Python builtin (``id_``). The wire is the same; the names are 2.6's.
_NAMES_IN_2_6 = {
    ("LeaderAndIsrPartitionState", "partition_epoch"): "zk_version",
    ("OffsetCommitRequest", "generation_id_or_member_epoch"): "generation_id",
    ("UpdateMetadataBroker", "id_"): "id",
}
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_ZERO = {
    "int8": 0, "int16": 0, "int32": 0, "int64": 0, "uint16": 0, "uint32": 0,
    "float64": 0.0, "bool": False, "string": "", "bytes": b"", "uuid": uuid.UUID(int=0),
}  # fmt: skip


@attrs.frozen
class FieldSpec:
    name: str
    kind: Literal["prim", "prim_array", "struct", "struct_array"]
    type: str  # wire type of a primitive or of an array's elements; the struct's name otherwise
    nullable: bool
    tag: int | None
    default: object
    struct: StructSpec | None = None
    semantic: str = ""  # kio's kafka_type: error_code, timedelta_i32, datetime_i64, records, … ("" for structs)


@attrs.frozen
class StructSpec:
    name: str
    flexible: bool
    fields: tuple[FieldSpec, ...]


def plain(value: object) -> object:
    """A kio value as a plain Python value: enums → int, durations and instants → milliseconds, tuples → lists."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime.timedelta):
        return value // datetime.timedelta(milliseconds=1)
    if isinstance(value, datetime.datetime):
        return (value - _EPOCH) // datetime.timedelta(milliseconds=1)
    if isinstance(value, tuple):
        return [plain(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            wire_name(f, type(value).__name__): _plain_field(f, getattr(value, f.name))
            for f in dataclasses.fields(value)
            if (type(value).__name__, f.name) not in _NOT_IN_2_6
        }
    if isinstance(value, bool | str | bytes | float | uuid.UUID) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    raise TypeError(f"no plain form for {value!r}")


def _plain_field(f: dataclasses.Field, value: object) -> object:
    # kio reads an instant of -1 ("no time", e.g. LogAppendTimeMs) as None; on the wire and here it is -1
    if value is None and f.metadata.get("kafka_type") == "datetime_i64":
        return -1
    return plain(value)


def wire_name(f: dataclasses.Field, owner: str) -> str:
    """Kafka 2.6's field name in snake case (kio drops the ``Ms`` of durations and instants)."""
    renamed = _NAMES_IN_2_6.get((owner, f.name))
    if renamed is not None:
        return renamed
    kafka_type = f.metadata.get("kafka_type")
    if kafka_type in _UNIT_TYPES and not f.name.endswith("_ms"):
        return f.name + "_ms"
    return f.name


def _field_spec(f: dataclasses.Field, owner: str) -> FieldSpec:
    tag = get_field_tag(f)
    cls = classify_field(f)
    nullable = tag is None and is_optional(f)
    default: object
    if tag is not None:
        default = plain(get_tagged_field_default(f))
    elif f.default is not dataclasses.MISSING:
        default = plain(f.default)
    else:
        default = None
    name = wire_name(f, owner)
    tag_int = None if tag is None else int(tag)
    if isinstance(cls, EntityField | EntityTupleField):
        sub = struct_spec(cls.type_)
        kind = "struct_array" if isinstance(cls, EntityTupleField) else "struct"
        if default is None and not nullable:
            default = [] if kind == "struct_array" else {}  # an absent struct: every field at its default
        return FieldSpec(name, kind, sub.name, nullable, tag_int, default, sub)
    kafka_type = get_schema_field_type(f)
    wire = _WIRE_TYPE.get(kafka_type, kafka_type)
    if kafka_type == "datetime_i64" and nullable:
        nullable, default = False, -1 if default is None else default
    if isinstance(cls, PrimitiveTupleField):
        if default is None and not nullable:
            default = []
        return FieldSpec(name, "prim_array", wire, nullable, tag_int, default, None, kafka_type)
    if default is None and not nullable:
        default = _ZERO[wire]
    return FieldSpec(name, "prim", wire, nullable, tag_int, default, None, kafka_type)


@functools.cache
def struct_spec(entity: type) -> StructSpec:
    owner = entity.__name__
    fields = tuple(_field_spec(f, owner) for f in dataclasses.fields(entity) if (owner, f.name) not in _NOT_IN_2_6)
    return StructSpec(entity.__name__, bool(entity.__flexible__), fields)


def kio_class(api_key: int, version: int, direction: Direction) -> type:
    load = load_request_schema if direction == "request" else load_response_schema
    return load(api_key, version)


def message_spec(api_key: int, version: int, direction: Direction) -> StructSpec:
    """The spec of one API's request or response body at one version of the 2.6 table."""
    r = API_VERSIONS[api_key]
    if not r.min_version <= version <= r.max_version:
        raise ValueError(f"{r.name} v{version} is outside Kafka 2.6's range {r.min_version}-{r.max_version}")
    return struct_spec(kio_class(api_key, version, direction))
