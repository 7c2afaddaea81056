"""Finding, validating and loading traces: JSON-lines directories and Parquet written by `kactor trace convert`.

Checks done in Python before Spark starts (cheap, and they give one clear line): the folder exists, holds trace
files, and each file's header names a trace_version this reader knows. A last line without its newline that does
not parse is a crash's truncated write: accepted, with a warning. Any other line that does not parse is an error
naming the file and line (Spark counts bad lines per file; Python then finds the first one's line number). "Parse"
means: a line in the writer's key order has that prefix and ending (``lines``), any other line is valid JSON with
the required fields (``resolve``); payloads are checked where a reader parses them (the summary: observability
records), not otherwise.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlparse

from messages.codec import TRACE_VERSIONS, known_trace_version

PARQUET_META = "_kactor_trace.json"
_REQUIRED = (("seq", int), ("ts", (int, float)), ("sender", str), ("receiver", str), ("type", str))


class TraceInputError(Exception):
    """Bad input: one line, naming the folder, file and line at fault."""


@dataclass
class TraceFile:
    path: str
    process: str  # the file's name without .jsonl; in a campaign folder, its seed folder's name first (seed-2/broker-0)
    header: dict[str, Any]
    truncated_last_line: int | None = None  # 1-based line number of a crash-truncated last line

    @property
    def prefix(self) -> str:
        """What ``process`` holds before the file's own name: ``"seed-2/"`` for a file of a campaign folder's seed
        folder, ``""`` otherwise."""
        return self.process[: len(self.process) - len(file_process(self.path))]


def file_process(path: str) -> str:
    """The process a trace file is of, from its name alone: ``broker-0.jsonl`` -> ``broker-0``."""
    return os.path.basename(path)[: -len(".jsonl")]


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
    if not known_trace_version(version):
        raise TraceInputError(f"{where}: unsupported trace_version {version!r} "
                              f"(this reader knows {', '.join(map(str, TRACE_VERSIONS))})")


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


def _inspect_jsonl(path: str, prefix: str = "") -> TraceFile:
    with open(path, "rb") as f:
        first = f.readline()
    if not first.strip():
        raise TraceInputError(f"{path}: line 1: empty file (no trace header)")
    try:
        header = json.loads(first)
    except ValueError:
        raise TraceInputError(f"{path}: line 1: corrupt trace header") from None
    _check_version(header, path)
    tf = TraceFile(path, prefix + file_process(path), header)
    last, ends_nl = _last_line(path)
    if not ends_nl and last.strip() and last != first.rstrip(b"\n"):
        try:
            json.loads(last)
        except ValueError:
            tf.truncated_last_line = _count_lines(path)
    return tf


def _jsonl_in(folder: str) -> list[str]:
    return sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".jsonl"))


def campaign_folders(folder: str) -> list[str]:
    """The folders one level down in ``folder`` that hold ``*.jsonl``, if ``folder`` itself holds neither those nor a
    Parquet trace (else none): the seed folders of a ``kactor sim --trace-dir`` campaign, ``seed-<N>/``, in seed
    order (seed-2 before seed-10). Hidden folders (a columns cache) are skipped."""
    if not os.path.isdir(folder) or _jsonl_in(folder) or os.path.isfile(os.path.join(folder, PARQUET_META)):
        return []

    def order(name: str) -> tuple[Any, ...]:
        return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))

    subs = (os.path.join(folder, n) for n in sorted(os.listdir(folder), key=order) if not n.startswith("."))
    return [sub for sub in subs if os.path.isdir(sub) and _jsonl_in(sub)]


def discover(inputs: list[str]) -> TraceSource:
    """Validate the inputs (folders or single .jsonl files) and list what they hold.

    A folder holding no ``*.jsonl`` and no Parquet trace but folders that do (one level: a ``kactor sim`` campaign's
    ``seed-<N>`` folders) is read as all of them, each process named by its folder too (``seed-2/broker-0``): the
    seeds are separate clusters whose processes share names. Any other folder's processes are named by their files
    alone."""
    if not inputs:
        raise TraceInputError("no trace folder given")
    src = TraceSource()
    for item in inputs:
        if not os.path.exists(item):
            raise TraceInputError(f"{item}: no such trace folder")
        if os.path.isfile(item):
            if not item.endswith(".jsonl"):
                raise TraceInputError(f"{item}: not a trace file (expected <process>.jsonl)")
            files = [(item, "")]
        else:
            # a campaign folder's files are named by their seed folder too (TraceFile.prefix)
            files = [(path, "") for path in _jsonl_in(item)] or [
                (path, os.path.basename(sub) + "/") for sub in campaign_folders(item) for path in _jsonl_in(sub)]
        if files:
            for path, prefix in files:
                tf = _inspect_jsonl(path, prefix)
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


# A record line as kactor's writer emits it: these keys first, in this order, no spaces (docs/trace-format.md).
_PREFIX_KEYS = ('{"seq":', ',"ts":', ',"sender":"', '","receiver":"', '","type":"', '","payload":')
_CAUSE_KEY = ',"cause":'
# The prefix up to the payload, exactly (N an integer, T a number, names without quotes or escapes), and each
# value in it: the text after each `":`, a quote skipped.
_FIXED_HEAD = r'\{"seq":-?[0-9]+,"ts":-?[0-9][0-9.eE+-]*,"sender":"[^"\\]*","receiver":"[^"\\]*","type":"'
_PREFIX_RE = "^" + _FIXED_HEAD + r'[^"\\]*$'
_HEADER_START = '{"trace_version":'


def lines(spark: Any, src: TraceSource) -> Any:
    """Every input line (JSON lines) or record (Parquet) as one lazy DataFrame, read the cheap way.

    Columns: ``_file`` (the file's URL; "" for Parquet), ``process`` (TraceFile.process), ``seq``, ``ts``,
    ``sender``, ``receiver``, ``type``, ``cause``, ``_fast``, ``_head``, ``_text`` (the raw line, or a Parquet
    record's payload: where errors are searched), ``_doc`` (a JSON object whose ``payload`` key holds the record's
    payload: the line itself, or a Parquet payload wrapped), ``_part``. Columns a query does not use are pruned
    away.

    A JSON line is read from the writer's fixed key order (docs/trace-format.md): ``_fast`` holds when it is
    ``{"seq":N,"ts":T,"sender":"S","receiver":"R","type":"Y","payload":...,"cause":C}`` (N an integer, T a number,
    S/R/Y without quotes or escapes, C an integer or null), found by two regular expressions over the ~120
    characters before the payload and one over the few after it; the fields are null otherwise. ``_head``: the
    line starts as a header does. Any other line ("slow": keys in another order, or not a record) is parsed in
    full by ``resolve``, only where it occurs. Why not from_json over every line: it tokenises the payload too,
    and from_json cannot be compiled into Spark's generated code for the scan (measured on a million lines:
    ~10 CPU-s to parse just the prefix with it, ~4 for this, 2 to read the text).

    Built in stages, each referring to the previous one's columns, because Spark keeps a projection apart from
    the next one when that one uses its costly columns more than once: so every piece is computed once per line.
    ``_part`` (the Spark partition id) makes the last projection nondeterministic, which stops Spark from pushing
    a filter below it (pushed down, the filter would repeat the parsing in its own condition). A query that
    filters these rows should use ``_part`` too (``_part >= 0``, always true), so that column pruning cannot
    drop it first.
    """
    from pyspark.sql import functions as F  # noqa: N812 - the PySpark convention

    from spark.schema import TRACE_SCHEMA

    frames = []
    # one read per process-name prefix: a single one for a trace folder (names from the files' names alone); a
    # campaign folder's seed folders each add their own name before the file's (TraceFile.prefix)
    by_prefix: dict[str, list[str]] = {}
    for tf in src.jsonl:
        by_prefix.setdefault(tf.prefix, []).append(tf.path)
    for name_prefix, paths in by_prefix.items():
        raw = spark.read.text(paths)
        process = F.expr("substring(_metadata.file_name, 1, length(_metadata.file_name) - 6)")
        if name_prefix:
            process = F.concat(F.lit(name_prefix), process)
        v, prefix, tail = F.col("value"), F.col("_prefix"), F.col("_tail")
        nums, names = F.col("_nums"), F.col("_names")
        staged = raw.select(
            F.col("_metadata.file_path").alias("_file"), process.alias("process"), v,
            F.substring_index(v, _PREFIX_KEYS[-1], 1).alias("_prefix"),
            F.substring_index(v, _CAUSE_KEY, -1).alias("_tail"))  # "N}" or "null}"
        staged = staged.select(
            "*", F.substring_index(prefix, _PREFIX_KEYS[2], 1).alias("_nums"),  # {"seq":N,"ts":T
            F.substring_index(prefix, _PREFIX_KEYS[2], -1).alias("_names"),  # S","receiver":"R","type":"Y
            (prefix.rlike(_PREFIX_RE) & tail.rlike(r"^(?:null|-?[0-9]+)\}$")
             & (F.octet_length(v) > F.octet_length(prefix) + F.octet_length(tail) + len(_PREFIX_KEYS[-1])
                + len(_CAUSE_KEY))).alias("_fast"))
        # the values cut out by byte position (substring_index), not by a regular expression: regexp_extract_all
        # decoded each prefix to a Java string and cost ~1.1 of the count's ~5 CPU-s per million lines (warm)
        receiver_type = F.substring_index(names, _PREFIX_KEYS[3], -1)
        fast = {"seq": F.substring_index(F.substring_index(nums, _PREFIX_KEYS[1], 1), ":", -1).try_cast("long"),
                "ts": F.substring_index(nums, _PREFIX_KEYS[1], -1).try_cast("double"),
                "sender": F.substring_index(names, _PREFIX_KEYS[3], 1),
                "receiver": F.substring_index(receiver_type, _PREFIX_KEYS[4], 1),
                "type": F.substring_index(names, _PREFIX_KEYS[4], -1),
                "cause": F.substring_index(tail, "}", 1).try_cast("long")}
        frames.append(staged.select(
            "_file", "process", *[F.when(F.col("_fast"), c).alias(n) for n, c in fast.items()],
            "_fast", v.startswith(_HEADER_START).alias("_head"), v.alias("_text"), v.alias("_doc"),
            F.spark_partition_id().alias("_part")))
    if src.parquet:
        pq = spark.read.schema(TRACE_SCHEMA).parquet(*src.parquet)
        frames.append(pq.select(
            F.lit("").alias("_file"), "process", "seq", "ts", "sender", "receiver", "type", "cause",
            F.lit(True).alias("_fast"), F.lit(False).alias("_head"), F.col("payload").alias("_text"),
            F.concat(F.lit('{"payload":'), "payload", F.lit("}")).alias("_doc"), F.spark_partition_id().alias("_part")))
    return union_by_name(frames)


def union_by_name(frames: list[Any]) -> Any:
    """``DataFrame.unionByName`` over ``frames`` (at least one), in their order: the trace's parts as one frame."""
    out = frames[0]
    for other in frames[1:]:
        out = out.unionByName(other)
    return out


