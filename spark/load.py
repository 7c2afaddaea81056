"""Finding, validating and loading traces: JSON-lines directories and Parquet written by `kactor trace convert`.

Checks done in Python before Spark starts (cheap, and they give one clear line): the folder exists, holds trace
files, and each file's header names a trace_version this reader knows. A last line without its newline that does
not parse is a crash's truncated write: accepted, with a warning. Any other line that does not parse is an error
naming the file and line (Spark counts bad lines per file; Python then finds the first one's line number).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlparse

from kactor.trace import TRACE_VERSION

PARQUET_META = "_kactor_trace.json"
_REQUIRED = (("seq", int), ("ts", (int, float)), ("sender", str), ("receiver", str), ("type", str))


class TraceInputError(Exception):
    """Bad input: one line, naming the folder, file and line at fault."""


@dataclass
class TraceFile:
    path: str
    process: str
    header: dict[str, Any]
    truncated_last_line: int | None = None  # 1-based line number of a crash-truncated last line


@dataclass
class TraceSource:
    jsonl: list[TraceFile] = field(default_factory=list)
    parquet: list[str] = field(default_factory=list)  # dataset directories
    headers: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _check_version(header: Any, where: str) -> None:
    if not isinstance(header, dict) or "trace_version" not in header:
        raise TraceInputError(f"{where}: line 1 is not a trace header (no trace_version)")
    version = header["trace_version"]
    if version != TRACE_VERSION:
        raise TraceInputError(f"{where}: unsupported trace_version {version!r} (this reader knows {TRACE_VERSION})")


def _last_line(path: str) -> tuple[bytes, bool]:
    """The file's last line and whether it ends with a newline."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        block = 1 << 16
        pos, tail = size, b""
        while pos > 0:
            step = min(block, pos)
            pos -= step
            f.seek(pos)
            tail = f.read(step) + tail
            if tail.rstrip(b"\n").count(b"\n") >= 1 or pos == 0:
                break
    ends_nl = tail.endswith(b"\n")
    body = tail[:-1] if ends_nl else tail
    return body.rsplit(b"\n", 1)[-1], ends_nl


def _count_lines(path: str) -> int:
    n, last = 0, b"\n"
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (0 if last == b"\n" else 1)


def _inspect_jsonl(path: str) -> TraceFile:
    with open(path, "rb") as f:
        first = f.readline()
    if not first.strip():
        raise TraceInputError(f"{path}: line 1: empty file (no trace header)")
    try:
        header = json.loads(first)
    except ValueError:
        raise TraceInputError(f"{path}: line 1: corrupt trace header") from None
    _check_version(header, path)
    process = os.path.basename(path)[: -len(".jsonl")]
    tf = TraceFile(path, process, header)
    last, ends_nl = _last_line(path)
    if not ends_nl and last.strip() and last != first.rstrip(b"\n"):
        try:
            json.loads(last)
        except ValueError:
            tf.truncated_last_line = _count_lines(path)
    return tf


def discover(inputs: list[str]) -> TraceSource:
    """Validate the inputs (folders or single .jsonl files) and list what they hold."""
    if not inputs:
        raise TraceInputError("no trace folder given")
    src = TraceSource()
    for item in inputs:
        if not os.path.exists(item):
            raise TraceInputError(f"{item}: no such trace folder")
        if os.path.isfile(item):
            if not item.endswith(".jsonl"):
                raise TraceInputError(f"{item}: not a trace file (expected <process>.jsonl)")
            files = [item]
        else:
            files = sorted(os.path.join(item, n) for n in os.listdir(item) if n.endswith(".jsonl"))
        if files:
            for path in files:
                tf = _inspect_jsonl(path)
                if tf.truncated_last_line is not None:
                    src.warnings.append(f"{path}: line {tf.truncated_last_line}: truncated last line "
                                        "(the process crashed while writing it); ignored")
                src.jsonl.append(tf)
                src.headers.append(tf.header)
            continue
        meta = os.path.join(item, PARQUET_META)
        if os.path.isfile(meta):
            try:
                with open(meta, encoding="utf-8") as f:
                    info = json.load(f)
            except ValueError:
                raise TraceInputError(f"{meta}: corrupt Parquet trace metadata") from None
            for h in info.get("headers", []):
                _check_version(h, meta)
                src.headers.append(h)
            src.parquet.append(item)
            continue
        raise TraceInputError(f"{item}: no trace files (*.jsonl, or a Parquet trace from `kactor trace convert`)")
    return src


def _file_of(url: str) -> str:
    return os.path.realpath(unquote(urlparse(url).path))


def first_bad_line(path: str, skip: int | None = None) -> tuple[int, str] | None:
    """Line number (1-based) and reason of the first record line that is not a valid trace record."""
    with open(path, "rb") as f:
        f.readline()
        for no, raw in enumerate(f, start=2):
            if no == skip:
                continue
            try:
                rec = json.loads(raw)
            except ValueError as e:
                return no, f"not JSON ({e.msg})"
            if not isinstance(rec, dict):
                return no, "not a JSON object"
            if "trace_version" in rec:
                continue
            for key, kind in _REQUIRED:
                if not isinstance(rec.get(key), kind) or isinstance(rec.get(key), bool):
                    return no, f"missing or bad field {key!r}"
    return None


