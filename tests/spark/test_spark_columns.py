"""The columns cache (spark/columns.py): a trace folder's JSON parsed once into `<trace>/.kactor-columns/`, reused by
later summaries, rebuilt when a file changes, never committed for a trace being written or a corrupt one; the tables
are the same with and without it."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from spark_support import BROKER_0, T0, header, lines, write_trace

pytestmark = pytest.mark.spark

NEW_LINE = ('{"seq":99,"ts":' + repr(T0 + 9000.0) + ',"sender":"edge:timer","receiver":"controller",'
            '"type":"TimerFired","payload":{"@":"TimerFired","name":"x"},"cause":null}\n')


@pytest.fixture
def json_reads(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every read of JSON-lines files (spark.load.lines over .jsonl inputs): the files of each."""
    import spark.load
    import spark.summarize

    seen: list[list[str]] = []
    real = spark.load.lines

    def spy(session: Any, src: Any, *args: Any, **kwargs: Any) -> Any:
        if src.jsonl:
            seen.append(sorted(os.path.basename(tf.path) for tf in src.jsonl))
        return real(session, src, *args, **kwargs)

    monkeypatch.setattr(spark.load, "lines", spy)
    monkeypatch.setattr(spark.summarize, "lines", spy)
    return seen


def _meta(folder: str) -> dict[str, Any]:
    with open(os.path.join(folder, ".kactor-columns", "_kactor_columns.json")) as f:
        return json.load(f)


def _leftovers(folder: str) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.startswith(".kactor-columns."))


def test_written_once_then_reused_with_the_same_tables(spark: Any, summary: dict[str, Any], tmp_path,
                                                      json_reads: list[list[str]]) -> None:
    from spark.summarize import summarize

    folder = write_trace(str(tmp_path / "t"), truncated=False)
    first = summarize(spark, [folder], None, bucket_ms=1000)
    assert first["meta"]["columns"] == {folder: "written"}
    assert json_reads == [["broker-0.jsonl", "broker-1.jsonl"]]  # the JSON parsed once, in one pass
    assert [f["name"] for f in _meta(folder)["files"]] == ["broker-0.jsonl", "broker-1.jsonl"]
    assert _leftovers(folder) == []
    second = summarize(spark, [folder], None, bucket_ms=1000)
    assert second["meta"]["columns"] == {folder: "cached"}
    assert json_reads == [["broker-0.jsonl", "broker-1.jsonl"]]  # no JSON read at all
    assert second["tables"] == first["tables"]
    assert second["meta"]["phases_s"]["columns"] < first["meta"]["phases_s"]["columns"]
    # the handcrafted trace's expectations (tests/spark/test_spark_summary.py) hold for both: the same trace but
    # for broker-1's truncated last line, which is no message
    assert first["tables"] == summary["tables"]


def test_invalidated_when_a_file_changes(spark: Any, summary: dict[str, Any], tmp_path,
                                         json_reads: list[list[str]]) -> None:
    from spark.summarize import summarize

    folder = write_trace(str(tmp_path / "t"), truncated=False)
    summarize(spark, [folder], None, bucket_ms=1000)
    with open(os.path.join(folder, "broker-1.jsonl"), "a") as f:
        f.write(NEW_LINE)
    again = summarize(spark, [folder], None, bucket_ms=1000)
    assert again["meta"]["columns"] == {folder: "written"} and len(json_reads) == 2
    assert again["meta"]["messages"] == summary["meta"]["messages"] + 1
    by_type = {r["type"]: r["count"] for r in again["tables"]["messages_by_type"]}
    assert by_type["TimerFired"] == 2
    assert summarize(spark, [folder], None, bucket_ms=1000)["tables"] == again["tables"]
    assert len(json_reads) == 2
    # the same size, only the modification time: rebuilt too
    path = os.path.join(folder, "broker-0.jsonl")
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert summarize(spark, [folder], None, bucket_ms=1000)["meta"]["columns"] == {folder: "written"}
    assert len(json_reads) == 3 and _leftovers(folder) == []
    # a new process's file
    with open(os.path.join(folder, "broker-2.jsonl"), "w") as f:
        f.write(header("broker-2", 2) + "\n" + NEW_LINE)
    third = summarize(spark, [folder], None, bucket_ms=1000)
    assert third["meta"]["columns"] == {folder: "written"}
    assert third["meta"]["processes"] == ["broker-0", "broker-1", "broker-2"]
    assert [f["name"] for f in _meta(folder)["files"]] == ["broker-0.jsonl", "broker-1.jsonl", "broker-2.jsonl"]


