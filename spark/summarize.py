"""The trace summary: every table the report shows, computed with Spark and written as JSON and CSV.

Call ``summarize(spark, inputs, out_dir)``. A JSON-lines trace is parsed once into columns (spark/columns.py: cached
beside the trace, so a trace summarised again reads no JSON); the tables are computed from those columns.
Each table is a list of flat rows, written as ``<table>.json`` (a JSON
array of objects) and ``<table>.csv``; ``summary.json`` lists the inputs, processes, warnings and tables.
Percentiles are ``percentile_approx`` (nearest rank; exact for groups up to 10,000 values).
"""

from __future__ import annotations

import csv
import json
import math
import operator
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F  # noqa: N812 - the PySpark convention
from pyspark.sql.types import DoubleType, FloatType

from spark import columns
from spark.load import (
    TraceSource,
    count,
    count_finish,
    count_frame,
    discover,
    file_process,
    lines,
    parsed_columns,
    payload_bad,
    raise_corrupt,
    resolve,
    union_by_name,
)
from spark.schema import ANY_ERROR_RE, OBS_TYPES, payload_column

SLOW_EVENT_MS = 2000.0
# Python threads submitting the tables' queries (see compute)
TABLE_THREADS = 4
PERCENTILES = (0.5, 0.95, 0.99)
_NICE_BUCKETS_MS = (100, 200, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000,
                    900_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000)

TABLES = (
    "messages_by_type", "messages_by_route", "messages_by_process", "controller_event_times",
    "controller_event_timeline", "request_latency", "request_latency_by_broker", "channel_queue_timeline",
    "partition_transitions", "replica_transitions", "leader_elections", "topic_deletions", "reassignments",
    "gauges_timeline", "errors", "anomalies", "anomaly_counts",
)


def bucket_for(span_ms: float, points: int = 300) -> int:
    """A round time-bucket width giving at most about ``points`` buckets over ``span_ms``."""
    want = max(span_ms, 1.0) / points
    for b in _NICE_BUCKETS_MS:
        if b >= want:
            return b
    return int(math.ceil(want / 86_400_000) * 86_400_000)


def observed(rows: DataFrame | None, slow: DataFrame | None) -> DataFrame:
    """The records the tables read, from ``spark.load.lines`` or ``spark.columns.frame`` (``rows``: the fixed-order
    lines, or None; ``slow``: rows holding the slow lines, or None), parsed here: each observability record with its
    payload parsed into the column ``p_<type>`` (SUMMARY_SCHEMAS[type]; null in the other types' columns), and any
    record with an error other than NONE in its text (``errors``; null when there is none). ``_pbad`` marks an
    observability record whose payload does not parse. What ``spark.columns.parsed`` reads from the columns cache,
    where the same columns were computed as it was written (spark.load.parsed_columns); this is for the records not
    there: a Parquet trace's, and lines not in the writer's key order.

    One struct column per type, not one struct of their union, because the cache is columnar: a table then
    decodes only its own type's fields.
    """
    text, fast, part = F.col("_text"), F.col("_fast"), F.col("_part") >= 0
    has_error = text.rlike(ANY_ERROR_RE)
    is_obs = F.col("type").isin(*OBS_TYPES)
    columns = ["_file", "process", "seq", "ts", "type", "_text", "_doc"]
    parts = []
    if rows is not None:
        parts.append(rows.where(part & fast & (is_obs | has_error)).select(*columns))
    if slow is not None:  # lines not in the fixed order, parsed in full (from_json) only here
        slow = resolve(slow.where(part & ~fast & ~F.col("_head")))
        parts.append(slow.where(part & ~F.col("_bad") & (is_obs | has_error)).select(*columns))
    if not parts:
        raise ValueError("observed: neither rows nor slow lines given")
    kept = union_by_name(parts)
    return (kept.select("_file", "process", "seq", "ts", "type", *parsed_columns(text, F.col("_doc")))
            .select("*", payload_bad()))


def _arranged(obs: DataFrame, partitions: int) -> DataFrame:
    """``obs`` in ``partitions`` partitions, sorted by type within each: every table is a job over the cached
    partitions (a task per input split would be ~100 tasks per table on a 10 GB trace), and the cache keeps each
    batch's least and greatest type, so a table's scan skips the batches that cannot hold its type."""
    return obs.coalesce(partitions).sortWithinPartitions("type")