def resolve(rows: Any) -> Any:
    """``rows`` (from ``lines``, filtered) with a slow line's fields parsed in full (from_json), ``_bad`` (null
    for a header line, else whether the line is not a valid record) and ``payload`` (its JSON text). Cheap only on
    few rows: from_json keeps this projection out of Spark's generated code."""
    from pyspark.sql import functions as F  # noqa: N812 - the PySpark convention

    from spark.schema import LINE_SCHEMA

    text, fast = F.col("_text"), F.col("_fast")
    full = F.from_json(text, LINE_SCHEMA)
    fields = {n: F.when(fast, F.col(n)).otherwise(full[n]) for n in ("seq", "ts", "sender", "receiver", "type",
                                                                      "cause")}
    bad = (fields["seq"].isNull() | fields["ts"].isNull() | fields["sender"].isNull()
           | fields["receiver"].isNull() | fields["type"].isNull())
    header = ~fast & full["trace_version"].isNotNull()
    parquet = F.col("_file") == ""
    # a fixed-order line's payload is cut out as the exact bytes the writer wrote (byte positions, so binary)
    start = F.octet_length(F.substring_index(text, _PREFIX_KEYS[-1], 1)) + len(_PREFIX_KEYS[-1]) + 1
    end = F.octet_length(text) - F.octet_length(F.substring_index(text, _CAUSE_KEY, -1)) - len(_CAUSE_KEY)
    cut = F.substring(text.cast("binary"), start, end - start + 1).cast("string")
    payload = F.when(parquet, text).when(fast, cut).otherwise(full["payload"])
    return rows.select(
        "_file", "process", *[c.alias(n) for n, c in fields.items()], "_fast", "_text", "_doc",
        F.when(header, F.lit(None)).otherwise(bad).alias("_bad"), payload.alias("payload"),
        F.spark_partition_id().alias("_part"))


