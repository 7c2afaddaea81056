"""Explicit Spark schemas for trace lines and for the payloads the summaries read (docs/trace-format.md).

The payload is never inferred: a line is read with ``LINE_SCHEMA`` (payload kept as its raw JSON text), and only the
observability records are parsed again with ``OBS_PAYLOAD_SCHEMA`` — the union of the per-type sub-schemas below,
whose field names do not clash in type.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
)


def _s(*fields: tuple[str, DataType]) -> StructType:
    return StructType([StructField(name, dtype, True) for name, dtype in fields])


# One line of a <process>.jsonl file: the header has trace_version (and no seq); every other line is a record.
LINE_SCHEMA = _s(
    ("trace_version", LongType()),
    ("seq", LongType()),
    ("ts", DoubleType()),
    ("sender", StringType()),
    ("receiver", StringType()),
    ("type", StringType()),
    ("payload", StringType()),  # the raw codec JSON of the message
    ("cause", LongType()),
)

# What counting and validating a line needs: LINE_SCHEMA without the payload and the cause.
HEAD_SCHEMA = _s(*[(f.name, f.dataType) for f in LINE_SCHEMA.fields if f.name not in ("payload", "cause")])

# The records as the pipeline (and `kactor trace convert`'s Parquet) holds them: one row per received message.
TRACE_SCHEMA = _s(
    ("process", StringType()),
    ("seq", LongType()),
    ("ts", DoubleType()),
    ("sender", StringType()),
    ("receiver", StringType()),
    ("type", StringType()),
    ("payload", StringType()),
    ("cause", LongType()),
)

# An error other than NONE anywhere in a payload (Errors encoded as {"@e":"Errors","v":X}), and each error's name
ANY_ERROR_RE = r'"@e":"Errors","v":"(?!NONE")'
ERRORS_RE = r'"@e":"Errors","v":"([A-Z_]+)"'

TOPIC_PARTITION = _s(("topic", StringType()), ("partition", LongType()))

CONTROLLER_EVENT_PROCESSED = _s(
    ("event", StringType()),
    ("controller_state", StringType()),
    ("enqueued_ms", DoubleType()),
    ("started_ms", DoubleType()),
    ("finished_ms", DoubleType()),
    ("queue_size", LongType()),
)

PARTITION_STATE_CHANGE = _s(
    ("topic_partition", TOPIC_PARTITION), ("from_state", StringType()), ("to_state", StringType())
)
REPLICA_STATE_CHANGE = _s(
    ("topic_partition", TOPIC_PARTITION),
    ("replica", LongType()),
    ("from_state", StringType()),
    ("to_state", StringType()),
)
LEADER_ELECTION = _s(
    ("topic_partition", TOPIC_PARTITION),
    ("strategy", StringType()),
    ("leader", LongType()),
    ("leader_epoch", LongType()),
    ("isr", ArrayType(LongType())),
    ("unclean", BooleanType()),
)
STATE_CHANGE_BATCH = _s(
    ("controller_epoch", LongType()),
    ("partition_changes", ArrayType(PARTITION_STATE_CHANGE)),
    ("replica_changes", ArrayType(REPLICA_STATE_CHANGE)),
    ("elections", ArrayType(LEADER_ELECTION)),
)

CHANNEL_REQUEST_COMPLETED = _s(
    ("broker_id", LongType()),
    ("request_type", StringType()),
    ("enqueued_ms", DoubleType()),
    ("sent_ms", DoubleType()),
    ("completed_ms", DoubleType()),
    ("attempts", LongType()),
    ("error", StringType()),
    ("queue_size", LongType()),
)

CONTROLLER_GAUGES = _s(
    ("active", BooleanType()),
    ("controller_epoch", LongType()),
    ("offline_partitions", LongType()),
    ("preferred_replica_imbalance", LongType()),
    ("global_topics", LongType()),
    ("global_partitions", LongType()),
    ("topics_to_delete", LongType()),
    ("replicas_to_delete", LongType()),
    ("under_replicated_partitions", LongType()),
)

CONTROLLER_CHANGED = _s(("broker_id", LongType()), ("controller_epoch", LongType()), ("active", BooleanType()))
TOPIC_DELETION_PROGRESS = _s(("topic", StringType()), ("phase", StringType()), ("reason", StringType()))
REASSIGNMENT_PROGRESS = _s(
    ("topic_partition", TOPIC_PARTITION),
    ("phase", StringType()),
    ("target_replicas", ArrayType(LongType())),
    ("reason", StringType()),
)

PAYLOAD_SCHEMAS: dict[str, StructType] = {
    "ControllerEventProcessed": CONTROLLER_EVENT_PROCESSED,
    "StateChangeBatch": STATE_CHANGE_BATCH,
    "ChannelRequestCompleted": CHANNEL_REQUEST_COMPLETED,
    "ControllerGauges": CONTROLLER_GAUGES,
    "ControllerChanged": CONTROLLER_CHANGED,
    "TopicDeletionProgress": TOPIC_DELETION_PROGRESS,
    "ReassignmentProgress": REASSIGNMENT_PROGRESS,
}
OBS_TYPES = tuple(PAYLOAD_SCHEMAS)

# What the summary's tables read of each payload: a StateChangeBatch is parsed down to its state pairs and election
# kinds (its partitions, replicas, leaders and ISRs are most of its bytes and no table uses them).
_STATE_PAIR = _s(("from_state", StringType()), ("to_state", StringType()))
SUMMARY_SCHEMAS: dict[str, StructType] = dict(PAYLOAD_SCHEMAS, StateChangeBatch=_s(
    ("partition_changes", ArrayType(_STATE_PAIR)),
    ("replica_changes", ArrayType(_STATE_PAIR)),
    ("elections", ArrayType(_s(("strategy", StringType()), ("unclean", BooleanType())))),
))


def _union(schemas: list[StructType]) -> StructType:
    fields: dict[str, StructField] = {}
    for schema in schemas:
        for f in schema.fields:
            seen = fields.get(f.name)
            if seen is not None and seen.dataType != f.dataType:
                raise TypeError(f"payload field {f.name!r} has two types: {seen.dataType} and {f.dataType}")
            fields[f.name] = f
    return StructType(list(fields.values()))


OBS_PAYLOAD_SCHEMA = _union(list(PAYLOAD_SCHEMAS.values()))


def payload_column(typ: str) -> str:
    """The column holding a ``typ`` record's parsed payload (SUMMARY_SCHEMAS[typ]; null in other rows)."""
    return f"p_{typ}"


# What the summary's tables read of a record, parsed: each observability type's payload (one struct column per type),
# ``errors`` (the errors other than NONE anywhere in the payload; null when there is none) and ``_pbad`` (an
# observability record whose payload does not parse).
PARSED_FIELDS = (*[StructField(payload_column(typ), schema, True) for typ, schema in SUMMARY_SCHEMAS.items()],
                 StructField("errors", ArrayType(StringType()), True), StructField("_pbad", BooleanType(), True))

# The columns cache (spark/columns.py), version 2: every line but the headers, once. ``_name``: the file's name;
# ``_fast``: a record in the writer's fixed key order (else the fields are null and ``payload`` holds the whole
# line); a fixed-order row the summary reads also holds PARSED_FIELDS (null in the others), so a summary from the
# cache parses no JSON and runs no regular expression; ``observed`` (the partition column): a row the summary's
# observed read needs.
CACHE_SCHEMA = _s(
    ("_name", StringType()),
    *[(f.name, f.dataType) for f in TRACE_SCHEMA.fields],
    ("_fast", BooleanType()),
    *[(f.name, f.dataType) for f in PARSED_FIELDS],
    ("observed", BooleanType()),
)