def _bad_files(obs: DataFrame) -> list[str]:
    """The files of ``obs``'s records whose payload does not parse (a job over every record: it builds a cache)."""
    return [r["_file"] for r in obs.where("_pbad").select("_file").distinct().collect()]


def _of(obs: DataFrame, typ: str) -> DataFrame:
    """``obs``'s records of type ``typ``, with their payload as ``p``."""
    return obs.where(F.col("type") == typ).select("process", "seq", "ts", "type", "errors",
                                                  F.col(payload_column(typ)).alias("p"))


def _pcts(col: str, prefix: str) -> list[Any]:
    arr = F.percentile_approx(F.col(col), list(PERCENTILES), 10000)
    cols = [arr[i].alias(f"{prefix}_p{int(p * 100)}") for i, p in enumerate(PERCENTILES)]
    return [*cols, F.max(col).alias(f"{prefix}_max")]


def _bucket(col: str, bucket_ms: int) -> Any:
    return (F.floor(F.col(col) / bucket_ms) * bucket_ms).cast("long").alias("bucket_start_ms")


def _finish(rows: list[dict[str, Any]], order: list[str] | None = None,
            floats: list[str] | None = None) -> list[dict[str, Any]]:
    """A table's collected rows sorted by ``order`` as Spark's orderBy would (ascending, nulls first), floats
    rounded to 3 places (``floats``: the only columns that can hold one, the table's double columns; every value is
    looked at when not given).

    Sorted here, not with orderBy: that costs a sampling job and one more stage per table, about half a second
    each on two cores, for a few hundred rows."""
    if order:
        try:  # the values compared as they are, in C: the order below whenever no null is compared with a value
            rows[:] = sorted(rows, key=operator.itemgetter(*order))  # (rows untouched if it raises)
        except TypeError:  # a null was compared with a value: nulls first
            rows.sort(key=lambda d: tuple((d[k] is not None, d[k]) if d[k] is not None else (False, 0)
                                          for k in order))
    if floats is not None:
        for k in floats:
            for d in rows:
                v = d[k]
                if isinstance(v, float):
                    d[k] = round(v, 3)
        return rows
    for d in rows:
        for k, v in d.items():
            if isinstance(v, float):
                d[k] = round(v, 3)
    return rows


def _float_columns(df: DataFrame) -> list[str]:
    """The columns of ``df`` whose values collect as Python floats (double and float)."""
    return [f.name for f in df.schema.fields if isinstance(f.dataType, (DoubleType, FloatType))]


def _rows(df: DataFrame, order: list[str] | None = None) -> list[dict[str, Any]]:
    """Collect ``df`` (a table: small) as ``_finish``ed rows."""
    return _finish([row.asDict(recursive=True) for row in df.collect()], order)


def _rows_bulk(df: DataFrame, order: list[str] | None = None) -> list[dict[str, Any]]:
    """``_rows`` for a large table (the anomalies: one row per error, 300,000 for 2 million messages): each Spark
    partition's rows as one JSON array text, parsed by Python's json in one call each, instead of a Row object
    built per row and turned into a dict. The rows come in the same order as ``collect`` gives them (partition by
    partition), and the same values: a double's JSON text is the shortest that reads back to the same double."""
    row = F.to_json(F.struct(*[F.col(c) for c in df.columns]), {"ignoreNullFields": "false"})
    parts = (df.select(row.alias("_j"), F.spark_partition_id().alias("_p")).groupBy("_p")
             .agg(F.concat_ws(",", F.collect_list("_j")).alias("_s")).collect())
    rows: list[dict[str, Any]] = []
    for part in sorted(parts, key=lambda r: r["_p"]):
        rows += json.loads("[" + part["_s"] + "]")
    return _finish(rows, order, _float_columns(df))


# A query of the tables: (name, DataFrame, order of its rows); ``_tables`` turns their rows into the tables.
Query = tuple[str, DataFrame, list[str]]
BULK = ("anomalies",)  # the queries collected with _rows_bulk
# every query ``queries`` builds (the errors' only when asked)
QUERY_NAMES = ("anomalies", "_latency", "controller_event_times", "_transitions", "controller_event_timeline",
               "channel_queue_timeline", "gauges_timeline", "topic_deletions", "reassignments")


