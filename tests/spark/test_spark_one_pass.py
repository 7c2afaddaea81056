"""The one pass (spark.summarize.one_pass, KACTOR_SPARK_ONE_PASS=1; not the default, measured slower): the count and
every table from the columns cache as one query gives the same tables and meta as the plain way (the count, the
observed records cached, a job per table), on the handcrafted trace and on a generated one, with the bucket width
given or computed in the query; a trace with slow lines takes the plain way."""

from __future__ import annotations

from typing import Any

import pytest
from spark_support import write_trace

pytestmark = pytest.mark.spark

TIMINGS = ("elapsed_s", "phases_s", "tables_path", "columns")  # and whether the columns were written or read


def _both(spark: Any, folder: str, monkeypatch: pytest.MonkeyPatch, bucket_ms: int | None) -> tuple[Any, Any]:
    from spark.summarize import ONE_PASS_ENV, summarize

    plain = summarize(spark, [folder], None, bucket_ms=bucket_ms)
    monkeypatch.setenv(ONE_PASS_ENV, "1")
    one = summarize(spark, [folder], None, bucket_ms=bucket_ms)
    monkeypatch.delenv(ONE_PASS_ENV)
    return one, plain


def _assert_same(one: dict[str, Any], plain: dict[str, Any]) -> None:
    assert (one["meta"]["tables_path"], plain["meta"]["tables_path"]) == ("one pass", "per table")
    for name, rows in plain["tables"].items():
        assert one["tables"][name] == rows, name
    assert set(one["tables"]) == set(plain["tables"])
    assert {k: v for k, v in one["meta"].items() if k not in TIMINGS} == {
        k: v for k, v in plain["meta"].items() if k not in TIMINGS}


@pytest.mark.parametrize("bucket_ms", [1000, None])
def test_handcrafted_trace_same_tables_one_pass_or_plain(spark: Any, summary: dict[str, Any], tmp_path,
                                                         monkeypatch: pytest.MonkeyPatch, bucket_ms: Any) -> None:
    folder = write_trace(str(tmp_path / "t"), truncated=False)
    one, plain = _both(spark, folder, monkeypatch, bucket_ms)
    _assert_same(one, plain)
    for name in ("errors", "anomalies", "partition_transitions", "controller_event_times", "request_latency",
                 "topic_deletions", "reassignments", "gauges_timeline", "channel_queue_timeline"):
        assert one["tables"][name], name  # every query has rows to compare
    if bucket_ms:  # the handcrafted trace's expected tables (test_spark_summary.py), its truncated line aside
        assert one["tables"] == summary["tables"]


def test_generated_trace_same_tables_one_pass_or_plain(spark: Any, tmp_path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from kactor.sim_boot import SimBoot
    from sim.generate import generate

    folder = str(tmp_path / "g")
    generate(folder, 3000, brokers=3, partitions=16, seed=3, boot=SimBoot())
    one, plain = _both(spark, folder, monkeypatch, None)
    assert one["meta"]["messages"] == 3000
    _assert_same(one, plain)


def test_slow_lines_take_the_plain_way(spark: Any, handcrafted: str, summary: dict[str, Any],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from spark.summarize import ONE_PASS_ENV, summarize

    # the handcrafted trace's crash-truncated last line is a slow line: parsed in full, which only the plain way does
    monkeypatch.setenv(ONE_PASS_ENV, "1")
    got = summarize(spark, [handcrafted], None, bucket_ms=1000)
    assert got["meta"]["tables_path"] == "per table" and got["tables"] == summary["tables"]


def test_bucket_column_is_bucket_for(spark: Any) -> None:
    from pyspark.sql import functions as F  # noqa: N812 - the PySpark convention

    from spark.summarize import _bucket_column, bucket_for

    spans = [0.0, 0.5, 1.0, 299.0, 30_000.0, 30_001.0, 60_000.0, 3_600_000.0, 86_400_000.0, 1e9, 25_920_000_000.0,
             25_920_000_001.0, 1e12]
    got = spark.createDataFrame([(s,) for s in spans], "span double").select(
        "span", _bucket_column(F.col("span")).alias("b")).collect()
    assert {r["span"]: r["b"] for r in got} == {s: bucket_for(s) for s in spans}


def test_finish_sorts_as_orderby_with_or_without_nulls() -> None:
    """``_finish`` sorts by the plain values when no null meets a value, else nulls first; either way as the
    reference key (Spark's orderBy: ascending, nulls first) and stably (ties keep the collected order)."""
    import random

    from spark.summarize import _finish

    def reference(rows: list[dict[str, Any]], order: list[str]) -> list[dict[str, Any]]:
        return sorted(rows, key=lambda d: tuple((d[k] is not None, d[k]) if d[k] is not None else (False, 0)
                                                for k in order))

    rng = random.Random(7)
    for nulls in (False, True):
        rows = [{"ts": float(rng.randint(0, 5)), "process": rng.choice(["b-0", "b-1"]), "i": i,
                 "seq": None if nulls and rng.random() < 0.3 else rng.randint(0, 3)} for i in range(300)]
        want = reference([dict(r) for r in rows], ["ts", "process", "seq"])
        assert _finish([dict(r) for r in rows], ["ts", "process", "seq"]) == want
        assert _finish([dict(r) for r in rows], ["seq"]) == reference([dict(r) for r in rows], ["seq"])