def parsed_columns(text: Any, doc: Any, only: Any = None) -> list[Any]:
    """schema.PARSED_FIELDS computed from a record's ``text`` (where errors are searched: its line or payload),
    ``doc`` (a JSON object whose ``payload`` key holds its payload) and ``type``: each observability payload
    parsed (from_json with SUMMARY_SCHEMAS) into its type's column, the errors other than NONE (a regular
    expression); ``_pbad`` is ``payload_bad``. ``only``: a condition; where it does not hold every column is
    null (nothing parsed).
    The summary computes these once per record: into the columns cache (spark/columns.py), or where it reads
    records from elsewhere (a Parquet trace, a line not in the writer's key order)."""
    from pyspark.sql import functions as F  # noqa: N812 - the PySpark convention
    from pyspark.sql.types import StructField, StructType

    from spark.schema import ANY_ERROR_RE, ERRORS_RE, SUMMARY_SCHEMAS, payload_column

    typ = F.col("type")

    def gate(cond: Any) -> Any:
        return cond if only is None else only & cond

    payloads = [F.when(gate(typ == name), F.from_json(doc, StructType([StructField("payload", schema)]))
                       ["payload"]).alias(payload_column(name))
                for name, schema in SUMMARY_SCHEMAS.items()]
    errors = F.when(gate(text.rlike(ANY_ERROR_RE)),
                    F.filter(F.regexp_extract_all(text, F.lit(ERRORS_RE), F.lit(1)), lambda e: e != "NONE"))
    return [*payloads, errors.alias("errors")]