def queries(obs: DataFrame, bucket_ms: Any, errors_query: bool = False,
            types: set[str] | None = None) -> list[Query]:
    """The tables' queries over ``observed``'s records (``bucket_ms``: the timelines' bucket width, an int or a
    Column), longest first (the anomalies). Each is small next to its fixed cost (planning, generating and compiling
    its code on the driver, then a short job); ``compute`` runs them one job each, ``one_pass`` as one query with
    the count. The errors table is counted from the anomalies' rows (``_tables``: every error is one of them), not
    by a query of its own, unless ``errors_query`` (the errors grouped in Spark, as before: what the tests compare
    the counted table with). ``types``: the record types the trace holds (the count's); a query that reads only
    records of types not among them is not built (its table is empty: ``compute`` gives it no rows without a job)."""

    def holds(*needed: str) -> bool:
        return types is None or any(t in types for t in needed)

    # controller events: queue time (started - enqueued) and processing time (finished - started)
    ev = _of(obs, "ControllerEventProcessed").select(
        "process", "seq", "ts", "p.event", "p.controller_state",
        (F.col("p.started_ms") - F.col("p.enqueued_ms")).alias("queue_ms"),
        (F.col("p.finished_ms") - F.col("p.started_ms")).alias("processing_ms"),
        F.col("p.started_ms").alias("started_ms"),
    )
    # controller -> broker requests
    rq = _of(obs, "ChannelRequestCompleted").select(
        "process", "seq", "ts", "p.broker_id", "p.request_type", "p.attempts", "p.error", "p.queue_size",
        (F.col("p.sent_ms") - F.col("p.enqueued_ms")).alias("queue_ms"),
        (F.col("p.completed_ms") - F.col("p.sent_ms")).alias("latency_ms"),
        F.col("p.completed_ms").alias("completed_ms"),
    )
    failed = (F.col("error").isNotNull() & (F.col("error") != "") & (F.col("error") != "NONE")).cast("long")
    out: list[Query] = []

    # errors anywhere in a payload ({"@e":"Errors","v":X}, X != NONE) and in ChannelRequestCompleted.error
    payload_errs = obs.where(F.col("errors").isNotNull()).select(
        "process", "seq", "ts", "type", F.explode("errors").alias("error"))
    channel_errs = rq.where(failed == 1).select("process", "seq", "ts",
                                                F.lit("ChannelRequestCompleted").alias("type"), "error")
    errs = payload_errs.unionByName(channel_errs)
    cc = _of(obs, "ControllerChanged").select("process", "seq", "ts", "type", "p.*")
    anomalies = [
        ev.where(F.col("processing_ms") > SLOW_EVENT_MS).select(
            F.lit("slow_event").alias("kind"), "process", "seq", "ts",
            F.lit("ControllerEventProcessed").alias("type"),
            F.format_string("%s took %.3f ms (queued %.3f ms)", "event", "processing_ms",
                            "queue_ms").alias("detail")),
        rq.where(F.col("attempts") > 1).select(
            F.lit("retried_request").alias("kind"), "process", "seq", "ts", F.lit("ChannelRequestCompleted"),
            F.format_string("%s to broker %d: %d attempts, error %s", "request_type", "broker_id",
                            "attempts", "error")),
        errs.select(F.when(F.col("error") == "STALE_CONTROLLER_EPOCH", "stale_controller_epoch")
                    .otherwise("error"), "process", "seq", "ts", "type", F.col("error")),
        cc.select(F.lit("controller_change"), "process", "seq", "ts", "type",
                  F.format_string("broker %d %s (epoch %d)", "broker_id",
                                  F.when(F.col("active"), "became controller").otherwise("resigned"),
                                  "controller_epoch")),
    ]
    an = anomalies[0]
    for other in anomalies[1:]:
        an = an.union(other)
    out.append(("anomalies", an, ["ts", "process", "seq", "kind"]))
    if errors_query:
        out.append(("errors", errs.groupBy("error", "type").count(), ["error", "type"]))

    # per request type and broker, and per request type: grouping sets, not a rollup, whose third level (every
    # request) no table shows — its percentiles were a third of this aggregation's work
    if holds("ChannelRequestCompleted"):
        out.append(("_latency", rq.groupingSets([("request_type", "broker_id"), ("request_type",)], "request_type",
                                                "broker_id").agg(
            F.grouping("broker_id").alias("_all"),
            F.count("*").alias("count"), F.sum((F.col("attempts") > 1).cast("long")).alias("retried"),
            F.sum(failed).alias("failed"), *_pcts("latency_ms", "latency_ms"), *_pcts("queue_ms", "queue_ms")),
            ["request_type", "broker_id"]))

    if holds("ControllerEventProcessed"):
        out.append(("controller_event_times", ev.groupBy("event").agg(
            F.count("*").alias("count"), F.first("controller_state").alias("controller_state"),
            *_pcts("queue_ms", "queue_ms"), *_pcts("processing_ms", "processing_ms")), ["event"]))

    # state machines and elections
    if holds("StateChangeBatch"):
        scb = _of(obs, "StateChangeBatch")
        trans = scb.select(F.explode(F.array(
            *[F.transform(f"p.{field}", _transition(name))
              for name, field in (("partition_transitions", "partition_changes"),
                                  ("replica_transitions", "replica_changes"))],
            F.transform("p.elections", lambda e: F.struct(
                F.lit("leader_elections").alias("table"), e["strategy"].alias("a"),
                F.when(F.coalesce(e["unclean"], F.lit(False)), "unclean").otherwise("clean").alias("b"))),
        )).alias("x")).select(F.explode("x").alias("c")).select("c.*")
        out.append(("_transitions", trans.groupBy("table", "a", "b").count(), ["table", "a", "b"]))

    if holds("ControllerEventProcessed"):
        out.append(("controller_event_timeline", ev.groupBy(_bucket("started_ms", bucket_ms)).agg(
            F.count("*").alias("events"), *_pcts("queue_ms", "queue_ms"),
            F.max("processing_ms").alias("processing_ms_max")), ["bucket_start_ms"]))

    if holds("ChannelRequestCompleted"):
        out.append(("channel_queue_timeline", rq.groupBy("process", "broker_id",
                                                         _bucket("completed_ms", bucket_ms)).agg(
            F.count("*").alias("requests"), F.max("queue_size").alias("queue_size_max"),
            F.avg("queue_size").alias("queue_size_avg")), ["process", "broker_id", "bucket_start_ms"]))

    # gauges of the active controller over time
    if holds("ControllerGauges"):
        g = _of(obs, "ControllerGauges").where(F.col("p.active")).select("process", "seq", "ts", "p.*")
        order = F.struct("ts", "seq")
        out.append(("gauges_timeline", g.groupBy(_bucket("ts", bucket_ms)).agg(
            F.count("*").alias("samples"),
            F.max("offline_partitions").alias("offline_partitions_max"),
            F.max_by("offline_partitions", order).alias("offline_partitions_last"),
            F.max("under_replicated_partitions").alias("under_replicated_partitions_max"),
            F.max_by("under_replicated_partitions", order).alias("under_replicated_partitions_last"),
            F.max("preferred_replica_imbalance").alias("preferred_replica_imbalance_max"),
            F.max_by("global_partitions", order).alias("global_partitions"),
            F.max_by("topics_to_delete", order).alias("topics_to_delete"),
            F.max_by("controller_epoch", order).alias("controller_epoch")), ["bucket_start_ms"]))

    if holds("TopicDeletionProgress"):
        out.append(_topic_deletions(obs))
    if holds("ReassignmentProgress"):
        out.append(_reassignments(obs))
    return out


