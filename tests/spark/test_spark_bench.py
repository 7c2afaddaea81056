"""spark/bench.py on small data: DuckDB's main aggregation agrees with Spark's tables, and the timing runs."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.spark


def test_duckdb_agrees_with_spark(handcrafted: str, summary: dict[str, Any]) -> None:
    from spark.bench import duckdb_summary

    d = duckdb_summary(handcrafted)
    assert {t: n for t, n in d["messages_by_type"]} == {r["type"]: r["count"]
                                                        for r in summary["tables"]["messages_by_type"]}
    events = {e: (n, p, mx) for e, n, p, mx in d["event_queue_ms"]}
    assert events["BrokerChange"] == (3, [4.0, 10.0, 10.0], 10.0)


def test_bench_small(spark: Any, tmp_path) -> None:
    from spark.bench import bench_trace_summary

    result = bench_trace_summary(messages=3000, brokers=3, partitions=16, trace_dir=str(tmp_path))
    assert result["messages"] == 3000 and result["bytes"] > 0 and result["duckdb_s"] > 0
    assert result["cold"]["columns"] == "written" and result["warm"]["columns"] == "cached"
    for run in ("cold", "warm"):
        assert result[run]["spark_s"] > 0 and result[run]["ratio"] > 0
    assert result["goal"]["compared"] == "warm" and result["same_tables_cold_warm"]
    assert result["cold"]["spark_phases_s"]["columns"] > 0 and result["warm"]["spark_phases_s"]["columns"] < 1
    assert spark.sparkContext._jsc is not None  # the shared session is still running