def payload_bad(only: Any = None) -> Any:
    """``_pbad``, over ``parsed_columns``' output (a later projection: it reads their columns): an observability
    record none of whose type's payload parsed; null where ``only`` does not hold."""
    from pyspark.sql import functions as F  # noqa: N812 - the PySpark convention

    from spark.schema import OBS_TYPES, SUMMARY_SCHEMAS, payload_column

    parsed = F.lit(False)
    for name in SUMMARY_SCHEMAS:
        parsed = parsed | F.col(payload_column(name)).isNotNull()
    bad = F.col("type").isin(*OBS_TYPES) & ~parsed
    return (bad if only is None else F.when(only, bad)).alias("_pbad")


def count(src: TraceSource, rows: Any, group_keys: tuple[str, ...] = (),
          reread: Callable[[TraceSource], Any] | None = None) -> tuple[
        list[dict[str, Any]], list[dict[str, Any]], TraceSource | None]:
    """One pass over ``rows`` (from ``lines``, or spark.columns.frame): messages, bad lines, first and last ts per
    (file, process, *group_keys); raises TraceInputError for a corrupt line (file and line named). Returns
    ``(processes, groups, slow)``: the sums per process, the counts per group, and the files holding slow lines
    (None if none).

    Slow lines (neither fixed-order records nor headers: normally none, or a crash's truncated last line) are
    only counted in this pass; ``reread(files)`` (default: ``lines`` over those JSON files) then gives the rows of
    the files that have any, and those lines are parsed in full.
    """
    stats = [r.asDict() for r in count_frame(rows, ("_file", "process", *group_keys)).collect()]
    return count_finish(src, stats, rows, group_keys, reread)