def _topic_deletions(obs: DataFrame) -> Query:
    # Queued / Started / Ineligible ... Completed; a topic deleted twice gives two rows
    td = _of(obs, "TopicDeletionProgress").select("process", "seq", "ts", "p.topic", "p.phase")
    before = Window.partitionBy("topic").orderBy("ts", "process", "seq").rowsBetween(Window.unboundedPreceding, -1)
    td = td.withColumn("n", F.coalesce(F.sum((F.col("phase") == "Completed").cast("long")).over(before), F.lit(0)))
    return ("topic_deletions", _spans(td.groupBy("topic", "n").agg(
        F.min(F.when(F.col("phase") == "Queued", F.col("ts"))).alias("queued_ts"),
        F.min(F.when(F.col("phase") == "Started", F.col("ts"))).alias("started_ts"),
        F.min(F.when(F.col("phase") == "Completed", F.col("ts"))).alias("completed_ts"),
        F.sum((F.col("phase") == "Ineligible").cast("long")).alias("ineligible"),
    ), "completed_ts", "Completed").drop("n"), ["topic", "queued_ts"])


def _reassignments(obs: DataFrame) -> Query:
    # Started ... Completed or Dropped, per partition
    ra = _of(obs, "ReassignmentProgress").select(
        "process", "seq", "ts", F.col("p.topic_partition.topic").alias("topic"),
        F.col("p.topic_partition.partition").alias("partition"), "p.phase")
    before = (Window.partitionBy("topic", "partition").orderBy("ts", "process", "seq")
              .rowsBetween(Window.unboundedPreceding, -1))
    ended = F.col("phase").isin("Completed", "Dropped").cast("long")
    ra = ra.withColumn("n", F.coalesce(F.sum(ended).over(before), F.lit(0)))
    agg = ra.groupBy("topic", "partition", "n").agg(
        F.min(F.when(F.col("phase") == "Started", F.col("ts"))).alias("started_ts"),
        F.min(F.when(F.col("phase").isin("Completed", "Dropped"), F.col("ts"))).alias("finished_ts"),
        F.max(F.when(F.col("phase").isin("Completed", "Dropped"), F.col("phase"))).alias("outcome"),
    )
    return ("reassignments", agg.select(
        "topic", "partition", "started_ts", "finished_ts",
        F.coalesce("outcome", F.lit("InProgress")).alias("outcome"),
        F.round(F.col("finished_ts") - F.col("started_ts"), 3).alias("duration_ms")),
        ["topic", "partition", "started_ts"])