def test_a_trace_being_written_is_not_cached(spark: Any, summary: dict[str, Any], handcrafted: str, tmp_path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import spark.columns as columns
    from spark.summarize import summarize

    # a file grows while its columns are written: used for this summary, not committed
    folder = write_trace(str(tmp_path / "t"), truncated=False)
    real = columns.file_key
    calls = []

    def growing(paths: list[str]) -> list[dict[str, Any]]:
        calls.append(1)
        if len(calls) == 2:  # the check after the write
            with open(os.path.join(folder, "broker-1.jsonl"), "a") as f:
                f.write(NEW_LINE)
        return real(paths)

    monkeypatch.setattr(columns, "file_key", growing)
    got = summarize(spark, [folder], None, bucket_ms=1000)
    assert got["meta"]["columns"] == {folder: "temporary"} and len(calls) == 2
    assert got["tables"] == summary["tables"]
    assert not os.path.exists(os.path.join(folder, ".kactor-columns")) and _leftovers(folder) == []
    monkeypatch.setattr(columns, "file_key", real)
    # a last line without its newline, written just now: a writer mid-line, or a crash a moment ago; cached once it
    # has been left alone for SETTLED_S
    folder = write_trace(str(tmp_path / "u"), truncated=True)
    got = summarize(spark, [folder], None, bucket_ms=1000)
    warnings = [w.replace(handcrafted, folder) for w in summary["meta"]["warnings"]]
    assert got["meta"]["columns"] == {folder: "temporary"} and got["tables"] == summary["tables"]
    assert got["meta"]["warnings"] == warnings and len(warnings) == 1
    assert not os.path.exists(os.path.join(folder, ".kactor-columns"))
    monkeypatch.setattr(columns, "SETTLED_S", 0.0)
    got = summarize(spark, [folder], None, bucket_ms=1000)
    assert got["meta"]["columns"] == {folder: "written"} and got["tables"] == summary["tables"]
    got = summarize(spark, [folder], None, bucket_ms=1000)
    assert got["meta"]["columns"] == {folder: "cached"} and got["tables"] == summary["tables"]
    assert got["meta"]["warnings"] == warnings  # the truncated line still reported


def test_a_corrupt_trace_is_not_cached(spark: Any, tmp_path) -> None:
    from spark.load import TraceInputError
    from spark.summarize import summarize

    body = lines(BROKER_0)
    body[7] = body[7].replace('"queue_size":0}', '"queue_size":0', 1)  # line 9: a damaged observability payload
    (tmp_path / "broker-0.jsonl").write_text("\n".join([header("broker-0", 0), *body]) + "\n")
    for _ in range(2):  # and again: the columns were not kept, the error is found the same way
        with pytest.raises(TraceInputError, match=r"broker-0\.jsonl: line 9: corrupt trace line: not JSON"):
            summarize(spark, [str(tmp_path)], None)
        assert not os.path.exists(tmp_path / ".kactor-columns") and _leftovers(str(tmp_path)) == []


def test_single_file_and_cache_off_give_temporary_columns(spark: Any, tmp_path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from spark.summarize import summarize

    folder = write_trace(str(tmp_path / "t"), truncated=False)
    got = summarize(spark, [os.path.join(folder, "broker-1.jsonl")], None, bucket_ms=1000)
    assert list(got["meta"]["columns"].values()) == ["temporary"] and got["meta"]["processes"] == ["broker-1"]
    assert sorted(os.listdir(folder)) == ["broker-0.jsonl", "broker-1.jsonl"]
    monkeypatch.setenv("KACTOR_TRACE_COLUMNS", "0")
    assert summarize(spark, [folder], None, bucket_ms=1000)["meta"]["columns"] == {folder: "temporary"}
    assert sorted(os.listdir(folder)) == ["broker-0.jsonl", "broker-1.jsonl"]


def test_generated_trace_same_tables_cached_or_not(spark: Any, tmp_path) -> None:
    """Every table of a generated trace (every message type, slow lines none) equal from fresh columns and from the
    cache. (The cache off gives temporary columns written and read the same way as fresh ones:
    test_single_file_and_cache_off_give_temporary_columns.)"""
    from kactor.sim_boot import SimBoot
    from sim.generate import generate
    from spark.summarize import summarize

    folder = str(tmp_path / "g")
    generate(folder, 3000, brokers=3, partitions=16, seed=3, boot=SimBoot())
    written = summarize(spark, [folder], None)
    cached = summarize(spark, [folder], None)
    assert (written["meta"]["columns"], cached["meta"]["columns"]) == ({folder: "written"}, {folder: "cached"})
    assert written["meta"]["messages"] == 3000
    for name, rows in written["tables"].items():
        assert cached["tables"][name] == rows, name
    drop = ("elapsed_s", "phases_s", "columns")
    assert {k: v for k, v in cached["meta"].items() if k not in drop} == {
        k: v for k, v in written["meta"].items() if k not in drop}


def test_parsed_columns_equal_the_json_path_and_an_old_cache_is_rebuilt(spark: Any, tmp_path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Version 2 keeps each observed record's payload parsed (and its errors) in the cache: the tables from those
    columns equal the tables from the same records parsed from the JSON files at summary time; a version-1 cache
    (no parsed columns) is rebuilt, not read as if its parsed columns were empty."""
    import spark.columns as columns
    from spark.load import TraceSource, discover
    from spark.load import lines as read_lines
    from spark.schema import PARSED_FIELDS
    from spark.summarize import observed, summarize

    folder = write_trace(str(tmp_path / "t"), truncated=False)
    cached = summarize(spark, [folder], None, bucket_ms=1000)
    assert cached["meta"]["columns"] == {folder: "written"} and _meta(folder)["cache_version"] == 2
    for name in ("errors", "partition_transitions", "controller_event_times", "topic_deletions"):
        assert cached["tables"][name], name  # every kind of parsed column is used

    def from_json(session: Any, d: Any) -> Any:  # the observed records read and parsed from the JSON files now
        return observed(read_lines(session, TraceSource(jsonl=discover([d.folder]).jsonl)), None)

    monkeypatch.setattr(columns, "parsed", from_json)
    json_path = summarize(spark, [folder], None, bucket_ms=1000)
    monkeypatch.undo()
    assert json_path["meta"]["columns"] == {folder: "cached"}
    for name, rows in cached["tables"].items():
        assert json_path["tables"][name] == rows, name

    # the same rows as a version-1 cache held them: no parsed columns
    cache = os.path.join(folder, ".kactor-columns")
    old = str(tmp_path / "old")
    (spark.read.parquet(os.path.join(cache, "data")).drop(*[f.name for f in PARSED_FIELDS])
     .write.partitionBy("observed").parquet(old))
    meta = _meta(folder)
    os.rename(os.path.join(cache, "data"), str(tmp_path / "v2"))
    os.rename(old, os.path.join(cache, "data"))
    with open(os.path.join(cache, "_kactor_columns.json"), "w") as f:
        json.dump(dict(meta, cache_version=1), f)
    rebuilt = summarize(spark, [folder], None, bucket_ms=1000)
    assert rebuilt["meta"]["columns"] == {folder: "written"} and _meta(folder)["cache_version"] == 2
    for name, rows in cached["tables"].items():
        assert rebuilt["tables"][name] == rows, name
