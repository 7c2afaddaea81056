"""`kactor trace convert`: JSON-lines trace folders → one Parquet dataset with TRACE_SCHEMA.

The dataset directory also holds ``_kactor_trace.json`` (the processes' header lines and any warnings), which
readers use to check the trace_version; Spark ignores files whose name starts with "_".
"""

from __future__ import annotations

import json
import os
from typing import Any

from spark.load import PARQUET_META, TraceInputError, discover, load
from spark.schema import TRACE_SCHEMA


def convert(spark: Any, inputs: list[str], out_dir: str) -> dict[str, Any]:
    """Validate the JSON-lines traces in ``inputs`` and write them to ``out_dir`` as Parquet."""
    src = discover(inputs)
    if src.parquet:
        raise TraceInputError(f"{src.parquet[0]}: already a Parquet trace")
    out_real = os.path.realpath(out_dir)
    for tf in src.jsonl:
        if os.path.dirname(os.path.realpath(tf.path)) == out_real:
            raise TraceInputError(f"{out_dir}: the output folder is an input folder")
    records, processes, _ = load(spark, src)
    (records.select(*TRACE_SCHEMA.fieldNames()).sortWithinPartitions("process", "seq")
     .write.mode("overwrite").parquet(out_dir))
    meta = {"trace_version": src.headers[0].get("trace_version") if src.headers else None,
            "headers": src.headers, "warnings": src.warnings, "processes": processes}
    with open(os.path.join(out_dir, PARQUET_META), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    return {"out": out_dir, "messages": sum(p["messages"] for p in processes), "processes": processes,
            "warnings": src.warnings}
