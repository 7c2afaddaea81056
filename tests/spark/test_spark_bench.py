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
    from spark.bench import bench_trace_summary, verdict

    result = bench_trace_summary(messages=3000, brokers=3, partitions=16, trace_dir=str(tmp_path))
    assert result["messages"] == 3000 and result["bytes"] > 0 and result["duckdb_s"] > 0
    assert result["cold"]["columns"] == "written" and result["warm"]["columns"] == "cached"
    for run in ("cold", "warm"):
        assert result[run]["spark_s"] > 0 and result[run]["ratio"] > 0
    assert result["goal"]["compared"] == "warm" and result["same_tables_cold_warm"]
    assert result["cold"]["spark_phases_s"]["columns"] > 0 and result["warm"]["spark_phases_s"]["columns"] < 1
    # a small trace just written and read through: DuckDB read it from the page cache, and the bench says so
    assert result["duckdb_page_cache"]["from_page_cache"] is not False
    text = verdict(result)
    assert "Spark cold: " in text and "Spark warm: " in text and "(from the page cache)" in text
    assert spark.sparkContext._jsc is not None  # the shared session is still running


def test_page_cache_bytes_of_a_file_read_through(tmp_path) -> None:
    from spark.bench import page_cache_bytes, read_through

    path = tmp_path / "broker-0.jsonl"
    path.write_bytes(b"x" * (3 << 20) + b"\n")
    read_through([str(path)])
    got = page_cache_bytes([str(path), str(tmp_path / "empty")]) if (tmp_path / "empty").touch() is None else None
    assert got == ((3 << 20) + 1, (3 << 20) + 1)


def test_verdict_says_when_duckdb_read_from_the_disk() -> None:
    from spark.bench import verdict

    out = {"messages": 10, "bytes": 2e9, "duckdb_s": 10.0, "cold": None,
           "warm": {"spark_s": 15.0, "ratio": 1.5},
           "duckdb_page_cache": {"from_page_cache": False, "note": "DuckDB could not read from the page cache: x"},
           "goal": {"ratio_at_most": 2.0, "warm_met": True},
           "load_avg": {"before": [1.0], "after_cold": [1.0], "after": [1.0]}}
    text = verdict(out)
    assert "DuckDB could not read from the page cache" in text and "not a fair comparison" in text
    assert "Spark warm: 15.0 s = 1.50x DuckDB" in text and "Spark cold" not in text
