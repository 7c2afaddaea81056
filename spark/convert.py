"""`kactor trace convert`: JSON-lines trace folders → one Parquet dataset with TRACE_SCHEMA.

The dataset directory also holds ``_kactor_trace.json`` (the processes' header lines and any warnings), which
readers use to check the trace_version; Spark ignores files whose name starts with "_".

The JSON is read once: into the columns cache beside the trace (spark/columns.py, as ``summarize`` does; a trace
already summarised or converted reads no JSON), then counted, validated and written from those columns.
"""

from __future__ import annotations

import json
import os
from typing import Any

from spark import columns
from spark.load import PARQUET_META, TraceInputError, TraceSource, count, discover, resolve, union_by_name
from spark.schema import TRACE_SCHEMA


def refuse(src: TraceSource, out_dir: str) -> None:
    """What `convert` refuses before it reads anything (`TraceInputError`): a trace that is Parquet already, or an
    output folder that holds an input. The command asks it before it starts Spark, so a slip costs no JVM."""
    if src.parquet:
        raise TraceInputError(f"{src.parquet[0]}: already a Parquet trace")
    out_real = os.path.realpath(out_dir)
    for tf in src.jsonl:
        if os.path.dirname(os.path.realpath(tf.path)) == out_real:
            raise TraceInputError(f"{out_dir}: the output folder is an input folder")


def convert(spark: Any, inputs: list[str], out_dir: str) -> dict[str, Any]:
    """Validate the JSON-lines traces in ``inputs`` and write them to ``out_dir`` as Parquet."""
    from pyspark.sql import functions as F  # noqa: N812 - the PySpark convention

    src = discover(inputs)
    refuse(src, out_dir)
    dirs = columns.prepare(spark, src)  # the one JSON pass (none if the columns are cached)
    valid = False
    try:
        rows = union_by_name([columns.frame(spark, d) for d in dirs])
        fast = F.col("_fast")
        processes, _, slow = count(src, rows, reread=lambda _: rows.where(~fast))
        # a fixed-order row holds its fields and its payload as written; a slow one its whole line, parsed here
        records = rows.where(fast).select(*[F.col("_text" if n == "payload" else n).alias(n)
                                            for n in TRACE_SCHEMA.fieldNames()])
        if slow is not None:
            parsed = resolve(rows.where(~fast & (F.col("_part") >= 0)))
            records = records.unionByName(parsed.where(~F.col("_bad") & (F.col("_part") >= 0))
                                          .select(*TRACE_SCHEMA.fieldNames()))
        (records.sortWithinPartitions("process", "seq").write.mode("overwrite").parquet(out_dir))
        valid = True
    finally:
        columns.finish(dirs, valid)
    meta = {"trace_version": src.headers[0].get("trace_version") if src.headers else None,
            "headers": src.headers, "warnings": src.warnings, "processes": processes}
    with open(os.path.join(out_dir, PARQUET_META), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    return {"out": out_dir, "messages": sum(p["messages"] for p in processes), "processes": processes,
            "warnings": src.warnings}