def _tables(routes: list[dict[str, Any]], results: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Every summary table from the route counts and ``queries``' rows (``_finish``ed), by query name."""
    t: dict[str, list[dict[str, Any]]] = {}
    t["messages_by_route"] = routes
    by_type: dict[str, int] = {}
    for r in routes:
        by_type[r["type"]] = by_type.get(r["type"], 0) + r["count"]
    t["messages_by_type"] = [{"type": k, "count": v}
                             for k, v in sorted(by_type.items(), key=lambda kv: (-kv[1], kv[0]))]
    for name, rows in results.items():
        if not name.startswith("_"):
            t[name] = rows
    lat = results["_latency"]
    t["request_latency"] = [{k: v for k, v in r.items() if k not in ("_all", "broker_id")}
                            for r in lat if r["_all"] == 1 and r["request_type"] is not None]
    t["request_latency_by_broker"] = [
        {k: r[k] for k in ("broker_id", "request_type", "count", "retried", "failed", "latency_ms_p50",
                           "latency_ms_p95", "latency_ms_p99", "latency_ms_max")}
        for r in sorted(lat, key=lambda r: (r["broker_id"] if r["broker_id"] is not None else -1,
                                            r["request_type"] or ""))
        if r["_all"] == 0]
    counted = results["_transitions"]
    for name, a, b in (("partition_transitions", "from_state", "to_state"),
                       ("replica_transitions", "from_state", "to_state"),
                       ("leader_elections", "strategy", "kind")):
        t[name] = [{a: r["a"], b: r["b"], "count": r["count"]} for r in counted if r["table"] == name]
    kinds: dict[str, int] = {}
    for r in t["anomalies"]:
        kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
    t["anomaly_counts"] = [{"kind": k, "count": v} for k, v in sorted(kinds.items())]
    if "errors" not in results:
        t["errors"] = _errors(t["anomalies"])
    return t


ERROR_KINDS = ("error", "stale_controller_epoch")  # the anomalies' kinds of the errors' rows (``queries``)


def _errors(anomalies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The errors table — every error other than NONE, in a payload or a ChannelRequestCompleted's ``error``, counted
    by error and record type — from the anomalies' rows, which hold each such error once (kind ERROR_KINDS, the
    error as ``detail``): the same rows the errors' own query grouped in Spark (``queries(errors_query=True)``)."""
    counts: dict[tuple[Any, Any], int] = {}
    for r in anomalies:
        if r["kind"] in ERROR_KINDS:
            key = (r["detail"], r["type"])
            counts[key] = counts.get(key, 0) + 1
    return _finish([{"error": e, "type": t, "count": n} for (e, t), n in counts.items()], ["error", "type"])


def compute(obs: DataFrame, routes: list[dict[str, Any]], bucket_ms: int,
            threads: int = TABLE_THREADS, errors_query: bool = False) -> dict[str, list[dict[str, Any]]]:
    """Every summary table from the route counts and ``observed``'s records (cached by the caller), one job per
    query (the plain way; ``one_pass`` computes the same tables with the count in one query).

    The queries are run from ``threads`` Python threads: one query's driver-side work overlaps another's tasks."""
    qs = queries(obs, bucket_ms, errors_query=errors_query, types={r["type"] for r in routes})
    units = [[q] for q in qs]

    def run(unit: list[Query]) -> dict[str, list[dict[str, Any]]]:
        return {name: (_rows_bulk if name in BULK else _rows)(df, order) for name, df, order in unit}

    results: dict[str, list[dict[str, Any]]] = {name: [] for name in QUERY_NAMES}  # not built: no rows
    if threads <= 1:
        for unit in units:
            results.update(run(unit))
    else:
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="kactor-table") as pool:
            for part in pool.map(run, units):
                results.update(part)
    return _tables(routes, results)