def count_frame(rows: Any, keys: tuple[str, ...]) -> Any:
    """``count``'s one aggregation over ``rows``, grouped by ``keys``: ``_slow`` (slow lines: counted here, parsed
    by ``count_finish``), ``messages`` (fixed-order records), ``first_ts``, ``last_ts``."""
    from pyspark.sql import functions as F  # noqa: N812 - the PySpark convention

    fast, slow = F.col("_fast"), ~F.col("_fast") & ~F.col("_head")
    return rows.groupBy(*keys).agg(
        F.sum(slow.cast("long")).alias("_slow"), F.sum(fast.cast("long")).alias("messages"),
        F.min("ts").alias("first_ts"), F.max("ts").alias("last_ts"))


def count_finish(src: TraceSource, stats: list[dict[str, Any]], rows: Any, group_keys: tuple[str, ...] = (),
                 reread: Callable[[TraceSource], Any] | None = None) -> tuple[
        list[dict[str, Any]], list[dict[str, Any]], TraceSource | None]:
    """``count`` from ``count_frame``'s rows (``stats``, grouped by ``_file``, ``process`` and ``group_keys``):
    the slow lines parsed, the trace checked, the sums per process."""
    from pyspark.sql import functions as F  # noqa: N812 - the PySpark convention

    slow = ~F.col("_fast") & ~F.col("_head")
    slow_files = {_file_of(r["_file"]) for r in stats if r["_slow"]}
    stats = [dict(r, bad=0) for r in stats if r["messages"]]
    again = None
    if slow_files:
        again = TraceSource(jsonl=[tf for tf in src.jsonl if os.path.realpath(tf.path) in slow_files])
        base = lines(rows.sparkSession, again) if reread is None else reread(again)
        redo = resolve(base.where(slow & (F.col("_part") >= 0)))
        stats += [
            r.asDict()
            for r in redo.where(F.col("_bad").isNotNull() & (F.col("_part") >= 0))
            .groupBy("_file", "process", *group_keys).agg(
                F.sum(F.col("_bad").cast("long")).alias("bad"), F.sum((~F.col("_bad")).cast("long")).alias("messages"),
                F.min(F.when(~F.col("_bad"), F.col("ts"))).alias("first_ts"),
                F.max(F.when(~F.col("_bad"), F.col("ts"))).alias("last_ts"))
            .collect()
        ]
    for r in stats:
        r.pop("_slow", None)
    _check(src, stats)
    per_process: dict[str, dict[str, Any]] = {}
    for row in stats:
        if not row["messages"]:
            continue
        p = per_process.setdefault(row["process"], {"process": row["process"], "messages": 0,
                                                    "first_ts": None, "last_ts": None})
        p["messages"] += row["messages"]
        for key, pick in (("first_ts", min), ("last_ts", max)):
            if row[key] is not None:
                p[key] = row[key] if p[key] is None else pick(p[key], row[key])
    return sorted(per_process.values(), key=lambda r: r["process"]), stats, again


def raise_corrupt(src: TraceSource, files: list[str]) -> None:
    """Raise TraceInputError for the first bad line among ``files`` (``_file`` values of records found bad after
    ``count``: a payload the summary reads that does not parse)."""
    for url in sorted(files):
        if not url:
            continue
        path = _file_of(url)
        tf = next((t for t in src.jsonl if os.path.realpath(t.path) == path), None)
        found = first_bad_line(path, tf.truncated_last_line if tf else None)
        if found:
            raise TraceInputError(f"{path}: line {found[0]}: corrupt trace line: {found[1]}")
    where = _file_of(min(files)) if any(files) else ", ".join(src.parquet)
    raise TraceInputError(f"{where}: a record's payload is not valid JSON")


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