def load(spark: Any, src: TraceSource, *, payload_types: tuple[str, ...] | None = None, keep: Any = None,
         project: Callable[[Any], Any] | None = None, persist: bool = False,
         group_keys: tuple[str, ...] = ()) -> tuple[Any, list[dict[str, Any]], list[dict[str, Any]]]:
    """Validate every input and return ``(records, processes, groups)``.

    One pass over the inputs counts lines per (file, process, *group_keys) — messages, bad lines, first and last
    ts — and raises TraceInputError for a corrupt line (file and line named); ``groups`` are those counts and
    ``processes`` their sums per process. ``records`` is the (lazy) DataFrame of valid records with TRACE_SCHEMA's
    columns, restricted to ``keep`` (a Column over them and ``_text``), mapped by ``project``, cached if ``persist``.

    With ``payload_types``, only records of those types keep their payload (the others' is null) and an internal
    column ``_text`` holds each record's raw text (line or payload) for ``keep`` and ``project`` to scan: a line is
    then parsed without copying its payload, which is most of its bytes.
    """
    from pyspark import StorageLevel
    from pyspark.sql import functions as F  # noqa: N812 - the PySpark convention
    from pyspark.sql.types import StructType

    from spark.schema import LINE_SCHEMA, TRACE_SCHEMA

    frames = []
    if src.jsonl:
        raw = spark.read.text([tf.path for tf in src.jsonl])
        schema = LINE_SCHEMA
        if payload_types is not None:
            schema = StructType([f for f in LINE_SCHEMA.fields if f.name != "payload"])
        parsed = raw.select(F.input_file_name().alias("_file"), F.from_json("value", schema).alias("r"), "value")
        rows = parsed.select(
            "_file",
            F.regexp_extract("_file", r"([^/]+)\.jsonl$", 1).alias("process"),
            *[F.col(f"r.{n}").alias(n) for n in schema.fieldNames()],
            *([] if payload_types is None else [F.col("value").alias("_text")]),
        )
        if payload_types is not None:
            rows = rows.withColumn("payload", F.when(F.col("type").isin(*payload_types),
                                                     F.get_json_object("_text", "$.payload")))
        bad = (F.col("seq").isNull() | F.col("ts").isNull() | F.col("sender").isNull()
               | F.col("receiver").isNull() | F.col("type").isNull())
        rows = rows.withColumn("_bad", F.when(F.col("trace_version").isNotNull(), F.lit(None)).otherwise(bad))
        frames.append(rows)
    if src.parquet:
        pq = spark.read.schema(TRACE_SCHEMA).parquet(*src.parquet)
        pq = pq.select(F.lit("").alias("_file"), *TRACE_SCHEMA.fieldNames(),
                       F.lit(None).cast("long").alias("trace_version"), F.lit(False).alias("_bad"))
        if payload_types is not None:
            pq = pq.withColumn("_text", F.col("payload")).withColumn(
                "payload", F.when(F.col("type").isin(*payload_types), F.col("payload")))
        frames.append(pq)
    allrows = frames[0]
    for other in frames[1:]:
        allrows = allrows.unionByName(other)
    stats = [
        r.asDict()
        for r in allrows.where(F.col("_bad").isNotNull())
        .groupBy("_file", "process", *group_keys)
        .agg(
            F.sum(F.col("_bad").cast("long")).alias("bad"),
            F.sum((~F.col("_bad")).cast("long")).alias("messages"),
            F.min(F.when(~F.col("_bad"), F.col("ts"))).alias("first_ts"),
            F.max(F.when(~F.col("_bad"), F.col("ts"))).alias("last_ts"),
        )
        .collect()
    ]
    _check(src, stats)
    records = allrows.where(~F.col("_bad"))
    if keep is not None:
        records = records.where(keep)
    if project is not None:
        records = project(records)
    records = records.drop("_file", "_bad", "trace_version", "_text")
    if persist:
        records = records.persist(StorageLevel.MEMORY_AND_DISK)
    per_process: dict[str, dict[str, Any]] = {}
    for row in stats:
        p = per_process.setdefault(row["process"], {"process": row["process"], "messages": 0,
                                                    "first_ts": None, "last_ts": None})
        p["messages"] += row["messages"] or 0
        for key, pick in (("first_ts", min), ("last_ts", max)):
            if row[key] is not None:
                p[key] = row[key] if p[key] is None else pick(p[key], row[key])
    return records, sorted(per_process.values(), key=lambda r: r["process"]), stats


def _check(src: TraceSource, stats: list[dict[str, Any]]) -> None:
    """Raise for the first file with more bad lines than its crash-truncated last line explains."""
    allowed = {os.path.realpath(tf.path): (1 if tf.truncated_last_line else 0, tf) for tf in src.jsonl}
    bad: dict[str, int] = {}
    for row in stats:
        if row["_file"] and row["bad"]:
            bad[row["_file"]] = bad.get(row["_file"], 0) + row["bad"]
    for url, count in sorted(bad.items()):
        path = _file_of(url)
        limit, tf = allowed.get(path, (0, None))
        if count > limit:
            found = first_bad_line(path, tf.truncated_last_line if tf else None)
            if found:
                raise TraceInputError(f"{path}: line {found[0]}: corrupt trace line: {found[1]}")
            raise TraceInputError(f"{path}: {count - limit} corrupt trace line(s)")