def _transition(table: str) -> Any:
    def to_row(c: Any) -> Any:
        return F.struct(F.lit(table).alias("table"), c["from_state"].alias("a"), c["to_state"].alias("b"))

    return to_row


def _spans(df: DataFrame, end_col: str, status: str) -> DataFrame:
    """Add status (``status`` or InProgress), duration_ms (started → end) and total_ms (queued → end)."""
    return df.select(
        "*",
        F.when(F.col(end_col).isNotNull(), F.lit(status)).otherwise("InProgress").alias("status"),
        F.round(F.col(end_col) - F.col("started_ts"), 3).alias("duration_ms"),
        F.round(F.col(end_col) - F.coalesce("queued_ts", "started_ts"), 3).alias("total_ms"),
    )


def write_table(out_dir: str, name: str, rows: list[dict[str, Any]]) -> None:
    with open(os.path.join(out_dir, f"{name}.json"), "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1)
        f.write("\n")
    with open(os.path.join(out_dir, f"{name}.csv"), "w", encoding="utf-8", newline="") as f:
        if rows:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


# "1": the count and the tables as one query (``one_pass``); not the default: measured slower (docs/performance-log.md)
ONE_PASS_ENV = "KACTOR_SPARK_ONE_PASS"
_ROUTE = ("sender", "receiver", "type")


def _count_frame(spark: Any, dirs: list[columns.ColumnsDir]) -> DataFrame:
    """``count``'s aggregation over the columns of ``dirs``, grouped by folder and file name (``_dir``, ``_name``)
    and route: the file's URL and process are made from its name afterwards (``_count_stats``), for each group,
    not for each of the millions of rows, and the grouping key is shorter."""
    return count_frame(union_by_name([columns.counted(spark, d, i) for i, d in enumerate(dirs)]),
                       ("_dir", "_name", *_ROUTE))


def _count_stats(dirs: list[columns.ColumnsDir], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``_count_frame``'s rows as ``count_frame`` grouped by ``_file`` and ``process`` gives them (as
    ``columns.frame`` names a row's file and process)."""
    urls = [columns.folder_url(d) for d in dirs]
    out = []
    for r in rows:
        i, name = r.pop("_dir"), r.pop("_name")
        out.append({"_file": urls[i] + name, "process": dirs[i].prefix + file_process(name), **r})
    return out


def _bucket_column(span: Any, points: int = 300) -> Any:
    """``bucket_for`` as a Spark expression over ``span`` (a Column: the trace's span in ms)."""
    want = F.greatest(span, F.lit(1.0)) / points
    out = F.when(F.lit(False), F.lit(0))
    for b in _NICE_BUCKETS_MS:
        out = out.when(want <= b, F.lit(b))
    return out.otherwise((F.ceil(want / 86_400_000) * 86_400_000).cast("long")).cast("long")


def _as_json(tag: str, df: DataFrame) -> DataFrame:
    """``df``'s rows as (``_q``: ``tag``, ``_j``: the row as a JSON object, nulls kept), so that queries of
    different columns are one union."""
    row = F.to_json(F.struct(*[F.col(c) for c in df.columns]), {"ignoreNullFields": "false"})
    return df.select(F.lit(tag).alias("_q"), row.alias("_j"))


def one_pass(spark: Any, src: TraceSource, dirs: list[columns.ColumnsDir], bucket_ms: int | None) -> Any:
    """The count and every table from the columns of ``dirs`` as one query, collected once: the count's
    aggregation over every row's small columns, the observed records' payload check and the tables' queries
    (``queries``) over the observed rows, read from the Parquet columns as each needs them (no in-memory cache
    is built), each query's rows as JSON text in one union, so that Spark plans and schedules one query instead of
    the plain way's ~13 jobs (``compute``). Measured slower at 2 million messages (a summary 43 s against 32 s,
    fresh JVMs alternated): planning the one large query took seconds, the scalar subquery below is a job of its
    own, and every anomaly row goes through to_json and json.loads one by one; so it is not the default
    (ONE_PASS_ENV). The timelines' bucket width (``bucket_for`` of the trace's span) is computed in the same query, from
    the same rows' first and last ts (a scalar subquery), unless ``bucket_ms`` is given; it is checked against
    the count's.

    Returns ``(processes, tables, firsts, lasts, bucket)``, or None when the trace holds slow lines (the count
    found lines not in the writer's key order: their files are parsed in full, which only the plain way does)."""
    obs = union_by_name([columns.parsed(spark, d) for d in dirs])
    if bucket_ms:
        bucket: Any = F.lit(int(bucket_ms))
    else:
        small = union_by_name([columns.counted(spark, d, i) for i, d in enumerate(dirs)])
        span = small.where(F.col("_fast")).select(F.coalesce(F.max("ts") - F.min("ts"), F.lit(0.0))).scalar()
        bucket = _bucket_column(span)
    qs = queries(obs.drop("_file", "_pbad"), bucket)
    parts = [_as_json("_count", _count_frame(spark, dirs)),
             _as_json("_bad", obs.where("_pbad").select("_file").distinct()),
             _as_json("_bucket", spark.range(1).select(bucket.alias("bucket_ms"))),
             *[_as_json(name, df) for name, df, _ in qs]]
    got: dict[str, list[dict[str, Any]]] = {}
    for row in union_by_name(parts).collect():
        got.setdefault(row["_q"], []).append(json.loads(row["_j"]))
    stats = got.get("_count", [])
    if any(r["_slow"] for r in stats):
        return None
    bad = [r["_file"] for r in got.get("_bad", [])]
    if bad:
        raise_corrupt(src, bad)
    processes, groups, _ = count_finish(src, _count_stats(dirs, stats), None, _ROUTE)
    routes, firsts, lasts, bucket_py = _routes(processes, groups, bucket_ms)
    if got["_bucket"][0]["bucket_ms"] != bucket_py:
        raise AssertionError(f"one pass: bucket {got['_bucket'][0]['bucket_ms']} ms, the count's {bucket_py} ms")
    results = {name: _finish(got.get(name, []), order) for name, _, order in qs}
    return processes, _tables(routes, results), firsts, lasts, bucket_py


def _routes(processes: list[dict[str, Any]], groups: list[dict[str, Any]], bucket_ms: int | None) -> tuple[Any, ...]:
    """The count's messages by route, first and last ts per process, and the timelines' bucket width."""
    counts: dict[tuple[str, str, str], int] = {}
    for g in groups:
        if g["messages"]:
            key = (g["sender"], g["receiver"], g["type"])
            counts[key] = counts.get(key, 0) + g["messages"]
    routes = [{"sender": k[0], "receiver": k[1], "type": k[2], "count": v} for k, v in sorted(counts.items())]
    firsts = [p["first_ts"] for p in processes if p["first_ts"] is not None]
    lasts = [p["last_ts"] for p in processes if p["last_ts"] is not None]
    span = (max(lasts) - min(firsts)) if firsts else 0.0
    return routes, firsts, lasts, bucket_ms or bucket_for(span)


def _from_columns(spark: Any, src: TraceSource, dirs: list[columns.ColumnsDir],
                  bucket_ms: int | None) -> tuple[Any, ...]:
    """Count, validate and compute every table from the columns of ``dirs`` (and any Parquet input of ``src``).
    Returns ``(processes, tables, firsts, lasts, bucket, t_count, t_obs)``."""
    frames = [columns.frame(spark, d) for d in dirs]
    parsed = [columns.parsed(spark, d) for d in dirs]  # the observed records, parsed as the cache was written
    if src.parquet:  # written by `kactor trace convert`: every record is a fixed-order one, parsed here
        frames.append(lines(spark, TraceSource(parquet=src.parquet)).withColumn("observed", F.lit(True)))
        parsed.append(observed(frames[-1], None))
    rows = union_by_name(frames)
    # The count reads the small columns of every row, the observed read the payloads of the rows it needs only
    # (the `observed` partition); they run at the same time (the observed one from a second thread): neither needs
    # the other's result, and each leaves a core idle part of the time (the driver planning and compiling a query,
    # a stage's last task), which the other then uses.
    partitions = 2 * spark.sparkContext.defaultParallelism
    needed = rows.where(F.col("observed"))
    group = f"kactor-observed-{os.getpid()}-{time.monotonic_ns()}"
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kactor-observed")
    try:
        obs = _arranged(union_by_name(parsed), partitions).persist(StorageLevel.MEMORY_AND_DISK)

        def build() -> list[str]:
            spark.sparkContext.setJobGroup(group, "kactor: observed records", interruptOnCancel=False)
            return _bad_files(obs)  # builds the cache

        pending = pool.submit(build)
        try:
            if src.parquet:
                processes, groups, slow = count(src, rows, group_keys=_ROUTE,
                                                reread=lambda _: rows.where(~F.col("_fast")))
            else:
                stats = _count_stats(dirs, [r.asDict() for r in _count_frame(spark, dirs).collect()])
                processes, groups, slow = count_finish(src, stats, rows, _ROUTE,
                                                       reread=lambda _: rows.where(~F.col("_fast")))
        except BaseException:
            while not pending.done():  # the observed read is of no use now; it may not have started its job yet
                spark.sparkContext.cancelJobGroup(group)
                time.sleep(0.2)
            raise
        t_count = time.monotonic()
        bad = pending.result()
        if slow is not None:  # lines not in the writer's key order: parsed in full, only here
            extra = _arranged(observed(None, needed.where(~F.col("_fast"))), partitions).persist(
                StorageLevel.MEMORY_AND_DISK)
            bad += _bad_files(extra)
            obs = obs.unionByName(extra)
        if bad:
            raise_corrupt(src, bad)
        t_obs = time.monotonic()
        routes, firsts, lasts, bucket = _routes(processes, groups, bucket_ms)
        tables = compute(obs.drop("_file", "_pbad"), routes, bucket)
    finally:
        pool.shutdown(wait=True)
        spark.catalog.clearCache()
    return processes, tables, firsts, lasts, bucket, t_count, t_obs


def summarize(spark: Any, inputs: list[str], out_dir: str | None = None, bucket_ms: int | None = None,
              source: TraceSource | None = None) -> dict[str, Any]:
    """Validate and load the traces in ``inputs``, compute every table, write them to ``out_dir`` (if given).

    Returns ``{"meta": {...}, "tables": {name: rows}}``. Raises spark.load.TraceInputError for bad input.
    """
    t0 = time.monotonic()
    src = source or discover(inputs)
    dirs = columns.prepare(spark, src)  # a trace not summarised before: its JSON parsed once, into columns
    t_columns = time.monotonic()
    valid = False
    try:
        done = None
        if dirs and not src.parquet and os.environ.get(ONE_PASS_ENV, "0") == "1":
            done = one_pass(spark, src, dirs, bucket_ms)
        if done is not None:
            processes, tables, firsts, lasts, bucket = done
            t_count = t_obs = time.monotonic()
        else:  # a Parquet input, or slow lines: the plain way
            processes, tables, firsts, lasts, bucket, t_count, t_obs = _from_columns(spark, src, dirs, bucket_ms)
        valid = True
    finally:
        columns.finish(dirs, valid)
    tables["messages_by_process"] = processes
    meta = {
        "inputs": list(inputs),
        "processes": [p["process"] for p in processes],
        "messages": sum(p["messages"] for p in processes),
        "first_ts": min(firsts) if firsts else None,
        "last_ts": max(lasts) if lasts else None,
        "bucket_ms": bucket,
        "slow_event_ms": SLOW_EVENT_MS,
        "warnings": src.warnings,
        "trace_versions": sorted({h.get("trace_version") for h in src.headers}),
        "elapsed_s": round(time.monotonic() - t0, 3),
        # where the time went: parsing the JSON into columns (0 when they were cached); counting every row; what
        # reading and caching the observed records took beyond the count (the two run at the same time); the tables
        "phases_s": {"columns": round(t_columns - t0, 3), "count": round(t_count - t_columns, 3),
                     "observed": round(t_obs - t_count, 3), "tables": round(time.monotonic() - t_obs, 3)},
        "columns": {d.folder: "cached" if d.cached else ("written" if d.commit_to else "temporary")
                    for d in dirs},
        # "one pass": the count and the tables as one query (``one_pass``; its time is the "count" phase); "per
        # table": the count, then the observed records cached, then a job per table (``compute``)
        "tables_path": "one pass" if done is not None else "per table",
        "tables": {name: len(tables.get(name, [])) for name in TABLES},
    }
    result = {"meta": meta, "tables": tables}
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        for name in TABLES:
            write_table(out_dir, name, tables.get(name, []))
        with open(os.path.join(out_dir, "summary.json"), "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")
    return result
